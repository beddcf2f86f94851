//! Verdicts, family voting and grouping on real engines and engine262:
//! bundled test262-format tests (tests/data/test262, with a harness
//! written for doppel) on every registered engine. Every engine must be
//! installed (scripts/deps/setup-engines.sh and scripts/deps/apt.txt): a
//! missing one fails the test with what to install.

use doppel_conform::group::group;
use doppel_conform::matrix::{Tally, load};
use doppel_conform::verdict::panel::{Panel, PanelConfig};
use doppel_conform::verdict::{Candidate, EngineVerdict, FamilyVerdict};
use doppel_engines::{EnginesConfig, Family};
use std::path::PathBuf;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/test262")
}

#[tokio::test]
async fn n_plus_one_verdicts_votes_and_groups_on_real_engines() {
    let files = load::discover(&[data().join("test")]);
    let mut tests = Vec::new();
    let mut skipped = Vec::new();
    for (p, root) in files {
        match load::load(&p, &load::name_of(&p, &root), None) {
            Ok(t) => tests.push(t),
            Err(s) => skipped.push(s),
        }
    }
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0].reason.contains("module"), "{skipped:?}");
    assert_eq!(tests.len(), 4);
    let mut panel = Panel::new(&PanelConfig::default(), &EnginesConfig::default()).expect("engine262 and engines");
    assert!(
        panel.missing().is_empty(),
        "engines not installed (run scripts/deps/setup-engines.sh and install scripts/deps/apt.txt): {:?}",
        panel.missing()
    );
    assert!(panel.families() >= 6, "{} families", panel.families());
    let catalogue = panel.catalogue().await.expect("engine262 catalogue");
    let mut tally = Tally::default();
    for t in &tests {
        let run = panel.run(t).await;
        let who: Vec<String> = run
            .results
            .iter()
            .map(|r| format!("{}: {} {}", r.engine, r.outcome.label(), r.verdict.label()))
            .collect();
        let spec_passes = t.name != "wrong-expectation.js";
        assert_eq!(
            run.spec.verdict == EngineVerdict::Pass,
            spec_passes,
            "{}: engine262 {:?}",
            t.name,
            run.spec
        );
        assert!(
            run.coverage.as_ref().is_some_and(|c| !c.algorithms.is_empty()),
            "{}",
            t.name
        );
        assert_eq!(run.results.len(), panel.members().len());
        match t.name.as_str() {
            "agree.js" | "negative-runtime.js" => {
                assert_eq!(run.vote.candidate, Candidate::Agree, "{}: {who:?}", t.name);
                assert_eq!(run.vote.taking_part, panel.families(), "{}: {who:?}", t.name);
            }
            "wrong-expectation.js" => {
                assert_eq!(run.vote.candidate.name(), "spec_bug", "{who:?}");
                assert!(
                    run.vote
                        .summary()
                        .contains(&format!("of {} families", run.vote.taking_part))
                );
            }
            "key-order.js" => {
                let Candidate::EngineBug { families } = &run.vote.candidate else {
                    panic!("key order: {:?} {who:?}", run.vote.candidate);
                };
                assert!(families.contains(&Family::Njs), "{families:?} {who:?}");
                assert!(!families.contains(&Family::V8), "{families:?}");
                let njs = run.vote.families.iter().find(|f| f.family == Family::Njs).unwrap();
                let FamilyVerdict::Fail(f) = &njs.verdict else {
                    panic!("{njs:?}");
                };
                assert_eq!(f.key(), "assert.sameValue", "{f:?}");
            }
            other => panic!("unexpected test {other}"),
        }
        tally.add(t, &run, None);
    }
    panel.shutdown().await;
    let (groups, localizations) = group(&tally.observed, Some(&catalogue), None, 5, None);
    let njs = groups
        .iter()
        .find(|g| g.family == "njs")
        .unwrap_or_else(|| panic!("{groups:?}"));
    assert_eq!(
        (njs.candidate.as_str(), njs.failure.as_str()),
        ("engine_bug", "assert.sameValue")
    );
    assert!(njs.algorithm.is_some(), "blamed algorithm with coverage: {njs:?}");
    assert!(
        groups
            .iter()
            .any(|g| g.candidate == "spec_bug" && g.tests == ["wrong-expectation.js"])
    );
    let spec = localizations
        .iter()
        .find(|l| l.target == "specification" && l.formula == "er1b")
        .expect("spec localization");
    assert_eq!((spec.failing, spec.passing), (1, 2));
    assert!(!spec.top.is_empty());
    assert!(spec.ranked >= spec.top.len(), "{spec:?}");
    // With a known faulty algorithm every localization places it: the same
    // ranking, so the place of the second-listed algorithm is its listed one;
    // an algorithm no test covered has no place.
    let second = spec.top.get(1).unwrap_or(&spec.top[0]).clone();
    let (_, again) = group(&tally.observed, Some(&catalogue), None, 5, Some(&second.element));
    let placed = again
        .iter()
        .find(|l| l.target == "specification" && l.formula == "er1b")
        .and_then(|l| l.true_fault.clone())
        .expect("the true fault is placed");
    assert_eq!(
        (placed.element.as_str(), placed.rank),
        (second.element.as_str(), second.rank)
    );
    let (_, none) = group(&tally.observed, Some(&catalogue), None, 5, Some("NoSuchAlgorithm"));
    assert!(none.iter().all(|l| l.true_fault.is_none()));
}
