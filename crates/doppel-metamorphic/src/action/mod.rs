//! Action transformations (ISSTA'19 section 3.2.1) and the follow-up plan
//! every transformation produces.
//!
//! One file per transformation: [`add_breakpoint`], [`replace_continue`],
//! [`sliding`]. Program transformations (section 3.2.2) produce a plan too
//! (see `round`): the mapped script, the inserted lines and the expected
//! extra variable.

use crate::script::Script;
use doppel_core::{ExecAction, Location, ProgramState};

pub mod add_breakpoint;
pub mod replace_continue;
pub mod sliding;

/// A breakpoint the follow-up run adds before step `before` of the script.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AddedBreakpoint {
    /// Index (0-based) of the script step the breakpoint is added before.
    pub before: usize,
    /// Where it is set (file and 1-based line of the program).
    pub at: Location,
}

/// A continue (step `index` of the script) the follow-up run replaces by `by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReplacedContinue {
    /// Index (0-based) of the replaced `continue` in the script.
    pub index: usize,
    /// The step that replaces it (`step over`, `step in`).
    pub by: ExecAction,
}

/// What the follow-up run does and expects: the script of the initial run
/// (moved to the transformed program) with the live modifications of one
/// transformation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Actions to issue and the outputs they must produce.
    pub script: Script,
    /// The breakpoint the add-breakpoint transformation adds (ISSTA'19 section 3.2.1).
    pub add_breakpoint: Option<AddedBreakpoint>,
    /// The continue the replace-continue transformation replaces (ISSTA'19 section 3.2.1).
    pub replace_continue: Option<ReplacedContinue>,
    /// Lines of the transformed program that hold inserted code: a step
    /// that pauses there is repeated (the initial program had no statement
    /// there to pause at).
    pub inserted_lines: Vec<u32>,
}

/// Depth of the call stack of a pause (1 in the outermost frame of the
/// program). Frames below `main` (LLDB shows the C library's start-up
/// frames) do not count: stepping out of `main` leaves the program.
pub(crate) fn depth(s: &ProgramState) -> usize {
    s.call_stack
        .iter()
        .position(|f| f.function == "main")
        .map_or(s.call_stack.len(), |i| i + 1)
        .max(1)
}

/// Indices `i` where the debugger is not running before step `i`: before
/// `start`, or right after a pause. New actions may be issued there.
pub(crate) fn issuable_points(script: &Script) -> Vec<usize> {
    let start = script.start_index().unwrap_or(script.steps.len());
    (0..script.steps.len())
        .filter(|&i| i <= start || script.steps[i - 1].output.paused().is_some())
        .collect()
}
