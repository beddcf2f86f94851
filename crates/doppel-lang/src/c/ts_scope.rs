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

use super::clang_scope::{Record, ScopeMap, ScopedVariable, TypeTables, VarKind};
use super::transform::{self, text};
use std::collections::HashMap;
use tree_sitter::Node;

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

/// Header typedefs known without reading headers: LP64 glibc's
/// (`<stdint.h>`, `<stddef.h>`, `<sys/types.h>`), desugared as clang
/// desugars them.
const HEADER_TYPEDEFS: [(&str, &str); 16] = [
    ("int8_t", "signed char"),
    ("int16_t", "short"),
    ("int32_t", "int"),
    ("int64_t", "long"),
    ("uint8_t", "unsigned char"),
    ("uint16_t", "unsigned short"),
    ("uint32_t", "unsigned int"),
    ("uint64_t", "unsigned long"),
    ("intptr_t", "long"),
    ("uintptr_t", "unsigned long"),
    ("size_t", "unsigned long"),
    ("ssize_t", "long"),
    ("ptrdiff_t", "long"),
    ("intmax_t", "long"),
    ("uintmax_t", "unsigned long"),
    ("wchar_t", "int"),
];

/// Type qualifiers, in the order clang prints them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Quals {
    is_const: bool,
    is_volatile: bool,
    is_restrict: bool,
    /// `_Atomic` (clang spells `_Atomic(T)`).
    is_atomic: bool,
}

impl Quals {
    /// The `type_qualifier` children of `node`.
    fn of(node: Node<'_>, src: &str) -> Quals {
        let mut q = Quals::default();
        let mut cursor = node.walk();
        for c in node.children(&mut cursor).filter(|c| c.kind() == "type_qualifier") {
            match text(c, src) {
                "const" => q.is_const = true,
                "volatile" => q.is_volatile = true,
                "restrict" | "__restrict__" | "__restrict" => q.is_restrict = true,
                "_Atomic" => q.is_atomic = true,
                _ => {}
            }
        }
        q
    }

    fn union(self, o: Quals) -> Quals {
        Quals {
            is_const: self.is_const || o.is_const,
            is_volatile: self.is_volatile || o.is_volatile,
            is_restrict: self.is_restrict || o.is_restrict,
            is_atomic: self.is_atomic || o.is_atomic,
        }
    }

    /// `const volatile restrict`, without `_Atomic`.
    fn words(self) -> Vec<&'static str> {
        let mut w = Vec::new();
        if self.is_const {
            w.push("const");
        }
        if self.is_volatile {
            w.push("volatile");
        }
        if self.is_restrict {
            w.push("restrict");
        }
        w
    }
}

/// A C type as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ty {
    /// A type specifier: a builtin type as clang spells it (`unsigned
    /// long`), a typedef name, `struct S`, `enum E`, `union U`, or the
    /// spelling of an anonymous tag.
    Named {
        quals: Quals,
        name: String,
    },
    Pointer {
        quals: Quals,
        to: Box<Ty>,
    },
    /// `len`: the element count in decimal, the size expression's text
    /// when it cannot be evaluated, `None` for `[]`. `quals`: qualifiers
    /// inside the brackets (`int x[const 3]`), which qualify the pointer a
    /// parameter array decays to.
    Array {
        of: Box<Ty>,
        len: Option<String>,
        quals: Quals,
    },
    /// `params`: the parameters' spellings (`void`, `...`).
    Function {
        ret: Box<Ty>,
        params: Vec<String>,
    },
}

impl Ty {
    /// The type as clang prints a `qualType`.
    fn spell(&self) -> String {
        self.print(String::new())
    }

    /// Clang's type printer: the type around declarator text `inner`.
    fn print(&self, inner: String) -> String {
        // No space before an array's brackets (`int[3]`, `int *const[2]`).
        let join = |base: String, inner: String| {
            if inner.is_empty() || inner.starts_with('[') {
                base + &inner
            } else {
                base + " " + &inner
            }
        };
        match self {
            Ty::Named { quals, name } => {
                let mut words: Vec<String> = quals.words().into_iter().map(str::to_string).collect();
                words.push(if quals.is_atomic {
                    format!("_Atomic({name})")
                } else {
                    name.clone()
                });
                join(words.join(" "), inner)
            }
            Ty::Pointer { quals, to } => {
                if quals.is_atomic {
                    // Clang: `_Atomic(int *)`; only the outermost layer is
                    // spelled so (rare enough).
                    let plain = Ty::Pointer {
                        quals: Quals {
                            is_atomic: false,
                            ..*quals
                        },
                        to: to.clone(),
                    };
                    return join(format!("_Atomic({})", plain.spell()), inner);
                }
                let words = quals.words();
                let mut star = if words.is_empty() {
                    format!("*{inner}")
                } else {
                    join(format!("*{}", words.join(" ")), inner)
                };
                if matches!(**to, Ty::Array { .. } | Ty::Function { .. }) {
                    star = format!("({star})");
                }
                to.print(star)
            }
            Ty::Array { of, len, .. } => of.print(format!("{inner}[{}]", len.as_deref().unwrap_or(""))),
            Ty::Function { ret, params } => ret.print(format!("{inner}({})", params.join(", "))),
        }
    }

