//! The bug-report bundle of one class of findings: a directory with what
//! GCC and LLVM maintainers ask for in a wrong-debug-value report (compare
//! GCC PR105007, LLVM #55123): a small `a.c` plus the barrier unit, the exact
//! build commands, debugger scripts and their transcripts, the compiler x
//! level matrix where it reproduces, the culprit, and a README in the words
//! of a bug report.
//!
//! A Rust finding (rustc, PLDI'20 section 6.1) gets the same layout with
//! `main.rs` and the barrier crate `opt_me_not.rs` in place of `a.c` and
//! `opt_me_not.c`, and rustc's build commands (the barrier compiled as an
//! rlib at the same level, in a directory per level).
//!
//! Layout written by [`write_bundle`] into `dir`:
//! - `a.c`, `opt_me_not.c`: the program (reduced, or as checked), its line
//!   S marked by the comment `/*DOPPEL_S*/` at its start, and the barrier
//!   translation unit (always linked; the program may call `opt_me_not()`
//!   or not);
//! - `build.sh`: `sh build.sh` builds `prog-O0` and `prog` (the optimized
//!   binary) with the exact commands;
//! - `gdb.cmd`, run as `gdb -q -batch -x gdb.cmd ./prog`; `lldb.cmd`, run as
//!   `lldb-22 -b -s lldb.cmd ./prog`;
//! - `transcript-<debugger>-<level>.txt` for both debuggers on both
//!   binaries (command line, exit status, output);
//! - `matrix.md`, `culprit.json` (when known), `README.md`.

use crate::CheckVerdict;
use crate::bisect::{Culprit, Method};
use crate::reduce::MARKER;
use crate::toolchain::{Compiler, Family};
use doppel_core::process::{self, Sandbox};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

/// One cell of the reproduction matrix: a compiler (`gcc-12.2.0`, as
/// [`Compiler::tag`]), a level (`O2`) and what the check found there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixEntry {
    /// The compiler's name (`gcc`, `clang-19`).
    pub compiler: String,
    /// The optimization level without the dash.
    pub level: String,
    /// The check of the finding's pair in that build.
    pub verdict: CheckVerdict,
}

/// Everything a bundle says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleInput {
    /// The class (dedup signature) this bundle reports, e.g. the culprit.
    pub class: String,
    /// How many findings fall in the class.
    pub findings: u32,
    /// The text of `a.c` (with the marker comment [`crate::reduce::MARKER`]
    /// at the start of S).
    pub source: String,
    /// Whether `source` is a C-Vise reduction (else the original program).
    pub reduced: bool,
    /// The text of `opt_me_not.c`.
    pub barrier_source: String,
    /// S: the 1-based line of `a.c` where the program stops.
    pub line: u32,
    /// v.
    pub variable: String,
    /// The value the program holds there (the -O0 reference).
    pub expected: String,
    /// The value the debugger shows in the optimized binary.
    pub actual: String,
    /// The compiler that produced the wrong debug information.
    pub compiler: Compiler,
    /// The level, without the dash (`O2`).
    pub level: String,
    /// The debugger that showed the wrong value (`gdb` or `lldb`).
    pub debugger: String,
    /// The gdb executable (`gdb`).
    pub gdb: String,
    /// The lldb executable (`lldb-22` here; see [`default_lldb`]).
    pub lldb: String,
    /// The bisected culprit, when there is one.
    pub culprit: Option<Culprit>,
    /// The reproduction matrix: the pair checked at other compilers and levels.
    pub matrix: Vec<MatrixEntry>,
    /// Seconds per build and per debugger session.
    pub timeout_secs: u32,
}

impl BundleInput {
    /// Whether the program is Rust (the compiler is rustc).
    pub fn is_rust(&self) -> bool {
        self.compiler.family == Family::Rustc
    }

    /// The file names of the program and of the barrier: `a.c` and
    /// `opt_me_not.c`, or `main.rs` and `opt_me_not.rs` for Rust.
    pub fn file_names(&self) -> (&'static str, &'static str) {
        if self.is_rust() {
            ("main.rs", crate::rust::BARRIER_CRATE)
        } else {
            ("a.c", crate::augment::BARRIER_FILE)
        }
    }
}

/// The first of `lldb`, `lldb-22` ... `lldb-14` found on `PATH` (`lldb-22`
/// when none is).
pub fn default_lldb() -> String {
    std::iter::once("lldb".to_string())
        .chain((14..=22).rev().map(|v| format!("lldb-{v}")))
        .find(|n| process::which(n).is_some())
        .unwrap_or_else(|| "lldb-22".to_string())
}

