//! Algorithm 1 against scripted debuggers: checks the engine's control flow
//! (breakpoint phase, start, actions, first divergence, verdicts, seeding)
//! independently of real debuggers. The real-debugger tests are in
//! `tests/diff_real.rs` and in the CLI's end-to-end test.

use async_trait::async_trait;
use doppel_core::{
    Action, ActionKind, DivergenceKind, ExecAction, Frame, Language, Location, Output, PauseReason, ProgramState,
    RawMessage, Subject, ToolInfo, Verdict,
};
use doppel_debuggers::{Capabilities, Debugger};
use doppel_differential::{DiffConfig, engine};

/// A fake debugger of a straight-line program: execution visits `path`
/// (line numbers) in order; breakpoints slide forward to the next line in
/// `path` (or stay, with `no_slide`); every exec action moves one step along
/// `path`, resume moves to the next breakpoint.
struct Fake {
    info: ToolInfo,
    path: Vec<u32>,
    pos: Option<usize>,
    /// Breakpoints per resolved line (two requests may resolve to one line,
    /// and removing one keeps the other, as in GDB and LLDB).
    bps: std::collections::BTreeMap<u32, usize>,
    slide_to: fn(u32, &[u32]) -> Option<u32>,
    /// After this many exec actions, report line + 100 (a planted bug).
    wrong_after: Option<usize>,
    execs: usize,
    hang_on_start: bool,
    /// Loads that fail (launch timeout) before one succeeds.
    failing_loads: usize,
}

fn slide_forward(line: u32, path: &[u32]) -> Option<u32> {
    path.iter().copied().filter(|&l| l >= line).min()
}

fn fake(name: &str) -> Fake {
    Fake {
        info: ToolInfo {
            name: name.into(),
            version: "1".into(),
            protocol: "fake".into(),
            executable: name.into(),
        },
        path: vec![3, 4, 5, 6, 7, 8, 9, 10],
        pos: None,
        bps: Default::default(),
        slide_to: slide_forward,
        wrong_after: None,
        execs: 0,
        hang_on_start: false,
        failing_loads: 0,
    }
}

impl Fake {
    fn state(&self) -> Output {
        let Some(i) = self.pos else {
            return Output::Finished {
                exit_code: Some(0),
                signal: None,
            };
        };
        if i >= self.path.len() {
            return Output::Finished {
                exit_code: Some(0),
                signal: None,
            };
        }
        let mut line = self.path[i];
        if self.wrong_after.is_some_and(|n| self.execs >= n) {
            line += 100;
        }
        Output::Paused(ProgramState {
            location: Location::line("p.c", line),
            reason: PauseReason::Step,
            call_stack: vec![Frame {
                function: "main".into(),
                location: None,
            }],
            variables: vec![],
            signal: None,
            return_value: None,
        })
    }

    fn run_to_breakpoint(&mut self, from: usize) {
        self.pos = Some(
            (from..self.path.len())
                .find(|&i| self.bps.contains_key(&self.path[i]))
                .unwrap_or(self.path.len()),
        );
    }
}

