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

use crate::augment::{declare_first, prefix_lines};
use crate::wellformed::{
    self, REPORT_EXIT_CODE, run_program, sanitizer_clang, strip_pid, truncate, valgrind_command, with_symbolizer,
};
use crate::{Pair, Reference, VarKind};
use doppel_core::process::{Completed, Limits};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

/// Marker that starts every value line of a shadow program's output.
pub const MARKER: &str = "@@doppel ";

/// Largest number of array elements printed (the first ones).
pub const MAX_ARRAY_ELEMENTS: u32 = 16;

/// The declaration of `printf` added to line 1 (the program may not include
/// `<stdio.h>`; a compatible redeclaration is harmless when it does).
pub const PRINTF_PROTOTYPE: &str = "int printf(const char *, ...);";

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

/// The printing code of one pair: a C statement that prints it, or why it
/// cannot be printed.
fn render(pair: &Pair) -> Result<String, String> {
    let v = &pair.variable.name;
    let s = pair.line;
    match &pair.variable.kind {
        VarKind::Integer { signed: true, .. } => Ok(format!("printf(\"{MARKER}{s} {v} %lld\\n\", (long long)({v}));")),
        VarKind::Integer { signed: false, .. } => Ok(format!(
            "printf(\"{MARKER}{s} {v} %llu\\n\", (unsigned long long)({v}));"
        )),
        VarKind::Pointer => Ok(format!(
            "printf(\"{MARKER}{s} {v} %s\\n\", ({v}) ? \"non-null\" : \"null\");"
        )),
        VarKind::Array { elem, len } => {
            let (fmt, cast) = match elem.as_ref() {
                VarKind::Integer { signed: true, .. } => ("%lld", "long long"),
                VarKind::Integer { signed: false, .. } => ("%llu", "unsigned long long"),
                other => return Err(format!("array of {} elements is not printed", other.name())),
            };
            let n = (*len).min(MAX_ARRAY_ELEMENTS);
            Ok(format!(
                "printf(\"{MARKER}{s} {v} {{\"); for (int doppel_i = 0; doppel_i < {n}; doppel_i++) \
                 printf(doppel_i ? \", {fmt}\" : \"{fmt}\", ({cast})({v})[doppel_i]); printf(\"}}\\n\");"
            ))
        }
        VarKind::Struct { .. } => {
            let (fmt, args) = struct_format(&pair.variable.kind, v)?;
            Ok(format!("printf(\"{MARKER}{s} {v} {fmt}\\n\", {});", args.join(", ")))
        }
        VarKind::Other => Err(format!("type {} is not printed", pair.variable.type_name)),
    }
}

/// The `printf` format and arguments that print `expr`, of `kind`, in the
/// normalized form of [`crate::value`]: a struct as `{a = 1, b = {0, 0},
/// c = null}`, field by field in declaration order (arrays: their first
/// [`MAX_ARRAY_ELEMENTS`] elements, one argument each). Only integers,
/// pointers, arrays of those and structs of all these are printed.
fn struct_format(kind: &VarKind, expr: &str) -> Result<(String, Vec<String>), String> {
    match kind {
        VarKind::Integer { signed: true, .. } => Ok(("%lld".into(), vec![format!("(long long)({expr})")])),
        VarKind::Integer { signed: false, .. } => Ok(("%llu".into(), vec![format!("(unsigned long long)({expr})")])),
        VarKind::Pointer => Ok(("%s".into(), vec![format!("({expr}) ? \"non-null\" : \"null\"")])),
        VarKind::Array { elem, len } => {
            let (mut fmts, mut args) = (Vec::new(), Vec::new());
            for i in 0..(*len).min(MAX_ARRAY_ELEMENTS) {
                let (f, a) = struct_format(elem, &format!("({expr})[{i}]"))?;
                fmts.push(f);
                args.extend(a);
            }
            Ok((format!("{{{}}}", fmts.join(", ")), args))
        }
        VarKind::Struct { fields } => {
            if fields.is_empty() {
                return Err("struct without known fields is not printed".into());
            }
            let (mut fmts, mut args) = (Vec::new(), Vec::new());
            for (name, k) in fields {
                let (f, a) = struct_format(k, &format!("({expr}).{name}"))
                    .map_err(|_| format!("struct field {name} ({}) is not printed", k.name()))?;
                fmts.push(format!("{name} = {f}"));
                args.extend(a);
            }
            Ok((format!("{{{}}}", fmts.join(", ")), args))
        }
        VarKind::Other => Err("not printed".into()),
    }
}

