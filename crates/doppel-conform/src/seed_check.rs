//! The oxc check every generated program passes (JEST, ICSE 2021, §III-A:
//! only programs a real parser accepts count), and the syntax tree the
//! mutators edit: the spans of expressions, statements and literals with
//! the context that decides which statements may go where.
//!
//! Programs are classic Scripts (ECMA-262 §16.1), sloppy unless they say
//! `"use strict"`. "Accepted" means oxc's parser reports no error and its
//! semantic checker reports no early error (ECMA-262 "Static Semantics:
//! Early Errors"), the same check as `doppel_lang::js::syntax_errors`.

use oxc_allocator::Allocator;
use oxc_ast::AstKind;
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::{GetSpan, SourceType};

/// The first syntax or early error oxc reports for `source` (as a Script),
/// `Ok` when there is none.
pub fn oxc_check(source: &str) -> Result<(), String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::script()).parse();
    if let Some(d) = parsed.diagnostics.errors().next() {
        return Err(d.to_string());
    }
    if parsed.panicked {
        return Err("the parser gave up".into());
    }
    let built = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .build(&parsed.program);
    match built.diagnostics.errors().next() {
        Some(d) => Err(d.to_string()),
        None => Ok(()),
    }
}

/// What a [`Node`] is, for the mutators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An expression (ECMA-262 §13; any oxc expression node).
    Expression,
    /// A statement or declaration in a statement list (script, block,
    /// function body, switch case, static block).
    ListStatement,
    /// A statement that is the body of `if`, a loop, a label or `with`.
    BodyStatement,
    /// A string literal (ECMA-262 §12.9.4) outside directives and imports.
    StringLiteral,
    /// The name after `.` in a member expression (`o.name`).
    MemberName,
    /// A block or function body (`{ ... }`; insertion after its `{`).
    Block,
}

/// Where a node sits: which control diverters (ECMA-262 §14.8-14.10, 14.14)
/// are legal at it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Context {
    /// Inside a function body (not crossing a class static block): `return` is legal.
    pub function: bool,
    /// Inside a loop of the current function: `break` and `continue` are legal.
    pub iteration: bool,
    /// Inside a `switch` of the current function: `break` is legal.
    pub switch: bool,
    /// Inside a generator function (`yield` is an operator there).
    pub generator: bool,
    /// Inside an async function (`await` is an operator there).
    pub asynchronous: bool,
}

/// A node of the syntax tree: kind, byte span, context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// What it is.
    pub kind: NodeKind,
    /// Byte offset of its first character.
    pub start: usize,
    /// Byte offset after its last character.
    pub end: usize,
    /// Its context.
    pub context: Context,
}

/// The nodes of an accepted program, in source order (parents first).
#[derive(Debug, Clone, Default)]
pub struct SyntaxTree {
    /// Every node of a kind in [`NodeKind`].
    pub nodes: Vec<Node>,
    /// The names the program declares (binding identifiers), sorted, distinct.
    pub bindings: Vec<String>,
}

impl SyntaxTree {
    /// Parses `source`; `None` when oxc does not accept it ([`oxc_check`]).
    pub fn parse(source: &str) -> Option<SyntaxTree> {
        let allocator = Allocator::default();
        let parsed = Parser::new(&allocator, source, SourceType::script()).parse();
        if parsed.panicked || parsed.diagnostics.errors().next().is_some() {
            return None;
        }
        let built = SemanticBuilder::new()
            .with_check_syntax_error(true)
            .with_build_nodes(true)
            .build(&parsed.program);
        if built.diagnostics.errors().next().is_some() {
            return None;
        }
        let nodes = built.semantic.nodes();
        let mut out = Vec::new();
        let mut bindings = Vec::new();
        for (id, node) in nodes.iter_enumerated() {
            let kind = node.kind();
            if let AstKind::BindingIdentifier(b) = kind {
                bindings.push(b.name.to_string());
            }
            let parent = nodes.parent_kind(id);
            let Some(k) = classify(kind, parent) else { continue };
            let mut context = Context::default();
            for a in nodes.ancestor_kinds(id) {
                match a {
                    AstKind::DoWhileStatement(_)
                    | AstKind::WhileStatement(_)
                    | AstKind::ForStatement(_)
                    | AstKind::ForInStatement(_)
                    | AstKind::ForOfStatement(_) => context.iteration = true,
                    AstKind::SwitchStatement(_) => context.switch = true,
                    AstKind::Function(f) => {
                        context.function = true;
                        context.generator = f.generator;
                        context.asynchronous = f.r#async;
                        break;
                    }
                    AstKind::ArrowFunctionExpression(f) => {
                        context.function = true;
                        context.asynchronous = f.r#async;
                        break;
                    }
                    AstKind::StaticBlock(_) | AstKind::PropertyDefinition(_) => break,
                    _ => {}
                }
            }
            let span = kind.span();
            out.push(Node {
                kind: k,
                start: span.start as usize,
                end: span.end as usize,
                context,
            });
        }
        bindings.sort();
        bindings.dedup();
        Some(SyntaxTree { nodes: out, bindings })
    }

