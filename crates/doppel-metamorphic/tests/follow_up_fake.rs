//! The live follow-up run against a simulated debugger: resynchronization
//! after an added breakpoint (a consumed step over and step out), a
//! replaced continue, and a planted bug the relation must catch. The
//! real-debugger tests are in `tests/meta_real.rs`.

use async_trait::async_trait;
use doppel_core::{
    Action, DivergenceKind, ExecAction, Frame, Language, Location, Output, PauseReason, ProgramState, RawMessage,
    Subject, ToolInfo,
};
use doppel_debuggers::{Capabilities, Debugger};
use doppel_metamorphic::action::{AddedBreakpoint, Plan, ReplacedContinue};
use doppel_metamorphic::follow_up::{self, FollowUpOutcome};
use doppel_metamorphic::relation::Relation;
use doppel_metamorphic::script::{Script, Step};
use std::collections::BTreeSet;

/// `main` (depth 1) calls `f` (depth 2, lines 2-4) from lines 11 and 13.
const TICKS: [(u32, usize); 13] = [
    (10, 1),
    (11, 1),
    (2, 2),
    (3, 2),
    (4, 2),
    (11, 1),
    (12, 1),
    (13, 1),
    (2, 2),
    (3, 2),
    (4, 2),
    (13, 1),
    (14, 1),
];

/// Ticks that return into the middle of a line: breakpoints (at a line's
/// first instruction) are not hit there.
const RETURNS: [usize; 2] = [5, 11];

/// A debugger of the program above: steps and continues move along
/// `TICKS`; every step stops at a breakpoint on its way.
struct Sim {
    info: ToolInfo,
    pos: Option<usize>,
    /// Requested lines in the order set.
    bps: Vec<u32>,
    /// Planted bug: with more than this many breakpoints, the oldest is ignored.
    forgets_beyond: Option<usize>,
    /// A variable `g` whose value is the number of loads so far (garbage
    /// that changes from run to run).
    noisy: bool,
    loads: usize,
    /// A line where breakpoints are rejected (as Firefox rejects them
    /// outside the source, e.g. in a test harness file).
    rejects: Option<u32>,
}

impl Sim {
    fn new(forgets_beyond: Option<usize>) -> Self {
        Self {
            info: ToolInfo {
                name: "sim".into(),
                version: "1".into(),
                protocol: "sim".into(),
                executable: "sim".into(),
            },
            pos: None,
            bps: vec![],
            forgets_beyond,
            noisy: false,
            loads: 0,
            rejects: None,
        }
    }

    fn active(&self) -> BTreeSet<u32> {
        let skip = match self.forgets_beyond {
            Some(n) if self.bps.len() > n => self.bps.len() - n,
            _ => 0,
        };
        self.bps.iter().skip(skip).copied().collect()
    }

    fn output(&self) -> Output {
        match self.pos {
            Some(i) if i < TICKS.len() => {
                let (line, depth) = TICKS[i];
                let mut stack = vec![Frame {
                    function: "main".into(),
                    location: None,
                }];
                if depth == 2 {
                    stack.insert(
                        0,
                        Frame {
                            function: "f".into(),
                            location: None,
                        },
                    );
                }
                Output::Paused(ProgramState {
                    location: Location::line("p.c", line),
                    reason: PauseReason::Step,
                    call_stack: stack,
                    variables: if self.noisy {
                        vec![doppel_core::Variable {
                            name: "g".into(),
                            type_name: None,
                            value: doppel_core::Value::scalar(self.loads.to_string()),
                            kind: doppel_core::VariableKind::Local,
                        }]
                    } else {
                        vec![]
                    },
                    signal: None,
                    return_value: None,
                })
            }
            _ => Output::Finished {
                exit_code: Some(0),
                signal: None,
            },
        }
    }

