//! The follow-up run (ISSTA'19 section 3.1, Figure 5): the plan's actions
//! are issued to the live debugger, and the action transformation decides
//! from the debugger's current state what to do next.
//!
//! After every action the answer is checked against the initial run's
//! (mapped) answer with the [`Relation`]. Before that check, pauses the
//! transformation may add are ignored and the run resynchronized:
//! - a pause at the added breakpoint's resolved location (section 3.2.1,
//!   Figure 7): after `start` or a continue, continue again; after a step
//!   out, step out again until the frame the step started in is left; after
//!   a step in or over, set a temporary breakpoint where the initial run's
//!   step paused, continue, and remove it (a debugger that rejects the
//!   temporary breakpoint makes the test inconclusive). The same holds for
//!   a breakpoint requested on a line whose breakability may change
//!   ([`Relation::breakability_may_change`]) that the follow-up run resolved
//!   where the initial run did not (or not there): its pauses are ones the
//!   initial run could not have, until the plan removes it. The other way
//!   round, such a breakpoint that the initial run resolved elsewhere (or
//!   at all) and paused at makes the test inconclusive: the follow-up
//!   cannot pause there (GCC drops an `if` whose emptied body leaves a
//!   condition without side effects, so its line has no code);
//! - a step that paused at inserted code (dead code or a no-op on a line of
//!   its own): a step over (the inserted code calls nothing);
//! - a continue replaced by a step that paused somewhere the continue did
//!   not: continue.
//!
//! The first answer outside the relation ends the run with a violation.
//! Every action issued, including the ones resynchronization adds, is in
//! the follow-up trace, so that the trace is itself a valid test input for
//! the next round (section 3.3).

use crate::action::{Plan, depth};
use crate::relation::Relation;
use doppel_core::{Action, Event, EventKind, ExecAction, FailureKind, Location, Output, Subject, ToolInfo, Trace};
use doppel_debuggers::Debugger;
use doppel_debuggers::compare::Difference;
use doppel_debuggers::normalize::same_location;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// Most pauses one action may be resynchronized over (a breakpoint added in
/// a hot loop); beyond it the test is inconclusive.
pub const MAX_RESYNC: usize = 200;

/// How a follow-up run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum FollowUpOutcome {
    /// Every answer was in the relation.
    Held {
        /// Actions issued (including resynchronization).
        actions: usize,
        /// Pauses ignored (added breakpoint, inserted code).
        ignored_pauses: usize,
    },
    /// The answer to the follow-up trace's action `index` (0-based, as
    /// [`doppel_core::Finding::action_index`]) broke the relation.
    Violated {
        /// Index (0-based) of the follow-up trace's action whose answer broke it.
        index: usize,
        /// The action issued at that step (the replacing step, if replaced).
        action: Action,
        /// The line the action was issued at (the pause before it, or the
        /// breakpoint's requested line).
        line: Option<u32>,
        /// What the answer showed against what the relation expected.
        difference: Difference,
    },
    /// The run cannot be judged (the program outran the action timeout, the
    /// added breakpoint was hit too often).
    Inconclusive {
        /// Why, for people.
        reason: String,
    },
}

/// The follow-up trace and its outcome.
#[derive(Debug, Clone)]
pub struct FollowUp {
    /// The follow-up run's actions and outputs.
    pub trace: Trace,
    /// Whether the relation held.
    pub outcome: FollowUpOutcome,
    /// Wall time, load to reset, in milliseconds.
    pub duration_ms: f64,
}

struct Recorder<'a> {
    dbg: &'a mut dyn Debugger,
    start: Instant,
    trace: Trace,
    actions: usize,
    /// Requested breakpoint locations currently set.
    active: BTreeSet<Location>,
}

impl Recorder<'_> {
    async fn issue(&mut self, action: &Action) -> Output {
        self.push(EventKind::Action(action.clone()), vec![]);
        self.actions += 1;
        let out = match action {
            Action::SetBreakpoint { at } => self.dbg.set_breakpoint(at).await,
            Action::RemoveBreakpoint { at } => self.dbg.remove_breakpoint(at).await,
            Action::Start => self.dbg.start().await,
            Action::Exec { exec } => self.dbg.exec(*exec).await,
        };
        match action {
            Action::SetBreakpoint { at } => {
                self.active.insert(at.clone());
            }
            Action::RemoveBreakpoint { at } => {
                self.active.remove(at);
            }
            _ => {}
        }
        let raw = self.dbg.take_transcript();
        self.push(EventKind::Output(out.clone()), raw);
        out
    }

    fn push(&mut self, kind: EventKind, raw: Vec<doppel_core::RawMessage>) {
        self.trace.events.push(Event {
            t_ms: self.start.elapsed().as_secs_f64() * 1000.0,
            kind,
            raw,
        });
    }
}

