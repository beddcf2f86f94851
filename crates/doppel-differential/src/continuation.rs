//! Going on past known policies (issue 17, "What must exist" item 1): which
//! policy divergences a differential run continues after, and how the
//! debuggers are brought back to one state. DBDB (Lehmann & Pradel, FSE 2018,
//! Algorithm 1) ends a run at its first divergence; on suites whose files
//! open with comment headers nearly every run then ends at its first
//! breakpoint on `slide_vs_reject` and tests nothing past it.
//!
//! The decision per policy (documented in `docs/normalization.md`,
//! "Which policies a run goes on past"):
//! - `slide_vs_reject`: continued. The breakpoint is removed again in every
//!   debugger (an ordinary `remove breakpoint` action, stored in the traces,
//!   so `doppel replay` and the reproducers issue it too); afterwards no
//!   debugger holds a breakpoint for that request, whatever it did with it.
//! - `return_lands_mid_line` and `resume_completes_interrupted_step`:
//!   continued when one more of the same action, issued only to the
//!   debuggers that stopped short ([`lagging`]: back on the call line
//!   mid-statement; stopped with reason `step` where the others ran on to a
//!   breakpoint), brings every debugger to the same state, judged by the
//!   ordinary oracle. That extra action is a [`doppel_core::EventKind::Realignment`]
//!   in the lagging debuggers' traces only, so the reproducers issue it to
//!   that debugger alone. When the debuggers still differ afterwards, the
//!   run ends with the policy divergence, as before.
//! - every other policy (`step_out_of_main`, `step_past_end_of_main`,
//!   `frame_end_pause`): ends the run as before. After the first two the
//!   program is leaving `main` (nothing of the program is left to step);
//!   the third is not realigned yet.
//!
//! The technique speaks only the trait's actions; protocols stay in the backends.

use crate::normalize::NormalizationConfig;
use crate::oracle::{Difference, back_on_call_line, compare};
use doppel_core::{DivergenceKind, Output, PauseReason, ProgramState};

/// The name of the policy a run goes on past by removing the breakpoint.
pub const SLIDE_VS_REJECT: &str = "slide_vs_reject";

/// The policy after which the debugger that stopped back on the call line
/// takes one more step.
pub const RETURN_LANDS_MID_LINE: &str = "return_lands_mid_line";

/// The policy after which the debugger that completed an interrupted step
/// resumes once more.
pub const RESUME_COMPLETES_INTERRUPTED_STEP: &str = "resume_completes_interrupted_step";

/// How the debuggers are brought back to one state after a policy divergence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Realignment {
    /// Remove the requested breakpoint again in every debugger.
    RemoveBreakpoint,
    /// Issue the diverging execution action once more, only to the
    /// debuggers [`lagging`] names.
    RepeatInLagging,
}

/// The realignment a run continues with after a divergence of `policy`, or
/// `None` when that policy still ends the run (see the module's table).
pub fn after(policy: &str) -> Option<Realignment> {
    match policy {
        SLIDE_VS_REJECT => Some(Realignment::RemoveBreakpoint),
        RETURN_LANDS_MID_LINE | RESUME_COMPLETES_INTERRUPTED_STEP => Some(Realignment::RepeatInLagging),
        _ => None,
    }
}

/// The debuggers (indices into `outputs`) that stopped short after an
/// execution action diverged under `policy`, judged on normalized outputs
/// as [`crate::oracle::policy`] recognised it; empty when there is none or
/// every debugger would be (nothing to realign).
///
/// - `return_lands_mid_line`: paused in the caller of `before`'s frame (one
///   frame less), on the caller's call line.
/// - `resume_completes_interrupted_step`: paused with reason `step` after a
///   resume, where another debugger paused for another reason.
pub fn lagging(policy: &str, before: &ProgramState, outputs: &[Output]) -> Vec<usize> {
    let short: Vec<usize> = match policy {
        RETURN_LANDS_MID_LINE => (0..outputs.len())
            .filter(|&i| outputs[i].paused().is_some_and(|s| back_on_call_line(before, s)))
            .collect(),
        RESUME_COMPLETES_INTERRUPTED_STEP => (0..outputs.len())
            .filter(|&i| outputs[i].paused().is_some_and(|s| s.reason == PauseReason::Step))
            .collect(),
        _ => vec![],
    };
    if short.len() == outputs.len() { vec![] } else { short }
}

/// The outputs after a [`Realignment::RepeatInLagging`]: `outputs` with the
/// lagging debuggers' answers (`again`, in the order of `lagging`) put in
/// their places.
pub fn merged(outputs: &[Output], lagging: &[usize], again: Vec<Output>) -> Vec<Output> {
    let mut out = outputs.to_vec();
    for (&i, o) in lagging.iter().zip(again) {
        out[i] = o;
    }
    out
}