    /// The next tick after `from` that `stop` accepts or that has a breakpoint.
    fn advance(&mut self, from: Option<usize>, stop: impl Fn(usize) -> bool) -> Output {
        let bps = self.active();
        let first = from.map_or(0, |i| i + 1);
        self.pos = Some(
            (first..TICKS.len())
                .find(|&j| stop(j) || (bps.contains(&TICKS[j].0) && !RETURNS.contains(&j)))
                .unwrap_or(TICKS.len()),
        );
        self.output()
    }
}

#[async_trait]
impl Debugger for Sim {
    fn info(&self) -> &ToolInfo {
        &self.info
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            columns: false,
            warm_reuse: true,
            argument_flags: false,
            notes: vec![],
        }
    }
    async fn load(&mut self, _: &Subject) -> Output {
        self.loads += 1;
        self.pos = None;
        self.bps.clear();
        Output::Finished {
            exit_code: None,
            signal: None,
        }
    }
    async fn set_breakpoint(&mut self, at: &Location) -> Output {
        if self.rejects == Some(at.line) {
            return Output::BreakpointSet {
                requested: at.clone(),
                resolved: None,
                message: Some(format!("line {} takes no breakpoint", at.line)),
            };
        }
        self.bps.push(at.line);
        Output::BreakpointSet {
            requested: at.clone(),
            resolved: Some(at.clone()),
            message: None,
        }
    }
    async fn remove_breakpoint(&mut self, at: &Location) -> Output {
        let ok = self
            .bps
            .iter()
            .position(|&l| l == at.line)
            .map(|i| self.bps.remove(i))
            .is_some();
        Output::BreakpointRemoved { ok, message: None }
    }
    async fn start(&mut self) -> Output {
        self.advance(None, |_| false)
    }
    async fn exec(&mut self, action: ExecAction) -> Output {
        let Some(i) = self.pos else { return self.output() };
        let (line, depth) = TICKS[i];
        // Line steps: the rest of the current line (a return into it) is skipped.
        let other_line = move |j: usize| TICKS[j] != (line, depth);
        match action {
            ExecAction::Resume => self.advance(Some(i), |_| false),
            ExecAction::StepIn => self.advance(Some(i), other_line),
            ExecAction::StepOver => self.advance(Some(i), move |j| TICKS[j].1 <= depth && other_line(j)),
            ExecAction::StepOut => self.advance(Some(i), |j| TICKS[j].1 < depth),
        }
    }
    async fn reset(&mut self) {}
    async fn shutdown(&mut self) {}
    fn take_transcript(&mut self) -> Vec<RawMessage> {
        vec![]
    }
}

fn subject() -> Subject {
    Subject {
        name: "p.c".into(),
        language: Language::C,
        source: "/nonexistent/p.c".into(),
        source_name: "p.c".into(),
        line_count: 14,
        binary: None,
        prelude: vec![],
        epilogue: vec![],
        hash: "h".into(),
        build: "sim".into(),
    }
}

/// The initial run: `actions` on a correct simulator, as a script.
async fn initial(actions: &[Action]) -> Script {
    record(&mut Sim::new(None), actions).await
}

/// `actions` on `sim` after a load, as a script.
async fn record(sim: &mut Sim, actions: &[Action]) -> Script {
    sim.load(&subject()).await;
    let mut steps = vec![];
    for a in actions {
        let output = match a {
            Action::SetBreakpoint { at } => sim.set_breakpoint(at).await,
            Action::RemoveBreakpoint { at } => sim.remove_breakpoint(at).await,
            Action::Start => sim.start().await,
            Action::Exec { exec } => sim.exec(*exec).await,
        };
        steps.push(Step {
            action: a.clone(),
            output,
        });
    }
    Script { steps }
}

fn bp(line: u32) -> Action {
    Action::SetBreakpoint {
        at: Location::line("p.c", line),
    }
}

fn exec(e: ExecAction) -> Action {
    Action::Exec { exec: e }
}

fn relation() -> Relation {
    Relation {
        file: "p.c".into(),
        ..Relation::default()
    }
}

async fn follow(sim: &mut Sim, plan: &Plan) -> follow_up::FollowUp {
    follow_up::run(sim, &subject(), plan, &relation()).await
}

