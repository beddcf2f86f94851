//! Insert dead code (ISSTA'19 section 3.2.2, "Add dead code"): a new line
//! `if (0) { v = <literal>; }` before a statement, where `v` is a modifiable
//! arithmetic variable visible there and the literal a small integer.
//! Lines after the insertion move down by one.

use super::scope::{self, Variable};
use super::{Attempt, broken, parse, pos, text, try_candidates};
use crate::c::assignment::DefiniteAssignment;
use crate::edit::{Pos, SourceEdit};
use crate::transform::{ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed};
use rand::Rng as _;
use tree_sitter::Node;

/// [`ProgramTransformationKind::InsertDeadCode`] for C.
pub struct InsertDeadCode;

/// Whether a statement may be inserted before a node of this kind.
fn insertable_before(kind: &str) -> bool {
    crate::c::statements::STATEMENTS.contains(&kind) || kind == "compound_statement"
}

/// Blocks whose statements may get a new statement before them: function
/// bodies and blocks nested in statements (not a `switch` body directly, not
/// a GNU statement expression).
const BLOCK_PARENTS: &[&str] = &[
    "function_definition",
    "compound_statement",
    "if_statement",
    "else_clause",
    "while_statement",
    "for_statement",
    "do_statement",
    "case_statement",
    "labeled_statement",
];

/// A place to insert a statement line: before `stmt`, which is the first
/// token of its line, at line `line` with `indent` (the line's leading
/// whitespace).
pub(crate) struct InsertionPoint<'t> {
    pub stmt: Node<'t>,
    pub line: u32,
    pub indent: String,
}

/// Statements that are direct children of a function's block (or a nested
/// block), begin their line, and are not labels, `case`s, directives or
/// inside preprocessor constructs.
pub(crate) fn insertion_points<'t>(
    src: &str,
    index: &scope::ScopeIndex<'t>,
    root: Node<'t>,
) -> Vec<InsertionPoint<'t>> {
    let mut out = Vec::new();
    for block in super::descendants(root) {
        if block.kind() != "compound_statement" {
            continue;
        }
        let up = index.ancestors(block);
        if !up.first().is_some_and(|p| BLOCK_PARENTS.contains(&p.kind()))
            || !up.iter().any(|a| a.kind() == "function_definition")
            || up
                .iter()
                .any(|a| a.kind().starts_with("preproc") || a.kind() == "parenthesized_expression")
        {
            continue;
        }
        let mut cursor = block.walk();
        for stmt in block.named_children(&mut cursor) {
            if !insertable_before(stmt.kind()) {
                continue;
            }
            let start = stmt.start_byte();
            let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
            let indent = &src[line_start..start];
            if !indent.chars().all(|c| c == ' ' || c == '\t') || super::on_directive_line(src, start) {
                continue;
            }
            // The previous line must not continue into this one.
            if line_start > 0 && src[..line_start - 1].trim_end_matches('\r').ends_with('\\') {
                continue;
            }
            out.push(InsertionPoint {
                stmt,
                line: stmt.start_position().row as u32 + 1,
                indent: indent.to_string(),
            });
        }
    }
    out
}

/// Shared by dead code and no-op: insert `make(v)` on a new line before a
/// statement, `v` a variable visible there that satisfies `usable` and,
/// when `reads` (the new code reads `v`), is definitely assigned there
/// (`crate::c::assignment`: parameters, globals, and locals every path
/// to the statement assigns).
pub(crate) fn insert_statement(
    kind: ProgramTransformationKind,
    input: ProgramInput<'_>,
    rng: Rng<'_>,
    usable: fn(&Variable) -> bool,
    reads: bool,
    node: &'static str,
    make: fn(&Variable, &mut dyn rand::RngCore) -> String,
) -> Result<Transformed, Skip> {
    let src = input.source;
    let tree = parse(src).ok_or_else(|| Skip::new(kind, "tree-sitter could not parse the program"))?;
    broken(kind, &tree)?;
    let index = scope::ScopeIndex::new(src, tree.root_node(), input.scope_indexing);
    let points = insertion_points(src, &index, tree.root_node());
    if points.is_empty() {
        return Err(Skip::new(kind, "no statement in a function body begins a line"));
    }
    let lines = crate::edit::LineIndex::new(src);
    // Definite assignment of the drawn point's function only, by the
    // function's start byte (the whole program's took most of the time).
    let mut assignment: std::collections::HashMap<usize, DefiniteAssignment> = Default::default();
    // The variables of a point are looked up only when it is drawn: finding
    // them for every point first made preparation grow faster than the
    // program (`doppel bench transform`).
    try_candidates(
        kind,
        src,
        points,
        rng,
        "no suitable variable is in scope at any statement",
        |p, rng| {
            let mut vars: Vec<Variable> = index.used_visible_at(p.stmt).into_iter().filter(usable).collect();
            if reads {
                let at = lines.pos(src, p.stmt.start_byte());
                let function = index
                    .ancestors(p.stmt)
                    .into_iter()
                    .find(|a| a.kind() == "function_definition");
                let unassigned = function.and_then(|f| {
                    let name = f.child_by_field_name("declarator").and_then(scope::declarator_name)?;
                    let da = assignment
                        .entry(f.start_byte())
                        .or_insert_with(|| DefiniteAssignment::analyze_one(src, &lines, tree.root_node(), f));
                    Some(da.maybe_unassigned(text(name, src), at.line, Some(at.column)))
                });
                match unassigned {
                    Some(names) => vars.retain(|v| !names.contains(&v.name)),
                    None => vars.clear(),
                }
            }
            if vars.is_empty() {
                return None;
            }
            let v = &vars[rng.random_range(0..vars.len())];
            let code = make(v, rng);
            let before = pos(src, p.stmt.start_byte());
            let first_token = text(p.stmt, src).lines().next().unwrap_or("").trim_end();
            let at = Pos::new(p.line, p.indent.chars().count() as u32 + 1);
            Some(Attempt {
                edits: vec![SourceEdit::insert(Pos::new(p.line, 1), format!("{}{code}\n", p.indent))],
                description: format!(
                    "inserted `{code}` before `{first_token}` at {}:{} (old numbering)",
                    before.line, before.column
                ),
                at: Box::new(move |_| at),
                node: node.to_string(),
                expect_variable: None,
                breakability_may_change: None,
            })
        },
    )
}

