//! Block coverage of a JavaScript subject's run under node, for the
//! dead-code removal of metamorphic debugger testing (ISSTA'19 section
//! 3.2.2, "Remove dead code": the paper takes Chromium's
//! `Profiler.takePreciseCoverage`; node writes the same data when
//! `NODE_V8_COVERAGE` names a directory).

use crate::edit::pos_of_offset;
use crate::transform::Coverage;
use doppel_core::Subject;
use doppel_core::process::{self, Limits, Sandbox};
use serde_json::Value as Json;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

/// The loader: waits for one byte on stdin (sent once the resource limits
/// are applied), then runs every file of `files.json` in order as a classic
/// script in the global scope, as the node debugger backend does.
const LOADER: &str = r#"'use strict';
// doppel: runs the prelude, the source and the epilogue for coverage.
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const files = JSON.parse(fs.readFileSync(path.join(__dirname, 'files.json'), 'utf8'));
fs.writeSync(1, 'doppel-coverage-ready\n');
for (;;) {
  try { fs.readSync(0, Buffer.alloc(1)); break; } catch (e) { if (e.code !== 'EAGAIN') break; }
}
for (const f of files) vm.runInThisContext(fs.readFileSync(f, 'utf8'), { filename: f });
"#;

const READY: &str = "doppel-coverage-ready";

/// Runs `subject` (its prelude, source and epilogue, each a classic script
/// run by `vm.runInThisContext` in one global scope) under `node` from
/// `PATH` with `NODE_V8_COVERAGE` set (precise block coverage with counts),
/// and returns the never-executed ranges of the source file as
/// [`Coverage::dead`]: `[start, end)` positions (1-based line, 1-based
/// character column) in the source text. V8 reports nested ranges in
/// UTF-16 offsets; the innermost range's count holds, function ranges
/// included (a never-called function is one dead range). Code no range
/// covers is not reported dead.
///
/// node runs in its own process group (through
/// [`doppel_core::process::spawn`], network isolated when possible) with
/// `limits` applied once node is up (the address-space limit is added to
/// node's own size, as the node backend does); the whole run is bounded by
/// `timeout`. An uncaught exception in the program is fine (node still
/// writes coverage).
///
/// Errors (a reason, never a panic): the source cannot be read, node cannot
/// start, the run times out, node dies by a signal (a resource limit), or
/// no coverage of the source was written.
pub async fn collect(subject: &Subject, timeout: Duration, limits: Limits) -> Result<Coverage, String> {
    let deadline = Instant::now() + timeout;
    let source =
        std::fs::read_to_string(&subject.source).map_err(|e| format!("reading {}: {e}", subject.source.display()))?;
    let node = process::which("node").ok_or("node is not on PATH")?;
    let dir = tempfile::Builder::new()
        .prefix("doppel-coverage-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"))?;
    let loader = dir.path().join("loader.js");
    let cov_dir = dir.path().join("coverage");
    let files: Vec<String> = subject
        .prelude
        .iter()
        .chain(std::iter::once(&subject.source))
        .chain(&subject.epilogue)
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let write =
        |path: &Path, text: &str| std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()));
    write(&loader, LOADER)?;
    write(
        &dir.path().join("files.json"),
        &serde_json::to_string(&files).map_err(|e| e.to_string())?,
    )?;
    let stderr_path = dir.path().join("stderr.txt");
    let stderr_file = std::fs::File::create(&stderr_path).map_err(|e| format!("{}: {e}", stderr_path.display()))?;

    let mut cmd = tokio::process::Command::new(&node);
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("TZ", "UTC")
        .env("NODE_V8_COVERAGE", &cov_dir)
        .arg(&loader)
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr_file));
    let mut guard = process::spawn(cmd, Sandbox::default()).map_err(|e| format!("cannot start node: {e}"))?;
    let stderr_tail = || {
        let s = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(5)..].join(" | ")
    };
    let timed_out = || format!("the run did not finish within {timeout:?}");

    // Wait for the loader, apply the limits, let it go on.
    let stdout = guard.child_mut().stdout.take().ok_or("node's stdout is missing")?;
    let mut lines = tokio::io::BufReader::new(stdout);
    let ready = tokio::time::timeout_at(deadline.into(), async {
        let mut line = String::new();
        loop {
            line.clear();
            match lines.read_line(&mut line).await {
                Ok(0) | Err(_) => return false,
                Ok(_) if line.trim_end() == READY => return true,
                Ok(_) => {}
            }
        }
    })
    .await;
    match ready {
        Err(_) => {
            guard.kill_tree();
            return Err(timed_out());
        }
        Ok(false) => {
            guard.kill_tree();
            return Err(format!("node exited before running the program: {}", stderr_tail()));
        }
        Ok(true) => {}
    }
    let mut limits = limits;
    limits.memory_bytes = match vm_size(guard.pid()) {
        Some(own) => limits.memory_bytes.saturating_add(own),
        None => libc_rlim_infinity(),
    };
    limits
        .apply_to(guard.pid())
        .map_err(|e| format!("cannot apply resource limits to node: {e}"))?;
    // The program's own output is not needed: drain it.
    let drain = tokio::spawn(async move {
        let mut buf = [0u8; 8192];
        while let Ok(n) = lines.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    });
    if let Some(mut stdin) = guard.child_mut().stdin.take() {
        let _ = stdin.write_all(b"g").await;
        drop(stdin);
    }
    let remaining = deadline.saturating_duration_since(Instant::now());
    let status = guard.wait_timeout(remaining).await;
    drain.abort();
    let Some(status) = status else {
        guard.kill_tree();
        return Err(timed_out());
    };
    if status.code().is_none() {
        use std::os::unix::process::ExitStatusExt;
        return Err(format!(
            "node was killed by signal {} (a resource limit?): {}",
            status.signal().unwrap_or(0),
            stderr_tail()
        ));
    }
    let dead = read_coverage(&cov_dir, &subject.source, &source).map_err(|e| {
        let tail = stderr_tail();
        if tail.is_empty() {
            e
        } else {
            format!("{e}; node said: {tail}")
        }
    })?;
    Ok(Coverage { dead })
}