/// The printing code of one line: the pairs' statements inside a first-hit
/// guard, and the 1-based column span `[start, end)` of each pair's code
/// (for attributing a sanitizer report to a pair).
struct LineCode {
    text: String,
    spans: Vec<(usize, usize, usize)>, // (pair index, start col, end col)
}

/// Groups the printable pairs by line; the code prints at the first `hits`
/// executions of its line.
fn plan(pairs: &[Pair], hits: u32) -> (BTreeMap<u32, LineCode>, Vec<(Pair, String)>) {
    let mut by_line: BTreeMap<u32, LineCode> = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, pair) in pairs.iter().enumerate() {
        if !seen.insert((pair.line, pair.variable.name.clone())) {
            continue;
        }
        match render(pair) {
            Ok(code) => {
                let s = pair.line;
                let lc = by_line.entry(s).or_insert_with(|| LineCode {
                    text: format!(
                        "{{ static int doppel_seen_{s}; if (doppel_seen_{s} < {hits}) {{ doppel_seen_{s}++; "
                    ),
                    spans: Vec::new(),
                });
                let start = lc.text.len() + 1;
                lc.text.push_str(&code);
                lc.spans.push((i, start, lc.text.len() + 1));
                lc.text.push(' ');
            }
            Err(why) => skipped.push((pair.clone(), why)),
        }
    }
    for lc in by_line.values_mut() {
        lc.text.push_str("} } ");
    }
    (by_line, skipped)
}

/// The shadow program of `source` for `pairs` (see the module
/// documentation), and the pairs skipped because of their kind, with the
/// reason. Pairs at lines past the end of `source` print nothing (and are
/// rejected as not reached by [`validate`]). A repeated (line, name) is
/// printed once.
pub fn shadow_source(source: &str, pairs: &[Pair]) -> (String, Vec<(Pair, String)>) {
    let (by_line, skipped) = plan(pairs, 1);
    (build(source, &by_line), skipped)
}

fn build(source: &str, by_line: &BTreeMap<u32, LineCode>) -> String {
    let body = prefix_lines(source, |n| by_line.get(&n).map(|lc| lc.text.clone()));
    declare_first(&body, PRINTF_PROTOTYPE)
}

/// Where a report points in the shadow source: line and column (0 when
/// the checker gives none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Site {
    line: u32,
    col: usize,
}

/// A report of a dynamic checker: its first line and its innermost frame in
/// the shadow file, if any.
#[derive(Debug, Clone)]
struct Report {
    what: String,
    site: Option<Site>,
}

