//! Add an unused parameter (ISSTA'19 section 3.2.2, "Add spurious parameter
//! to function declaration", Figure 11), adapted to C: a function definition
//! gets a last parameter `int <fresh>`, every prototype of it in the file
//! gets the same, and every call passes a constant `K`; the follow-up trace
//! must show `<fresh> == K` in the function's frame
//! ([`ExpectedVariable`]).
//!
//! A function qualifies when it is defined at file scope, is not `main`,
//! is neither variadic nor K&R-style, and its name occurs (outside comments
//! and strings) only as its definition's name, a prototype's name, or a
//! callee — so its address is never taken and no macro mentions it.

use super::scope::function_declarator;
use std::collections::HashMap;

use super::{Attempt, ancestors, broken, descendants, fresh_name, parse, pos, text, try_candidates, word_counts};
use crate::edit::{Pos, SourceEdit};
use crate::transform::{
    ExpectedVariable, ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed,
};
use rand::Rng as _;
use tree_sitter::Node;

/// [`ProgramTransformationKind::AddUnusedParameter`] for C.
pub struct AddUnusedParameter;

/// C library functions a header may declare: changing them would conflict.
const LIBRARY_NAMES: &[&str] = &[
    "abs", "atoi", "calloc", "exit", "free", "malloc", "memcmp", "memcpy", "memset", "printf", "putchar", "puts",
    "qsort", "rand", "realloc", "sprintf", "strcmp", "strcpy", "strlen", "strncmp", "srand", "fprintf", "labs",
];

/// A function that can take a new parameter, with every place to edit.
struct Candidate<'t> {
    name: String,
    definition: Node<'t>,
    /// Parameter lists of the definition and of every prototype.
    lists: Vec<Node<'t>>,
    /// Argument lists of every call.
    calls: Vec<Node<'t>>,
}

/// Whether a parameter list is `()` or `(void)`.
fn empty_or_void(src: &str, list: Node<'_>) -> bool {
    let mut cursor = list.walk();
    let params: Vec<Node> = list
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect();
    params.is_empty() || (params.len() == 1 && text(params[0], src).trim() == "void")
}

/// The function name a declarator of a declaration declares, with its list,
/// when the name is declared as a function (a prototype).
fn prototype<'t>(src: &str, decl: Node<'t>) -> Option<(String, Node<'t>)> {
    let f = function_declarator(decl)?;
    let name = text(f.child_by_field_name("declarator")?, src).to_string();
    Some((name, f.child_by_field_name("parameters")?))
}

