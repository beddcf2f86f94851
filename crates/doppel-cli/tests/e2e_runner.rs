//! The campaign runner end to end, with real gdb and lldb on real programs:
//! run keys that keep campaigns apart (issue 13, 5b), environment failures
//! that are errors of the campaign and not finished runs (5c), partitions
//! whose union is the whole campaign, and the deadline.

use assert_cmd::Command;
use doppel_core::store::{RunFilter, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/c")
        .join(name)
}

fn doppel(db: &Path) -> Command {
    let mut c = Command::cargo_bin("doppel").unwrap();
    // Reduction (on by default) is tested in e2e_diff_reduce.rs.
    c.env("DOPPEL_REDUCE", "false");
    c.arg("--db").arg(db).env("CI", "1");
    c
}

/// Short runs: few actions, no time wasted.
const QUICK: [&str; 6] = ["diff", "--max-actions", "4", "--runs-per-program", "2", "--seed"];

/// Every stored run: key -> (campaign, verdict name, record json).
async fn runs(db: &Path) -> BTreeMap<String, (String, String, String)> {
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let n = store.summary(&RunFilter::default()).await.unwrap().runs;
    let mut out = BTreeMap::new();
    let mut id = 1;
    while out.len() < n as usize {
        if let Some(r) = store.run(id).await.unwrap() {
            let json = serde_json::to_string(&r.traces).unwrap();
            out.insert(r.key.clone(), (r.campaign.clone(), r.verdict.name().to_string(), json));
        }
        id += 1;
        assert!(id < 10_000, "ids run away");
    }
    out
}

