//! Line coverage of one run of a C program (gcc `--coverage` + gcov), as the
//! dead ranges [`Coverage`] that "remove dead code" needs (ISSTA'19 section
//! 3.2.2: "During the initial test run, we collect dynamic coverage
//! information").
//!
//! gcov reports a count for each line that holds code; other lines (blank
//! lines, braces, declarations without initializer, comments) are not
//! listed. A dead range is a maximal run of lines that are each either
//! listed with count 0 or not listed, trimmed so that it begins and ends
//! with a count-0 line (an unlisted line next to executed code may belong to
//! it, like the second line of a multi-line `for` header); it is
//! `[Pos(first, 1), Pos(last + 1, 1))`.
//!
//! The same gcov run gives [`line_counts`]: the execution count of each line
//! holding code, from which debug-information validation takes the set S of
//! covered lines (Li, Ding, Zhang & Italiano, PLDI 2020, section 4.1: "we
//! build a set S such that every element in S is a line covered in the
//! program P").

use crate::edit::Pos;
use crate::transform::Coverage;
use doppel_core::process::{self, Limits, Sandbox};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::Command;

/// How long compiling and running gcov may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// Compiles `source` with `gcc -O0 -g --coverage` in a temporary directory,
/// runs it once (no arguments, stdin empty, output discarded) under `limits`
/// and `timeout`, and turns gcov's line counts into dead ranges (positions in
/// `source`'s text).
///
/// A program that exits non-zero still has coverage as long as it returns
/// from `main` or calls `exit`.
///
/// Errors (a reason, never a panic): the source cannot be read, gcc fails,
/// the program times out (it is killed with its process tree) or dies
/// without writing coverage data (a crash, `abort`), gcov fails or its
/// output cannot be read.
pub async fn collect(source: &Path, timeout: Duration, limits: Limits) -> Result<Coverage, String> {
    let text = read_source(source)?;
    let counts = run_gcov(source, &text, &[], timeout, limits).await?;
    Ok(dead_ranges(&counts, text.lines().count() as u32))
}

/// Execution count of each line of `source` that holds code (1-based line
/// -> times executed; lines without code are absent), from one run of the
/// program built with `gcc -O0 -g --coverage` plus `extra_flags` (such as
/// `-w`, `-I/usr/include/csmith`), run with no arguments and empty stdin,
/// its output discarded, under `limits` and `timeout`. A line listed twice
/// by gcov (code of two functions) gets the larger count.
///
/// Errors: as for [`collect`].
pub async fn line_counts(
    source: &Path,
    extra_flags: &[String],
    timeout: Duration,
    limits: Limits,
) -> Result<BTreeMap<u32, u64>, String> {
    let text = read_source(source)?;
    run_gcov(source, &text, extra_flags, timeout, limits).await
}

fn read_source(source: &Path) -> Result<String, String> {
    std::fs::read_to_string(source).map_err(|e| format!("cannot read {}: {e}", source.display()))
}

/// Builds a copy of `text` (the contents of `source`) with coverage in a
/// temporary directory, runs it, and reads gcov's line counts.
async fn run_gcov(
    source: &Path,
    text: &str,
    extra_flags: &[String],
    timeout: Duration,
    limits: Limits,
) -> Result<BTreeMap<u32, u64>, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let name = source
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.ends_with(".c") && !n.starts_with('-'))
        .unwrap_or("subject.c")
        .to_string();
    std::fs::write(dir.path().join(&name), text).map_err(|e| format!("cannot copy the source: {e}"))?;

    let mut cc = Command::new("gcc");
    cc.current_dir(dir.path())
        .args(["-O0", "-g", "--coverage"])
        .args(extra_flags)
        .args(["-o", "prog", &name, "-lm"]);
    if let Some(parent) = source.parent().filter(|p| !p.as_os_str().is_empty()) {
        cc.arg("-I").arg(parent);
    }
    let built = process::run(cc, TOOL_TIMEOUT, Sandbox::default())
        .await
        .map_err(|e| format!("cannot run gcc: {e}"))?;
    if built.timed_out || built.code != Some(0) {
        return Err(format!("gcc --coverage failed: {}", built.stderr.trim()));
    }

    let mut cmd = Command::new(dir.path().join("prog"));
    cmd.current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut guard = process::spawn(cmd, Sandbox::default()).map_err(|e| format!("cannot run the program: {e}"))?;
    if let Err(e) = limits.apply_to(guard.pid())
        && e.raw_os_error() != Some(3)
    {
        // ESRCH (3): it already exited. Anything else: do not run unlimited.
        guard.kill_tree();
        return Err(format!("cannot limit the program: {e}"));
    }
    let status = match guard.wait_timeout(timeout).await {
        Some(s) => s,
        None => {
            guard.kill_tree();
            return Err(format!("the program did not finish within {timeout:?}"));
        }
    };
    drop(guard);
    // With more units on the command line (a barrier unit in `extra_flags`)
    // gcc names the data `prog-<stem>.gcda`, one file per unit: take the
    // source's own.
    let stem = name.trim_end_matches(".c");
    let own = |n: &str| n == format!("{stem}.gcda") || n.ends_with(&format!("-{stem}.gcda"));
    let all: Vec<String> = std::fs::read_dir(dir.path())
        .map_err(|e| format!("cannot list the temporary directory: {e}"))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".gcda"))
        .collect();
    let gcda = all
        .iter()
        .find(|n| own(n))
        .or(all.first())
        .cloned()
        .ok_or_else(|| format!("the program wrote no coverage data ({status})"))?;

    let json = gcov_json(dir.path(), &gcda).await?;
    parse_gcov_json(&json, &name)
}