/// MSan (or other sanitizer) reports in `stderr`; frames look like
/// `#0 0x55 in main /dir/shadow.c:12:5`.
fn sanitizer_reports(stderr: &str, file: &str) -> Vec<Report> {
    let mut out: Vec<Report> = Vec::new();
    let mut in_stack = false;
    for raw in stderr.lines() {
        let line = strip_pid(raw);
        if line.starts_with("WARNING: MemorySanitizer")
            || line.starts_with("ERROR: ")
            || line.contains("runtime error:")
        {
            out.push(Report {
                what: line.to_string(),
                site: None,
            });
            in_stack = true;
            continue;
        }
        if !in_stack {
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else {
            if !line.is_empty() {
                in_stack = false;
            }
            continue;
        };
        let report = out.last_mut().expect("in a report");
        if report.site.is_some() {
            continue;
        }
        // "#0 0x.. in fn /path/file.c:12:5"
        if let Some(loc) = rest.split_whitespace().last()
            && let Some(site) = parse_location(loc, file)
        {
            report.site = Some(site);
        }
    }
    out
}

/// `path/file.c:12:5` or `path/file.c:12` in `file` -> the site.
fn parse_location(loc: &str, file: &str) -> Option<Site> {
    let mut parts = loc.rsplitn(3, ':');
    let a = parts.next()?;
    let b = parts.next()?;
    let (path, line, col) = match parts.next() {
        Some(p) if b.chars().all(|c| c.is_ascii_digit()) => (p, b, a),
        _ => (b, a, "0"),
    };
    let name = path.rsplit('/').next()?;
    if name != file {
        return None;
    }
    Some(Site {
        line: line.parse().ok()?,
        col: col.parse().ok()?,
    })
}

/// Valgrind reports in `stderr`: blocks of `==pid==` lines separated by an
/// empty `==pid==` line; frames look like `at 0x..: main (shadow.c:12)`.
fn valgrind_reports(stderr: &str, file: &str) -> Vec<Report> {
    let mut out: Vec<Report> = Vec::new();
    let mut open = false;
    for raw in stderr.lines().filter(|l| l.starts_with("==")) {
        let line = strip_pid(raw);
        if line.is_empty() {
            open = false;
            continue;
        }
        let is_frame = line.starts_with("at 0x") || line.starts_with("by 0x");
        // Valgrind's own warnings ("Warning: set address range perms ...")
        // are no errors of the program.
        if !open && line.starts_with("Warning:") {
            continue;
        }
        if !open && !is_frame {
            out.push(Report {
                what: line.to_string(),
                site: None,
            });
            open = true;
            continue;
        }
        if let (true, Some(report)) = (is_frame, out.last_mut())
            && report.site.is_none()
            && let Some(inner) = line.rsplit_once('(').map(|(_, r)| r.trim_end_matches(')'))
        {
            report.site = parse_location(inner, file);
        }
    }
    out
}

/// The values printed by a shadow run: (line, name) -> value (the first
/// print of each).
fn parse_values(stdout: &str) -> HashMap<(u32, String), String> {
    let mut values = HashMap::new();
    for line in stdout.lines() {
        let Some(at) = line.find(MARKER) else { continue };
        let rest = &line[at + MARKER.len()..];
        let mut it = rest.splitn(3, ' ');
        let (Some(s), Some(name), Some(value)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if let Ok(s) = s.parse::<u32>() {
            values
                .entry((s, name.to_string()))
                .or_insert_with(|| value.trim().to_string());
        }
    }
    values
}

/// Every value printed by a run: (line, name) -> the values in the order
/// printed (one per execution of the line).
fn parse_all_values(stdout: &str) -> HashMap<(u32, String), Vec<String>> {
    let mut values: HashMap<(u32, String), Vec<String>> = HashMap::new();
    for line in stdout.lines() {
        let Some(at) = line.find(MARKER) else { continue };
        let mut it = line[at + MARKER.len()..].splitn(3, ' ');
        let (Some(s), Some(name), Some(value)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if let Ok(s) = s.parse::<u32>() {
            values
                .entry((s, name.to_string()))
                .or_default()
                .push(value.trim().to_string());
        }
    }
    values
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScopedVariable;

    fn var(name: &str, kind: VarKind) -> ScopedVariable {
        ScopedVariable {
            name: name.into(),
            type_name: "int".into(),
            kind,
            parameter: false,
            declared_at: 1,
        }
    }

    fn int() -> VarKind {
        VarKind::Integer { signed: true, bits: 32 }
    }

    fn s_kind() -> VarKind {
        VarKind::Struct {
            fields: vec![
                ("f".into(), int()),
                (
                    "g".into(),
                    VarKind::Array {
                        elem: Box::new(VarKind::Integer { signed: true, bits: 16 }),
                        len: 2,
                    },
                ),
                ("h".into(), VarKind::Pointer),
                (
                    "in".into(),
                    VarKind::Struct {
                        fields: vec![("u".into(), VarKind::Integer { signed: false, bits: 8 })],
                    },
                ),
            ],
        }
    }

    #[test]
    fn structs_print_field_by_field_in_the_normalized_form() {
        let (code, skipped) = shadow_source("int main(void) {\n  return 0;\n}\n", &[pair(2, "s", s_kind())]);
        assert!(skipped.is_empty(), "{skipped:?}");
        let l2 = code.lines().find(|l| l.contains("doppel_seen_2")).unwrap();
        assert!(
            l2.contains(
                "printf(\"@@doppel 2 s {f = %lld, g = {%lld, %lld}, h = %s, in = {u = %llu}}\\n\", \
                 (long long)((s).f), (long long)(((s).g)[0]), (long long)(((s).g)[1]), \
                 ((s).h) ? \"non-null\" : \"null\", (unsigned long long)(((s).in).u));"
            ),
            "{l2}"
        );
        let float_field = VarKind::Struct {
            fields: vec![("i".into(), int()), ("d".into(), VarKind::Other)],
        };
        let (_, skipped) = shadow_source("int x;\n", &[pair(1, "f", float_field)]);
        assert_eq!(skipped[0].1, "struct field d (other) is not printed");
        let (_, skipped) = shadow_source("int x;\n", &[pair(1, "t", VarKind::Struct { fields: vec![] })]);
        assert_eq!(skipped[0].1, "struct without known fields is not printed");
    }

    fn pair(line: u32, name: &str, kind: VarKind) -> Pair {
        Pair {
            line,
            variable: var(name, kind),
        }
    }

    const PROGRAM: &str = "\
#include <stdio.h>
struct S { int f; short g[2]; int *h; struct I { unsigned char u; } in; };
unsigned long long big = 18446744073709551615ULL;
int main(void) {
  int a = 5;
  int b;
  int arr[3] = {1, 2, 3};
  int *p = 0;
  struct S s = {1, {-1}, 0, {7}};
  for (int i = 0; i < 3; i++) {
    a = a + i;
  }
  p = &a;
  if (a > 100) {
    a = 0;
  }
  printf(\"%d %d\\n\", a, s.f);
  return 0;
}
";

    #[test]
    fn the_shadow_keeps_line_numbers_and_guards_each_line() {
        let pairs = vec![
            pair(11, "a", int()),
            pair(11, "i", int()),
            pair(11, "s", VarKind::Struct { fields: vec![] }),
            pair(13, "p", VarKind::Pointer),
        ];
        let (shadow, skipped) = shadow_source(PROGRAM, &pairs);
        assert_eq!(
            shadow.lines().count(),
            PROGRAM.lines().count() + 2,
            "#line fallback: line 1 is a directive"
        );
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].0.variable.name, "s");
        // Physical line 11 + 2 carries the code of line 11.
        let l11 = shadow.lines().nth(12).unwrap();
        assert!(l11.starts_with("{ static int doppel_seen_11;"), "{l11}");
        assert!(l11.ends_with("    a = a + i;"), "{l11}");
        assert!(l11.contains("(long long)(i)"), "{l11}");
    }

    #[test]
    fn report_parsers_find_the_innermost_frame_in_the_shadow() {
        let msan = "==1==WARNING: MemorySanitizer: use-of-uninitialized-value\n    #0 0x55 in __interceptor_printf x.c:1:1\n    #1 0x56 in main /tmp/d/shadow.c:12:84\n    #2 0x57 in __libc_start_main csu/libc-start.c:360:3\n\nSUMMARY: MemorySanitizer: use-of-uninitialized-value /tmp/d/shadow.c:12:84 in main\n";
        let r = sanitizer_reports(msan, "shadow.c");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].site, Some(Site { line: 12, col: 84 }));
        let vg = "==9== Conditional jump or move depends on uninitialised value(s)\n==9==    at 0x1: __vfprintf_internal (vfprintf-process-arg.c:58)\n==9==    by 0x2: printf (printf.c:33)\n==9==    by 0x3: main (shadow.c:5)\n==9== \n==9== Use of uninitialised value of size 8\n==9==    at 0x4: f (shadow.c:7)\n==9== \n";
        let r = valgrind_reports(vg, "shadow.c");
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].site.map(|s| s.line), Some(5));
        assert_eq!(r[1].site.map(|s| s.line), Some(7));
        assert_eq!(
            parse_values("x@@doppel 3 a 5\n@@doppel 4 arr {1, 2, 3}\n@@doppel 3 a 6\n")
                .get(&(4, "arr".to_string()))
                .map(String::as_str),
            Some("{1, 2, 3}")
        );
    }

    #[tokio::test]
    async fn uninitialized_reads_are_rejected_and_the_rest_has_exact_values() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("p.c");
        std::fs::write(&src, PROGRAM).unwrap();
        let pairs = vec![
            pair(7, "a", int()),
            pair(7, "b", int()), // uninitialized: rejected
            pair(11, "a", int()),
            pair(11, "i", int()),
            pair(
                9,
                "arr",
                VarKind::Array {
                    elem: Box::new(int()),
                    len: 3,
                },
            ),
            pair(9, "p", VarKind::Pointer),
            pair(17, "p", VarKind::Pointer),
            pair(
                17,
                "big",
                VarKind::Integer {
                    signed: false,
                    bits: 64,
                },
            ),
            pair(17, "s", s_kind()),
            pair(17, "t", VarKind::Struct { fields: vec![] }), // skipped
            pair(15, "a", int()),                              // never executed
        ];
        let r = validate(&src, &pairs, &ShadowConfig::default()).await.unwrap();
        let got: Vec<(u32, &str, &str)> = r
            .references
            .iter()
            .map(|x| (x.pair.line, x.pair.variable.name.as_str(), x.value.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (7, "a", "5"),
                (11, "a", "5"),
                (11, "i", "0"),
                (9, "arr", "{1, 2, 3}"),
                (9, "p", "null"),
                (17, "p", "non-null"),
                (17, "big", "18446744073709551615"),
                (17, "s", "{f = 1, g = {-1, 0}, h = null, in = {u = 7}}"),
            ],
            "{r:#?}"
        );
        let rejected: BTreeMap<(u32, &str), &str> = r
            .rejected
            .iter()
            .map(|(p, why)| ((p.line, p.variable.name.as_str()), why.as_str()))
            .collect();
        assert!(rejected[&(7, "b")].contains("MSan"), "{rejected:?}");
        assert!(rejected[&(15, "a")].contains("not reached"), "{rejected:?}");
        assert_eq!(rejected.len(), 2, "{rejected:?}");
        assert_eq!(r.skipped.len(), 1);
        assert_eq!(r.rounds, 2, "one round with the report, one clean");
        // The loop body's later executions (not references, see `later`);
        // straight-line code runs once.
        let later = |line: u32, name: &str| {
            r.references
                .iter()
                .find(|x| x.pair.line == line && x.pair.variable.name == name)
                .map(|x| x.later.clone())
                .unwrap()
        };
        assert_eq!(later(11, "a"), ["5", "6"]);
        assert_eq!(later(11, "i"), ["1", "2"]);
        assert!(later(7, "a").is_empty());
    }

    #[tokio::test]
    async fn only_the_offending_pair_of_a_line_is_rejected() {
        // Both checkers report line 5; MSan's column names x, so y stays.
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("q.c");
        std::fs::write(
            &src,
            "/* q */\nint main(void) {\n  int x;\n  int y = 1;\n  return y - 1;\n}\n",
        )
        .unwrap();
        let pairs = vec![pair(5, "x", int()), pair(5, "y", int())];
        let cfg = ShadowConfig {
            clang: "/bin/false-not-a-compiler".into(),
            ..ShadowConfig::default()
        };
        // A missing MSan compiler is an error, not a silent pass.
        assert!(validate(&src, &pairs, &cfg).await.is_err());
        let r = validate(&src, &pairs, &ShadowConfig::default()).await.unwrap();
        assert_eq!(r.references.len(), 1, "{r:#?}");
        assert_eq!(r.references[0].value, "1");
        assert_eq!(r.rejected.len(), 1);
        assert_eq!(r.rejected[0].0.variable.name, "x");
    }

    /// clang-19's MSan report when its symbolizer could not read the DWARF
    /// (a fresh Debian 12 machine with llvm-14's `llvm-symbolizer` only).
    const UNSYMBOLIZED: &str = "==23771==WARNING: MemorySanitizer: use-of-uninitialized-value
    #0 0x55885b113ca4  (/tmp/d/shadow-msan+0xc9ca4) (BuildId: 26b0f4abbc4deae2eebb8a4d381621ca3bfde58a)
    #1 0x7f08d28da249  (/lib/x86_64-linux-gnu/libc.so.6+0x27249) (BuildId: 93ac61ec5a8eb1396f9fbd350e3169a558528a40)

