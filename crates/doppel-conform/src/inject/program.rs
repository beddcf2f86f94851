//! What injection needs to know about a program before running it, from its
//! syntax (oxc): whether it parses as a classic Script (ECMA-262 §16.1), its
//! top-level lexical declarations (`let`, `const`, `class`: the bindings of the
//! global Environment Record's declarative part, §9.1.1.4, which no reflection
//! API lists), every top-level declared name, and whether its directive
//! prologue makes it strict (§11.2.2).

use oxc_allocator::Allocator;
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::SourceType;
use serde::{Deserialize, Serialize};

/// How a top-level name is declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeclarationKind {
    /// `var` (a property of the global object).
    Var,
    /// A function declaration (a property of the global object).
    Function,
    /// `let`.
    Let,
    /// `const`.
    Const,
    /// `class`.
    Class,
}

impl DeclarationKind {
    /// Whether the binding lives in the global declarative record (not on the global object).
    pub fn is_lexical(self) -> bool {
        matches!(self, Self::Let | Self::Const | Self::Class)
    }
}

/// The facts of one program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramFacts {
    /// Top-level declared names in source order, with their kinds.
    pub declarations: Vec<(String, DeclarationKind)>,
    /// Whether the program starts with a `"use strict"` directive.
    pub strict: bool,
}

impl ProgramFacts {
    /// The top-level `let`/`const`/`class` names, in source order.
    pub fn lexical_names(&self) -> Vec<String> {
        self.declarations
            .iter()
            .filter(|(_, k)| k.is_lexical())
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Whether `name` is declared at the top level.
    pub fn declares(&self, name: &str) -> bool {
        self.declarations.iter().any(|(n, _)| n == name)
    }
}

/// Parses `source` as a classic Script (sloppy unless it says `"use strict"`).
///
/// Errors: the parser's and the early-error checker's messages (at most 20),
/// when the program is not a valid Script.
pub fn facts(source: &str) -> Result<ProgramFacts, Vec<String>> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::script()).parse();
    let mut errors: Vec<String> = parsed.diagnostics.errors().map(|d| d.to_string()).collect();
    if parsed.panicked && errors.is_empty() {
        errors.push("the parser gave up".into());
    }
    if !errors.is_empty() {
        errors.truncate(20);
        return Err(errors);
    }
    let built = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .build(&parsed.program);
    let errors: Vec<String> = built.diagnostics.errors().take(20).map(|d| d.to_string()).collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let scoping = built.semantic.scoping();
    let mut declarations: Vec<(u32, String, DeclarationKind)> = scoping
        .get_bindings(scoping.root_scope_id())
        .iter()
        .map(|(name, &id)| {
            let flags = scoping.symbol_flags(id);
            let kind = if flags.is_class() {
                DeclarationKind::Class
            } else if flags.is_const_variable() {
                DeclarationKind::Const
            } else if flags.is_block_scoped() {
                DeclarationKind::Let
            } else if flags.is_function() {
                DeclarationKind::Function
            } else {
                DeclarationKind::Var
            };
            (scoping.symbol_span(id).start, name.to_string(), kind)
        })
        .collect();
    declarations.sort();
    let strict = parsed
        .program
        .directives
        .iter()
        .any(|d| d.directive.as_str() == "use strict");
    Ok(ProgramFacts {
        declarations: declarations.into_iter().map(|(_, n, k)| (n, k)).collect(),
        strict,
    })
}
