//! Rust seed programs (PLDI'20 section 6.1): one `main.rs` with a `fn main`
//! (like the Rust test suite's run-pass tests), checked with the C path's
//! checker ([`crate::check`]), triage and store records.
//!
//! What differs from C:
//! - **Builds.** `rustc --edition 2021 -g -C opt-level=L -C
//!   codegen-units=1 main.rs --extern opt_me_not=libopt_me_not.rlib -L . -o
//!   prog`. One codegen unit makes builds deterministic and LLVM's
//!   opt-bisect numbering stable (culprit bisection). The barrier is a crate of
//!   its own ([`BARRIER_SOURCE`], an `#[inline(never)]` function with an
//!   empty `asm!`), compiled once per build as an rlib at the same level, so
//!   a program calls `opt_me_not::opt_me_not()` and the optimizer cannot see
//!   through it. The crate is also passed as `lib`, the name Figure 10 uses
//!   (`lib::opt_me_not()`). [`BuildCache`](doppel_lang::c::BuildCache) compiles one C
//!   file with `-fdebug-prefix-map` and `-lm`, which rustc does not take, so
//!   this module has its own content-addressed cache (temporary directory
//!   renamed into place, `--remap-path-prefix` for the final path).
//! - **Levels** ([`opt_level`]): O0 -> 0, O1 -> 1, O2 -> 2, O3 -> 3,
//!   Os -> s, Oz -> z, and Og -> 1: rustc has no Og, and opt-level=1 is the
//!   nearest ("optimize, stay debuggable").
//! - **References without a shadow program.** Safe Rust has no undefined
//!   behaviour (paper, section 6.1), so PRINT(P, s, v) is read from the -O0
//!   build in GDB itself ([`references`]): one session with a breakpoint on
//!   every `is_stmt` line of the source, and at the first hit of each line
//!   every integer-typed variable of the frame (`i8`..`i128`, `u8`..`u128`,
//!   `isize`, `usize`, `bool` as a 1-bit unsigned) is printed. rustc's scopes
//!   start after a `let`, so a variable is never read before it is bound.
//!   `char`, floats, references and aggregates are not checked. A value
//!   `<optimized out>` at -O0 is recorded and skipped. The breakpoint stays
//!   for the next executions of the line, up to
//!   [`crate::REFERENCE_HITS`] in all, whose values go to
//!   [`Reference::later`].
//! - **Line augmentation** (section 4.3 with 6.1's barrier crate):
//!   `::opt_me_not::opt_me_not(); ` is written at column 1 of a line that
//!   has no `is_stmt` row in the optimized binary, or whose breakpoint a
//!   debugger put elsewhere, when the line starts a statement of a block
//!   (`doppel_lang::rust::statements`: not inside an expression, a `match`
//!   arm or a const context). A pair on any other line stays in the plain
//!   build (and is usually `not_hit`).
//! - **Culprit bisection** by `-C llvm-args=-opt-bisect-limit=N`
//!   ([`crate::bisect::bisect_llvm`]); a wrong value that shows with no
//!   optional LLVM pass comes from rustc itself (MIR optimizations or
//!   debug-information emission) and is "not bisectable".
//! - **No reduction**: the interestingness test of [`crate::reduce`] is
//!   about C (sanitizers, Csmith headers); Rust findings are reported with
//!   the whole program.
//!
//! The program must not use `unsafe` beyond the barrier for the references
//! to be sound: doppel does not check that.

use crate::bisect::{self, PassRun};
use crate::builder::LevelBuilder;
use crate::check::same_file;
use crate::program::{self, LevelCheck, Program};
use crate::toolchain::{Compiler, Family};
use crate::value::{self, Shown};
use crate::{Pair, Reference, ScopedVariable, VarKind};
use doppel_core::process::{self, Sandbox};
use doppel_core::{ExecAction, Language, Location, Output, Subject};
use doppel_debuggers::{Debugger, Evaluation};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::process::Command;

/// The file name of the barrier crate.
pub const BARRIER_CRATE: &str = "opt_me_not.rs";