fn candidates<'t>(src: &str, root: Node<'t>) -> Vec<Candidate<'t>> {
    // One pass over the tree: every prototype's parameter list and every
    // call's arguments by function name, in tree order.
    let mut prototypes: HashMap<String, Vec<Node<'t>>> = HashMap::new();
    let mut calls_of: HashMap<String, Vec<Node<'t>>> = HashMap::new();
    for n in descendants(root) {
        match n.kind() {
            "declaration" => {
                let mut c = n.walk();
                for d in n.children_by_field_name("declarator", &mut c) {
                    if let Some((pname, plist)) = prototype(src, d) {
                        prototypes.entry(pname).or_default().push(plist);
                    }
                }
            }
            "call_expression" => {
                if let (Some(f), Some(args)) = (n.child_by_field_name("function"), n.child_by_field_name("arguments"))
                    && f.kind() == "identifier"
                {
                    calls_of.entry(text(f, src).to_string()).or_default().push(args);
                }
            }
            _ => {}
        }
    }
    let words = word_counts(src, root);
    let mut out = Vec::new();
    let mut cursor = root.walk();
    for def in root.named_children(&mut cursor) {
        if def.kind() != "function_definition" {
            continue;
        }
        let Some((name, list)) = def.child_by_field_name("declarator").and_then(|d| prototype(src, d)) else {
            continue;
        };
        let mut dc = def.walk();
        let knr = def.named_children(&mut dc).any(|c| c.kind() == "declaration");
        let mut lc = list.walk();
        let odd_params = list
            .named_children(&mut lc)
            .any(|p| matches!(p.kind(), "variadic_parameter" | "identifier") || text(p, src).contains("..."));
        if name == "main"
            || LIBRARY_NAMES.contains(&name.as_str())
            || knr
            || odd_params
            || text(list, src).contains("...")
        {
            continue;
        }
        let mut lists = vec![list];
        lists.extend(prototypes.get(&name).into_iter().flatten().copied());
        let calls: Vec<Node<'t>> = calls_of.get(&name).cloned().unwrap_or_default();
        // Every occurrence of the name is the definition, a prototype or a
        // call (no function pointer, no macro use).
        if words.get(name.as_str()).copied().unwrap_or(0) != lists.len() + calls.len() {
            continue;
        }
        // Prototypes must be ordinary (no `...`, no K&R identifier lists).
        let odd_prototype = lists.iter().any(|l| {
            let mut c = l.walk();
            text(*l, src).contains("...") || l.named_children(&mut c).any(|p| p.kind() == "identifier")
        });
        // `f()` declares no prototype: calls passing arguments would stop
        // compiling once it has one.
        let unprototyped = lists.iter().any(|l| {
            let mut c = l.walk();
            l.named_children(&mut c).all(|n| n.kind() == "comment")
        });
        let calls_with_arguments = calls.iter().any(|a| {
            let mut c = a.walk();
            a.named_children(&mut c).any(|n| n.kind() != "comment")
        });
        if (unprototyped && calls_with_arguments)
            || odd_prototype
            || calls
                .iter()
                .any(|a| ancestors(*a).any(|x| x.kind().starts_with("preproc_def")))
        {
            continue;
        }
        out.push(Candidate {
            name,
            definition: def,
            lists,
            calls,
        });
    }
    out
}

