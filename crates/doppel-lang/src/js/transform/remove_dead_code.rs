//! Remove dead code (ISSTA'19 section 3.2.2, "Remove dead code"): code the
//! initial run never executed, by its block coverage.

use super::{Shape, apply_checked, scope, shuffled, skip};
use crate::edit::{SourceEdit, pos_of_offset};
use crate::transform::{
    Coverage, ProgramInput, ProgramTransformation, ProgramTransformationKind, Rng, Skip, Transformed,
};
use oxc_ast::AstKind;
use oxc_ast::ast::{FunctionType, VariableDeclarationKind};
use oxc_span::GetSpan;
use std::collections::BTreeSet;

/// Words that mean a top-level function may be reached through the global
/// object rather than by its name.
const GLOBAL_LOOKUP_HINTS: [&str; 8] = [
    "this",
    "globalThis",
    "window",
    "global",
    "eval",
    "Function",
    "Reflect",
    "with",
];

/// Removes code that [`ProgramInput::coverage`] says never ran (skips
/// without coverage):
/// - the contents of a block that is the body of an `if`/`else` or a loop
///   and lies wholly inside a dead range: the braces stay (`{}`), the code
///   between them goes (lines after it move up when it spanned lines). Not
///   when the block contains `var` or function declarations (hoisted out of
///   it), labels, `yield` or `await`;
/// - a dead function declaration of a script or function body whose name
///   has no reference and occurs nowhere else in the text (for a top-level
///   function also no `this`, `globalThis`, `eval`, ... through which the
///   global object could reach it), with its whole lines when it has them
///   to itself.
///
/// `Transformed::at` is the first removed position (for a block, its `{`);
/// `node` is `BlockStatement` or `FunctionDeclaration`. Positions in the
/// removed text map to `None`. `Transformed::breakability_may_change` holds
/// the lines from the head of the emptied block's statement (the `if`,
/// loop or `else`) to its `{`, and the lines where a removal joined code.
#[derive(Debug, Clone, Copy, Default)]
pub struct RemoveDeadCode;

#[derive(Debug, Clone)]
struct Candidate {
    /// Removed bytes `[start, end)`.
    start: usize,
    end: usize,
    node: &'static str,
    /// The block's `{` (blocks only).
    block_start: Option<usize>,
    /// Where the statement whose body the block is begins: the `if` or loop
    /// keyword, or for an `else` block the end of the consequent (blocks only).
    header: Option<usize>,
}

