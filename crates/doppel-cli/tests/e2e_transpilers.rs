//! `doppel conform run` with transpilers in the panel (issue 15 part 7c),
//! real engines, real transpilers (scripts/deps/setup-transpilers.sh) and
//! engine262: TypeScript's ES5 spread of a Set (doppel-conform's
//! tests/data/test262/transpile/spread-set.js) is stored as a
//! transpiler-bug candidate of family typescript; its reproducer holds the
//! transpiled output and a plain command that transpiles and runs it.

use assert_cmd::Command;
use std::path::PathBuf;

fn doppel(db: &str, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("doppel")
        .unwrap()
        .arg("--db")
        .arg(db)
        .args(args)
        .env("CI", "1")
        .output()
        .unwrap()
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_typescript_downlevel_bug_is_a_transpiler_candidate_with_a_reproducer() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("s.db").display());
    let test =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../doppel-conform/tests/data/test262/transpile/spread-set.js");
    let o = doppel(
        &db,
        &[
            "conform",
            "run",
            test.to_str().unwrap(),
            "--engines",
            "v8-node,quickjs-ng,babel,typescript",
            "--quiet",
        ],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("2 engines in 2 families") && out.contains("transpilers babel, typescript"),
        "{out}"
    );
    assert!(out.contains("transpiler_bug 1"), "{out}");
    let classes = text(&doppel(&db, &["classes"]));
    assert!(
        classes.contains("transpiler_bug") && classes.contains("typescript"),
        "{classes}"
    );
    let sample = text(&doppel(&db, &["sample", "--per-class", "1"]));
    let id = sample
        .lines()
        .find(|l| l.contains("transpiler_bug"))
        .and_then(|l| {
            l.split_whitespace()
                .find_map(|w| w.trim_matches(|c: char| !c.is_ascii_digit()).parse::<i64>().ok())
        })
        .unwrap_or_else(|| panic!("no transpiler_bug run in:\n{sample}"));
    let repro = dir.path().join("repro");
    let r = doppel(&db, &["repro", &id.to_string(), "--out", repro.to_str().unwrap()]);
    assert!(r.status.success(), "{}", text(&r));
    let transpiled = std::fs::read_to_string(repro.join("transpiled-typescript.js")).unwrap();
    assert!(transpiled.contains("__spreadArray"), "{transpiled}");
    assert!(repro.join("transpiled-babel.js").is_file());
    let sh = std::fs::read_to_string(repro.join("run.sh")).unwrap();
    assert!(sh.contains("--emit") && sh.contains("transpiled-typescript.js"), "{sh}");
    let run = std::process::Command::new("sh")
        .arg(repro.join("run.sh"))
        .output()
        .unwrap();
    let run = text(&run);
    // The plain commands: typescript's output throws the harness's error, babel's passes.
    let ts = run.split("== typescript").nth(1).unwrap_or_else(|| panic!("{run}"));
    assert!(
        ts.contains("Test262Error") && ts.contains("SameValue(«0», «2»)"),
        "{run}"
    );
    let babel = run
        .split("== babel")
        .nth(1)
        .and_then(|s| s.split("== ").next())
        .unwrap_or_else(|| panic!("{run}"));
    assert!(babel.contains("exit 0"), "{run}");
}
