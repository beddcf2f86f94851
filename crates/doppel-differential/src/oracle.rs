//! The differential oracle: are the normalized outputs of N debuggers for the
//! same action equal? If not, which type of divergence is it (DBDB section 3.4)
//! and is it a known, intended policy difference?

use crate::normalize::{self, NormalizationConfig};
use doppel_core::{DivergenceKind, ExecAction, Output, PauseReason, ProgramState, Variable};

/// A difference between the debuggers' outputs for one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub kind: DivergenceKind,
    /// One clause per debugger, naming what differs (`gdb: line 13; lldb: line 14`).
    pub detail: String,
    /// A known intended policy difference, if one is recognised (see [`policy`]).
    pub policy: Option<String>,
}

/// Compares the outputs (one per debugger, `names` in the same order) after
/// normalization. `None` when they agree.
pub fn compare(names: &[String], outputs: &[Output], cfg: &NormalizationConfig, columns: bool) -> Option<Difference> {
    let norm: Vec<Output> = outputs.iter().map(|o| normalize::output(o, cfg)).collect();
    // Tool failures first: a crashed debugger's other outputs mean nothing.
    if norm.iter().any(|o| matches!(o, Output::Failed { .. })) {
        return Some(diff(DivergenceKind::ToolFailure, names, &norm, describe_failure));
    }
    for i in 1..norm.len() {
        if let Some(kind) = pair(&norm[0], &norm[i], columns) {
            let detail = match kind {
                DivergenceKind::PauseLocation => describe(names, &norm, |o| match o {
                    Output::Paused(s) => format!("paused at {}", s.location),
                    other => short(other),
                }),
                DivergenceKind::CallStack => describe(names, &norm, |o| match o {
                    Output::Paused(s) => format!("stack [{}]", stack(s)),
                    other => short(other),
                }),
                DivergenceKind::Variables => variables_detail(names, &norm),
                _ => describe(names, &norm, short),
            };
            return Some(Difference {
                kind,
                detail,
                policy: None,
            });
        }
    }
    None
}

fn diff(kind: DivergenceKind, names: &[String], norm: &[Output], f: fn(&Output) -> String) -> Difference {
    Difference {
        kind,
        detail: describe(names, norm, f),
        policy: None,
    }
}

fn describe(names: &[String], outputs: &[Output], f: impl Fn(&Output) -> String) -> String {
    names
        .iter()
        .zip(outputs)
        .map(|(n, o)| format!("{n}: {}", f(o)))
        .collect::<Vec<_>>()
        .join("; ")
}

