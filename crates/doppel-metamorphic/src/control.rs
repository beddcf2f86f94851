//! The control runs of metamorphic testing (issue 17, "What must exist"
//! item 2): before a sequence, the initial program runs twice to its end
//! with no breakpoint in the debugger under test, and before every test
//! whose transformation changed the program, the follow-up program once.
//! The programs must end the same way (exit status or signal, captured
//! output: [`doppel_debuggers::control::same_tool_disagreement`]). If they
//! do not, the test is not comparable, with both ends and the reason
//! ([`Verdict::NotComparable`]), never a broken relation: a transformation
//! that changed what the program does (it prints `__LINE__`, the address
//! of a local) or a program that is not deterministic (it prints its
//! process id or the time) says nothing about the debugger.
//!
//! Why in the debugger under test and not natively: the relation compares
//! runs in that debugger (its environment, its disabled address-space
//! randomization, its way of starting the program), JavaScript programs
//! have no native run, and the backends already capture the program's
//! output; a native run could differ where the debugged runs agree.
//!
//! A campaign keeps one control result per program in a
//! [`ControlCache`] shared by its jobs (keyed by the program's hash), so
//! every program and follow-up program runs once, not once per seed.

use crate::program::Program;
use doppel_core::{ControlRun, Verdict};
use doppel_debuggers::Debugger;
use doppel_debuggers::control::{ControlCache, same_tool_disagreement};

/// The verdict of a sequence whose initial program ends differently when
/// run twice with no breakpoint (it is not deterministic), `None` when the
/// two runs agree or cannot be judged.
pub async fn initial(cache: &ControlCache, d: &mut dyn Debugger, program: &Program) -> Option<Verdict> {
    let first = cache.get_in(&key(program, "once"), d, &program.subject).await;
    let again = cache.get_in(&key(program, "again"), d, &program.subject).await;
    let controls = vec![label(first, "initial program"), label(again, "initial program, again")];
    same_tool_disagreement(&controls).map(|reason| Verdict::NotComparable {
        reason: format!("the initial program is not deterministic: {reason}"),
        controls,
    })
}

/// The verdict of a test whose follow-up program ends differently from
/// its initial program with no breakpoint, `None` when they end alike or
/// cannot be judged. The initial program's control run is the one of
/// [`initial`] for a sequence's first program, else the follow-up's of
/// the round before (each is held in `cache`).
pub async fn follow_up(
    cache: &ControlCache,
    d: &mut dyn Debugger,
    initial: &Program,
    follow_up: &Program,
) -> Option<Verdict> {
    let before = cache.get_in(&key(initial, "once"), d, &initial.subject).await;
    let after = cache.get_in(&key(follow_up, "once"), d, &follow_up.subject).await;
    let controls = vec![label(before, "initial program"), label(after, "follow-up program")];
    same_tool_disagreement(&controls).map(|reason| Verdict::NotComparable {
        reason: format!("the transformation changed how the program ends: {reason}"),
        controls,
    })
}

/// The cache key of a program's control run: its hash (source and build)
/// and which run of it.
fn key(program: &Program, which: &str) -> String {
    format!("{}|{which}", program.subject.hash)
}

/// A control run named by the debugger and the program's role (`gdb:
/// follow-up program`), as [`doppel_core::ControlRun::debugger`] reads in
/// `doppel show`.
fn label(mut run: ControlRun, role: &str) -> ControlRun {
    run.debugger = format!("{}: {role}", run.debugger);
    run
}