/// The address space of process `pid` in bytes (`VmSize`), if readable.
fn vm_size(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmSize:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// No limit (`RLIM_INFINITY`): a bare address-space limit would abort node.
fn libc_rlim_infinity() -> u64 {
    u64::MAX
}

/// Decodes `%XX` escapes of a URL path.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|&c| (c as char).to_digit(16));
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (hex(i + 1), hex(i + 2))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads node's coverage files in `dir` and returns the dead ranges of the
/// script `path` whose text is `source`.
fn read_coverage(dir: &Path, path: &Path, source: &str) -> Result<Vec<(crate::edit::Pos, crate::edit::Pos)>, String> {
    let want = path.to_string_lossy();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("node wrote no coverage ({}: {e})", dir.display()))?;
    for entry in entries.flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let Ok(json) = serde_json::from_str::<Json>(&text) else {
            continue;
        };
        let Some(scripts) = json["result"].as_array() else {
            continue;
        };
        for script in scripts {
            let url = script["url"].as_str().unwrap_or("");
            let matches = url == want || url.strip_prefix("file://").map(percent_decode).as_deref() == Some(&*want);
            if !matches {
                continue;
            }
            let mut ranges = Vec::new();
            for f in script["functions"].as_array().into_iter().flatten() {
                for r in f["ranges"].as_array().into_iter().flatten() {
                    let (Some(s), Some(e), Some(c)) =
                        (r["startOffset"].as_u64(), r["endOffset"].as_u64(), r["count"].as_u64())
                    else {
                        continue;
                    };
                    ranges.push((s as usize, e as usize, c));
                }
            }
            return Ok(dead_ranges(source, &ranges));
        }
    }
    Err(format!("node wrote no coverage of {want} (did it run?)"))
}

