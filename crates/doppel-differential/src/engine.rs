//! One differential run: DBDB Algorithm 1 (Lehmann & Pradel, FSE 2018,
//! section 3.3), generalized from two to N debuggers.
//!
//! 1. Breakpoint phase: random lines; each breakpoint is set in every
//!    debugger and the resolved locations are compared; with
//!    `removal_probability` it is removed again and the removals compared;
//!    until `breakpoint_count(lines)` breakpoints are kept.
//! 2. Start the program in every debugger.
//! 3. While every debugger is paused and they agree: pick resume / step in /
//!    step over / step out by weight and issue it to all of them, at most
//!    `max_actions` times.
//!
//! The first divergence ends the run, except one that a known policy
//! explains and after which the debuggers can be brought back to one state
//! (`DiffConfig::continue_past_policies`, [`crate::continuation`]): it is
//! recorded as a policy note in the traces and the run goes on (after
//! `return_lands_mid_line` and `resume_completes_interrupted_step`, once the
//! debuggers that stopped short took the same action once more, alone:
//! `DiffConfig::realign_steps`). With continuation, step out is not drawn in
//! `main` itself (`DiffConfig::avoid_step_out_of_main`), and with
//! `DiffConfig::findings_per_run` above 1 the run also goes on past findings
//! after which the debuggers stand in one state ([`crate::going_on`]), and
//! ends at its `findings_per_run`-th new one. Every random choice comes from a
//! ChaCha8 generator seeded with the run's seed, and the next action is chosen
//! only after all debuggers have paused, so a run is determined by its subject,
//! seed and configuration (up to the debuggers' own non-determinism).

use crate::config::{BreakpointLines, DiffConfig};
use crate::continuation::{self, Realignment};
use crate::going_on::{self, After};
use crate::normalize;
use crate::oracle::{self, Difference};
use doppel_core::{
    Action, DivergenceKind, Event, EventKind, ExecAction, Finding, Location, Output, ProgramState, Subject, Trace,
    Verdict,
};
use doppel_debuggers::Debugger;
use futures::future::join_all;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::time::Instant;

/// Maps a 1-based line (or `None`: no line, e.g. for `start`) to the AST node
/// type used in class keys.
pub type NodeTypeOf<'a> = &'a (dyn Fn(Option<u32>) -> String + Sync);

/// The result of one run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// How the run ended (a divergence carries its class, DBDB section 4.3).
    pub verdict: Verdict,
    /// One trace per debugger, in the order of the debuggers given.
    pub traces: Vec<Trace>,
    /// Wall time in milliseconds, load to reset.
    pub duration_ms: f64,
}

/// The traces of a run being recorded (shared with [`crate::scripted`]).
pub(crate) struct Recorder {
    pub(crate) start: Instant,
    pub(crate) traces: Vec<Trace>,
    pub(crate) actions: usize,
}

impl Recorder {
    /// An empty recording over `debuggers`, its clock started.
    pub(crate) fn new(debuggers: &[Box<dyn Debugger>]) -> Recorder {
        Recorder {
            start: Instant::now(),
            traces: debuggers
                .iter()
                .map(|d| Trace {
                    debugger: d.info().clone(),
                    events: vec![],
                })
                .collect(),
            actions: 0,
        }
    }