fn gdb_path() -> PathBuf {
    let out = std::process::Command::new("sh")
        .args(["-c", "command -v gdb"])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[tokio::test(flavor = "multi_thread")]
async fn campaigns_with_other_names_or_tools_never_replace_each_others_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("doppel.db");
    // Another executable of the same gdb (a copy, not a symbolic link, as a
    // second installation would be).
    let other_gdb = dir.path().join("gdb-copy");
    std::fs::copy(gdb_path(), &other_gdb).unwrap();
    let program = corpus("recursion.c");
    let run = |extra: &[&str]| {
        let out = doppel(&db)
            .args(QUICK)
            .arg("3")
            .args(extra)
            .arg(&program)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    run(&["--campaign", "default"]);
    let first = runs(&db).await;
    assert_eq!(first.len(), 2);
    run(&["--campaign", "other"]);
    let gdb_flag = format!("gdb={}", other_gdb.display());
    run(&["--campaign", "default", "--debugger-path", &gdb_flag]);
    let all = runs(&db).await;
    assert_eq!(all.len(), 6, "{:#?}", all.keys().collect::<Vec<_>>());
    // The first campaign's runs are still there, unchanged.
    for (key, run) in &first {
        assert_eq!(all.get(key), Some(run), "run {key} was replaced");
    }
    assert_eq!(all.values().filter(|r| r.0 == "other").count(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unwritable_build_cache_fails_the_campaign_and_resume_runs_those_items_once() {
    // Not stored as `subject_error` under another hash (issue 13, 5c): the
    // campaign stops with the cause; a program that does not compile stays
    // a recorded outcome.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("progs");
    std::fs::create_dir(&src).unwrap();
    std::fs::copy(corpus("recursion.c"), src.join("recursion.c")).unwrap();
    std::fs::write(src.join("broken.c"), "int main(void) { return missing; }\n").unwrap();
    let db = dir.path().join("doppel.db");
    // The build cache lives next to the store: a file in its place makes
    // it unwritable (also for root, who ignores permissions).
    let cache = dir.path().join("cache");
    std::fs::write(&cache, "not a directory").unwrap();
    let out = doppel(&db).args(QUICK).arg("1").arg(&src).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "an environment failure must fail the campaign:\n{stderr}"
    );
    assert!(stderr.contains("build environment"), "{stderr}");
    assert!(runs(&db).await.is_empty(), "nothing may be stored as finished");

    std::fs::remove_file(&cache).unwrap();
    let out = doppel(&db)
        .args(QUICK)
        .arg("1")
        .arg("--resume")
        .arg(&src)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stored = runs(&db).await;
    assert_eq!(stored.len(), 4, "{:#?}", stored.keys().collect::<Vec<_>>());
    // The program that does not compile is a recorded outcome, with the
    // compiler's message; the other one ran.
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let mut subject_errors = 0;
    for id in 1..=4 {
        let r = store.run(id).await.unwrap().unwrap();
        match (&r.verdict, r.subject.name.ends_with("broken.c")) {
            (doppel_core::Verdict::SubjectError { reason }, true) => {
                assert!(reason.contains("missing"), "{reason}");
                subject_errors += 1;
            }
            (v, true) => panic!("broken.c: {v:?}"),
            (v, false) => assert!(!matches!(v, doppel_core::Verdict::SubjectError { .. }), "{v:?}"),
        }
    }
    assert_eq!(subject_errors, 2);
    // Resuming again runs nothing and stores nothing twice.
    let out = doppel(&db)
        .args(QUICK)
        .arg("1")
        .arg("--resume")
        .arg(&src)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("4 runs already stored are skipped"));
    assert_eq!(runs(&db).await.len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn partitions_together_are_the_whole_campaign_and_a_deadline_defers_items() {
    let dir = tempfile::tempdir().unwrap();
    let programs = ["switch.c", "recursion.c", "arrays.c"].map(corpus);
    let whole = dir.path().join("whole.db");
    let split = dir.path().join("split.db");
    let out = doppel(&whole).args(QUICK).arg("5").args(&programs).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for k in ["1/2", "count:2/2"] {
        let out = doppel(&split)
            .args(QUICK)
            .arg("5")
            .args(["--partition", k])
            .args(&programs)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("3 runs"));
    }
    let verdicts = |m: BTreeMap<String, (String, String, String)>| -> BTreeMap<String, String> {
        m.into_iter().map(|(k, v)| (k, v.1)).collect()
    };
    let a = verdicts(runs(&whole).await);
    assert_eq!(a.len(), 6);
    assert_eq!(a, verdicts(runs(&split).await));

    let bad = doppel(&split)
        .args(QUICK)
        .arg("5")
        .args(["--partition", "3/2"])
        .args(&programs)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("between 1 and 2"));

    // A deadline already past starts nothing, says so, and --resume runs all.
    let late = dir.path().join("late.db");
    let out = doppel(&late)
        .args(QUICK)
        .arg("5")
        .args(["--deadline", "0"])
        .args(&programs)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("deadline reached: 6 runs not started"), "{stderr}");
    assert!(runs(&late).await.is_empty());
    let out = doppel(&late)
        .args(QUICK)
        .arg("5")
        .arg("--resume")
        .args(&programs)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(verdicts(runs(&late).await), a);
}

/// `doppel debuginfo` on the same runner: partitions, `--resume` per
/// program, and keys that keep another campaign's records apart.
#[tokio::test(flavor = "multi_thread")]
async fn debuginfo_partitions_resume_and_keeps_campaigns_apart() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("progs");
    std::fs::create_dir(&src).unwrap();
    for (name, k) in [("one.c", 3), ("two.c", 5)] {
        std::fs::write(
            src.join(name),
            format!(
                "#include <stdio.h>\nint g;\nint main(void) {{\n  int a = {k};\n  int b = a + 4;\n  g = b;\n  printf(\"%d\\n\", g);\n  return 0;\n}}\n"
            ),
        )
        .unwrap();
    }
    let db = dir.path().join("d.db");
    let debuginfo = |extra: &[&str]| {
        let out = doppel(&db)
            .args([
                "debuginfo",
                "--compilers",
                "gcc",
                "--levels",
                "O1",
                "--debuggers",
                "gdb",
            ])
            .args(extra)
            .arg(&src)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    let programs = |db: PathBuf| async move {
        let store = Store::open(db.to_str().unwrap()).await.unwrap();
        let mut keys = Vec::new();
        for id in 1..200 {
            if let Some(r) = store.run(id).await.unwrap()
                && r.config["kind"] == "program"
            {
                keys.push((r.campaign.clone(), r.subject.name.clone()));
            }
        }
        keys.sort();
        keys
    };
    let first = debuginfo(&["--partition", "1/2"]);
    assert!(first.contains("this invocation: 1 programs"), "{first}");
    debuginfo(&["--partition", "2/2"]);
    assert_eq!(programs(db.clone()).await.len(), 2);
    let again = debuginfo(&["--resume"]);
    assert!(again.contains("2 programs already stored are skipped"), "{again}");
    assert!(again.contains("this invocation: 0 programs"), "{again}");
    debuginfo(&["--campaign", "other"]);
    let all = programs(db.clone()).await;
    assert_eq!(all.len(), 4, "{all:?}");
    assert_eq!(all.iter().filter(|(c, _)| c == "other").count(), 2);
}
