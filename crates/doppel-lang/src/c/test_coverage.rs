//! Line and branch coverage of a C program on each test of a suite, from
//! one native `gcc -O0 -g --coverage` build and `gcov -b --json-format`
//! after each run: the program spectra of spectrum-based fault
//! localization. The build compiles the prepared source of
//! [`crate::c::wasm`] (same fixes, same line numbers).

use crate::c::run::{RunEnd, run_with_stdin};
use crate::c::wasm::{libc_clash_renames, prepare_source};
use doppel_core::process::{self, Limits, Sandbox};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use tokio::process::Command;

const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// One conditional branch outcome of a line: gcov's `index`-th branch arc
/// on `line` and how often it was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchCount {
    /// 1-based source line.
    pub line: u32,
    /// Position of the arc among the line's arcs (gcov's order).
    pub index: u32,
    /// Times taken.
    pub count: u64,
}

/// Coverage of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunCoverage {
    /// Execution count per line holding code (1-based line -> count).
    pub lines: BTreeMap<u32, u64>,
    /// Every branch arc of the source with its count (taken or not).
    pub branches: Vec<BranchCount>,
    /// The program's standard output on the run.
    pub stdout: Vec<u8>,
    /// How the run ended.
    pub end: RunEnd,
}

impl Default for RunEnd {
    fn default() -> Self {
        RunEnd::Exited(0)
    }
}

impl RunCoverage {
    /// Lines executed at least once.
    pub fn executed_lines(&self) -> impl Iterator<Item = u32> + '_ {
        self.lines.iter().filter(|(_, c)| **c > 0).map(|(l, _)| *l)
    }

    /// Lines that hold a conditional branch and were executed.
    pub fn executed_branch_lines(&self) -> std::collections::BTreeSet<u32> {
        self.branches
            .iter()
            .filter(|b| self.lines.get(&b.line).is_some_and(|c| *c > 0))
            .map(|b| b.line)
            .collect()
    }

    /// Branch arcs taken at least once, as (line, index).
    pub fn taken_branches(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.branches.iter().filter(|b| b.count > 0).map(|b| (b.line, b.index))
    }
}

/// Builds `source` with coverage and runs it once per input of `inputs`
/// (each on stdin, with the command-line arguments `args`, under `limits`
/// and `timeout`), returning one coverage
/// per input in order, or the reason that input gave none (a crash before
/// `exit` writes no data; a timeout).
///
/// Errors: the source cannot be read, gcc fails.
pub async fn coverage_per_input(
    source: &Path,
    inputs: &[Vec<u8>],
    args: &[String],
    timeout: Duration,
    limits: Limits,
) -> Result<Vec<Result<RunCoverage, String>>, String> {
    let raw = crate::c::codeflaws::read_bytes(source)?;
    let text = prepare_source(&String::from_utf8_lossy(&raw));
    let renames = libc_clash_renames(&text).unwrap_or_default();
    let dir = tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let name = "subject.c";
    std::fs::write(dir.path().join(name), &text).map_err(|e| format!("cannot copy the source: {e}"))?;
    let mut built = None;
    for force_include in [true, false] {
        let mut cc = Command::new("gcc");
        cc.current_dir(dir.path()).args(["-O0", "-g", "--coverage", "-w"]);
        if force_include {
            for h in ["stdio.h", "stdlib.h", "string.h", "math.h", "ctype.h"] {
                cc.args(["-include", h]);
            }
        }
        for r in &renames {
            cc.arg(format!("-D{r}=doppel_user_{r}"));
        }
        cc.args(["-o", "prog", name, "-lm"]);
        let r = process::run(cc, TOOL_TIMEOUT, Sandbox::default())
            .await
            .map_err(|e| format!("cannot run gcc: {e}"))?;
        if r.code == Some(0) {
            built = Some(());
            break;
        }
        if !force_include {
            return Err(format!("gcc --coverage failed: {}", r.stderr.trim()));
        }
    }
    built.ok_or("gcc --coverage failed")?;
    let gcda = dir.path().join("prog-subject.gcda");
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        let _ = std::fs::remove_file(&gcda);
        let mut cmd = Command::new(dir.path().join("prog"));
        cmd.current_dir(dir.path()).args(args);
        let run = match run_with_stdin(cmd, input, timeout, limits).await {
            Ok(r) => r,
            Err(e) => {
                out.push(Err(format!("cannot run the program: {e}")));
                continue;
            }
        };
        if run.end == RunEnd::TimedOut {
            out.push(Err(format!("the program did not finish within {timeout:?}")));
            continue;
        }
        if !gcda.is_file() {
            out.push(Err(format!("the run wrote no coverage data ({:?})", run.end)));
            continue;
        }
        let mut gcov = Command::new("gcov");
        gcov.current_dir(dir.path())
            .args(["-b", "--json-format", "--stdout", "prog-subject.gcda"]);
        let g = process::run(gcov, TOOL_TIMEOUT, Sandbox::default())
            .await
            .map_err(|e| format!("cannot run gcov: {e}"))?;
        out.push(parse(&g.stdout, name).map(|(lines, branches)| RunCoverage {
            lines,
            branches,
            stdout: run.stdout,
            end: run.end,
        }));
    }
    Ok(out)
}