/// Runs `plan` on `subject` (the transformed program) with `dbg` and checks
/// every answer with `relation`. Never fails: debugger failures are
/// outcomes (a crash or protocol error breaks the relation as a
/// `tool_failure`; a timeout is inconclusive). The debugger is reset at the
/// end either way.
pub async fn run(dbg: &mut dyn Debugger, subject: &Subject, plan: &Plan, relation: &Relation) -> FollowUp {
    let info: ToolInfo = dbg.info().clone();
    let mut rec = Recorder {
        dbg,
        start: Instant::now(),
        trace: Trace {
            debugger: info,
            events: vec![],
        },
        actions: 0,
        active: BTreeSet::new(),
    };
    let outcome = drive(&mut rec, subject, plan, relation).await;
    rec.dbg.reset().await;
    rec.dbg.take_transcript();
    FollowUp {
        duration_ms: rec.start.elapsed().as_secs_f64() * 1000.0,
        trace: rec.trace,
        outcome,
    }
}

async fn drive(rec: &mut Recorder<'_>, subject: &Subject, plan: &Plan, rel: &Relation) -> FollowUpOutcome {
    let load = doppel_debuggers::load_confirmed(&mut *rec.dbg, subject).await;
    if let Output::Failed { kind, detail } = &load {
        rec.push(EventKind::Action(Action::Start), vec![]);
        rec.push(EventKind::Output(load.clone()), vec![]);
        return failure(0, Action::Start, None, *kind, detail, rel, &load);
    }
    let mut added: Option<Location> = None;
    // Requested location -> where the follow-up resolved it, for breakpoints
    // on lines whose breakability may change that resolved elsewhere than
    // in the initial run.
    let mut unstable: BTreeMap<Location, Location> = BTreeMap::new();
    let mut ignored = 0;
    let mut before: Option<doppel_core::ProgramState> = None;
    for (i, step) in plan.script.steps.iter().enumerate() {
        if let Some(a) = plan.add_breakpoint.as_ref().filter(|a| a.before == i) {
            let out = rec.issue(&Action::SetBreakpoint { at: a.at.clone() }).await;
            match out {
                Output::BreakpointSet { resolved, .. } => added = resolved,
                Output::Failed { kind, detail } => {
                    return failure(
                        rec.actions - 1,
                        Action::SetBreakpoint { at: a.at.clone() },
                        Some(a.at.line),
                        kind,
                        &detail,
                        rel,
                        &step.output,
                    );
                }
                _ => {}
            }
        }
        let replaced = plan.replace_continue.filter(|r| r.index == i);
        let action = match replaced {
            Some(r) => Action::Exec { exec: r.by },
            None => step.action.clone(),
        };
        let line = match &action {
            Action::SetBreakpoint { at } | Action::RemoveBreakpoint { at } => Some(at.line),
            _ => before.as_ref().map(|s| s.location.line),
        };
        let mut out = rec.issue(&action).await;
        if let (Action::SetBreakpoint { at }, Output::BreakpointSet { resolved: Some(r0), .. }) =
            (&action, &step.output)
            && rel.breakability_may_change(at)
            && rel.check(&step.output, &out).is_some()
            && plan.script.steps[i..]
                .iter()
                .filter_map(|s| s.output.paused())
                .any(|s| same_location(r0, &s.location, rel.columns))
        {
            return FollowUpOutcome::Inconclusive {
                reason: format!(
                    "removing code changed where the breakpoint requested at {at} resolves, and the initial run paused \
                     where it resolved there ({r0}): those pauses cannot be expected"
                ),
            };
        }
        match (&action, &out) {
            (Action::SetBreakpoint { at }, Output::BreakpointSet { resolved: Some(r), .. })
                if rel.breakability_may_change(at) && rel.check(&step.output, &out).is_some() =>
            {
                unstable.insert(at.clone(), r.clone());
            }
            (Action::RemoveBreakpoint { at }, _) => {
                unstable.remove(at);
            }
            _ => {}
        }
        if matches!(action, Action::Start | Action::Exec { .. }) {
            let not_expected: Vec<Location> = added.iter().chain(unstable.values()).cloned().collect();
            let ctx = Resync {
                expected: &step.output,
                action: &action,
                before: before.as_ref(),
                not_expected: &not_expected,
                replaced: replaced.is_some(),
                inserted_lines: &plan.inserted_lines,
            };
            match resync(rec, rel, ctx, out).await {
                Ok((o, n)) => {
                    out = o;
                    ignored += n;
                }
                Err(reason) => return FollowUpOutcome::Inconclusive { reason },
            }
        }
        if let Output::Failed { kind, detail } = &out {
            return failure(rec.actions - 1, action, line, *kind, detail, rel, &step.output);
        }
        if let Some(mut difference) = rel.check_answer(&action, &step.output, &out) {
            difference.policy = policy(before.as_ref(), &step.action, &step.output, &out);
            return FollowUpOutcome::Violated {
                index: rec.actions - 1,
                action,
                line,
                difference,
            };
        }
        match &out {
            Output::Paused(s) => before = Some(s.clone()),
            Output::Finished { .. } => break,
            _ => {}
        }
    }
    FollowUpOutcome::Held {
        actions: rec.actions,
        ignored_pauses: ignored,
    }
}