SUMMARY: MemorySanitizer: use-of-uninitialized-value (/tmp/d/shadow-msan+0xc9ca4) (BuildId: 26b0f4abbc4deae2eebb8a4d381621ca3bfde58a)
";

    #[test]
    fn an_unsymbolized_report_names_no_site() {
        let r = sanitizer_reports(UNSYMBOLIZED, "shadow.c");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].site, None);
        let vg = "==7== Warning: set address range perms: large range [0x1, 0x2) (defined)\n";
        assert!(valgrind_reports(vg, "shadow.c").is_empty());
    }

    /// A program with an uninitialized read in the printing code only: with
    /// a working symbolizer the pair is rejected at its column.
    const UNINIT: &str = "/* q */\nint main(void) {\n  int x;\n  int y = 1;\n  return y - 1;\n}\n";

    #[tokio::test]
    async fn a_missing_or_blind_symbolizer_is_an_error_of_the_machine_not_a_rejection() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("q.c");
        std::fs::write(&src, UNINIT).unwrap();
        let pairs = vec![pair(5, "x", int()), pair(5, "y", int())];
        let missing = ShadowConfig {
            symbolizer: Some("/nonexistent/llvm-symbolizer".into()),
            valgrind: false,
            ..ShadowConfig::default()
        };
        match validate(&src, &pairs, &missing).await {
            Err(ShadowError::Environment(e)) => assert!(e.contains("/nonexistent/llvm-symbolizer"), "{e}"),
            other => panic!("{other:?}"),
        }
        // A symbolizer that runs but finds no line (as llvm-14's on clang-19's
        // DWARF): the report names no line of the program.
        let blind = dir.path().join("bin/llvm-symbolizer");
        std::fs::create_dir_all(blind.parent().unwrap()).unwrap();
        std::fs::write(
            &blind,
            "#!/bin/sh\nwhile read -r l; do printf '??\\n??:0:0\\n\\n'; done\n",
        )
        .unwrap();
        std::fs::set_permissions(&blind, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let cfg = ShadowConfig {
            symbolizer: Some(blind.clone()),
            valgrind: false,
            ..ShadowConfig::default()
        };
        match validate(&src, &pairs, &cfg).await {
            Err(ShadowError::Environment(e)) => {
                assert!(e.contains("no line of the program"), "{e}");
                assert!(e.contains(&blind.display().to_string()), "{e}");
            }
            other => panic!("{other:?}"),
        }
        // The matching symbolizer attributes the report to x's printing code.
        let ok = ShadowConfig {
            valgrind: false,
            ..ShadowConfig::default()
        };
        let r = validate(&src, &pairs, &ok).await.unwrap();
        assert_eq!(r.rejected.len(), 1, "{r:#?}");
        assert_eq!(r.rejected[0].0.variable.name, "x");
        assert!(r.rejected[0].1.starts_with("MSan: "), "{r:#?}");
    }

    #[tokio::test]
    async fn a_csmith_program_yields_references() {
        let dir = tempfile::tempdir().unwrap();
        let seed = crate::wellformed::tests::first_csmith_seed(dir.path()).await;
        let text = std::fs::read_to_string(&seed.path).unwrap();
        // Globals g_* are in scope everywhere. Lines: statements of `main`
        // that call `func_N` or `transparent_crc`; variables: the integer
        // globals declared as `static [const] [volatile] int32_t g_N = ...;`.
        let main_at = text.lines().position(|l| l.starts_with("int main")).unwrap() as u32 + 1;
        let lines: Vec<u32> = text
            .lines()
            .enumerate()
            .filter(|(n, l)| {
                let l = l.trim_start();
                *n as u32 + 1 > main_at && (l.starts_with("func_") || l.starts_with("transparent_crc("))
            })
            .map(|(n, _)| n as u32 + 1)
            .take(3)
            .collect();
        assert!(!lines.is_empty(), "no call lines in main");
        let globals: Vec<(String, bool, u8)> = text
            .lines()
            .filter(|l| {
                l.starts_with("static ") && l.contains(" g_") && l.trim_end().ends_with(';') && !l.contains('[')
            })
            .filter_map(|l| {
                let mut w = l
                    .split_whitespace()
                    .skip(1)
                    .filter(|w| *w != "volatile" && *w != "const");
                let ty = w.next()?;
                let name = w.next()?;
                let (signed, bits) = match ty {
                    "int8_t" => (true, 8),
                    "uint8_t" => (false, 8),
                    "int16_t" => (true, 16),
                    "uint16_t" => (false, 16),
                    "int32_t" => (true, 32),
                    "uint32_t" => (false, 32),
                    "int64_t" => (true, 64),
                    "uint64_t" => (false, 64),
                    _ => return None,
                };
                (name.starts_with("g_") && name.chars().skip(2).all(|c| c.is_ascii_digit()))
                    .then(|| (name.to_string(), signed, bits))
            })
            .take(10)
            .collect();
        assert!(!globals.is_empty(), "no integer globals");
        let pairs: Vec<Pair> = lines
            .iter()
            .flat_map(|&s| {
                globals.iter().map(move |(n, signed, bits)| {
                    pair(
                        s,
                        n,
                        VarKind::Integer {
                            signed: *signed,
                            bits: *bits,
                        },
                    )
                })
            })
            .collect();
        let r = validate(&seed.path, &pairs, &ShadowConfig::default()).await.unwrap();
        eprintln!(
            "shadow validation of csmith-{} ({} bytes, {} pairs): {:.2} s, {} rounds, {} references, {} rejected",
            seed.seed,
            seed.size_bytes,
            pairs.len(),
            r.seconds,
            r.rounds,
            r.references.len(),
            r.rejected.len()
        );
        assert_eq!(r.references.len() + r.rejected.len(), pairs.len(), "{r:#?}");
        assert!(!r.references.is_empty(), "{r:#?}");
        for x in &r.references {
            assert!(x.value.parse::<i128>().is_ok(), "{x:?}");
        }
    }
}
