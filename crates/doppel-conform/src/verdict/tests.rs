use super::*;

fn exc(c: &str, m: &str) -> Outcome {
    Outcome::Exception {
        constructor: Some(c.into()),
        message: Some(m.into()),
    }
}

fn result(engine: &str, family: Family, verdict: EngineVerdict) -> EngineResult {
    EngineResult {
        engine: engine.into(),
        family,
        version: "1".into(),
        outcome: Outcome::Normal,
        output: String::new(),
        millis: 1,
        verdict,
        timeout_retried: false,
        legacy: false,
    }
}

fn failure() -> EngineVerdict {
    EngineVerdict::Fail(Failure {
        kind: FailKind::Assertion,
        what: "sameValue".into(),
        detail: String::new(),
        at: None,
    })
}

#[test]
fn assertion_kinds_follow_the_harness_wording() {
    assert_eq!(assertion_kind("Expected SameValue(«1», «2») to be true"), "sameValue");
    assert_eq!(
        assertion_kind("x: Expected SameValue(«1», «1») to be false"),
        "notSameValue"
    );
    assert_eq!(
        assertion_kind("Expected a TypeError to be thrown but no exception was thrown at all"),
        "throws"
    );
    assert_eq!(assertion_kind("Expected a TypeError but got a RangeError"), "throws");
    assert_eq!(
        assertion_kind("Actual [1, 2] and expected [2, 1] should have the same contents. "),
        "compareArray"
    );
    assert_eq!(
        assertion_kind("obj['x'] descriptor should not be writable"),
        "verifyProperty"
    );
    assert_eq!(assertion_kind("Expected true but got false"), "assert");
    assert_eq!(assertion_kind("something else"), "other");
}

#[test]
fn a_failed_injected_assertion_is_located() {
    let n = Expected::NORMAL;
    let msg = "[doppel#2 value] o.a Expected SameValue(«1», «2») to be true";
    let v = judge(&n, &exc("Test262Error", msg), "", HostTraits::EXACT);
    let f = v.failure().expect("fails");
    assert_eq!(f.kind, FailKind::Injected);
    assert_eq!(f.key(), "injected.value");
    assert_eq!(f.at.as_deref(), Some("#2 value o.a"));
    // A harness assertion without a marker stays a plain assertion failure.
    let v = judge(
        &n,
        &exc("Test262Error", "Expected SameValue(«1», «2») to be true"),
        "",
        HostTraits::EXACT,
    );
    assert_eq!(v.failure().map(|f| f.key()), Some("assert.sameValue".to_string()));
    // A host whose global object is not conformant is not judged on global descriptors.
    let node = HostTraits {
        conformant_global: false,
        ..HostTraits::EXACT
    };
    // JSC's shell: a global `$` declared after the host removed its own `$`
    // is missed by for-in; other names are judged.
    let jsc = HostTraits {
        dollar_removed: true,
        ..HostTraits::EXACT
    };
    let dollar = "[doppel#1 descriptor] $ descriptor should be enumerable";
    assert!(matches!(
        judge(&n, &exc("Test262Error", dollar), "", jsc),
        EngineVerdict::NoVerdict { .. }
    ));
    assert!(
        judge(&n, &exc("Test262Error", dollar), "", HostTraits::EXACT)
            .failure()
            .is_some()
    );
    // ... and the global's key order with `$` among the keys.
    let order = "[doppel#2 key-order] this Actual [$$n, $] and expected [$, $$n] should have the same contents. ";
    assert!(matches!(
        judge(&n, &exc("Test262Error", order), "", jsc),
        EngineVerdict::NoVerdict { .. }
    ));
    let order = "[doppel#2 key-order] this Actual [b, a] and expected [a, b] should have the same contents. ";
    assert!(judge(&n, &exc("Test262Error", order), "", jsc).failure().is_some());
    let other = "[doppel#1 descriptor] $a descriptor should be enumerable";
    assert!(judge(&n, &exc("Test262Error", other), "", jsc).failure().is_some());
    let desc = "[doppel#1 descriptor] x descriptor should not be configurable";
    assert!(matches!(
        judge(&n, &exc("Test262Error", desc), "", node),
        EngineVerdict::NoVerdict { .. }
    ));
    assert_eq!(
        judge(&n, &exc("Test262Error", desc), "", HostTraits::EXACT)
            .failure()
            .map(|f| f.key()),
        Some("injected.descriptor".to_string())
    );
    let nested = "[doppel#4 descriptor] o.a descriptor should not be configurable";
    assert!(judge(&n, &exc("Test262Error", nested), "", node).failure().is_some());
}

