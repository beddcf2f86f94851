//! Side-by-side rows of a run's traces, shared by the HTML report and
//! `doppel show`.

use crate::model::{Action, EventKind, FailureKind, Output};
use crate::run::RunRecord;
use serde::Serialize;

/// One action and each debugger's output for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// 0-based action index (the index [`crate::Finding::action_index`] uses).
    pub index: usize,
    /// The action as text (`step over`, `set breakpoint @ prog.c:12`), from the
    /// first trace that has an action at this index; followed by
    /// `(policy slide_vs_reject: continued)` when the run recorded a policy
    /// note after it ([`crate::EventKind::PolicyNote`]), and by `(finding
    /// <class> noted: continued)` (`again` for a repeat) when it went on past
    /// a finding ([`crate::EventKind::FindingNote`]).
    pub action: String,
    /// One summary per debugger, in trace order ([`describe_output`] of each
    /// output that followed the action, joined by newlines; empty if the
    /// debugger gave none or its trace ended earlier).
    pub outputs: Vec<String>,
    /// Whether this is the action after which the debuggers diverged.
    pub divergent: bool,
}

/// The side-by-side view of a run: one [`Row`] per action, pairing each
/// action event of every trace with the output events that follow it until
/// the next action. As many rows as the longest trace has actions; outputs
/// before a trace's first action are dropped (there are none in doppel's traces).
pub fn side_by_side_rows(run: &RunRecord) -> Vec<Row> {
    let divergent = run.verdict.finding().and_then(|f| f.action_index);
    let notes: Vec<Option<usize>> = run.policy_notes().iter().map(|f| f.action_index).collect();
    // The findings the run went on past (issue 17), new ones and repeats.
    let findings: Vec<(&crate::model::Finding, bool)> = run
        .traces
        .first()
        .map(|t| t.findings_gone_past().collect())
        .unwrap_or_default();
    // Per trace, per action: the action and the summaries of its outputs;
    // an output after a realignment is shown as `realigned (step over): ...`.
    let per_trace: Vec<Vec<(Action, Vec<String>)>> = run
        .traces
        .iter()
        .map(|t| {
            let mut v: Vec<(Action, Vec<String>)> = Vec::new();
            let mut realigned: Option<&Action> = None;
            for e in &t.events {
                match &e.kind {
                    EventKind::Action(a) => {
                        v.push((a.clone(), Vec::new()));
                        realigned = None;
                    }
                    EventKind::Output(o) => {
                        if let Some(last) = v.last_mut() {
                            last.1.push(match realigned {
                                Some(r) => format!("realigned ({r}): {}", describe_output(o)),
                                None => describe_output(o),
                            });
                        }
                    }
                    EventKind::Realignment(a) => realigned = Some(a),
                    EventKind::PolicyNote(_) | EventKind::FindingNote { .. } => {}
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
                .map(|(a, _)| {
                    let policies: Vec<&str> = run
                        .policy_notes()
                        .into_iter()
                        .zip(&notes)
                        .filter(|(_, at)| **at == Some(i))
                        .filter_map(|(f, _)| f.class.part("policy"))
                        .collect();
                    let mut text = if policies.is_empty() {
                        a.to_string()
                    } else {
                        format!("{a} (policy {}: continued)", policies.join(", "))
                    };
                    for (f, repeat) in &findings {
                        if f.action_index == Some(i) {
                            let what = if *repeat { "again" } else { "noted" };
                            text.push_str(&format!(" (finding {} {what}: continued)", f.class));
                        }
                    }
                    text
                })
                .unwrap_or_default(),
            outputs: per_trace
                .iter()
                .map(|t| t.get(i).map(|(_, os)| os.join("\n")).unwrap_or_default())
                .collect(),
            divergent: divergent == Some(i),
        })
        .collect()
}

/// [`side_by_side_rows`] as an evidence table: columns `#`, `action` and
/// one per debugger (its name), the divergent row highlighted.
pub fn trace_table(run: &RunRecord) -> crate::technique::EvidenceTable {
    let mut header = vec!["#".to_string(), "action".to_string()];
    header.extend(run.traces.iter().map(|t| t.debugger.name.clone()));
    crate::technique::EvidenceTable {
        caption: None,
        header,
        rows: side_by_side_rows(run)
            .into_iter()
            .map(|r| {
                let mut cells = vec![r.index.to_string(), r.action];
                cells.extend(r.outputs);
                crate::technique::EvidenceRow {
                    cells,
                    highlight: r.divergent,
                }
            })
            .collect(),
    }
}

/// A one-line summary of an output for people:
/// `breakpoint @ prog.c:13 (requested 12)` (after breakpoint sliding),
/// `breakpoint rejected: <reason>`, `removed`, `not removed: <reason>`,
/// `paused @ prog.c:13 [square <- main] i=0 total=0` (location, call stack
/// innermost first, variables of the top frame), `finished (exit 0)`,
/// `finished (SIGSEGV)`, `FAILED timeout: <first line of the detail>`.
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
        Output::BreakpointRemoved { ok: false, message } => match message {
            Some(m) => format!("not removed: {m}"),
            None => "not removed".into(),
        },
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
            let kind = match kind {
                FailureKind::Crash => "crash",
                FailureKind::Timeout => "timeout",
                FailureKind::Protocol => "protocol",
                FailureKind::Launch => "launch",
            };
            format!("FAILED {kind}: {}", detail.lines().next().unwrap_or(""))
        }
    }
}