/// Known, intended behaviour behind a broken relation (its class says so;
/// docs/metamorphic.md, "Policies"; the names are the differential oracle's,
/// `docs/normalization.md`). `before` is the follow-up's pause before
/// `action`, `expected` the initial run's answer to it, `out` the follow-up's.
/// - `breakpoint_hit_after_step_onto_it`: a step ended on a breakpoint's
///   address without reporting the breakpoint, and the next continue or
///   step stops there again, reporting it (LLDB 20+: a breakpoint counts as
///   hit only when its instruction is about to run from a resume).
///   Metamorphic runs absorb that re-stop in the LLDB backend
///   ([`crate::campaign::debugger_config`]), so this names only what the
///   backend cannot absorb (a re-stop at another location of a breakpoint
///   with several).
/// - `resume_completes_interrupted_step`: a continue answered, in either
///   run, by a pause with reason "step". A breakpoint interrupted an earlier
///   step over or out, and LLDB keeps that step on its thread-plan stack by
///   design: the next continue completes it. An added breakpoint (or a
///   replaced continue) interrupts steps the other run completed, so the two
///   runs' continues end in different places.
pub fn policy(
    before: Option<&doppel_core::ProgramState>,
    action: &Action,
    expected: &Output,
    out: &Output,
) -> Option<String> {
    use doppel_core::PauseReason;
    // A tool failure never carries a policy.
    if matches!(expected, Output::Failed { .. }) || matches!(out, Output::Failed { .. }) {
        return None;
    }
    let stepped = |o: &Output| o.paused().is_some_and(|s| s.reason == PauseReason::Step);
    if matches!(
        action,
        Action::Exec {
            exec: ExecAction::Resume
        }
    ) && (stepped(expected) || stepped(out))
    {
        return Some("resume_completes_interrupted_step".to_string());
    }
    let (Some(b), Action::Exec { .. }, Output::Paused(s)) = (before, action, out) else {
        return None;
    };
    (b.reason == PauseReason::Step
        && s.reason == PauseReason::Breakpoint
        && b.location == s.location
        && b.call_stack == s.call_stack)
        .then(|| "breakpoint_hit_after_step_onto_it".to_string())
}

/// A failure of the debugger: a timeout is inconclusive (the program may
/// simply run long), anything else breaks the relation unless the initial
/// run failed the same way.
fn failure(
    index: usize,
    action: Action,
    line: Option<u32>,
    kind: FailureKind,
    detail: &str,
    rel: &Relation,
    expected: &Output,
) -> FollowUpOutcome {
    if kind == FailureKind::Timeout {
        return FollowUpOutcome::Inconclusive {
            reason: format!("the debugger timed out on '{action}' in the follow-up run: {detail}"),
        };
    }
    let actual = Output::Failed {
        kind,
        detail: detail.to_string(),
    };
    let difference = rel.check(expected, &actual).unwrap_or_else(|| Difference {
        kind: doppel_core::DivergenceKind::ToolFailure,
        detail: format!("follow-up: {detail}"),
        policy: None,
    });
    FollowUpOutcome::Violated {
        index,
        action,
        line,
        difference,
    }
}

struct Resync<'a> {
    expected: &'a Output,
    action: &'a Action,
    before: Option<&'a doppel_core::ProgramState>,
    /// Resolved locations of breakpoints the initial run did not have there
    /// (the added one, unstable ones): pauses there are ignored.
    not_expected: &'a [Location],
    replaced: bool,
    inserted_lines: &'a [u32],
}