/// The barrier crate: a function the optimizer of the calling crate cannot
/// see through (never inlined, an opaque `asm!`).
pub const BARRIER_SOURCE: &str = "#[inline(never)]
pub fn opt_me_not() {
    unsafe { core::arch::asm!(\"\", options(nostack)) }
}
";

/// The Rust edition seeds are compiled with.
pub const EDITION: &str = "2021";

/// Longest a rustc invocation may take.
const COMPILE_TIMEOUT: Duration = Duration::from_secs(120);

/// Whether `path` is a Rust source (`.rs`).
pub fn is_rust_source(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "rs")
}

/// The `.rs` files under `paths` (files taken as they are, directories
/// walked), sorted, without the barrier crate [`BARRIER_CRATE`].
pub fn discover(paths: &[PathBuf]) -> Vec<PathBuf> {
    doppel_lang::c::discover_where(paths, &|p| {
        is_rust_source(p) && p.file_name().is_none_or(|n| n != BARRIER_CRATE)
    })
}

/// rustc's `-C opt-level` for a level of the campaign (`O1`, `-O2`, `Og`).
///
/// Errors: a level rustc has no counterpart for.
pub fn opt_level(level: &str) -> Result<&'static str, String> {
    Ok(match level.trim_start_matches('-') {
        "O0" => "0",
        "O1" => "1",
        "O2" => "2",
        "O3" => "3",
        "Os" => "s",
        "Oz" => "z",
        // rustc has no Og; opt-level=1 is the nearest.
        "Og" => "1",
        other => return Err(format!("no rustc opt-level for -{other}")),
    })
}

/// The kind of a Rust integer type as GDB names it (`i32`, `usize`,
/// `bool`); `None` for every other type (`char`, floats, references,
/// aggregates).
pub fn integer_kind(type_name: &str) -> Option<VarKind> {
    let t = type_name.trim();
    let (signed, bits) = match t {
        "bool" => (false, 1),
        "isize" => (true, 64),
        "usize" => (false, 64),
        _ => {
            let signed = match t.as_bytes().first()? {
                b'i' => true,
                b'u' => false,
                _ => return None,
            };
            let bits: u8 = t[1..].parse().ok()?;
            if ![8, 16, 32, 64, 128].contains(&bits) {
                return None;
            }
            (signed, bits)
        }
    };
    Some(VarKind::Integer { signed, bits })
}

/// A content-addressed cache of Rust builds: `<dir>/<key>/` holds the
/// source under its own file name, the barrier crate and its rlib, the
/// binary `prog` and rustc's diagnostics `build.log`.
#[derive(Debug, Clone)]
pub struct RustBuilder {
    dir: PathBuf,
}

impl RustBuilder {
    /// A cache rooted at `dir` (created, made absolute and canonical: the
    /// debug information names the source by its path there).
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir: doppel_lang::c::cache_root(dir),
        }
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Builds `program` with `compiler` (rustc) at `level` (`O0`, `O2`, ...),
    /// `extra` flags after the level's (bisection switches, for the program
    /// only, not the barrier crate) and the barrier call before each line of
    /// `augmented` ([`crate::augment::augment_rust`]), or finds it in the
    /// cache. Returns the subject and its recipe. rustc's diagnostics are
    /// kept in the entry's `build.log`.
    ///
    /// Errors: an unknown level, the program or the barrier does not
    /// compile (rustc's first 40 lines of diagnostics), a timeout, I/O.
    pub async fn build(
        &self,
        program: &Program,
        compiler: &Compiler,
        level: &str,
        extra: &[String],
        augmented: &BTreeSet<u32>,
    ) -> Result<(Subject, String), String> {
        let opt = opt_level(level)?;
        let original = tokio::fs::read_to_string(&program.source)
            .await
            .map_err(|e| format!("cannot read {}: {e}", program.source.display()))?;
        let text = if augmented.is_empty() {
            original.into_bytes()
        } else {
            crate::augment::augment_rust(&original, augmented).into_bytes()
        };
        let file_name = program.file_name();
        let mut h = Sha256::new();
        for part in [
            &text[..],
            compiler.path.as_bytes(),
            compiler.version.as_bytes(),
            opt.as_bytes(),
            EDITION.as_bytes(),
            BARRIER_SOURCE.as_bytes(),
            file_name.as_bytes(),
            extra.join(" ").as_bytes(),
        ] {
            h.update(part);
            h.update([0]);
        }
        let key = hex::encode(h.finalize());
        let entry = self.dir.join(&key);
        let extra_text: String = extra.iter().map(|f| format!(" {f}")).collect();
        let recipe = format!(
            "{} --edition {EDITION} -g -C opt-level={opt} -C codegen-units=1{extra_text} {file_name} --extern opt_me_not=libopt_me_not.rlib --extern lib=libopt_me_not.rlib -L . -o prog",
            compiler.name
        );
        let subject = |entry: &Path| Subject {
            name: program.name.clone(),
            language: Language::Rust,
            source: entry.join(&file_name),
            source_name: file_name.clone(),
            line_count: String::from_utf8_lossy(&text).lines().count() as u32,
            binary: Some(entry.join("prog")),
            prelude: Vec::new(),
            epilogue: Vec::new(),
            hash: key.clone(),
            build: recipe.clone(),
        };
        if entry.join("prog").is_file() && entry.join(&file_name).is_file() {
            return Ok((subject(&entry), recipe));
        }
        let tmp = self.dir.join(format!(".tmp-{key}-{}", std::process::id()));
        let _ = tokio::fs::remove_dir_all(&tmp).await;
        tokio::fs::create_dir_all(&tmp)
            .await
            .map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
        let result = compile(&tmp, &entry, &file_name, &text, compiler, opt, extra).await;
        match result {
            Ok(()) => {
                // Whoever renames first wins; an existing entry is as good as ours.
                if tokio::fs::rename(&tmp, &entry).await.is_err() {
                    let _ = tokio::fs::remove_dir_all(&tmp).await;
                }
                Ok((subject(&entry), recipe))
            }
            Err(e) => {
                let _ = tokio::fs::remove_dir_all(&tmp).await;
                Err(format!("{} -{level}: {e}", compiler.name))
            }
        }
    }
}

