//! Going on past findings (issue 17, "What must exist" item 1, and its
//! benchmark: distinct non-policy classes per CPU hour), with
//! `DiffConfig::continue_past_policies` (off: DBDB throughout). DBDB (Lehmann &
//! Pradel, FSE 2018, Algorithm 1) ends a run at its first divergence; once
//! runs go on past known policies ([`crate::continuation`]), most of a run's
//! CPU is its fixed cost (starting the debuggers on the program), and a run
//! that ends at its first finding spends that cost for one class. With
//! `DiffConfig::findings_per_run` above 1 a run goes on past a finding after
//! which the debuggers stand in one state, and ends at its
//! `findings_per_run`-th new finding.
//!
//! Which findings a run goes on past ([`how`]):
//! - a `variables` or `call_stack` difference: every debugger is paused at
//!   the same location (the oracle compares locations first); what they
//!   show differs, where they are does not. The run goes on as it is.
//! - a `pause_location` difference after a step in or over where some
//!   debuggers stayed on the line the step started from (same function,
//!   same frame depth, same line; LLDB stopping at another line-table row
//!   of the line, where GDB steps on to the next line) and the others
//!   moved: the same step is issued once more to those that stayed
//!   ([`crate::engine::Recorder::realign`], an
//!   [`doppel_core::EventKind::Realignment`] in their traces only); if every
//!   debugger then stands on one line, the run goes on (a `variables` or
//!   `call_stack` difference right after the realignment is left to the
//!   next pause, which judges it if it stays).
//! - anything else (a breakpoint or removal difference, a termination
//!   difference, a tool failure, a pause location that one more step does
//!   not realign) ends the run as before.
//!
//! A finding the run goes on past is noted in every trace
//! ([`doppel_core::EventKind::FindingNote`]). A difference the run noted
//! before is a repeat, not a new finding ([`Noted::is_repeat`]): the same
//! class key, or a `variables` difference whose differing variables (in
//! that function) all differed already, or a `call_stack` or
//! `pause_location` difference with the same detail (the same stacks; every
//! debugger paused where it was paused before, as when LLDB stops again at
//! the breakpoint a step starts from, on every pass of a loop); a variable that differs at one pause usually differs at
//! every later one, and counting each pause as a finding would bury a
//! maintainer in one bug. Repeats neither count toward the limit nor make
//! records.
//!
//! Every new finding a run noted is stored as a run record of its own
//! ([`finding_records`]): the run's record with the traces cut after that
//! finding's outputs, the finding as its verdict and `findings_per_run` set
//! to its rank, so `doppel replay`, reduction and the reproducers treat it
//! like any run that ended there (a replay with that limit ends exactly
//! there; a script ends at a finding on its last action, see
//! [`crate::scripted`]).

use crate::config::DiffConfig;
use crate::engine::Recorder;
use crate::oracle::{Difference, compare};
use doppel_core::{DivergenceKind, EventKind, ExecAction, Finding, Output, ProgramState, RunRecord, Verdict};
use doppel_debuggers::Debugger;
use doppel_debuggers::compare::differing_variables;
use std::collections::BTreeSet;

/// How a run can go on after a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// Every debugger is paused at one location: go on as it is.
    AsItIs,
    /// Issue the step once more to these debuggers (indices), which stayed
    /// on the line the step started from.
    RepeatInStayed(Vec<usize>),
    /// The run ends on the finding.
    Ends,
}

/// How a run can go on after the difference `d` (no policy) of the action
/// `exec` (`None`: start) from the agreed state `before`, judged on the
/// normalized outputs `norm` (one per debugger).
pub fn how(d: &Difference, exec: Option<ExecAction>, before: Option<&ProgramState>, norm: &[Output]) -> How {
    if d.policy.is_some() || !norm.iter().all(|o| matches!(o, Output::Paused(_))) {
        return How::Ends;
    }
    match d.kind {
        DivergenceKind::Variables | DivergenceKind::CallStack => How::AsItIs,
        DivergenceKind::PauseLocation => {
            let (Some(ExecAction::StepIn | ExecAction::StepOver), Some(before)) = (exec, before) else {
                return How::Ends;
            };
            let stayed: Vec<usize> = (0..norm.len())
                .filter(|&i| norm[i].paused().is_some_and(|s| on_the_same_line(before, s)))
                .collect();
            if stayed.is_empty() || stayed.len() == norm.len() {
                How::Ends
            } else {
                How::RepeatInStayed(stayed)
            }
        }
        _ => How::Ends,
    }
}

/// Whether `state` is paused on `before`'s line in `before`'s frame (same
/// function, same call-stack depth).
fn on_the_same_line(before: &ProgramState, state: &ProgramState) -> bool {
    state.location.line == before.location.line
        && state.location.file == before.location.file
        && state.call_stack.len() == before.call_stack.len()
        && state.call_stack.first().map(|f| &f.function) == before.call_stack.first().map(|f| &f.function)
}

