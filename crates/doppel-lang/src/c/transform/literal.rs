//! Replace a literal by an equivalent expression (ISSTA'19 section 3.2.2,
//! "Replace literal with expression"): a decimal integer literal `n`
//! (no suffix, `0 <= n <= 2147483646`, so of type `int`) becomes one of
//! `(n-1+1)`, `(n+1-1)`, `(n/1)`, `(n*1)` (all integer constant expressions
//! of type `int`, valid wherever `n` was); `0` never becomes `(-1+1)`.
//! `true` / `false` become `(v == v)` / `(v != v)` for a visible integer
//! variable `v` (never a floating one: NaN), only where a non-constant
//! expression is allowed.
//!
//! Not replaced: literals in preprocessor directives, bit-field widths,
//! array sizes of parameters, attributes and `asm`, and arguments of
//! function-like macros (which may stringify them). The replacement is on
//! one line: columns after it on that line shift.

use super::scope::{self, macro_names};
use super::{Attempt, broken, descendants, on_directive_line, parse, pos, text, try_candidates};
use crate::edit::SourceEdit;
use crate::transform::{ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed};
use rand::Rng as _;
use std::collections::HashSet;
use tree_sitter::Node;

/// [`ProgramTransformationKind::LiteralToExpression`] for C.
pub struct LiteralToExpression;

/// Ancestors under which no literal is replaced.
const FORBIDDEN_ANCESTORS: &[&str] = &[
    "bitfield_clause",
    "attribute_specifier",
    "attribute_declaration",
    "attribute",
    "gnu_asm_expression",
    "ms_declspec_modifier",
    "preproc_def",
    "preproc_function_def",
    "preproc_call",
    "preproc_include",
    "preproc_params",
];

/// Ancestors that require a constant expression (no `v == v` there).
const CONSTANT_CONTEXTS: &[&str] = &[
    "case_statement",
    "array_declarator",
    "enumerator",
    "bitfield_clause",
    "static_assert_declaration",
    "field_declaration",
    "type_definition",
];

/// The value of a decimal literal without suffix within the allowed range.
fn decimal_value(t: &str) -> Option<u64> {
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) || (t.len() > 1 && t.starts_with('0')) {
        return None;
    }
    t.parse::<u64>().ok().filter(|&n| n <= 2_147_483_646)
}

/// Whether a literal may be touched at all.
fn allowed_place<'t>(src: &str, ix: &scope::ScopeIndex<'t>, lit: Node<'t>, fn_macros: &HashSet<String>) -> bool {
    if on_directive_line(src, lit.start_byte()) {
        return false;
    }
    let mut child = lit;
    let up = ix.ancestors(lit);
    for (i, &a) in up.iter().enumerate() {
        if FORBIDDEN_ANCESTORS.contains(&a.kind()) {
            return false;
        }
        // An array size inside a parameter declaration.
        if a.kind() == "array_declarator" && up[i + 1..].iter().any(|b| b.kind() == "parameter_declaration") {
            return false;
        }
        // An argument of a function-like macro, of `assert`, or of an
        // all-caps callee (probably a macro from a header).
        if a.kind() == "call_expression"
            && a.child_by_field_name("arguments")
                .is_some_and(|args| args.id() == child.id())
            && let Some(callee) = a.child_by_field_name("function")
        {
            let name = text(callee, src);
            let caps = name.len() > 1
                && name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
            if callee.kind() != "identifier" || fn_macros.contains(name) || caps || name.contains("assert") {
                return false;
            }
        }
        child = a;
    }
    true
}

/// For `true`/`false`: the statement whose scope applies, when the literal
/// is in a function body and not in a constant-expression context.
fn boolean_statement<'t>(src: &str, ix: &scope::ScopeIndex<'t>, lit: Node<'t>) -> Option<Node<'t>> {
    let mut stmt = None;
    for a in ix.ancestors(lit) {
        if CONSTANT_CONTEXTS.contains(&a.kind()) {
            return None;
        }
        if a.kind() == "declaration" {
            let mut c = a.walk();
            let static_or_extern = a.children(&mut c).any(|s| {
                s.kind() == "storage_class_specifier" && matches!(text(s, src), "static" | "extern" | "_Thread_local")
            });
            if static_or_extern {
                return None;
            }
        }
        if stmt.is_none() && ix.parent(a).is_some_and(|p| p.kind() == "compound_statement") {
            stmt = Some(a);
        }
        if a.kind() == "function_definition" {
            return stmt;
        }
    }
    None
}