impl ProgramTransformation for RemoveDeadCode {
    fn kind(&self) -> ProgramTransformationKind {
        ProgramTransformationKind::RemoveDeadCode
    }

    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip> {
        let kind = self.kind();
        let source = input.source;
        let Some(coverage) = input.coverage else {
            return Err(skip(kind, "no coverage of the initial run"));
        };
        if let Some(why) = scope::observes_positions(source) {
            return Err(skip(kind, why));
        }
        let candidates = candidates(source, coverage).ok_or_else(|| skip(kind, "the program does not parse"))?;
        if candidates.is_empty() {
            return Err(skip(kind, "no removable dead block or function"));
        }
        let mut last = String::new();
        for c in shuffled(candidates, rng) {
            let start = pos_of_offset(source, c.start);
            let end = pos_of_offset(source, c.end);
            let edit = SourceEdit::replace(start, end, "");
            let checked = apply_checked(source, &[edit], |text| match c.block_start {
                Some(b) => Shape::of(text).has(b, b + 2, "BlockStatement", "*"),
                None => true,
            });
            match checked {
                Ok((text, map)) => {
                    let removed = source[c.start..c.end].lines().count();
                    let at = match c.block_start {
                        Some(b) => pos_of_offset(source, b),
                        None => start,
                    };
                    // The header and the `{` precede the removal: their
                    // lines keep their numbers.
                    let mut lines: BTreeSet<u32> = map.joined_lines().into_iter().collect();
                    if let Some(h) = c.header {
                        lines.extend(pos_of_offset(source, h).line..=at.line);
                    }
                    return Ok(Transformed {
                        kind,
                        description: format!(
                            "removed dead {} code at {}:{}-{}:{} ({removed} line{})",
                            if c.node == "BlockStatement" {
                                "block"
                            } else {
                                "function"
                            },
                            start.line,
                            start.column,
                            end.line,
                            end.column,
                            if removed == 1 { "" } else { "s" }
                        ),
                        text,
                        map,
                        at,
                        node: c.node.into(),
                        expect_variable: None,
                        breakability_may_change: lines.into_iter().collect(),
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(skip(kind, format!("no dead code passed the checks ({last})")))
    }
}

/// The removable dead code of `source`.
fn candidates(source: &str, coverage: &Coverage) -> Option<Vec<Candidate>> {
    let function_text = scope::observes_function_text(source);
    let dead = |s: u32, e: u32| coverage.is_dead(pos_of_offset(source, s as usize), pos_of_offset(source, e as usize));
    scope::with_semantic(source, |sem| {
        let nodes = sem.nodes();
        let scoping = sem.scoping();
        // Code a removed block must not contain.
        let forbidden: Vec<u32> = nodes
            .iter()
            .filter(|n| match n.kind() {
                AstKind::VariableDeclaration(d) => d.kind == VariableDeclarationKind::Var,
                AstKind::Function(f) => f.r#type == FunctionType::FunctionDeclaration,
                AstKind::LabeledStatement(_) | AstKind::YieldExpression(_) | AstKind::AwaitExpression(_) => true,
                AstKind::ForOfStatement(f) => f.r#await,
                _ => false,
            })
            .map(|n| n.kind().span().start)
            .collect();
        let mut out = Vec::new();
        for node in nodes.iter() {
            if function_text && scope::inside_function(sem, node.id()) {
                continue;
            }
            match node.kind() {
                AstKind::BlockStatement(b) => {
                    let parent = nodes.parent_kind(node.id());
                    if !matches!(
                        parent,
                        AstKind::IfStatement(_)
                            | AstKind::WhileStatement(_)
                            | AstKind::DoWhileStatement(_)
                            | AstKind::ForStatement(_)
                            | AstKind::ForInStatement(_)
                            | AstKind::ForOfStatement(_)
                    ) || b.body.is_empty()
                        || !dead(b.span.start, b.span.end)
                        || forbidden.iter().any(|&f| b.span.start <= f && f < b.span.end)
                    {
                        continue;
                    }
                    let header = match parent {
                        AstKind::IfStatement(i) if i.consequent.span() != b.span => i.consequent.span().end,
                        other => other.span().start,
                    };
                    out.push(Candidate {
                        start: b.span.start as usize + 1,
                        end: b.span.end as usize - 1,
                        node: "BlockStatement",
                        block_start: Some(b.span.start as usize),
                        header: Some(header as usize),
                    });
                }
                AstKind::Function(f) if f.r#type == FunctionType::FunctionDeclaration => {
                    let parent = nodes.parent_kind(node.id());
                    let top_level = matches!(parent, AstKind::Program(_));
                    if !(top_level || matches!(parent, AstKind::FunctionBody(_))) || !dead(f.span.start, f.span.end) {
                        continue;
                    }
                    let Some(id) = &f.id else { continue };
                    let Some(sym) = id.symbol_id.get() else { continue };
                    if scoping.get_resolved_references(sym).next().is_some()
                        || !scoping.symbol_redeclarations(sym).is_empty()
                        || scope::word_count(source, &id.name) != 1
                        || (top_level && GLOBAL_LOOKUP_HINTS.iter().any(|w| source.contains(w)))
                    {
                        continue;
                    }
                    let (mut start, mut end) = (f.span.start as usize, f.span.end as usize);
                    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
                    let line_end = source[end..].find('\n').map_or(source.len(), |i| end + i);
                    if source[line_start..start].trim().is_empty() && source[end..line_end].trim().is_empty() {
                        start = line_start;
                        end = (line_end + 1).min(source.len());
                    }
                    out.push(Candidate {
                        start,
                        end,
                        node: "FunctionDeclaration",
                        block_start: None,
                        header: None,
                    });
                }
                _ => {}
            }
        }
        out
    })
}