/// The compile flags of both builds: `-g -w`, plus Csmith's include
/// directory when the program includes `csmith.h`.
fn build_flags(source: &str) -> Vec<&'static str> {
    let mut f = vec!["-g", "-w"];
    if source.contains("csmith.h") {
        f.push("-I/usr/include/csmith");
    }
    f
}

/// The exact build commands: the reference `prog-O0` and the optimized
/// `prog`, both linking the barrier as a separate translation unit (C), or
/// as a crate of its own compiled at the same level into a directory named
/// after the level (Rust: two commands each, one per line).
pub fn build_commands(input: &BundleInput) -> [String; 2] {
    if input.is_rust() {
        let rustc = &input.compiler.path;
        let build = |level: &str, out: &str| {
            let opt = crate::rust::opt_level(level).unwrap_or("0");
            let common = format!(
                "{rustc} --edition {} -g -C opt-level={opt} -C codegen-units=1",
                crate::rust::EDITION
            );
            format!(
                "mkdir -p {level} && {common} --crate-type=rlib {} --out-dir {level}\n{common} --crate-name main \
                 main.rs --extern opt_me_not={level}/libopt_me_not.rlib --extern lib={level}/libopt_me_not.rlib \
                 -L {level} -o {out}",
                crate::rust::BARRIER_CRATE
            )
        };
        return [build("O0", "prog-O0"), build(&input.level, "prog")];
    }
    let flags = build_flags(&input.source).join(" ");
    let cc = &input.compiler.path;
    [
        format!("{cc} -O0 {flags} a.c opt_me_not.c -o prog-O0"),
        format!("{cc} -{} {flags} a.c opt_me_not.c -o prog", input.level),
    ]
}

/// `build.sh`.
pub fn build_script(input: &BundleInput) -> String {
    let [o0, ox] = build_commands(input);
    format!(
        "#!/bin/sh\n# {}\n# prog-O0: reference build; prog: the -{} build with the wrong debug information.\nset -e\n{o0}\n{ox}\n",
        input.compiler.version, input.level
    )
}

/// `gdb.cmd`: stop at `<file>:S`, print v and the locals, end the session.
pub fn gdb_script(file: &str, line: u32, variable: &str) -> String {
    format!("break {file}:{line}\nrun\nprint {variable}\ninfo locals\nkill\nquit\n")
}

/// `lldb.cmd`: stop at `<file>:S`, print v, end the session.
pub fn lldb_script(file: &str, line: u32, variable: &str) -> String {
    format!("breakpoint set -f {file} -l {line}\nrun\nframe variable {variable}\nquit\n")
}

/// A debugger run on one of the bundle's binaries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    /// `gdb` or `lldb`.
    pub debugger: String,
    /// `O0` or the bundle's level.
    pub level: String,
    /// The command line, as a user would type it in the bundle directory.
    pub command: String,
    /// stdout then stderr.
    pub output: String,
    /// The exit status, when the command exited.
    pub exit_code: Option<i32>,
    /// Whether the command ran past its timeout (and was killed).
    pub timed_out: bool,
    /// The file it is saved in (`transcript-gdb-O2.txt`).
    pub file: String,
}