fn describe_failure(o: &Output) -> String {
    match o {
        Output::Failed { kind, detail } => format!("FAILED ({kind:?}) {}", first_line(detail)),
        other => short(other),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn short(o: &Output) -> String {
    match o {
        Output::BreakpointSet { resolved: Some(l), .. } => format!("breakpoint at {l}"),
        Output::BreakpointSet { resolved: None, .. } => "breakpoint rejected".into(),
        Output::BreakpointRemoved { ok, .. } => format!("removed: {ok}"),
        Output::Paused(s) => format!("paused at {}", s.location),
        Output::Finished { exit_code, signal } => match (exit_code, signal) {
            (_, Some(sig)) => format!("finished by {sig}"),
            (Some(c), None) => format!("finished (exit {c})"),
            (None, None) => "finished".into(),
        },
        Output::Failed { kind, detail } => format!("FAILED ({kind:?}) {}", first_line(detail)),
    }
}

fn stack(s: &ProgramState) -> String {
    s.call_stack
        .iter()
        .map(|f| f.function.as_str())
        .collect::<Vec<_>>()
        .join(" <- ")
}

fn variables_detail(names: &[String], norm: &[Output]) -> String {
    // Only the bindings that are not the same in every debugger, per debugger.
    let states: Vec<Option<&ProgramState>> = norm.iter().map(Output::paused).collect();
    let returns: Vec<Option<&Variable>> = states.iter().map(|s| s.and_then(|s| s.return_value.as_ref())).collect();
    if returns.iter().any(|r| r != &returns[0]) {
        return names
            .iter()
            .zip(&returns)
            .map(|(n, r)| match r {
                Some(v) => format!("{n}: returned {}", v.value.text),
                None => format!("{n}: no return value"),
            })
            .collect::<Vec<_>>()
            .join("; ");
    }
    let mut differing: Vec<&str> = Vec::new();
    for s in states.iter().flatten() {
        for v in &s.variables {
            let same_everywhere = states.iter().flatten().all(|o| o.variables.contains(v));
            if !same_everywhere && !differing.contains(&v.name.as_str()) {
                differing.push(&v.name);
            }
        }
    }
    names
        .iter()
        .zip(&states)
        .map(|(n, s)| {
            let shown: Vec<String> = differing
                .iter()
                .map(
                    |name| match s.and_then(|s| s.variables.iter().find(|v| v.name == *name)) {
                        Some(v) => format!("{}:{}={}", v.name, v.type_name.as_deref().unwrap_or("?"), v.value.text),
                        None => format!("{name} absent"),
                    },
                )
                .collect();
            format!("{n}: {}", shown.join(" "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The divergence type between two normalized outputs, if any.
fn pair(a: &Output, b: &Output, columns: bool) -> Option<DivergenceKind> {
    use Output::*;
    match (a, b) {
        (BreakpointSet { resolved: ra, .. }, BreakpointSet { resolved: rb, .. }) => match (ra, rb) {
            (Some(x), Some(y)) if normalize::same_location(x, y, columns) => None,
            (None, None) => None,
            _ => Some(DivergenceKind::BreakpointLocation),
        },
        (BreakpointRemoved { ok: x, .. }, BreakpointRemoved { ok: y, .. }) => {
            (x != y).then_some(DivergenceKind::BreakpointRemoval)
        }
        (Paused(x), Paused(y)) => {
            if !normalize::same_location(&x.location, &y.location, columns) {
                Some(DivergenceKind::PauseLocation)
            } else if x
                .call_stack
                .iter()
                .map(|f| &f.function)
                .ne(y.call_stack.iter().map(|f| &f.function))
            {
                Some(DivergenceKind::CallStack)
            } else if x.variables != y.variables || x.return_value != y.return_value {
                Some(DivergenceKind::Variables)
            } else {
                None
            }
        }
        (
            Finished {
                exit_code: c1,
                signal: s1,
            },
            Finished {
                exit_code: c2,
                signal: s2,
            },
        ) => (c1 != c2 || s1 != s2).then_some(DivergenceKind::Termination),
        (Finished { .. }, _) | (_, Finished { .. }) => Some(DivergenceKind::Termination),
        // Mismatched output kinds (pause vs breakpoint answer) cannot happen for
        // the same action; treat them as a protocol-level disagreement.
        _ => Some(DivergenceKind::ToolFailure),
    }
}

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
    let main_only = before.call_stack.iter().take_while(|f| f.function != "main").count() == 0;
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
            let caller = before.call_stack.get(1)?;
            let call_line = caller.location.as_ref()?.line;
            // One debugger stopped on the call line in the caller; the other
            // went on (to the next line, or into the statement's next call).
            let mid_line = states.iter().any(|s| {
                s.call_stack.len() + 1 == before.call_stack.len()
                    && s.call_stack.first().map(|f| &f.function) == Some(&caller.function)
                    && s.location.line == call_line
            });
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

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::{FailureKind, Frame, Location, PauseReason, Value, Variable, VariableKind};

    fn paused(line: u32, stack: &[&str], vars: &[(&str, &str)]) -> Output {
        Output::Paused(ProgramState {
            location: Location::line("p.c", line),
            reason: PauseReason::Step,
            call_stack: stack
                .iter()
                .map(|f| Frame {
                    function: f.to_string(),
                    location: None,
                })
                .collect(),
            variables: vars
                .iter()
                .map(|(n, v)| Variable {
                    name: n.to_string(),
                    type_name: Some("int".into()),
                    value: Value::scalar(*v),
                    kind: VariableKind::Local,
                })
                .collect(),
            signal: None,
            return_value: None,
        })
    }

    fn names() -> Vec<String> {
        vec!["gdb".into(), "lldb".into()]
    }

    #[test]
    fn return_values_are_compared_after_normalization() {
        let cfg = NormalizationConfig::default();
        let with = |text: &str, type_name: Option<&str>| {
            let mut o = paused(5, &["main"], &[("i", "0")]);
            if let Output::Paused(s) = &mut o {
                s.return_value = Some(Variable {
                    name: "(return)".into(),
                    type_name: type_name.map(str::to_string),
                    value: Value::scalar(text),
                    kind: VariableKind::Unknown,
                });
            }
            o
        };
        // GDB gives no type, LLDB does: the same value agrees.
        let same = [with("97 'a'", None), with("'a'", Some("char"))];
        assert_eq!(compare(&names(), &same, &cfg, false), None);
        let d = compare(&names(), &[with("6", None), with("7", Some("int"))], &cfg, false).unwrap();
        assert_eq!(d.kind, DivergenceKind::Variables);
        assert_eq!(d.detail, "gdb: returned 6; lldb: returned 7");
        let d = compare(
            &names(),
            &[with("6", None), paused(5, &["main"], &[("i", "0")])],
            &cfg,
            false,
        )
        .unwrap();
        assert_eq!(d.detail, "gdb: returned 6; lldb: no return value");
    }

    #[test]
    fn equal_states_agree_and_each_part_is_told_apart() {
        let cfg = NormalizationConfig::default();
        let a = paused(5, &["main"], &[("i", "0")]);
        assert_eq!(compare(&names(), &[a.clone(), a.clone()], &cfg, false), None);
        let k = |b: Output| compare(&names(), &[a.clone(), b], &cfg, false).unwrap().kind;
        assert_eq!(k(paused(6, &["main"], &[("i", "0")])), DivergenceKind::PauseLocation);
        assert_eq!(k(paused(5, &["f", "main"], &[("i", "0")])), DivergenceKind::CallStack);
        assert_eq!(k(paused(5, &["main"], &[("i", "1")])), DivergenceKind::Variables);
        assert_eq!(
            k(Output::Finished {
                exit_code: Some(0),
                signal: None
            }),
            DivergenceKind::Termination
        );
        assert_eq!(
            k(Output::failed(doppel_core::FailureKind::Timeout, "no answer")),
            DivergenceKind::ToolFailure
        );
    }

    #[test]
    fn breakpoints_compare_resolved_lines_and_columns_only_when_asked() {
        let cfg = NormalizationConfig::default();
        let bp = |line, col| Output::BreakpointSet {
            requested: Location::line("p.c", 3),
            resolved: Some(Location {
                file: "p.c".into(),
                line,
                column: col,
            }),
            message: Some("prose differs".into()),
        };
        assert_eq!(compare(&names(), &[bp(4, None), bp(4, Some(9))], &cfg, true), None);
        assert_eq!(compare(&names(), &[bp(4, Some(3)), bp(4, Some(9))], &cfg, false), None);
        assert!(compare(&names(), &[bp(4, Some(3)), bp(4, Some(9))], &cfg, true).is_some());
        let d = compare(&names(), &[bp(4, None), bp(5, None)], &cfg, false).unwrap();
        assert_eq!(d.kind, DivergenceKind::BreakpointLocation);
        assert!(
            d.detail.contains("gdb: breakpoint at p.c:4") && d.detail.contains("lldb: breakpoint at p.c:5"),
            "{}",
            d.detail
        );
    }

    #[test]
    fn variables_detail_names_the_differing_binding() {
        let cfg = NormalizationConfig::default();
        let d = compare(
            &names(),
            &[
                paused(5, &["main"], &[("i", "0"), ("j", "1")]),
                paused(5, &["main"], &[("i", "0"), ("j", "2")]),
            ],
            &cfg,
            false,
        )
        .unwrap();
        assert!(d.detail.contains("lldb: j:int=2"), "{}", d.detail);
        assert!(!d.detail.contains("lldb: i:int=0"), "{}", d.detail);
    }

    #[test]
    fn step_out_of_main_is_a_named_policy() {
        let before = paused(9, &["main"], &[]);
        let outs = [paused(9, &["main"], &[]), paused(58, &["__libc_start_call_main"], &[])];
        let d = compare(&names(), &outs, &NormalizationConfig::default(), false).unwrap();
        assert_eq!(
            policy(before.paused(), Some(ExecAction::StepOut), &outs, &d).as_deref(),
            Some("step_out_of_main")
        );
        let inner = paused(3, &["f", "main"], &[]);
        assert_eq!(policy(inner.paused(), Some(ExecAction::StepOut), &outs, &d), None);
    }

    #[test]
    fn a_tool_failure_during_a_step_out_of_main_is_no_policy() {
        let before = paused(9, &["main"], &[]);
        for kind in [FailureKind::Crash, FailureKind::Timeout, FailureKind::Protocol] {
            let outs = [
                paused(9, &["main"], &[]),
                Output::failed(kind, "lldb-dap exited (SIGKILL)"),
            ];
            let d = compare(&names(), &outs, &NormalizationConfig::default(), false).unwrap();
            assert_eq!(d.kind, DivergenceKind::ToolFailure);
            assert_eq!(
                policy(before.paused(), Some(ExecAction::StepOut), &outs, &d),
                None,
                "{kind:?}"
            );
        }
    }
}

#[cfg(test)]
mod policy_tests {
    use super::*;
    use doppel_core::{Frame, Location, PauseReason};

    fn at(line: u32, stack: &[(&str, u32)]) -> Output {
        Output::Paused(ProgramState {
            location: Location::line("p.c", line),
            reason: PauseReason::Step,
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
}
