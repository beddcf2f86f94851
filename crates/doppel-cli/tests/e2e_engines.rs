//! `doppel engines` on this machine: every registered engine is listed, the
//! installed ones with version and feature level; a wrong engines directory
//! makes the npm/PyPI ones (and the transpilers) MISSING with the set-up
//! hint, not an error.

use assert_cmd::Command;

#[test]
fn engines_lists_installed_engines_with_feature_levels() {
    let out = Command::cargo_bin("doppel").unwrap().arg("engines").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let jsc = text.lines().find(|l| l.contains(" jsc ")).expect("a jsc row");
    assert!(jsc.contains("installed") && jsc.contains("ES2025 complete"), "{jsc}");
    assert!(
        text.contains("0 missing"),
        "every engine is installed by scripts/test:\n{text}"
    );
}

#[test]
fn a_missing_engines_directory_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("doppel")
        .unwrap()
        .args(["engines", "--no-probe"])
        .env("DOPPEL_ENGINES_DIR", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("jsc") && text.contains("installed"), "{text}");
    let e262 = text
        .lines()
        .find(|l| l.contains(" engine262 "))
        .expect("an engine262 row");
    assert!(e262.contains("MISSING") && e262.contains("setup-engines.sh"), "{e262}");
    // Transpilers are their own kind, missing with their own set-up step.
    let ts = text
        .lines()
        .find(|l| l.contains(" typescript "))
        .expect("a typescript row");
    assert!(
        ts.contains("transpiler") && ts.contains("MISSING") && ts.contains("setup-transpilers.sh"),
        "{ts}"
    );
    assert!(text.contains(&dir.path().display().to_string()), "{text}");
}