/// The differences a run noted so far.
#[derive(Debug, Default)]
pub struct Noted {
    /// New findings noted (what `findings_per_run` limits).
    pub new: usize,
    classes: BTreeSet<String>,
    /// (function, variable) pairs that differed.
    variables: BTreeSet<(String, String)>,
    /// Details of call-stack and pause-location differences (where each
    /// debugger stands, or its stack).
    details: BTreeSet<(&'static str, String)>,
}

impl Noted {
    /// Whether the finding `f` (difference `d`, normalized outputs `norm`)
    /// repeats a difference noted before (see the module's text).
    pub fn is_repeat(&self, f: &Finding, d: &Difference, norm: &[Output]) -> bool {
        if self.classes.contains(&f.class.to_string()) {
            return true;
        }
        match d.kind {
            DivergenceKind::Variables => {
                let pairs = variable_pairs(norm);
                !pairs.is_empty() && pairs.iter().all(|p| self.variables.contains(p))
            }
            DivergenceKind::CallStack | DivergenceKind::PauseLocation => {
                self.details.contains(&(d.kind.as_str(), d.detail.clone()))
            }
            _ => false,
        }
    }

    /// Adds a new finding.
    pub fn add(&mut self, f: &Finding, d: &Difference, norm: &[Output]) {
        self.new += 1;
        self.classes.insert(f.class.to_string());
        match d.kind {
            DivergenceKind::Variables => self.variables.extend(variable_pairs(norm)),
            DivergenceKind::CallStack | DivergenceKind::PauseLocation => {
                self.details.insert((d.kind.as_str(), d.detail.clone()));
            }
            _ => {}
        }
    }
}

/// The differing variables of `norm`, each with the function it is in.
fn variable_pairs(norm: &[Output]) -> Vec<(String, String)> {
    let function = norm
        .iter()
        .find_map(Output::paused)
        .and_then(|s| s.call_stack.first())
        .map(|f| f.function.clone())
        .unwrap_or_default();
    differing_variables(norm)
        .into_iter()
        .map(|v| (function.clone(), v.to_string()))
        .collect()
}

/// What the run does after a finding.
pub(crate) enum After {
    /// It goes on from these outputs (every debugger in one state).
    GoOn(Vec<Output>),
    /// It ends on this finding.
    End(Finding),
}

/// Decides and carries out what a run does after the finding `f` (the
/// difference `d`, no policy) of `exec` from the agreed, normalized state
/// `before`: `norm` are the normalized outputs, `outs` the raw ones. Notes
/// the finding in the traces when the run goes on. Shared by Algorithm 1's
/// runs and scripts, so a replay goes on exactly where the run did.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn past_finding(
    dbg: &mut [Box<dyn Debugger>],
    rec: &mut Recorder,
    names: &[String],
    cfg: &DiffConfig,
    noted: &mut Noted,
    (exec, before): (Option<ExecAction>, Option<&ProgramState>),
    (norm, outs): (&[Output], &[Output]),
    d: &Difference,
    mut f: Finding,
) -> After {
    if !cfg.continue_past_policies || cfg.findings_per_run <= 1 {
        return After::End(f);
    }
    let repeat = noted.is_repeat(&f, d, norm);
    if !repeat && noted.new + 1 >= cfg.findings_per_run {
        return After::End(f);
    }
    let outs = match how(d, exec, before, norm) {
        How::AsItIs => outs.to_vec(),
        How::RepeatInStayed(stayed) => {
            let Some(exec) = exec else {
                return After::End(f);
            };
            let merged = rec.realign(dbg, &stayed, exec, outs).await;
            let still = compare(names, &merged, &cfg.normalization, cfg.compare_columns);
            if let Some(still) = still.as_ref().filter(|s| s.kind == DivergenceKind::ToolFailure) {
                // A debugger failed on the extra step: that is the finding.
                f.class.set_part("divergence", DivergenceKind::ToolFailure.as_str());
                f.detail = format!(
                    "{}; then on one more '{}': {}",
                    f.detail,
                    doppel_core::Action::Exec { exec },
                    still.detail
                );
                return After::End(f);
            }
            if let Some(still) = still.as_ref().filter(|s| !on_one_line(s)) {
                let who: Vec<&str> = stayed.iter().map(|&i| names[i].as_str()).collect();
                f.detail = format!(
                    "{}; one more '{}' in {} did not bring the debuggers to one state: {}",
                    f.detail,
                    doppel_core::Action::Exec { exec },
                    who.join(", "),
                    still.detail
                );
                return After::End(f);
            }
            merged
        }
        How::Ends => return After::End(f),
    };
    if !repeat {
        noted.add(&f, d, norm);
    }
    rec.finding_note(f, repeat);
    After::GoOn(outs)
}