impl ProgramTransformation for InsertDeadCode {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::InsertDeadCode
    }

    /// Inserts `if (0) { v = k; }` (`k` in 0..=9) on a new line before a
    /// randomly chosen statement; [`Transformed::node`] is `if_statement`,
    /// [`Transformed::at`] the `if` in new numbering.
    ///
    /// Errors: [`Skip`] when the program has syntax errors, no statement
    /// begins a line, or no modifiable arithmetic variable is in scope.
    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        insert_statement(
            self.kind(),
            input,
            rng,
            Variable::takes_integer_literal,
            false,
            "if_statement",
            |v, rng| format!("if (0) {{ {} = {}; }}", v.name, rng.random_range(0..10u32)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::c::transform::test_util::{compiles, run};

    #[test]
    fn single_candidate_gives_the_exact_program() {
        let src = "int main(void) {\n    int x = 1;\n    return x;\n}\n";
        let t = run(&InsertDeadCode, src, 1).unwrap();
        let k = t.text.lines().nth(2).unwrap().trim().to_string();
        assert!(k.starts_with("if (0) { x = ") && k.ends_with("; }"), "{k}");
        let lit: u32 = k["if (0) { x = ".len()..k.len() - 3].parse().unwrap();
        assert!(lit < 10);
        assert_eq!(
            t.text,
            format!("int main(void) {{\n    int x = 1;\n    if (0) {{ x = {lit}; }}\n    return x;\n}}\n")
        );
        assert_eq!(t.at, Pos::new(3, 5));
        assert_eq!(t.node, "if_statement");
        assert_eq!(t.map.map(Pos::new(3, 5)), Some(Pos::new(4, 5)), "return moves down");
        assert_eq!(t.map.map_line(2), Some(2));
        assert!(t.description.contains("return x;") && t.description.contains("3:5"));
        assert!(compiles(&t.text));
    }

    #[test]
    fn same_seed_same_result_and_tabs_are_kept() {
        let src = "int g;\nvoid f(int a, double d) {\n\tg = a;\n\ta = 2;\n\td = a;\n}\nint main(void) { f(1, 2.0); return 0; }\n";
        let a = run(&InsertDeadCode, src, 42).unwrap();
        let b = run(&InsertDeadCode, src, 42).unwrap();
        assert_eq!(a, b);
        assert!(a.text.contains("\tif (0) { "));
        assert!(compiles(&a.text));
    }

    #[test]
    fn skips_without_a_usable_variable() {
        // const, array, pointer and struct variables are not candidates.
        let src = "struct s { int a; };\nint main(void) {\n    const int c = 1;\n    int arr[2];\n    char *p = 0;\n    struct s v;\n    return c;\n}\n";
        let err = run(&InsertDeadCode, src, 3).unwrap_err();
        assert!(err.reason.contains("no suitable variable"), "{}", err.reason);
        // No variable declared before the only statement.
        let err = run(&InsertDeadCode, "int main(void) {\n    return 0;\n}\n", 3).unwrap_err();
        assert!(err.reason.contains("no suitable variable"), "{}", err.reason);
    }

    #[test]
    fn never_before_case_labels_or_labels_or_in_a_switch_body() {
        let src = "int main(void) {\n    int x = 1;\n    switch (x) {\n    case 1:\n        x = 2;\n        break;\n    }\nl:\n    x = 3;\n    return 0;\n}\n";
        for seed in 0..30 {
            let t = run(&InsertDeadCode, src, seed).unwrap();
            let line = t.at.line as usize;
            // Only before `switch` or `return` (the statements after `int x`).
            let next = t.text.lines().nth(line).unwrap().trim();
            assert!(next.starts_with("switch") || next.starts_with("return"), "{next}");
            assert!(compiles(&t.text));
        }
    }
}
