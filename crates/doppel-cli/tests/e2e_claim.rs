//! `--claim` on every technique of the runner (`diff`, `meta`, `debuginfo`):
//! two worker processes on one PostgreSQL store claim one campaign's items
//! (the runner's wiring of the store's work-item queue); together they store
//! exactly the runs of a single-machine campaign with the same seeds, no
//! duplicate and no loss, also for techniques whose items store several
//! records (a metamorphic sequence's tests, a debug-information program's
//! sessions, findings and program record). The multi-process test with
//! network namespaces and a SIGKILLed worker is doppel-core's
//! `tests/scale_out.rs`; these run the real debuggers and compilers.

#[path = "../../doppel-core/tests/support/postgres.rs"]
mod postgres;

use assert_cmd::Command;
use doppel_core::store::{RunFilter, Store};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/c")
        .join(name)
}

/// Runs `args` + `programs` once on a SQLite store, then as two claiming
/// workers on PostgreSQL (`url`), all in `dir` (one build cache, so the
/// subjects and keys agree), and asserts the workers stored exactly the
/// single machine's runs. Returns them (key -> verdict name).
async fn workers_store_the_single_machine_campaign(
    dir: &std::path::Path,
    url: &str,
    args: &[&str],
    programs: &[PathBuf],
) -> BTreeMap<String, String> {
    let single = dir.join("single.db");
    let out = Command::cargo_bin("doppel")
        .unwrap()
        .arg("--db")
        .arg(&single)
        .env("CI", "1")
        .env("DOPPEL_REDUCE", "false")
        .current_dir(dir)
        .args(args)
        .args(programs)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let expected = verdicts(single.to_str().unwrap()).await;
    let worker = |name: &str| {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("doppel"));
        c.arg("--db")
            .arg(url)
            .env("CI", "1")
            .env("DOPPEL_REDUCE", "false")
            .current_dir(dir)
            .args(args)
            .args(["--claim", "--lease-secs", "5", "--worker", name])
            .args(programs)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    let (a, b) = (worker("a"), worker("b"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    for o in [&a, &b] {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(verdicts(url).await, expected);
    expected
}

const QUICK: [&str; 8] = [
    "diff",
    "--max-actions",
    "4",
    "--runs-per-program",
    "2",
    "--seed",
    "11",
    "--jobs",
];

/// Every stored run: key -> verdict name.
async fn verdicts(url: &str) -> BTreeMap<String, String> {
    let store = Store::open(url).await.unwrap();
    let n = store.summary(&RunFilter::default()).await.unwrap().runs as usize;
    let mut out = BTreeMap::new();
    let mut id = 1;
    while out.len() < n {
        if let Some(r) = store.run(id).await.unwrap() {
            assert!(out.insert(r.key.clone(), r.verdict.name().to_string()).is_none());
        }
        id += 1;
        assert!(id < 10_000, "ids run away");
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn two_claiming_workers_store_the_single_machine_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let programs = ["switch.c", "recursion.c", "arrays.c"].map(corpus);
    let pg = postgres::start_postgres();
    let url = pg.url("postgres");
    // The same build cache for every invocation: the workers' subjects (and
    // so their keys) are the single machine's.
    let single = dir.path().join("single.db");
    let doppel = |db: &str| {
        let mut c = Command::cargo_bin("doppel").unwrap();
        c.arg("--db")
            .arg(db)
            .env("CI", "1")
            .env("DOPPEL_REDUCE", "false")
            .current_dir(dir.path());
        c
    };
    let mut args = QUICK.to_vec();
    args.push("1");
    let expected = workers_store_the_single_machine_campaign(dir.path(), &url, &args, &programs).await;
    assert_eq!(expected.len(), 6);

    // A worker that comes late finds nothing left and stores nothing.
    let late = doppel(&url)
        .args(QUICK)
        .arg("1")
        .arg("--claim")
        .args(&programs)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&late.stderr);
    assert!(late.status.success(), "{stderr}");
    assert!(stderr.contains("this invocation: 0 runs"), "{stderr}");
    assert_eq!(verdicts(&url).await.len(), 6);

    // Claiming needs PostgreSQL.
    let sqlite = doppel(single.to_str().unwrap())
        .args(QUICK)
        .arg("1")
        .arg("--claim")
        .args(&programs)
        .output()
        .unwrap();
    assert!(!sqlite.status.success());
    assert!(String::from_utf8_lossy(&sqlite.stderr).contains("--claim needs a PostgreSQL store"));
}

#[tokio::test(flavor = "multi_thread")]
async fn claiming_metamorphic_workers_store_every_test_of_every_sequence_once() {
    let dir = tempfile::tempdir().unwrap();
    let programs = ["loops.c", "recursion.c", "arrays.c"].map(corpus);
    let pg = postgres::start_postgres();
    let args = [
        "meta",
        "--debugger",
        "gdb",
        "--rounds",
        "3",
        "--runs-per-program",
        "2",
        "--seed",
        "5",
        "--jobs",
        "1",
    ];
    let tests = workers_store_the_single_machine_campaign(dir.path(), &pg.url("postgres"), &args, &programs).await;
    // Six sequences, each of several tests: an item stores several records.
    let sequences: std::collections::BTreeSet<&str> = tests
        .keys()
        .map(|k| k.rsplit_once("|r").map_or(k.as_str(), |(s, _)| s))
        .collect();
    assert_eq!(sequences.len(), 6, "{tests:#?}");
    assert!(tests.len() > 6, "{tests:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn claiming_debuginfo_workers_store_every_program_session_and_finding_once() {
    let dir = tempfile::tempdir().unwrap();
    let paper = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/debuginfo/paper");
    let programs = ["fig1a.c", "fig1b.c", "fig1c.c"].map(|p| paper.join(p));
    let pg = postgres::start_postgres();
    let args = [
        "debuginfo",
        "--compilers",
        "gcc",
        "--levels",
        "O2",
        "--debuggers",
        "gdb",
        "--no-bisect",
        "--jobs",
        "1",
    ];
    let records = workers_store_the_single_machine_campaign(dir.path(), &pg.url("postgres"), &args, &programs).await;
    // Each program stores its program record and at least one session:
    // an item stores several records.
    assert!(records.len() >= 6, "{records:#?}");
}