#[async_trait]
impl Debugger for Fake {
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
    async fn load(&mut self, _s: &Subject) -> Output {
        if self.failing_loads > 0 {
            self.failing_loads -= 1;
            return Output::failed(doppel_core::FailureKind::Launch, "no hello within 10 ms");
        }
        self.pos = None;
        self.bps.clear();
        self.execs = 0;
        Output::Finished {
            exit_code: None,
            signal: None,
        }
    }
    async fn set_breakpoint(&mut self, at: &Location) -> Output {
        let resolved = (self.slide_to)(at.line, &self.path);
        if let Some(l) = resolved {
            *self.bps.entry(l).or_default() += 1;
        }
        Output::BreakpointSet {
            requested: at.clone(),
            resolved: resolved.map(|l| Location::line("p.c", l)),
            message: None,
        }
    }
    async fn remove_breakpoint(&mut self, at: &Location) -> Output {
        let ok = (self.slide_to)(at.line, &self.path).is_some_and(|l| match self.bps.get_mut(&l) {
            Some(n) if *n > 1 => {
                *n -= 1;
                true
            }
            Some(_) => self.bps.remove(&l).is_some(),
            None => false,
        });
        Output::BreakpointRemoved { ok, message: None }
    }
    async fn start(&mut self) -> Output {
        if self.hang_on_start {
            return Output::failed(doppel_core::FailureKind::Timeout, "no answer within 10 ms");
        }
        self.run_to_breakpoint(0);
        self.state()
    }
    async fn exec(&mut self, a: ExecAction) -> Output {
        self.execs += 1;
        let i = self.pos.unwrap_or(0);
        match a {
            ExecAction::Resume => self.run_to_breakpoint(i + 1),
            _ => self.pos = Some(i + 1),
        }
        self.state()
    }
    async fn reset(&mut self) {}
    async fn shutdown(&mut self) {}
    fn take_transcript(&mut self) -> Vec<RawMessage> {
        vec![RawMessage::received("fake")]
    }
}

fn subject() -> Subject {
    Subject {
        name: "p.c".into(),
        language: Language::C,
        source: "/nonexistent/p.c".into(),
        source_name: "p.c".into(),
        line_count: 12,
        binary: None,
        prelude: Vec::new(),
        epilogue: Vec::new(),
        hash: "h".into(),
        build: "fake".into(),
    }
}

fn node(line: Option<u32>) -> String {
    match line {
        Some(l) => format!("node{l}"),
        None => "translation_unit".into(),
    }
}

async fn run(a: Fake, b: Fake, seed: u64, cfg: &DiffConfig) -> engine::RunOutcome {
    let mut dbg: Vec<Box<dyn Debugger>> = vec![Box::new(a), Box::new(b)];
    engine::run(&mut dbg, &subject(), seed, cfg, &node).await
}

fn cfg() -> DiffConfig {
    DiffConfig {
        breakpoints_per_line: 0.25,
        max_breakpoints: 3,
        ..Default::default()
    }
}

#[tokio::test]
async fn identical_debuggers_never_diverge() {
    for seed in 0..30 {
        let out = run(fake("a"), fake("b"), seed, &cfg()).await;
        assert!(
            matches!(
                out.verdict,
                Verdict::ProgramFinished { .. } | Verdict::MaxActions { .. }
            ),
            "seed {seed}: {:?}",
            out.verdict
        );
        assert_eq!(out.traces.len(), 2);
        assert_eq!(out.traces[0].events.len(), out.traces[1].events.len());
    }
}

