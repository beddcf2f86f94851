//! The batching benchmark (`doppel bench debuginfo`): checks per second with
//! one debugger session per (binary, debugger) against one debugger launch
//! per (s, v) pair, as PLDI'20's Algorithm 1 does, on the same programs,
//! builds and references. Measures; asserts nothing.

use crate::Reference;
use crate::check::check_binary;
use crate::config::DebuginfoConfig;
use crate::program::{self, Preparation, Program};
use crate::toolchain::Compiler;
use doppel_core::Subject;
use doppel_debuggers::{DebuggerConfig, registry};
use doppel_lang::c::BuildCache;
use std::collections::BTreeSet;
use std::time::Instant;

/// What the benchmark measured.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// Programs with references.
    pub programs: usize,
    /// Builds checked.
    pub builds: usize,
    /// Batched: pair checks made, sessions, and their wall time in seconds.
    pub batched_checks: usize,
    /// Batched: debugger sessions (one per build and debugger).
    pub batched_sessions: usize,
    /// Batched: wall time of those sessions, seconds.
    pub batched_seconds: f64,
    /// One launch per pair: checks made (a sample of each build's pairs)
    /// and their wall time in seconds (launch to shutdown).
    pub single_checks: usize,
    /// One launch per pair: wall time of those checks, seconds.
    pub single_seconds: f64,
}

impl Figures {
    /// Batched checks per second (one job: one core for doppel, the
    /// debugger and the program in turn).
    pub fn batched_rate(&self) -> f64 {
        self.batched_checks as f64 / self.batched_seconds.max(1e-9)
    }
    /// Checks per second with one launch per pair.
    pub fn single_rate(&self) -> f64 {
        self.single_checks as f64 / self.single_seconds.max(1e-9)
    }
}

/// Runs the benchmark: every program prepared (not timed), built by every
/// compiler at every level of `config` (not timed; the augmented build
/// where the line table lacks a line), then checked (timed) both ways with
/// every debugger; the one-launch-per-pair way on at most `sample` pairs
/// per build.
///
/// Errors: a debugger backend cannot be created.
pub async fn run(
    programs: &[Program],
    compilers: &[Compiler],
    config: &DebuginfoConfig,
    debugger_config: &DebuggerConfig,
    cache: &BuildCache,
    sample: usize,
) -> Result<Figures, String> {
    let mut f = Figures::default();
    let barrier = program::barrier_unit(cache.dir())?;
    let mut builds: Vec<(Subject, Vec<Reference>)> = Vec::new();
    for p in programs {
        let Preparation::Ready(ready) = program::prepare(p, config, debugger_config.limits, &barrier).await else {
            continue;
        };
        if ready.references.is_empty() {
            continue;
        }
        f.programs += 1;
        for c in compilers {
            for level in &config.levels {
                let Ok((plain, _)) = program::build(p, c, level, &[], &BTreeSet::new(), cache).await else {
                    continue;
                };
                let Ok(stmt) = program::stmt_lines(&plain) else {
                    continue;
                };
                let (direct, rest): (Vec<Reference>, Vec<Reference>) = ready
                    .references
                    .iter()
                    .cloned()
                    .partition(|r| stmt.contains(&r.pair.line));
                if !direct.is_empty() {
                    builds.push((plain, direct));
                }
                if !rest.is_empty() {
                    let lines = rest.iter().map(|r| r.pair.line).collect();
                    if let Ok((aug, _)) = program::build(p, c, level, &[], &lines, cache).await {
                        builds.push((aug, rest));
                    }
                }
            }
        }
    }
    f.builds = builds.len();
    for name in &config.debuggers {
        let warm = DebuggerConfig {
            warm: true,
            ..debugger_config.clone()
        };
        let mut dbg = registry::create(name, &warm).map_err(|e| e.to_string())?;
        let start = Instant::now();
        for (subject, refs) in &builds {
            check_binary(dbg.as_mut(), subject, refs).await;
            f.batched_checks += refs.len();
            f.batched_sessions += 1;
        }
        f.batched_seconds += start.elapsed().as_secs_f64();
        dbg.shutdown().await;

        let cold = DebuggerConfig {
            warm: false,
            ..debugger_config.clone()
        };
        let start = Instant::now();
        for (subject, refs) in &builds {
            for r in refs.iter().take(sample) {
                let mut dbg = registry::create(name, &cold).map_err(|e| e.to_string())?;
                check_binary(dbg.as_mut(), subject, std::slice::from_ref(r)).await;
                dbg.shutdown().await;
                f.single_checks += 1;
            }
        }
        f.single_seconds += start.elapsed().as_secs_f64();
    }
    Ok(f)
}
