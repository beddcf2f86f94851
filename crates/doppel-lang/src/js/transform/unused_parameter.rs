//! Add an unused parameter (ISSTA'19 section 3.2.2, "Add spurious parameter
//! to function declaration", Figure 11).

use super::{Shape, apply_checked, scope, shuffled, skip};
use crate::edit::{SourceEdit, pos_of_offset};
use crate::transform::{
    ExpectedVariable, ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed,
};
use oxc_ast::AstKind;
use oxc_ast::ast::{Argument, FunctionType};
use oxc_semantic::{Semantic, SymbolId};
use oxc_span::GetSpan;

/// Adds a fresh parameter (`__doppel_p1`, or the first `__doppel_pN` the
/// program text does not contain) as the last formal parameter of a
/// function declaration, or of a function expression that initializes a
/// `var`/`let`/`const` variable; call sites stay as they are, so inside the
/// function the debugger must show the new variable with value `undefined`
/// ([`Transformed::expect_variable`]: the function's name as debuggers show
/// it, its first and last line in the new numbering).
///
/// Only functions whose extra parameter is unobservable are chosen: no rest
/// parameter; not a method, getter, setter or arrow; no use of `arguments`
/// or `eval` in it; every reference to its binding (and to a named
/// expression's own name) is the direct callee of a call with at most as
/// many arguments as it has parameters and no spread; the name occurs
/// nowhere else in the text (`this.f`, `"f"`); a top-level function has at
/// least one such call (an epilogue might call it otherwise); and the
/// program does not mention `toString` at all.
///
/// `Transformed::at` is the inserted parameter; `node` is
/// `FunctionDeclaration` or `FunctionExpression`.
#[derive(Debug, Clone, Copy, Default)]
pub struct AddUnusedParameter;

#[derive(Debug, Clone)]
struct Candidate {
    /// Byte offset where `text` goes.
    insert_at: usize,
    /// Text before the name (`", "` after an existing parameter).
    prefix: &'static str,
    /// The name debuggers show.
    function: String,
    /// The function's span (bytes).
    span: (usize, usize),
    node: &'static str,
}

