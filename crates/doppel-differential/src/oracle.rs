//! The differential oracle: the normalized outputs of N debuggers for the
//! same action are compared ([`doppel_debuggers::compare`]); a difference is
//! checked for a known, intended policy difference.

use doppel_core::{DivergenceKind, ExecAction, Output, PauseReason, ProgramState};
pub use doppel_debuggers::compare::{Difference, compare};

/// Recognises known, intended policy differences (documented in
/// `docs/normalization.md`, section "Policies"). They are still findings, but
/// their class key carries the policy name so that they do not hide bugs.
///
/// `before` is the agreed state before the action (if paused).
///
/// A tool failure (a debugger that crashed, hung or broke its protocol,
/// `DivergenceKind::ToolFailure`) never carries a policy: whatever the action,
/// a failed tool is not an intended difference of behaviour.
pub fn policy(
    before: Option<&ProgramState>,
    action: Option<ExecAction>,
    outputs: &[Output],
    d: &Difference,
) -> Option<String> {
    if d.kind == DivergenceKind::ToolFailure || outputs.iter().any(|o| matches!(o, Output::Failed { .. })) {
        return None;
    }
    let slid = |o: &Output| matches!(o, Output::BreakpointSet { resolved: Some(_), .. });
    let rejected = |o: &Output| matches!(o, Output::BreakpointSet { resolved: None, .. });
    // One debugger slides a breakpoint to the next line with code (GDB does
    // so across function boundaries), another rejects it.
    if d.kind == DivergenceKind::BreakpointLocation && outputs.iter().any(slid) && outputs.iter().any(rejected) {
        return Some("slide_vs_reject".into());
    }
    let before = before?;
    let main_only = in_main_itself(before);
    let states: Vec<&ProgramState> = outputs.iter().filter_map(Output::paused).collect();
    match (action, d.kind) {
        // GDB refuses `finish` in the outermost frame and stays; LLDB steps out
        // of main into the C library's start-up code.
        (Some(ExecAction::StepOut), _) if main_only => Some("step_out_of_main".into()),
        // A step was interrupted by a breakpoint; on resume, LLDB completes
        // the interrupted step plan (it stops with reason "step"), GDB had
        // discarded it and runs to the next breakpoint.
        (Some(ExecAction::Resume), _) if states.iter().any(|s| s.reason == PauseReason::Step) => {
            Some("resume_completes_interrupted_step".into())
        }
        // Stepping off the end of main: one debugger stops in libc's start-up
        // code (with libc debug info), another runs to the exit.
        (
            Some(ExecAction::StepIn | ExecAction::StepOver),
            DivergenceKind::Termination | DivergenceKind::PauseLocation | DivergenceKind::CallStack,
        ) if main_only
            && states
                .iter()
                .any(|s| !s.call_stack.iter().any(|f| f.function == "main")) =>
        {
            Some("step_past_end_of_main".into())
        }
        // Stepping off the end of a callee: one debugger stops back on the
        // call line (mid-statement), another goes on to the next line.
        (Some(ExecAction::StepIn | ExecAction::StepOver), DivergenceKind::PauseLocation) => {
            // Both policies below leave a callee: `before` has a caller
            // with a known call line.
            before.call_stack.get(1)?.location.as_ref()?;
            // One debugger stopped on the call line in the caller; the other
            // went on (to the next line, or into the statement's next call).
            let mid_line = states.iter().any(|s| back_on_call_line(before, s));
            if states.len() == outputs.len() && mid_line {
                return Some("return_lands_mid_line".into());
            }
            // JavaScript: SpiderMonkey pauses once more at the end of the
            // function a step leaves (its closing brace, `frameFinished`);
            // V8 goes on to the caller.
            let depth = before.call_stack.len();
            let top = before.call_stack.first().map(|f| &f.function);
            let at_end = states.iter().any(|s| {
                s.call_stack.len() == depth
                    && s.call_stack.first().map(|f| &f.function) == top
                    && s.location.line > before.location.line
            });
            // V8 is back in a caller, or still on the `return` line (it
            // stops at the statement, then at its expression).
            let returned = states.iter().any(|s| {
                s.call_stack.len() < depth
                    || (s.call_stack.len() == depth
                        && s.call_stack.first().map(|f| &f.function) == top
                        && s.location.line == before.location.line)
            });
            (before.location.file.ends_with(".js") && states.len() == outputs.len() && at_end && returned)
                .then(|| "frame_end_pause".into())
        }
        _ => None,
    }
}