    /// The nodes of one kind.
    pub fn of(&self, kind: NodeKind) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(move |n| n.kind == kind)
    }
}

fn is_list(parent: AstKind<'_>) -> bool {
    matches!(
        parent,
        AstKind::Program(_)
            | AstKind::BlockStatement(_)
            | AstKind::FunctionBody(_)
            | AstKind::SwitchCase(_)
            | AstKind::StaticBlock(_)
    )
}

fn classify(kind: AstKind<'_>, parent: AstKind<'_>) -> Option<NodeKind> {
    let statement = kind.is_statement()
        || matches!(kind, AstKind::Function(f) if f.is_declaration())
        || matches!(kind, AstKind::Class(c) if c.is_declaration());
    if statement {
        if is_list(parent) {
            return Some(NodeKind::ListStatement);
        }
        let declaration = matches!(
            kind,
            AstKind::VariableDeclaration(_) | AstKind::Function(_) | AstKind::Class(_)
        );
        let body = parent.is_iteration_statement()
            || matches!(
                parent,
                AstKind::IfStatement(_) | AstKind::LabeledStatement(_) | AstKind::WithStatement(_)
            );
        if body && !declaration {
            return Some(NodeKind::BodyStatement);
        }
        if matches!(kind, AstKind::BlockStatement(_)) {
            return Some(NodeKind::Block);
        }
        return None;
    }
    Some(match kind {
        AstKind::StringLiteral(_) if !matches!(parent, AstKind::Directive(_) | AstKind::ImportDeclaration(_)) => {
            NodeKind::StringLiteral
        }
        AstKind::IdentifierName(_) if matches!(parent, AstKind::StaticMemberExpression(_)) => NodeKind::MemberName,
        AstKind::FunctionBody(_) => NodeKind::Block,
        AstKind::IdentifierReference(_)
        | AstKind::ThisExpression(_)
        | AstKind::ArrayExpression(_)
        | AstKind::ObjectExpression(_)
        | AstKind::TemplateLiteral(_)
        | AstKind::TaggedTemplateExpression(_)
        | AstKind::ComputedMemberExpression(_)
        | AstKind::StaticMemberExpression(_)
        | AstKind::PrivateFieldExpression(_)
        | AstKind::CallExpression(_)
        | AstKind::NewExpression(_)
        | AstKind::UpdateExpression(_)
        | AstKind::UnaryExpression(_)
        | AstKind::BinaryExpression(_)
        | AstKind::LogicalExpression(_)
        | AstKind::ConditionalExpression(_)
        | AstKind::AssignmentExpression(_)
        | AstKind::SequenceExpression(_)
        | AstKind::ChainExpression(_)
        | AstKind::ParenthesizedExpression(_)
        | AstKind::ArrowFunctionExpression(_)
        | AstKind::NumericLiteral(_)
        | AstKind::BooleanLiteral(_)
        | AstKind::NullLiteral(_)
        | AstKind::BigIntLiteral(_)
        | AstKind::RegExpLiteral(_)
        | AstKind::StringLiteral(_) => NodeKind::Expression,
        AstKind::Function(f) if !f.is_declaration() => NodeKind::Expression,
        AstKind::Class(c) if !c.is_declaration() => NodeKind::Expression,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn early_errors_are_rejected() {
        assert!(oxc_check("let a = 1; a + 1;").is_ok());
        assert!(oxc_check("let a; let a;").is_err(), "redeclaration is an early error");
        assert!(oxc_check("new . target ;").is_err());
        assert!(oxc_check("break;").is_err());
        assert!(oxc_check("(").is_err());
    }

    #[test]
    fn contexts_follow_functions_and_loops() {
        let src = "for (;;) { f(); } function g() { switch (1) { case 1: h(); } }";
        let t = SyntaxTree::parse(src).expect("accepted");
        let at = |text: &str| {
            let start = src.find(text).unwrap();
            *t.nodes
                .iter()
                .find(|n| n.start == start && n.kind == NodeKind::ListStatement)
                .unwrap()
        };
        let f = at("f();");
        assert!(f.context.iteration && !f.context.function);
        let h = at("h();");
        assert!(h.context.function && h.context.switch && !h.context.iteration);
        assert!(t.of(NodeKind::Expression).count() >= 4);
        assert_eq!(t.bindings, ["g"]);
    }
}
