//! Shared analysis for the JavaScript program transformations (ISSTA'19
//! section 3.2.2): which program variables may be named at a place.
//!
//! The transformations write `v = literal` (dead code), `v = v` (no-op) and
//! read `v` (boolean literals). A wrong choice of `v` changes what the
//! program does and so yields a false warning, so the rules are strict:
//! - `v` is declared by the program with `var`, `let` or as a parameter
//!   (never `const`, a class, function, import or catch binding, never a
//!   global only the environment defines), and the innermost binding of its
//!   name at the place is that declaration (no shadowing by something else);
//! - for code that runs ([`Use::ReadWrite`]) a `let` must be declared
//!   (its whole declaration ended) textually before the place, in the same
//!   function (or the script's top level) and not directly in a `switch`
//!   (a jump to a later `case` skips the declaration): the place is then
//!   never in its temporal dead zone. `var`s and parameters are always
//!   initialized. Places inside `with` and variables referenced inside a
//!   `with` body are never used, and a top-level `var` (a property of the
//!   global object) is not used when the program may make global
//!   properties accessors or read-only.

use oxc_allocator::Allocator;
use oxc_ast::AstKind;
use oxc_parser::Parser;
use oxc_semantic::{NodeId, ScopeId, Semantic, SemanticBuilder, SymbolFlags, SymbolId};
use oxc_span::{GetSpan, SourceType};
use std::collections::HashSet;

/// Parses `source` as a classic script, runs oxc's semantic analysis and
/// calls `f` with it. `None` when the script has syntax errors (the
/// transformations only work on valid programs).
pub(crate) fn with_semantic<R>(source: &str, f: impl FnOnce(&Semantic<'_>) -> R) -> Option<R> {
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
    Some(f(&built.semantic))
}

/// How the chosen variable is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// Assigned in code that never runs (`if (false) { v = 1; }`).
    DeadWrite,
    /// Read and written (or only read) by code that runs.
    ReadWrite,
}

/// Words that mean the program may turn global variables into accessors or
/// read-only properties, or observe the global object's contents.
const GLOBAL_OBJECT_HINTS: [&str; 12] = [
    "defineProperty",
    "defineProperties",
    "freeze",
    "seal",
    "preventExtensions",
    "__defineGetter__",
    "__defineSetter__",
    "Reflect",
    "Proxy",
    "globalThis",
    "getOwnProperty",
    "with",
];

/// Names never chosen: assigning them is an error in strict code, or they
/// are non-writable globals.
const RESERVED: [&str; 5] = ["arguments", "eval", "undefined", "NaN", "Infinity"];

/// The names of the variables that code at byte `offset`, in scope `scope`
/// (the scope of the statement list or expression there) and below node
/// `at` may use as `how` says, sorted by name.
pub(crate) fn variables_at(sem: &Semantic<'_>, scope: ScopeId, at: NodeId, offset: u32, how: Use) -> Vec<String> {
    let nodes = sem.nodes();
    let scoping = sem.scoping();
    if how == Use::ReadWrite && nodes.ancestor_kinds(at).any(|k| matches!(k, AstKind::WithStatement(_))) {
        return Vec::new();
    }
    let source = sem.source_text();
    let globals_tampered = GLOBAL_OBJECT_HINTS.iter().any(|h| source.contains(h));
    let here_fn = var_scope(sem, scope);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for s in scoping.scope_ancestors(scope) {
        let mut names: Vec<(&str, SymbolId)> = scoping
            .get_bindings(s)
            .iter()
            .map(|(n, id)| (n.as_str(), *id))
            .collect();
        names.sort();
        for (name, sym) in names {
            if !seen.insert(name.to_string()) {
                continue;
            }
            if eligible(sem, sym, how, offset, here_fn, globals_tampered) {
                out.push(name.to_string());
            }
        }
    }
    out.sort();
    out
}

/// Whether symbol `sym` may be used at `offset` (see the module docs).
fn eligible(
    sem: &Semantic<'_>,
    sym: SymbolId,
    how: Use,
    offset: u32,
    here_fn: ScopeId,
    globals_tampered: bool,
) -> bool {
    let scoping = sem.scoping();
    let nodes = sem.nodes();
    let flags = scoping.symbol_flags(sym);
    let name = scoping.symbol_name(sym);
    if RESERVED.contains(&name)
        || !flags.intersects(SymbolFlags::FunctionScopedVariable | SymbolFlags::BlockScopedVariable)
        || flags.intersects(
            SymbolFlags::ConstVariable
                | SymbolFlags::Class
                | SymbolFlags::Function
                | SymbolFlags::Import
                | SymbolFlags::CatchVariable,
        )
    {
        return false;
    }
    // Declared by a `var`/`let` declaration or as a parameter.
    let decl = scoping.symbol_declaration(sym);
    let declaration = nodes
        .ancestors(decl)
        .find(|n| matches!(n.kind(), AstKind::VariableDeclaration(_) | AstKind::FormalParameters(_)));
    let Some(declaration) = declaration else {
        return false;
    };
    if how == Use::DeadWrite {
        return true;
    }
    let sym_scope = scoping.symbol_scope_id(sym);
    if flags.contains(SymbolFlags::BlockScopedVariable) {
        if declaration.kind().span().end > offset || var_scope(sem, sym_scope) != here_fn {
            return false;
        }
        let owner = nodes.kind(scoping.get_node_id(sym_scope));
        if matches!(owner, AstKind::SwitchStatement(_)) {
            return false;
        }
    }
    if matches!(declaration.kind(), AstKind::FormalParameters(p) if p.span.start <= offset && offset < p.span.end) {
        return false;
    }
    if sym_scope == scoping.root_scope_id() && flags.contains(SymbolFlags::FunctionScopedVariable) && globals_tampered {
        return false;
    }
    // Referenced inside a `with` body: the name may mean a property there.
    !scoping.get_resolved_references(sym).any(|r| {
        nodes
            .ancestor_kinds(r.node_id())
            .any(|k| matches!(k, AstKind::WithStatement(_)))
    })
}