fn actions_of(f: &follow_up::FollowUp) -> Vec<String> {
    f.trace.actions().map(|a| a.to_string()).collect()
}

#[tokio::test]
async fn the_unchanged_script_holds() {
    let script = initial(&[
        bp(11),
        Action::Start,
        exec(ExecAction::StepOver),
        exec(ExecAction::Resume),
    ])
    .await;
    let f = follow(
        &mut Sim::new(None),
        &Plan {
            script,
            ..Plan::default()
        },
    )
    .await;
    assert_eq!(
        f.outcome,
        FollowUpOutcome::Held {
            actions: 4,
            ignored_pauses: 0
        }
    );
}

/// Initial: paused at 11, step over -> 12, resume. The plan adds a
/// breakpoint at 3 (inside f, called from 11) before the step over.
async fn step_over_with_a_breakpoint_added_in_the_callee() -> Plan {
    let script = initial(&[
        bp(11),
        Action::Start,
        exec(ExecAction::StepOver),
        exec(ExecAction::Resume),
    ])
    .await;
    assert_eq!(script.steps[2].output.paused().unwrap().location.line, 12);
    Plan {
        script,
        add_breakpoint: Some(AddedBreakpoint {
            before: 2,
            at: Location::line("p.c", 3),
        }),
        ..Plan::default()
    }
}

#[tokio::test]
async fn a_step_over_consumed_by_an_added_breakpoint_is_completed_with_a_temporary_breakpoint() {
    // Initial: paused at 11, step over -> 12. Follow-up: a breakpoint at 3
    // (inside f, called from 11) interrupts the step over.
    let plan = step_over_with_a_breakpoint_added_in_the_callee().await;
    let f = follow(&mut Sim::new(None), &plan).await;
    assert!(
        matches!(f.outcome, FollowUpOutcome::Held { ignored_pauses: 2, .. }),
        "{:?}\n{:?}",
        f.outcome,
        actions_of(&f)
    );
    let acts = actions_of(&f);
    assert!(acts.contains(&"set breakpoint @ p.c:12".to_string()), "{acts:?}");
    assert!(acts.contains(&"remove breakpoint @ p.c:12".to_string()), "{acts:?}");
}

#[tokio::test]
async fn a_consumed_step_whose_temporary_breakpoint_is_rejected_is_inconclusive() {
    // As above, but the debugger rejects a breakpoint at 12, where the
    // initial step over paused (Firefox: a step in that ended in a harness
    // file, where doppel sets no breakpoint). Continuing without it would
    // run past 12 and report a difference that is doppel's, not the
    // debugger's.
    let plan = step_over_with_a_breakpoint_added_in_the_callee().await;
    let mut sim = Sim::new(None);
    sim.rejects = Some(12);
    let f = follow(&mut sim, &plan).await;
    match &f.outcome {
        FollowUpOutcome::Inconclusive { reason } => {
            assert!(
                reason.contains("temporary breakpoint at p.c:12 was rejected"),
                "{reason}"
            );
            assert!(reason.contains("line 12 takes no breakpoint"), "{reason}");
        }
        other => panic!("expected an inconclusive test, got {other:?}\n{:?}", actions_of(&f)),
    }
    // No continue after the rejection: the run stopped at the added breakpoint.
    assert_eq!(
        actions_of(&f),
        [
            "set breakpoint @ p.c:11",
            "start",
            "set breakpoint @ p.c:3",
            "step over",
            "set breakpoint @ p.c:12"
        ]
    );
}