/// Runs `gdb.cmd` and `lldb.cmd` on `prog-O0` and `prog` in `dir` (built
/// already), each under `timeout`, and saves each transcript as
/// `transcript-<debugger>-<level>.txt`. A debugger that is not installed
/// gets a transcript saying so.
///
/// Errors: a transcript file cannot be written.
pub async fn run_transcripts(dir: &Path, input: &BundleInput, timeout: Duration) -> Result<Vec<Transcript>, String> {
    let mut out = Vec::new();
    for (dbg, exe) in [("gdb", input.gdb.as_str()), ("lldb", input.lldb.as_str())] {
        for (level, prog) in [("O0", "./prog-O0"), (input.level.as_str(), "./prog")] {
            let args: Vec<&str> = if dbg == "gdb" {
                vec!["-q", "-batch", "-x", "gdb.cmd", prog]
            } else {
                vec!["-b", "-s", "lldb.cmd", prog]
            };
            let command = format!("{exe} {}", args.join(" "));
            let file = format!("transcript-{dbg}-{level}.txt");
            let t = if process::which(exe).is_none() {
                Transcript {
                    debugger: dbg.into(),
                    level: level.into(),
                    command: command.clone(),
                    output: format!("{exe} is not installed"),
                    exit_code: None,
                    timed_out: false,
                    file: file.clone(),
                }
            } else {
                let mut cmd = Command::new(exe);
                cmd.args(&args).current_dir(dir);
                let done = process::run(cmd, timeout, Sandbox::NONE)
                    .await
                    .map_err(|e| format!("cannot run {exe}: {e}"))?;
                let mut output = done.stdout;
                if !done.stderr.is_empty() {
                    output.push_str(&done.stderr);
                }
                Transcript {
                    debugger: dbg.into(),
                    level: level.into(),
                    command: command.clone(),
                    output,
                    exit_code: done.code,
                    timed_out: done.timed_out,
                    file: file.clone(),
                }
            };
            let status = if t.timed_out {
                format!("timed out after {} s", timeout.as_secs())
            } else {
                exit_text(t.exit_code)
            };
            let text = format!("$ {}\n# {status}\n{}", t.command, t.output);
            std::fs::write(dir.join(&file), text).map_err(|e| format!("cannot write {file}: {e}"))?;
            out.push(t);
        }
    }
    Ok(out)
}

/// `exit status 0`, or `killed by a signal`.
fn exit_text(code: Option<i32>) -> String {
    code.map_or_else(|| "killed by a signal".to_string(), |c| format!("exit status {c}"))
}

/// A short cell text for a verdict.
fn cell(v: &CheckVerdict) -> String {
    match v {
        CheckVerdict::Match => "ok".into(),
        CheckVerdict::WrongValue { actual, .. } => format!("**wrong** ({actual})"),
        CheckVerdict::OptimizedOut => "optimized out".into(),
        CheckVerdict::NotAvailable { .. } => "not available".into(),
        CheckVerdict::NotHit { .. } => "not hit".into(),
        CheckVerdict::LaterHit { hit, .. } => format!("paused at execution {hit}"),
        CheckVerdict::NotComparable { .. } => "not comparable".into(),
        CheckVerdict::DebuggerFailure { .. } => "**debugger failure**".into(),
    }
}