/// Compiles the barrier crate and the program in `dir` (renamed to `entry`
/// afterwards; `--remap-path-prefix` makes the debug information name the
/// final path).
async fn compile(
    dir: &Path,
    entry: &Path,
    file_name: &str,
    text: &[u8],
    compiler: &Compiler,
    opt: &str,
    extra: &[String],
) -> Result<(), String> {
    let io = |e: std::io::Error| format!("I/O error: {e}");
    tokio::fs::write(dir.join(file_name), text).await.map_err(io)?;
    tokio::fs::write(dir.join(BARRIER_CRATE), BARRIER_SOURCE)
        .await
        .map_err(io)?;
    let remap = format!("--remap-path-prefix={}={}", dir.display(), entry.display());
    let common = [
        "--edition",
        EDITION,
        "-g",
        "-C",
        &format!("opt-level={opt}"),
        "-C",
        "codegen-units=1",
    ]
    .map(str::to_string);
    let mut log = String::new();
    let steps: [Vec<String>; 2] = [
        [
            &common[..],
            &[remap.clone(), "--crate-type=rlib".into(), BARRIER_CRATE.into()],
        ]
        .concat(),
        [
            &common[..],
            extra,
            &[
                remap.clone(),
                "--crate-name".into(),
                "main".into(),
                file_name.into(),
                "--extern".into(),
                "opt_me_not=libopt_me_not.rlib".into(),
                "--extern".into(),
                "lib=libopt_me_not.rlib".into(),
                "-L".into(),
                ".".into(),
                "-o".into(),
                "prog".into(),
            ],
        ]
        .concat(),
    ];
    for args in steps {
        let mut cmd = Command::new(&compiler.path);
        cmd.current_dir(dir).args(&args);
        let done = process::run(cmd, COMPILE_TIMEOUT, Sandbox::default())
            .await
            .map_err(|e| format!("cannot run {}: {e}", compiler.path))?;
        if done.timed_out {
            return Err(format!("rustc did not finish within {COMPILE_TIMEOUT:?}"));
        }
        log.push_str(&done.stderr);
        if done.code != Some(0) {
            let stderr: String = done.stderr.lines().take(40).collect::<Vec<_>>().join("\n");
            return Err(format!("does not compile:\n{stderr}"));
        }
    }
    tokio::fs::write(dir.join("build.log"), log).await.map_err(io)?;
    if !dir.join("prog").is_file() {
        return Err("rustc wrote no binary".into());
    }
    Ok(())
}

/// The references of a Rust program, read from its -O0 build in GDB.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RustReferences {
    /// The -O0 build the values were read from.
    pub recipe: String,
    /// Lines of the source with an `is_stmt` row in the -O0 binary.
    pub statement_lines: usize,
    /// Of those, lines the -O0 run paused at.
    pub covered_lines: usize,
    /// Integer-typed (line, variable) pairs with a value, before sampling.
    pub candidates: usize,
    /// Pairs skipped, with the reason (`<optimized out>` at -O0, unreadable).
    pub rejected: Vec<(Pair, String)>,
    /// The references (at most `max_pairs`).
    pub references: Vec<Reference>,
    /// How the -O0 run ended.
    pub ending: String,
    /// Seconds spent.
    pub seconds: f64,
}