    /// `self` with qualifiers `q` added to its top (for an array, to its
    /// elements, as C does).
    fn qualified(&self, q: Quals) -> Ty {
        match self {
            Ty::Named { quals, name } => Ty::Named {
                quals: quals.union(q),
                name: name.clone(),
            },
            Ty::Pointer { quals, to } => Ty::Pointer {
                quals: quals.union(q),
                to: to.clone(),
            },
            Ty::Array { of, len, quals } => Ty::Array {
                of: Box::new(of.qualified(q)),
                len: len.clone(),
                quals: *quals,
            },
            Ty::Function { .. } => self.clone(),
        }
    }
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

    /// The number of elements of an array of `elem` initialized by `value`
    /// (an initializer list without designators, or a plain string literal
    /// for an array of a character type), when it can be counted.
    fn initializer_len(&self, elem: &Ty, value: Node<'_>) -> Option<u64> {
        match value.kind() {
            "initializer_list" => {
                let items = named_children(value);
                if items.iter().any(|i| i.kind() == "initializer_pair") {
                    return None;
                }
                // With brace elision the count is not the number of items:
                // elements that are aggregates must be braced.
                let aggregate = match self.desugar_top(elem) {
                    Ty::Array { .. } => true,
                    Ty::Named { name, .. } => name.starts_with("struct ") || name.starts_with("union "),
                    _ => false,
                };
                if aggregate && items.iter().any(|i| i.kind() != "initializer_list") {
                    return None;
                }
                Some(items.len() as u64)
            }
            "string_literal" | "concatenated_string" => {
                if !matches!(self.desugar_top(elem), Ty::Named { .. }) {
                    return None;
                }
                let parts = if value.kind() == "string_literal" {
                    vec![value]
                } else {
                    named_children(value)
                };
                let mut n = 0u64;
                for s in parts {
                    if s.kind() != "string_literal" {
                        return None;
                    }
                    // Code units per character: bytes of UTF-8 for plain
                    // and `u8` strings, UTF-16 units for `u`, one for `L`
                    // and `U`.
                    let units: fn(&str) -> u64 = match s.child(0).map(|q| self.text(q)) {
                        Some("\"" | "u8\"") => |t| t.len() as u64,
                        Some("u\"") => |t| t.encode_utf16().count() as u64,
                        Some("L\"" | "U\"") => |t| t.chars().count() as u64,
                        _ => return None,
                    };
                    for c in named_children(s) {
                        n += match c.kind() {
                            "string_content" => units(self.text(c)),
                            "escape_sequence" => 1,
                            _ => return None,
                        };
                    }
                }
                Some(n + 1)
            }
            _ => None,
        }
    }