/// Whether `state`, after a step from `before`, is paused back in
/// `before`'s caller (one frame less) on the caller's call line, mid-statement:
/// the debugger that stopped short under `return_lands_mid_line`. False when
/// `before` has no caller or the caller's line is unknown.
pub fn back_on_call_line(before: &ProgramState, state: &ProgramState) -> bool {
    let Some(caller) = before.call_stack.get(1) else {
        return false;
    };
    caller.location.as_ref().is_some_and(|call| {
        state.call_stack.len() + 1 == before.call_stack.len()
            && state.call_stack.first().map(|f| &f.function) == Some(&caller.function)
            && state.location.line == call.line
    })
}

/// Whether `state` is paused in `main` itself (its top frame, or no frame
/// at all): where a step out leaves the program (`step_out_of_main`) and a
/// step past the end of `main` leaves it too (`step_past_end_of_main`).
pub fn in_main_itself(state: &ProgramState) -> bool {
    state.call_stack.iter().take_while(|f| f.function != "main").count() == 0
}

#[cfg(test)]
pub(crate) mod policy_tests {
    use super::*;
    use doppel_core::{Frame, Location, PauseReason};
    use doppel_debuggers::normalize::NormalizationConfig;

    fn at(line: u32, stack: &[(&str, u32)]) -> Output {
        paused(line, PauseReason::Step, stack)
    }

    /// A pause of `p.c` at `line` for `reason`, with the call stack
    /// `stack` (innermost first: function and line); also used by
    /// [`crate::continuation`]'s tests.
    pub(crate) fn paused(line: u32, reason: PauseReason, stack: &[(&str, u32)]) -> Output {
        Output::Paused(ProgramState {
            location: Location::line("p.c", line),
            reason,
            call_stack: stack
                .iter()
                .map(|(f, l)| Frame {
                    function: f.to_string(),
                    location: Some(Location::line("p.c", *l)),
                })
                .collect(),
            variables: vec![],
            signal: None,
            return_value: None,
        })
    }

    #[test]
    fn slide_versus_reject_is_a_policy_but_two_different_slides_are_not() {
        let names = vec!["gdb".to_string(), "lldb".to_string()];
        let cfg = NormalizationConfig::default();
        let bp = |r: Option<u32>| Output::BreakpointSet {
            requested: Location::line("p.c", 2),
            resolved: r.map(|l| Location::line("p.c", l)),
            message: None,
        };
        let outs = [bp(Some(7)), bp(None)];
        let d = compare(&names, &outs, &cfg, false).unwrap();
        assert_eq!(policy(None, None, &outs, &d).as_deref(), Some("slide_vs_reject"));
        let outs = [bp(Some(7)), bp(Some(8))];
        let d = compare(&names, &outs, &cfg, false).unwrap();
        assert_eq!(policy(None, None, &outs, &d), None);
    }

    #[test]
    fn a_resume_that_ends_in_a_step_stop_is_a_policy() {
        let names = vec!["gdb".to_string(), "lldb".to_string()];
        let cfg = NormalizationConfig::default();
        let mut before = at(5, &[("classify", 5), ("main", 29)]);
        if let Output::Paused(s) = &mut before {
            s.reason = PauseReason::Breakpoint;
        }
        let mut lldb = at(28, &[("main", 28)]);
        if let Output::Paused(s) = &mut lldb {
            s.reason = PauseReason::Step;
        }
        let mut gdb = at(5, &[("classify", 5), ("main", 29)]);
        if let Output::Paused(s) = &mut gdb {
            s.reason = PauseReason::Breakpoint;
        }
        let outs = [gdb, lldb];
        let d = compare(&names, &outs, &cfg, false).unwrap();
        assert_eq!(
            policy(before.paused(), Some(ExecAction::Resume), &outs, &d).as_deref(),
            Some("resume_completes_interrupted_step")
        );
    }

