//! Shadow validation (PLDI 2020, section 4.2), batched: one shadow program
//! for all candidate pairs of a program instead of one per pair.
//!
//! The shadow program P1 prints, at the first execution of each line s and
//! before the statement there, the value of every candidate variable v of s:
//!
//! ```text
//! @@doppel <s> <v> <value>
//! ```
//!
//! on standard output. The printing code is written at column 1 of s, on the
//! same line ([`shadow_source`]): line numbers do not change, so the reports
//! of the dynamic checkers map back to lines of P. Printing v is well-formed
//! iff P1 is free of undefined behaviour; Debian 12 has no CompCert, so P1 is
//! checked (prior-art notes, section 6) by
//! - a clang MemorySanitizer build with `-fsanitize-recover=memory`: every
//!   read of an uninitialized value is reported, at the column of the
//!   offending `printf`, and the run goes on;
//! - valgrind memcheck on a `gcc -O0 -g` build (optional, on by default),
//!   which also catches what MSan's eager checks miss.
//!
//! A report whose innermost frame in P1 is at an instrumented line rejects
//! the pair at the reported column (MSan) or every pair of the line
//! (memcheck, which reports lines only, unless an MSan report on the same
//! line already explains it). The remaining pairs are checked again in a new
//! round, so the references always come from a run without any report. A
//! report outside the instrumented code means P itself has undefined
//! behaviour: every pair is rejected. A report that names no line of P at
//! all (an unsymbolized stack: the sanitizer runtime found no
//! `llvm-symbolizer` that reads its clang's DWARF) cannot be attributed:
//! that is a [`ShadowError::Environment`], never a rejection of the pairs.
//! The MSan runs are pointed at the symbolizer of their clang
//! ([`wellformed::symbolizer_for`]).

use crate::wellformed::{
    self, REPORT_EXIT_CODE, run_program, sanitizer_clang, truncate, valgrind_command, with_symbolizer,
};
use crate::{Pair, Reference};
use doppel_core::process::{Completed, Limits};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

mod reports;
mod source;
use reports::*;
use source::*;
pub use source::{MARKER, MAX_ARRAY_ELEMENTS, PRINTF_PROTOTYPE, shadow_source};

#[cfg(test)]
mod tests;

/// How shadow programs are built and checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowConfig {
    /// Clang with MemorySanitizer runtimes (`libclang-rt-N-dev`).
    pub clang: String,
    /// GCC for the memcheck build.
    pub gcc: String,
    /// Flags added to both builds (`-I/usr/include/csmith`).
    pub extra_flags: Vec<String>,
    /// Wall-clock limit of one MSan run.
    pub timeout: Duration,
    /// Wall-clock limit of one valgrind run.
    pub valgrind_timeout: Duration,
    /// Limits of every run (the memory limit is lifted for MSan).
    pub limits: Limits,
    /// Also check with valgrind memcheck on a gcc -O0 build.
    pub valgrind: bool,
    /// Most rounds of check-reject-recheck before giving up on the
    /// remaining pairs.
    pub max_rounds: u32,
    /// The `llvm-symbolizer` of the MSan runs; `None`: the one matching
    /// [`ShadowConfig::clang`] ([`wellformed::symbolizer_for`]).
    #[serde(default)]
    pub symbolizer: Option<PathBuf>,
}

impl Default for ShadowConfig {
    fn default() -> Self {
        let w = wellformed::CheckConfig::default();
        Self {
            clang: sanitizer_clang(),
            gcc: w.gcc,
            extra_flags: w.extra_flags,
            timeout: Duration::from_secs(20),
            valgrind_timeout: w.valgrind_timeout,
            limits: w.limits,
            valgrind: true,
            max_rounds: 4,
            symbolizer: None,
        }
    }
}

/// Why [`validate`] judged no pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShadowError {
    /// The program cannot be shadowed: it cannot be read, or it does not
    /// compile (at a line without printing code). The program is rejected.
    Program(String),
    /// The machine cannot validate: a compiler, the symbolizer or a checker
    /// is missing or cannot run, or a checker's report names no line of the
    /// program (so it cannot be told from the program's own undefined
    /// behaviour). An error of the campaign: no pair of any program can be
    /// judged until it is fixed.
    Environment(String),
}