    /// The type that declarator `d` declares on the specifiers of `spec` (a
    /// declaration, parameter, field or type definition), and the name it
    /// declares (`None` when `d` is absent or abstract).
    fn declared<'t>(&self, spec: Node<'t>, d: Option<Node<'t>>) -> Option<(Ty, Option<Node<'t>>)> {
        let base = self.base_type(spec)?;
        match d {
            Some(d) => self.apply(base, d),
            None => Some((base, None)),
        }
    }

    /// The type named by the specifiers of `spec`, with their qualifiers.
    fn base_type(&self, spec: Node<'_>) -> Option<Ty> {
        let t = spec.child_by_field_name("type")?;
        let mut quals = Quals::of(spec, self.src);
        let name = match t.kind() {
            "primitive_type" => builtin(&[self.text(t)]).unwrap_or_else(|| self.text(t).to_string()),
            "sized_type_specifier" => {
                quals = quals.union(Quals::of(t, self.src));
                let mut cursor = t.walk();
                let words: Vec<&str> = t
                    .children(&mut cursor)
                    .filter(|c| c.kind() != "type_qualifier" && c.kind() != "comment")
                    .map(|c| self.text(c))
                    .collect();
                builtin(&words).unwrap_or_else(|| words.join(" "))
            }
            "type_identifier" => {
                let n = self.text(t);
                builtin(&[n]).unwrap_or_else(|| n.to_string())
            }
            kind @ ("struct_specifier" | "union_specifier" | "enum_specifier") => {
                let keyword = &kind[..kind.find('_').unwrap_or(kind.len())];
                match t.child_by_field_name("name") {
                    Some(n) => format!("{keyword} {}", self.text(n)),
                    None => match anonymous_typedef_name(spec) {
                        // Clang names an anonymous tag by its typedef.
                        Some(n) => self.text(n).to_string(),
                        None => {
                            let (l, c) = (t.start_position().row + 1, t.start_position().column + 1);
                            format!("{keyword} (unnamed {keyword} at {l}:{c})")
                        }
                    },
                }
            }
            _ => self.text(t).split_whitespace().collect::<Vec<_>>().join(" "),
        };
        Some(Ty::Named { quals, name })
    }

    /// Applies declarator `d` to type `ty`, from the outside in: the type
    /// of the name it declares, and the name (`None` for an abstract
    /// declarator).
    fn apply<'t>(&self, mut ty: Ty, mut d: Node<'t>) -> Option<(Ty, Option<Node<'t>>)> {
        for _ in 0..256 {
            let next = match d.kind() {
                "identifier" | "field_identifier" | "type_identifier" | "primitive_type" => {
                    return Some((ty, Some(d)));
                }
                "init_declarator" => d.child_by_field_name("declarator"),
                "parenthesized_declarator" | "attributed_declarator" | "abstract_parenthesized_declarator" => {
                    named_children(d).into_iter().find(|c| {
                        !matches!(
                            c.kind(),
                            "attribute_declaration" | "attribute_specifier" | "ms_call_modifier"
                        )
                    })
                }
                "pointer_declarator" | "abstract_pointer_declarator" => {
                    ty = Ty::Pointer {
                        quals: Quals::of(d, self.src),
                        to: Box::new(ty),
                    };
                    d.child_by_field_name("declarator")
                }
                "array_declarator" | "abstract_array_declarator" => {
                    let len = d.child_by_field_name("size").map(|s| match self.eval(s) {
                        Some(n) if n >= 0 => n.to_string(),
                        _ => self.text(s).split_whitespace().collect::<Vec<_>>().join(" "),
                    });
                    ty = Ty::Array {
                        of: Box::new(ty),
                        len,
                        quals: Quals::of(d, self.src),
                    };
                    d.child_by_field_name("declarator")
                }
                "function_declarator" | "abstract_function_declarator" => {
                    let params = d
                        .child_by_field_name("parameters")
                        .map(|p| self.parameter_spellings(p))
                        .unwrap_or_default();
                    ty = Ty::Function {
                        ret: Box::new(ty),
                        params,
                    };
                    d.child_by_field_name("declarator")
                }
                _ => return None,
            };
            match next {
                Some(n) => d = n,
                None if d.kind().starts_with("abstract_") => return Some((ty, None)),
                None => return None,
            }
        }
        None
    }

    /// The parameter types of a parameter list as clang prints them in a
    /// function type (`int *` for `int a[3]`, `void`, `...`).
    fn parameter_spellings(&self, list: Node<'_>) -> Vec<String> {
        named_children(list)
            .into_iter()
            .filter_map(|p| match p.kind() {
                "variadic_parameter" => Some("...".to_string()),
                "parameter_declaration" => {
                    let (ty, _) = self.declared(p, p.child_by_field_name("declarator"))?;
                    Some(self.decayed(&ty).unwrap_or(ty).spell())
                }
                _ => None,
            })
            .collect()
    }

    /// The pointer a parameter of type `ty` has when `ty` is an array
    /// (to its elements, qualified by the qualifiers in its brackets) or a
    /// function (to it); `None` for other types.
    fn decayed(&self, ty: &Ty) -> Option<Ty> {
        match self.desugar_top(ty) {
            Ty::Array { of, quals, .. } => Some(Ty::Pointer { quals, to: of }),
            f @ Ty::Function { .. } => Some(Ty::Pointer {
                quals: Quals::default(),
                to: Box::new(f),
            }),
            _ => None,
        }
    }

    /// `ty` with a typedef name at its top replaced by the typedef's type
    /// (itself desugared at the top), qualifiers kept: clang's
    /// `desugaredQualType`.
    fn desugar_top(&self, ty: &Ty) -> Ty {
        if let Ty::Named { quals, name } = ty
            && let Some(t) = self.typedefs.get(name)
        {
            return t.qualified(*quals);
        }
        ty.clone()
    }

    /// Registers the names a `type_definition` declares.
    fn typedef(&mut self, def: Node<'_>) {
        let mut cursor = def.walk();
        let declarators: Vec<Node> = def.children_by_field_name("declarator", &mut cursor).collect();
        for d in declarators {
            if let Some((ty, Some(name))) = self.declared(def, Some(d)) {
                let desugared = self.desugar_top(&ty);
                let name = self.text(name).to_string();
                self.add_typedef(&name, desugared);
            }
        }
    }

    /// Registers a named struct definition: its named fields with their
    /// types desugared at the top, or `None` with a bit-field or an unnamed
    /// member (clang_scope's `Record`).
    fn record(&mut self, spec: Node<'_>) {
        let (Some(name), Some(body)) = (spec.child_by_field_name("name"), spec.child_by_field_name("body")) else {
            return;
        };
        let mut fields = Some(Vec::new());
        for f in named_children(body)
            .into_iter()
            .filter(|f| f.kind() == "field_declaration")
        {
            let mut cursor = f.walk();
            let has_bitfield = f.children(&mut cursor).any(|c| c.kind() == "bitfield_clause");
            let mut cursor = f.walk();
            let declarators: Vec<Node> = f.children_by_field_name("declarator", &mut cursor).collect();
            let anonymous_member = declarators.is_empty()
                && f.child_by_field_name("type").is_some_and(|t| {
                    matches!(t.kind(), "struct_specifier" | "union_specifier")
                        && t.child_by_field_name("name").is_none()
                });
            if has_bitfield || anonymous_member {
                fields = None;
                break;
            }
            for d in declarators {
                let field = self
                    .declared(f, Some(d))
                    .and_then(|(ty, n)| Some((self.text(n?).to_string(), self.desugar_top(&ty).spell())));
                match (field, fields.as_mut()) {
                    (Some(field), Some(fs)) => fs.push(field),
                    _ => fields = None,
                }
            }
        }
        let record: Record = fields;
        self.tables.records.insert(self.text(name).to_string(), record);
    }

    /// Registers the values of an enum definition's enumerators.
    fn enum_values(&mut self, spec: Node<'_>) {
        let Some(body) = spec.child_by_field_name("body") else {
            return;
        };
        let mut next = Some(0i128);
        for e in named_children(body).into_iter().filter(|e| e.kind() == "enumerator") {
            let Some(name) = e.child_by_field_name("name") else {
                continue;
            };
            let value = match e.child_by_field_name("value") {
                Some(v) => self.eval(v),
                None => next,
            };
            self.enumerators.insert(self.text(name).to_string(), value);
            next = value.and_then(|v| v.checked_add(1));
        }
    }

    /// The value of integer constant expression `e` when it is made of
    /// integer literals, enumerators, parentheses and integer operators.
    fn eval(&self, e: Node<'_>) -> Option<i128> {
        let sub = |field: &str| e.child_by_field_name(field).and_then(|n| self.eval(n));
        match e.kind() {
            "number_literal" => int_literal(self.text(e)),
            "identifier" => self.enumerators.get(self.text(e)).copied().flatten(),
            "parenthesized_expression" => named_children(e).first().and_then(|n| self.eval(*n)),
            "unary_expression" => {
                let v = sub("argument")?;
                match self.text(e.child_by_field_name("operator")?) {
                    "-" => v.checked_neg(),
                    "+" => Some(v),
                    "~" => Some(!v),
                    "!" => Some((v == 0) as i128),
                    _ => None,
                }
            }
            "binary_expression" => {
                let (l, r) = (sub("left")?, sub("right")?);
                match self.text(e.child_by_field_name("operator")?) {
                    "+" => l.checked_add(r),
                    "-" => l.checked_sub(r),
                    "*" => l.checked_mul(r),
                    "/" => l.checked_div(r),
                    "%" => l.checked_rem(r),
                    "<<" => u32::try_from(r).ok().filter(|&r| r < 64).and_then(|r| l.checked_shl(r)),
                    ">>" => u32::try_from(r).ok().filter(|&r| r < 64).map(|r| l >> r),
                    "&" => Some(l & r),
                    "|" => Some(l | r),
                    "^" => Some(l ^ r),
                    "&&" => Some((l != 0 && r != 0) as i128),
                    "||" => Some((l != 0 || r != 0) as i128),
                    "==" => Some((l == r) as i128),
                    "!=" => Some((l != r) as i128),
                    "<" => Some((l < r) as i128),
                    "<=" => Some((l <= r) as i128),
                    ">" => Some((l > r) as i128),
                    ">=" => Some((l >= r) as i128),
                    _ => None,
                }
            }
            "conditional_expression" => {
                if sub("condition")? != 0 {
                    sub("consequence")
                } else {
                    sub("alternative")
                }
            }
            _ => None,
        }
    }
}

