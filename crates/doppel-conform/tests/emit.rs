//! test262-format emission: front matter round trips (also through
//! doppel-lang's independent front matter reader), assertion markers map
//! back to (index, kind), and a run's verdict names the failed assertion.

use doppel_conform::inject::{AssertionKind, Limits, inspect};
use doppel_conform::test262::harness::{TestVerdict, verdict};
use doppel_conform::test262::{
    EmitError, FrontMatter, Negative, Test262Test, failed_assertion, parse_front_matter, render_front_matter,
};
use doppel_engines::engine::engine262::Engine262;
use doppel_engines::{Engine, EnginesConfig, Outcome, RunOptions, RunResult};
use doppel_lang::js::Test262Meta;

fn opts() -> RunOptions {
    RunOptions {
        timeout: std::time::Duration::from_secs(30),
        ..RunOptions::default()
    }
}

fn run(outcome: Outcome) -> RunResult {
    RunResult {
        outcome,
        output: String::new(),
        output_cut: false,
        millis: 1,
    }
}

#[test]
fn front_matter_round_trips() {
    let meta = FrontMatter {
        description: "a \"quoted\": description, with é".into(),
        includes: vec!["propertyHelper.js".into()],
        flags: vec!["onlyStrict".into()],
        features: vec!["Symbol.iterator".into(), "class-fields-private".into(), "let".into()],
        negative: Some(Negative {
            phase: "runtime".into(),
            error_type: "TypeError".into(),
        }),
    };
    let text = render_front_matter(&meta);
    assert!(text.starts_with("/*---\n") && text.ends_with("---*/\n"), "{text}");
    let inner = &text[5..text.len() - 6];
    assert_eq!(parse_front_matter(inner), meta);
    // doppel-lang's reader (what `doppel diff` runs test262 tests with) reads the same fields.
    let other = Test262Meta::parse(&text).expect("front matter");
    assert_eq!(other.includes, meta.includes);
    assert_eq!(other.flags, meta.flags);
    assert_eq!(other.features, meta.features);
    let n = other.negative.expect("negative");
    assert_eq!((n.phase.as_str(), n.error_type.as_str()), ("runtime", "TypeError"));
}

#[test]
fn markers_map_back_to_assertions() {
    assert_eq!(
        failed_assertion("[doppel#12 key-order] o Expected SameValue(«1», «2») to be true"),
        Some((12, AssertionKind::KeyOrder))
    );
    assert_eq!(
        failed_assertion("[doppel#3 descriptor] x descriptor should be enumerable; [doppel#3 descriptor] x ..."),
        Some((3, AssertionKind::Descriptor))
    );
    assert_eq!(failed_assertion("[doppel#x value] no"), None);
    assert_eq!(failed_assertion("[doppel#1 bogus] no"), None);
    assert_eq!(failed_assertion("Cannot read properties of null"), None);
}

#[test]
fn verdicts_of_runs() {
    let positive = FrontMatter::default();
    let negative = FrontMatter {
        negative: Some(Negative {
            phase: "runtime".into(),
            error_type: "TypeError".into(),
        }),
        ..FrontMatter::default()
    };
    let throw = |c: &str, m: &str| Outcome::Exception {
        constructor: Some(c.into()),
        message: Some(m.into()),
    };
    assert!(verdict(&positive, &run(Outcome::Normal)).passed());
    assert!(verdict(&negative, &run(throw("TypeError", "x"))).passed());
    let v = verdict(
        &positive,
        &run(throw("Test262Error", "[doppel#4 prototype] o Expected SameValue")),
    );
    assert!(
        matches!(
            v,
            TestVerdict::Fail {
                assertion: Some((4, AssertionKind::Prototype)),
                ..
            }
        ),
        "{v:?}"
    );
    let v = verdict(&negative, &run(Outcome::Normal));
    assert!(
        matches!(
            v,
            TestVerdict::Fail {
                assertion: Some((0, AssertionKind::Exception)),
                ..
            }
        ),
        "{v:?}"
    );
    let v = verdict(&negative, &run(throw("RangeError", "r")));
    assert!(
        matches!(
            v,
            TestVerdict::Fail {
                assertion: Some((0, AssertionKind::Exception)),
                ..
            }
        ),
        "{v:?}"
    );
    assert!(matches!(
        verdict(&positive, &run(Outcome::Timeout)),
        TestVerdict::Fail { assertion: None, .. }
    ));
    let unsupported = Outcome::Unsupported {
        features: vec!["BigInt".into()],
    };
    assert!(matches!(
        verdict(&positive, &run(unsupported)),
        TestVerdict::NotRun { .. }
    ));
}

#[tokio::test(flavor = "current_thread")]
async fn emitted_tests_round_trip_and_refuse_what_test262_cannot_say() {
    let mut e = Engine262::new(&EnginesConfig::default(), false)
        .expect("engine262 must be installed: run scripts/deps/setup-engines.sh");
    let program = "\"use strict\";\nvar a = [1, , 3];\nclass K { static #p = 1; }\nconst s = Symbol.iterator;\nlet big = 2n ** 64n;\n";
    let inj = inspect(&mut e, program, &Limits::default(), &opts()).await.unwrap();
    let test = Test262Test::from_injection(&inj, "round trip").unwrap();
    assert_eq!(test.meta.flags, ["onlyStrict"]);
    assert_eq!(test.meta.includes, ["propertyHelper.js"]);
    for f in [
        "class",
        "class-fields-private",
        "const",
        "let",
        "BigInt",
        "Symbol.iterator",
        "exponentiation",
    ] {
        assert!(
            test.meta.features.iter().any(|x| x == f),
            "no feature {f} in {:?}",
            test.meta.features
        );
    }
    let text = test.render();
    let back = Test262Test::parse(&text).unwrap();
    assert_eq!(back.meta, test.meta);
    assert_eq!(back.program, test.program);
    let strip = |t: &Test262Test| -> Vec<(usize, AssertionKind, String)> {
        t.assertions
            .iter()
            .map(|a| (a.index, a.kind, a.subject.clone()))
            .collect()
    };
    assert_eq!(strip(&back), strip(&test));
    assert!(test.assertions.len() > 10, "{text}");

    // Negative: the exception is the front matter.
    let inj = inspect(&mut e, "var v = 1;\nundefined();", &Limits::default(), &opts())
        .await
        .unwrap();
    let test = Test262Test::from_injection(&inj, "throws").unwrap();
    assert_eq!(
        test.meta.negative,
        Some(Negative {
            phase: "runtime".into(),
            error_type: "TypeError".into()
        })
    );
    assert_eq!(Test262Test::parse(&test.render()).unwrap().meta, test.meta);

    // A primitive throw has no negative: type; a harness name would clash.
    let inj = inspect(&mut e, "throw 1;", &Limits::default(), &opts()).await.unwrap();
    assert!(matches!(
        Test262Test::from_injection(&inj, "p"),
        Err(EmitError::UnnamedThrow(_))
    ));
    let inj = inspect(&mut e, "function assert() {}", &Limits::default(), &opts())
        .await
        .unwrap();
    assert_eq!(
        Test262Test::from_injection(&inj, "h").unwrap_err(),
        EmitError::HarnessName("assert".into())
    );
    e.shutdown().await;
}
