//! The class key of a debugger finding (DBDB section 3.4, Definition 4):
//! divergence type, last action, AST node type of the line where the last
//! action was issued, and the recognised policy difference, if any.
//!
//! Metamorphic warnings (ISSTA'19) use the same parts after their
//! transformation chain, so both techniques build and read them here.

use doppel_core::rootcause::RootCause;
use doppel_core::{ActionKind, ClassKey, ClassPartSpec, DivergenceKind, RunRecord, Trace};

/// The parts of a differential class key, in `Display` order
/// (`pause_location|step_over|for_statement|policy:step_out_lands_mid_line`).
pub const CLASS_PARTS: [ClassPartSpec; 4] = [
    ClassPartSpec {
        name: "divergence",
        prefix: None,
        optional: false,
        header: "divergence",
    },
    ClassPartSpec {
        name: "last_action",
        prefix: None,
        optional: false,
        header: "last action",
    },
    ClassPartSpec {
        name: "node",
        prefix: None,
        optional: false,
        header: "AST node",
    },
    ClassPartSpec {
        name: "policy",
        prefix: Some("policy"),
        optional: true,
        header: "policy",
    },
];

/// Appends the debugger parts (divergence, last action, node, policy) to `key`.
pub fn with_debugger_parts(
    key: ClassKey,
    divergence: DivergenceKind,
    last_action: ActionKind,
    node: impl Into<String>,
    policy: Option<&str>,
) -> ClassKey {
    let key = key
        .with("divergence", divergence.as_str())
        .with("last_action", last_action.as_str())
        .with("node", node);
    match policy {
        Some(p) => key.with_prefixed("policy", "policy", p),
        None => key,
    }
}

/// A differential class key.
pub fn class_key(
    divergence: DivergenceKind,
    last_action: ActionKind,
    node: impl Into<String>,
    policy: Option<&str>,
) -> ClassKey {
    with_debugger_parts(
        ClassKey::new(crate::campaign::TECHNIQUE),
        divergence,
        last_action,
        node,
        policy,
    )
}

/// The debugger parts read back from a key (differential or metamorphic):
/// `None` when a part is missing or does not name a known kind.
pub fn debugger_parts(key: &ClassKey) -> Option<(DivergenceKind, ActionKind, &str, Option<&str>)> {
    Some((
        DivergenceKind::parse(key.part("divergence")?)?,
        ActionKind::parse(key.part("last_action")?)?,
        key.part("node")?,
        key.part("policy"),
    ))
}

/// `key` with the divergence and policy parts replaced (the node and every
/// other part kept), for re-judging a stored finding.
pub fn rejudged(key: &ClassKey, divergence: DivergenceKind, last_action: ActionKind, policy: Option<&str>) -> ClassKey {
    let node = key.part("node").unwrap_or_default().to_string();
    let mut out = ClassKey::new(key.technique.clone());
    for p in &key.parts {
        if !matches!(p.name.as_str(), "divergence" | "last_action" | "node" | "policy") {
            out.parts.push(p.clone());
        }
    }
    with_debugger_parts(out, divergence, last_action, node, policy)
}

/// How many kinds of the collapsed action sequence, counted back from the
/// divergent action, a root cause keeps: the divergent action and the one
/// before it (`resume+step_out`). Only class representatives are reduced
/// (issue 17 item 5), so a reduced run is read with the same tail: a key
/// from its whole reduced sequence would separate it from the unreduced
/// runs of its root cause.
///
/// The whole unreduced sequence is as particular as the random run that
/// drew it (on the bundled C corpus, 20 programs x 3 seeds, GDB vs LLDB: 39
/// divergences in 16 classes gave 25 root causes with the whole sequence, 21
/// with the last 3 kinds, 14 with the last 2, 9 with the last one alone);
/// the whole reduced sequence would fit only if every run were reduced.
/// `None` keeps the whole sequence.
pub const UNREDUCED_SHAPE_TAIL: Option<usize> = Some(2);

/// The shape of the action sequence that led to a divergence: the kinds of
/// the actions up to and including action `upto` (0-based; all when
/// `None`), consecutive repeats collapsed, the last `tail` of them (all
/// when `None`), joined by `+` (`set_breakpoint+start+step_over+resume`).
pub fn action_shape(trace: &Trace, upto: Option<usize>, tail: Option<usize>) -> String {
    let mut kinds: Vec<&'static str> = Vec::new();
    for (i, a) in trace.actions().enumerate() {
        if upto.is_some_and(|u| i > u) {
            break;
        }
        let k = a.kind().as_str();
        if kinds.last() != Some(&k) {
            kinds.push(k);
        }
    }
    let from = tail.map_or(0, |t| kinds.len().saturating_sub(t));
    kinds[from..].join("+")
}