/// The declarator of a function definition that holds its parameters: the
/// function declarator applied directly to the function's name (through
/// pointer declarators for functions returning pointers, and parentheses).
fn definition_declarator(mut d: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..64 {
        match d.kind() {
            "function_declarator" => {
                let inner = d.child_by_field_name("declarator")?;
                if strip_parens(inner).is_some_and(|n| n.kind() == "identifier") {
                    return Some(d);
                }
                d = inner;
            }
            "pointer_declarator" => d = d.child_by_field_name("declarator")?,
            "parenthesized_declarator" | "attributed_declarator" => d = named_children(d).into_iter().next()?,
            _ => return None,
        }
    }
    None
}

fn strip_parens(mut d: Node<'_>) -> Option<Node<'_>> {
    while matches!(d.kind(), "parenthesized_declarator" | "attributed_declarator") {
        d = named_children(d).into_iter().next()?;
    }
    Some(d)
}

/// For an anonymous struct, union or enum in type definition `spec`: the
/// first name the definition gives the tag itself (`T` in `typedef struct
/// { ... } T, *PT;`), which clang uses to spell the type.
fn anonymous_typedef_name(spec: Node<'_>) -> Option<Node<'_>> {
    if spec.kind() != "type_definition" {
        return None;
    }
    let mut cursor = spec.walk();
    spec.children_by_field_name("declarator", &mut cursor)
        .find(|d| d.kind() == "type_identifier")
}

/// The clang spelling of a builtin type named by specifier words (`long
/// unsigned int` -> `unsigned long`, `bool` -> `_Bool`); `None` for a
/// word list that is not one (a typedef name such as `int32_t`).
fn builtin(words: &[&str]) -> Option<String> {
    const WORDS: [&str; 11] = [
        "signed", "unsigned", "short", "long", "int", "char", "float", "double", "void", "_Bool", "__int128",
    ];
    let words: Vec<&str> = words.iter().map(|w| if *w == "bool" { "_Bool" } else { w }).collect();
    if words.is_empty() || !words.iter().all(|w| WORDS.contains(w)) {
        return None;
    }
    let has = |w: &str| words.contains(&w);
    let unsigned = has("unsigned");
    let sign = |plain: &str| {
        if unsigned {
            format!("unsigned {plain}")
        } else {
            plain.to_string()
        }
    };
    let longs = words.iter().filter(|w| **w == "long").count();
    Some(if has("void") {
        "void".into()
    } else if has("_Bool") {
        "_Bool".into()
    } else if has("char") {
        if has("signed") {
            "signed char".into()
        } else {
            sign("char")
        }
    } else if has("float") {
        "float".into()
    } else if has("double") {
        if longs > 0 {
            "long double".into()
        } else {
            "double".into()
        }
    } else if has("__int128") {
        sign("__int128")
    } else if has("short") {
        sign("short")
    } else if longs >= 2 {
        sign("long long")
    } else if longs == 1 {
        sign("long")
    } else {
        sign("int")
    })
}

/// The value of a C integer literal (decimal, octal, hex or binary, with
/// `u`/`l` suffixes); `None` for floating literals.
fn int_literal(t: &str) -> Option<i128> {
    let t = t.replace('\'', "");
    let body = t.trim_end_matches(['u', 'U', 'l', 'L']);
    let (digits, radix) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        (b, 2)
    } else if body.len() > 1 && body.starts_with('0') {
        (&body[1..], 8)
    } else {
        (body, 10)
    };
    i128::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::c::clang_scope;
    use doppel_core::process;
    use std::path::{Path, PathBuf};

    /// Parameters, nested blocks, shadowing, a `for` declaration, static
    /// and extern locals, typedefs (of typedefs, of pointers, of an
    /// anonymous struct), structs (nested, with a bit-field), arrays (1-D
    /// with an enumerator size, 2-D, sized by a string), pointers, an enum,
    /// several declarators per declaration, a local function declaration
    /// and an old-style definition.
    const PROG: &str = r#"#include <stdint.h>
typedef int32_t myint;
typedef myint *myptr;
typedef struct Pt { int16_t x; uint8_t y[2]; } Pt_t;
struct Outer { struct Pt p; int64_t n; };
struct Bits { int a : 3; int b; };
typedef struct { int q; } Anon;
enum Color { RED, GREEN = 4, BLUE };
int g;
int f(int p, uint8_t *q,
      const char s[4]) {
  int a = 1, *b = &a, c[BLUE];
  static uint16_t st;
  extern int g;
  myint m[2][3];
  {
    long a = 2;
    myptr mp = 0;
    struct Outer o;
    a++;
  }
  for (unsigned i = 0; i < 3; i++) {
    Pt_t pt;
    struct Bits bits;
  }
  enum Color col = RED;
  volatile int32_t v = 0, w =
      1;
  int (*pa)[3] = 0; int (*fp)(int) = 0; union { int i; } un; double d;
  char msg[] = "hi\n"; Anon an; int h(int);
  return a + v + w + col;
}
int kr(x, y)
  unsigned char x;
  long y;
{
  return x + y;
}
int main(void) { return f(1, 0, "abc") + kr(1, 2); }
"#;

    /// What both oracles must agree on for a visible variable: name, kind,
    /// parameter or not, declaration line (the type's spelling may differ).
    type Seen = (String, VarKind, bool, u32);

    fn seen(m: &ScopeMap, line: u32) -> Vec<Seen> {
        m.visible_at(line)
            .into_iter()
            .map(|v| (v.name, v.kind, v.parameter, v.declared_at))
            .collect()
    }

    /// How two maps of one file compare.
    #[derive(Default)]
    struct Agreement {
        /// Lines compared: every line of the file and the one after.
        lines: usize,
        /// Of those, lines where either map has a visible variable.
        with_variables: usize,
        /// Lines where the maps differ, with clang's and tree-sitter's answers.
        differ: Vec<(u32, Vec<Seen>, Vec<Seen>)>,
    }

    fn compare(text: &str, clang: &ScopeMap, ts: &ScopeMap) -> Agreement {
        let mut a = Agreement {
            lines: text.lines().count() + 1,
            ..Agreement::default()
        };
        for line in 1..=a.lines as u32 {
            let (c, t) = (seen(clang, line), seen(ts, line));
            if !c.is_empty() || !t.is_empty() {
                a.with_variables += 1;
            }
            if c != t {
                a.differ.push((line, c, t));
            }
        }
        a
    }

    /// The clang the agreement tests compare with: it must be installed
    /// (CI installs it).
    fn clang() -> &'static str {
        ["clang-19", "clang"]
            .into_iter()
            .find(|c| process::which(c).is_some())
            .expect("clang is needed to compare with clang_scope (apt-get install clang-19)")
    }

    /// Both maps of `text`, written to `file` for clang.
    async fn both(file: &Path, text: &str, include_dirs: &[PathBuf]) -> Result<(ScopeMap, ScopeMap), String> {
        std::fs::write(file, text).unwrap();
        let c = clang_scope::scopes(file, clang(), include_dirs).await?;
        Ok((c, scopes(text)?))
    }

    /// Types and their kinds: nested and local struct definitions, members
    /// that make a struct unchecked, unions, typedefs of arrays and of
    /// anonymous types, builtin spellings, array sizes from constant
    /// expressions and initializers.
    const TYPES: &str = r#"#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
struct In { short s; };
struct O { struct In in; union U { int a; } u; struct N { char c; } n; const int k; int tail[]; };
struct Anon { struct { int x; }; int y; };
struct Unnamed { int : 4; int z; };
typedef int Row[3];
typedef Row Grid[2];
typedef int (*RowPtr)[3];
typedef enum { E0, E1 } E;
typedef uint8_t byte;
enum { N = 2 + 3 * 2, M = N << 1 };
int t(Row r, int fn(int), const int cv[const 4], size_t n) {
  struct O o; struct Anon an; struct Unnamed un; union U uu; struct O os[2];
  Row row; Grid grid; RowPtr rp; Row rows[2]; E e; byte bytes[N]; int m[M][N - 1];
  __int128 big; unsigned long long ull; long unsigned int lu; char signed sc; _Bool b;
  long double ld; float f; short int si; int16_t const *const cp = 0; void *vp;
  int init[] = {1, 2, 3}; char str[] = "a\tb" "cd"; int nested[][2] = {{1, 2}, {3, 4}};
  struct Local { int l; } local; typedef long Lg; Lg lg; ptrdiff_t pd; ssize_t ss;
  int (*apa[2])[3]; int *ap[2]; int x1[0x10], x2[010], x3[3u], x4[1 ? 2 : 3];
  return 0;
}
"#;

    fn names(vars: &[ScopedVariable]) -> Vec<String> {
        vars.iter()
            .map(|v| format!("{}:{}:{}", v.name, v.type_name, v.declared_at))
            .collect()
    }

    fn int(signed: bool, bits: u8) -> VarKind {
        VarKind::Integer { signed, bits }
    }

    fn array(elem: VarKind, len: u32) -> VarKind {
        VarKind::Array {
            elem: Box::new(elem),
            len,
        }
    }

    #[test]
    fn visible_variables_follow_declarations_blocks_and_shadowing() {
        let m = scopes(PROG).unwrap();
        let at = |line| names(&m.visible_at(line));
        // Outside functions and on the lines of a function's header.
        assert!(at(9).is_empty());
        assert!(at(10).is_empty());
        // Parameters: visible after their declaration ends, in the body.
        assert_eq!(at(11), ["p:int:10", "q:uint8_t *:10"]);
        let params = ["p:int:10", "q:uint8_t *:10", "s:const char *:11"];
        assert_eq!(at(12), params);
        // Several declarators in one declaration.
        let body = [&params[..], &["a:int:12", "b:int *:12", "c:int[5]:12"]].concat();
        assert_eq!(at(13), body);
        // The static local counts, the extern declaration does not.
        let body = [&body[..], &["st:uint16_t:13"]].concat();
        assert_eq!(at(14), body);
        assert_eq!(at(15), body);
        let body = [&body[..], &["m:myint[2][3]:15"]].concat();
        assert_eq!(at(16), body);
        assert_eq!(at(17), body);
        // The inner `a` shadows the outer one from the line after it.
        let inner: Vec<&str> = body.iter().filter(|v| !v.starts_with("a:")).copied().collect();
        assert_eq!(at(18), [&inner[..], &["a:long:17"]].concat());
        assert_eq!(
            at(20),
            [&inner[..], &["a:long:17", "mp:myptr:18", "o:struct Outer:19"]].concat()
        );
        // After the block, and on the `for` line: the outer `a` again.
        assert_eq!(at(22), body);
        // The `for` variable is visible in the `for` statement only.
        assert_eq!(at(23), [&body[..], &["i:unsigned int:22"]].concat());
        assert_eq!(
            at(25),
            [&body[..], &["i:unsigned int:22", "pt:Pt_t:23", "bits:struct Bits:24"]].concat()
        );
        assert_eq!(at(26), body);
        let body = [&body[..], &["col:enum Color:26"]].concat();
        assert_eq!(at(27), body);
        // A declaration ends on its `;` line: v and w are visible after 28.
        assert_eq!(at(28), body);
        let body = [&body[..], &["v:volatile int32_t:27", "w:volatile int32_t:27"]].concat();
        assert_eq!(at(29), body);
        // The local function declaration `h` is no variable.
        let last = [
            "pa:int (*)[3]:29",
            "fp:int (*)(int):29",
            "un:union (unnamed union at 29:41):29",
            "d:double:29",
            "msg:char[4]:30",
            "an:Anon:30",
        ];
        assert_eq!(at(31), [&body[..], &last[..]].concat());
        assert_eq!(at(32), at(31));
        // Old-style parameters take their declarations' types and lines.
        assert!(at(33).is_empty());
        assert_eq!(at(36), ["x:unsigned char:34", "y:long:35"]);
        assert!(at(39).is_empty());
        assert_eq!(m.len(), 25);

        let kinds: HashMap<(String, u32), VarKind> = (1..40)
            .flat_map(|l| m.visible_at(l))
            .map(|v| ((v.name, v.declared_at), v.kind))
            .collect();
        let kind = |name: &str, line: u32| kinds[&(name.to_string(), line)].clone();
        let pt = VarKind::Struct {
            fields: vec![("x".into(), int(true, 16)), ("y".into(), array(int(false, 8), 2))],
        };
        let expected = [
            ("p", 10, int(true, 32)),
            ("q", 10, VarKind::Pointer),
            ("s", 11, VarKind::Pointer),
            ("a", 12, int(true, 32)),
            ("b", 12, VarKind::Pointer),
            ("c", 12, array(int(true, 32), 5)),
            ("st", 13, int(false, 16)),
            ("m", 15, array(array(int(true, 32), 3), 2)),
            ("a", 17, int(true, 64)),
            ("mp", 18, VarKind::Pointer),
            (
                "o",
                19,
                VarKind::Struct {
                    fields: vec![("p".into(), pt.clone()), ("n".into(), int(true, 64))],
                },
            ),
            ("i", 22, int(false, 32)),
            ("pt", 23, pt),
            // A bit-field makes the struct unchecked.
            ("bits", 24, VarKind::Other),
            ("col", 26, int(true, 32)),
            ("v", 27, int(true, 32)),
            ("w", 27, int(true, 32)),
            ("pa", 29, VarKind::Pointer),
            ("fp", 29, VarKind::Other),
            ("un", 29, VarKind::Other),
            ("d", 29, VarKind::Other),
            ("msg", 30, array(int(true, 8), 4)),
            // As in clang_scope: an anonymous struct behind a typedef is
            // spelled by the typedef's name and not resolved.
            ("an", 30, VarKind::Other),
            ("x", 34, int(false, 8)),
            ("y", 35, int(true, 64)),
        ];
        for (name, line, k) in expected {
            assert_eq!(kind(name, line), k, "{name}:{line}");
        }
        let p = m.visible_at(11).remove(0);
        assert!(p.parameter);
        assert!(!m.visible_at(13)[3].parameter);
    }

    #[test]
    fn types_resolve_to_kinds_as_in_clang_scope() {
        let m = scopes(TYPES).unwrap();
        let vars: HashMap<String, ScopedVariable> = m.visible_at(22).into_iter().map(|v| (v.name.clone(), v)).collect();
        assert_eq!(vars.len(), 39);
        let kind = |name: &str| vars[name].kind.clone();
        let spelled = |name: &str| vars[name].type_name.clone();
        let i32 = int(true, 32);
        // Parameters decay; qualifiers in brackets qualify the pointer.
        assert_eq!((spelled("r"), kind("r")), ("int *".into(), VarKind::Pointer));
        assert_eq!((spelled("fn"), kind("fn")), ("int (*)(int)".into(), VarKind::Other));
        assert_eq!(spelled("cv"), "const int *const");
        assert_eq!(kind("n"), int(false, 64));
        // Fields: nested structs resolved, unions and flexible arrays
        // unchecked, qualifiers ignored.
        let o = VarKind::Struct {
            fields: vec![
                (
                    "in".into(),
                    VarKind::Struct {
                        fields: vec![("s".into(), int(true, 16))],
                    },
                ),
                ("u".into(), VarKind::Other),
                (
                    "n".into(),
                    VarKind::Struct {
                        fields: vec![("c".into(), int(true, 8))],
                    },
                ),
                ("k".into(), i32.clone()),
                ("tail".into(), VarKind::Other),
            ],
        };
        assert_eq!(kind("o"), o);
        // An anonymous member or an unnamed bit-field: unchecked.
        assert_eq!(kind("an"), VarKind::Other);
        assert_eq!(kind("un"), VarKind::Other);
        assert_eq!(kind("uu"), VarKind::Other);
        assert_eq!(kind("os"), VarKind::Other);
        // Array typedefs keep their shape, also as elements.
        let grid = array(array(i32.clone(), 3), 2);
        assert_eq!(kind("row"), array(i32.clone(), 3));
        assert_eq!(kind("grid"), grid);
        assert_eq!((spelled("rows"), kind("rows")), ("Row[2]".into(), grid));
        assert_eq!(kind("rp"), VarKind::Pointer);
        assert_eq!(
            kind("e"),
            VarKind::Other,
            "a typedef of an anonymous enum, as clang_scope"
        );
        // Sizes from enumerators, constant expressions and initializers.
        assert_eq!(
            (spelled("bytes"), kind("bytes")),
            ("byte[8]".into(), array(int(false, 8), 8))
        );
        assert_eq!(spelled("m"), "int[16][7]");
        assert_eq!(spelled("init"), "int[3]");
        assert_eq!(
            (spelled("str"), kind("str")),
            ("char[6]".into(), array(int(true, 8), 6))
        );
        assert_eq!(spelled("nested"), "int[2][2]");
        assert_eq!(
            ["x1", "x2", "x3", "x4"].map(spelled),
            ["int[16]", "int[8]", "int[3]", "int[2]"]
        );
        // Builtin spellings.
        let builtins = [
            ("big", "__int128", int(true, 128)),
            ("ull", "unsigned long long", int(false, 64)),
            ("lu", "unsigned long", int(false, 64)),
            ("sc", "signed char", int(true, 8)),
            ("b", "_Bool", int(false, 8)),
            ("si", "short", int(true, 16)),
            ("ld", "long double", VarKind::Other),
            ("f", "float", VarKind::Other),
            ("lg", "Lg", int(true, 64)),
            ("pd", "ptrdiff_t", int(true, 64)),
            ("ss", "ssize_t", int(true, 64)),
        ];
        for (name, ty, k) in builtins {
            assert_eq!((spelled(name), kind(name)), (ty.to_string(), k), "{name}");
        }
        assert_eq!(
            (spelled("cp"), kind("cp")),
            ("const int16_t *const".into(), VarKind::Pointer)
        );
        assert_eq!(
            kind("local"),
            VarKind::Struct {
                fields: vec![("l".into(), i32)],
            }
        );
        // Arrays of pointers are unchecked.
        assert_eq!((spelled("apa"), kind("apa")), ("int (*[2])[3]".into(), VarKind::Other));
        assert_eq!(kind("ap"), VarKind::Other);
    }

    #[tokio::test]
    async fn the_programs_agree_with_clang_in_kinds_and_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.c");
        for program in [PROG, TYPES] {
            let (c, t) = both(&file, program, &[]).await.unwrap();
            let a = compare(program, &c, &t);
            assert!(a.differ.is_empty(), "{:?}", a.differ);
            assert_eq!(c.len(), t.len());
            // The spelling of types agrees too, except for where clang
            // names the file of an anonymous type.
            for line in 1..=a.lines as u32 {
                let spell = |m: &ScopeMap| -> Vec<String> {
                    m.visible_at(line)
                        .into_iter()
                        .map(|v| v.type_name.replace(&format!("{}:", file.display()), ""))
                        .collect()
                };
                assert_eq!(spell(&c), spell(&t), "line {line}");
            }
        }
    }

    #[tokio::test]
    async fn csmith_programs_agree_with_clang_on_every_line() {
        assert!(
            process::which("csmith").is_some(),
            "csmith is needed (apt-get install csmith libcsmith-dev)"
        );
        let dir = tempfile::tempdir().unwrap();
        // The options every doppel seed has (doppel-debuginfo's
        // seed::ALWAYS), then Csmith's defaults with unions, bit-fields
        // and floating point.
        let always = [
            "--no-unions",
            "--safe-math",
            "--no-argc",
            "--no-inline-function",
            "--no-bitfields",
            "--no-return-structs",
            "--no-float",
        ];
        let programs: [(u64, &[&str]); 6] = [
            (1, &always),
            (2, &always),
            (3, &always),
            (4, &always),
            (16, &["--safe-math"]),
            (18, &["--safe-math"]),
        ];
        let (mut lines, mut with_variables, mut variables) = (0, 0, 0);
        for (seed, options) in programs {
            // csmith writes platform.info into its working directory.
            let out = std::process::Command::new("csmith")
                .current_dir(dir.path())
                .arg("--seed")
                .arg(seed.to_string())
                .args(options)
                .output()
                .unwrap();
            assert!(out.status.success(), "csmith --seed {seed}");
            let text = String::from_utf8(out.stdout).unwrap();
            let file = dir.path().join(format!("csmith-{seed}.c"));
            let (c, t) = both(&file, &text, &[PathBuf::from("/usr/include/csmith")])
                .await
                .unwrap();
            let a = compare(&text, &c, &t);
            assert!(
                a.differ.is_empty(),
                "csmith --seed {seed} {options:?}: {} lines differ, first {:?}",
                a.differ.len(),
                a.differ.first()
            );
            lines += a.lines;
            with_variables += a.with_variables;
            variables += c.len();
        }
        eprintln!("{lines} lines ({with_variables} with variables, {variables} variables) agree");
        assert!(
            with_variables > 1000 && variables > 1000,
            "{with_variables} {variables}"
        );
    }

    /// c-testsuite files where the two oracles differ, all for the
    /// documented reasons: declarations or array sizes written with macros
    /// (00137, 00182, 00202, 00210: `int d[MAX_DIGITS]`, a declaration
    /// `TYPE x` behind a macro, an attribute macro that hides a function
    /// from tree-sitter-c), a function inside `#ifdef INVALID` that clang
    /// does not see (00162), a function tree-sitter-c cannot parse
    /// (`va_arg(ap, struct s7)` in 00204: left out).
    const C_TESTSUITE_KNOWN: [&str; 6] = ["00137.c", "00162.c", "00182.c", "00202.c", "00204.c", "00210.c"];

    #[tokio::test]
    async fn the_bundled_corpus_agrees_with_clang_on_every_line_but_macro_sized_arrays() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "c"))
            .collect();
        files.sort();
        let dir = tempfile::tempdir().unwrap();
        let (mut lines, mut with_variables, mut differ) = (0, 0, Vec::new());
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let (c, t) = both(&dir.path().join(&name), &text, &[])
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let a = compare(&text, &c, &t);
            lines += a.lines;
            with_variables += a.with_variables;
            // matrix.c sizes its arrays with a macro (`int a[N][N]`), which
            // tree-sitter-c does not expand: the arrays are `other` there.
            if name == "matrix.c" {
                assert!(!a.differ.is_empty(), "matrix.c agrees now: drop the exception");
                continue;
            }
            differ.extend(a.differ.into_iter().map(|d| (name.clone(), d)));
        }
        eprintln!("{} files, {lines} lines ({with_variables} with variables)", files.len());
        assert!(
            files.len() >= 25 && with_variables > 400,
            "{} files, {with_variables}",
            files.len()
        );
        assert!(differ.is_empty(), "{differ:#?}");
    }

    #[tokio::test]
    #[ignore = "needs ../shared"]
    async fn c_testsuite_agrees_with_clang_on_nearly_every_line() {
        // The corpus is not part of the project (../shared).
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/c/c-testsuite");
        let entries = std::fs::read_dir(&corpus).unwrap_or_else(|e| panic!("{}: {e}", corpus.display()));
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "c"))
            .collect();
        files.sort();
        // All 220 files: about 10 s.
        let dir = tempfile::tempdir().unwrap();
        let mut total = Agreement::default();
        let (mut compared, mut unexpected) = (0, Vec::new());
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            // Compiled under its own name (clang spells anonymous types with it).
            let Ok((c, t)) = both(&dir.path().join(&name), &text, &[]).await else {
                continue;
            };
            compared += 1;
            let a = compare(&text, &c, &t);
            total.lines += a.lines;
            total.with_variables += a.with_variables;
            if !a.differ.is_empty() && !C_TESTSUITE_KNOWN.contains(&name.as_str()) {
                unexpected.push((name, a.differ[0].clone()));
            }
            total.differ.extend(a.differ);
        }
        let rate = 1.0 - total.differ.len() as f64 / total.lines as f64;
        let rate_with_variables = 1.0 - total.differ.len() as f64 / total.with_variables as f64;
        eprintln!(
            "{compared} files, {} lines ({} with variables), {} differ: {:.2}% agree ({:.2}% of lines with variables)",
            total.lines,
            total.with_variables,
            total.differ.len(),
            100.0 * rate,
            100.0 * rate_with_variables
        );
        assert!(
            compared > 200,
            "{compared} of {} files compiled with {}",
            files.len(),
            clang()
        );
        assert!(unexpected.is_empty(), "{unexpected:?}");
        // Measured with clang 19: 164 of 6338 lines differ, all in the
        // known files (97.4% agree; 93.5% of the 2524 lines where either
        // oracle sees a variable).
        assert!(rate >= 0.97, "{rate}");
        assert!(rate_with_variables >= 0.93, "{rate_with_variables}");
    }
}
