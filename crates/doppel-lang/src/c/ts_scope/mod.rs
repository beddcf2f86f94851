//! The scope oracle of debug-information validation without clang: which
//! function parameters and local variables are in scope at the start of a
//! source line, from a tree-sitter-c parse (Li, Ding, Zhang & Italiano,
//! PLDI 2020, section 4.1: "To construct the variable set V_s, we traverse
//! the abstract syntax tree (AST) of program P").
//!
//! The fallback of [`super::clang_scope`], for machines without clang or
//! files clang rejects. It builds the same [`ScopeMap`] under the same scope
//! rule (see [`super::clang_scope`]): parameters of every function
//! definition and the variables declared in its body (static locals
//! included, `extern` declarations left out, globals left out), each visible
//! from the line after the end of its declaration (`;`; for a parameter, the
//! end of the parameter's declaration) to the end of its scope (the function
//! body for parameters and the body's own declarations, depth 1; the
//! innermost compound statement, one deeper per nesting; the `for`
//! statement for a `for` header declaration), the innermost scope winning
//! when names are shared.
//!
//! # Types
//!
//! Each variable's type is rebuilt from its declaration's specifiers and
//! declarator (pointers, arrays, functions, parentheses), spelled the way
//! clang spells a `qualType` (`volatile int32_t`, `uint8_t *`,
//! `int (*)[3]`, `uint32_t[2][3]`) and, desugared at the top through the
//! file's typedefs, handed to the same kind resolution as clang's
//! ([`VarKind::of_c_type_with`] after clang_scope's typedef replacement in
//! array elements), with the same struct resolution (fields from the file's
//! `struct T { ... }` definitions, nested structs resolved up to
//! clang_scope's depth limit; a bit-field or an unnamed member makes the
//! struct [`VarKind::Other`]; a struct without definition has no fields).
//! Kinds are for x86-64 Linux (LP64, signed `char`). Parameters of array
//! and function type decay to pointers, as in C. Because the spelling is
//! clang's, the kinds agree with clang's in its corner cases too: a typedef
//! of an anonymous struct or enum is spelled by its typedef name and is
//! [`VarKind::Other`], as clang_scope makes it; `enum E` is a 32-bit signed
//! integer; unions, `float` and `double` are [`VarKind::Other`].
//!
//! # Where it is weaker than clang
//!
//! - No preprocessing: macros are not expanded (a declaration written by a
//!   macro is not seen; a type or array size given by a macro is unknown),
//!   `#include`d files are not read, and declarations inside preprocessor
//!   conditionals (`#if`, `#ifdef`, ...) within function bodies are left
//!   out, whichever branch is active (at file scope, function definitions
//!   in every branch are read).
//! - Array sizes must be integer constant expressions of literals and
//!   enumerators of the file (arithmetic, bitwise, comparison and logical
//!   operators, `?:`, parentheses); anything else (`sizeof`, casts,
//!   macros) makes the array [`VarKind::Other`]. `T a[] = {...}` and
//!   `char s[] = "..."` take their length from the initializer when it has
//!   no designators (and braces every aggregate element).
//! - Typedefs from headers are known only from a fixed list (LP64 glibc):
//!   `int8_t` to `int64_t`, `uint8_t` to `uint64_t`, `intptr_t`,
//!   `uintptr_t`, `size_t`, `ssize_t`, `ptrdiff_t`, `intmax_t`,
//!   `uintmax_t`, `wchar_t`; struct definitions only from the file. Other
//!   header types (`FILE`, `va_list`, `off_t`) are unknown names:
//!   [`VarKind::Other`], or [`VarKind::Pointer`] behind a `*`. `bool` is
//!   read as `_Bool` (`<stdbool.h>`'s macro).
//! - No semantic checking: typedefs and struct tags are looked up by name in
//!   one table for the whole file (the last definition wins, block scopes of
//!   typedefs are ignored); an invalid program gives a map all the same.
//! - Syntax errors: a function definition in which tree-sitter-c reports a
//!   syntax error (`ERROR` or missing nodes, e.g. around a macro that
//!   expands to punctuation, or a GNU extension it does not know) is left
//!   out, and so are declarations tree-sitter-c could not read at all: a
//!   partial parse would put variables in the wrong scopes. The types such
//!   a function defines and the rest of the file are still read.
//! - Type names (`type_name`) are clang's spelling except for anonymous
//!   types: `struct (unnamed struct at LINE:COLUMN)`, where clang names
//!   the file too; and an array sized by an expression it cannot evaluate
//!   keeps the expression (`int[MAX]`).
//!
//! # Agreement with clang
//!
//! Measured against [`super::clang_scope`] with clang 19, comparing each
//! line's visible variables (name, kind, parameter or not, declaration
//! line) in the tests of this module and a run over 30 Csmith seeds. On
//! Csmith programs every line agrees (30 programs, 34,194 lines, 12,218
//! variables, with and without unions, bit-fields and floating point). On
//! the 220 programs of c-testsuite, 97.4% of the lines agree (6,174 of
//! 6,338; 93.5% of the 2,524 lines where either oracle sees a variable);
//! the rest are in 6 programs that declare variables through macros, hide
//! a function behind `#ifdef` or use `va_arg` with a struct type.