/// gcov's JSON for `gcda`: `--stdout` (gcc 12), else the `.gcov.json.gz`
/// file it writes, decompressed with `gzip -dc`.
async fn gcov_json(dir: &Path, gcda: &str) -> Result<String, String> {
    let mut cmd = Command::new("gcov");
    cmd.current_dir(dir).args(["--json-format", "--stdout", gcda]);
    let out = process::run(cmd, TOOL_TIMEOUT, Sandbox::default())
        .await
        .map_err(|e| format!("cannot run gcov: {e}"))?;
    if out.code == Some(0) && out.stdout.trim_start().starts_with('{') {
        return Ok(out.stdout);
    }
    let mut cmd = Command::new("gcov");
    cmd.current_dir(dir).args(["--json-format", gcda]);
    let out = process::run(cmd, TOOL_TIMEOUT, Sandbox::default())
        .await
        .map_err(|e| format!("cannot run gcov: {e}"))?;
    if out.code != Some(0) {
        return Err(format!("gcov failed: {}", out.stderr.trim()));
    }
    let gz = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with(".gcov.json.gz"))
        .ok_or("gcov wrote no JSON output")?;
    let mut cmd = Command::new("gzip");
    cmd.current_dir(dir).args(["-dc", &gz]);
    let out = process::run(cmd, TOOL_TIMEOUT, Sandbox::default())
        .await
        .map_err(|e| format!("cannot run gzip: {e}"))?;
    if out.code != Some(0) {
        return Err(format!("gzip -dc {gz} failed: {}", out.stderr.trim()));
    }
    Ok(out.stdout)
}

/// Line number -> execution count for the lines of file `name` that gcov
/// lists (the largest count when a line is listed twice).
///
/// Errors: the text is not gcov JSON.
fn parse_gcov_json(json: &str, name: &str) -> Result<BTreeMap<u32, u64>, String> {
    let mut counts = BTreeMap::new();
    let mut docs = 0;
    for doc in serde_json::Deserializer::from_str(json).into_iter::<serde_json::Value>() {
        let doc = doc.map_err(|e| format!("gcov output is not JSON: {e}"))?;
        docs += 1;
        let files = doc["files"].as_array().ok_or("gcov JSON without \"files\"")?;
        for f in files {
            let file = f["file"].as_str().unwrap_or("");
            if file != name && !file.ends_with(&format!("/{name}")) {
                continue;
            }
            for l in f["lines"].as_array().into_iter().flatten() {
                let (Some(line), Some(count)) = (l["line_number"].as_u64(), l["count"].as_u64()) else {
                    continue;
                };
                let e = counts.entry(line as u32).or_insert(0);
                *e = (*e).max(count);
            }
        }
    }
    if docs == 0 {
        return Err("gcov printed nothing".into());
    }
    Ok(counts)
}

/// Dead ranges from line counts of a file of `lines` lines (see the module
/// documentation).
fn dead_ranges(counts: &BTreeMap<u32, u64>, lines: u32) -> Coverage {
    let mut dead = Vec::new();
    // First and last count-0 line of the current run of non-executed lines.
    let mut run: Option<(u32, u32)> = None;
    for line in 1..=lines + 1 {
        let live = line > lines || counts.get(&line).is_some_and(|&c| c > 0);
        if live {
            if let Some((first, last)) = run.take() {
                dead.push((Pos::new(first, 1), Pos::new(last + 1, 1)));
            }
        } else if counts.get(&line) == Some(&0) {
            run = Some(run.map_or((line, line), |(first, _)| (first, line)));
        }
    }
    Coverage { dead }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_trimmed_to_count_zero_lines() {
        // 1 live, 2 neutral, 3 dead, 4 neutral, 5 dead, 6 neutral, 7 live, 8 dead, 9 neutral.
        let counts: BTreeMap<u32, u64> = [(1, 1), (3, 0), (5, 0), (7, 2), (8, 0)].into_iter().collect();
        let c = dead_ranges(&counts, 9);
        assert_eq!(
            c.dead,
            vec![(Pos::new(3, 1), Pos::new(6, 1)), (Pos::new(8, 1), Pos::new(9, 1))]
        );
        assert!(dead_ranges(&BTreeMap::new(), 3).dead.is_empty());
    }

    #[test]
    fn gcov_json_lines_of_the_named_file_only() {
        let json = r#"{"files":[{"file":"other.h","lines":[{"line_number":3,"count":0}]},
            {"file":"t.c","lines":[{"line_number":2,"count":0},{"line_number":2,"count":4},{"line_number":5,"count":0}]}]}"#;
        let counts = parse_gcov_json(json, "t.c").unwrap();
        assert_eq!(counts.into_iter().collect::<Vec<_>>(), vec![(2, 4), (5, 0)]);
        assert!(parse_gcov_json("not json", "t.c").is_err());
    }

    const PROG: &str = r#"#include <stdio.h>
