//! Lines of a Rust program where a statement can be inserted at column 1,
//! for line augmentation of Rust programs (Li, Ding, Zhang & Italiano, PLDI
//! 2020, section 6.1: "our framework needs to adjust the program
//! instrumentation based on the differences between the grammars"; the
//! barrier `opt_me_not()` lives in a crate of its own).
//!
//! A line qualifies when text inserted at its column 1, such as
//! `::opt_me_not::opt_me_not(); `, becomes a statement of the same block
//! that runs right before the statement the line starts (and only then).
//! Found with tree-sitter-rust; the rules:
//!
//! 1. The line's first token (before it only blank space and complete
//!    `/* */` comments) begins an item of a `block` (`{ ... }`): a `let`
//!    declaration, an expression statement (macro calls included), or the
//!    block's tail expression. Lines inside a multi-line statement or
//!    expression (method-chain continuations, arguments, `else` lines,
//!    `match` arms without braces) are out: they begin no block item.
//! 2. The block is inside the body of a function (`fn` item, at any depth,
//!    closures and `async` blocks included) that is not a `const fn`, and
//!    not inside a `const` or `static` initializer or a `const { }` block:
//!    a const context cannot call the barrier.
//! 3. Items declared in a block (`fn`, `struct`, `use`, `const`, ...),
//!    attributes, empty statements and comments are out; so is a statement
//!    right after an outer attribute (`#[allow(..)]` on its own line): the
//!    attribute would apply to the inserted call instead.
//! 4. Nodes with syntax errors are out.
//!
//! Unlike C (`c::statements`), there are no labels to care about: Rust's
//! labels belong to loops and blocks, which are expressions.

use crate::c::statements::only_blank_and_comments;
use std::collections::BTreeSet;
use tree_sitter::{Node, Parser};

/// Block items that are not statements (rule 3).
const NOT_STATEMENTS: [&str; 8] = [
    "attribute_item",
    "inner_attribute_item",
    "line_comment",
    "block_comment",
    "empty_statement",
    "use_declaration",
    "extern_crate_declaration",
    "macro_definition",
];

/// Ancestors that make their contents a const context (rule 2).
const CONST_CONTEXTS: [&str; 3] = ["const_item", "static_item", "const_block"];

/// The 1-based lines of `source` (Rust text) where a statement can be
/// inserted at column 1, per the rules of the module documentation. Empty
/// when tree-sitter-rust cannot be loaded; broken code yields fewer lines,
/// never wrong ones outside the broken part.
pub fn statement_starts(source: &str) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    let mut parser = Parser::new();
    if parser.set_language(&tree_sitter_rust::LANGUAGE.into()).is_err() {
        return out;
    }
    let Some(tree) = parser.parse(source, None) else {
        return out;
    };
    let lines: Vec<&str> = source.split('\n').collect();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "ERROR" || CONST_CONTEXTS.contains(&node.kind()) {
            continue;
        }
        if node.kind() == "function_item" && is_const_fn(node, source) {
            continue;
        }
        if node.kind() == "block" && in_function_body(node) {
            block_items(node, &lines, &mut out);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    out
}

