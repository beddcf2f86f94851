//! The program transformations of interactive metamorphic debugger testing
//! for JavaScript (Tolksdorf, Lehmann & Pradel, ISSTA 2019, section 3.2.2,
//! Table 1), one file per kind, with the shared variable analysis in
//! `scope`.
//!
//! Every transformation parses the program as a classic script with oxc,
//! collects candidate places, shuffles them with the caller's generator (the
//! same generator state gives the same choice), builds [`SourceEdit`]s,
//! applies them with [`crate::edit::apply`] and re-checks the result with
//! [`crate::js::syntax_errors`] and a structural check (the new code parses
//! as the intended node, and nothing around it changed shape). A candidate
//! that fails the checks is dropped and the next one tried (at most
//! [`MAX_TRIES`]); when none is left the result is a [`Skip`] with the
//! reason.
//!
//! The transformations are conservative: a transformation that changed
//! behaviour would show up as a debugger bug that is not one. Besides the
//! per-kind rules, no kind changes a program that reads error stack traces
//! (line numbers move), and code inside functions is not changed when the
//! program mentions `toString` (function source text).

mod dead_code;
mod literal;
mod no_op;
mod remove_dead_code;
mod scope;
mod unused_parameter;

pub use dead_code::InsertDeadCode;
pub use literal::LiteralToExpression;
pub use no_op::InsertNoOp;
pub use remove_dead_code::RemoveDeadCode;
pub use unused_parameter::AddUnusedParameter;

use crate::edit::{self, LocationMap, Pos, SourceEdit};
use crate::js::syntax_errors;
use crate::transform::{ProgramTransformation, ProgramTransformationKind, Skip};
use oxc_ast::AstKind;
use oxc_span::GetSpan;
use rand::seq::SliceRandom;

/// How many candidates a transformation tries before it gives up.
pub const MAX_TRIES: usize = 16;

/// The JavaScript program transformations, one per
/// [`ProgramTransformationKind`] (ISSTA'19 Table 1), in the order of
/// [`ProgramTransformationKind::ALL`].
pub fn all() -> Vec<Box<dyn ProgramTransformation>> {
    vec![
        Box::new(InsertDeadCode),
        Box::new(RemoveDeadCode),
        Box::new(AddUnusedParameter),
        Box::new(InsertNoOp),
        Box::new(LiteralToExpression),
    ]
}

/// `items` in an order drawn from `rng`, at most [`MAX_TRIES`] of them.
pub(crate) fn shuffled<T>(mut items: Vec<T>, rng: &mut dyn rand::RngCore) -> Vec<T> {
    items.shuffle(rng);
    items.truncate(MAX_TRIES);
    items
}

/// Applies `edits` to `source` and checks the result: no syntax errors, and
/// `check` (a structural check of the new text) holds. The new text and
/// map, or why the candidate is rejected.
pub(crate) fn apply_checked(
    source: &str,
    edits: &[SourceEdit],
    check: impl FnOnce(&str) -> bool,
) -> Result<(String, LocationMap), String> {
    let (text, map) = edit::apply(source, edits).map_err(|e| e.to_string())?;
    let errors = syntax_errors(&text);
    if let Some(e) = errors.first() {
        return Err(format!("the result does not parse: {e}"));
    }
    if !check(&text) {
        return Err("the new code does not parse as intended".into());
    }
    Ok((text, map))
}

/// The shape of a parsed program for structural checks: for every node
/// its span (bytes), oxc node type name and its parent's type name.
#[derive(Debug, Default)]
pub(crate) struct Shape {
    nodes: Vec<(u32, u32, String, String)>,
}

impl Shape {
    /// The shape of `text` (empty when it does not parse).
    pub(crate) fn of(text: &str) -> Self {
        scope::with_semantic(text, |sem| {
            let nodes = sem.nodes();
            let nodes = nodes
                .iter()
                .map(|n| {
                    let s = n.kind().span();
                    let parent = if matches!(n.kind(), AstKind::Program(_)) {
                        String::new()
                    } else {
                        format!("{:?}", nodes.parent_kind(n.id()).ty())
                    };
                    (s.start, s.end, format!("{:?}", n.kind().ty()), parent)
                })
                .collect();
            Shape { nodes }
        })
        .unwrap_or_default()
    }

    /// Whether a node of type `ty` spans exactly `[start, end)` with a
    /// parent of type `parent` (`"*"`: any parent).
    pub(crate) fn has(&self, start: usize, end: usize, ty: &str, parent: &str) -> bool {
        self.nodes
            .iter()
            .any(|(s, e, t, p)| *s as usize == start && *e as usize == end && t == ty && (parent == "*" || p == parent))
    }

