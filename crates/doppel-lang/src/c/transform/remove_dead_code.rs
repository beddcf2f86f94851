//! Remove dead code (ISSTA'19 section 3.2.2, "Remove dead code"): with the
//! initial run's coverage ([`crate::c::coverage`]), either
//! - empty a block `{ ... }` that is the body of an `if`, `else`, `while` or
//!   `for` and whose statements lie in one never-executed range (the braces
//!   stay: `if (c) {}`), or
//! - remove a file-scope function definition that never ran and whose name
//!   occurs nowhere else (no call, no prototype, no address taken, no macro).
//!
//! Never removed: code containing labels, `case` labels, preprocessor
//! directives, `asm`, nested functions; functions with attributes (a
//! constructor runs unreferenced) or that define a struct, union or enum in
//! their return type (the tag is used elsewhere). Removed lines map to
//! `None`; lines after them move up.

use super::scope::function_declarator;
use super::{Attempt, ancestors, broken, descendants, parse, pos, text, try_candidates, word_counts};
use crate::edit::{Pos, SourceEdit};
use crate::transform::{
    Coverage, ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed,
};
use std::collections::BTreeSet;
use tree_sitter::Node;

/// [`ProgramTransformationKind::RemoveDeadCode`] for C.
pub struct RemoveDeadCode;

/// Whether `node` (a block) holds something that forbids removing it:
/// labels, `case`s, directives, `asm`, nested functions, errors.
fn contains_forbidden(node: Node<'_>) -> bool {
    descendants(node).into_iter().any(|n| {
        matches!(
            n.kind(),
            "labeled_statement" | "case_statement" | "gnu_asm_expression" | "asm_statement" | "function_definition"
        ) || n.kind().starts_with("preproc")
            || n.has_error()
    })
}

/// Whether all named, non-comment children of `node` lie in one dead range
/// (and there is at least one).
fn statements_dead(src: &str, node: Node<'_>, coverage: &Coverage) -> bool {
    let mut cursor = node.walk();
    let stmts: Vec<Node> = node
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect();
    match (stmts.first(), stmts.last()) {
        (Some(f), Some(l)) => coverage.is_dead(pos(src, f.start_byte()), pos(src, l.end_byte())),
        _ => false,
    }
}

enum Candidate<'t> {
    Block(Node<'t>),
    Function(Node<'t>, String),
}

fn candidates<'t>(src: &str, root: Node<'t>, coverage: &Coverage) -> Vec<Candidate<'t>> {
    let mut out = Vec::new();
    for n in descendants(root) {
        let body = match n.kind() {
            "if_statement" => n.child_by_field_name("consequence"),
            "else_clause" => n.named_child(0),
            "while_statement" | "for_statement" => n.child_by_field_name("body"),
            _ => None,
        };
        if let Some(b) = body
            && b.kind() == "compound_statement"
            && !ancestors(b).any(|a| a.kind().starts_with("preproc"))
            && !text(b, src).contains("__label__")
            && statements_dead(src, b, coverage)
            && !contains_forbidden(b)
        {
            out.push(Candidate::Block(b));
        }
    }
    let mut words = None;
    let mut cursor = root.walk();
    for def in root.named_children(&mut cursor) {
        if def.kind() != "function_definition" {
            continue;
        }
        let Some(decl) = def.child_by_field_name("declarator") else {
            continue;
        };
        let Some(name) = function_declarator(decl)
            .and_then(|f| f.child_by_field_name("declarator"))
            .map(|n| text(n, src).to_string())
        else {
            continue;
        };
        let Some(body) = def.child_by_field_name("body") else {
            continue;
        };
        let head = &src[def.start_byte()..body.start_byte()];
        let mut dc = def.walk();
        let attributed = def
            .children(&mut dc)
            .any(|c| c.kind().starts_with("attribute") || c.kind() == "ms_declspec_modifier")
            || head.contains("__attribute__")
            || head.contains("__declspec");
        let declarator_dead = coverage.is_dead(pos(src, decl.start_byte()), pos(src, decl.end_byte()));
        let body_dead = statements_dead(src, body, coverage) || body.named_child_count() == 0;
        if name != "main"
            && !attributed
            && !head.contains('{')
            && declarator_dead
            && body_dead
            && words.get_or_insert_with(|| word_counts(src, root)).get(name.as_str()) == Some(&1)
            && !contains_forbidden(body)
        {
            out.push(Candidate::Function(def, name));
        }
    }
    out
}

