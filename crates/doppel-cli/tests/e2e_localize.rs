//! End to end: `doppel localize` (Darwin, issue 16) with the real gcc,
//! clang-16/wasm-ld, z3 and doppel's concolic interpreter: the bundled
//! regression pairs (three defect classes) one by one and as a corpus;
//! `show`, `replay` and `repro` on a stored case; bad input (a program
//! that does not build, P and P' that agree on t, z3 missing from PATH),
//! each a named outcome with its exit status; and an ignored run over real
//! Codeflaws pairs of every defect class.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn bundled(pair: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/regressions")
        .join(pair)
}

fn doppel(db: &Path) -> Command {
    let mut c = Command::cargo_bin("doppel").unwrap();
    c.arg("--db").arg(db).env("CI", "1");
    c
}

/// `doppel localize --json` on (P, P', t): the exit code and the record.
fn localize(db: &Path, p: &Path, q: &Path, t: &Path, path: Option<&Path>) -> (i32, Value) {
    let mut c = doppel(db);
    c.args(["localize", "--json", "--budget", "60s", "--reference"])
        .arg(p)
        .arg("--modified")
        .arg(q)
        .arg("--input")
        .arg(t);
    if let Some(path) = path {
        c.env("PATH", path);
    }
    let out = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rec: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), rec)
}

fn darwin_lines(rec: &Value) -> Vec<String> {
    rec["result"]["darwin"]["report"]["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| format!("{}:{}", e["line"]["side"].as_str().unwrap(), e["line"]["line"]))
        .collect()
}

#[test]
fn a_bundled_regression_is_localized_and_show_replay_and_repro_handle_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let c = bundled("1-A-bug-10-11");
    let (code, rec) = localize(
        &db,
        &c.join("1-A-11.c"),
        &c.join("1-A-10.c"),
        &c.join("input-neg1"),
        None,
    );
    assert_eq!(code, 0, "{rec:#}");
    assert_eq!(rec["result"]["outcome"]["kind"], "analyzed");
    assert_eq!(rec["result"]["darwin"]["outcome"]["kind"], "localized");
    // The changed condition `x >= 0` (P' line 9), with a validated witness.
    let lines = darwin_lines(&rec);
    assert!(lines.contains(&"modified:9".to_string()), "{lines:?}");
    let causes = rec["result"]["darwin"]["causes"].as_array().unwrap();
    let c9 = causes
        .iter()
        .find(|c| c["line"]["side"] == "modified" && c["line"]["line"] == 9)
        .unwrap();
    assert!(!c9["witness"]["input"].as_array().unwrap().is_empty());
    assert_eq!(rec["result"]["outputs_on_t"], serde_json::json!(["1 5\n", "2 5\n"]));
    // The baselines beside Darwin.
    let techniques: Vec<&str> = rec["result"]["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0]["technique"].as_str().unwrap())
        .collect();
    assert!(
        techniques.starts_with(&["darwin", "diff", "branches"]),
        "{techniques:?}"
    );
    assert!(techniques.contains(&"sbfl-ochiai-line"));

    // The human table names the line and its source text.
    let out = doppel(&db).arg("show").arg("1").output().unwrap();
    assert!(out.status.success());
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("case 1-A-11-vs-1-A-10") && shown.contains("localized"),
        "{shown}"
    );
    assert!(shown.contains("P':9") && shown.contains("if (x >= 0)"), "{shown}");
    assert!(shown.contains("P and P' side by side"), "{shown}");

    let out = doppel(&db).args(["replay", "1"]).output().unwrap();
    let replayed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{replayed}");
    assert!(replayed.contains("REPRODUCES"), "{replayed}");

    let repro = dir.path().join("repro");
    let out = doppel(&db).args(["repro", "1", "--out"]).arg(&repro).output().unwrap();
    assert!(out.status.success());
    for f in ["P.c", "P2.c", "input", "witness-1", "run.sh", "README.md"] {
        assert!(repro.join(f).is_file(), "{f} missing");
    }
    // run.sh builds both natively: they differ on t (exit 0), and it
    // shows every witness.
    let run = std::process::Command::new("sh")
        .arg(repro.join("run.sh"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{text}");
    assert!(text.contains("== input") && text.contains("-> DIFFER"), "{text}");
    assert!(text.contains("== witness-1"), "{text}");
}

#[test]
fn the_bundled_corpus_runs_on_the_campaign_runner_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let corpus = bundled("");
    let out = doppel(&db)
        .args(["localize", "-q", "--corpus"])
        .arg(&corpus)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{err}\n{text}");
    assert!(err.contains("this invocation: 5 cases run"), "{err}");
    // Every case of the three classes (three DCCR pairs: a wrong constant in
    // a condition, one in an assignment that only predicate instrumentation
    // finds, and a printed one found where the runs' outputs part)
    // has the faulty line in the report.
    for class in ["ORRN", "OILN", "DCCR"] {
        // The classes table's rows (the measures tables below it are
        // Markdown rows starting with "| " and name the class too).
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(class) && !l.starts_with("| "))
            .collect();
        assert!(!rows.is_empty(), "{text}");
        for row in rows {
            assert!(row.contains("localized") || row.contains("first_divergence"), "{row}");
            assert!(row.contains("top1") || row.contains("in_report"), "{row}");
        }
    }
    // The measures over the stored cases: Darwin first, the baselines.
    assert!(text.contains("| technique | cases | faulty line in report |"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("| darwin |")), "{text}");
    let out = doppel(&db)
        .args(["localize", "-q", "--resume", "--corpus"])
        .arg(&corpus)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success());
    assert!(err.contains("0 cases run, 5 skipped"), "{err}");
    assert!(
        text.lines()
            .any(|l| l.contains("first_divergence") && l.contains("DCCR") && l.contains("top1")),
        "{text}"
    );
    let report = dir.path().join("report");
    let out = doppel(&db).args(["report", "--out"]).arg(&report).output().unwrap();
    assert!(out.status.success());
    let html: String = std::fs::read_dir(&report)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(html.contains("regression localization"), "report lacks the section");
    assert!(html.contains("P and P&#x27; side by side"));
}