    /// The number of statements and declarations.
    pub(crate) fn statements(&self) -> usize {
        self.nodes
            .iter()
            .filter(|(_, _, t, _)| t.ends_with("Statement") || t.ends_with("Declaration"))
            .count()
    }
}

/// A place where a statement may be inserted: the start of a line on which
/// a statement of a statement list (script, function body, block) begins
/// as the first token.
#[derive(Debug, Clone)]
pub(crate) struct InsertPoint {
    /// Byte offset of the line's start.
    pub line_start: usize,
    /// The whitespace before the statement.
    pub indent: String,
    /// ESTree type of the statement.
    pub node: String,
    /// oxc type of the statement list's owner (`Program`, `FunctionBody`,
    /// `BlockStatement`), the parent of the inserted statement.
    pub owner: String,
    /// Variables the inserted code may name (sorted).
    pub vars: Vec<String>,
}

/// The insertion points of `source` and the variables usable at each (as
/// `how` says). `None` when `source` does not parse; points inside
/// functions are left out when the program may read function source text.
/// The insertion points of `source` with at least one variable usable
/// `how`, for an insertion kind (dead code, no-op).
///
/// Errors: the program reads its own positions, does not parse, or has no
/// such point (`none` says what is missing).
pub(crate) fn usable_insert_points(
    kind: ProgramTransformationKind,
    source: &str,
    how: scope::Use,
    none: &str,
) -> Result<Vec<InsertPoint>, Skip> {
    if let Some(why) = scope::observes_positions(source) {
        return Err(skip(kind, why));
    }
    let points = insert_points(source, how).ok_or_else(|| skip(kind, "the program does not parse"))?;
    let points: Vec<_> = points.into_iter().filter(|p| !p.vars.is_empty()).collect();
    if points.is_empty() {
        return Err(skip(kind, none));
    }
    Ok(points)
}

pub(crate) fn insert_points(source: &str, how: scope::Use) -> Option<Vec<InsertPoint>> {
    let function_text = scope::observes_function_text(source);
    scope::with_semantic(source, |sem| {
        let nodes = sem.nodes();
        let mut out = Vec::new();
        for stmt in nodes.iter() {
            if matches!(
                stmt.kind(),
                AstKind::Program(_) | AstKind::Directive(_) | AstKind::Hashbang(_)
            ) {
                continue;
            }
            let owner = nodes.parent_node(stmt.id());
            let scope_id = match owner.kind() {
                AstKind::Program(_) => Some(sem.scoping().root_scope_id()),
                AstKind::FunctionBody(_) => match nodes.parent_kind(owner.id()) {
                    AstKind::Function(f) => f.scope_id.get(),
                    AstKind::ArrowFunctionExpression(a) => a.scope_id.get(),
                    _ => None,
                },
                AstKind::BlockStatement(b) => b.scope_id.get(),
                _ => continue,
            };
            let Some(scope_id) = scope_id else { continue };
            if function_text && scope::inside_function(sem, stmt.id()) {
                continue;
            }
            let start = stmt.kind().span().start as usize;
            let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
            let indent = &source[line_start..start];
            if !indent.chars().all(|c| c == ' ' || c == '\t') {
                continue;
            }
            out.push(InsertPoint {
                line_start,
                indent: indent.to_string(),
                node: crate::js::syntax::estree_name(stmt.kind()).unwrap_or_else(|| "Statement".into()),
                owner: format!("{:?}", owner.kind().ty()),
                vars: scope::variables_at(sem, scope_id, stmt.id(), start as u32, how),
            });
        }
        out.sort_by_key(|p| p.line_start);
        out
    })
}

/// Inserts statement `code` on a new line at `point` (same indentation)
/// and checks that it parses as one statement of type `ty` in the same
/// statement list, adding `statements_added` statements in all. Returns the new text, map and the position of the
/// inserted statement (new numbering).
pub(crate) fn insert_statement(
    source: &str,
    point: &InsertPoint,
    code: &str,
    ty: &str,
    statements_added: usize,
) -> Result<(String, LocationMap, Pos), String> {
    let at = edit::pos_of_offset(source, point.line_start);
    let line = format!("{}{code}\n", point.indent);
    let before = Shape::of(source).statements();
    let start = point.line_start + point.indent.len();
    let (text, map) = apply_checked(source, &[SourceEdit::insert(at, line)], |text| {
        let shape = Shape::of(text);
        shape.has(start, start + code.len(), ty, &point.owner) && shape.statements() == before + statements_added
    })?;
    Ok((text, map, Pos::new(at.line, point.indent.chars().count() as u32 + 1)))
}

/// A [`Skip`] of `kind` for `reason`.
pub(crate) fn skip(kind: ProgramTransformationKind, reason: impl Into<String>) -> Skip {
    Skip::new(kind, reason)
}