/// The range to remove for `node`: its whole lines when nothing else is on
/// them, else exactly the node.
fn removal_range(src: &str, node: Node<'_>) -> (Pos, Pos) {
    let (s, e) = (node.start_byte(), node.end_byte());
    let line_start = src[..s].rfind('\n').map_or(0, |i| i + 1);
    let line_end = src[e..].find('\n').map_or(src.len(), |i| e + i);
    if src[line_start..s].trim().is_empty() && src[e..line_end].trim().is_empty() {
        let end = if line_end < src.len() { line_end + 1 } else { line_end };
        (pos(src, line_start), pos(src, end))
    } else {
        (pos(src, s), pos(src, e))
    }
}

impl ProgramTransformation for RemoveDeadCode {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::RemoveDeadCode
    }

    /// Removes one randomly chosen dead block body or function;
    /// [`Transformed::node`] is `compound_statement` (the emptied block,
    /// [`Transformed::at`] its `{`) or `function_definition` (`at` where it
    /// was, new numbering). [`Transformed::breakability_may_change`] holds
    /// the lines from the head of the emptied block's statement to its `{`,
    /// and the lines where a removal joined code (a function that did not
    /// have its lines to itself).
    ///
    /// Errors: [`Skip`] without coverage, with syntax errors, or when no
    /// block or function is dead and safe to remove.
    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        let kind = self.kind();
        let Some(coverage) = input.coverage else {
            return Err(Skip::new(kind, "no coverage of the initial run"));
        };
        let src = input.source;
        let tree = parse(src).ok_or_else(|| Skip::new(kind, "tree-sitter could not parse the program"))?;
        broken(kind, &tree)?;
        try_candidates(
            kind,
            src,
            candidates(src, tree.root_node(), coverage),
            rng,
            "no never-executed block body or unreferenced never-called function",
            |c, _| match c {
                Candidate::Block(b) => {
                    let open = pos(src, b.start_byte());
                    // The `if`, `else`, `while` or `for` whose body this is:
                    // its head and the `{` precede the removal and keep
                    // their line numbers.
                    let head = b.parent().map_or(open.line, |p| p.start_position().row as u32 + 1);
                    let inner_start = pos(src, b.start_byte() + 1);
                    let inner_end = pos(src, b.end_byte() - 1);
                    let last = b.end_position().row as u32 + 1;
                    Some(Attempt {
                        edits: vec![SourceEdit::replace(inner_start, inner_end, "")],
                        description: format!(
                            "emptied the never-executed block at {}:{}-{}:{} (old numbering)",
                            open.line,
                            open.column,
                            last,
                            b.end_position().column
                        ),
                        at: Box::new(move |_| open),
                        node: "compound_statement".into(),
                        expect_variable: None,
                        breakability_may_change: Some(Box::new(move |map| {
                            let mut lines: BTreeSet<u32> = map.joined_lines().into_iter().collect();
                            lines.extend(head..=open.line);
                            lines.into_iter().collect()
                        })),
                    })
                }
                Candidate::Function(def, name) => {
                    let (start, end) = removal_range(src, *def);
                    Some(Attempt {
                        edits: vec![SourceEdit::replace(start, end, "")],
                        description: format!(
                            "removed the never-called function `{name}` at lines {}-{} (old numbering)",
                            def.start_position().row + 1,
                            def.end_position().row + 1
                        ),
                        at: Box::new(move |_| start),
                        node: "function_definition".into(),
                        expect_variable: None,
                        breakability_may_change: Some(Box::new(|map| map.joined_lines())),
                    })
                }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::c::transform::test_util::compiles;
    use rand::SeedableRng;

    /// A dead range as ((line, column), (line, column)).
    type Range = ((u32, u32), (u32, u32));

    fn run(src: &str, dead: &[Range], seed: u64) -> Result<Transformed, Skip> {
        let coverage = Coverage {
            dead: dead
                .iter()
                .map(|&((a, b), (c, d))| (Pos::new(a, b), Pos::new(c, d)))
                .collect(),
        };
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        RemoveDeadCode.apply(ProgramInput::new(src, Some(&coverage)), &mut rng)
    }

    const PROG: &str = "#include <stdio.h>\nstatic int never(int x)\n{\n    return x * 2;\n}\n\nint main(void) {\n    int a = 1;\n    if (a > 5) {\n        printf(\"big\\n\");\n        a = 2;\n    }\n    return a;\n}\n";

    #[test]
    fn a_dead_branch_body_is_emptied() {
        // Only the branch is dead (as gcov reports lines 10-11).
        let t = run(PROG, &[((10, 1), (12, 1))], 0).unwrap();
        assert_eq!(
            t.text,
            "#include <stdio.h>\nstatic int never(int x)\n{\n    return x * 2;\n}\n\nint main(void) {\n    int a = 1;\n    if (a > 5) {}\n    return a;\n}\n"
        );
        assert_eq!(t.node, "compound_statement");
        assert_eq!(t.at, Pos::new(9, 16));
        assert_eq!(t.map.map_line(10), None);
        assert_eq!(t.map.map_line(13), Some(10), "return moves up");
        assert_eq!(
            t.breakability_may_change,
            vec![9],
            "the `if` line, which holds the `}}` too"
        );
        assert!(compiles(&t.text));
    }

    #[test]
    fn a_never_called_unreferenced_function_is_removed() {
        let t = run(PROG, &[((2, 1), (5, 1))], 0).unwrap();
        assert_eq!(
            t.text,
            "#include <stdio.h>\n\nint main(void) {\n    int a = 1;\n    if (a > 5) {\n        printf(\"big\\n\");\n        a = 2;\n    }\n    return a;\n}\n"
        );
        assert_eq!(t.node, "function_definition");
        assert_eq!(t.at, Pos::new(2, 1));
        assert_eq!(t.map.map_line(4), None);
        assert_eq!(t.map.map_line(9), Some(5));
        assert!(t.breakability_may_change.is_empty(), "whole lines went");
        assert!(compiles(&t.text));
    }

    #[test]
    fn breakability_may_change_from_the_head_of_the_statement_to_its_brace() {
        let src = "int main(int c, char **v) {\n    if (c > 5 &&\n        c < 9)\n    {\n        c = 2;\n    }\n    if (c) {\n        c = 3;\n    } else {\n        c = 4;\n    }\n    return 0;\n}\n";
        let t = run(src, &[((5, 1), (6, 1))], 0).unwrap();
        assert!(t.text.contains("        c < 9)\n    {}\n    if (c) {"), "{}", t.text);
        assert_eq!(t.breakability_may_change, vec![2, 3, 4]);
        let t = run(src, &[((10, 1), (11, 1))], 0).unwrap();
        assert!(t.text.contains("    } else {}\n    return 0;"), "{}", t.text);
        assert_eq!(t.breakability_may_change, vec![9], "the `else` line");
        assert!(compiles(&t.text));
    }

    #[test]
    fn skips_without_coverage_executed_code_and_referenced_functions() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0);
        let err = RemoveDeadCode
            .apply(ProgramInput::new(PROG, None), &mut rng)
            .unwrap_err();
        assert!(err.reason.contains("no coverage"));
        // Nothing dead.
        assert!(run(PROG, &[], 0).is_err());
        // Dead range covering only part of the block.
        assert!(run(PROG, &[((10, 1), (11, 1))], 0).is_err());
        // A dead function that is referenced (a prototype names it).
        let referenced = "int f(void);\nint f(void)\n{\n    return 1;\n}\nint main(void) { return 0; }\n";
        assert!(run(referenced, &[((2, 1), (5, 1))], 0).is_err());
        // A dead block with a label or a case label.
        let labelled = "int main(int c, char **v) {\n    if (c > 5) {\n        l: c = 2;\n    }\n    return 0;\n}\n";
        assert!(run(labelled, &[((3, 1), (4, 1))], 0).is_err());
    }
}