/// Most pauses the reference session takes beyond one per line.
const EXTRA_PAUSES: usize = 50;

/// Reads PRINT(P, s, v) for every integer-typed variable v in scope at the
/// first hit of every `is_stmt` line s of the -O0 build `subject`, in one
/// session of `debugger` (GDB). Keeps at most `max_pairs` (0: all), drawn
/// with `seed` and the program's hash like the C path.
///
/// Errors: the debugger fails, or no line has a breakpoint.
pub async fn references(
    subject: &Subject,
    program_hash: &str,
    debugger: &mut dyn Debugger,
    max_pairs: usize,
    seed: u64,
) -> Result<RustReferences, String> {
    let started = Instant::now();
    let binary = subject.binary.as_ref().ok_or("the -O0 build has no binary")?;
    let lines = doppel_lang::c::linetable::stmt_lines(binary, &subject.source_name)?;
    let result = read_references(subject, &lines, debugger).await;
    debugger.reset().await;
    let _ = debugger.take_transcript();
    let (mut refs, rejected, covered, ending) = result?;
    let candidates = refs.len();
    if max_pairs > 0 && refs.len() > max_pairs {
        let mut rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ u64::from_str_radix(&program_hash[..15], 16).unwrap_or(0));
        refs.shuffle(&mut rng);
        refs.truncate(max_pairs);
    }
    refs.sort_by(|a, b| (a.pair.line, &a.pair.variable.name).cmp(&(b.pair.line, &b.pair.variable.name)));
    Ok(RustReferences {
        recipe: subject.build.clone(),
        statement_lines: lines.len(),
        covered_lines: covered,
        candidates,
        rejected,
        references: refs,
        ending,
        seconds: started.elapsed().as_secs_f64(),
    })
}

type ReadOut = (Vec<Reference>, Vec<(Pair, String)>, usize, String);

/// v printed at the current pause and normalized; `listed` is its value in
/// the frame's variable list, used where the backend cannot print.
///
/// Errors: the debugger failed.
async fn read_value(
    debugger: &mut dyn Debugger,
    name: &str,
    kind: &VarKind,
    listed: Option<&doppel_core::Value>,
) -> Result<Shown, String> {
    let shown = match debugger.evaluate(name).await {
        Evaluation::Value(v) => Some(v),
        Evaluation::Failed(Output::Failed { detail, .. }) => return Err(format!("printing {name}: {detail}")),
        Evaluation::Failed(o) => return Err(format!("printing {name}: unexpected answer {o:?}")),
        Evaluation::Refused(_) | Evaluation::Unsupported => listed.cloned(),
    };
    let _ = debugger.take_transcript();
    Ok(match shown {
        Some(v) => value::normalize(kind, &v),
        None => Shown::Unreadable(format!("{name} cannot be printed")),
    })
}

