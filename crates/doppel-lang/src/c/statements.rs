//! Lines where a new statement can be inserted, for debug-information
//! validation (Li, Ding, Zhang & Italiano, PLDI 2020): the candidate
//! locations s of section 4.1 (a print of v "at the beginning of line s" in
//! the shadow program of section 4.2) and the places where line augmentation
//! (section 4.3) puts `opt_me_not();`.
//!
//! A line qualifies when text inserted at its column 1, such as
//! `printf(...); ` or `opt_me_not(); `, becomes a statement of the same block
//! that runs right before the statement the line starts (and only then).
//! Found with tree-sitter-c; the rules:
//!
//! 1. The line's first token begins a statement or a declaration (before
//!    it, only blank space or complete `/* */` comments) of the kinds
//!    expression, declaration, `return`, `if`, `while`, `do`, `for`,
//!    `switch`, `break`, `continue`, `goto` (an empty statement `;`
//!    included). Lines inside a multi-line statement, expression, initializer
//!    or `for (...)` header, and lines inside comments, are therefore out.
//! 2. That statement is an item of a block (`{ ... }`) of a function body:
//!    a block that is the body of a function or of a statement, not a GNU
//!    statement expression `({ ... })`. Lines outside function bodies are
//!    out, and so is the direct body of an `if`/`else`/`while`/`for`/`do`
//!    without braces (`if (x)\n  y = 1;`): inserting there would move `y = 1`
//!    out of the branch. `else` lines are out (an `else` branch is never a
//!    block item).
//! 3. Lines starting with `{` or `}` are out: a block is not inserted before
//!    (before a function body's `{` it would be outside the function).
//! 4. Labels: a line starting with a label (`lbl:`, `case 1:`, `default:`)
//!    is out (code inserted before the label would not run when a jump goes
//!    to it). A statement on a line of its own after a label (`lbl:` then
//!    `for (...)` on the next line, or a statement in a `case` body) is in,
//!    as the label applies to the inserted statement, which runs right before
//!    it on every path, unless it is a declaration directly after the label
//!    (not a statement before C23), which is out.
//! 5. Typedefs, nested function definitions, preprocessor lines and
//!    anything inside `#if` blocks are out; so are nodes with syntax errors.

use std::collections::BTreeSet;
use tree_sitter::{Node, Parser};

/// Statement kinds (tree-sitter-c) that qualify under rule 1; also the
/// statements the C transformations and the definite-assignment analysis
/// work on (each adds the kinds it needs beyond these).
pub(crate) const STATEMENTS: [&str; 11] = [
    "expression_statement",
    "declaration",
    "return_statement",
    "if_statement",
    "while_statement",
    "do_statement",
    "for_statement",
    "switch_statement",
    "break_statement",
    "continue_statement",
    "goto_statement",
];

/// Parents that make a `compound_statement` a block of a function body
/// (rule 2).
const BLOCK_PARENTS: [&str; 10] = [
    "function_definition",
    "compound_statement",
    "if_statement",
    "else_clause",
    "while_statement",
    "do_statement",
    "for_statement",
    "switch_statement",
    "labeled_statement",
    "case_statement",
];

/// The 1-based lines of `source` (C text) where a statement can be inserted
/// at column 1, per the rules of the module documentation. Empty when
/// tree-sitter-c cannot be loaded; broken code yields fewer lines, never
/// wrong ones outside the broken part.
pub fn statement_starts(source: &str) -> BTreeSet<u32> {
    let mut parser = Parser::new();
    let mut out = BTreeSet::new();
    if parser.set_language(&tree_sitter_c::LANGUAGE.into()).is_err() {
        return out;
    }
    let Some(tree) = parser.parse(source, None) else {
        return out;
    };
    let lines: Vec<&str> = source.split('\n').collect();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "ERROR" {
            continue;
        }
        if node.kind() == "compound_statement" && is_function_block(node) {
            block_items(node, &lines, &mut out);
        }
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor));
    }
    out
}

