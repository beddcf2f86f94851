//! End to end: `doppel debuginfo` (PLDI'20 debug-information validation)
//! with real compilers, GDB and LLDB: a program with a known wrong value
//! (the paper's Figure 9(c), which clang 19 -O1 still gets wrong), a correct
//! program, and a broken one; then `show`, `replay` and `repro` on the finding.

use assert_cmd::Command;
use doppel_core::store::{RunFilter, Store};
use doppel_core::{RunRecord, Verdict};
use std::path::{Path, PathBuf};

fn paper(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/debuginfo/paper")
        .join(name)
}

fn doppel(db: &Path) -> Command {
    let mut c = Command::cargo_bin("doppel").unwrap();
    c.arg("--db").arg(db).env("CI", "1");
    c
}

async fn records(db: &Path) -> Vec<RunRecord> {
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let filter = RunFilter {
        technique: Some("debuginfo".into()),
        campaign: None,
    };
    let n = store.summary(&filter).await.unwrap().runs as usize;
    let mut out = Vec::new();
    let mut id = 1;
    while out.len() < n && id < 100_000 {
        if let Some(r) = store.run(id).await.unwrap() {
            out.push(r);
        }
        id += 1;
    }
    out
}

fn kind(r: &RunRecord) -> &str {
    r.config["kind"].as_str().unwrap_or("")
}

#[tokio::test]
async fn figure_9c_still_shows_a_wrong_value_in_clang_19_and_every_command_handles_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    doppel(&db)
        .args([
            "debuginfo",
            "--compilers",
            "clang-19",
            "--levels",
            "O1",
            "--debuggers",
            "gdb,lldb",
            "--no-bisect",
        ])
        .arg(paper("fig9c-gcc90716.c"))
        .assert()
        .success();
    let all = records(&db).await;
    let program = all.iter().find(|r| kind(r) == "program").expect("a program record");
    assert!(
        matches!(program.verdict, Verdict::Checked { .. }),
        "{:?}",
        program.verdict
    );
    let sessions: Vec<&RunRecord> = all.iter().filter(|r| kind(r) == "session").collect();
    assert!(sessions.len() >= 2, "one session per build and debugger");
    // The paper's pair: j at line 10 is 8 at -O0; clang 19 -O1 says 0, in
    // both debuggers, so the compiler is the suspect.
    let finding = all
        .iter()
        .filter(|r| kind(r) == "finding")
        .find(|r| {
            r.config["reference"]["pair"]["line"] == 10
                && r.config["reference"]["pair"]["variable"]["name"] == "j"
                && r.config["debugger_name"] == "gdb"
        })
        .expect("the wrong value of j at line 10");
    assert_eq!(finding.config["reference"]["value"], "8");
    assert_eq!(finding.config["verdict"]["verdict"]["actual"], "0");
    assert_eq!(finding.config["suspect"], "compiler");
    let class = finding.verdict.finding().unwrap().class.to_string();
    assert!(
        class.starts_with("debuginfo:clang-19.1.7,O1,compiler,-,int,gdb|wrong_value"),
        "{class}"
    );
    let id = finding.id.unwrap().to_string();

    let shown = doppel(&db).args(["show", &id]).assert().success();
    let out = String::from_utf8_lossy(&shown.get_output().stdout).into_owned();
    assert!(out.contains("suspect: compiler") && out.contains(">   10 |"), "{out}");

    let replayed = doppel(&db).args(["replay", &id]).assert().success();
    let out = String::from_utf8_lossy(&replayed.get_output().stdout).into_owned();
    assert!(out.contains("REPRODUCES"), "{out}");

    let bundle = dir.path().join("bundle");
    doppel(&db)
        .args(["repro", &id, "--out"])
        .arg(&bundle)
        .assert()
        .success();
    for f in [
        "README.md",
        "a.c",
        "opt_me_not.c",
        "build.sh",
        "gdb.cmd",
        "lldb.cmd",
        "matrix.md",
    ] {
        assert!(bundle.join(f).is_file(), "{f} missing");
    }
    let matrix = std::fs::read_to_string(bundle.join("matrix.md")).unwrap();
    assert!(matrix.contains("clang-19.1.7"), "{matrix}");
}

#[tokio::test]
async fn a_correct_program_gives_references_and_no_finding() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("plain.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\nint g;\nint main(void) {\n  int a = 3;\n  int b = a + 4;\n  g = b;\n  printf(\"%d\\n\", g);\n  return 0;\n}\n",
    )
    .unwrap();
    let db = dir.path().join("d.db");
    doppel(&db)
        .args([
            "debuginfo",
            "--compilers",
            "gcc,clang",
            "--levels",
            "O2",
            "--debuggers",
            "gdb,lldb",
        ])
        .arg(&src)
        .assert()
        .success();
    let all = records(&db).await;
    assert!(all.iter().all(|r| kind(r) != "finding"), "no finding expected");
    let program = all.iter().find(|r| kind(r) == "program").unwrap();
    let refs = program.config["preparation"]["references"].as_array().unwrap();
    // a at lines 5 and 6, b at line 6 (g is a global, not checked).
    assert!(refs.len() >= 3, "{refs:?}");
    let sessions: Vec<&RunRecord> = all.iter().filter(|r| kind(r) == "session").collect();
    // gcc and clang, each one or two builds (the program as it is, and the
    // line-augmented one), each with gdb and lldb.
    assert!(
        (4..=8).contains(&sessions.len()) && sessions.len().is_multiple_of(2),
        "{}",
        sessions.len()
    );
    let matched: usize = sessions
        .iter()
        .map(|s| {
            s.config["verdicts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|v| v["verdict"]["verdict"] == "match")
                .count()
        })
        .sum();
    assert!(matched > 0, "optimized builds still show some values");
}

#[tokio::test]
async fn a_program_that_does_not_compile_or_has_undefined_behaviour_is_rejected_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.c"), "int main(void) { return x; }\n").unwrap();
    std::fs::write(
        dir.path().join("ub.c"),
        "int main(void) {\n  int a[2] = {0, 1};\n  volatile int i = 2;\n  return a[i];\n}\n",
    )
    .unwrap();
    let db = dir.path().join("d.db");
    doppel(&db)
        .args([
            "debuginfo",
            "--compilers",
            "gcc",
            "--levels",
            "O2",
            "--debuggers",
            "gdb",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let all = records(&db).await;
    let reasons: Vec<String> = all
        .iter()
        .filter_map(|r| match &r.verdict {
            Verdict::SubjectError { reason } => Some(format!("{}: {reason}", r.subject.name)),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("broken.c: rejected at seed: does_not_compile")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("ub.c: rejected at seed: ub_asan_ubsan")),
        "{reasons:?}"
    );
}

#[tokio::test]
async fn a_missing_compiler_is_reported_and_the_campaign_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let out = doppel(&db)
        .args([
            "debuginfo",
            "--compilers",
            "gcc,no-such-cc-9",
            "--levels",
            "O1",
            "--debuggers",
            "gdb",
        ])
        .arg(paper("fig1b.c"))
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("no-such-cc-9") && err.contains("not installed"), "{err}");
    assert!(records(&db).await.iter().any(|r| kind(r) == "program"));
}