/// Whether a difference leaves every debugger on one line (what they show
/// differs, not where they are): a realignment that ends in one realigned
/// them. What they show there is not judged as a finding of its own (the
/// outputs of a realignment are not an action's); a difference that stays
/// is judged at the next pause.
fn on_one_line(d: &Difference) -> bool {
    matches!(d.kind, DivergenceKind::Variables | DivergenceKind::CallStack)
}

/// One run record per new finding `run` went on past (its notes, in
/// order), each as if the run had ended there: the same key with
/// `#finding<k>` appended (k counts from 1), the finding as verdict,
/// `diff.findings_per_run` set to k in the configuration, every trace cut
/// after the outputs of the finding's action (before any realignment and
/// note), and the duration up to there. Empty for a run that noted none.
pub fn finding_records(run: &RunRecord) -> Vec<RunRecord> {
    run.finding_notes()
        .into_iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let at = f.action_index?;
            let k = i + 1;
            let mut r = run.clone();
            r.id = None;
            r.key = format!("{}#finding{k}", run.key);
            r.verdict = Verdict::Divergence(f.clone());
            r.config["diff"]["findings_per_run"] = k.into();
            for t in &mut r.traces {
                t.events.truncate(cut_after_outputs_of(&t.events, at));
            }
            r.duration_ms = r
                .traces
                .iter()
                .filter_map(|t| t.events.last().map(|e| e.t_ms))
                .fold(0.0, f64::max);
            Some(r)
        })
        .collect()
}

