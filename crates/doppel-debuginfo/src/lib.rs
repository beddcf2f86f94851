//! Debug-information validation for optimized code: Li, Ding, Zhang &
//! Italiano, "Debug Information Validation for Optimized Code", PLDI 2020,
//! sections 3 to 5, batched and triaged.
//!
//! Pipeline for one seed program P (one module per step):
//! 1. `seed`: Csmith programs (swarm options, safe math) or user C files;
//! 2. `wellformed`: reject seeds with undefined behaviour (clang ASan+UBSan
//!    with `-fno-sanitize-recover=all`), with the reason recorded;
//! 3. `actionable`: covered lines (gcov) x variables in scope (clang's JSON
//!    AST) at lines where a statement starts: candidate pairs (s, v)
//!    (section 4.1);
//! 4. `shadow`: shadow validation (section 4.2): P with a first-hit `printf`
//!    of every candidate v before its s, checked by MSan and valgrind
//!    memcheck; its output is the reference PRINT(P, s, v);
//! 5. `augment`: line augmentation (section 4.3): `opt_me_not();` before an s
//!    that has no `is_stmt` row in the optimized binary's line table, the
//!    barrier defined in a separate translation unit;
//! 6. `check`: Algorithm 1, batched: one debugger session per (binary,
//!    debugger) checks every pair of that binary at the first hit of its line;
//! 7. `triage`: cross-debugger verdict, culprit bisection (`bisect`), dedup
//!    signature; `reduce`: cvise with a generated interestingness script (s marked by the
//!    comment `/*DOPPEL_S*/`, which changes no code);
//!    `bundle`: the bug-report bundle.
//!
//! `rust`: Rust seeds (section 6.1), references from the -O0 build in GDB,
//! the barrier in a crate of its own, the same checker and records.
//!
//! `record`: the stored records (finding, session, program), written and
//! read through one type each. `technique`: the technique seam (show, replay, repro, report) for the
//! commands.
//!
//! The types below are the plain data that crosses these steps.

#![deny(missing_docs)]

pub mod accuracy;
pub mod augment;
pub mod bench;
pub mod bisect;
pub mod builder;
pub mod bundle;
pub mod campaign;
pub mod check;
pub mod config;
pub mod culprit;
pub mod finding;
pub mod inputs;
pub mod probe;
pub mod program;
pub mod record;
pub mod reduce;
pub mod replay;
pub mod rust;
pub mod seed;
pub mod shadow;
pub mod technique;
pub mod toolchain;
pub mod triage;
pub mod value;
pub mod wellformed;

use serde::{Deserialize, Serialize};
use std::fmt;

/// The scope oracle's types (section 4.1) live with the C analysis that
/// produces them.
pub use doppel_lang::c::clang_scope::{ScopedVariable, VarKind};

/// An actionable pair (s, v) of the paper: a covered line `line` (1-based)
/// where a statement starts and a variable in scope there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pair {
    /// Line s, 1-based.
    pub line: u32,
    /// Variable v, as the scope oracle found it (name, type, kind).
    pub variable: ScopedVariable,
}

/// A pair whose shadow program was free of undefined behaviour, with the
/// reference value PRINT(P, s, v): what v held at the first hit of s, as a
/// normalized rendering (decimal integer; `null`/`non-null` for pointers;
/// `{a, b, ...}` for arrays).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The pair (s, v).
    pub pair: Pair,
    /// PRINT(P, s, v) at the first hit of s, normalized as above.
    pub value: String,
    /// v at the next executions of s (the 2nd, 3rd, ... up to
    /// [`REFERENCE_HITS`] in all), same rendering; fewer when s ran fewer
    /// times. Not a reference (they are not shadow-validated): they only
    /// tell a debugger that paused at a later execution of s from a wrong
    /// value (see [`CheckVerdict::LaterHit`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub later: Vec<String>,
}

impl Reference {
    /// A reference with no later values.
    pub fn new(pair: Pair, value: String) -> Reference {
        Reference {
            pair,
            value,
            later: Vec::new(),
        }
    }

    /// v at the `hit`-th execution of s (1-based: 1 is [`Reference::value`]),
    /// when recorded.
    pub fn at_hit(&self, hit: u32) -> Option<&str> {
        match hit {
            0 => None,
            1 => Some(&self.value),
            k => self.later.get(k as usize - 2).map(String::as_str),
        }
    }
}

