//! Transpilers as tools under test (issue 15 part 7c) on a real panel:
//! engines of two families, the untranspiled V8 (`v8-node`), the four
//! transpilers and engine262. TypeScript's ES5 spread of a Set is a known,
//! current disagreement (tests/data/test262/transpile/spread-set.js): the
//! engines and v8-node agree with engine262, TypeScript's output fails, so
//! the test is a transpiler-bug candidate grouped under family typescript;
//! the other transpilers pass and no engine vote changes.

use doppel_conform::group::group;
use doppel_conform::matrix::{Tally, load};
use doppel_conform::verdict::panel::{ConformTest, Panel, PanelConfig, TestRun};
use doppel_conform::verdict::{Candidate, FamilyVerdict};
use doppel_engines::coverage::Catalogue;
use doppel_engines::{EnginesConfig, Family};
use std::path::PathBuf;

/// Runs the bundled test `name` (tests/data/test262/transpile) on a panel
/// of `engines` (of `families` engine families, transpilers not counted)
/// plus engine262: the test, its run, the catalogue, and each engine's
/// outcome and verdict (for messages); the panel is shut down.
async fn run_bundled(name: &str, engines: &[&str], families: usize) -> (ConformTest, TestRun, Catalogue, Vec<String>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/test262/transpile")
        .join(name);
    let test = load::load(&path, name, None).expect("loads with the bundled harness");
    let config = PanelConfig {
        engines: engines.iter().map(|e| e.to_string()).collect(),
        ..PanelConfig::default()
    };
    let mut panel = Panel::new(&config, &EnginesConfig::default()).expect("panel");
    assert!(
        panel.missing().is_empty(),
        "install scripts/deps/setup-engines.sh and setup-transpilers.sh: {:?}",
        panel.missing()
    );
    assert_eq!(panel.families(), families, "transpilers are not engine families");
    let catalogue = panel.catalogue().await.expect("engine262 catalogue");
    let run = panel.run(&test).await;
    panel.shutdown().await;
    let who = run
        .results
        .iter()
        .map(|r| format!("{}: {} {}", r.engine, r.outcome.label(), r.verdict.label()))
        .collect();
    (test, run, catalogue, who)
}

#[tokio::test]
async fn a_transpiler_wrong_where_v8_is_right_is_a_transpiler_bug_candidate() {
    let (test, run, catalogue, who) = run_bundled(
        "spread-set.js",
        &["v8-node", "quickjs-ng", "babel", "swc", "esbuild", "typescript"],
        2,
    )
    .await;
    assert_eq!(
        run.vote.candidate,
        Candidate::TranspilerBug {
            families: vec![Family::TypeScript]
        },
        "{who:?}"
    );
    assert_eq!(run.vote.taking_part, 2, "{who:?}");
    assert!(run.vote.families.iter().all(|f| !f.family.is_transpiler()));
    let ts = run
        .vote
        .transpilers
        .iter()
        .find(|f| f.family == Family::TypeScript)
        .expect("typescript voted");
    let FamilyVerdict::Fail(f) = &ts.verdict else {
        panic!("{ts:?}");
    };
    assert_eq!(f.key(), "assert.sameValue", "{f:?}");
    assert_eq!(
        run.vote
            .transpilers
            .iter()
            .filter(|f| f.verdict == FamilyVerdict::Pass)
            .count(),
        3,
        "{who:?}"
    );
    assert!(run.vote.summary().starts_with("transpiler bug candidate: typescript"));
    let mut tally = Tally::default();
    tally.add(&test, &run, None);
    let (groups, _) = group(&tally.observed, Some(&catalogue), None, 5, None);
    let g = groups
        .iter()
        .find(|g| g.candidate == "transpiler_bug")
        .unwrap_or_else(|| panic!("{groups:?}"));
    assert_eq!(
        (g.family.as_str(), g.failure.as_str()),
        ("typescript", "assert.sameValue")
    );
    assert_eq!(g.tests, ["spread-set.js"]);
}

#[tokio::test]
async fn transpilers_failing_where_another_engine_fails_too_are_candidates_beside_the_engine_bug() {
    let (test, run, catalogue, who) = run_bundled(
        "destructure-non-iterable.js",
        &["v8-node", "quickjs-ng", "rhino", "babel", "typescript"],
        3,
    )
    .await;
    assert_eq!(
        run.vote.candidate,
        Candidate::EngineBug {
            families: vec![Family::Rhino]
        },
        "{who:?}"
    );
    assert_eq!(run.vote.also_transpiler_bugs, [Family::TypeScript], "{who:?}");
    let mut tally = Tally::default();
    tally.add(&test, &run, None);
    let (groups, _) = group(&tally.observed, Some(&catalogue), None, 5, None);
    let mut found: Vec<(&str, &str)> = groups
        .iter()
        .map(|g| (g.candidate.as_str(), g.family.as_str()))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [("engine_bug", "rhino"), ("transpiler_bug", "typescript")],
        "{groups:?}"
    );
}

#[tokio::test]
async fn a_transpiler_that_crashes_is_a_transpiler_bug_candidate_keyed_as_a_crash() {
    let (_test, run, _catalogue, who) = run_bundled(
        "esbuild-arguments-eval-crash.js",
        &["v8-node", "quickjs-ng", "esbuild"],
        2,
    )
    .await;
    assert_eq!(
        run.vote.candidate,
        Candidate::TranspilerBug {
            families: vec![Family::Esbuild]
        },
        "{who:?}"
    );
    let esbuild = run.results.iter().find(|r| r.engine == "esbuild").expect("esbuild ran");
    assert_eq!(
        esbuild.verdict.failure().map(|f| f.key()),
        Some("transpile_error:crashed".to_string()),
        "{who:?}"
    );
}
