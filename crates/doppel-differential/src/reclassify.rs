//! Re-judging stored runs with the current normalization rules and policies,
//! without re-running the debuggers: normalization and policies evolve as
//! campaigns teach us new rendering gaps, and the raw outputs are in the traces.
//!
//! Only the divergent action is re-judged (the run stopped there, so nothing
//! after it was recorded): if its outputs still differ, the class key is
//! recomputed (new policy names included); if they no longer differ, the run
//! becomes `inconclusive` with a reason that says so (`doppel replay` runs it
//! on from there with the current rules).

use crate::config::DiffConfig;
use crate::normalize;
use crate::oracle;
use doppel_core::{Action, EventKind, Output, ProgramState, RunRecord, Verdict};

/// Outputs per action per trace: `[action][trace]`.
fn outputs_by_action(run: &RunRecord) -> Vec<(Action, Vec<Option<Output>>)> {
    let mut rows: Vec<(Action, Vec<Option<Output>>)> = Vec::new();
    for (t, trace) in run.traces.iter().enumerate() {
        let mut i: usize = 0;
        let mut realigned = false;
        for e in &trace.events {
            match &e.kind {
                EventKind::Action(a) => {
                    realigned = false;
                    if t == 0 {
                        rows.push((a.clone(), vec![None; run.traces.len()]));
                    }
                    i += 1;
                }
                EventKind::Output(o) => {
                    // The action's own answer, not a realignment's after it.
                    if !realigned && let Some(row) = rows.get_mut(i.saturating_sub(1)) {
                        row.1[t] = Some(o.clone());
                    }
                }
                EventKind::Realignment(_) => realigned = true,
                EventKind::PolicyNote(_) | EventKind::FindingNote { .. } => {}
            }
        }
    }
    rows
}

/// The new verdict of a stored divergent run under `cfg`; `None` if the run
/// did not diverge or cannot be re-judged (outputs missing).
pub fn reclassify(run: &RunRecord, cfg: &DiffConfig) -> Option<Verdict> {
    let f = run.verdict.finding()?;
    let index = f.action_index?;
    let rows = outputs_by_action(run);
    let (action, outs) = rows.get(index)?;
    let outs: Vec<Output> = outs.iter().cloned().collect::<Option<_>>()?;
    let names: Vec<String> = run.debuggers.iter().map(|d| d.name.clone()).collect();
    let Some(mut d) = oracle::compare(&names, &outs, &cfg.normalization, cfg.compare_columns) else {
        return Some(Verdict::Inconclusive {
            actions: index,
            reason: format!(
                "the divergence after action {index} ({action}) disappears under the current normalization; replay to continue the run"
            ),
        });
    };
    // The agreed state before the action: the last pause of the first trace before it.
    let before: Option<ProgramState> = rows[..index]
        .iter()
        .rev()
        .find_map(|(_, o)| o.first().and_then(|o| o.as_ref()).and_then(Output::paused).cloned())
        .map(|s| normalize::state(&s, &cfg.normalization));
    let exec = match action {
        Action::Exec { exec } => Some(*exec),
        _ => None,
    };
    let norm: Vec<Output> = outs.iter().map(|o| normalize::output(o, &cfg.normalization)).collect();
    let is_breakpoint = matches!(action, Action::SetBreakpoint { .. } | Action::RemoveBreakpoint { .. });
    d.policy = if is_breakpoint {
        oracle::policy(None, None, &outs, &d)
    } else {
        oracle::policy(before.as_ref(), exec, &norm, &d)
    };
    let mut finding = f.clone();
    finding.class = crate::class::rejudged(&f.class, d.kind, action.kind(), d.policy.as_deref());
    finding.detail = d.detail;
    Some(Verdict::Divergence(finding))
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::*;

    fn paused(v: &str) -> Output {
        Output::Paused(ProgramState {
            location: Location::line("p.c", 3),
            reason: PauseReason::Breakpoint,
            call_stack: vec![Frame {
                function: "main".into(),
                location: None,
            }],
            variables: vec![Variable {
                name: "c".into(),
                type_name: Some("unsigned char".into()),
                value: Value::scalar(v),
                kind: VariableKind::Local,
            }],
            signal: None,
            return_value: None,
        })
    }

    fn run(gdb: &str, lldb: &str) -> RunRecord {
        let trace = |name: &str, v: &str| Trace {
            debugger: ToolInfo {
                name: name.into(),
                version: "1".into(),
                protocol: "x".into(),
                executable: name.into(),
            },
            events: vec![
                Event {
                    t_ms: 0.0,
                    kind: EventKind::Action(Action::Start),
                    raw: vec![],
                },
                Event {
                    t_ms: 1.0,
                    kind: EventKind::Output(paused(v)),
                    raw: vec![],
                },
            ],
        };
        let traces = vec![trace("gdb", gdb), trace("lldb", lldb)];
        RunRecord {
            id: Some(1),
            key: "k".into(),
            technique: "differential".into(),
            campaign: "c".into(),
            subject: Subject {
                name: "p.c".into(),
                language: Language::C,
                source: "/p.c".into(),
                source_name: "p.c".into(),
                line_count: 5,
                binary: None,
                prelude: Vec::new(),
                epilogue: Vec::new(),
                hash: "h".into(),
                build: "gcc".into(),
            },
            seed: 1,
            config: serde_json::json!({}),
            debuggers: traces.iter().map(|t| t.debugger.clone()).collect(),
            verdict: Verdict::Divergence(Finding {
                class: crate::class::class_key(DivergenceKind::Variables, ActionKind::Start, "translation_unit", None),
                action_index: Some(0),
                last_action: Some(Action::Start),
                line: None,
                detail: "old".into(),
            }),
            traces,
            duration_ms: 1.0,
            started_at_ms: 0,
        }
    }

    #[test]
    fn a_rendering_gap_fixed_since_makes_the_run_inconclusive() {
        let v = reclassify(&run("247 '\\367'", "'\\xf7'"), &DiffConfig::default()).unwrap();
        assert!(matches!(v, Verdict::Inconclusive { actions: 0, .. }), "{v:?}");
    }

    #[test]
    fn a_real_difference_keeps_its_class_and_gets_a_fresh_detail() {
        let v = reclassify(&run("1 '\\001'", "'\\xf7'"), &DiffConfig::default()).unwrap();
        let f = v.finding().unwrap();
        assert_eq!(f.class.part("divergence"), Some("variables"));
        assert!(f.detail.contains("lldb: c:unsigned char='\\xf7'"), "{}", f.detail);
    }
}