async fn read_references(
    subject: &Subject,
    lines: &BTreeSet<u32>,
    debugger: &mut dyn Debugger,
) -> Result<ReadOut, String> {
    let failed = |what: &str, o: &Output| match o {
        Output::Failed { detail, .. } => format!("{what}: {detail}"),
        other => format!("{what}: unexpected answer {other:?}"),
    };
    let loaded = doppel_debuggers::load_confirmed(&mut *debugger, subject).await;
    let _ = debugger.take_transcript();
    if let Output::Failed { .. } = &loaded {
        return Err(failed("loading the -O0 build", &loaded));
    }
    let mut pending: BTreeSet<u32> = BTreeSet::new();
    for &line in lines {
        let at = Location::line(subject.source_name.clone(), line);
        let out = debugger.set_breakpoint(&at).await;
        let _ = debugger.take_transcript();
        match out {
            Output::BreakpointSet { resolved: Some(r), .. } if r.line == line => {
                pending.insert(line);
            }
            Output::BreakpointSet { resolved: Some(_), .. } => {
                let _ = debugger.remove_breakpoint(&at).await;
                let _ = debugger.take_transcript();
            }
            Output::BreakpointSet { .. } => {}
            other => return Err(failed(&format!("a breakpoint at line {line}"), &other)),
        }
    }
    if pending.is_empty() {
        return Err("no line of the -O0 build takes a breakpoint".into());
    }
    let mut refs: Vec<Reference> = Vec::new();
    let mut rejected = Vec::new();
    let mut covered = 0usize;
    // Lines paused at, with their executions so far and the indices of
    // their references in `refs` (later values are read at the next
    // executions, up to REFERENCE_HITS).
    let mut hits: BTreeMap<u32, (u32, Vec<usize>)> = BTreeMap::new();
    let budget = pending.len() * crate::REFERENCE_HITS as usize + EXTRA_PAUSES;
    let mut pauses = 0usize;
    let mut out = debugger.start().await;
    let _ = debugger.take_transcript();
    let ending = loop {
        match out {
            Output::Paused(state) => {
                pauses += 1;
                let line = state.location.line;
                let here = same_file(&state.location.file, &subject.source_name);
                let mut done_with_line = false;
                if here && pending.remove(&line) {
                    covered += 1;
                    let mut mine = Vec::new();
                    // Innermost binding first: a shadowed name is read once.
                    let mut seen = BTreeSet::new();
                    for var in &state.variables {
                        if !seen.insert(var.name.clone()) {
                            continue;
                        }
                        let Some(kind) = var.type_name.as_deref().and_then(integer_kind) else {
                            continue;
                        };
                        let pair = Pair {
                            line,
                            variable: ScopedVariable {
                                name: var.name.clone(),
                                type_name: var.type_name.clone().unwrap_or_default(),
                                kind: kind.clone(),
                                parameter: false,
                                declared_at: 0,
                            },
                        };
                        match read_value(debugger, &var.name, &kind, Some(&var.value)).await? {
                            Shown::Value(value) => {
                                mine.push(refs.len());
                                refs.push(Reference::new(pair, value));
                            }
                            Shown::OptimizedOut => rejected.push((pair, "optimized out at -O0".into())),
                            Shown::Unreadable(t) => rejected.push((pair, format!("cannot read '{t}' at -O0"))),
                        }
                    }
                    done_with_line = mine.is_empty() || crate::REFERENCE_HITS <= 1;
                    hits.insert(line, (1, mine));
                } else if here && let Some((n, mine)) = hits.get_mut(&line) {
                    // A later execution: v's value there, while every
                    // earlier one was read (else the sequence has a gap).
                    *n += 1;
                    for &i in mine.iter() {
                        let r = &refs[i];
                        if r.later.len() + 2 != *n as usize {
                            continue;
                        }
                        let (name, kind) = (r.pair.variable.name.clone(), r.pair.variable.kind.clone());
                        if let Shown::Value(v) = read_value(debugger, &name, &kind, None).await? {
                            refs[i].later.push(v);
                        }
                    }
                    done_with_line = *n >= crate::REFERENCE_HITS;
                }
                if done_with_line {
                    hits.remove(&line);
                    let at = Location::line(subject.source_name.clone(), line);
                    let _ = debugger.remove_breakpoint(&at).await;
                    let _ = debugger.take_transcript();
                }
                if pending.is_empty() && hits.is_empty() {
                    break "every line was reached".to_string();
                }
                if pauses > budget {
                    break format!("gave up after {pauses} pauses");
                }
                out = debugger.exec(ExecAction::Resume).await;
                let _ = debugger.take_transcript();
            }
            Output::Finished { exit_code, signal } => {
                break match (exit_code, signal) {
                    (_, Some(s)) => format!("the program was killed by {s}"),
                    (Some(c), None) => format!("the program exited with {c}"),
                    (None, None) => "the program ended".to_string(),
                };
            }
            other => return Err(failed("running the -O0 build", &other)),
        }
    };
    Ok((refs, rejected, covered, ending))
}

/// A Rust program built by rustc at one level ([`LevelBuilder`]): the
/// lines that can be augmented are the statement starts of its source.
pub struct RustLevel<'a> {
    program: &'a Program,
    compiler: &'a Compiler,
    level: &'a str,
    builder: &'a RustBuilder,
    statements: BTreeSet<u32>,
}

impl<'a> RustLevel<'a> {
    /// The builder of `program` with `compiler` at `level` in `builder`'s
    /// cache (an unreadable source has no augmentable line; its build says
    /// why).
    pub fn new(program: &'a Program, compiler: &'a Compiler, level: &'a str, builder: &'a RustBuilder) -> Self {
        let statements = std::fs::read_to_string(&program.source)
            .map(|t| doppel_lang::rust::statements::statement_starts(&t))
            .unwrap_or_default();
        Self {
            program,
            compiler,
            level,
            builder,
            statements,
        }
    }
}

