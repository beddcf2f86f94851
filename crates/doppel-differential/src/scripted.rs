//! A differential run of a given action sequence instead of Algorithm 1's
//! random choices: the test of delta debugging ([`crate::reduce`]) and the
//! replay of a reduced case.
//!
//! Each action is issued to every debugger and the outputs are judged as
//! [`crate::engine`] judges them (the same oracle, the same policies, the
//! same class keys). Differences to a generated run:
//! - a `slide_vs_reject` divergence is noted and the script goes on (with
//!   `continue_past_policies`) without adding the removal: the script holds
//!   it as a recorded action if the original run issued it; the removal
//!   right after such a note is judged with
//!   [`crate::continuation::removal_realigns`], as in the engine;
//! - a `return_lands_mid_line` or `resume_completes_interrupted_step`
//!   divergence (with `continue_past_policies`) is realigned as in the engine
//!   ([`crate::engine::realign_after`]: the same action once more in the
//!   debuggers that stopped short, not a script action) and noted;
//! - a finding after which the debuggers stand in one state is noted and
//!   the script goes on (with `continue_past_policies` and
//!   `findings_per_run` above 1), as in the engine
//!   ([`crate::going_on::past_finding`], realignment included), except on
//!   the script's last action, where a finding ends the run: a reduced
//!   script of a finding that a run went on past ends with it as its
//!   verdict, however many findings the reduction left before it;
//! - an execution action is issued only while every debugger is paused
//!   (after `start`); when the program has finished, or has not been
//!   started, the rest of the script is not issued;
//! - a script that ends with the debuggers still paused ends as
//!   [`Verdict::MaxActions`].

use crate::config::DiffConfig;
use crate::continuation::{self, Realignment};
use crate::engine::{self, NodeTypeOf, Realigned, Recorder, RunOutcome};
use crate::going_on::{self, After};
use crate::normalize;
use crate::oracle::{self, Difference};
use doppel_core::{Action, FailureKind, Finding, Location, Output, ProgramState, Subject, Verdict};
use doppel_debuggers::Debugger;
use futures::future::join_all;

/// Whether a script is well formed: every removal follows a request for the
/// same location that was not removed yet, `start` comes at most once, and
/// no execution action comes before it. Delta debugging skips ill-formed
/// candidates without running them (their outcome is known: not the same
/// finding).
pub fn well_formed(script: &[Action]) -> bool {
    let mut set: Vec<&Location> = Vec::new();
    let mut started = false;
    for a in script {
        match a {
            Action::SetBreakpoint { at } => set.push(at),
            Action::RemoveBreakpoint { at } => match set.iter().position(|l| *l == at) {
                Some(i) => {
                    set.remove(i);
                }
                None => return false,
            },
            Action::Start if started => return false,
            Action::Start => started = true,
            Action::Exec { .. } if !started => return false,
            Action::Exec { .. } => {}
        }
    }
    true
}

/// Runs `script` on `subject` over `debuggers` (at least two) and judges it
/// with `cfg`'s oracle. Never fails: debugger failures become a
/// `tool_failure` divergence, and the debuggers are reset at the end.
pub async fn run(
    debuggers: &mut [Box<dyn Debugger>],
    subject: &Subject,
    script: &[Action],
    cfg: &DiffConfig,
    node_type: NodeTypeOf<'_>,
) -> RunOutcome {
    let mut rec = Recorder::new(debuggers);
    let verdict = drive(debuggers, subject, script, cfg, node_type, &mut rec).await;
    engine::finish(debuggers, rec, verdict).await
}

