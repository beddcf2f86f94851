//! Side-by-side rows of a run's traces, shared by the HTML report and
//! `doppel show`.

use crate::model::{Action, EventKind, Output};
use crate::run::RunRecord;
use serde::Serialize;

/// One action and each debugger's output for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// 0-based action index.
    pub index: usize,
    pub action: String,
    /// One summary per debugger, in trace order (empty if it gave none).
    pub outputs: Vec<String>,
    /// The action after which the debuggers diverged.
    pub divergent: bool,
}

/// Pairs each action with the outputs that follow it, per trace.
pub fn side_by_side_rows(run: &RunRecord) -> Vec<Row> {
    let divergent = run.verdict.finding().map(|f| f.action_index);
    let per_trace: Vec<Vec<(Action, Vec<&Output>)>> = run
        .traces
        .iter()
        .map(|t| {
            let mut v: Vec<(Action, Vec<&Output>)> = Vec::new();
            for e in &t.events {
                match &e.kind {
                    EventKind::Action(a) => v.push((a.clone(), Vec::new())),
                    EventKind::Output(o) => {
                        if let Some(last) = v.last_mut() {
                            last.1.push(o);
                        }
                    }
                }
            }
            v
        })
        .collect();
    let n = per_trace.iter().map(Vec::len).max().unwrap_or(0);
    (0..n)
        .map(|i| Row {
            index: i,
            action: per_trace
                .iter()
                .find_map(|t| t.get(i))
                .map(|(a, _)| a.to_string())
                .unwrap_or_default(),
            outputs: per_trace
                .iter()
                .map(|t| {
                    t.get(i)
                        .map(|(_, os)| os.iter().map(|o| describe_output(o)).collect::<Vec<_>>().join("\n"))
                        .unwrap_or_default()
                })
                .collect(),
            divergent: divergent == Some(i),
        })
        .collect()
}

/// A one-paragraph summary of an output, e.g.
/// `paused @ prog.c:13 [main] i=0 total=0`, `breakpoint @ prog.c:13 (requested 12)`.
pub fn describe_output(o: &Output) -> String {
    match o {
        Output::BreakpointSet {
            requested,
            resolved: Some(r),
            ..
        } => {
            if r.line == requested.line {
                format!("breakpoint @ {r}")
            } else {
                format!("breakpoint @ {r} (requested {})", requested.line)
            }
        }
        Output::BreakpointSet { message, .. } => format!(
            "breakpoint rejected: {}",
            message.as_deref().unwrap_or("no reason given")
        ),
        Output::BreakpointRemoved { ok: true, .. } => "removed".into(),
        Output::BreakpointRemoved { ok: false, message } => {
            format!("not removed: {}", message.as_deref().unwrap_or(""))
        }
        Output::Paused(s) => {
            let stack: Vec<&str> = s.call_stack.iter().map(|f| f.function.as_str()).collect();
            let vars: Vec<String> = s
                .variables
                .iter()
                .map(|v| format!("{}={}", v.name, v.value.text))
                .collect();
            let sig = s.signal.as_deref().map(|x| format!(" {x}")).unwrap_or_default();
            format!(
                "paused @ {}{sig} [{}] {}",
                s.location,
                stack.join(" <- "),
                vars.join(" ")
            )
        }
        Output::Finished { exit_code: Some(c), .. } => format!("finished (exit {c})"),
        Output::Finished { signal: Some(s), .. } => format!("finished ({s})"),
        Output::Finished { .. } => "finished".into(),
        Output::Failed { kind, detail } => {
            format!("FAILED {kind:?}: {}", detail.lines().next().unwrap_or(""))
        }
    }
}