use super::clang_scope::{ScopeMap, ScopedVariable, TypeTables, VarKind};
use super::transform::{self, text};
use std::collections::HashMap;
use tree_sitter::Node;

mod types;
use types::*;

#[cfg(test)]
mod tests;

/// Builds the [`ScopeMap`] of C source `source_text` (see the module
/// documentation for the rule and its limits). Line numbers are 1-based
/// lines of `source_text`. Functions with syntax errors are left out (see
/// the module documentation).
///
/// Errors: tree-sitter-c cannot parse the text at all (it returns no tree).
pub fn scopes(source_text: &str) -> Result<ScopeMap, String> {
    let tree = transform::parse(source_text).ok_or("tree-sitter-c returned no syntax tree")?;
    let mut b = Builder::new(source_text);
    b.walk(tree.root_node(), None);
    Ok(b.finish())
}

/// The scope of declarations being read: lines (first, last; 1-based) and
/// nesting depth (function body = 1).
#[derive(Debug, Clone, Copy)]
struct Block {
    scope: (u32, u32),
    depth: u32,
}

/// A variable found, its kind resolved once every type is known.
struct Found {
    var: ScopedVariable,
    /// Its type desugared at the top, spelled as clang spells it.
    desugared: String,
    declared_end: u32,
    block: Block,
}

struct Builder<'s> {
    src: &'s str,
    /// Typedef name -> its type desugared at the top.
    typedefs: HashMap<String, Ty>,
    /// The spellings of `typedefs` and the struct definitions, as
    /// clang_scope reads them from clang.
    tables: TypeTables,
    /// Enumerator -> its value (`None`: not evaluated).
    enumerators: HashMap<String, Option<i128>>,
    found: Vec<Found>,
}

/// 1-based first and last line of `node`.
fn lines(node: Node<'_>) -> (u32, u32) {
    (node.start_position().row as u32 + 1, node.end_position().row as u32 + 1)
}

fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

impl<'s> Builder<'s> {
    fn new(src: &'s str) -> Self {
        let mut b = Builder {
            src,
            typedefs: HashMap::new(),
            tables: TypeTables::default(),
            enumerators: HashMap::new(),
            found: Vec::new(),
        };
        for (name, ty) in HEADER_TYPEDEFS {
            b.add_typedef(
                name,
                Ty::Named {
                    quals: Quals::default(),
                    name: ty.to_string(),
                },
            );
        }
        b
    }

    fn text(&self, node: Node<'_>) -> &'s str {
        text(node, self.src)
    }

    fn add_typedef(&mut self, name: &str, desugared: Ty) {
        self.tables.typedefs.insert(name.to_string(), desugared.spell());
        self.typedefs.insert(name.to_string(), desugared);
    }

    /// The map, with each variable's kind resolved from the final tables
    /// (as clang_scope resolves them after reading the whole AST).
    fn finish(self) -> ScopeMap {
        let mut map = ScopeMap::default();
        for f in self.found {
            let var = ScopedVariable {
                kind: self.tables.kind_of(&f.desugared),
                ..f.var
            };
            map.push(var, f.declared_end, f.block.scope, f.block.depth);
        }
        map
    }

    /// Reads `node` in document order: type definitions anywhere, function
    /// definitions at file scope, and, inside a function body (`block` is
    /// the innermost scope), declarations and the blocks they are in.
    fn walk(&mut self, node: Node<'_>, block: Option<Block>) {
        match (node.kind(), block) {
            ("function_definition", None) if !node.has_error() => return self.function(node),
            ("type_definition", _) => {
                self.walk_children(node, block);
                return self.typedef(node);
            }
            ("struct_specifier", _) => {
                self.walk_children(node, block);
                return self.record(node);
            }
            ("enum_specifier", _) => {
                self.enum_values(node);
            }
            ("declaration", Some(b)) => {
                self.walk_children(node, block);
                return self.locals(node, b);
            }
            ("compound_statement", Some(b)) => {
                let inner = Block {
                    scope: lines(node),
                    depth: b.depth + 1,
                };
                return self.walk_children(node, Some(inner));
            }
            ("for_statement", Some(b)) => {
                let inner = Block {
                    scope: lines(node),
                    depth: b.depth + 1,
                };
                return self.walk_children(node, Some(inner));
            }
            // Which branch is active is not known: none is read.
            ("preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_elifdef" | "preproc_else", Some(_)) => {
                return;
            }
            _ => {}
        }
        self.walk_children(node, block);
    }

    fn walk_children(&mut self, node: Node<'_>, block: Option<Block>) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for c in children {
            self.walk(c, block);
        }
    }