#[test]
fn judging_outcomes_against_expectations() {
    let t = HostTraits::EXACT;
    let n = Expected::NORMAL;
    assert_eq!(judge(&n, &Outcome::Normal, "", t), EngineVerdict::Pass);
    let v = judge(
        &n,
        &exc("Test262Error", "Expected SameValue(«1», «2») to be true"),
        "",
        t,
    );
    assert_eq!(v.failure().map(|f| f.key()), Some("assert.sameValue".into()));
    let v = judge(&n, &exc("TypeError", "x is not a function"), "", t);
    assert_eq!(
        v.failure().map(|f| f.key()),
        Some("unexpected_exception:TypeError".into())
    );
    let te = Expected::Exception {
        constructor: "TypeError".into(),
    };
    assert_eq!(judge(&te, &exc("TypeError", ""), "", t), EngineVerdict::Pass);
    let v = judge(&te, &exc("RangeError", ""), "", t);
    assert_eq!(v.failure().map(|f| f.kind), Some(FailKind::ExceptionMismatch));
    let v = judge(&te, &Outcome::Normal, "", t);
    assert_eq!(v.failure().map(|f| f.kind), Some(FailKind::MissingException));
    // A message-only host reads a subclass as its base or nothing at all.
    let mine = Expected::Exception {
        constructor: "MyErr".into(),
    };
    assert_eq!(
        judge(&mine, &exc("Error", ""), "", HostTraits::MESSAGE_ONLY),
        EngineVerdict::Pass
    );
    assert!(judge(&mine, &exc("Error", ""), "", t).failure().is_some());
    // Crashes and timeouts fail; host failures and unsupported features give no verdict.
    let v = judge(&n, &Outcome::Crash { signal: 11 }, "", t);
    assert_eq!(v.failure().map(|f| f.key()), Some("crash:11".into()));
    assert!(judge(&n, &Outcome::Timeout, "", t).failure().is_some());
    assert!(matches!(
        judge(&n, &Outcome::HostStackOverflow, "", t),
        EngineVerdict::NoVerdict { .. }
    ));
    assert!(matches!(
        judge(
            &n,
            &Outcome::Unsupported {
                features: vec!["BigInt".into()]
            },
            "",
            t
        ),
        EngineVerdict::Unsupported { .. }
    ));
    // Async tests pass only on the completion marker.
    let a = Expected::Normal { async_done: true };
    assert_eq!(
        judge(&a, &Outcome::Normal, "Test262:AsyncTestComplete\n", t),
        EngineVerdict::Pass
    );
    let v = judge(
        &a,
        &Outcome::Normal,
        "Test262:AsyncTestFailure:Test262Error: Expected SameValue(«1», «2») to be true\n",
        t,
    );
    assert_eq!(v.failure().map(|f| f.key()), Some("assert.sameValue".into()));
    assert!(judge(&a, &Outcome::Normal, "", t).failure().is_some());
}

#[test]
fn builds_of_a_family_vote_as_one() {
    let rs = vec![
        result("v8-mini-racer", Family::V8, failure()),
        result("node-vm", Family::V8, failure()),
        result("jsc", Family::JavaScriptCore, EngineVerdict::Pass),
        result("quickjs", Family::QuickJs, EngineVerdict::Pass),
        result("boa", Family::Boa, EngineVerdict::Pass),
    ];
    let v = vote(&rs, None);
    assert_eq!(v.taking_part, 4);
    assert_eq!(
        v.candidate,
        Candidate::EngineBug {
            families: vec![Family::V8]
        }
    );
    assert!(v.summary().contains("1 of 4 families"), "{}", v.summary());
}