/// Turns V8's nested `(start, end, count)` ranges (UTF-16 offsets, outer
/// ranges first within each function) into the maximal dead position
/// ranges of `source`: the innermost range covering an offset decides.
pub(crate) fn dead_ranges(source: &str, ranges: &[(usize, usize, u64)]) -> Vec<(crate::edit::Pos, crate::edit::Pos)> {
    // Byte offset of each UTF-16 offset (and of the end).
    let mut byte_at = Vec::with_capacity(source.len() + 1);
    for (i, c) in source.char_indices() {
        for _ in 0..c.len_utf16() {
            byte_at.push(i);
        }
    }
    byte_at.push(source.len());
    let units = byte_at.len() - 1;
    let mut sorted: Vec<(usize, usize, u64)> = ranges
        .iter()
        .map(|&(s, e, c)| (s.min(units), e.min(units), c))
        .collect();
    // Outer before inner: by start, then longer first (stable for equal spans).
    sorted.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
    let mut count: Vec<Option<u64>> = vec![None; units];
    for (s, e, c) in sorted {
        for slot in &mut count[s..e.max(s)] {
            *slot = Some(c);
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < units {
        if count[i] == Some(0) {
            let start = i;
            while i < units && count[i] == Some(0) {
                i += 1;
            }
            out.push((pos_of_offset(source, byte_at[start]), pos_of_offset(source, byte_at[i])));
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::Pos;
    use doppel_core::Language;

    fn subject(dir: &Path, source: &str, prelude: &[&str]) -> Subject {
        let path = dir.join("prog.js");
        std::fs::write(&path, source).unwrap();
        let prelude = prelude
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let p = dir.join(format!("prelude{i}.js"));
                std::fs::write(&p, text).unwrap();
                p
            })
            .collect();
        Subject {
            name: "prog.js".into(),
            language: Language::JavaScript,
            source: path,
            source_name: "prog.js".into(),
            line_count: crate::js::count_lines(source),
            binary: None,
            prelude,
            epilogue: Vec::new(),
            hash: String::new(),
            build: String::new(),
        }
    }

    const PROG: &str = "function used(x) {\n  if (x > 10) {\n    console.log(\"big\");\n    x = 0;\n  }\n  return x;\n}\nfunction unused() {\n  return 1;\n}\nused(helper());\n";

    #[tokio::test]
    async fn never_called_functions_and_never_taken_branches_are_dead() {
        let dir = tempfile::tempdir().unwrap();
        let s = subject(dir.path(), PROG, &["function helper() { return 3; }\n"]);
        let cov = collect(&s, Duration::from_secs(30), Limits::default()).await.unwrap();
        assert!(cov.is_dead(Pos::new(2, 15), Pos::new(5, 4)), "{cov:?}");
        assert!(cov.is_dead(Pos::new(8, 1), Pos::new(10, 2)), "{cov:?}");
        assert!(!cov.is_dead(Pos::new(6, 3), Pos::new(6, 12)), "{cov:?}");
        assert!(!cov.is_dead(Pos::new(11, 1), Pos::new(11, 16)), "{cov:?}");
        assert!(
            !cov.is_dead(Pos::new(2, 3), Pos::new(2, 14)),
            "the if's test ran: {cov:?}"
        );
        // And the removal transformation finds both.
        let t = crate::js::transform::RemoveDeadCode;
        let mut nodes = std::collections::BTreeSet::new();
        for seed in 0..20 {
            let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
            let input = crate::transform::ProgramInput::new(PROG, Some(&cov));
            if let Ok(done) = crate::transform::ProgramTransformation::apply(&t, input, &mut rng) {
                nodes.insert(done.node);
            }
        }
        assert_eq!(
            nodes.into_iter().collect::<Vec<_>>(),
            ["BlockStatement", "FunctionDeclaration"]
        );
    }

    #[tokio::test]
    async fn an_uncaught_exception_still_gives_coverage() {
        let dir = tempfile::tempdir().unwrap();
        let s = subject(
            dir.path(),
            "function f() {\n  return 1;\n}\nthrow new Error('x');\n",
            &[],
        );
        let cov = collect(&s, Duration::from_secs(30), Limits::default()).await.unwrap();
        assert!(cov.is_dead(Pos::new(1, 1), Pos::new(3, 2)), "{cov:?}");
    }

    #[tokio::test]
    async fn a_program_that_never_ends_is_an_error_within_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let s = subject(dir.path(), "while (true) {}\n", &[]);
        let started = Instant::now();
        let e = collect(&s, Duration::from_secs(2), Limits::default())
            .await
            .unwrap_err();
        assert!(e.contains("did not finish"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn utf16_offsets_become_character_columns_and_inner_ranges_win() {
        // "é😀" is 1 + 2 UTF-16 units: `b` is unit 6; `b;` is dead but `;` ran.
        let src = "é😀a;\nb;\n";
        let ranges = [(0, 9, 1), (6, 8, 0), (7, 8, 1)];
        assert_eq!(dead_ranges(src, &ranges), vec![(Pos::new(2, 1), Pos::new(2, 2))]);
        assert_eq!(dead_ranges(src, &[(0, 9, 0)]), vec![(Pos::new(1, 1), Pos::new(3, 1))]);
        assert_eq!(percent_decode("/tmp/a%20b/%C3%A9.js"), "/tmp/a b/é.js");
    }
}
