//! Going on past known policies (issue 17, "What must exist" item 1): which
//! policy divergences a differential run continues after, and how the
//! debuggers are brought back to one state. DBDB (Lehmann & Pradel, FSE 2018,
//! Algorithm 1) ends a run at its first divergence; on suites whose files
//! open with comment headers nearly every run then ends at its first
//! breakpoint on `slide_vs_reject` and tests nothing past it.
//!
//! The decision per policy (documented in `docs/normalization.md`,
//! "Policies"):
//! - `slide_vs_reject`: continued. The breakpoint is removed again in every
//!   debugger (an ordinary `remove breakpoint` action, stored in the traces,
//!   so `doppel replay` and the reproducers issue it too); afterwards no
//!   debugger holds a breakpoint for that request, whatever it did with it.
//! - every other policy (`step_out_of_main`, `step_past_end_of_main`,
//!   `resume_completes_interrupted_step`, `return_lands_mid_line`,
//!   `frame_end_pause`): ends the run as before. After them the debuggers
//!   are paused at different places (or one has exited), and no action of
//!   the [`doppel_debuggers::Debugger`] trait issued to all of them alike
//!   brings them back together.
//!
//! The technique speaks only the trait's actions; protocols stay in the backends.

use crate::normalize::NormalizationConfig;
use crate::oracle::{Difference, compare};
use doppel_core::{DivergenceKind, Output};

/// The name of the policy a run goes on past by removing the breakpoint.
pub const SLIDE_VS_REJECT: &str = "slide_vs_reject";

/// How the debuggers are brought back to one state after a policy divergence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Realignment {
    /// Remove the requested breakpoint again in every debugger.
    RemoveBreakpoint,
}

/// The realignment a run continues with after a divergence of `policy`, or
/// `None` when that policy still ends the run (see the module's table).
pub fn after(policy: &str) -> Option<Realignment> {
    (policy == SLIDE_VS_REJECT).then_some(Realignment::RemoveBreakpoint)
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
    fn only_slide_vs_reject_is_continued() {
        assert_eq!(after("slide_vs_reject"), Some(Realignment::RemoveBreakpoint));
        for p in [
            "step_out_of_main",
            "step_past_end_of_main",
            "resume_completes_interrupted_step",
            "return_lands_mid_line",
            "frame_end_pause",
        ] {
            assert_eq!(after(p), None, "{p}");
        }
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