#[tokio::test]
async fn a_step_out_consumed_by_an_added_breakpoint_steps_out_again() {
    // Initial: paused at 3 in f, step out -> 11 in main.
    let script = initial(&[bp(3), Action::Start, exec(ExecAction::StepOut)]).await;
    assert_eq!(script.steps[2].output.paused().unwrap().location.line, 11);
    let plan = Plan {
        script,
        add_breakpoint: Some(AddedBreakpoint {
            before: 2,
            at: Location::line("p.c", 4),
        }),
        ..Plan::default()
    };
    let f = follow(&mut Sim::new(None), &plan).await;
    assert!(
        matches!(f.outcome, FollowUpOutcome::Held { ignored_pauses: 1, .. }),
        "{:?}",
        f.outcome
    );
    assert_eq!(
        actions_of(&f),
        [
            "set breakpoint @ p.c:3",
            "start",
            "set breakpoint @ p.c:4",
            "step out",
            "step out"
        ]
    );
}

#[tokio::test]
async fn a_continue_replaced_by_a_step_resynchronizes_with_a_continue() {
    let script = initial(&[
        bp(10),
        bp(13),
        Action::Start,
        exec(ExecAction::Resume),
        exec(ExecAction::Resume),
    ])
    .await;
    let plan = Plan {
        script,
        replace_continue: Some(ReplacedContinue {
            index: 3,
            by: ExecAction::StepOver,
        }),
        ..Plan::default()
    };
    let f = follow(&mut Sim::new(None), &plan).await;
    assert!(matches!(f.outcome, FollowUpOutcome::Held { .. }), "{:?}", f.outcome);
    assert_eq!(
        actions_of(&f),
        [
            "set breakpoint @ p.c:10",
            "set breakpoint @ p.c:13",
            "start",
            "step over",
            "resume",
            "resume"
        ]
    );
}

#[tokio::test]
async fn a_debugger_that_forgets_a_breakpoint_when_one_is_added_breaks_the_relation() {
    let script = initial(&[
        bp(10),
        bp(13),
        Action::Start,
        exec(ExecAction::Resume),
        exec(ExecAction::Resume),
    ])
    .await;
    let plan = Plan {
        script,
        add_breakpoint: Some(AddedBreakpoint {
            before: 2,
            at: Location::line("p.c", 14),
        }),
        ..Plan::default()
    };
    // A correct debugger: the added breakpoint's pause at 14 is ignored.
    assert!(matches!(
        follow(&mut Sim::new(None), &plan).await.outcome,
        FollowUpOutcome::Held { .. }
    ));
    // Three breakpoints, the simulator keeps two: 10 is forgotten.
    let f = follow(&mut Sim::new(Some(2)), &plan).await;
    match f.outcome {
        FollowUpOutcome::Violated { difference, action, .. } => {
            assert_eq!(difference.kind, DivergenceKind::PauseLocation, "{}", difference.detail);
            assert_eq!(action, Action::Start);
            assert!(difference.detail.contains("p.c:10"), "{}", difference.detail);
        }
        other => panic!("expected a violation, got {other:?}"),
    }
}

