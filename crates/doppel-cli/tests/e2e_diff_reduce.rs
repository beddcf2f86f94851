//! End to end: differential findings of GDB against LLDB on a bundled C
//! program are reduced by default at the end of `doppel diff` (delta
//! debugging of the actions with the real debuggers, then real C-Vise on
//! the program through the hidden `doppel reduce-probe`); the reduced case
//! is stored on the run, `doppel replay` replays it and `doppel repro`
//! writes the bundle from it.

mod reduce_support;
use reduce_support::{doppel, installed, run_ok};

use doppel_core::store::Store;
use std::path::Path;

#[tokio::test(flavor = "multi_thread")]
async fn diff_findings_are_reduced_by_default_and_replayed_and_bundled_from_the_reduced_case() {
    assert!(
        installed("gdb") && installed("lldb-dap-22") && installed("cvise"),
        "the test needs gdb, lldb-dap-22 and cvise"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c/globals.c");

    // 1. The campaign, reduction on by default, 40 s per step.
    let (_, err) = run_ok(
        doppel(&db)
            .args([
                "diff",
                "--debuggers",
                "gdb,lldb",
                "--debugger-path",
                "lldb=/usr/bin/lldb-dap-22",
            ])
            .args([
                "--runs-per-program",
                "3",
                "--seed",
                "0",
                "--reduce-budget",
                "40",
                "--quiet",
            ])
            .arg(&corpus),
    );
    assert!(err.contains("reduced run "), "{err}");

    // 2. A non-policy class's representative holds a reduced case of the same class.
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let classes = store.classes(&Default::default()).await.unwrap();
    let rep = classes
        .iter()
        .find(|c| c.key.part("policy").is_none())
        .unwrap_or_else(|| panic!("no non-policy class: {classes:?}"));
    let run = store.run(rep.first_run).await.unwrap().unwrap();
    let rec = doppel_differential::record::DiffRecord::of(&run).unwrap();
    let case = rec
        .reduced
        .clone()
        .unwrap_or_else(|| panic!("run {} not reduced\n{err}", rep.first_run));
    assert_eq!(case.verdict.finding().unwrap().class, rep.key);
    assert!(case.actions.len() < case.original_actions, "{case:?}");
    assert!(
        case.actions.len() >= 2,
        "at least start and the divergent action: {:?}",
        case.actions
    );
    assert!(case.lines <= case.original_lines);
    if let Some(text) = &case.source_text {
        assert!(case.lines < case.original_lines);
        assert_eq!(text.lines().count(), case.lines);
        let kept = case.notes.iter().any(|n| n.contains("markers are kept"));
        assert_eq!(
            text.contains("DOPPEL_B"),
            kept,
            "markers removed unless a note says why:\n{text}"
        );
    }
    eprintln!("{}", doppel_differential::reduce::describe(&case));

    // 3. Replay: the reduced case reproduces with the real debuggers.
    let id = rep.first_run.to_string();
    let (out, _) = run_ok(doppel(&db).args(["replay", &id]));
    let reduced_line = out
        .lines()
        .position(|l| l.contains("reduced case:"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        out.lines().nth(reduced_line - 1).unwrap().contains("REPRODUCES"),
        "{out}"
    );

    // 4. The bundle is the reduced case: its program and its actions.
    let bundle = dir.path().join("bundle");
    run_ok(doppel(&db).args(["repro", &id, "--out"]).arg(&bundle));
    let program = std::fs::read_to_string(bundle.join(&run.subject.source_name)).unwrap();
    assert_eq!(&program, case.source_text.as_ref().unwrap_or(&rec.input.source_text));
    let gdb = std::fs::read_to_string(bundle.join("repro.gdb")).unwrap();
    assert_eq!(gdb.matches("echo \\n=== [").count(), case.actions.len(), "{gdb}");
    assert!(gdb.contains("<-- divergence"), "{gdb}");
}