async fn drive(
    dbg: &mut [Box<dyn Debugger>],
    subject: &Subject,
    script: &[Action],
    cfg: &DiffConfig,
    node_type: NodeTypeOf<'_>,
    rec: &mut Recorder,
) -> Verdict {
    let names: Vec<String> = dbg.iter().map(|d| d.info().name.clone()).collect();
    let finding = |rec: &Recorder, action: &Action, line: Option<u32>, d: Difference| Finding {
        class: crate::class::class_key(d.kind, action.kind(), node_type(line), d.policy.as_deref()),
        action_index: Some(rec.actions - 1),
        last_action: Some(action.clone()),
        line,
        detail: d.detail,
    };
    if let Some(v) = engine::load(dbg, subject, cfg, &names, node_type, rec).await {
        return v;
    }
    // The outputs of the last `slide_vs_reject` request the script went on
    // past, with its location: the removal that follows is judged against them.
    let mut noted: Option<(Location, Vec<Output>)> = None;
    // After `start`: the last outputs and the state before the last execution action.
    let mut outs: Option<Vec<Output>> = None;
    let mut before: Option<ProgramState> = None;
    let mut executed = 0;
    let mut noted_findings = going_on::Noted::default();
    for (n, action) in script.iter().enumerate() {
        match action {
            Action::SetBreakpoint { at } => {
                rec.action(action);
                let o = join_all(dbg.iter_mut().map(|d| d.set_breakpoint(at))).await;
                rec.outputs(dbg, &o);
                if let Some(mut d) = oracle::compare(&names, &o, &cfg.normalization, cfg.compare_columns) {
                    d.policy = oracle::policy(None, None, &o, &d);
                    let realign = d.policy.as_deref().and_then(continuation::after);
                    if !cfg.continue_past_policies || realign != Some(Realignment::RemoveBreakpoint) {
                        return Verdict::Divergence(finding(rec, action, Some(at.line), d));
                    }
                    rec.note(finding(rec, action, Some(at.line), d));
                    noted = Some((at.clone(), o));
                }
            }
            Action::RemoveBreakpoint { at } => {
                rec.action(action);
                let o = join_all(dbg.iter_mut().map(|d| d.remove_breakpoint(at))).await;
                rec.outputs(dbg, &o);
                let d = match noted.take() {
                    Some((l, set)) if &l == at => continuation::removal_realigns(&names, &set, &o, &cfg.normalization),
                    _ => oracle::compare(&names, &o, &cfg.normalization, cfg.compare_columns),
                };
                if let Some(d) = d {
                    return Verdict::Divergence(finding(rec, action, Some(at.line), d));
                }
            }
            Action::Start | Action::Exec { .. } => {
                let exec = match action {
                    Action::Exec { exec } => Some(*exec),
                    _ => None,
                };
                let line = before.as_ref().map(|s| s.location.line);
                match (&outs, exec) {
                    (None, Some(_)) => break,
                    (Some(_), None) => break,
                    (Some(o), Some(_)) if !o.iter().all(|o| matches!(o, Output::Paused(_))) => break,
                    _ => {}
                }
                if let (Some(o), Some(_)) = (&outs, exec) {
                    before = o[0].paused().cloned();
                }
                let line = if exec.is_some() {
                    before.as_ref().map(|s| s.location.line)
                } else {
                    line
                };
                rec.action(action);
                let o = match exec {
                    Some(e) => {
                        executed += 1;
                        join_all(dbg.iter_mut().map(|d| d.exec(e))).await
                    }
                    None => join_all(dbg.iter_mut().map(|d| d.start())).await,
                };
                rec.outputs(dbg, &o);
                if o.iter().all(|x| {
                    matches!(
                        x,
                        Output::Failed {
                            kind: FailureKind::Timeout,
                            ..
                        }
                    )
                }) {
                    return Verdict::Inconclusive {
                        actions: executed,
                        reason: format!(
                            "every debugger timed out on '{action}': the program runs longer than the action timeout"
                        ),
                    };
                }
                if let Some(mut d) = oracle::compare(&names, &o, &cfg.normalization, cfg.compare_columns) {
                    let norm: Vec<Output> = o.iter().map(|x| normalize::output(x, &cfg.normalization)).collect();
                    let b = before.as_ref().map(|s| normalize::state(s, &cfg.normalization));
                    d.policy = oracle::policy(b.as_ref(), exec, &norm, &d);
                    if cfg.continue_past_policies && cfg.realign_steps {
                        match engine::realign_after(dbg, rec, &names, cfg, exec, b.as_ref(), &norm, &o, &d).await {
                            Realigned::Agree(merged) => {
                                rec.note(finding(rec, action, line, d));
                                outs = Some(merged);
                                continue;
                            }
                            Realigned::NotTried => {}
                            Realigned::Differ(why) => d.detail = format!("{}; {why}", d.detail),
                            Realigned::Failed(f) => return Verdict::Divergence(finding(rec, action, line, f)),
                        }
                    }
                    // A finding on the script's last action ends it: there is
                    // nothing left to go on with, and the finding is what a
                    // reduced script is for.
                    if d.policy.is_some() || n + 1 == script.len() {
                        return Verdict::Divergence(finding(rec, action, line, d));
                    }
                    let f = finding(rec, action, line, d.clone());
                    let at = (exec, b.as_ref());
                    match going_on::past_finding(dbg, rec, &names, cfg, &mut noted_findings, at, (&norm, &o), &d, f)
                        .await
                    {
                        After::GoOn(merged) => outs = Some(merged),
                        After::End(f) => return Verdict::Divergence(f),
                    }
                    continue;
                }
                outs = Some(o);
            }
        }
    }
    match outs {
        Some(o) if o.iter().all(|x| matches!(x, Output::Paused(_))) => Verdict::MaxActions { actions: executed },
        _ => Verdict::ProgramFinished { actions: executed },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::ExecAction;

    fn bp(line: u32) -> Action {
        Action::SetBreakpoint {
            at: Location::line("p.c", line),
        }
    }

    #[test]
    fn well_formed_scripts() {
        let rm = |line| Action::RemoveBreakpoint {
            at: Location::line("p.c", line),
        };
        let step = Action::Exec {
            exec: ExecAction::StepOver,
        };
        assert!(well_formed(&[bp(3), rm(3), Action::Start, step.clone()]));
        assert!(well_formed(&[]));
        assert!(!well_formed(&[rm(3), Action::Start]), "removal without request");
        assert!(!well_formed(&[bp(3), rm(3), rm(3)]), "removed twice");
        assert!(!well_formed(&[step.clone(), Action::Start]), "exec before start");
        assert!(!well_formed(&[Action::Start, Action::Start]), "two starts");
    }
}
