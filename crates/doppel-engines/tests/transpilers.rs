//! The transpiler hosts (issue 15 part 7c) with the real transpilers from
//! npm (scripts/deps/setup-transpilers.sh; a missing one fails its test):
//! a small program transpiled and run in V8, a program the transpiler
//! refuses, a script that runs past its timeout (the worker stays usable),
//! the feature probe, and the one-off transpile reproducers use.

use doppel_engines::{Engine, EnginesConfig, Family, Outcome, RunOptions, Script, registry, transpile};
use std::time::Duration;

const TRANSPILERS: [(&str, Family); 4] = [
    ("babel", Family::Babel),
    ("swc", Family::Swc),
    ("esbuild", Family::Esbuild),
    ("typescript", Family::TypeScript),
];

fn engine(name: &str) -> Box<dyn Engine> {
    let cfg = EnginesConfig::default();
    registry::create(name, &cfg)
        .unwrap_or_else(|e| panic!("transpiler {name} must be installed (scripts/deps/setup-transpilers.sh): {e}"))
}

fn opts(ms: u64) -> RunOptions {
    RunOptions {
        timeout: Duration::from_millis(ms),
        output_cap: 4096,
    }
}

async fn check(name: &str, family: Family) {
    let mut e = engine(name);
    assert_eq!(e.info().family, family);
    assert!(e.info().family.is_transpiler());
    assert!(e.info().version.contains("target"), "{:?}", e.info());
    // Classes, arrows, template literals, destructuring and spread: lowered, then run.
    let src = "class P { constructor(x) { this.x = x; } get double() { return this.x * 2; } }\n\
               const [a, ...rest] = [new P(2), 3, 4];\n\
               print(`${a.double} ${rest.length}`, [1, 2].map((v) => v + 1).join());";
    let r = e.run_unchecked(src, &opts(20_000)).await;
    assert_eq!(
        (&r.outcome, r.output.as_str()),
        (&Outcome::Normal, "4 2 2,3\n"),
        "{name}"
    );
    // An exception in the transpiled code keeps its constructor and message.
    let r = e.run_unchecked("null.x;", &opts(20_000)).await;
    assert!(
        matches!(&r.outcome, Outcome::Exception { constructor: Some(c), .. } if c == "TypeError"),
        "{name}: {r:?}"
    );
    // A program no transpiler accepts: a recorded outcome with the message.
    let r = e.run_unchecked("var = ;", &opts(20_000)).await;
    let Outcome::TranspileError { message } = &r.outcome else {
        panic!("{name}: {r:?}");
    };
    assert!(
        !message.is_empty() && !message.contains("Stack backtrace"),
        "{name}: {message}"
    );
    assert!(
        r.outcome.label().starts_with("transpile error: "),
        "{}",
        r.outcome.label()
    );
    // Past the timeout: stopped by vm inside the worker, which stays up.
    let r = e.run_unchecked("var i = 0; for (;;) { i++; }", &opts(500)).await;
    assert_eq!(r.outcome, Outcome::Timeout, "{name}");
    let r = e.run_unchecked("print(1 + 1);", &opts(20_000)).await;
    assert_eq!(
        (&r.outcome, r.output.as_str()),
        (&Outcome::Normal, "2\n"),
        "{name} after a timeout"
    );
    // The feature probe runs through the transpiler too (its probes are strings to eval).
    let f = e.features().await.unwrap_or_else(|err| panic!("{name}: {err}"));
    assert!(f.lacking(&["Symbol".into()]).is_empty(), "{name}: {}", f.summary());
    // Run with features: gated by the probe, then run.
    let s = Script {
        source: "print(typeof Symbol.iterator);".into(),
        features: vec!["Symbol.iterator".into()],
    };
    let r = e.run(&s, &opts(20_000)).await;
    assert_eq!(
        (&r.outcome, r.output.as_str()),
        (&Outcome::Normal, "symbol\n"),
        "{name}"
    );
    e.shutdown().await;
}

#[tokio::test]
async fn babel() {
    check(TRANSPILERS[0].0, TRANSPILERS[0].1).await;
}

#[tokio::test]
async fn swc() {
    check(TRANSPILERS[1].0, TRANSPILERS[1].1).await;
}

#[tokio::test]
async fn esbuild() {
    check(TRANSPILERS[2].0, TRANSPILERS[2].1).await;
}

#[tokio::test]
async fn typescript() {
    check(TRANSPILERS[3].0, TRANSPILERS[3].1).await;
}

/// TypeScript's ES5 spread of a Set (no downlevelIteration): `__spreadArray`
/// reads only `length` and indices, so the Set spreads to nothing, where
/// untranspiled V8 and the other transpilers iterate it.
#[tokio::test]
async fn typescript_spreads_a_set_to_nothing_where_v8_iterates_it() {
    let src = "print([...new Set([1, 2])].length);";
    let v8 = engine("v8-node").run_unchecked(src, &opts(20_000)).await;
    assert_eq!(v8.output, "2\n");
    for (name, _) in TRANSPILERS {
        let r = engine(name).run_unchecked(src, &opts(20_000)).await;
        let want = if name == "typescript" { "0\n" } else { "2\n" };
        assert_eq!((&r.outcome, r.output.as_str()), (&Outcome::Normal, want), "{name}");
    }
}

/// The one-off transpile `doppel repro` saves: the output text, or the
/// transpiler's message when it refuses.
#[test]
fn transpile_file_gives_the_output_or_the_refusal() {
    let cfg = EnginesConfig::default();
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok.js");
    std::fs::write(&ok, "var f = function (x) { return x ** 2; }; print(f(3));").unwrap();
    let bad = dir.path().join("bad.js");
    std::fs::write(&bad, "var = ;").unwrap();
    for (name, _) in TRANSPILERS {
        let out = transpile::transpile_file(&cfg, name, &ok, Duration::from_secs(60)).unwrap();
        // `**` (ES2016) is below every target: lowered to Math.pow.
        assert!(out.contains("print(f(3))") && !out.contains("**"), "{name}: {out}");
        let err = transpile::transpile_file(&cfg, name, &bad, Duration::from_secs(60)).unwrap_err();
        assert!(err.starts_with("transpile error: "), "{name}: {err}");
    }
}