#include <stdlib.h>

static int never(int x)
{
    int y = x * 2;
    return y;
}

int main(int argc, char **argv) {
    int a = argc;
    if (a > 5) {
        a = 2;
        printf("big\n");
    }
    printf("%d\n", a);
    return 3;
}
"#;

    fn write(dir: &Path, src: &str) -> std::path::PathBuf {
        let f = dir.join("t.c");
        std::fs::write(&f, src).unwrap();
        f
    }

    #[tokio::test]
    async fn dead_ranges_cover_the_uncalled_function_and_the_untaken_branch() {
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), PROG);
        let c = collect(&f, Duration::from_secs(20), Limits::default()).await.unwrap();
        let p = |l| Pos::new(l, 1);
        // The function body (its header line through `return y;`).
        assert!(c.is_dead(Pos::new(4, 12), Pos::new(7, 14)), "{:?}", c.dead);
        // The branch body.
        assert!(c.is_dead(Pos::new(13, 9), Pos::new(14, 24)), "{:?}", c.dead);
        // Executed lines are never dead.
        for l in [10, 11, 12, 16, 17] {
            assert!(
                !c.dead.iter().any(|&(s, e)| s <= p(l) && p(l) < e),
                "line {l}: {:?}",
                c.dead
            );
        }
    }

    #[tokio::test]
    async fn a_program_exiting_non_zero_still_has_coverage() {
        let dir = tempfile::tempdir().unwrap();
        let f = write(
            dir.path(),
            "#include <stdlib.h>\nint main(int argc, char **argv) {\n    if (argc > 5) {\n        return 1;\n    }\n    exit(4);\n}\n",
        );
        let c = collect(&f, Duration::from_secs(20), Limits::default()).await.unwrap();
        assert!(c.is_dead(Pos::new(4, 9), Pos::new(4, 18)), "{:?}", c.dead);
    }

    #[tokio::test]
    async fn hangs_crashes_and_compile_errors_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), "int main(void) {\n    for (;;) {}\n}\n");
        let started = std::time::Instant::now();
        let err = collect(&f, Duration::from_millis(1500), Limits::default())
            .await
            .unwrap_err();
        assert!(err.contains("did not finish"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(15));

        let f = write(dir.path(), "#include <stdlib.h>\nint main(void) {\n    abort();\n}\n");
        let err = collect(&f, Duration::from_secs(20), Limits::default())
            .await
            .unwrap_err();
        assert!(err.contains("no coverage data"), "{err}");

        let f = write(dir.path(), "int main(void) { return x; }\n");
        let err = collect(&f, Duration::from_secs(20), Limits::default())
            .await
            .unwrap_err();
        assert!(err.contains("gcc"), "{err}");

        let err = collect(&dir.path().join("missing.c"), Duration::from_secs(5), Limits::default())
            .await
            .unwrap_err();
        assert!(err.contains("cannot read"), "{err}");
    }

    #[tokio::test]
    async fn line_counts_are_exact_and_extra_flags_reach_gcc() {
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), PROG);
        let counts = line_counts(&f, &[], Duration::from_secs(20), Limits::default())
            .await
            .unwrap();
        assert_eq!(
            counts.into_iter().collect::<Vec<_>>(),
            vec![
                (4, 0),
                (6, 0),
                (7, 0),
                (10, 1),
                (11, 1),
                (12, 1),
                (13, 0),
                (14, 0),
                (16, 1),
                (17, 1)
            ]
        );

        // N comes from the extra flags; -w silences the implicit declaration.
        let f = write(
            dir.path(),
            "int main(void) {\n    int s = 0;\n    for (int i = 0; i < N; i++)\n        s += i;\n    return s - s;\n}\n",
        );
        let flags = ["-DN=3".to_string(), "-w".to_string()];
        let counts = line_counts(&f, &flags, Duration::from_secs(20), Limits::default())
            .await
            .unwrap();
        // The `for` header runs 4 times (3 passes and the exit test); the
        // closing brace holds no code of its own.
        assert_eq!(
            counts.into_iter().collect::<Vec<_>>(),
            vec![(1, 1), (2, 1), (3, 4), (4, 3), (5, 1)]
        );
        let err = line_counts(&f, &[], Duration::from_secs(20), Limits::default())
            .await
            .unwrap_err();
        assert!(err.contains("gcc"), "{err}");
    }
}