/// A replacement choice.
enum Candidate<'t> {
    Integer(Node<'t>, u64),
    Boolean(Node<'t>, bool, Vec<String>),
}

impl ProgramTransformation for LiteralToExpression {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::LiteralToExpression
    }

    /// Replaces one randomly chosen literal; [`Transformed::node`] is
    /// `number_literal`, `true` or `false`; [`Transformed::at`] the
    /// literal's (unchanged) position.
    ///
    /// Errors: [`Skip`] when the program has syntax errors or has no
    /// replaceable literal (for `true`/`false`: no integer variable in scope).
    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        let kind = self.kind();
        let src = input.source;
        let tree = parse(src).ok_or_else(|| Skip::new(kind, "tree-sitter could not parse the program"))?;
        broken(kind, &tree)?;
        let root = tree.root_node();
        let fn_macros: HashSet<String> = descendants(root)
            .into_iter()
            .filter(|n| n.kind() == "preproc_function_def")
            .filter_map(|n| n.child_by_field_name("name"))
            .map(|n| text(n, src).to_string())
            .collect();
        let macros = macro_names(src, root);
        let index = scope::ScopeIndex::new(src, root, input.scope_indexing);
        let mut candidates = Vec::new();
        for n in descendants(root) {
            match n.kind() {
                "number_literal" => {
                    if let Some(v) = decimal_value(text(n, src))
                        && allowed_place(src, &index, n, &fn_macros)
                    {
                        candidates.push(Candidate::Integer(n, v));
                    }
                }
                k @ ("true" | "false") if !macros.contains(k) => {
                    if allowed_place(src, &index, n, &fn_macros)
                        && let Some(stmt) = boolean_statement(src, &index, n)
                    {
                        let vars: Vec<String> = index
                            .used_visible_at(stmt)
                            .into_iter()
                            .filter(|v| v.reflexive_integer())
                            .map(|v| v.name)
                            .collect();
                        if !vars.is_empty() {
                            candidates.push(Candidate::Boolean(n, k == "true", vars));
                        }
                    }
                }
                _ => {}
            }
        }
        try_candidates(
            kind,
            src,
            candidates,
            rng,
            "no replaceable integer or boolean literal (with an integer variable in scope)",
            |c, rng| {
                let (node, new) = match c {
                    Candidate::Integer(node, n) => {
                        let n = *n;
                        let forms = if n == 0 { 1..4 } else { 0..4 };
                        let new = match rng.random_range(forms) {
                            0 => format!("({}+1)", n - 1),
                            1 => format!("({}-1)", n + 1),
                            2 => format!("({n}/1)"),
                            _ => format!("({n}*1)"),
                        };
                        (*node, new)
                    }
                    Candidate::Boolean(node, is_true, vars) => {
                        let v = &vars[rng.random_range(0..vars.len())];
                        let op = if *is_true { "==" } else { "!=" };
                        (*node, format!("({v} {op} {v})"))
                    }
                };
                let start = pos(src, node.start_byte());
                let end = pos(src, node.end_byte());
                Some(Attempt {
                    edits: vec![SourceEdit::replace(start, end, new.clone())],
                    description: format!(
                        "replaced the literal `{}` at {}:{} by `{new}`",
                        text(node, src),
                        start.line,
                        start.column
                    ),
                    at: Box::new(move |_| start),
                    node: node.kind().to_string(),
                    expect_variable: None,
                    breakability_may_change: None,
                })
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::c::transform::test_util::{compiles, run};
    use crate::edit::Pos;

    #[test]
    fn the_only_literal_becomes_an_equivalent_expression() {
        let src = "#define N 5\nint main(void) {\n    int x = 12; return x + N;\n}\n";
        let mut seen = HashSet::new();
        for seed in 0..40 {
            let t = run(&LiteralToExpression, src, seed).unwrap();
            let expect = ["(11+1)", "(13-1)", "(12/1)", "(12*1)"]
                .iter()
                .map(|e| format!("#define N 5\nint main(void) {{\n    int x = {e}; return x + N;\n}}\n"))
                .position(|p| p == t.text)
                .unwrap_or_else(|| panic!("unexpected {}", t.text));
            seen.insert(expect);
            assert_eq!(t.at, Pos::new(3, 13));
            assert_eq!(t.node, "number_literal");
            // `return` after the literal shifts right by 4 columns.
            assert_eq!(t.map.map(Pos::new(3, 17)), Some(Pos::new(3, 21)));
            assert_eq!(t.map.map(Pos::new(4, 1)), Some(Pos::new(4, 1)));
            assert!(compiles(&t.text));
        }
        assert_eq!(seen.len(), 4, "all four forms occur");
    }

    #[test]
    fn zero_never_becomes_minus_one_plus_one() {
        let src = "unsigned f(void) { unsigned u = 0; return u; }\n";
        for seed in 0..30 {
            let t = run(&LiteralToExpression, src, seed).unwrap();
            assert!(!t.text.contains("-1+1"), "{}", t.text);
            assert!(t.text.contains("(0*1)") || t.text.contains("(0/1)") || t.text.contains("(1-1)"));
        }
    }

    #[test]
    fn skips_programs_without_replaceable_literals() {
        let src = "#include <stdio.h>\n#define K 3\nstruct b { int f : 3; };\nvoid g(int a[10]);\nint h(int x) { return x + 0x10 + 7u + 010 + K; }\n";
        let err = run(&LiteralToExpression, src, 0).unwrap_err();
        assert!(err.reason.contains("no replaceable"), "{}", err.reason);
        let big = "long f(void) { return 2147483647 + 2.5; }\n";
        assert!(run(&LiteralToExpression, big, 0).is_err());
    }

    #[test]
    fn booleans_use_an_integer_variable_never_a_floating_one() {
        let src = "#include <stdbool.h>\nint main(void) {\n    double d = 0.0;\n    int i = 1;\n    bool b = true;\n    return b && d == 0.0 && i;\n}\n";
        for seed in 0..20 {
            let t = run(&LiteralToExpression, src, seed).unwrap();
            if t.node == "true" {
                assert!(t.text.contains("bool b = (i == i);"), "{}", t.text);
            }
            assert!(!t.text.contains("(d =="));
            assert!(compiles(&t.text));
        }
        let only_float = "#include <stdbool.h>\nint main(void) {\n    double d = 0.0;\n    bool b = false;\n    return b || d > 0.0;\n}\n";
        let err = run(&LiteralToExpression, only_float, 1).unwrap_err();
        assert!(err.reason.contains("no replaceable"), "{}", err.reason);
        let exact = "#include <stdbool.h>\nint f(int n) {\n    bool b = false;\n    return b || n;\n}\n";
        let t = run(&LiteralToExpression, exact, 5).unwrap();
        assert_eq!(
            t.text,
            "#include <stdbool.h>\nint f(int n) {\n    bool b = (n != n);\n    return b || n;\n}\n"
        );
        assert_eq!(t.node, "false");
        assert!(compiles(&t.text));
        // A parameter the function never uses has no debug information.
        let unused = "#include <stdbool.h>\nint f(int n) {\n    bool b = false;\n    return b;\n}\n";
        assert!(run(&LiteralToExpression, unused, 5).is_err());
    }

    #[test]
    fn booleans_in_constant_contexts_are_left_alone() {
        let src = "#include <stdbool.h>\nstatic bool g = true;\nint f(int n) {\n    static bool s = false;\n    switch (n) { case true: return n; }\n    return g || s;\n}\n";
        let err = run(&LiteralToExpression, src, 1).unwrap_err();
        assert!(err.reason.contains("no replaceable"), "{}", err.reason);
    }
}
