//! A store written by the release before the technique seam (schema 1,
//! `doppel-core/tests/data/`) opens with today's `doppel`: migrated, the
//! same classes, and its runs show, replay (real gdb, lldb, gcc) and give
//! reproducers.

use assert_cmd::Command;
use std::io::Read;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../doppel-core/tests/data")
        .join(name)
}

fn schema1_store(dir: &Path) -> PathBuf {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data("schema1-store.db.gz")).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    let path = dir.join("doppel.db");
    std::fs::write(&path, bytes).unwrap();
    path
}

fn doppel(db: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::cargo_bin("doppel")
        .unwrap()
        .arg("--db")
        .arg(db)
        .args(args)
        .env("CI", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_schema_1_store_lists_the_same_classes_and_its_runs_show_replay_and_reproduce() {
    let dir = tempfile::tempdir().unwrap();
    let db = schema1_store(dir.path());
    let (ok, out) = doppel(&db, &["classes", "--json"]);
    assert!(ok, "{out}");
    let listed: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let mut now: Vec<String> = listed
        .iter()
        .map(|c| c["class"].as_str().unwrap().to_string())
        .collect();
    now.sort();
    let mut before: Vec<String> = std::fs::read_to_string(data("schema1-runs.tsv"))
        .unwrap()
        .lines()
        .filter_map(|l| l.split('\t').nth(2).filter(|c| !c.is_empty()).map(str::to_string))
        .collect();
    before.sort();
    before.dedup();
    assert_eq!(now, before);

    // Run 3: gdb and lldb on recursion.c, a policy class.
    let (ok, out) = doppel(&db, &["show", "3"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("class pause_location|resume|if_statement|policy:resume_completes_interrupted_step"),
        "{out}"
    );
    let (ok, out) = doppel(&db, &["replay", "3"]);
    assert!(ok && out.contains("1/1 replays reproduce run 3"), "{out}");
    // Run 50: a debug-information finding (gcc -Os, gdb).
    let (ok, out) = doppel(&db, &["show", "50"]);
    assert!(
        ok && out.contains("verdict: wrong_value") && out.contains(">    5 |   opt_me_not(); // i"),
        "{out}"
    );
    let (ok, out) = doppel(&db, &["replay", "50"]);
    assert!(ok && out.contains("REPRODUCES (wrong value: expected 25"), "{out}");
    let bundle = dir.path().join("bundle-50");
    let (ok, out) = doppel(&db, &["repro", "50", "--out", bundle.to_str().unwrap()]);
    assert!(ok && bundle.join("README.md").is_file(), "{out}");
    // Run 14: a metamorphic test (gdb) that held.
    let (ok, out) = doppel(&db, &["show", "14"]);
    assert!(ok && out.contains("initial:") && out.contains("follow-up:"), "{out}");
    let (ok, out) = doppel(&db, &["replay", "14"]);
    assert!(ok && out.contains("1/1 replays reproduce run 14"), "{out}");
    let meta = dir.path().join("meta-14");
    let (ok, out) = doppel(&db, &["repro", "14", "--out", meta.to_str().unwrap()]);
    assert!(ok && meta.join("follow-up/run.sh").is_file(), "{out}");
}