/// Judges the removal that follows a `slide_vs_reject` divergence: `None`
/// when the debuggers are back in one state, else the difference that ends
/// the run.
///
/// `set` are the outputs of the breakpoint request, `removed` those of the
/// removal, per debugger in the same order. Every debugger that resolved the
/// breakpoint must answer `removed` (`BreakpointRemoved { ok: true }`); a
/// debugger that rejected it may answer either way: GDB (`-break-insert -f`)
/// and LLDB (an unverified DAP breakpoint) keep a rejected request as a
/// pending breakpoint, which the removal clears, while the Firefox backend
/// never installed one and answers that none was set. A failed debugger is
/// a tool failure as everywhere ([`compare`]).
pub fn removal_realigns(
    names: &[String],
    set: &[Output],
    removed: &[Output],
    normalization: &NormalizationConfig,
) -> Option<Difference> {
    if removed.iter().any(|o| matches!(o, Output::Failed { .. })) {
        return compare(names, removed, normalization, false);
    }
    let stuck: Vec<String> = names
        .iter()
        .zip(set.iter().zip(removed))
        .filter(|(_, (s, r))| {
            let accepted = matches!(s, Output::BreakpointSet { resolved: Some(_), .. });
            let ok = matches!(r, Output::BreakpointRemoved { ok: true, .. });
            let answered = matches!(r, Output::BreakpointRemoved { .. });
            !answered || (accepted && !ok)
        })
        .map(|(n, (_, r))| format!("{n}: {}", doppel_core::report::describe_output(r)))
        .collect();
    (!stuck.is_empty()).then(|| Difference {
        kind: DivergenceKind::BreakpointRemoval,
        detail: format!(
            "the breakpoint accepted under {SLIDE_VS_REJECT} could not be removed again: {}",
            stuck.join("; ")
        ),
        policy: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::{FailureKind, Location};

    fn set(resolved: Option<u32>) -> Output {
        Output::BreakpointSet {
            requested: Location::line("p.c", 2),
            resolved: resolved.map(|l| Location::line("p.c", l)),
            message: None,
        }
    }

    fn removed(ok: bool) -> Output {
        Output::BreakpointRemoved {
            ok,
            message: (!ok).then(|| "no breakpoint was set at line 2".into()),
        }
    }

    #[test]
    fn which_policies_are_continued_and_how() {
        assert_eq!(after("slide_vs_reject"), Some(Realignment::RemoveBreakpoint));
        for p in ["resume_completes_interrupted_step", "return_lands_mid_line"] {
            assert_eq!(after(p), Some(Realignment::RepeatInLagging), "{p}");
        }
        for p in [
            "step_out_of_main",
            "step_past_end_of_main",
            "frame_end_pause",
            "no_such_policy",
        ] {
            assert_eq!(after(p), None, "{p}");
        }
    }

    use crate::oracle::policy_tests::paused;

    #[test]
    fn the_debugger_back_on_the_call_line_lags_after_a_return() {
        // Paused in `square` (line 3) called from main's line 12; one
        // debugger stops back on line 12 mid-statement, the other on 13.
        let before = paused(3, PauseReason::Step, &[("square", 3), ("main", 12)]);
        let before = before.paused().unwrap();
        let outs = [
            paused(13, PauseReason::Step, &[("main", 13)]),
            paused(12, PauseReason::Step, &[("main", 12)]),
        ];
        assert_eq!(lagging(RETURN_LANDS_MID_LINE, before, &outs), vec![1]);
        // Both back on the call line: nobody is ahead, nothing to realign.
        let both = [outs[1].clone(), outs[1].clone()];
        assert!(lagging(RETURN_LANDS_MID_LINE, before, &both).is_empty());
        // Not the policy's shape (a finished debugger): nothing either.
        let done = [
            Output::Finished {
                exit_code: Some(0),
                signal: None,
            },
            outs[0].clone(),
        ];
        assert!(lagging(RETURN_LANDS_MID_LINE, before, &done).is_empty());
    }

    #[test]
    fn the_debugger_that_completed_the_interrupted_step_lags_after_a_resume() {
        let before = paused(7, PauseReason::Breakpoint, &[("main", 7)]);
        let before = before.paused().unwrap();
        let outs = [
            paused(20, PauseReason::Breakpoint, &[("main", 20)]),
            paused(8, PauseReason::Step, &[("main", 8)]),
        ];
        assert_eq!(lagging(RESUME_COMPLETES_INTERRUPTED_STEP, before, &outs), vec![1]);
        assert!(lagging("slide_vs_reject", before, &outs).is_empty());
        let m = merged(&outs, &[1], vec![outs[0].clone()]);
        assert_eq!(m, vec![outs[0].clone(), outs[0].clone()]);
    }

    #[test]
    fn the_accepting_debugger_must_remove_the_rejecting_one_may_have_nothing() {
        let names = vec!["gdb".to_string(), "lldb".to_string()];
        let n = NormalizationConfig::default();
        let s = [set(Some(7)), set(None)];
        assert_eq!(removal_realigns(&names, &s, &[removed(true), removed(true)], &n), None);
        assert_eq!(removal_realigns(&names, &s, &[removed(true), removed(false)], &n), None);
        let d = removal_realigns(&names, &s, &[removed(false), removed(true)], &n).unwrap();
        assert_eq!(d.kind, DivergenceKind::BreakpointRemoval);
        assert!(d.detail.contains("gdb: not removed"), "{}", d.detail);
        let failed = Output::failed(FailureKind::Crash, "lldb-dap exited");
        let d = removal_realigns(&names, &s, &[removed(true), failed], &n).unwrap();
        assert_eq!(d.kind, DivergenceKind::ToolFailure);
    }
}
