//! Replace a literal by an equivalent expression (ISSTA'19 section 3.2.2,
//! "Replace literal with expression").

use super::{Shape, apply_checked, scope, shuffled, skip};
use crate::edit::{SourceEdit, pos_of_offset};
use crate::transform::{ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed};
use oxc_ast::AstKind;
use oxc_span::GetSpan;
use rand::Rng as _;

/// The largest integer `n` replaced: `n + 1` must still be exact in a double.
const MAX_INTEGER: f64 = 9_007_199_254_740_990.0; // 2^53 - 2

/// Replaces an integer or boolean literal by an equivalent parenthesized
/// expression on the same line (the columns after it on that line shift):
/// - a numeric literal whose value `n` is an integer in `0..=2^53-2` (in any
///   notation: decimal, hex, octal, binary, legacy octal, exponent) by one
///   of `(n-1+1)`, `(n+1-1)`, `(n/1)`, `(n*1)` with `n` in decimal (all
///   exact, all `+0` for `0`);
/// - `true` by `(isNaN(v) || v == v)`, `false` by `(!isNaN(v) && v != v)`,
///   where `v` is a program variable usable as by the no-op transformation
///   that moreover only ever holds primitive non-BigInt values (so
///   `isNaN(v)` calls no `valueOf` and cannot throw). Not done when the
///   program declares or assigns `isNaN`, inside `with` or inside a
///   parameter list.
///
/// Literals that are property keys (object, class, pattern keys) are not
/// replaced, nor are BigInts, strings, or literals whose replacement would
/// parse differently (e.g. a literal starting a line after an expression:
/// the parenthesis would make a call).
///
/// `Transformed::at` is the literal's start, `node` is `Literal`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiteralToExpression;

/// A replaceable literal.
#[derive(Debug, Clone)]
struct Candidate {
    start: usize,
    end: usize,
    value: Value,
    /// oxc type name of the literal's parent.
    parent: String,
    /// Variables for a boolean's expression.
    vars: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
enum Value {
    Integer(u64),
    Boolean(bool),
}

impl ProgramTransformation for LiteralToExpression {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::LiteralToExpression
    }

    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        let kind = self.kind();
        let source = input.source;
        if let Some(why) = scope::observes_positions(source) {
            return Err(skip(kind, why));
        }
        let candidates = candidates(source).ok_or_else(|| skip(kind, "the program does not parse"))?;
        if candidates.is_empty() {
            return Err(skip(kind, "no replaceable integer or boolean literal"));
        }
        let statements = Shape::of(source).statements();
        let mut last = String::new();
        for c in shuffled(candidates, rng) {
            let code = match c.value {
                Value::Integer(n) => match rng.random_range(0..4) {
                    0 => match n {
                        0 => "(-1+1)".to_string(),
                        _ => format!("({}+1)", n - 1),
                    },
                    1 => format!("({}-1)", n + 1),
                    2 => format!("({n}/1)"),
                    _ => format!("({n}*1)"),
                },
                Value::Boolean(b) => {
                    let v = &c.vars[rng.random_range(0..c.vars.len())];
                    if b {
                        format!("(isNaN({v}) || {v} == {v})")
                    } else {
                        format!("(!isNaN({v}) && {v} != {v})")
                    }
                }
            };
            let start = pos_of_offset(source, c.start);
            let end = pos_of_offset(source, c.end);
            let edit = SourceEdit::replace(start, end, code.clone());
            let checked = apply_checked(source, &[edit], |text| {
                let shape = Shape::of(text);
                shape.has(c.start, c.start + code.len(), "ParenthesizedExpression", &c.parent)
                    && shape.statements() == statements
            });
            match checked {
                Ok((text, map)) => {
                    return Ok(Transformed {
                        kind,
                        description: format!(
                            "replaced `{}` at {}:{} with `{code}`",
                            &source[c.start..c.end],
                            start.line,
                            start.column
                        ),
                        text,
                        map,
                        at: start,
                        node: "Literal".into(),
                        expect_variable: None,
                        breakability_may_change: Vec::new(),
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(skip(kind, format!("no literal passed the checks ({last})")))
    }
}

/// Whether the program may change what `isNaN` means.
fn redefines_is_nan(source: &str) -> bool {
    source.match_indices("isNaN").any(|(i, _)| {
        let rest = source[i + 5..].trim_start();
        rest.starts_with('=') && !rest.starts_with("==")
    }) || (source.contains("isNaN")
        && ["defineProperty", "Reflect", "with", "delete"]
            .iter()
            .any(|w| source.contains(w)))
}

/// The replaceable literals of `source` (see [`LiteralToExpression`]).
fn candidates(source: &str) -> Option<Vec<Candidate>> {
    let function_text = scope::observes_function_text(source);
    let is_nan_changed = redefines_is_nan(source);
    scope::with_semantic(source, |sem| {
        let nodes = sem.nodes();
        let booleans_ok = !is_nan_changed && !sem.scoping().symbol_names().any(|n| n == "isNaN");
        let mut out = Vec::new();
        for node in nodes.iter() {
            let span = node.kind().span();
            let value = match node.kind() {
                AstKind::NumericLiteral(n) => {
                    if n.value.fract() != 0.0 || !(0.0..=MAX_INTEGER).contains(&n.value) {
                        continue;
                    }
                    Value::Integer(n.value as u64)
                }
                AstKind::BooleanLiteral(b) if booleans_ok => Value::Boolean(b.value),
                _ => continue,
            };
            let parent = nodes.parent_node(node.id());
            let is_value = |v: Option<oxc_span::Span>| v == Some(span);
            let key_free = match parent.kind() {
                AstKind::ObjectProperty(p) => is_value(Some(p.value.span())) && p.key.span() != span,
                AstKind::PropertyDefinition(p) => is_value(p.value.as_ref().map(GetSpan::span)) && p.key.span() != span,
                AstKind::MethodDefinition(_)
                | AstKind::AccessorProperty(_)
                | AstKind::BindingProperty(_)
                | AstKind::AssignmentTargetPropertyProperty(_)
                | AstKind::ImportDeclaration(_)
                | AstKind::ExportNamedDeclaration(_)
                | AstKind::ExportAllDeclaration(_)
                | AstKind::ExportDefaultDeclaration(_)
                | AstKind::Directive(_) => false,
                _ => true,
            };
            if !key_free || (function_text && scope::inside_function(sem, node.id())) {
                continue;
            }
            let mut vars = Vec::new();
            if matches!(value, Value::Boolean(_)) {
                if nodes
                    .ancestor_kinds(node.id())
                    .any(|k| matches!(k, AstKind::FormalParameters(_) | AstKind::WithStatement(_)))
                {
                    continue;
                }
                vars = scope::variables_at(sem, node.scope_id(), node.id(), span.start, scope::Use::ReadWrite);
                vars.retain(|v| scope::holds_primitives(sem, v, node.scope_id()));
                if vars.is_empty() {
                    continue;
                }
            }
            out.push(Candidate {
                start: span.start as usize,
                end: span.end as usize,
                value,
                parent: format!("{:?}", parent.kind().ty()),
                vars,
            });
        }
        out
    })
}