    pub(crate) fn ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1000.0
    }

    pub(crate) fn action(&mut self, a: &Action) {
        let t = self.ms();
        for tr in &mut self.traces {
            tr.events.push(Event {
                t_ms: t,
                kind: EventKind::Action(a.clone()),
                raw: vec![],
            });
        }
        self.actions += 1;
    }

    /// Records a policy divergence the run goes on past, in every trace.
    pub(crate) fn note(&mut self, f: Finding) {
        let t = self.ms();
        for tr in &mut self.traces {
            tr.events.push(Event {
                t_ms: t,
                kind: EventKind::PolicyNote(f.clone()),
                raw: vec![],
            });
        }
    }

    /// Records a finding the run goes on past (`repeat`: a difference it
    /// noted before), in every trace ([`crate::going_on`]).
    pub(crate) fn finding_note(&mut self, finding: Finding, repeat: bool) {
        let t = self.ms();
        for tr in &mut self.traces {
            tr.events.push(Event {
                t_ms: t,
                kind: EventKind::FindingNote {
                    finding: finding.clone(),
                    repeat,
                },
                raw: vec![],
            });
        }
    }

    /// Issues `exec` once more to the debuggers `lagging` names (indices
    /// into `dbg`) alone, after a policy divergence that
    /// [`continuation::Realignment::RepeatInLagging`] goes on past, and
    /// records it as an [`EventKind::Realignment`] with its output in their
    /// traces only. Returns every debugger's outputs with the lagging ones'
    /// replaced ([`continuation::merged`]).
    pub(crate) async fn realign(
        &mut self,
        dbg: &mut [Box<dyn Debugger>],
        lagging: &[usize],
        exec: ExecAction,
        outs: &[Output],
    ) -> Vec<Output> {
        let mut again = Vec::with_capacity(lagging.len());
        for &i in lagging {
            let t = self.ms();
            self.traces[i].events.push(Event {
                t_ms: t,
                kind: EventKind::Realignment(Action::Exec { exec }),
                raw: vec![],
            });
            let o = dbg[i].exec(exec).await;
            let t = self.ms();
            self.traces[i].events.push(Event {
                t_ms: t,
                kind: EventKind::Output(o.clone()),
                raw: dbg[i].take_transcript(),
            });
            again.push(o);
        }
        continuation::merged(outs, lagging, again)
    }

    pub(crate) fn outputs(&mut self, dbg: &mut [Box<dyn Debugger>], outs: &[Output]) {
        let t = self.ms();
        for ((tr, d), o) in self.traces.iter_mut().zip(dbg.iter_mut()).zip(outs) {
            tr.events.push(Event {
                t_ms: t,
                kind: EventKind::Output(o.clone()),
                raw: d.take_transcript(),
            });
        }
    }
}

/// Runs DBDB's Algorithm 1 on `subject` with `seed` over `debuggers`
/// (at least two). Never fails: debugger failures become a `tool_failure`
/// divergence, and the debuggers are reset at the end either way.
pub async fn run(
    debuggers: &mut [Box<dyn Debugger>],
    subject: &Subject,
    seed: u64,
    cfg: &DiffConfig,
    node_type: NodeTypeOf<'_>,
) -> RunOutcome {
    let mut rec = Recorder::new(debuggers);
    let verdict = drive(debuggers, subject, seed, cfg, node_type, &mut rec).await;
    finish(debuggers, rec, verdict).await
}

/// How every differential run ends (Algorithm 1's [`run`], a script's
/// [`crate::scripted::run`]): every debugger reset, what is left of their
/// transcripts dropped, the traces and the verdict returned. One ending, so
/// the two runners record alike.
pub(crate) async fn finish(debuggers: &mut [Box<dyn Debugger>], rec: Recorder, verdict: Verdict) -> RunOutcome {
    join_all(debuggers.iter_mut().map(|d| d.reset())).await;
    for d in debuggers.iter_mut() {
        d.take_transcript();
    }
    let duration_ms = rec.ms();
    RunOutcome {
        verdict,
        traces: rec.traces,
        duration_ms,
    }
}

