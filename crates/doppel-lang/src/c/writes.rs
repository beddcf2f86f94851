//! The variables a line writes, for debug-information validation (PLDI'20):
//! a pair (s, v) whose line s itself writes v has no single "value of v at
//! s". The reference is v before s (a print prefixed to the line), but an
//! optimized build may attribute its first `is_stmt` address of s to an
//! instruction after the write (a `for` header's initialization folded into
//! the loop, an assignment scheduled first), where the debugger then shows
//! the new value without any debug information being wrong.
//!
//! A line writes v when an assignment (`v = ...`, `v += ...`, and the
//! element or member forms `v[i] = ...`, `v.f = ...`), an increment or
//! decrement (`v++`, `--v`), or an address-of (`&v`, which lets anything on
//! the line write v) starts on it. Found with tree-sitter-c.

use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::{Node, Parser};

/// Line (1-based) -> the identifiers written on it.
pub fn writes_by_line(source: &str) -> BTreeMap<u32, BTreeSet<String>> {
    let mut parser = Parser::new();
    let mut out: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    if parser.set_language(&tree_sitter_c::LANGUAGE.into()).is_err() {
        return out;
    }
    let Some(tree) = parser.parse(source, None) else {
        return out;
    };
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        let target = match n.kind() {
            "assignment_expression" => n.child_by_field_name("left"),
            "update_expression" => n.child_by_field_name("argument"),
            "pointer_expression" if n.child_by_field_name("operator").is_some_and(|o| o.kind() == "&") => {
                n.child_by_field_name("argument")
            }
            _ => None,
        };
        if let Some(t) = target.and_then(base_identifier)
            && let Ok(name) = t.utf8_text(source.as_bytes())
        {
            out.entry(n.start_position().row as u32 + 1)
                .or_default()
                .insert(name.to_string());
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    out
}

/// The variable an lvalue names: `v`, `v[i][j]`, `v.f`, `(v)`; not `*p`
/// (that writes what p points to, not p) nor `p->f`.
fn base_identifier(n: Node) -> Option<Node> {
    match n.kind() {
        "identifier" => Some(n),
        "subscript_expression" => n.child_by_field_name("argument").and_then(base_identifier),
        "field_expression" => {
            let arrow = n.child_by_field_name("operator").is_some_and(|o| o.kind() == "->");
            if arrow {
                None
            } else {
                n.child_by_field_name("argument").and_then(base_identifier)
            }
        }
        "parenthesized_expression" => n.named_child(0).and_then(base_identifier),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(src: &str, line: u32) -> Vec<String> {
        writes_by_line(src)
            .get(&line)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    #[test]
    fn assignments_increments_and_address_of_write_their_variable() {
        let src = "int f(int *p) {\n  int a = 0, b[2], i;\n  for (i = 0; i < 2; i++) b[i] = a;\n  a += (b[0] = 1);\n  *p = 3;\n  g(&a);\n  return --a;\n}\n";
        assert_eq!(on(src, 3), ["b", "i"]);
        assert_eq!(on(src, 4), ["a", "b"]);
        assert!(on(src, 5).is_empty(), "*p = 3 writes *p, not p");
        assert_eq!(on(src, 6), ["a"]);
        assert_eq!(on(src, 7), ["a"]);
        assert!(
            on(src, 2).is_empty(),
            "initializers declare, they are not in scope before"
        );
    }

    #[test]
    fn members_and_parentheses_name_the_base_variable() {
        let src = "void f(void) {\n  struct { int x; } s, *q;\n  s.x = 1; (s).x++;\n  q->x = 2;\n}\n";
        assert_eq!(on(src, 3), ["s"]);
        assert!(on(src, 4).is_empty(), "q->x writes *q");
    }
}