/// The length of `events` up to the outputs of the action with index `at`
/// (the outputs directly after it included).
fn cut_after_outputs_of(events: &[doppel_core::Event], at: usize) -> usize {
    let mut index = None::<usize>;
    for (n, e) in events.iter().enumerate() {
        match &e.kind {
            EventKind::Action(_) => {
                let i = index.map_or(0, |i| i + 1);
                if i > at {
                    return n;
                }
                index = Some(i);
            }
            EventKind::Output(_) => {}
            _ if index == Some(at) => return n,
            _ => {}
        }
    }
    events.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::policy_tests::paused;
    use doppel_core::{Action, ClassKey, Event, PauseReason, Trace, Value, Variable, VariableKind};

    fn with_vars(o: Output, vars: &[(&str, &str)]) -> Output {
        let Output::Paused(mut s) = o else { unreachable!() };
        s.variables = vars
            .iter()
            .map(|(n, v)| Variable {
                name: n.to_string(),
                type_name: Some("int".into()),
                value: Value::scalar(*v),
                kind: VariableKind::Local,
            })
            .collect();
        Output::Paused(s)
    }

    fn diff(kind: DivergenceKind) -> Difference {
        Difference {
            kind,
            detail: "d".into(),
            policy: None,
        }
    }

    fn finding(class: &str) -> Finding {
        Finding {
            class: ClassKey::new("differential").with("divergence", class),
            action_index: Some(1),
            last_action: None,
            line: Some(3),
            detail: "d".into(),
        }
    }

    #[test]
    fn a_step_that_leaves_one_debugger_on_its_line_is_repeated_there() {
        let before = paused(8, PauseReason::Step, &[("main", 8)]).paused().cloned().unwrap();
        let stayed = paused(8, PauseReason::Step, &[("main", 8)]);
        let moved = paused(9, PauseReason::Step, &[("main", 9)]);
        let d = diff(DivergenceKind::PauseLocation);
        let both = [moved.clone(), stayed.clone()];
        assert_eq!(
            how(&d, Some(ExecAction::StepOver), Some(&before), &both),
            How::RepeatInStayed(vec![1])
        );
        // A resume, or both elsewhere, or a call stack one deeper: ends.
        assert_eq!(how(&d, Some(ExecAction::Resume), Some(&before), &both), How::Ends);
        let other = paused(12, PauseReason::Step, &[("main", 12)]);
        assert_eq!(
            how(&d, Some(ExecAction::StepIn), Some(&before), &[moved, other]),
            How::Ends
        );
        let deeper = paused(8, PauseReason::Step, &[("f", 8), ("main", 8)]);
        let at9 = paused(9, PauseReason::Step, &[("main", 9)]);
        assert_eq!(
            how(&d, Some(ExecAction::StepIn), Some(&before), &[at9, deeper]),
            How::Ends
        );
        // A variables difference at one pause: as it is; a policy: ends.
        let v = diff(DivergenceKind::Variables);
        assert_eq!(how(&v, None, None, &[stayed.clone(), stayed.clone()]), How::AsItIs);
        let mut p = v.clone();
        p.policy = Some("x".into());
        assert_eq!(how(&p, None, None, &[stayed.clone(), stayed]), How::Ends);
        let finished = Output::Finished {
            exit_code: Some(0),
            signal: None,
        };
        let at8 = paused(8, PauseReason::Step, &[("main", 8)]);
        assert_eq!(
            how(&diff(DivergenceKind::Termination), None, None, &[at8, finished]),
            How::Ends
        );
    }

    #[test]
    fn a_variable_that_differs_again_is_a_repeat() {
        let at = |vars: &[(&str, &str)]| with_vars(paused(8, PauseReason::Step, &[("main", 8)]), vars);
        let first = [at(&[("x", "1"), ("y", "2")]), at(&[("x", "7"), ("y", "2")])];
        let mut noted = Noted::default();
        let d = diff(DivergenceKind::Variables);
        assert!(!noted.is_repeat(&finding("variables"), &d, &first));
        noted.add(&finding("variables"), &d, &first);
        // x differs again (another value), under another class key: a repeat.
        let again = [at(&[("x", "2"), ("y", "3")]), at(&[("x", "9"), ("y", "3")])];
        assert!(noted.is_repeat(&finding("variables again"), &d, &again));
        // y differs now: new.
        let new = [at(&[("x", "2"), ("y", "3")]), at(&[("x", "2"), ("y", "4")])];
        assert!(!noted.is_repeat(&finding("variables y"), &d, &new));
        // The same class key: a repeat whatever differs.
        assert!(noted.is_repeat(&finding("variables"), &d, &new));
        assert_eq!(noted.new, 1);
    }

    #[test]
    fn the_same_pause_places_again_are_a_repeat() {
        let here = |detail: &str| Difference {
            kind: DivergenceKind::PauseLocation,
            detail: detail.into(),
            policy: None,
        };
        let outs = [paused(16, PauseReason::Step, &[("main", 16)])];
        let mut noted = Noted::default();
        let first = here("gdb: paused at p.c:16; lldb: paused at p.c:15:7");
        noted.add(&finding("pause_location|step_over"), &first, &outs);
        // Another action, the same places: a repeat; other places: new.
        assert!(noted.is_repeat(&finding("pause_location|step_in"), &first, &outs));
        let other = here("gdb: paused at p.c:18; lldb: paused at p.c:17:3");
        assert!(!noted.is_repeat(&finding("pause_location|step_in"), &other, &outs));
    }

    #[test]
    fn a_finding_record_ends_at_its_finding() {
        let ev = |kind| Event {
            t_ms: 1.0,
            kind,
            raw: vec![],
        };
        let out = || ev(EventKind::Output(paused(3, PauseReason::Step, &[("main", 3)])));
        let f = finding("variables");
        let events = vec![
            ev(EventKind::Action(Action::Start)),
            out(),
            ev(EventKind::Action(Action::Exec {
                exec: ExecAction::StepOver,
            })),
            out(),
            ev(EventKind::Realignment(Action::Exec {
                exec: ExecAction::StepOver,
            })),
            out(),
            ev(EventKind::FindingNote {
                finding: f.clone(),
                repeat: false,
            }),
            ev(EventKind::Action(Action::Exec {
                exec: ExecAction::Resume,
            })),
            ev(EventKind::Output(Output::Finished {
                exit_code: Some(0),
                signal: None,
            })),
        ];
        let run = RunRecord {
            id: Some(4),
            key: "k".into(),
            technique: "differential".into(),
            campaign: "c".into(),
            subject: doppel_core::Subject {
                name: "p.c".into(),
                language: doppel_core::Language::C,
                source: "/p.c".into(),
                source_name: "p.c".into(),
                line_count: 3,
                binary: None,
                prelude: vec![],
                epilogue: vec![],
                hash: "h".into(),
                build: "gcc -O0 -g".into(),
            },
            seed: 0,
            config: serde_json::json!({"diff": {"findings_per_run": 5}}),
            debuggers: vec![],
            verdict: Verdict::ProgramFinished { actions: 2 },
            traces: vec![Trace {
                debugger: doppel_core::ToolInfo {
                    name: "gdb".into(),
                    version: "13".into(),
                    protocol: "MI".into(),
                    executable: "gdb".into(),
                },
                events,
            }],
            duration_ms: 9.0,
            started_at_ms: 0,
        };
        let rs = finding_records(&run);
        assert_eq!(rs.len(), 1);
        let r = &rs[0];
        assert_eq!(r.key, "k#finding1");
        assert_eq!(r.id, None);
        assert_eq!(r.verdict, Verdict::Divergence(f));
        assert_eq!(r.config["diff"]["findings_per_run"], 1);
        assert_eq!(r.traces[0].events.len(), 4, "cut after the step's own output");
        assert!(r.traces[0].finding_notes().next().is_none());
    }
}
