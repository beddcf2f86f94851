//! End to end: a debug-information finding with a known wrong value (LLVM
//! #39869, PLDI'20 figure 11), found by `doppel debuginfo`, reduced with
//! `doppel debuginfo reduce` (real C-Vise, real probe) and bundled by
//! `doppel repro`. Line s is marked by the comment `/*DOPPEL_S*/` all along.

mod reduce_support;
use reduce_support::{doppel, installed};

use assert_cmd::Command;
use doppel_core::store::Store;
use std::path::Path;

/// The paper's Figure 11 program: clang-19 -O1 -g, lldb shows
/// `l_30 = {0, 0, 0, 1}` at line 8 where the program holds `{1, 0, 0, 1}`.
fn fig11() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/debuginfo/paper/fig11-llvm39869.c");
    std::fs::read_to_string(path).unwrap()
}

const MARKER: &str = "/*DOPPEL_S*/";

fn stdout(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn fig11_finding_is_found_reduced_and_bundled_with_the_comment_marker() {
    let lldb = ["lldb", "lldb-22", "lldb-21", "lldb-20", "lldb-19"]
        .into_iter()
        .any(installed);
    assert!(
        installed("clang-19") && lldb && installed("gdb") && installed("cvise"),
        "the test needs clang-19, lldb, gdb and cvise (.ci/run installs them)"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let src = dir.path().join("fig11-llvm39869.c");
    std::fs::write(&src, fig11()).unwrap();

    // 1. The campaign stores the wrong value as a finding.
    stdout(doppel(&db).args(["debuginfo"]).arg(&src).args([
        "--compilers",
        "clang-19",
        "--levels",
        "O1",
        "--debuggers",
        "lldb,gdb",
        "--no-bisect",
        "--quiet",
    ]));
    let classes: serde_json::Value = serde_json::from_str(&stdout(doppel(&db).args(["classes", "--json"]))).unwrap();
    let class = classes
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            let k = c["class"].as_str().unwrap_or("");
            k.contains("wrong_value") && k.contains("lldb")
        })
        .unwrap_or_else(|| {
            // A rejected program says why (a plain build must link the
            // barrier unit: the program calls opt_me_not()).
            let first = doppel(&db).args(["show", "1"]).output().unwrap();
            panic!(
                "no wrong_value class with lldb: {classes:#}\n{}",
                String::from_utf8_lossy(&first.stdout)
            )
        });
    // The class holds every lldb wrong value of the program (l_30 is wrong
    // at line 6 too): take the paper's pair, line 8.
    let _ = &class["example_run"];
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let mut found = None;
    for id in 1..1000 {
        let Some(r) = store.run(id).await.unwrap() else {
            continue;
        };
        let c = &r.config;
        if c["kind"] == "finding" && c["debugger_name"] == "lldb" && c["reference"]["pair"]["line"] == 8 {
            found = Some((id, r));
            break;
        }
    }
    let (run, record) = found.expect("the lldb finding of l_30 at line 8");
    let c = &record.config;
    assert_eq!(c["kind"], "finding", "{c:#}");
    assert_eq!(c["debugger_name"], "lldb", "{c:#}");
    assert_eq!(c["reference"]["pair"]["line"], 8, "{c:#}");
    assert_eq!(c["reference"]["pair"]["variable"]["name"], "l_30", "{c:#}");
    assert_eq!(c["reference"]["value"], "{1, 0, 0, 1}", "{c:#}");
    let verdict = &c["verdict"]["verdict"];
    assert_eq!(verdict["verdict"], "wrong_value", "{c:#}");
    assert_eq!(verdict["actual"], "{0, 0, 0, 1}", "{c:#}");
    let show = stdout(doppel(&db).args(["show", &run.to_string()]));
    assert!(show.contains("l_30"), "{show}");

    // 2. The reduction starts from the program as checked, marked at s by
    // the comment, and keeps the marker.
    let out = dir.path().join("reduce");
    let said = stdout(
        doppel(&db)
            .args(["debuginfo", "reduce", &run.to_string(), "--budget", "120", "--out"])
            .arg(&out),
    );
    eprintln!("{said}");
    let original = std::fs::read_to_string(out.join("original/a.c")).unwrap();
    assert_eq!(
        original.lines().nth(7).unwrap_or(""),
        format!("{MARKER}  opt_me_not(); //break here."),
        "{original}"
    );
    let record = store.run(run).await.unwrap().unwrap();
    let reduced = &record.config["reduced"];
    let text = reduced["text"].as_str().unwrap();
    assert_eq!(text.matches(MARKER).count(), 1, "{text}");
    assert_eq!(std::fs::read_to_string(out.join("a.c")).unwrap(), text);
    let line = reduced["line"].as_u64().unwrap();
    assert!(
        text.lines().nth(line as usize - 1).unwrap().contains(MARKER),
        "line {line}: {text}"
    );

    // 3. The bundle: the reduced program, scripts breaking at the marker.
    let bundle = dir.path().join("bundle");
    stdout(doppel(&db).args(["repro", &run.to_string(), "--out"]).arg(&bundle));
    for f in ["README.md", "a.c", "opt_me_not.c", "gdb.cmd", "lldb.cmd"] {
        assert!(bundle.join(f).is_file(), "{f} missing");
    }
    assert_eq!(std::fs::read_to_string(bundle.join("a.c")).unwrap(), text);
    let gdb = std::fs::read_to_string(bundle.join("gdb.cmd")).unwrap();
    assert!(gdb.starts_with(&format!("break a.c:{line}\n")), "{gdb}");
    let lldb_cmd = std::fs::read_to_string(bundle.join("lldb.cmd")).unwrap();
    assert!(
        lldb_cmd.starts_with(&format!("breakpoint set -f a.c -l {line}\n")),
        "{lldb_cmd}"
    );
    let readme = std::fs::read_to_string(bundle.join("README.md")).unwrap();
    assert!(readme.contains(MARKER), "{readme}");
    assert!(readme.contains("`l_30 = {0, 0, 0, 1}`"), "{readme}");
}