/// Brings the follow-up back to where the initial run paused after
/// `ctx.action` (see the module docs). Returns the output to compare and
/// the number of pauses ignored.
async fn resync(
    rec: &mut Recorder<'_>,
    rel: &Relation,
    ctx: Resync<'_>,
    mut out: Output,
) -> Result<(Output, usize), String> {
    let exec = match ctx.action {
        Action::Exec { exec } => Some(*exec),
        _ => None,
    };
    let is_step = matches!(
        exec,
        Some(ExecAction::StepIn | ExecAction::StepOver | ExecAction::StepOut)
    );
    let mut ignored = 0;
    let mut continued_after_replacement = false;
    let mut temporary: Option<Location> = None;
    let mut stepping_out = false;
    for _ in 0..MAX_RESYNC {
        if rel.check(ctx.expected, &out).is_none() {
            break;
        }
        let Some(s) = out.paused().cloned() else { break };
        let at_added = ctx
            .not_expected
            .iter()
            .any(|a| same_location(a, &s.location, rel.columns));
        let start_depth = ctx.before.map(depth).unwrap_or(1);
        let next = if at_added || (stepping_out && depth(&s) >= start_depth) {
            ignored += 1;
            match exec {
                Some(ExecAction::StepOut) => {
                    stepping_out = true;
                    ExecAction::StepOut
                }
                Some(ExecAction::StepIn | ExecAction::StepOver) => {
                    if let (Output::Paused(e), None) = (ctx.expected, &temporary)
                        && !rec.active.contains(&e.location)
                    {
                        let at = e.location.clone();
                        let set = rec.issue(&Action::SetBreakpoint { at: at.clone() }).await;
                        match &set {
                            Output::Failed { .. } => return Ok((set, ignored)),
                            // A rejected temporary breakpoint (Firefox sets
                            // none outside the source, e.g. in a harness
                            // file) cannot stop the continue where the
                            // initial step paused: the run would go on to a
                            // later pause and report a difference that is
                            // doppel's.
                            Output::BreakpointSet {
                                resolved: None,
                                message,
                                ..
                            } => {
                                return Err(format!(
                                    "cannot resynchronize '{}' after the added breakpoint: the temporary \
                                     breakpoint at {at} was rejected ({})",
                                    ctx.action,
                                    message.as_deref().unwrap_or("no reason given")
                                ));
                            }
                            _ => {}
                        }
                        temporary = Some(at);
                    }
                    ExecAction::Resume
                }
                _ => ExecAction::Resume,
            }
        } else if is_step
            && s.location.file == rel.file
            && ctx.inserted_lines.contains(&s.location.line)
            && temporary.is_none()
        {
            ignored += 1;
            // Inserted code calls nothing: a step over goes to the statement
            // the initial step reached (also after a step out that returned
            // into the caller just before the inserted code).
            ExecAction::StepOver
        } else if ctx.replaced && !continued_after_replacement {
            continued_after_replacement = true;
            ExecAction::Resume
        } else {
            break;
        };
        out = rec.issue(&Action::Exec { exec: next }).await;
    }
    if rel.check(ctx.expected, &out).is_some() && out.paused().is_some() && ignored >= MAX_RESYNC {
        return Err(format!(
            "more than {MAX_RESYNC} pauses to ignore after '{}' (a breakpoint added in a hot loop)",
            ctx.action
        ));
    }
    if let Some(at) = temporary
        && out.paused().is_some()
    {
        let removed = rec.issue(&Action::RemoveBreakpoint { at }).await;
        if matches!(removed, Output::Failed { .. }) {
            return Ok((removed, ignored));
        }
    }
    Ok((out, ignored))
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::PauseReason;

    use crate::test_support::pause_in_main as pause;

    const RESUME: Action = Action::Exec {
        exec: ExecAction::Resume,
    };

    #[test]
    fn a_continue_that_completes_an_interrupted_step_is_named_in_either_run() {
        let before = pause(10, PauseReason::Breakpoint);
        let step = Output::Paused(pause(20, PauseReason::Step));
        let hit = Output::Paused(pause(30, PauseReason::Breakpoint));
        let name = Some("resume_completes_interrupted_step".to_string());
        assert_eq!(policy(Some(&before), &RESUME, &hit, &step), name);
        assert_eq!(policy(Some(&before), &RESUME, &step, &hit), name);
        // Two breakpoint hits in different places are not a policy.
        assert_eq!(
            policy(
                Some(&before),
                &RESUME,
                &hit,
                &Output::Paused(pause(40, PauseReason::Breakpoint))
            ),
            None
        );
        // A step that pauses with reason "step" is what a step does.
        let over = Action::Exec {
            exec: ExecAction::StepOver,
        };
        assert_eq!(policy(Some(&before), &over, &hit, &step), None);
        // A tool failure never carries a policy, even after an interrupted step.
        let crash = Output::failed(doppel_core::FailureKind::Crash, "lldb-dap exited");
        assert_eq!(policy(Some(&before), &RESUME, &step, &crash), None);
        assert_eq!(policy(Some(&before), &RESUME, &crash, &step), None);
    }

    #[test]
    fn a_re_stop_at_the_step_s_breakpoint_is_named() {
        let before = pause(17, PauseReason::Step);
        let again = Output::Paused(pause(17, PauseReason::Breakpoint));
        let next = Output::Paused(pause(18, PauseReason::Breakpoint));
        assert_eq!(
            policy(Some(&before), &RESUME, &next, &again),
            Some("breakpoint_hit_after_step_onto_it".to_string())
        );
        assert_eq!(policy(Some(&before), &RESUME, &again, &next), None);
    }
}