impl ProgramTransformation for AddUnusedParameter {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::AddUnusedParameter
    }

    /// Adds `int doppel_pN` (the first such name not in the program) to one
    /// randomly chosen function and `K` (1..=9) to its calls;
    /// [`Transformed::node`] is `parameter_list`, [`Transformed::at`] the
    /// definition's `(`, and [`Transformed::expect_variable`] names the
    /// function, its first and last line (new numbering), the parameter and
    /// `K` in decimal (as GDB and LLDB print an `int`).
    ///
    /// Errors: [`Skip`] when the program has syntax errors or no function
    /// qualifies (only `main`, variadic, K&R, or address taken/used in macros).
    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        let kind = self.kind();
        let src = input.source;
        let tree = parse(src).ok_or_else(|| Skip::new(kind, "tree-sitter could not parse the program"))?;
        broken(kind, &tree)?;
        let fresh = fresh_name(src, "doppel_p");
        try_candidates(
            kind,
            src,
            candidates(src, tree.root_node()),
            rng,
            "no function other than main that is only called (not variadic, not K&R, address never taken)",
            |c, rng| {
                let k: u32 = rng.random_range(1..10);
                let mut edits = Vec::new();
                for l in &c.lists {
                    let open = pos(src, l.start_byte());
                    let close = pos(src, l.end_byte() - 1);
                    if empty_or_void(src, *l) {
                        let inner = Pos::new(open.line, open.column + 1);
                        edits.push(SourceEdit::replace(inner, close, format!("int {fresh}")));
                    } else {
                        edits.push(SourceEdit::insert(close, format!(", int {fresh}")));
                    }
                }
                for a in &c.calls {
                    let close = pos(src, a.end_byte() - 1);
                    let mut ac = a.walk();
                    let empty = a.named_children(&mut ac).all(|n| n.kind() == "comment");
                    edits.push(SourceEdit::insert(
                        close,
                        if empty { k.to_string() } else { format!(", {k}") },
                    ));
                }
                let list_at = pos(src, c.lists[0].start_byte());
                let (first, last) = (
                    c.definition.start_position().row as u32 + 1,
                    c.definition.end_position().row as u32 + 1,
                );
                let (name, fresh2) = (c.name.clone(), fresh.clone());
                Some(Attempt {
                    edits,
                    description: format!(
                        "added parameter `int {fresh}` to `{}` (defined at {}:{}), passing {k} at {} call(s)",
                        c.name,
                        list_at.line,
                        list_at.column,
                        c.calls.len()
                    ),
                    at: Box::new(move |m| m.map(list_at).unwrap_or(list_at)),
                    node: "parameter_list".into(),
                    expect_variable: Some(Box::new(move |m| ExpectedVariable {
                        function: name.clone(),
                        lines: (m.map_line(first).unwrap_or(first), m.map_line(last).unwrap_or(last)),
                        name: fresh2.clone(),
                        value: k.to_string(),
                    })),
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

    #[test]
    fn definition_prototypes_and_calls_change_together() {
        let src = "int add(int a, int b);\nint none(void);\nint add(int a, int b) {\n    return a + b;\n}\nint main(void) {\n    return add(1, 2) + add(add(3, 4), 5);\n}\n";
        // `none` is declared but never defined: not a candidate.
        let t = run(&AddUnusedParameter, src, 3).unwrap();
        let k = t.expect_variable.as_ref().unwrap().value.clone();
        assert_eq!(
            t.text,
            format!(
                "int add(int a, int b, int doppel_p1);\nint none(void);\nint add(int a, int b, int doppel_p1) {{\n    return a + b;\n}}\nint main(void) {{\n    return add(1, 2, {k}) + add(add(3, 4, {k}), 5, {k});\n}}\n"
            )
        );
        assert_eq!(
            t.expect_variable,
            Some(ExpectedVariable {
                function: "add".into(),
                lines: (3, 5),
                name: "doppel_p1".into(),
                value: k.clone(),
            })
        );
        assert_eq!(t.at, Pos::new(3, 8));
        assert_eq!(t.node, "parameter_list");
        // Columns after a call's argument list move right on that line.
        assert_eq!(t.map.map(Pos::new(7, 22)), Some(Pos::new(7, 25)));
        assert_eq!(t.map.map_line(4), Some(4));
        assert!(compiles(&t.text));
    }

    #[test]
    fn void_and_empty_lists_and_calls_without_arguments() {
        let src = "static int f(void);\nstatic int f(void) { return 1; }\nint main() { return f() - 1; }\n";
        let t = run(&AddUnusedParameter, src, 0).unwrap();
        let k = &t.expect_variable.as_ref().unwrap().value;
        assert_eq!(
            t.text,
            format!(
                "static int f(int doppel_p1);\nstatic int f(int doppel_p1) {{ return 1; }}\nint main() {{ return f({k}) - 1; }}\n"
            )
        );
        assert!(compiles(&t.text));
    }

    #[test]
    fn address_taken_variadic_and_main_are_skipped() {
        let src = "#include <stdarg.h>\nint cb(int x) { return x; }\nint apply(int (*f)(int), int v) { return f(v); }\nint va(int n, ...) { return n; }\nint main(void) { return apply(cb, 1) + va(1, 2); }\n";
        // `apply` qualifies; `cb` (address taken) and `va` never do.
        for seed in 0..10 {
            let t = run(&AddUnusedParameter, src, seed).unwrap();
            assert_eq!(t.expect_variable.unwrap().function, "apply");
            assert!(compiles(&t.text));
        }
        let only_bad = "int cb(int x) { return x; }\nint (*p)(int) = cb;\nint main(void) { return p(0); }\n";
        let err = run(&AddUnusedParameter, only_bad, 1).unwrap_err();
        assert!(err.reason.contains("no function"), "{}", err.reason);
        let unprototyped = "int h() { return 0; }\nint main(void) { return h(1); }\n";
        assert!(run(&AddUnusedParameter, unprototyped, 1).is_err());
        let macro_use = "#define CALL(x) g(x)\nint g(int x) { return x; }\nint main(void) { return CALL(0); }\n";
        assert!(run(&AddUnusedParameter, macro_use, 1).is_err());
    }

    #[test]
    fn fresh_name_avoids_existing_names() {
        let src = "int doppel_p1;\nint f(int a) { return a; }\nint main(void) { return f(doppel_p1); }\n";
        let t = run(&AddUnusedParameter, src, 1).unwrap();
        assert!(t.text.contains("int f(int a, int doppel_p2)"));
        assert!(compiles(&t.text));
    }
}