#[async_trait::async_trait]
impl LevelBuilder for RustLevel<'_> {
    fn compiler(&self) -> &Compiler {
        self.compiler
    }

    fn level(&self) -> &str {
        self.level
    }

    async fn build(&self, extra: &[String], augmented: &BTreeSet<u32>) -> Result<(Subject, String), String> {
        self.builder
            .build(self.program, self.compiler, self.level, extra, augmented)
            .await
    }

    fn augmentable(&self, line: u32) -> bool {
        self.statements.contains(&line)
    }

    async fn pass_log(&self, augmented: &BTreeSet<u32>) -> Result<Vec<PassRun>, String> {
        let flags = bisect::bisect_flags(Family::Rustc, -1);
        let (subject, _) = self.build(&flags, augmented).await?;
        let dir = subject.source.parent().ok_or("the build has no directory")?;
        let log =
            std::fs::read_to_string(dir.join("build.log")).map_err(|e| format!("cannot read rustc's pass log: {e}"))?;
        let runs = bisect::parse_pass_log(&log);
        if runs.is_empty() {
            return Err("rustc printed no opt-bisect pass log".into());
        }
        Ok(runs)
    }
}

/// Checks `references` in the builds of `program` at `level` with every
/// debugger ([`program::check_level_with`]): the program as it is, then
/// the line-augmented program for the pairs whose line has no `is_stmt`
/// row or whose breakpoint moved, when their line starts a statement.
///
/// Errors: a build or line-table failure.
pub async fn check_level(
    program: &Program,
    references: &[Reference],
    compiler: &Compiler,
    level: &str,
    builder: &RustBuilder,
    debuggers: &mut [(String, Box<dyn Debugger>)],
) -> Result<LevelCheck, String> {
    let b = RustLevel::new(program, compiler, level, builder);
    program::check_level_with(&b, references, debuggers).await
}

/// The references of `program` with the first debugger named `gdb` in
/// `debuggers` (else the first one): the -O0 build, then [`references`].
///
/// Errors: the build or the reading fails.
pub async fn prepare(
    program: &Program,
    compiler: &Compiler,
    builder: &RustBuilder,
    debuggers: &mut [(String, Box<dyn Debugger>)],
    max_pairs: usize,
    seed: u64,
) -> Result<RustReferences, String> {
    let (subject, _) = builder.build(program, compiler, "O0", &[], &BTreeSet::new()).await?;
    let i = debuggers.iter().position(|(n, _)| n == "gdb").unwrap_or(0);
    let (_, dbg) = debuggers.get_mut(i).ok_or("no debugger to read the references with")?;
    references(&subject, &program.hash, dbg.as_mut(), max_pairs, seed).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_to_rustc_opt_levels() {
        assert_eq!(opt_level("O0").unwrap(), "0");
        assert_eq!(opt_level("O1").unwrap(), "1");
        assert_eq!(opt_level("-O2").unwrap(), "2");
        assert_eq!(opt_level("O3").unwrap(), "3");
        assert_eq!(opt_level("Os").unwrap(), "s");
        assert_eq!(opt_level("Oz").unwrap(), "z");
        assert_eq!(opt_level("Og").unwrap(), "1");
        assert!(opt_level("Ofast").is_err());
    }

    #[test]
    fn integer_types_and_the_rest() {
        assert_eq!(integer_kind("i32"), Some(VarKind::Integer { signed: true, bits: 32 }));
        assert_eq!(integer_kind("u8"), Some(VarKind::Integer { signed: false, bits: 8 }));
        assert_eq!(
            integer_kind("i128"),
            Some(VarKind::Integer {
                signed: true,
                bits: 128
            })
        );
        assert_eq!(
            integer_kind("usize"),
            Some(VarKind::Integer {
                signed: false,
                bits: 64
            })
        );
        assert_eq!(integer_kind("bool"), Some(VarKind::Integer { signed: false, bits: 1 }));
        for t in [
            "char",
            "f64",
            "&i32",
            "i7",
            "u",
            "alloc::vec::Vec<i32>",
            "*mut u8",
            "[i32; 3]",
        ] {
            assert_eq!(integer_kind(t), None, "{t}");
        }
    }

    #[test]
    fn discovers_rs_files_but_not_the_barrier() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("sub")).unwrap();
        for f in ["main.rs", "sub/b.rs", "opt_me_not.rs", "x.c"] {
            std::fs::write(d.path().join(f), "").unwrap();
        }
        let found = discover(&[d.path().to_path_buf()]);
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(d.path()).unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["main.rs", "sub/b.rs"]);
    }
}