impl std::fmt::Display for ShadowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShadowError::Program(m) | ShadowError::Environment(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ShadowError {}

/// The outcome of [`validate`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShadowResult {
    /// One reference per accepted pair, in the order of the input pairs.
    pub references: Vec<Reference>,
    /// Pairs whose printing is not well-formed (or whose line was never
    /// reached, or that did not compile), with the reason.
    pub rejected: Vec<(Pair, String)>,
    /// Pairs not printed at all because of their kind (structs, other
    /// types, arrays of non-integers), with the reason.
    pub skipped: Vec<(Pair, String)>,
    /// Rounds of building and checking done.
    pub rounds: u32,
    /// Wall-clock seconds spent.
    pub seconds: f64,
}

/// Fills [`Reference::later`] of `references`: one more run of the program
/// (gcc -O0, limited and timed out like the others) printing v at the first
/// [`crate::REFERENCE_HITS`] executions of s. These values are not
/// validated (a later execution may read what the first did not): they are
/// only used to recognize a debugger that paused at a later execution
/// ([`crate::CheckVerdict::LaterHit`]), never as references. A failing run
/// leaves them empty, which only turns that recognition off.
async fn fill_later(text: &str, references: &mut [(usize, Reference)], common: &[String], config: &ShadowConfig) {
    let pairs: Vec<Pair> = references.iter().map(|(_, r)| r.pair.clone()).collect();
    let (by_line, _) = plan(&pairs, crate::REFERENCE_HITS);
    let result = async {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let src = dir.path().join("later.c");
        std::fs::write(&src, build(text, &by_line)).map_err(|e| e.to_string())?;
        let exe = dir.path().join("later");
        let mut cmd = Command::new(&config.gcc);
        cmd.args(common).arg(&src).arg("-o").arg(&exe);
        let done = doppel_core::process::run(cmd, wellformed::COMPILE_TIMEOUT, Default::default())
            .await
            .map_err(|e| e.to_string())?;
        if done.code != Some(0) {
            return Err(format!("the build failed: {}", truncate(done.stderr.trim(), 200)));
        }
        let run = run_program(Command::new(&exe), config.timeout, config.limits)
            .await
            .map_err(|e| e.to_string())?;
        if run.timed_out || run.signal.is_some() {
            return Err("the run did not end normally".to_string());
        }
        Ok(parse_all_values(&run.stdout))
    }
    .await;
    match result {
        Ok(values) => {
            for (_, r) in references.iter_mut() {
                if let Some(all) = values.get(&(r.pair.line, r.pair.variable.name.clone()))
                    && all.first() == Some(&r.value)
                {
                    r.later = all[1..].to_vec();
                }
            }
        }
        Err(e) => tracing::warn!("later executions of the pairs' lines not recorded: {e}"),
    }
}

/// Lines of `file` with a compile error (`file:12:5: error: ...`).
fn error_lines(stderr: &str, file: &str) -> BTreeSet<u32> {
    stderr
        .lines()
        .filter(|l| l.contains(": error:"))
        .filter_map(|l| {
            let loc = l.split(": error:").next()?;
            parse_location(loc, file).map(|s| s.line)
        })
        .collect()
}