/// The nearest function (or the script's top) scope enclosing `scope`.
pub(crate) fn var_scope(sem: &Semantic<'_>, scope: ScopeId) -> ScopeId {
    let scoping = sem.scoping();
    scoping
        .scope_ancestors(scope)
        .find(|s| scoping.scope_flags(*s).intersects(oxc_syntax_scope_var()))
        .unwrap_or(scoping.root_scope_id())
}

fn oxc_syntax_scope_var() -> oxc_semantic::ScopeFlags {
    oxc_semantic::ScopeFlags::Top | oxc_semantic::ScopeFlags::Function
}

/// Whether node `id` lies inside a function (or arrow, or class body, whose
/// source text `Function.prototype.toString` can show).
pub(crate) fn inside_function(sem: &Semantic<'_>, id: NodeId) -> bool {
    sem.nodes().ancestor_kinds(id).any(|k| {
        matches!(
            k,
            AstKind::Function(_) | AstKind::ArrowFunctionExpression(_) | AstKind::Class(_)
        )
    })
}

/// Why no transformation may change this program at all, if so: the
/// program can observe line and column numbers (error stack traces).
pub(crate) fn observes_positions(source: &str) -> Option<&'static str> {
    [
        "stack",
        "captureStackTrace",
        "prepareStackTrace",
        "lineNumber",
        "columnNumber",
    ]
    .into_iter()
    .find(|w| source.contains(w))
    .map(|_| "the program may read error stack traces, which show line and column numbers")
}

/// Whether the program may read functions' source text (changes inside a
/// function would then be observable).
pub(crate) fn observes_function_text(source: &str) -> bool {
    source.contains("toString") || source.contains("toSource")
}

/// Whether `word` occurs in `source` as a whole identifier-like word
/// `count` times.
pub(crate) fn word_count(source: &str, word: &str) -> usize {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    source
        .match_indices(word)
        .filter(|(i, _)| {
            let before = source[..*i].chars().next_back();
            let after = source[i + word.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
        .count()
}

/// A program variable that only ever holds primitive non-BigInt values:
/// every declaration is a `var`/`let` declarator without initializer or
/// with a number, string, boolean or `null` literal, and every write is
/// `v = <such literal>`, `v op= <such literal>` or `v++`/`v--`. Reading it
/// and converting it to a number (`isNaN(v)`) has no side effect and
/// cannot throw.
pub(crate) fn holds_primitives(sem: &Semantic<'_>, name: &str, scope: ScopeId) -> bool {
    let scoping = sem.scoping();
    let nodes = sem.nodes();
    let Some(sym) = scoping.find_binding(scope, name.into()) else {
        return false;
    };
    if !scoping.symbol_redeclarations(sym).is_empty() {
        return false;
    }
    let decl = scoping.symbol_declaration(sym);
    match nodes.kind(decl) {
        AstKind::VariableDeclarator(d) => {
            if !d.id.is_binding_identifier() || !d.init.as_ref().is_none_or(is_primitive_literal) {
                return false;
            }
            // `for (var x of xs)`, `for (let k in o)`: written by the loop.
            if nodes
                .ancestor_kinds(decl)
                .nth(1)
                .is_some_and(|k| matches!(k, AstKind::ForInStatement(_) | AstKind::ForOfStatement(_)))
            {
                return false;
            }
        }
        _ => return false,
    }
    scoping.get_resolved_references(sym).filter(|r| r.is_write()).all(|r| {
        let mut up = nodes.ancestors(r.node_id());
        let Some(parent) = up.find(|n| !format!("{:?}", n.kind().ty()).contains("AssignmentTarget")) else {
            return false;
        };
        match parent.kind() {
            AstKind::UpdateExpression(_) => true,
            AstKind::AssignmentExpression(a) => is_primitive_literal(&a.right),
            _ => false,
        }
    })
}

fn is_primitive_literal(e: &oxc_ast::ast::Expression<'_>) -> bool {
    use oxc_ast::ast::Expression as E;
    matches!(
        e,
        E::NumericLiteral(_) | E::StringLiteral(_) | E::BooleanLiteral(_) | E::NullLiteral(_)
    )
}
