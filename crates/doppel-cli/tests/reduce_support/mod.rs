//! What the reduction e2e tests share: the `doppel` binary on a store,
//! whether a tool is on PATH (asserted, never a reason to skip), and a run
//! that must succeed.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::Path;

/// `doppel --db <db>` with CI's settings.
pub fn doppel(db: &Path) -> Command {
    let mut c = Command::cargo_bin("doppel").unwrap();
    c.arg("--db").arg(db).env("CI", "1");
    c
}

/// Whether `tool` is on PATH.
pub fn installed(tool: &str) -> bool {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `c`, asserts success (printing both streams otherwise) and returns
/// (stdout, stderr).
pub fn run_ok(c: &mut Command) -> (String, String) {
    let out = c.output().unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "{c:?}: {}\n--- stdout\n{o}\n--- stderr\n{e}",
        out.status
    );
    (o, e)
}
