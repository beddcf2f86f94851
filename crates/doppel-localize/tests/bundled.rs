//! The baselines on the bundled regression pair (real gcc, gcov), and an
//! ignored run over real Codeflaws pairs of different classes.

use doppel_lang::c::codeflaws;
use doppel_localize::case::{Case, CaseConfig, Outcome, run_case};
use doppel_localize::truth::{Line, Side};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/regressions")
}

fn shared() -> PathBuf {
    std::env::var_os("DOPPEL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

#[tokio::test]
async fn baselines_on_the_bundled_orrn_pair() {
    let pair = codeflaws::discover_pairs(&corpus())
        .into_iter()
        .map(Result::unwrap)
        .find(|p| p.name == "1-A-bug-10-11")
        .unwrap();
    let r = run_case(&Case::from_pair(&pair), &CaseConfig::default()).await;
    assert_eq!(r.outcome, Outcome::Analyzed, "{r:#?}");
    assert_eq!(r.failing_test.as_deref(), Some("neg1"));
    assert_eq!(r.outputs_on_t, Some(("1 5\n".into(), "2 5\n".into())));
    assert_eq!(r.spectra_tests, (3, 1));
    let faulty = Line {
        side: Side::Modified,
        line: 9,
    };
    assert!(r.truth.contains(&faulty));
    // Darwin: the changed condition, validated by alternate inputs.
    let d = r.darwin.as_ref().unwrap();
    assert_eq!(d.outcome, doppel_localize::darwin::DarwinOutcome::Localized);
    let get = |t: &str| r.reports.iter().find(|(rep, _)| rep.technique == t).unwrap();
    // The diff names line 9 of both programs.
    let (diff, m) = get("diff");
    assert_eq!(diff.entries.len(), 2);
    assert_eq!(m.unwrap().first_rank, Some(1.5), "one tie group of two lines");
    // Branch lines the failing test executes in P': the scanf check (5),
    // the loop (7), and the two ifs (9, 11).
    let (br, m) = get("branches");
    let lines: Vec<u32> = br.entries.iter().map(|e| e.line.line).collect();
    assert_eq!(lines, [5, 7, 9, 11]);
    assert!(m.unwrap().hit);
    // Ochiai on lines: line 10 (positives++) runs in 2 of 3 passing tests
    // and the failing one; line 9 in all four. Every line of the loop body
    // is executed by every test but pos2's line 10, so 10 ranks first.
    let (och, m) = get("sbfl-ochiai-line");
    assert_eq!(och.entries[0].line.line, 10);
    let m = m.unwrap();
    assert!(m.hit && m.first_rank.unwrap() > 1.0);
    // Ochiai on branch arcs: line 9's true arc is taken by neg1 (0 >= 0)
    // and by pos1 and pos3, like line 10; its false arc by neg1 (-2) and pos2.
    assert!(get("sbfl-ochiai-branch").1.unwrap().hit);
    assert!(get("sbfl-er1b-line").1.unwrap().hit);
    assert!(get("sbfl-dstar2-branch").1.unwrap().hit);
    assert!(get("sbfl-tarantula-line").1.unwrap().hit);
    let (darwin, m) = get("darwin");
    assert!(m.unwrap().hit, "{darwin:?}");
    // The changed condition first (P:9 with a successful witness, then
    // P':9); virtual branches (predicates at the assignments of lines 10
    // and 12) follow, the report capped at 5 lines.
    assert_eq!(m.unwrap().first_rank, Some(1.0), "{darwin:?}");
    let top: Vec<String> = darwin.entries.iter().take(2).map(|e| e.line.to_string()).collect();
    assert_eq!(top, ["P:9", "P':9"], "{darwin:?}");
    assert!(darwin.entries.len() <= 5, "{darwin:?}");
}

#[tokio::test]
async fn p_and_p_prime_that_agree_are_a_named_outcome() {
    let pair = codeflaws::read_pair(&corpus().join("1-A-bug-10-11"), None).unwrap();
    let mut case = Case::from_pair(&pair);
    // Without the zero, P and P' agree on the "failing" test.
    case.tests[0].input = b"2\n3 -1\n".to_vec();
    let r = run_case(&case, &CaseConfig::default()).await;
    assert_eq!(
        r.outcome,
        Outcome::Agree {
            tests: vec!["neg1".into()]
        }
    );
}

#[tokio::test]
async fn a_modified_program_that_does_not_build_is_a_named_outcome() {
    let d = tempfile::tempdir().unwrap();
    let pair = codeflaws::read_pair(&corpus().join("1-A-bug-10-11"), None).unwrap();
    let mut case = Case::from_pair(&pair);
    case.modified = d.path().join("broken.c");
    std::fs::write(&case.modified, "int main(void) { return nope; }\n").unwrap();
    let r = run_case(&case, &CaseConfig::default()).await;
    match r.outcome {
        Outcome::BuildFailure { program, message } => {
            assert_eq!(program, "P'");
            assert!(message.contains("nope"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

/// Real Codeflaws pairs, one per defect class: every case ends with a
/// named outcome, and the diff baseline names the faulty line (on
/// Codeflaws it always can: a median diff of one line).
#[tokio::test]
#[ignore = "needs ../shared"]
async fn real_codeflaws_pairs_of_each_class() {
    let root = shared().join("corpus/regressions/codeflaws");
    let classes = codeflaws::read_classes(&root);
    let mut seen = std::collections::BTreeSet::new();
    let mut n = 0;
    for pair in codeflaws::discover_pairs(&root).into_iter().flatten() {
        let Some(class) = classes.get(&pair.name) else { continue };
        if !seen.insert(class.clone()) {
            continue;
        }
        let r = run_case(&Case::from_pair(&pair), &CaseConfig::default()).await;
        n += 1;
        match &r.outcome {
            Outcome::Analyzed => {
                assert!(r.darwin.is_some());
                let diff = r.reports.iter().find(|(rep, _)| rep.technique == "diff").unwrap();
                assert!(diff.1.unwrap().hit, "{}: {:?}", pair.name, r.truth);
                assert!(r.reports.len() >= 10);
            }
            Outcome::Agree { .. } => {}
            other => panic!("{}: {other:?}", pair.name),
        }
    }
    assert_eq!(n, 5, "one pair of each of the five classes");
}