/// Executions of s whose value of v is recorded per reference (the first,
/// the reference, and the next ones in [`Reference::later`]).
pub const REFERENCE_HITS: u32 = 4;

/// Optimization levels checked (the unoptimized reference is always -O0).
pub const LEVELS: [&str; 5] = ["O1", "O2", "O3", "Og", "Os"];

/// The verdict of one check of (s, v) in one optimized binary with one
/// debugger (Algorithm 1's outcome, refined).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum CheckVerdict {
    /// The debugger showed the reference value.
    Match,
    /// The debugger showed another value: the only verdict that is a finding.
    WrongValue {
        /// The reference value.
        expected: String,
        /// The value the debugger showed, normalized like the reference.
        actual: String,
    },
    /// The debugger listed v as optimized out.
    OptimizedOut,
    /// v was not among the frame's variables at s (or had no readable value).
    NotAvailable {
        /// What the debugger said, for people.
        detail: String,
    },
    /// The program ended (or the session did) without pausing at s; also a
    /// breakpoint the debugger put on another line than s.
    NotHit {
        /// How the session ended, or where the breakpoint went.
        detail: String,
    },
    /// The debugger first paused at s at a later execution of s (the
    /// `hit`-th): every variable read at that pause shows its value at that
    /// execution, and at least two differ from their first-hit values. The
    /// optimizer duplicated s (loop peeling or rotation) and gave only a
    /// later copy an `is_stmt` row: a line-table gap, not a wrong value, so
    /// not a finding. `actual` is what the debugger showed.
    LaterHit {
        /// Which execution of s (2 for the second).
        hit: u32,
        /// The value shown, normalized.
        actual: String,
    },
    /// A wrong value that the DWARF at the pause address explains as a
    /// false positive of the method, not a bug (issue 17, part 4;
    /// [`crate::accuracy`]): the pause row lies in a `for` header's
    /// increment or condition clause (loop rotation), or came after a pause
    /// inside the loop's body, or its row has no `is_stmt` flag (a hoisted
    /// instruction of the line). Not a finding; `actual` is what the
    /// debugger showed.
    NotComparable {
        /// Why the value is not comparable with the -O0 reference.
        reason: String,
        /// The value shown, normalized.
        actual: String,
    },
    /// The debugger crashed, hung or broke protocol during the session.
    DebuggerFailure {
        /// The failure, for people.
        detail: String,
    },
}

impl CheckVerdict {
    /// Stable short name (`match`, `wrong_value`, `optimized_out`,
    /// `not_available`, `not_hit`, `later_hit`, `not_comparable`,
    /// `debugger_failure`).
    pub fn name(&self) -> &'static str {
        match self {
            CheckVerdict::Match => "match",
            CheckVerdict::WrongValue { .. } => "wrong_value",
            CheckVerdict::OptimizedOut => "optimized_out",
            CheckVerdict::NotAvailable { .. } => "not_available",
            CheckVerdict::NotHit { .. } => "not_hit",
            CheckVerdict::LaterHit { .. } => "later_hit",
            CheckVerdict::NotComparable { .. } => "not_comparable",
            CheckVerdict::DebuggerFailure { .. } => "debugger_failure",
        }
    }

    /// Whether this verdict is a finding (a wrong value or a debugger failure).
    pub fn is_finding(&self) -> bool {
        matches!(
            self,
            CheckVerdict::WrongValue { .. } | CheckVerdict::DebuggerFailure { .. }
        )
    }
}

impl fmt::Display for CheckVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckVerdict::WrongValue { expected, actual } => {
                write!(f, "wrong value: expected {expected}, debugger shows {actual}")
            }
            CheckVerdict::LaterHit { hit, actual } => {
                write!(
                    f,
                    "paused first at execution {hit} of the line, where the value is {actual}"
                )
            }
            CheckVerdict::NotComparable { reason, actual } => {
                write!(f, "not comparable (shows {actual}): {reason}")
            }
            CheckVerdict::NotAvailable { detail }
            | CheckVerdict::NotHit { detail }
            | CheckVerdict::DebuggerFailure { detail } => write!(f, "{}: {detail}", self.name()),
            _ => f.write_str(self.name()),
        }
    }
}