    /// A function definition: its parameters, then its body's declarations.
    fn function(&mut self, def: Node<'_>) {
        let Some(body) = def.child_by_field_name("body") else {
            return;
        };
        // Types defined in the return type or the parameters.
        let mut cursor = def.walk();
        let heads: Vec<Node> = def.children(&mut cursor).filter(|c| c.id() != body.id()).collect();
        for h in heads {
            self.walk(h, None);
        }
        let block = Block {
            scope: lines(body),
            depth: 1,
        };
        if let Some(params) = def
            .child_by_field_name("declarator")
            .and_then(definition_declarator)
            .and_then(|f| f.child_by_field_name("parameters"))
        {
            for p in named_children(params) {
                if let Some((var, desugared, end)) = self.parameter(def, p) {
                    self.found.push(Found {
                        var,
                        desugared,
                        declared_end: end,
                        block,
                    });
                }
            }
        }
        self.walk_children(body, Some(block));
    }

    /// Parameter `p` (a `parameter_declaration`, or an identifier of an
    /// old-style definition `def`): the variable, its desugared type and
    /// the line where its declaration ends.
    fn parameter(&self, def: Node<'_>, p: Node<'_>) -> Option<(ScopedVariable, String, u32)> {
        let (ty, name, end) = match p.kind() {
            "parameter_declaration" => {
                let (ty, name) = self.declared(p, p.child_by_field_name("declarator"))?;
                (ty, name?, p.end_position().row as u32 + 1)
            }
            "identifier" => {
                // Old style: the declaration list names its type; implicit
                // `int` otherwise.
                let wanted = self.text(p);
                let mut cursor = def.walk();
                let decls: Vec<Node> = def
                    .children(&mut cursor)
                    .filter(|c| c.kind() == "declaration")
                    .collect();
                let found = decls.into_iter().find_map(|d| {
                    let mut c = d.walk();
                    let ds: Vec<Node> = d.children_by_field_name("declarator", &mut c).collect();
                    ds.into_iter().find_map(|x| {
                        let (ty, name) = self.declared(d, Some(x))?;
                        let name = name.filter(|n| self.text(*n) == wanted)?;
                        Some((ty, name, x.end_position().row as u32 + 1))
                    })
                });
                found.unwrap_or_else(|| {
                    let int = Ty::Named {
                        quals: Quals::default(),
                        name: "int".into(),
                    };
                    (int, p, p.end_position().row as u32 + 1)
                })
            }
            _ => return None,
        };
        // Arrays and functions decay to pointers, as clang prints them.
        let (type_name, desugared) = match self.decayed(&ty) {
            Some(p) => (p.spell(), p.spell()),
            None => (ty.spell(), self.desugar_top(&ty).spell()),
        };
        let var = ScopedVariable {
            name: self.text(name).to_string(),
            type_name,
            kind: VarKind::Other,
            parameter: true,
            declared_at: name.start_position().row as u32 + 1,
        };
        Some((var, desugared, end))
    }

    /// The variables declaration `decl` declares in `block`.
    fn locals(&mut self, decl: Node<'_>, block: Block) {
        let mut cursor = decl.walk();
        let is_extern = decl
            .children(&mut cursor)
            .any(|c| c.kind() == "storage_class_specifier" && self.text(c) == "extern");
        if is_extern {
            return;
        }
        let declared_end = decl.end_position().row as u32 + 1;
        let mut cursor = decl.walk();
        let declarators: Vec<Node> = decl.children_by_field_name("declarator", &mut cursor).collect();
        for d in declarators {
            let Some((mut ty, Some(name))) = self.declared(decl, Some(d)) else {
                continue;
            };
            if matches!(ty, Ty::Function { .. }) {
                // A function declaration, not a variable.
                continue;
            }
            if let Ty::Array { of, len: None, quals } = &ty
                && let Some(value) = d.child_by_field_name("value")
                && let Some(n) = self.initializer_len(of, value)
            {
                ty = Ty::Array {
                    of: of.clone(),
                    len: Some(n.to_string()),
                    quals: *quals,
                };
            }
            let var = ScopedVariable {
                name: self.text(name).to_string(),
                type_name: ty.spell(),
                kind: VarKind::Other,
                parameter: false,
                declared_at: name.start_position().row as u32 + 1,
            };
            let desugared = self.desugar_top(&ty).spell();
            self.found.push(Found {
                var,
                desugared,
                declared_end,
                block,
            });
        }
    }
}
