//! Critical predicates of P' on t: predicate switching (Zhang, Gupta and
//! Gupta, "Locating Faults Through Automated Predicate Switching", ICSE
//! 2006, section 2), with P's output on t as the expected output.
//!
//! One branch instance of P''s run on t at a time takes the other
//! direction (doppel-concolic's `RunConfig::switch`); an instance whose
//! switched run prints what P prints (Codeflaws' comparison) is a
//! *critical predicate*: the fault lies in its condition, or in what
//! flows into it. Unlike Darwin's deviations and the branch divergence
//! point, this needs nothing of P but its output, so it applies where P
//! and P' were written by different authors and share no structure
//! (docs/results/localize.md, cross-author pairs).
//!
//! Search order: the paper's last-executed-first finds the final
//! output decision (`if (ok) puts("YES")`) critical in nearly every
//! failing run of a yes/no problem, which says nothing. Here the
//! candidates are, per static branch site, its first
//! [`SwitchLimits::first_instances`] instances and its last one, tried in
//! execution order (earliest first: a wrong value or condition is
//! nearest its first use), until [`SwitchLimits::runs`] switched runs or
//! the deadline. Each switched run gets an instruction budget of a
//! multiple of the plain run's, so a switch that makes a loop endless
//! costs little. Critical lines are reported in the order found, one
//! cause per line.

use crate::darwin::{DivergencePoint, Program, RootCause, Witness};
use crate::truth::Line;
use doppel_concolic::{BranchKind, Budget, Outcome, Run, RunConfig, run};
use doppel_lang::c::codeflaws::outputs_match;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Limits of one predicate-switching search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchLimits {
    /// Switched runs at most (default 200).
    pub runs: usize,
    /// Instances tried per static branch site from its first (default 3;
    /// its last instance is tried too).
    pub first_instances: usize,
    /// Wall-clock time at most, milliseconds (default 5,000); the
    /// analysis's own deadline cuts it further.
    pub time_ms: u64,
    /// Instruction budget of a switched run as a multiple of the plain
    /// run's (default 4; at least 10^6 instructions, at most the
    /// configured run budget).
    pub instruction_factor: u64,
    /// Critical lines after which the search stops (default 5).
    pub lines: usize,
}

impl Default for SwitchLimits {
    fn default() -> Self {
        Self {
            runs: 200,
            first_instances: 3,
            time_ms: 5_000,
            instruction_factor: 4,
            lines: 5,
        }
    }
}

/// What a search did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchStats {
    /// Candidate instances (two-way own branches chosen as above).
    pub candidates: usize,
    /// Switched runs made.
    pub runs: usize,
    /// Switched runs that printed P's output.
    pub critical: usize,
    /// Wall-clock milliseconds spent.
    pub ms: u64,
}

/// The candidate instances of `plain` (indices into its branch records),
/// in execution order: per static site the first `first` and the last.
pub fn candidates(plain: &Run, first: usize) -> Vec<usize> {
    let two_way = |k: &BranchKind| matches!(k, BranchKind::BrIf | BranchKind::If | BranchKind::Select);
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    let mut last: BTreeMap<u32, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, b) in plain.branches.iter().enumerate() {
        if !two_way(&b.kind) {
            continue;
        }
        let n = seen.entry(b.offset).or_default();
        if *n < first {
            out.push(i);
        }
        *n += 1;
        last.insert(b.offset, i);
    }
    out.extend(last.into_values());
    out.sort_unstable();
    out.dedup();
    out
}

/// The critical predicates of `q` (P') on stdin `t` with `args`, whose
/// plain run under `config` is `plain`: the causes (P''s lines, t as the
/// witness with P''s and `expected`'s outputs) in the order found, and
/// what the search did. `config` must be the configuration `plain` ran
/// with (the switch indices count its records). Nothing when `plain`
/// already prints `expected`.
pub fn critical_predicates(
    q: &Program,
    plain: &Run,
    config: &RunConfig,
    expected: &[u8],
    limits: SwitchLimits,
    deadline: Instant,
) -> (Vec<RootCause>, SwitchStats) {
    let began = Instant::now();
    let deadline = deadline.min(began + Duration::from_millis(limits.time_ms));
    let mut stats = SwitchStats::default();
    let mut causes: Vec<RootCause> = Vec::new();
    if outputs_match(&plain.stdout, expected) {
        return (causes, stats);
    }
    let todo = candidates(plain, limits.first_instances);
    stats.candidates = todo.len();
    let budget = Budget {
        instructions: plain
            .instructions
            .saturating_mul(limits.instruction_factor)
            .max(1_000_000)
            .min(config.budget.instructions),
        ..config.budget
    };
    let witness = Witness {
        input: config.inputs.stdin.clone(),
        reference_output: String::from_utf8_lossy(expected).into_owned(),
        modified_output: String::from_utf8_lossy(&plain.stdout).into_owned(),
        successful: false,
    };
    for &k in &todo {
        if stats.runs >= limits.runs || causes.len() >= limits.lines || Instant::now() >= deadline {
            break;
        }
        let b = plain.branches[k];
        let Some(loc) = q.module.source_loc(b.offset).filter(|l| l.line > 0) else {
            continue;
        };
        let line = Line {
            side: q.side,
            line: loc.line,
        };
        if causes.iter().any(|c| c.line == line) {
            continue;
        }
        let r = run(
            q.module,
            &RunConfig {
                switch: Some(k as u32),
                budget,
                ..config.clone()
            },
        );
        stats.runs += 1;
        let ended = matches!(r.outcome, Outcome::Exited { .. });
        if r.switched && ended && !r.output_truncated && outputs_match(&r.stdout, expected) {
            stats.critical += 1;
            causes.push(RootCause {
                line,
                function: loc.function.clone(),
                offset: b.offset,
                witness: witness.clone(),
                predicate: false,
                point: Some(DivergencePoint::CriticalPredicate),
                position: (k as u32, plain.branches.len() as u32),
            });
        }
    }
    stats.ms = began.elapsed().as_millis() as u64;
    (causes, stats)
}