    #[test]
    fn a_pause_at_the_end_of_a_javascript_function_is_a_policy() {
        let names = vec!["chromium".to_string(), "firefox".to_string()];
        let cfg = NormalizationConfig::default();
        let js = |o: Output| match o {
            Output::Paused(mut s) => {
                s.location.file = "prog.js".into();
                for f in &mut s.call_stack {
                    if let Some(l) = f.location.as_mut() {
                        l.file = "prog.js".into();
                    }
                }
                Output::Paused(s)
            }
            o => o,
        };
        // `return y;` on line 3 of square, called from main's line 11.
        let before = js(at(3, &[("square", 3), ("main", 11), ("(anonymous)", 16)]));
        let outs = [
            js(at(9, &[("main", 9), ("(anonymous)", 16)])),
            js(at(4, &[("square", 4), ("main", 11), ("(anonymous)", 16)])),
        ];
        let d = compare(&names, &outs, &cfg, false).unwrap();
        assert_eq!(
            policy(before.paused(), Some(ExecAction::StepOver), &outs, &d).as_deref(),
            Some("frame_end_pause")
        );
        // V8's second stop on the `return` line against SpiderMonkey's stop at `}`.
        let outs = [
            js(at(3, &[("square", 3), ("main", 11), ("(anonymous)", 16)])),
            js(at(4, &[("square", 4), ("main", 11), ("(anonymous)", 16)])),
        ];
        let d = compare(&names, &outs, &cfg, false).unwrap();
        assert_eq!(
            policy(before.paused(), Some(ExecAction::StepOver), &outs, &d).as_deref(),
            Some("frame_end_pause")
        );
        // The same shapes in C are not this policy.
        let before = at(3, &[("square", 3), ("main", 11)]);
        let outs = [at(9, &[("main", 9)]), at(4, &[("square", 4), ("main", 11)])];
        let d = compare(&names, &outs, &cfg, false).unwrap();
        assert_eq!(policy(before.paused(), Some(ExecAction::StepOver), &outs, &d), None);
    }

    #[test]
    fn returning_to_the_call_line_versus_the_next_line_is_a_policy() {
        let names = vec!["gdb".to_string(), "lldb".to_string()];
        let cfg = NormalizationConfig::default();
        let before = at(21, &[("series", 21), ("main", 25)]);
        let outs = [at(26, &[("main", 26)]), at(25, &[("main", 25)])];
        let d = compare(&names, &outs, &cfg, false).unwrap();
        assert_eq!(
            policy(before.paused(), Some(ExecAction::StepOver), &outs, &d).as_deref(),
            Some("return_lands_mid_line")
        );
        // Both stay in the callee at different lines: not this policy.
        let outs = [
            at(22, &[("series", 22), ("main", 25)]),
            at(23, &[("series", 23), ("main", 25)]),
        ];
        let d = compare(&names, &outs, &cfg, false).unwrap();
        assert_eq!(policy(before.paused(), Some(ExecAction::StepOver), &outs, &d), None);
    }

    #[test]
    fn step_out_of_main_is_a_named_policy() {
        let names = vec!["gdb".to_string(), "lldb".to_string()];
        let before = at(9, &[("main", 9)]);
        let outs = [at(9, &[("main", 9)]), at(58, &[("__libc_start_call_main", 58)])];
        let d = compare(&names, &outs, &NormalizationConfig::default(), false).unwrap();
        assert_eq!(
            policy(before.paused(), Some(ExecAction::StepOut), &outs, &d).as_deref(),
            Some("step_out_of_main")
        );
        let inner = at(3, &[("f", 3), ("main", 9)]);
        assert_eq!(policy(inner.paused(), Some(ExecAction::StepOut), &outs, &d), None);
    }

    #[test]
    fn a_tool_failure_during_a_step_out_of_main_is_no_policy() {
        let names = vec!["gdb".to_string(), "lldb".to_string()];
        let before = at(9, &[("main", 9)]);
        for kind in [
            doppel_core::FailureKind::Crash,
            doppel_core::FailureKind::Timeout,
            doppel_core::FailureKind::Protocol,
        ] {
            let outs = [at(9, &[("main", 9)]), Output::failed(kind, "lldb-dap exited (SIGKILL)")];
            let d = compare(&names, &outs, &NormalizationConfig::default(), false).unwrap();
            assert_eq!(d.kind, DivergenceKind::ToolFailure);
            assert_eq!(
                policy(before.paused(), Some(ExecAction::StepOut), &outs, &d),
                None,
                "{kind:?}"
            );
        }
    }
}