impl ProgramTransformation for AddUnusedParameter {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::AddUnusedParameter
    }

    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        let kind = self.kind();
        let source = input.source;
        if let Some(why) = scope::observes_positions(source) {
            return Err(skip(kind, why));
        }
        if scope::observes_function_text(source) {
            return Err(skip(kind, "the program may read function source text (toString)"));
        }
        let candidates = candidates(source).ok_or_else(|| skip(kind, "the program does not parse"))?;
        if candidates.is_empty() {
            return Err(skip(kind, "no function whose extra parameter would go unobserved"));
        }
        let fresh = (1..)
            .map(|i| format!("__doppel_p{i}"))
            .find(|n| !source.contains(n.as_str()))
            .expect("some name is fresh");
        let mut last = String::new();
        for c in shuffled(candidates, rng) {
            let at = pos_of_offset(source, c.insert_at);
            let edit = SourceEdit::insert(at, format!("{}{fresh}", c.prefix));
            let name_start = c.insert_at + c.prefix.len();
            let checked = apply_checked(source, &[edit], |text| {
                Shape::of(text).has(
                    name_start,
                    name_start + fresh.len(),
                    "BindingIdentifier",
                    "FormalParameter",
                )
            });
            match checked {
                Ok((text, map)) => {
                    let first = pos_of_offset(&text, c.span.0).line;
                    let last_line = pos_of_offset(&text, c.span.1 + c.prefix.len() + fresh.len()).line;
                    // The new name, in new numbering (the insertion is on one line).
                    let at = crate::edit::Pos::new(at.line, at.column + c.prefix.len() as u32);
                    let shown = if c.function.is_empty() {
                        "an anonymous function"
                    } else {
                        &c.function
                    };
                    return Ok(Transformed {
                        kind,
                        description: format!(
                            "added the unused parameter `{fresh}` to {shown} at {}:{}",
                            at.line, at.column
                        ),
                        text,
                        map,
                        at,
                        node: c.node.into(),
                        expect_variable: Some(ExpectedVariable {
                            function: c.function,
                            lines: (first, last_line),
                            name: fresh,
                            value: "undefined".into(),
                        }),
                        breakability_may_change: Vec::new(),
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(skip(kind, format!("no function passed the checks ({last})")))
    }
}

/// Whether every reference to `sym` is the direct callee of a call with at
/// most `params` arguments and no spread; returns the number of references.
fn only_called(sem: &Semantic<'_>, sym: SymbolId, params: usize) -> Option<usize> {
    let nodes = sem.nodes();
    let mut count = 0;
    for r in sem.scoping().get_resolved_references(sym) {
        if r.is_write() {
            return None;
        }
        let span = nodes.kind(r.node_id()).span();
        match nodes.parent_kind(r.node_id()) {
            AstKind::CallExpression(call)
                if call.callee.span() == span
                    && call.arguments.len() <= params
                    && !call.arguments.iter().any(|a| matches!(a, Argument::SpreadElement(_))) => {}
            _ => return None,
        }
        count += 1;
    }
    Some(count)
}

/// The functions of `source` that may get a parameter.
fn candidates(source: &str) -> Option<Vec<Candidate>> {
    scope::with_semantic(source, |sem| {
        let nodes = sem.nodes();
        let scoping = sem.scoping();
        // Spans of `arguments` and `eval` references.
        let magic: Vec<u32> = nodes
            .iter()
            .filter_map(|n| match n.kind() {
                AstKind::IdentifierReference(r) if r.name == "arguments" || r.name == "eval" => Some(r.span.start),
                _ => None,
            })
            .collect();
        let mut out = Vec::new();
        for node in nodes.iter() {
            let AstKind::Function(f) = node.kind() else { continue };
            if f.params.rest.is_some() || f.body.is_none() {
                continue;
            }
            if magic.iter().any(|&m| f.span.start <= m && m < f.span.end) {
                continue;
            }
            let params = f.params.items.len();
            // The bindings through which the function can be reached.
            let mut bindings: Vec<SymbolId> = Vec::new();
            let (function, node_name) = match f.r#type {
                FunctionType::FunctionDeclaration => {
                    let Some(id) = &f.id else { continue };
                    let Some(sym) = id.symbol_id.get() else { continue };
                    if !scoping.symbol_redeclarations(sym).is_empty() {
                        continue;
                    }
                    bindings.push(sym);
                    (id.name.to_string(), "FunctionDeclaration")
                }
                FunctionType::FunctionExpression => {
                    let AstKind::VariableDeclarator(d) = nodes.parent_kind(node.id()) else {
                        continue;
                    };
                    if d.init.as_ref().map(GetSpan::span) != Some(f.span) {
                        continue;
                    }
                    let Some(var) = d.id.get_binding_identifier() else {
                        continue;
                    };
                    let Some(sym) = var.symbol_id.get() else { continue };
                    if !scoping.symbol_redeclarations(sym).is_empty() {
                        continue;
                    }
                    bindings.push(sym);
                    match &f.id {
                        Some(id) => {
                            bindings.extend(id.symbol_id.get());
                            (id.name.to_string(), "FunctionExpression")
                        }
                        None => (var.name.to_string(), "FunctionExpression"),
                    }
                }
                _ => continue,
            };
            let mut calls = 0;
            let mut ok = true;
            let mut declared_names = 0;
            for &sym in &bindings {
                match only_called(sem, sym, params) {
                    Some(n) => calls += n,
                    None => ok = false,
                }
                declared_names += 1;
                let name = scoping.symbol_name(sym);
                if source.contains(&format!("{name}.length")) {
                    ok = false;
                }
            }
            if !ok {
                continue;
            }
            // Every textual occurrence of the names is a declaration or one
            // of the calls.
            let mut names: Vec<&str> = bindings.iter().map(|s| scoping.symbol_name(*s)).collect();
            names.sort();
            names.dedup();
            let occurrences: usize = names.iter().map(|n| scope::word_count(source, n)).sum();
            if occurrences != calls + declared_names {
                continue;
            }
            let top_level = !scope::inside_function(sem, node.id());
            if top_level && calls == 0 {
                continue;
            }
            let (insert_at, prefix) = match f.params.items.last() {
                Some(p) => (p.span.end as usize, ", "),
                None => {
                    let end = f.params.span.end as usize;
                    let close = if source[..end].ends_with(')') {
                        end - 1
                    } else {
                        match source[end..].find(')') {
                            Some(i) => end + i,
                            None => continue,
                        }
                    };
                    (close, "")
                }
            };
            out.push(Candidate {
                insert_at,
                prefix,
                function,
                span: (f.span.start as usize, f.span.end as usize),
                node: node_name,
            });
        }
        out
    })
}