/// `matrix.md`: a compiler x level table (rows and columns in order of first
/// appearance; the last entry wins for a repeated cell; `-` where not run).
pub fn matrix_markdown(entries: &[MatrixEntry], variable: &str, expected: &str) -> String {
    let mut compilers: Vec<&str> = Vec::new();
    let mut levels: Vec<&str> = Vec::new();
    for e in entries {
        if !compilers.contains(&e.compiler.as_str()) {
            compilers.push(&e.compiler);
        }
        if !levels.contains(&e.level.as_str()) {
            levels.push(&e.level);
        }
    }
    let mut s =
        format!("# Where it reproduces\n\nValue of `{variable}` shown by the debugger (expected {expected}).\n\n");
    if entries.is_empty() {
        s.push_str("No other compiler or level was checked.\n");
        return s;
    }
    let _ = writeln!(
        s,
        "| compiler | {} |",
        levels.iter().map(|l| format!("-{l}")).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(s, "|---|{}", "---|".repeat(levels.len()));
    for c in &compilers {
        let cells: Vec<String> = levels
            .iter()
            .map(|l| {
                entries
                    .iter()
                    .rev()
                    .find(|e| e.compiler == *c && e.level == *l)
                    .map(|e| cell(&e.verdict))
                    .unwrap_or_else(|| "-".into())
            })
            .collect();
        let _ = writeln!(s, "| {c} | {} |", cells.join(" | "));
    }
    s
}

/// The culprit in one sentence.
fn culprit_sentence(c: &Culprit, family: Family) -> String {
    let switch = |n: u32| crate::bisect::bisect_flags(family, i64::from(n)).join(" ");
    match c.method {
        Method::OptBisectLimit => match (&c.pass, c.limit) {
            (Some(p), Some(0)) if p == crate::bisect::NOT_BISECTABLE => format!(
                "The wrong value shows even with `{}` (no optional pass runs): {p} ({} checks).",
                switch(0),
                c.checks
            ),
            (Some(p), Some(n)) => format!(
                "`{}` is the smallest limit that shows the wrong value; pass {n} is **{p}**{} ({} checks).",
                switch(n),
                c.target.as_deref().map(|t| format!(" on {t}")).unwrap_or_default(),
                c.checks
            ),
            _ => format!("opt-bisect did not name a pass ({} checks).", c.checks),
        },
        Method::GccFlagRemoval | Method::GccFlagHalving => {
            let how = if c.method == Method::GccFlagRemoval {
                "turning each enabled `-f` flag off in turn"
            } else {
                "halving the set of enabled `-f` flags, each culprit confirmed alone"
            };
            if c.flags.is_empty() {
                format!(
                    "No single `-fno-<flag>` makes the value right ({how}; {} flags tried, {} checks).",
                    c.flags_tried, c.checks
                )
            } else {
                let fl: Vec<String> = c
                    .flags
                    .iter()
                    .map(|f| format!("`{}`", crate::bisect::negate_flag(f)))
                    .collect();
                format!(
                    "The debugger shows the right value with {} ({how}; {} flags tried, {} checks).",
                    fl.join(" or with "),
                    c.flags_tried,
                    c.checks
                )
            }
        }
    }
}

/// The first line of `exe --version` (`GNU gdb (Debian 13.1-3) 13.1`), or
/// `exe (not installed)`.
async fn tool_version(exe: &str) -> String {
    if process::which(exe).is_none() {
        return format!("{exe} (not installed)");
    }
    let mut cmd = Command::new(exe);
    cmd.arg("--version");
    match process::run(cmd, Duration::from_secs(20), Sandbox::NONE).await {
        Ok(d) => d.stdout.lines().next().unwrap_or(exe).trim().to_string(),
        Err(_) => exe.to_string(),
    }
}

/// `README.md`: the bug report.
pub fn readme(input: &BundleInput, transcripts: &[Transcript], gdb_version: &str, lldb_version: &str) -> String {
    let v = &input.variable;
    let l = &input.level;
    // The marked line (the physical line, which `#line` may renumber), else
    // line S of the file.
    let line_text = input
        .source
        .lines()
        .find(|t| t.contains(MARKER))
        .or_else(|| input.source.lines().nth(input.line.saturating_sub(1) as usize))
        .unwrap_or("")
        .replace(MARKER, "");
    let line_text = line_text.trim();
    let (file, barrier) = input.file_names();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Wrong value of `{v}` at {file}:{} with {} -{l} -g ({})\n",
        input.line,
        input.compiler.tag(),
        input.debugger
    );
    let (witness, barrier_text) = if input.is_rust() {
        (
            "(read in GDB; safe Rust has no undefined behaviour, so the -O0 value is the program's)".to_string(),
            format!(
                "`{barrier}` is a crate of its own defining `opt_me_not()`, a never-inlined function with an \
                 empty `asm!`; it is linked into both builds (harmless when `{file}` does not call it; where it \
                 does, the call only keeps a statement on its line)."
            ),
        )
    } else {
        (
            format!(", and so does a `printf` of `{v}` inserted at that line"),
            format!(
                "`{barrier}` defines `opt_me_not()`, an empty function with a compiler memory barrier, compiled \
                 as a translation unit of its own and always linked (harmless when `{file}` does not call it; \
                 where it does, the call only keeps a statement on its line)."
            ),
        )
    };
    let sep = if input.is_rust() { " " } else { "" };
    let _ = writeln!(
        s,
        "When the program stops at line {} of `{file}` (`{line_text}`), the debugger shows `{v} = {}`; the \
         program holds `{v} = {}` there. The -O0 build shows {}{sep}{witness}. The line is marked by the comment \
         `{MARKER}` at its start (a comment: it changes neither the code nor any line number). {barrier_text}\n",
        input.line, input.actual, input.expected, input.expected
    );
    let _ = writeln!(s, "## Reproduce\n\n```sh\nsh build.sh");
    let dbg_cmd = if input.debugger == "lldb" {
        format!("{} -b -s lldb.cmd ./prog", input.lldb)
    } else {
        format!("{} -q -batch -x gdb.cmd ./prog", input.gdb)
    };
    let _ = writeln!(s, "{dbg_cmd}\n```\n");
    let [o0, ox] = build_commands(input);
    let _ = writeln!(s, "`build.sh` runs:\n\n```sh\n{o0}\n{ox}\n```\n");
    let _ = writeln!(s, "## Expected\n\n`{v} = {}` (as in the -O0 build).\n", input.expected);
    let _ = writeln!(s, "## Actual\n\n`{v} = {}`.\n", input.actual);
    if let Some(t) = transcripts
        .iter()
        .find(|t| t.debugger == input.debugger && t.level == *l)
    {
        let _ = writeln!(
            s,
            "Transcript (`{}`):\n\n```\n$ {}\n{}```\n",
            t.file, t.command, t.output
        );
    }
    let _ = writeln!(s, "## Versions\n");
    let _ = writeln!(s, "- compiler: {} (`{}`)", input.compiler.version, input.compiler.path);
    let _ = writeln!(s, "- gdb: {gdb_version}");
    let _ = writeln!(s, "- lldb: {lldb_version}");
    let _ = writeln!(s, "- target: x86_64-linux-gnu (Debian 12)\n");
    let _ = writeln!(s, "## Where it reproduces\n");
    s.push_str(&matrix_markdown(&input.matrix, v, &input.expected).replace("# Where it reproduces\n\n", ""));
    s.push('\n');
    let _ = writeln!(s, "## Culprit\n");
    match &input.culprit {
        Some(c) => {
            let _ = writeln!(s, "{}\n", culprit_sentence(c, input.compiler.family));
        }
        None => s.push_str("Not bisected.\n\n"),
    }
    let _ = writeln!(s, "## Files\n");
    let _ = writeln!(
        s,
        "- `{file}` ({}), `{barrier}`, `build.sh`\n- `gdb.cmd`, `lldb.cmd` and `transcript-*.txt` (both \
         debuggers, -O0 and -{l})\n- `matrix.md`{}\n",
        if input.reduced {
            "reduced with C-Vise"
        } else {
            "not reduced"
        },
        if input.culprit.is_some() {
            ", `culprit.json`"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "Found by doppel (debug-information validation after Li et al., PLDI 2020); class `{}`, {} finding(s).",
        input.class, input.findings
    );
    s
}

/// Writes the bundle of `input` into `dir` (created if needed): the sources,
/// `build.sh`, the debugger scripts, runs the build and both debuggers on
/// both binaries (each under `input.timeout_secs`), then `matrix.md`,
/// `culprit.json` and `README.md`. A failed build is reported in
/// `build.log` and the README still written (transcripts then say the
/// program is missing).
///
/// Errors: `dir` or a file cannot be written; `sh` cannot be started.
pub async fn write_bundle(input: &BundleInput, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, text: &str| -> Result<PathBuf, String> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        Ok(p)
    };
    let (file, barrier) = input.file_names();
    write(file, &input.source)?;
    write(barrier, &input.barrier_source)?;
    write("build.sh", &build_script(input))?;
    write("gdb.cmd", &gdb_script(file, input.line, &input.variable))?;
    write("lldb.cmd", &lldb_script(file, input.line, &input.variable))?;
    let timeout = Duration::from_secs(u64::from(input.timeout_secs.max(1)));

    let mut cmd = Command::new("sh");
    cmd.arg("build.sh").current_dir(dir);
    let built = process::run(cmd, timeout * 2, Sandbox::NONE)
        .await
        .map_err(|e| format!("cannot run sh: {e}"))?;
    write(
        "build.log",
        &format!(
            "{}{}\n{}{}",
            exit_text(built.code),
            if built.timed_out { " (timed out)" } else { "" },
            built.stdout,
            built.stderr
        ),
    )?;

    let transcripts = run_transcripts(dir, input, timeout).await?;
    write(
        "matrix.md",
        &matrix_markdown(&input.matrix, &input.variable, &input.expected),
    )?;
    if let Some(c) = &input.culprit {
        let json = serde_json::to_string_pretty(c).map_err(|e| format!("culprit: {e}"))?;
        write("culprit.json", &json)?;
    }
    let gdb_version = tool_version(&input.gdb).await;
    let lldb_version = tool_version(&input.lldb).await;
    write("README.md", &readme(input, &transcripts, &gdb_version, &lldb_version))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::BARRIER_SOURCE;

    /// GCC 12 -O2 puts the breakpoint for line 8 before the loop's result is
    /// in s: gdb prints 0 (observed with gdb 13.1), the program holds 135.
    const PROGRAM: &str = "#include <stdio.h>\nvoid opt_me_not(void);\nint g;\nint main(void) {\n  int i, s = 0;\n  for (i = 0; i < 10; i++)\n    s += i * 3;\n/*DOPPEL_S*/  opt_me_not(); g = s;\n  printf(\"%d\\n\", g);\n  return 0;\n}\n";

    fn entries() -> Vec<MatrixEntry> {
        vec![
            MatrixEntry {
                compiler: "gcc-12.2.0".into(),
                level: "O2".into(),
                verdict: CheckVerdict::WrongValue {
                    expected: "135".into(),
                    actual: "0".into(),
                },
            },
            MatrixEntry {
                compiler: "gcc-12.2.0".into(),
                level: "O1".into(),
                verdict: CheckVerdict::Match,
            },
            MatrixEntry {
                compiler: "clang-19.1.7".into(),
                level: "O2".into(),
                verdict: CheckVerdict::OptimizedOut,
            },
        ]
    }

    #[test]
    fn matrix_is_a_compiler_by_level_table() {
        let m = matrix_markdown(&entries(), "s", "135");
        assert!(m.contains("| compiler | -O2 | -O1 |"), "{m}");
        assert!(m.contains("| gcc-12.2.0 | **wrong** (0) | ok |"), "{m}");
        assert!(m.contains("| clang-19.1.7 | optimized out | - |"), "{m}");
    }

    #[test]
    fn debugger_scripts_are_the_documented_commands() {
        assert_eq!(
            gdb_script("a.c", 8, "s"),
            "break a.c:8\nrun\nprint s\ninfo locals\nkill\nquit\n"
        );
        assert_eq!(
            lldb_script("a.c", 8, "s"),
            "breakpoint set -f a.c -l 8\nrun\nframe variable s\nquit\n"
        );
    }

    #[tokio::test]
    async fn bundle_of_a_tiny_program_runs_under_real_gdb_and_lldb() {
        let gcc = Compiler::discover("gcc")
            .await
            .expect("the test needs gcc (scripts/deps/apt.txt)");
        let lldb = default_lldb();
        let input = BundleInput {
            class: "gcc:-ftree-x".into(),
            findings: 1,
            source: PROGRAM.into(),
            reduced: false,
            barrier_source: BARRIER_SOURCE.into(),
            line: 8,
            variable: "s".into(),
            expected: "135".into(),
            actual: "0".into(),
            compiler: gcc,
            level: "O2".into(),
            debugger: "gdb".into(),
            gdb: "gdb".into(),
            lldb: lldb.clone(),
            culprit: Some(Culprit {
                method: Method::GccFlagRemoval,
                pass: None,
                target: None,
                limit: None,
                passes: None,
                flags: vec!["-ftree-x".into()],
                flags_tried: 134,
                checks: 135,
            }),
            matrix: entries(),
            timeout_secs: 60,
        };
        let dir = tempfile::tempdir().unwrap();
        write_bundle(&input, dir.path()).await.unwrap();
        let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
        for f in [
            "a.c",
            "opt_me_not.c",
            "build.sh",
            "gdb.cmd",
            "lldb.cmd",
            "matrix.md",
            "culprit.json",
            "README.md",
        ] {
            assert!(dir.path().join(f).is_file(), "{f} missing");
        }
        assert!(
            read("build.log").starts_with("exit status 0\n"),
            "{}",
            read("build.log")
        );
        if process::which("gdb").is_some() {
            let o0 = read("transcript-gdb-O0.txt");
            assert!(
                o0.contains("Breakpoint 1, main () at a.c:8") && o0.contains("$1 = 135"),
                "{o0}"
            );
            let o2 = read("transcript-gdb-O2.txt");
            assert!(o2.contains("$1 = "), "{o2}");
            assert!(o2.contains("s = "), "info locals: {o2}");
        }
        if process::which(&lldb).is_some() {
            let o0 = read("transcript-lldb-O0.txt");
            assert!(o0.contains("(int) s = 135"), "{o0}");
            let o2 = read("transcript-lldb-O2.txt");
            assert!(o2.contains("frame variable s") && o2.contains(") s = "), "{o2}");
        }
        let readme = read("README.md");
        assert!(readme.contains("# Wrong value of `s` at a.c:8 with gcc-"), "{readme}");
        assert!(readme.contains("(`opt_me_not(); g = s;`)"), "{readme}");
        assert!(readme.contains("comment `/*DOPPEL_S*/`"), "{readme}");
        assert!(!readme.contains("there only to keep"), "{readme}");
        assert!(readme.contains("`-fno-tree-x`"), "{readme}");
        assert!(readme.contains("GNU gdb"), "{readme}");
        assert!(readme.contains("gcc -O2 -g -w a.c opt_me_not.c -o prog"), "{readme}");
        assert!(read("build.sh").contains(" -O0 -g -w a.c opt_me_not.c -o prog-O0\n"));
    }
}