/// Whether block `node` belongs to a function body (rule 2): its parent is
/// a function definition or a statement, up to a function definition.
fn is_function_block(node: Node) -> bool {
    let mut n = node;
    while let Some(p) = n.parent() {
        if !BLOCK_PARENTS.contains(&p.kind()) {
            return false;
        }
        if p.kind() == "function_definition" {
            return true;
        }
        n = p;
    }
    false
}

/// Adds the qualifying items of block `block` (rules 1, 3, 4).
fn block_items(block: Node, lines: &[&str], out: &mut BTreeSet<u32>) {
    let mut cursor = block.walk();
    for item in block.named_children(&mut cursor) {
        match item.kind() {
            "labeled_statement" => after_label(item, item.child_by_field_name("label"), lines, out),
            "case_statement" => case_body(item, lines, out),
            _ => add(item, lines, out),
        }
    }
}

/// The statement of `labeled` (rule 4), then again if it is labeled itself.
fn after_label(labeled: Node, label: Option<Node>, lines: &[&str], out: &mut BTreeSet<u32>) {
    let Some(label) = label else { return };
    let mut cursor = labeled.walk();
    let Some(stmt) = labeled
        .named_children(&mut cursor)
        .find(|c| c.id() != label.id() && c.kind() != "comment")
    else {
        return;
    };
    if stmt.kind() == "labeled_statement" {
        after_label(stmt, stmt.child_by_field_name("label"), lines, out);
    } else if stmt.kind() != "declaration" && stmt.start_position().row > label.end_position().row {
        add(stmt, lines, out);
    }
}

/// The statements of a `case`/`default` body (rule 4).
fn case_body(case: Node, lines: &[&str], out: &mut BTreeSet<u32>) {
    let value = case.child_by_field_name("value").map(|v| v.id());
    let mut cursor = case.walk();
    let mut first = true;
    for stmt in case.named_children(&mut cursor) {
        if Some(stmt.id()) == value || stmt.kind() == "comment" {
            continue;
        }
        match stmt.kind() {
            "declaration" if first => {}
            "labeled_statement" => after_label(stmt, stmt.child_by_field_name("label"), lines, out),
            // The label line itself has the `case` keyword before.
            _ if stmt.start_position().row == case.start_position().row => {}
            _ => add(stmt, lines, out),
        }
        first = false;
    }
}

/// Adds the line of `stmt` if it is a qualifying statement that is the
/// first token of its line (rules 1, 3, 5).
fn add(stmt: Node, lines: &[&str], out: &mut BTreeSet<u32>) {
    if !STATEMENTS.contains(&stmt.kind()) || stmt.has_error() {
        return;
    }
    let pos = stmt.start_position();
    let Some(line) = lines.get(pos.row) else { return };
    let Some(before) = line.get(..pos.column) else { return };
    if only_blank_and_comments(before) {
        out.insert(pos.row as u32 + 1);
    }
}