#[test]
fn a_split_family_is_reported_and_most_failing_is_a_spec_candidate() {
    let rs = vec![
        result("v8-mini-racer", Family::V8, EngineVerdict::Pass),
        result("node-vm", Family::V8, failure()),
        result("jsc", Family::JavaScriptCore, EngineVerdict::Pass),
    ];
    let v = vote(&rs, None);
    assert!(matches!(v.families[0].verdict, FamilyVerdict::Split { ref failing, .. } if failing == &["node-vm"]));
    assert_eq!(
        v.candidate,
        Candidate::EngineBug {
            families: vec![Family::V8]
        }
    );
    let rs = vec![
        result("jsc", Family::JavaScriptCore, failure()),
        result("quickjs", Family::QuickJs, failure()),
        result("boa", Family::Boa, EngineVerdict::Pass),
        result(
            "mujs",
            Family::Mujs,
            EngineVerdict::Unsupported {
                features: vec!["let".into()],
            },
        ),
    ];
    let v = vote(&rs, None);
    assert_eq!(v.taking_part, 3, "mujs abstains");
    assert_eq!(v.candidate.name(), "spec_bug");
    // engine262 failing a test262 test that most engines pass.
    let rs = vec![result("jsc", Family::JavaScriptCore, EngineVerdict::Pass)];
    assert_eq!(vote(&rs, Some(&failure())).candidate, Candidate::Engine262Bug);
    let rs = vec![result(
        "jsc",
        Family::JavaScriptCore,
        EngineVerdict::NoVerdict { reason: "x".into() },
    )];
    assert_eq!(vote(&rs, None).candidate.name(), "no_quorum");
    assert_eq!(vote(&[], None).candidate.name(), "no_quorum");
}

#[test]
fn transpilers_vote_apart_and_need_the_untranspiled_v8_to_agree() {
    let engines = || {
        vec![
            result("v8-node", Family::V8, EngineVerdict::Pass),
            result("jsc", Family::JavaScriptCore, EngineVerdict::Pass),
        ]
    };
    let mut rs = engines();
    rs.push(result("typescript", Family::TypeScript, failure()));
    rs.push(result("babel", Family::Babel, EngineVerdict::Pass));
    let v = vote(&rs, None);
    assert_eq!(
        v.candidate,
        Candidate::TranspilerBug {
            families: vec![Family::TypeScript]
        }
    );
    assert_eq!((v.taking_part, v.families.len(), v.transpilers.len()), (2, 2, 2));
    assert!(v.candidate.is_finding());
    // V8 itself fails: not the transpiler's bug (and an engine-bug candidate).
    let mut rs = engines();
    rs[0].verdict = failure();
    rs.push(result("typescript", Family::TypeScript, failure()));
    let v = vote(&rs, None);
    assert_eq!(
        v.candidate,
        Candidate::EngineBug {
            families: vec![Family::V8]
        }
    );
    // Without v8-node in the panel there is no transpiler candidate.
    let mut rs = vec![result("jsc", Family::JavaScriptCore, EngineVerdict::Pass)];
    rs.push(result("typescript", Family::TypeScript, failure()));
    assert_eq!(vote(&rs, None).candidate, Candidate::Agree);
    // Four failing transpilers never outvote two passing engines.
    let mut rs = engines();
    for (n, f) in [
        ("babel", Family::Babel),
        ("swc", Family::Swc),
        ("esbuild", Family::Esbuild),
        ("typescript", Family::TypeScript),
    ] {
        rs.push(result(n, f, failure()));
    }
    assert_eq!(vote(&rs, None).candidate.name(), "transpiler_bug");
    // Another engine fails too (all four transpilers make `async function`
    // constructible; JSC and njs fail that test): the engine bug is the
    // conclusion and the transpilers are candidates beside it.
    let mut rs = engines();
    rs[1].verdict = failure();
    rs.push(result("typescript", Family::TypeScript, failure()));
    rs.push(result("babel", Family::Babel, EngineVerdict::Pass));
    let v = vote(&rs, None);
    assert_eq!(
        v.candidate,
        Candidate::EngineBug {
            families: vec![Family::JavaScriptCore]
        }
    );
    assert_eq!(v.also_transpiler_bugs, [Family::TypeScript]);
    assert!(
        v.summary().contains("transpiler bug candidate: typescript"),
        "{}",
        v.summary()
    );
    // ... but not when V8 itself fails, nor when engine262 fails the test's expectation.
    rs[0].verdict = failure();
    assert!(vote(&rs, None).also_transpiler_bugs.is_empty());
    rs[0].verdict = EngineVerdict::Pass;
    assert!(vote(&rs, Some(&failure())).also_transpiler_bugs.is_empty());
}