#[test]
fn bad_input_ends_in_named_outcomes_with_exit_status_1() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let c = bundled("1-A-bug-10-11");
    let (p, q) = (c.join("1-A-11.c"), c.join("1-A-10.c"));

    // P' does not build.
    let broken = dir.path().join("broken.c");
    std::fs::write(&broken, "int main(void) { return nope; }\n").unwrap();
    let (code, rec) = localize(&db, &p, &broken, &c.join("input-neg1"), None);
    assert_eq!(code, 1);
    assert_eq!(rec["result"]["outcome"]["kind"], "build_failure", "{rec:#}");
    assert_eq!(rec["result"]["outcome"]["program"], "P'");
    assert!(rec["result"]["outcome"]["message"].as_str().unwrap().contains("nope"));

    // P and P' agree on t (no zero in the input).
    let t = dir.path().join("t");
    std::fs::write(&t, "2\n3 -1\n").unwrap();
    let (code, rec) = localize(&db, &p, &q, &t, None);
    assert_eq!(code, 1);
    assert_eq!(rec["result"]["outcome"]["kind"], "agree", "{rec:#}");

    // z3 missing: a PATH of every tool in /usr/bin but z3.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for e in std::fs::read_dir("/usr/bin").unwrap().flatten() {
        if e.file_name() != "z3" {
            let _ = std::os::unix::fs::symlink(e.path(), bin.join(e.file_name()));
        }
    }
    let (code, rec) = localize(&db, &p, &q, &c.join("input-neg1"), Some(&bin));
    assert_eq!(code, 1);
    assert_eq!(rec["result"]["outcome"]["kind"], "analyzed", "{rec:#}");
    let d = &rec["result"]["darwin"]["outcome"];
    assert_eq!(d["kind"], "solver_failure", "{rec:#}");
    assert!(d["reason"].as_str().unwrap().contains("z3"), "{d}");
    // The baselines still ran.
    assert!(rec["result"]["reports"].as_array().unwrap().len() > 5);

    // Every case is stored, each in the class of its outcome.
    let out = doppel(&db).arg("classes").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for o in ["build_failure", "agree", "solver_failure"] {
        assert!(text.contains(o), "{text}");
    }

    // An input file that cannot be read is a usage error (exit 2).
    let out = doppel(&db)
        .args(["localize", "--reference"])
        .arg(&p)
        .arg("--modified")
        .arg(&q)
        .args(["--input", "/nonexistent/t"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/t"));
}

fn shared() -> PathBuf {
    std::env::var_os("DOPPEL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

/// One real Codeflaws pair of each of the five defect classes through
/// `doppel localize --corpus`: every case is stored with a named outcome,
/// and Darwin localizes at least one (docs/results/localize.md has the
/// corpus-wide figures).
#[tokio::test]
#[ignore = "needs ../shared"]
async fn real_codeflaws_pairs_of_each_class() {
    let root = shared().join("corpus/regressions/codeflaws");
    let tsv = std::fs::read_to_string(root.join("defects.tsv")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let mut lines = String::new();
    for l in tsv.lines() {
        let Some((pair, class)) = l.split_once('\t') else {
            continue;
        };
        if seen.insert(class.to_string()) {
            std::os::unix::fs::symlink(root.join(pair), corpus.join(pair)).unwrap();
            lines.push_str(l);
            lines.push('\n');
        }
    }
    assert_eq!(seen.len(), 5);
    std::fs::write(corpus.join("defects.tsv"), lines).unwrap();
    let db = dir.path().join("c.db");
    let out = doppel(&db)
        .args(["localize", "-q", "--budget", "60s", "--corpus"])
        .arg(&corpus)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{err}\n{text}");
    assert!(err.contains("this invocation: 5 cases run"), "{err}");
    let store = doppel_core::store::Store::open(db.to_str().unwrap()).await.unwrap();
    let mut localized = 0;
    for id in 1..=5 {
        let run = store.run(id).await.unwrap().unwrap();
        let rec = doppel_localize::record::LocalizeRecord::of(&run).unwrap();
        let r = &rec.result;
        // Codeflaws' programs all build and fail their failing test: every
        // case is analyzed, Darwin ends with one of its named outcomes, and
        // the diff baseline names a faulty line (a median diff of one line).
        assert_eq!(r.outcome, doppel_localize::case::Outcome::Analyzed, "{}: {r:?}", r.name);
        assert!(r.darwin.is_some());
        let diff = r.reports.iter().find(|(rep, _)| rep.technique == "diff").unwrap();
        assert!(diff.1.unwrap().hit, "{}", r.name);
        localized += usize::from(doppel_localize::record::outcome_name(r) == "localized");
    }
    assert!(localized >= 1, "{text}");
}

/// `doppel bench localize` prints its figures (nothing about speed is
/// asserted: figures are for people).
#[test]
fn bench_localize_prints_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = doppel(&dir.path().join("d.db"))
        .args(["bench", "localize", "--limit", "1", "--runs", "1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1-A-bug-10-11") && text.contains("localized"), "{text}");
    for figure in ["seconds per case", "solver share", "instructions per second"] {
        assert!(text.contains(figure), "{figure}: {text}");
    }
}

/// A pair whose regression shows only with a command-line argument: P
/// prints `above` when the number read exceeds argv[1], P' when it reaches it.
const ARGV_P: &str = "#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char **argv) {\n  int k = argc > 1 ? atoi(argv[1]) : 0;\n  int x;\n  if (scanf(\"%d\", &x) != 1)\n    return 1;\n  if (x > k)\n    printf(\"above\\n\");\n  else\n    printf(\"not above\\n\");\n  return 0;\n}\n";

#[test]
fn args_reach_both_programs_in_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let (p, q, t) = (dir.path().join("p.c"), dir.path().join("q.c"), dir.path().join("t"));
    std::fs::write(&p, ARGV_P).unwrap();
    std::fs::write(&q, ARGV_P.replace("x > k", "x >= k")).unwrap();
    std::fs::write(&t, "7\n").unwrap();
    let line = ARGV_P.lines().position(|l| l.contains("x > k")).unwrap() + 1;
    let db = dir.path().join("d.db");
    // Without arguments k = 0: both print "above" on 7.
    let (code, rec) = localize(&db, &p, &q, &t, None);
    assert_eq!(code, 1, "{rec:#}");
    assert_eq!(rec["result"]["outcome"]["kind"], "agree", "{rec:#}");
    // `--args 7` (before other options: the values end at the next option):
    // k = 7, P prints "not above", P' "above"; the changed condition is found.
    let out = doppel(&db)
        .args(["localize", "--args", "7", "--json", "--budget", "60s", "--reference"])
        .arg(&p)
        .arg("--modified")
        .arg(&q)
        .arg("--input")
        .arg(&t)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rec: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{rec:#}");
    assert_eq!(rec["case"]["args"], serde_json::json!(["7"]));
    assert_eq!(
        rec["result"]["outputs_on_t"],
        serde_json::json!(["not above\n", "above\n"])
    );
    assert_eq!(rec["result"]["darwin"]["outcome"]["kind"], "localized", "{rec:#}");
    let lines = darwin_lines(&rec);
    assert!(lines.contains(&format!("modified:{line}")), "{lines:?}");
    // The stored case replays with its arguments, and the reproducer
    // passes them to the native builds.
    let out = doppel(&db).args(["replay", "2"]).output().unwrap();
    let replayed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && replayed.contains("REPRODUCES"), "{replayed}");
    let repro = dir.path().join("repro");
    let out = doppel(&db).args(["repro", "2", "--out"]).arg(&repro).output().unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(repro.join("args")).unwrap(), "7\n");
    let run = std::process::Command::new("sh")
        .arg(repro.join("run.sh"))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(0),
        "P and P' differ on t with the arguments: {shown}"
    );
    assert!(shown.contains("P  prints: not above"), "{shown}");
}
