//! End to end with the JavaScript debuggers: `doppel diff --debuggers
//! node,chromium` on bundled JavaScript programs, a script with a syntax
//! error and a program that never ends, checked through the SQLite store;
//! then `show`, `repro` (its CDP script runs against the real node) and
//! `replay` of a stored run.

use assert_cmd::Command;
use doppel_core::store::{RunFilter, Store};
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/js")
        .join(name)
}

fn doppel(db: &Path) -> Command {
    let mut c = Command::cargo_bin("doppel").unwrap();
    // Reduction (on by default) is tested in e2e_diff_reduce.rs.
    c.env("DOPPEL_REDUCE", "false");
    c.arg("--db").arg(db).env("CI", "1");
    c
}

#[tokio::test(flavor = "multi_thread")]
async fn node_and_chromium_differential_runs_are_stored_shown_reproduced_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("out/doppel.db");
    let bad = dir.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join("broken.js"), "function f( {\n  return 1;\n}\n").unwrap();
    std::fs::write(bad.join("spin.js"), "let x = 0;\nwhile (true) {\n  x++;\n}\n").unwrap();
    let out = doppel(&db)
        .args([
            "diff",
            "--debuggers",
            "node,chromium",
            "--runs-per-program",
            "2",
            "--seed",
            "3",
            "--action-timeout-ms",
            "4000",
        ])
        .args([corpus("closures.js"), corpus("classes.js"), corpus("exceptions.js")])
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}\n{stdout}");
    assert!(stderr.contains("5 programs (1 cannot run"), "{stderr}");

    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let filter = RunFilter::default();
    let summary = store.summary(&filter).await.unwrap();
    // 10 runs, plus a record of its own for each finding a run went on past.
    let keys = store.finished_keys("differential").await.unwrap();
    let noted = keys.iter().filter(|k| k.contains("#finding")).count() as u64;
    assert_eq!(summary.runs, 10 + noted);
    // Every run of the broken script is a subject error with the parser's reason.
    let mut runs = Vec::new();
    for id in 1..=10 {
        runs.push(store.run(id).await.unwrap().expect("runs 1..=10 are stored"));
    }
    let broken: Vec<_> = runs.iter().filter(|r| r.subject.name.ends_with("broken.js")).collect();
    assert_eq!(broken.len(), 2);
    for r in &broken {
        assert_eq!(r.verdict.name(), "subject_error", "{:?}", r.verdict);
    }
    // The endless loop ends every run without a claimed divergence or a hang.
    for r in runs.iter().filter(|r| r.subject.name.ends_with("spin.js")) {
        assert!(
            matches!(r.verdict.name(), "inconclusive" | "max_actions" | "divergence"),
            "{:?}",
            r.verdict
        );
    }
    // Runs that ran carry both traces, both versions, and the scripts.
    let ran = runs
        .iter()
        .find(|r| r.subject.name.ends_with("closures.js"))
        .expect("closures.js ran");
    assert_eq!(ran.traces.len(), 2);
    assert!(
        ran.debuggers[0].version.starts_with("node v") && ran.debuggers[1].version.contains("Chromium"),
        "{:?}",
        ran.debuggers
    );
    assert!(
        ran.config["scripts"]["prelude"][0]["text"]
            .as_str()
            .unwrap()
            .contains("determinism prelude")
    );

    let id = ran.id.unwrap().to_string();
    let show = doppel(&db).args(["show", &id]).output().unwrap();
    assert!(String::from_utf8_lossy(&show.stdout).contains("node"), "{show:?}");

    let repro = dir.path().join("repro");
    let r = doppel(&db).args(["repro", &id, "--out"]).arg(&repro).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let cdp = std::process::Command::new("timeout")
        .args(["60", "node", "repro-cdp.mjs"])
        .current_dir(&repro)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&cdp.stdout);
    assert!(
        cdp.status.success() && text.contains("=== [0]"),
        "{text}\n{}",
        String::from_utf8_lossy(&cdp.stderr)
    );

    let replay = doppel(&db).args(["replay", &id]).output().unwrap();
    let replayed = String::from_utf8_lossy(&replay.stdout);
    assert!(
        replayed.contains("1/1 replays reproduce"),
        "{replayed}\n{}",
        String::from_utf8_lossy(&replay.stderr)
    );
}