/// Whether `text` is blank space and complete `/* */` comments only (also
/// the rule for Rust lines, `crate::rust::statements`).
pub(crate) fn only_blank_and_comments(mut text: &str) -> bool {
    loop {
        text = text.trim_start();
        if text.is_empty() {
            return true;
        }
        let Some(rest) = text.strip_prefix("/*") else {
            return false;
        };
        let Some(end) = rest.find("*/") else { return false };
        text = &rest[end + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const PROG: &str = r#"#include <stdio.h>
int g = 1;
static int f(int a,
             int b)
{
    int x = a +
        b;
    /* note */ x++;
    if (x)
        x = 2;
    else
        x = 3;
    if (x) {
        x = 4;
    } else if (b) {
        x = 5;
    }
    for (x = 0;
         x < 3; x++)
        g++;
    while (x--) { g--; }
    switch (a) {
    case 1:
        x = 6;
        break;
    default: x = 7;
    }
lbl:
    g = (x ? 1 :
         2);
    int arr[2] = {
        1,
        2 };
    x = ({ int t = 1;
           t; });
    do
        x--;
    while (x > 0);
    if (a) goto lbl;
    ;
    return x + arr[0];
}
int main(void) { return f(1, 2); }
"#;

    #[test]
    fn statement_starts_of_a_hand_written_program() {
        let got: Vec<u32> = statement_starts(PROG).into_iter().collect();
        assert_eq!(
            got,
            [6, 8, 9, 13, 14, 16, 18, 21, 22, 24, 25, 29, 31, 34, 36, 39, 40, 41]
        );
    }

    #[test]
    fn labels_and_case_bodies() {
        let src = "void h(int a) {\n  int x;\n  switch (a) {\n  case 1:\n    x = 1;\n    int y = 2;\n    x += y;\n  }\nl1:\nl2:\n  x = 3;\nl3: x = 4;\n}\n";
        let got: Vec<u32> = statement_starts(src).into_iter().collect();
        assert_eq!(got, [2, 3, 5, 6, 7, 11]);
        assert!(statement_starts("int x = 1;\nstruct S { int a; };\n").is_empty());
        assert!(statement_starts("").is_empty());
    }

    /// gcc -fsyntax-only on `src`; Err(stderr) when it does not compile.
    fn compiles(dir: &Path, src: &str) -> Result<(), String> {
        let f = dir.join("p.c");
        std::fs::write(&f, src).unwrap();
        let out = std::process::Command::new("gcc")
            .args(["-fsyntax-only", "-w", "-I/usr/include/csmith"])
            .arg(&f)
            .output()
            .unwrap();
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    fn prefix_lines(src: &str, lines: &BTreeSet<u32>) -> String {
        src.split('\n')
            .enumerate()
            .map(|(i, l)| {
                if lines.contains(&(i as u32 + 1)) {
                    format!("(void)0; {l}")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn prefixing_every_line_keeps_the_hand_written_program_valid() {
        let dir = tempfile::tempdir().unwrap();
        compiles(dir.path(), &prefix_lines(PROG, &statement_starts(PROG))).unwrap();
    }

    #[test]
    fn prefixing_every_line_keeps_csmith_programs_valid() {
        assert!(
            doppel_core::process::which("csmith").is_some(),
            "csmith is needed (apt-get install csmith libcsmith-dev)"
        );
        let dir = tempfile::tempdir().unwrap();
        for seed in [1, 2, 3, 4, 5] {
            let out = std::process::Command::new("csmith")
                .current_dir(dir.path())
                .args(["--seed", &seed.to_string(), "--no-unions", "--safe-math", "--no-argc"])
                .args([
                    "--no-inline-function",
                    "--no-bitfields",
                    "--no-return-structs",
                    "--max-funcs",
                    "5",
                ])
                .output()
                .unwrap();
            let src = String::from_utf8(out.stdout).unwrap();
            let lines = statement_starts(&src);
            assert!(lines.len() > 20, "seed {seed}: {}", lines.len());
            if let Err(e) = compiles(dir.path(), &prefix_lines(&src, &lines)) {
                panic!("seed {seed}: {e}");
            }
        }
    }

    /// Prefixes every statement line of each compiling `.c` file of
    /// `corpus` and compiles the result; returns the number checked.
    fn prefix_every_line_of(corpus: &Path) -> usize {
        let entries = std::fs::read_dir(corpus).unwrap_or_else(|e| panic!("{}: {e}", corpus.display()));
        let dir = tempfile::tempdir().unwrap();
        let mut checked = 0;
        for e in entries.filter_map(Result::ok) {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "c") {
                continue;
            }
            let Ok(src) = std::fs::read_to_string(&path) else {
                continue;
            };
            if compiles(dir.path(), &src).is_err() {
                continue;
            }
            let lines = statement_starts(&src);
            if let Err(e) = compiles(dir.path(), &prefix_lines(&src, &lines)) {
                panic!("{}: {e}", path.display());
            }
            checked += 1;
        }
        checked
    }

    #[test]
    fn prefixing_every_line_keeps_the_bundled_corpus_valid() {
        let checked = prefix_every_line_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c"));
        assert!(checked >= 25, "{checked}");
    }

    #[test]
    #[ignore = "needs ../shared"]
    fn prefixing_every_line_keeps_the_c_testsuite_valid() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/c/c-testsuite");
        let checked = prefix_every_line_of(&corpus);
        assert!(checked > 100, "{checked}");
    }
}