#[tokio::test]
async fn a_run_is_determined_by_its_seed() {
    let strip = |o: &engine::RunOutcome| {
        o.traces
            .iter()
            .map(|t| t.events.iter().map(|e| format!("{:?}", e.kind)).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    let a = run(fake("a"), fake("b"), 42, &cfg()).await;
    let b = run(fake("a"), fake("b"), 42, &cfg()).await;
    assert_eq!(strip(&a), strip(&b));
    let mut differs = false;
    for s in 0..10 {
        differs |= strip(&run(fake("a"), fake("b"), s, &cfg()).await) != strip(&a);
    }
    assert!(differs, "different seeds should give different runs");
}

#[tokio::test]
async fn different_sliding_is_a_breakpoint_location_divergence() {
    let mut b = fake("b");
    b.slide_to = |line, path| {
        if path.contains(&line) { Some(line) } else { None }
    };
    // Lines 1, 2, 11, 12 are not in the path: a's slides or rejects differ from b's.
    // DBDB's stop at the first divergence.
    let stop = DiffConfig {
        continue_past_policies: false,
        ..cfg()
    };
    let mut found = false;
    for seed in 0..40 {
        let mut b2 = fake("b");
        b2.slide_to = b.slide_to;
        let out = run(fake("a"), b2, seed, &stop).await;
        if let Verdict::Divergence(f) = &out.verdict {
            assert_eq!(
                f.class.part("divergence"),
                Some(DivergenceKind::BreakpointLocation.as_str())
            );
            assert_eq!(f.class.part("last_action"), Some(ActionKind::SetBreakpoint.as_str()));
            let line = f.line.expect("breakpoint line");
            assert!(!(3..=10).contains(&line), "only non-code lines slide: {line}");
            assert_eq!(f.class.part("node"), Some(format!("node{line}").as_str()));
            found = true;
        }
    }
    assert!(found, "some seed must hit a sliding line");
}

#[tokio::test]
async fn a_run_goes_on_past_slide_versus_reject_with_the_breakpoint_removed_again() {
    let reject = |line: u32, path: &[u32]| path.contains(&line).then_some(line);
    let stop = DiffConfig {
        continue_past_policies: false,
        ..cfg()
    };
    let mut continued = 0;
    for seed in 0..40 {
        let mut b = fake("b");
        b.slide_to = reject;
        let on = run(fake("a"), b, seed, &cfg()).await;
        // Line 1 or 2: a slides to 3, b rejects; with continuation no run ends there.
        if let Verdict::Divergence(f) = &on.verdict {
            panic!("seed {seed}: the only differences are slide_vs_reject, got {}", f.class);
        }
        let notes: Vec<_> = on.traces[0].policy_notes().collect();
        if notes.is_empty() {
            continue;
        }
        continued += 1;
        let actions: Vec<_> = on.traces[0].actions().cloned().collect();
        for n in &notes {
            assert_eq!(n.class.part("policy"), Some("slide_vs_reject"));
            let i = n.action_index.unwrap();
            let Action::SetBreakpoint { at } = &actions[i] else {
                panic!("note after {:?}", actions[i]);
            };
            assert_eq!(actions[i + 1], Action::RemoveBreakpoint { at: at.clone() });
        }
        assert!(
            actions.contains(&Action::Start),
            "seed {seed}: the run went on to start"
        );
        assert_eq!(on.traces[1].policy_notes().count(), notes.len(), "notes in every trace");
        // The same seed without continuation ends at the first note's action.
        let mut b = fake("b");
        b.slide_to = reject;
        let off = run(fake("a"), b, seed, &stop).await;
        let f = off.verdict.finding().expect("stops at slide_vs_reject");
        assert_eq!(f.class.part("policy"), Some("slide_vs_reject"));
        assert_eq!(f.action_index, notes[0].action_index);
        assert!(!off.traces[0].actions().any(|a| *a == Action::Start));
    }
    assert!(continued > 5, "{continued} of 40 seeds drew a line without code");
}

#[tokio::test]
async fn a_planted_wrong_pause_is_found_at_its_action() {
    let mut found = 0;
    for seed in 0..20 {
        let mut b = fake("b");
        b.wrong_after = Some(2);
        let out = run(
            fake("a"),
            b,
            seed,
            &DiffConfig {
                max_actions: 20,
                ..cfg()
            },
        )
        .await;
        match &out.verdict {
            Verdict::Divergence(f) => {
                assert_eq!(
                    f.class.part("divergence"),
                    Some(DivergenceKind::PauseLocation.as_str()),
                    "{f:?}"
                );
                let exec_actions = out.traces[0]
                    .actions()
                    .filter(|a| matches!(a, doppel_core::Action::Exec { .. }))
                    .count();
                assert_eq!(exec_actions, 2, "the run stops at the first divergence");
                assert_eq!(f.action_index.map(|i| i + 1), Some(out.traces[0].actions().count()));
                assert!(f.detail.contains("b: paused at p.c:"), "{}", f.detail);
                found += 1;
            }
            // The program may finish (resume past the last breakpoint) by the
            // second action, before the planted bug can show.
            Verdict::ProgramFinished { actions } => assert!(*actions <= 2),
            other => panic!("seed {seed}: {other:?}"),
        }
    }
    assert!(found > 0);
}

#[tokio::test]
async fn one_hanging_debugger_is_a_tool_failure_and_both_hanging_is_inconclusive() {
    let mut b = fake("b");
    b.hang_on_start = true;
    let out = run(fake("a"), b, 1, &cfg()).await;
    let f = out.verdict.finding().expect("divergence");
    assert_eq!(f.class.part("divergence"), Some(DivergenceKind::ToolFailure.as_str()));
    assert_eq!(f.class.part("last_action"), Some(ActionKind::Start.as_str()));
    assert_eq!(f.class.part("node"), Some("translation_unit"));

    let (mut a, mut b) = (fake("a"), fake("b"));
    a.hang_on_start = true;
    b.hang_on_start = true;
    let out = run(a, b, 1, &cfg()).await;
    assert!(matches!(out.verdict, Verdict::Inconclusive { .. }), "{:?}", out.verdict);
}

#[tokio::test]
async fn a_load_that_fails_once_is_retried_and_one_that_fails_twice_is_a_tool_failure() {
    let baseline = run(fake("a"), fake("b"), 4, &cfg()).await;
    let mut once = fake("b");
    once.failing_loads = 1;
    let out = run(fake("a"), once, 4, &cfg()).await;
    assert_eq!(out.verdict, baseline.verdict);
    assert_eq!(out.traces[1].events.len(), baseline.traces[1].events.len());

    let mut twice = fake("b");
    twice.failing_loads = 2;
    let out = run(fake("a"), twice, 4, &cfg()).await;
    let f = out.verdict.finding().expect("a load failing twice is a divergence");
    assert_eq!(f.class.part("divergence"), Some(DivergenceKind::ToolFailure.as_str()));
    assert_eq!(f.class.part("last_action"), Some(ActionKind::Start.as_str()));
    assert!(f.detail.contains("no hello"), "{}", f.detail);
}

#[tokio::test]
async fn raw_messages_are_attached_to_outputs() {
    let out = run(fake("a"), fake("b"), 3, &cfg()).await;
    let outputs_with_raw = out.traces[0]
        .events
        .iter()
        .filter(|e| matches!(e.kind, doppel_core::EventKind::Output(_)))
        .all(|e| !e.raw.is_empty());
    assert!(outputs_with_raw);
}

#[tokio::test]
async fn code_lines_only_keeps_breakpoints_off_lines_without_tokens() {
    // Lines 1-6 are "comments" (the root's node type), 7-12 code.
    let half = |line: Option<u32>| match line {
        Some(l) if l > 6 => format!("node{l}"),
        _ => "translation_unit".into(),
    };
    let requested = |o: &engine::RunOutcome| -> Vec<u32> {
        o.traces[0]
            .actions()
            .filter_map(|a| match a {
                doppel_core::Action::SetBreakpoint { at } => Some(at.line),
                _ => None,
            })
            .collect()
    };
    let code = DiffConfig {
        breakpoint_lines: doppel_differential::BreakpointLines::Code,
        ..cfg()
    };
    let mut all_lines = Vec::new();
    for seed in 0..20 {
        let mut dbg: Vec<Box<dyn Debugger>> = vec![Box::new(fake("a")), Box::new(fake("b"))];
        let out = engine::run(&mut dbg, &subject(), seed, &code, &half).await;
        let lines = requested(&out);
        assert!(!lines.is_empty(), "seed {seed}: no breakpoint at all");
        assert!(lines.iter().all(|l| *l > 6), "seed {seed}: {lines:?}");
        let mut dbg: Vec<Box<dyn Debugger>> = vec![Box::new(fake("a")), Box::new(fake("b"))];
        all_lines.extend(requested(&engine::run(&mut dbg, &subject(), seed, &cfg(), &half).await));
    }
    assert!(all_lines.iter().any(|l| *l <= 6), "the default draws from every line");
    // The default stays out of the serialized configuration (and so of run keys).
    assert!(
        serde_json::to_string(&cfg())
            .unwrap()
            .find("breakpoint_lines")
            .is_none()
    );
    assert!(
        serde_json::to_string(&code)
            .unwrap()
            .contains("\"breakpoint_lines\":\"code\"")
    );
}
