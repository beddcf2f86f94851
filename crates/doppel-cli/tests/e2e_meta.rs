//! End to end: `doppel meta` (ISSTA'19 metamorphic testing) with real gdb
//! and real node, a few iterations each, checked through the store.

use assert_cmd::Command;
use doppel_core::store::{RunFilter, Store};
use doppel_core::{RunRecord, Verdict};
use std::path::{Path, PathBuf};

fn corpus(lang: &str, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(lang)
        .join(name)
}

fn doppel(db: &Path) -> Command {
    let mut c = Command::cargo_bin("doppel").unwrap();
    // Reduction (on by default) is tested in e2e_diff_reduce.rs.
    c.env("DOPPEL_REDUCE", "false");
    c.arg("--db").arg(db).env("CI", "1");
    c
}

async fn tests_in(db: &Path) -> Vec<RunRecord> {
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let filter = RunFilter {
        technique: Some("metamorphic".into()),
        campaign: None,
    };
    let n = store.summary(&filter).await.unwrap().runs;
    let mut out = Vec::new();
    let mut id = 1;
    while out.len() < n as usize && id < 10_000 {
        if let Some(r) = store.run(id).await.unwrap() {
            out.push(r);
        }
        id += 1;
    }
    out
}

/// What every stored metamorphic test must hold, whatever the debugger did.
fn check_structure(tests: &[RunRecord]) {
    for t in tests {
        let c = &t.config;
        let round = c["round"].as_u64().unwrap() as usize;
        let chain = c["chain"].as_array().unwrap();
        assert!(t.key.contains(&format!("|r{round}")), "{}", t.key);
        match &t.verdict {
            Verdict::SubjectError { .. } => continue,
            // The control run (issue 17 item 2): a follow-up that ends
            // differently is not run.
            Verdict::NotComparable { reason, controls } => {
                assert!(!reason.is_empty() && controls.len() == 2, "{reason}");
                continue;
            }
            Verdict::Inconclusive { reason, .. } => {
                assert!(!reason.is_empty());
                continue;
            }
            _ => {}
        }
        assert_eq!(chain.len(), round, "one transformation per round: {c}");
        assert_eq!(t.traces.len(), 2, "initial and follow-up trace");
        assert!(
            c["transformation"]["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty())
        );
        let program = c["transformation"]["transformation"].as_str().unwrap();
        let changed = c["source_text"] != c["follow_up"]["source_text"];
        let action_kind = ["add_breakpoint", "replace_continue", "breakpoint_sliding"].contains(&program);
        assert_eq!(changed, !action_kind, "{program}: program changed = {changed}");
        // Unless the relation broke, the follow-up is a complete run: it
        // ends as the initial run ended.
        if t.verdict.finding().is_some() {
            continue;
        }
        assert_eq!(
            t.traces[0].outputs().last().map(std::mem::discriminant),
            t.traces[1].outputs().last().map(std::mem::discriminant),
            "{}",
            t.key
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn meta_with_gdb_runs_rounds_stores_tests_and_records_bad_programs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("out/doppel.db");
    let broken = dir.path().join("broken.c");
    std::fs::write(&broken, "int main(void) { return undeclared; }\n").unwrap();
    let programs = [
        corpus("c", "loops.c"),
        corpus("c", "recursion.c"),
        corpus("c", "structs.c"),
    ];
    let out = doppel(&db)
        .args([
            "meta",
            "--debugger",
            "gdb",
            "--rounds",
            "3",
            "--runs-per-program",
            "2",
            "--jobs",
            "2",
        ])
        .args(&programs)
        .arg(&broken)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tests = tests_in(&db).await;
    check_structure(&tests);
    // The broken program is one recorded subject error per seed.
    let errors = tests
        .iter()
        .filter(|t| matches!(&t.verdict, Verdict::SubjectError { reason } if reason.contains("undeclared")))
        .count();
    assert_eq!(errors, 2);
    // Rounds iterate: some sequence reached round 3, and a later round's
    // initial trace is the previous round's follow-up.
    let third = tests.iter().find(|t| t.config["round"] == 3 && t.traces.len() == 2);
    let third = third.expect("a sequence reached round 3");
    let seq = third.key.split("|r3").next().unwrap();
    let second = tests
        .iter()
        .find(|t| t.key == format!("{seq}|r2"))
        .expect("its round 2");
    assert_eq!(
        second.traces[1].actions().collect::<Vec<_>>(),
        third.traces[0].actions().collect::<Vec<_>>()
    );
    // Every sequence ends with exactly one `|last` test.
    let sequences = 3 * 2 + 2;
    assert_eq!(tests.iter().filter(|t| t.key.ends_with("|last")).count(), sequences);
    // Program transformations were applied and their programs compiled.
    assert!(
        tests
            .iter()
            .any(|t| t.config["source_text"] != t.config["follow_up"]["source_text"]),
        "no program transformation applied"
    );

    // show prints both traces and the transformation.
    let id = tests.iter().find(|t| t.traces.len() == 2).and_then(|t| t.id).unwrap();
    let show = doppel(&db).args(["show", &id.to_string()]).output().unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.contains("transformation:") && text.contains("follow-up"), "{text}");

    // replay re-runs the test and gets the same verdict; repro writes both
    // inputs for the plain gdb CLI.
    let program_test = tests
        .iter()
        .find(|t| t.traces.len() == 2 && t.config["source_text"] != t.config["follow_up"]["source_text"])
        .unwrap();
    let id = program_test.id.unwrap().to_string();
    let replay = doppel(&db).args(["replay", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success() && text.contains("REPRODUCES"), "{text}");
    let out = dir.path().join("repro");
    let repro = doppel(&db).args(["repro", &id, "--out"]).arg(&out).output().unwrap();
    assert!(repro.status.success(), "{}", String::from_utf8_lossy(&repro.stderr));
    for f in ["README.md", "run.sh", "initial/repro.gdb", "follow-up/repro.gdb"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let src = |d: &str| std::fs::read_to_string(out.join(d).join(&program_test.subject.source_name)).unwrap();
    assert_ne!(src("initial"), src("follow-up"), "the two programs differ");
    let run = std::process::Command::new("sh")
        .arg(out.join("run.sh"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.contains("##### follow-up") && text.contains("=== [0]"), "{text}");

    // --resume skips every finished sequence.
    let again = doppel(&db)
        .args([
            "meta",
            "--debugger",
            "gdb",
            "--rounds",
            "3",
            "--runs-per-program",
            "2",
            "--resume",
        ])
        .args(&programs)
        .arg(&broken)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains(&format!("{sequences} sequences already stored")), "{err}");
    assert_eq!(tests_in(&db).await.len(), tests.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn meta_with_node_transforms_javascript_and_follows_live() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("out/doppel.db");
    // A relative store path: the follow-up programs must still be found.
    let out = doppel(Path::new("out/doppel.db"))
        .current_dir(dir.path())
        .args([
            "meta",
            "--debugger",
            "node",
            "--rounds",
            "3",
            "--runs-per-program",
            "2",
            "--jobs",
            "2",
            "--transformations",
            "add_breakpoint,insert_no_op,literal_to_expression,add_unused_parameter,replace_continue",
        ])
        .arg(corpus("js", "closures.js"))
        .arg(corpus("js", "recursion.js"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tests = tests_in(&db).await;
    assert!(tests.len() >= 4, "{} tests", tests.len());
    check_structure(&tests);
    let applied: std::collections::BTreeSet<String> = tests
        .iter()
        .filter_map(|t| {
            t.config["transformation"]["transformation"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert!(applied.len() >= 2, "{applied:?}");
    // Node itself: no test may be broken by a follow-up program that did not run.
    for t in tests.iter().filter(|t| t.traces.len() == 2) {
        let follow = serde_json::to_string(&t.traces[1]).unwrap();
        assert!(!follow.contains("ended before the source ran"), "{}: {follow}", t.key);
    }
    // An unknown transformation is a clear error before anything runs.
    let bad = doppel(&db)
        .args(["meta", "--debugger", "node", "--transformations", "frobnicate"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown transformation"));
}