type Parsed = (BTreeMap<u32, u64>, Vec<BranchCount>);

fn parse(json: &str, name: &str) -> Result<Parsed, String> {
    let doc: serde_json::Value =
        serde_json::from_str(json.trim()).map_err(|e| format!("gcov output is not JSON: {e}"))?;
    let mut lines = BTreeMap::new();
    let mut branches = Vec::new();
    for f in doc["files"].as_array().ok_or("gcov JSON without \"files\"")? {
        if f["file"].as_str() != Some(name) {
            continue;
        }
        for l in f["lines"].as_array().into_iter().flatten() {
            let Some(n) = l["line_number"].as_u64() else { continue };
            let n = n as u32;
            let c = l["count"].as_u64().unwrap_or(0);
            let e = lines.entry(n).or_insert(0);
            *e = (*e).max(c);
            // A line listed twice (two functions' code): number arcs on.
            let base = branches.iter().filter(|b: &&BranchCount| b.line == n).count() as u32;
            for (i, b) in l["branches"].as_array().into_iter().flatten().enumerate() {
                if b["throw"].as_bool() == Some(true) {
                    continue;
                }
                branches.push(BranchCount {
                    line: n,
                    index: base + i as u32,
                    count: b["count"].as_u64().unwrap_or(0),
                });
            }
        }
    }
    Ok((lines, branches))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn coverage_of_the_bundled_pair_per_test() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/regressions/1-A-bug-10-11/1-A-10.c");
        let inputs = vec![b"3\n0 5 -2\n".to_vec(), b"2\n-1 -4\n".to_vec()];
        let cov = coverage_per_input(&src, &inputs, &[], Duration::from_secs(30), Limits::default())
            .await
            .unwrap();
        let a = cov[0].as_ref().unwrap();
        let b = cov[1].as_ref().unwrap();
        assert_eq!(a.stdout, b"2 5\n");
        assert_eq!(a.lines[&9], 3, "the loop's condition ran for each of 3 numbers");
        assert_eq!(a.lines[&10], 2, "0 and 5 count as positive in P'");
        assert_eq!(b.lines[&10], 0);
        assert!(a.executed_branch_lines().contains(&9));
        assert!(!a.executed_branch_lines().contains(&10), "line 10 holds no branch");
        // Line 9's two arcs: taken twice and once on the first input.
        let mut arcs: Vec<u64> = a.branches.iter().filter(|x| x.line == 9).map(|x| x.count).collect();
        arcs.sort();
        assert_eq!(arcs, [1, 2]);
    }
}