/// The root cause of a debugger finding (issue 17 item 3, differential and
/// metamorphic testing): the shape of the action sequence in `trace` up to
/// the divergent action ([`action_shape`], its last
/// [`UNREDUCED_SHAPE_TAIL`] kinds), the last action, the
/// divergence type and the tools (`gdb,lldb`; one debugger for
/// metamorphic testing), not the line's AST node or the program. The
/// class's policy, unless the divergence is a tool failure (never a policy).
/// `None` for a run without a finding.
pub fn root_cause(technique: &str, run: &RunRecord, trace: &Trace, tools: &str) -> Option<RootCause> {
    root_cause_with_tail(technique, run, trace, tools, UNREDUCED_SHAPE_TAIL)
}

/// [`root_cause`] keeping the last `tail` kinds of the shape (`None`: the
/// whole sequence). A reduced case's run ([`crate::reduce::reduced_run`])
/// is read with the same tail as the unreduced runs, so that reducing a
/// class's representative keeps it in its root cause.
pub fn root_cause_with_tail(
    technique: &str,
    run: &RunRecord,
    trace: &Trace,
    tools: &str,
    tail: Option<usize>,
) -> Option<RootCause> {
    let f = run.verdict.finding()?;
    let last = f
        .last_action
        .as_ref()
        .map(|a| a.kind().as_str())
        .or_else(|| f.class.part("last_action"))
        .unwrap_or("-");
    let divergence = f.class.part("divergence").unwrap_or("-");
    let mut r = RootCause::new(technique)
        .with("shape", action_shape(trace, f.action_index, tail))
        .with("last_action", last)
        .with("divergence", divergence)
        .with("tools", tools);
    r.policy = f
        .class
        .part("policy")
        .filter(|_| divergence != DivergenceKind::ToolFailure.as_str())
        .map(str::to_string);
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differential_keys_keep_their_display_form_and_parse_back() {
        let k = class_key(
            DivergenceKind::PauseLocation,
            ActionKind::StepOver,
            "for_statement",
            Some("step_out_lands_mid_line"),
        );
        assert_eq!(
            k.to_string(),
            "pause_location|step_over|for_statement|policy:step_out_lands_mid_line"
        );
        assert_eq!(
            ClassKey::parse("differential", &k.to_string(), &CLASS_PARTS),
            Some(k.clone())
        );
        assert_eq!(
            debugger_parts(&k),
            Some((
                DivergenceKind::PauseLocation,
                ActionKind::StepOver,
                "for_statement",
                Some("step_out_lands_mid_line")
            ))
        );
        let r = rejudged(&k, DivergenceKind::Variables, ActionKind::StepIn, None);
        assert_eq!(r.to_string(), "variables|step_in|for_statement");
    }

    #[test]
    fn shapes_collapse_repeats_and_stop_at_the_divergent_action() {
        use doppel_core::{Action, Event, EventKind, ExecAction, Location, Output, ToolInfo};
        let tool = ToolInfo {
            name: "gdb".into(),
            version: "1".into(),
            protocol: "MI".into(),
            executable: "gdb".into(),
        };
        let exec = |e| Action::Exec { exec: e };
        let bp = |l| Action::SetBreakpoint {
            at: Location::line("p.c", l),
        };
        let actions = [
            bp(3),
            bp(5),
            Action::Start,
            exec(ExecAction::StepOver),
            exec(ExecAction::StepOver),
            exec(ExecAction::Resume),
            exec(ExecAction::StepIn),
        ];
        let mut events = Vec::new();
        for a in actions {
            events.push(Event {
                t_ms: 0.0,
                kind: EventKind::Action(a),
                raw: vec![],
            });
            events.push(Event {
                t_ms: 0.0,
                kind: EventKind::Output(Output::BreakpointRemoved {
                    ok: true,
                    message: None,
                }),
                raw: vec![],
            });
        }
        let trace = Trace { debugger: tool, events };
        assert_eq!(
            action_shape(&trace, None, None),
            "set_breakpoint+start+step_over+resume+step_in"
        );
        assert_eq!(action_shape(&trace, Some(4), None), "set_breakpoint+start+step_over");
        assert_eq!(action_shape(&trace, Some(0), None), "set_breakpoint");
        assert_eq!(action_shape(&trace, Some(5), Some(2)), "step_over+resume");
        assert_eq!(action_shape(&trace, Some(0), Some(2)), "set_breakpoint");
    }
}