/// Shadow validation of `pairs` of the program `source` (a C file; its
/// directory is added to the include path). Builds and runs the shadow
/// program in a temporary directory, in rounds (see the module
/// documentation), each run limited, sandboxed and timed out.
///
/// Returns the references (values as [`Reference::value`] describes), the
/// rejected pairs with the checker's report, and the skipped pairs.
///
/// Errors: [`ShadowError::Program`] when the source cannot be read or a
/// shadow build fails at a line that carries no printing code (the program
/// itself does not compile); [`ShadowError::Environment`] when the
/// symbolizer is missing, a compiler or checker cannot be started, or a
/// report names no line of the program.
pub async fn validate(source: &Path, pairs: &[Pair], config: &ShadowConfig) -> Result<ShadowResult, ShadowError> {
    use ShadowError::Environment as Env;
    let start = std::time::Instant::now();
    let text = std::fs::read_to_string(source)
        .map_err(|e| ShadowError::Program(format!("cannot read {}: {e}", source.display())))?;
    let symbolizer = wellformed::resolve_symbolizer(config.symbolizer.as_deref(), &config.clang).map_err(Env)?;
    let dir = tempfile::tempdir().map_err(|e| Env(format!("no temporary directory: {e}")))?;
    let file = "shadow.c";
    let shadow_path = dir.path().join(file);
    let mut include = Vec::new();
    if let Some(parent) = source.parent().filter(|p| !p.as_os_str().is_empty()) {
        include.push(format!("-I{}", parent.display()));
    }

    let (mut by_line, skipped) = plan(pairs, 1);
    let mut rejected: BTreeMap<usize, String> = BTreeMap::new();
    let mut rounds = 0;
    let values = loop {
        if by_line.is_empty() {
            break HashMap::new();
        }
        if rounds == config.max_rounds {
            for lc in by_line.values() {
                for &(i, _, _) in &lc.spans {
                    rejected.insert(i, format!("reports remain after {rounds} rounds"));
                }
            }
            break HashMap::new();
        }
        rounds += 1;
        std::fs::write(&shadow_path, build(&text, &by_line)).map_err(|e| Env(format!("cannot write shadow: {e}")))?;
        let instrumented: BTreeSet<u32> = by_line.keys().copied().collect();
        let mut common: Vec<String> = vec!["-O0".into(), "-g".into(), "-w".into()];
        common.extend(config.extra_flags.iter().cloned());
        common.extend(include.iter().cloned());

        // MSan build; a compile error at an instrumented line rejects that line.
        let msan_exe = dir.path().join("shadow-msan");
        let mut flags = common.clone();
        flags.extend(
            [
                "-fsanitize=memory",
                "-fsanitize-recover=memory",
                "-fno-omit-frame-pointer",
            ]
            .map(String::from),
        );
        if let Err(lines) =
            build_or_error_lines(&config.clang, &flags, &shadow_path, &msan_exe, file, &instrumented).await?
        {
            reject_lines(
                &mut by_line,
                &mut rejected,
                &lines,
                "the printing code does not compile",
            );
            continue;
        }
        let mut msan_cmd = Command::new(&msan_exe);
        with_symbolizer(&mut msan_cmd, &symbolizer);
        let msan = run_program(msan_cmd, config.timeout, config.limits.without_memory_limit())
            .await
            .map_err(|e| Env(format!("cannot run the MSan build: {e}")))?;
        let msan_reports = sanitizer_reports(&msan.stderr, file);
        if let Some(r) = msan_reports.iter().find(|r| r.site.is_none()) {
            return Err(Env(format!(
                "MSan reported \"{}\" with no line of the program in its stack, so it cannot be told from \
                 undefined behaviour of the program itself; is {} the llvm-symbolizer of {}? Report: {}",
                r.what,
                symbolizer.display(),
                config.clang,
                truncate(msan.stderr.trim(), 600)
            )));
        }
        if let Some(why) = run_failure(&msan, &msan_reports, "MSan") {
            reject_all(&mut by_line, &mut rejected, &why);
            break HashMap::new();
        }
        let mut vg_reports = Vec::new();
        let mut vg_values = None;
        if config.valgrind {
            let gexe = dir.path().join("shadow-gcc");
            if let Err(lines) =
                build_or_error_lines(&config.gcc, &common, &shadow_path, &gexe, file, &instrumented).await?
            {
                reject_lines(
                    &mut by_line,
                    &mut rejected,
                    &lines,
                    "the printing code does not compile with gcc",
                );
                continue;
            }
            let vg = run_program(valgrind_command(&gexe), config.valgrind_timeout, config.limits)
                .await
                .map_err(|e| Env(format!("cannot run valgrind: {e}")))?;
            vg_reports = valgrind_reports(&vg.stderr, file);
            if let Some(r) = vg_reports.iter().find(|r| r.site.is_none()) {
                return Err(Env(format!(
                    "memcheck reported \"{}\" with no line of the program in its stack, so it cannot be told \
                     from undefined behaviour of the program itself (is the gcc build without -g?). Report: {}",
                    r.what,
                    truncate(vg.stderr.trim(), 600)
                )));
            }
            if let Some(why) = run_failure(&vg, &vg_reports, "memcheck") {
                reject_all(&mut by_line, &mut rejected, &why);
                break HashMap::new();
            }
            vg_values = Some(parse_values(&vg.stdout));
        }
        if msan_reports.is_empty() && vg_reports.is_empty() {
            let values = parse_values(&msan.stdout);
            if let Some(vg_values) = vg_values {
                // Both builds must print the same value for a pair.
                let mut disagree = Vec::new();
                for (s, lc) in &by_line {
                    for &(i, _, _) in &lc.spans {
                        let key = (*s, pairs[i].variable.name.clone());
                        if values.get(&key) != vg_values.get(&key) {
                            disagree.push((
                                i,
                                format!(
                                    "clang and gcc builds disagree: {:?} vs {:?}",
                                    values.get(&key),
                                    vg_values.get(&key)
                                ),
                            ));
                        }
                    }
                }
                if !disagree.is_empty() {
                    for (i, why) in disagree {
                        rejected.insert(i, why);
                        remove_pair(&mut by_line, i);
                    }
                    continue;
                }
            }
            break values;
        }
        // Attribute the reports; any report outside the printing code means
        // the program itself has undefined behaviour.
        let mut explained_lines = BTreeSet::new();
        for r in &msan_reports {
            let hit = r.site.and_then(|site| {
                let lc = by_line.get(&site.line)?;
                lc.spans
                    .iter()
                    .find(|&&(_, a, b)| site.col >= a && site.col < b)
                    .map(|&(i, _, _)| (site.line, i))
            });
            match hit {
                Some((line, i)) => {
                    rejected.insert(i, format!("MSan: {}", r.what));
                    explained_lines.insert(line);
                }
                // In the guard of the printing code (or no column): the line.
                None if r.site.is_some_and(|s| {
                    by_line
                        .get(&s.line)
                        .is_some_and(|lc| s.col == 0 || s.col <= lc.text.len())
                }) =>
                {
                    let s = r.site.expect("checked").line;
                    reject_lines(
                        &mut by_line,
                        &mut rejected,
                        &BTreeSet::from([s]),
                        &format!("MSan: {}", r.what),
                    );
                }
                None => {
                    let why = format!("the program itself has undefined behaviour (MSan: {}{})", r.what, at(r));
                    reject_all(&mut by_line, &mut rejected, &why);
                }
            }
        }
        for r in &vg_reports {
            match r.site {
                Some(site) if explained_lines.contains(&site.line) => {}
                Some(site) if by_line.contains_key(&site.line) => {
                    reject_lines(
                        &mut by_line,
                        &mut rejected,
                        &BTreeSet::from([site.line]),
                        &format!("memcheck: {}", r.what),
                    );
                }
                _ => {
                    let why = format!(
                        "the program itself has undefined behaviour (memcheck: {}{})",
                        r.what,
                        at(r)
                    );
                    reject_all(&mut by_line, &mut rejected, &why);
                }
            }
        }
        let gone: Vec<usize> = rejected.keys().copied().collect();
        for i in gone {
            remove_pair(&mut by_line, i);
        }
    };

    let mut references = Vec::new();
    let mut not_reached = Vec::new();
    for lc in by_line.values() {
        for &(i, _, _) in &lc.spans {
            let p = &pairs[i];
            match values.get(&(p.line, p.variable.name.clone())) {
                Some(v) => references.push((i, Reference::new(p.clone(), v.clone()))),
                None => not_reached.push(i),
            }
        }
    }
    for i in not_reached {
        rejected.insert(i, "line not reached: nothing printed".into());
    }
    if !references.is_empty() {
        let mut common: Vec<String> = vec!["-O0".into(), "-g".into(), "-w".into()];
        common.extend(config.extra_flags.iter().cloned());
        common.extend(include.iter().cloned());
        fill_later(&text, &mut references, &common, config).await;
    }
    references.sort_by_key(|(i, _)| *i);
    Ok(ShadowResult {
        references: references.into_iter().map(|(_, r)| r).collect(),
        rejected: rejected.into_iter().map(|(i, why)| (pairs[i].clone(), why)).collect(),
        skipped,
        rounds,
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn at(r: &Report) -> String {
    r.site.map(|s| format!(" at line {}", s.line)).unwrap_or_default()
}

/// Builds the shadow program. `Ok(Err(lines))`: the build failed with
/// errors at these lines of the shadow file, all of which carry printing
/// code (the caller rejects their pairs). `Err`: it failed anywhere else
/// ([`ShadowError::Program`]), or the compiler could not be run
/// ([`ShadowError::Environment`]).
async fn build_or_error_lines(
    compiler: &str,
    flags: &[String],
    src: &Path,
    out: &Path,
    file: &str,
    instrumented: &BTreeSet<u32>,
) -> Result<Result<(), BTreeSet<u32>>, ShadowError> {
    let mut cmd = Command::new(compiler);
    cmd.args(flags).arg(src).arg("-o").arg(out);
    let done = doppel_core::process::run(cmd, wellformed::COMPILE_TIMEOUT, Default::default())
        .await
        .map_err(|e| ShadowError::Environment(format!("cannot run {compiler}: {e}")))?;
    if done.code == Some(0) {
        return Ok(Ok(()));
    }
    let lines = error_lines(&done.stderr, file);
    if lines.is_empty() || !lines.iter().all(|l| instrumented.contains(l)) {
        let first = done.stderr.lines().find(|l| l.contains("error")).unwrap_or("").trim();
        return Err(ShadowError::Program(format!(
            "{compiler} cannot build the shadow program: {}",
            truncate(first, 300)
        )));
    }
    Ok(Err(lines))
}

/// Why a run as a whole is unusable (timeout, crash, an unexpected exit
/// code), or `None`.
fn run_failure(done: &Completed, reports: &[Report], checker: &str) -> Option<String> {
    if done.timed_out {
        return Some(format!("{checker} run timed out"));
    }
    if let Some(sig) = done.signal {
        return Some(format!("{checker} run killed by signal {sig}"));
    }
    if done.code == Some(REPORT_EXIT_CODE) && reports.is_empty() {
        return Some(format!(
            "{checker} run failed without a parseable report: {}",
            truncate(done.stderr.trim(), 300)
        ));
    }
    None
}

fn remove_pair(by_line: &mut BTreeMap<u32, LineCode>, i: usize) {
    let mut empty = None;
    for (s, lc) in by_line.iter_mut() {
        if let Some(k) = lc.spans.iter().position(|&(j, _, _)| j == i) {
            let (_, a, b) = lc.spans.remove(k);
            // Blank out the pair's code (keeps the other spans' columns).
            lc.text.replace_range(a - 1..b - 1, &" ".repeat(b - a));
            if lc.spans.is_empty() {
                empty = Some(*s);
            }
        }
    }
    if let Some(s) = empty {
        by_line.remove(&s);
    }
}

fn reject_lines(
    by_line: &mut BTreeMap<u32, LineCode>,
    rejected: &mut BTreeMap<usize, String>,
    lines: &BTreeSet<u32>,
    why: &str,
) {
    for s in lines {
        if let Some(lc) = by_line.remove(s) {
            for (i, _, _) in lc.spans {
                rejected.entry(i).or_insert_with(|| why.to_string());
            }
        }
    }
}

fn reject_all(by_line: &mut BTreeMap<u32, LineCode>, rejected: &mut BTreeMap<usize, String>, why: &str) {
    let all: BTreeSet<u32> = by_line.keys().copied().collect();
    reject_lines(by_line, rejected, &all, why);
}
