//! The class key of a debugger finding (DBDB section 3.4, Definition 4):
//! divergence type, last action, AST node type of the line where the last
//! action was issued, and the recognised policy difference, if any.
//!
//! Metamorphic warnings (ISSTA'19) use the same parts after their
//! transformation chain, so both techniques build and read them here.

use doppel_core::{ActionKind, ClassKey, ClassPartSpec, DivergenceKind};

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
}