#[test]
fn a_transpile_error_fails_only_programs_engine262_accepts() {
    let t = HostTraits::EXACT;
    let refused = Outcome::TranspileError {
        message: "Unexpected token (1:4)".into(),
    };
    let v = judge(&Expected::NORMAL, &refused, "", t);
    assert_eq!(v.failure().map(|f| f.key()), Some("transpile_error".into()), "{v:?}");
    let thrown = Expected::Exception {
        constructor: "TypeError".into(),
    };
    assert!(judge(&thrown, &refused, "", t).failure().is_some());
    let syntax = Expected::Exception {
        constructor: "SyntaxError".into(),
    };
    assert!(
        matches!(judge(&syntax, &refused, "", t), EngineVerdict::Unsupported { .. }),
        "refusing what engine262 rejects is no bug"
    );
    // esbuild 0.28.2 on `async function f(arguments = eval("")) {}` to ES2015
    // (test262's eval-code/direct/async-gen-func-decl-a-preceding-parameter-
    // is-named-arguments-declare-arguments.js): a crash, a bug whatever the program.
    let crashed = Outcome::TranspileError {
        message:
            "Transform failed with 1 error:\nerror: panic: runtime error: index out of range [4294967295] with length 2"
                .into(),
    };
    for e in [&Expected::NORMAL, &syntax] {
        assert_eq!(
            judge(e, &crashed, "", t).failure().map(|f| f.key()),
            Some("transpile_error:crashed".into())
        );
    }
}

#[test]
fn es5_level_families_cannot_make_a_specification_candidate() {
    let legacy = |engine: &str, family: Family, verdict: EngineVerdict| EngineResult {
        legacy: true,
        ..result(engine, family, verdict)
    };
    // test262's `if` completion value: SpiderMonkey and five ES5-level
    // families fail, four modern families pass (6 of 10 families).
    let mut rs = vec![
        result("v8-node", Family::V8, EngineVerdict::Pass),
        result("jsc", Family::JavaScriptCore, EngineVerdict::Pass),
        result("sm102", Family::SpiderMonkey, failure()),
        result("quickjs", Family::QuickJs, EngineVerdict::Pass),
        result("boa", Family::Boa, EngineVerdict::Pass),
        legacy("hermes", Family::Hermes, failure()),
        legacy("duktape", Family::Duktape, failure()),
        legacy("njs", Family::Njs, failure()),
        legacy("mujs", Family::Mujs, failure()),
        legacy("rhino", Family::Rhino, failure()),
    ];
    let v = vote(&rs, None);
    assert_eq!(v.taking_part, 10);
    match &v.candidate {
        Candidate::EngineBug { families } => assert_eq!(families.len(), 6, "{families:?}"),
        other => panic!("expected an engine-bug candidate, got {other:?}"),
    }
    // Three of the five modern families failing is "most".
    rs[0].verdict = failure();
    rs[1].verdict = failure();
    assert_eq!(vote(&rs, None).candidate.name(), "spec_bug");
    // Only ES5-level families taking part: counted among themselves.
    let only = vec![
        legacy("duktape", Family::Duktape, failure()),
        legacy("njs", Family::Njs, failure()),
        legacy("mujs", Family::Mujs, EngineVerdict::Pass),
    ];
    assert_eq!(vote(&only, None).candidate.name(), "spec_bug");
}

#[test]
fn strings_differing_only_in_list_separators_are_not_a_failure() {
    let m = |a: &str, e: &str| format!("[doppel#0 value] result Expected SameValue(«\"{a}\"», «\"{e}\"») to be true");
    assert!(only_list_separators_differ(&m("P, l, a", "P,l,a")));
    assert!(
        !only_list_separators_differ(&m("P,l,a", "P,l,a")),
        "equal strings did not fail"
    );
    assert!(!only_list_separators_differ(&m("P, l, b", "P,l,a")));
}

#[test]
fn date_strings_differing_only_in_the_time_zone_name_are_not_a_failure() {
    let m = |a: &str, e: &str| format!("[doppel#0 value] s Expected SameValue(«\"{a}\"», «\"{e}\"») to be true");
    let v8 = "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)";
    let e262 = "Thu Jan 01 1970 00:00:00 GMT+0000";
    assert!(only_time_zone_names_differ(&m(v8, e262)));
    assert!(only_time_zone_names_differ(&m("GMT-0500 (EST) x", "GMT-0500 x")));
    assert!(
        !only_time_zone_names_differ(&m(e262, e262)),
        "equal strings did not fail"
    );
    assert!(!only_time_zone_names_differ(&m(
        "Thu Jan 01 1970 01:00:00 GMT+0000 (UTC)",
        e262
    )));
    assert!(
        !only_time_zone_names_differ(&m("GMT (x)", "GMT")),
        "no offset, no time zone name"
    );
    let n = Expected::NORMAL;
    let v = judge(&n, &exc("Test262Error", &m(v8, e262)), "", HostTraits::EXACT);
    assert!(matches!(v, EngineVerdict::NoVerdict { .. }), "{v:?}");
}