async fn drive(
    dbg: &mut [Box<dyn Debugger>],
    subject: &Subject,
    seed: u64,
    cfg: &DiffConfig,
    node_type: NodeTypeOf<'_>,
    rec: &mut Recorder,
) -> Verdict {
    let names: Vec<String> = dbg.iter().map(|d| d.info().name.clone()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let note = |rec: &Recorder, action: Action, line: Option<u32>, d: Difference| Finding {
        class: crate::class::class_key(d.kind, action.kind(), node_type(line), d.policy.as_deref()),
        action_index: Some(rec.actions - 1),
        last_action: Some(action),
        line,
        detail: d.detail,
    };
    let finding = |rec: &Recorder, action: Action, line: Option<u32>, d: Difference| {
        Verdict::Divergence(note(rec, action, line, d))
    };

    if let Some(v) = load(dbg, subject, cfg, &names, node_type, rec).await {
        return v;
    }

    // 1. Breakpoints (Algorithm 1, lines 2-15).
    let root = node_type(None);
    let is_code = |line: u32| node_type(Some(line)) != root;
    let file = subject.source_name.clone();
    let wanted = cfg.breakpoint_count(subject.line_count);
    let mut kept: BTreeSet<u32> = BTreeSet::new();
    // Lines whose breakpoint was removed again after a policy divergence:
    // not drawn again (the same request would diverge the same way).
    let mut passed: BTreeSet<u32> = BTreeSet::new();
    let mut attempts = 0;
    while kept.len() < wanted && attempts < 20 * subject.line_count.max(1) as usize {
        attempts += 1;
        let line = rng.random_range(1..=subject.line_count.max(1));
        if kept.contains(&line)
            || passed.contains(&line)
            || (cfg.breakpoint_lines == BreakpointLines::Code && !is_code(line))
        {
            continue;
        }
        let at = Location::line(file.clone(), line);
        let action = Action::SetBreakpoint { at: at.clone() };
        rec.action(&action);
        let outs = join_all(dbg.iter_mut().map(|d| d.set_breakpoint(&at))).await;
        rec.outputs(dbg, &outs);
        if let Some(mut d) = oracle::compare(&names, &outs, &cfg.normalization, cfg.compare_columns) {
            d.policy = oracle::policy(None, None, &outs, &d);
            let realign = d.policy.as_deref().and_then(continuation::after);
            if !cfg.continue_past_policies || realign != Some(Realignment::RemoveBreakpoint) {
                return finding(rec, action, Some(line), d);
            }
            rec.note(note(rec, action, Some(line), d));
            let removal = Action::RemoveBreakpoint { at: at.clone() };
            rec.action(&removal);
            let removed = join_all(dbg.iter_mut().map(|d| d.remove_breakpoint(&at))).await;
            rec.outputs(dbg, &removed);
            if let Some(d) = continuation::removal_realigns(&names, &outs, &removed, &cfg.normalization) {
                return finding(rec, removal, Some(line), d);
            }
            passed.insert(line);
            continue;
        }
        if rng.random_bool(cfg.removal_probability) {
            let action = Action::RemoveBreakpoint { at: at.clone() };
            rec.action(&action);
            let outs = join_all(dbg.iter_mut().map(|d| d.remove_breakpoint(&at))).await;
            rec.outputs(dbg, &outs);
            if let Some(d) = oracle::compare(&names, &outs, &cfg.normalization, cfg.compare_columns) {
                return finding(rec, action, Some(line), d);
            }
        } else {
            kept.insert(line);
            if let Some(Output::BreakpointSet { resolved: Some(r), .. }) = outs.first() {
                kept.insert(r.line);
            }
        }
    }

    // 2. Start (line 16).
    rec.action(&Action::Start);
    let mut outs = join_all(dbg.iter_mut().map(|d| d.start())).await;
    rec.outputs(dbg, &outs);
    let mut last = (Action::Start, None, None::<ProgramState>);

    // 3. Step and resume (lines 17-27), going on past findings after
    // which the debuggers stand in one state (`findings_per_run`).
    let mut executed = 0;
    let mut noted = going_on::Noted::default();
    loop {
        let (action, line, before) = &last;
        if outs.iter().all(|o| {
            matches!(
                o,
                Output::Failed {
                    kind: doppel_core::FailureKind::Timeout,
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
        if let Some(mut d) = oracle::compare(&names, &outs, &cfg.normalization, cfg.compare_columns) {
            let exec = match action {
                Action::Exec { exec } => Some(*exec),
                _ => None,
            };
            // Policies are recognised on normalized outputs (e.g. without
            // LLDB's frames below main).
            let norm: Vec<Output> = outs.iter().map(|o| normalize::output(o, &cfg.normalization)).collect();
            let before = before.as_ref().map(|s| normalize::state(s, &cfg.normalization));
            d.policy = oracle::policy(before.as_ref(), exec, &norm, &d);
            if cfg.continue_past_policies && cfg.realign_steps {
                match realign_after(dbg, rec, &names, cfg, exec, before.as_ref(), &norm, &outs, &d).await {
                    Realigned::Agree(merged) => {
                        rec.note(note(rec, action.clone(), *line, d));
                        outs = merged;
                        continue;
                    }
                    Realigned::NotTried => {}
                    Realigned::Differ(why) => d.detail = format!("{}; {why}", d.detail),
                    Realigned::Failed(f) => return finding(rec, action.clone(), *line, f),
                }
            }
            if d.policy.is_some() {
                return finding(rec, action.clone(), *line, d);
            }
            let f = note(rec, action.clone(), *line, d.clone());
            let at = (exec, before.as_ref());
            match going_on::past_finding(dbg, rec, &names, cfg, &mut noted, at, (&norm, &outs), &d, f).await {
                After::GoOn(o) => outs = o,
                After::End(f) => return Verdict::Divergence(f),
            }
        }
        match &outs[0] {
            Output::Finished { .. } => return Verdict::ProgramFinished { actions: executed },
            Output::Paused(_) => {}
            _ => return Verdict::ProgramFinished { actions: executed },
        }
        if executed >= cfg.max_actions {
            return Verdict::MaxActions { actions: executed };
        }
        let state = outs[0].paused().cloned();
        let no_step_out = cfg.continue_past_policies
            && cfg.avoid_step_out_of_main
            && state.as_ref().is_some_and(oracle::in_main_itself);
        let exec = pick(&mut rng, cfg, no_step_out);
        let action = Action::Exec { exec };
        rec.action(&action);
        outs = join_all(dbg.iter_mut().map(|d| d.exec(exec))).await;
        rec.outputs(dbg, &outs);
        executed += 1;
        let line = state.as_ref().map(|s| s.location.line);
        last = (action, line, state);
    }
}

/// What a realignment after a policy divergence of an execution action did.
pub(crate) enum Realigned {
    /// The policy is not realigned by repeating the action (or no debugger
    /// stopped short): the run ends on it.
    NotTried,
    /// Every debugger agrees again: the run goes on from these outputs.
    Agree(Vec<Output>),
    /// They still differ: the run ends on the policy divergence; the text
    /// says what the realignment gave.
    Differ(String),
    /// A debugger failed on the repeated action: a tool failure.
    Failed(Difference),
}

/// Brings the debuggers back to one state after the policy divergence `d`
/// of `exec` from the agreed (normalized) state `before`, when its policy
/// is continued by [`continuation::Realignment::RepeatInLagging`]: `exec`
/// once more in the debuggers that stopped short ([`continuation::lagging`],
/// on the normalized outputs `norm`), judged with the oracle on every
/// debugger's outputs (`outs`, with the lagging ones replaced). Shared by
/// Algorithm 1's runs and scripts ([`crate::scripted`]), so a replay
/// realigns exactly where the run did.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn realign_after(
    dbg: &mut [Box<dyn Debugger>],
    rec: &mut Recorder,
    names: &[String],
    cfg: &DiffConfig,
    exec: Option<ExecAction>,
    before: Option<&ProgramState>,
    norm: &[Output],
    outs: &[Output],
    d: &Difference,
) -> Realigned {
    let (Some(policy), Some(exec), Some(before)) = (d.policy.as_deref(), exec, before) else {
        return Realigned::NotTried;
    };
    if continuation::after(policy) != Some(Realignment::RepeatInLagging) {
        return Realigned::NotTried;
    }
    let lagging = continuation::lagging(policy, before, norm);
    if lagging.is_empty() {
        return Realigned::NotTried;
    }
    let merged = rec.realign(dbg, &lagging, exec, outs).await;
    match oracle::compare(names, &merged, &cfg.normalization, cfg.compare_columns) {
        None => Realigned::Agree(merged),
        Some(f) if f.kind == DivergenceKind::ToolFailure => Realigned::Failed(f),
        Some(f) => {
            let who: Vec<&str> = lagging.iter().map(|&i| names[i].as_str()).collect();
            Realigned::Differ(format!(
                "one more '{}' in {} did not bring the debuggers to one state: {}",
                Action::Exec { exec },
                who.join(", "),
                f.detail
            ))
        }
    }
}

/// Loads `subject` into every debugger ([`doppel_debuggers::load_confirmed`]:
/// a failed load is tried once more). A debugger that cannot load the
/// program fails the run before any action: the verdict is returned (a
/// `tool_failure` divergence at `start`), else `None`.
pub(crate) async fn load(
    dbg: &mut [Box<dyn Debugger>],
    subject: &Subject,
    cfg: &DiffConfig,
    names: &[String],
    node_type: NodeTypeOf<'_>,
    rec: &mut Recorder,
) -> Option<Verdict> {
    let loads = join_all(
        dbg.iter_mut()
            .map(|d| doppel_debuggers::load_confirmed(d.as_mut(), subject)),
    )
    .await;
    if loads.iter().any(|o| matches!(o, Output::Failed { .. })) {
        rec.action(&Action::Start);
        let outs: Vec<Output> = loads
            .into_iter()
            .map(|o| {
                if matches!(o, Output::Failed { .. }) {
                    o
                } else {
                    Output::Finished {
                        exit_code: None,
                        signal: None,
                    }
                }
            })
            .collect();
        rec.outputs(dbg, &outs);
        let d = oracle::compare(names, &outs, &cfg.normalization, cfg.compare_columns).unwrap_or_else(|| Difference {
            kind: DivergenceKind::ToolFailure,
            detail: "load failed".into(),
            policy: None,
        });
        let class = crate::class::class_key(
            d.kind,
            doppel_core::ActionKind::Start,
            node_type(None),
            d.policy.as_deref(),
        );
        return Some(Verdict::Divergence(Finding {
            class,
            action_index: Some(rec.actions - 1),
            last_action: Some(Action::Start),
            line: None,
            detail: d.detail,
        }));
    }
    None
}

/// Picks an execution action by weight; with `no_step_out`, step out has
/// weight 0 (unless every other weight is 0 too).
fn pick(rng: &mut ChaCha8Rng, cfg: &DiffConfig, no_step_out: bool) -> ExecAction {
    let weight = |a: ExecAction| {
        if no_step_out && a == ExecAction::StepOut {
            0.0
        } else {
            cfg.weights.weight(a)
        }
    };
    let total: f64 = ExecAction::ALL.iter().map(|a| weight(*a)).sum();
    if total <= 0.0 {
        return pick(rng, cfg, false);
    }
    let mut x = rng.random_range(0.0..total);
    for a in ExecAction::ALL {
        let w = weight(a);
        if x < w {
            return a;
        }
        x -= w;
    }
    ExecAction::Resume
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ActionWeights;

    #[test]
    fn picking_is_seeded_and_honours_zero_weights() {
        let cfg = DiffConfig {
            weights: ActionWeights {
                resume: 0.0,
                step_in: 1.0,
                step_over: 0.0,
                step_out: 1.0,
            },
            ..Default::default()
        };
        let draw = |seed| {
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            (0..50).map(|_| pick(&mut r, &cfg, false)).collect::<Vec<_>>()
        };
        let a = draw(7);
        assert_eq!(a, draw(7));
        assert!(a.iter().all(|x| matches!(x, ExecAction::StepIn | ExecAction::StepOut)));
        assert!(a.contains(&ExecAction::StepIn) && a.contains(&ExecAction::StepOut));
        // Without step out: only step in; with step out the only weight, it stays.
        let mut r = ChaCha8Rng::seed_from_u64(7);
        assert!((0..50).all(|_| pick(&mut r, &cfg, true) == ExecAction::StepIn));
        let only_out = DiffConfig {
            weights: ActionWeights {
                resume: 0.0,
                step_in: 0.0,
                step_over: 0.0,
                step_out: 1.0,
            },
            ..Default::default()
        };
        assert_eq!(pick(&mut r, &only_out, true), ExecAction::StepOut);
    }
}