/// The kind of the block item (tree-sitter-rust node kind, such as
/// `let_declaration`, `expression_statement`, `if_expression`) that starts
/// line `line` (1-based) under the rules of [`statement_starts`], with an
/// expression statement named by its expression (`call_expression`,
/// `macro_invocation`, `assignment_expression`); `None` when the line
/// starts none.
pub fn statement_kind(source: &str, line: u32) -> Option<String> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_rust::LANGUAGE.into()).ok()?;
    let tree = parser.parse(source, None)?;
    let lines: Vec<&str> = source.split('\n').collect();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.start_position().row + 1 > line as usize || (node.end_position().row + 1) < line as usize {
            continue;
        }
        if node.kind() == "block" {
            let mut cursor = node.walk();
            for item in node.named_children(&mut cursor) {
                if item.start_position().row + 1 == line as usize && qualifies(item, &lines) {
                    let kind = if item.kind() == "expression_statement" {
                        item.named_child(0).map_or(item.kind(), |e| e.kind())
                    } else {
                        item.kind()
                    };
                    return Some(kind.to_string());
                }
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    None
}

/// Whether `f` (a `function_item`) is a `const fn`.
fn is_const_fn(f: Node, source: &str) -> bool {
    let mut cursor = f.walk();
    f.children(&mut cursor)
        .filter(|c| c.kind() == "function_modifiers")
        .any(|m| {
            m.utf8_text(source.as_bytes())
                .is_ok_and(|t| t.split_whitespace().any(|w| w == "const"))
        })
}

/// Whether `block` lies inside the body of a function item (rule 2; const
/// contexts were left out on the way down).
fn in_function_body(block: Node) -> bool {
    let mut n = block;
    while let Some(p) = n.parent() {
        if p.kind() == "function_item" {
            return true;
        }
        n = p;
    }
    false
}

/// Adds the qualifying items of `block` (rules 1 and 3).
fn block_items(block: Node, lines: &[&str], out: &mut BTreeSet<u32>) {
    let mut cursor = block.walk();
    for item in block.named_children(&mut cursor) {
        if qualifies(item, lines) {
            out.insert(item.start_position().row as u32 + 1);
        }
    }
}

/// Whether block item `item` is a statement that begins its line and is
/// not preceded by an outer attribute (rules 1, 3, 4).
fn qualifies(item: Node, lines: &[&str]) -> bool {
    let kind = item.kind();
    if NOT_STATEMENTS.contains(&kind) || kind.ends_with("_item") || item.has_error() || item.is_extra() {
        return false;
    }
    let mut prev = item.prev_named_sibling();
    while let Some(p) = prev {
        if !p.kind().ends_with("_comment") {
            break;
        }
        prev = p.prev_named_sibling();
    }
    if prev.is_some_and(|p| p.kind() == "attribute_item") {
        return false;
    }
    let pos = item.start_position();
    let Some(line) = lines.get(pos.row) else { return false };
    line.get(..pos.column).is_some_and(only_blank_and_comments)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROG: &str = r#"use std::collections::HashMap;
const K: i32 = { let a = 1; a + 1 };
const fn c() -> i32 {
    let x = 3;
    x
}
fn helper(a: i32,
          b: i32) -> i32 {
    let s = a
        + b;
    s * 2
}
fn main() {
    let mut counter = 0;
    let mut tick = || {
        counter += 1;
    };
    tick();
    /* note */ tick();
    #[allow(unused_variables)]
    let unused = 5;
    struct P { x: i32 }
    fn inner() -> i32 { 1 }
    let p = P { x: inner() };
    if counter == 2 {
        println!("{}", p.x);
    } else {
        counter = 0;
    }
    let v: Vec<i32> = (0..3)
        .map(|i| i * 2)
        .collect();
    match counter {
        2 => counter += 1,
        _ => {
            counter -= 1;
        }
    }
    let m: HashMap<i32, i32> = HashMap::new();
    assert_eq!(counter + v.len() as i32 + m.len() as i32 + helper(1, 2), 9);
    // a comment
    ;
    unsafe {
        let _q = 1;
    }
}
"#;

    #[test]
    fn block_items_of_function_bodies_only() {
        let got: Vec<u32> = statement_starts(PROG).into_iter().collect();
        // Not: 1 (use), 2 (const initializer), 4-5 (const fn), 7-8, 10
        // (continuations), 20-21 (attribute and the statement after it),
        // 22-23 (items), 27 (else), 31-32 (chain), 34-35 (arms), 41, 42.
        assert_eq!(
            got,
            [9, 11, 14, 15, 16, 18, 19, 24, 25, 26, 28, 30, 33, 36, 39, 40, 43, 44],
            "{got:?}"
        );
    }

    #[test]
    fn statement_kinds() {
        assert_eq!(statement_kind(PROG, 14).as_deref(), Some("let_declaration"));
        assert_eq!(statement_kind(PROG, 18).as_deref(), Some("call_expression"));
        assert_eq!(statement_kind(PROG, 26).as_deref(), Some("macro_invocation"));
        assert_eq!(statement_kind(PROG, 16).as_deref(), Some("compound_assignment_expr"));
        assert_eq!(statement_kind(PROG, 11).as_deref(), Some("binary_expression"));
        assert_eq!(statement_kind(PROG, 27), None);
        assert_eq!(statement_kind(PROG, 1), None);
    }

    #[test]
    fn broken_code_yields_no_wrong_lines() {
        let got = statement_starts("fn main() {\n    let x = ;\n    let y = 2;\n}\n");
        assert!(!got.contains(&2), "{got:?}");
    }
}