#[tokio::test]
async fn a_warning_on_a_nondeterministic_input_is_inconclusive() {
    use doppel_metamorphic::program::{Builder, Program};
    use doppel_metamorphic::{MetaConfig, Transformation, round};
    use rand::SeedableRng;
    let actions = [bp(10), bp(13), Action::Start, exec(ExecAction::Resume)];
    let mut noisy = Sim::new(None);
    noisy.noisy = true;
    // The initial run as the noisy debugger gives it (g = 1).
    let script = record(&mut noisy, &actions).await;
    let program = Program::new(subject(), "int main(void) {\n  return 0;\n}\n".repeat(5));
    let cfg = MetaConfig {
        transformations: vec![Transformation::AddBreakpoint],
        ..MetaConfig::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let builder = Builder::new(dir.path().join("s"), dir.path().join("c"), Default::default());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let test = round::run(&mut noisy, &program, &script, &cfg, &builder, &mut rng, None).await;
    match test.follow_up.unwrap().outcome {
        FollowUpOutcome::Inconclusive { reason } => {
            assert!(reason.contains("not deterministic"), "{reason}")
        }
        other => panic!("expected inconclusive, got {other:?}"),
    }
}

/// The initial run rejected a breakpoint at 12 (its line was not
/// breakable); after a removal on that line the follow-up run accepts it.
fn rejected_at_12(mut script: Script) -> Script {
    script.steps.insert(
        0,
        Step {
            action: bp(12),
            output: Output::BreakpointSet {
                requested: Location::line("p.c", 12),
                resolved: None,
                message: Some("line 12 is not breakable".into()),
            },
        },
    );
    script
}

#[tokio::test]
async fn a_breakpoint_on_a_line_whose_code_was_removed_may_resolve_and_its_pauses_are_ignored() {
    let script = rejected_at_12(initial(&[bp(13), Action::Start, exec(ExecAction::Resume)]).await);
    assert_eq!(script.steps[2].output.paused().unwrap().location.line, 13);
    let plan = Plan {
        script,
        ..Plan::default()
    };
    // Without the rule: the breakpoint's resolution differs.
    match follow(&mut Sim::new(None), &plan).await.outcome {
        FollowUpOutcome::Violated { difference, index, .. } => {
            assert_eq!(difference.kind, DivergenceKind::BreakpointLocation);
            assert_eq!(index, 0);
        }
        other => panic!("expected a violation, got {other:?}"),
    }
    // Line 12's breakability may change: its resolution is not compared and
    // the pause it causes (the initial run could not pause there) is ignored.
    let rel = Relation {
        breakability_may_change: vec![12],
        ..relation()
    };
    let f = follow_up::run(&mut Sim::new(None), &subject(), &plan, &rel).await;
    assert_eq!(
        f.outcome,
        FollowUpOutcome::Held {
            actions: 5,
            ignored_pauses: 1
        },
        "{:?}",
        actions_of(&f)
    );
    assert_eq!(
        actions_of(&f),
        [
            "set breakpoint @ p.c:12",
            "set breakpoint @ p.c:13",
            "start",
            "resume",
            "resume"
        ]
    );
    // Removed before `start`: the removal's answer (failed in the initial
    // run, done in the follow-up) is not compared either, and no pause is
    // ignored.
    let script = rejected_at_12(
        initial(&[
            bp(13),
            Action::RemoveBreakpoint {
                at: Location::line("p.c", 12),
            },
            Action::Start,
            exec(ExecAction::Resume),
        ])
        .await,
    );
    assert_eq!(
        script.steps[2].output,
        Output::BreakpointRemoved {
            ok: false,
            message: None
        }
    );
    let plan = Plan {
        script,
        ..Plan::default()
    };
    let f = follow_up::run(&mut Sim::new(None), &subject(), &plan, &rel).await;
    assert_eq!(
        f.outcome,
        FollowUpOutcome::Held {
            actions: 5,
            ignored_pauses: 0
        }
    );
}

#[tokio::test]
async fn a_removal_that_takes_away_a_breakpoint_the_initial_run_paused_at_is_inconclusive() {
    // The initial run resolved a breakpoint on line 12 and paused there.
    let script = initial(&[bp(12), Action::Start, exec(ExecAction::Resume)]).await;
    assert_eq!(script.steps[1].output.paused().unwrap().location.line, 12);
    let plan = Plan {
        script,
        ..Plan::default()
    };
    // After the removal line 12 has no code (the debugger rejects the
    // breakpoint): the pause at 12 cannot be expected.
    let mut sim = Sim::new(None);
    sim.rejects = Some(12);
    let rel = Relation {
        breakability_may_change: vec![12],
        ..relation()
    };
    match follow_up::run(&mut sim, &subject(), &plan, &rel).await.outcome {
        FollowUpOutcome::Inconclusive { reason } => {
            assert!(reason.contains("removing code changed"), "{reason}")
        }
        other => panic!("expected inconclusive, got {other:?}"),
    }
    // Without the removal the same answer breaks the relation.
    let mut sim = Sim::new(None);
    sim.rejects = Some(12);
    assert!(matches!(
        follow_up::run(&mut sim, &subject(), &plan, &relation()).await.outcome,
        FollowUpOutcome::Violated { .. }
    ));
}
