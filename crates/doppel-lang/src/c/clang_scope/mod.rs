//! The scope oracle of debug-information validation (Li, Ding, Zhang &
//! Italiano, PLDI 2020, section 4.1, "To construct the variable set V_s, we
//! traverse the abstract syntax tree (AST) of program P"): which function
//! parameters and local variables are in scope at the start of a source line,
//! read from clang's JSON AST
//! (`clang -Xclang -ast-dump=json -fsyntax-only -w`).
//!
//! Unlike the paper, globals are left out: their values do not depend on the
//! frame, so they say little about a function's debug information.
//!
//! # Reading clang's JSON
//!
//! The dump of a Csmith program is about 30 MB, nearly all of it from the
//! headers. It is deserialized in one streaming pass that keeps only the
//! nodes the oracle needs (`FunctionDecl`, `ParmVarDecl`, `CompoundStmt`,
//! `DeclStmt`, `VarDecl`, `ForStmt`; the kept descendants of any other node
//! are hoisted into its parent) and drops function definitions outside the
//! main file as soon as they are read.
//!
//! Source locations are written relative to the previous one: clang prints
//! `file` only when it differs from the last location printed, and `line`
//! only when the file or the line changed. The reader therefore walks every
//! location in document order (including those of dropped nodes) and keeps
//! the current file and line. The `file` inside `includedFrom` is not a
//! location. A macro location is `{spellingLoc, expansionLoc}`; the
//! expansion (the place in the main file) is the one used.
//!
//! # Scope rule
//!
//! Variable v is visible at the start of line L when
//! - v is a parameter of a function definition in the main file, or a
//!   variable declared in its body (static locals included, `extern`
//!   declarations left out);
//! - the declaration has ended before L begins: the line of the end of its
//!   declaration statement (`;`) is smaller than L (for a parameter, the
//!   line of the end of the parameter's declaration);
//! - L lies within the lines of v's scope: the function body for
//!   parameters and the body's own declarations, the innermost enclosing
//!   compound statement for other locals, the `for` statement for a variable
//!   declared in a `for` header.
//!
//! When several visible variables share a name, the one of the innermost
//! scope wins (C shadowing).
//!
//! # Kinds
//!
//! [`VarKind`] is derived from the desugared type (`desugaredQualType` when
//! clang gives one, else `qualType`), for x86-64 Linux (LP64: `long` is 64
//! bits, plain `char` is signed). Qualifiers are ignored: a `volatile` or
//! `const` integer is still an [`VarKind::Integer`] (`type_name` keeps the
//! type as written, qualifiers included, for callers that care).

use doppel_core::process::{self, Sandbox};
use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

mod json;
use json::*;

#[cfg(test)]
mod tests;

/// Stack of the thread reading the JSON (see [`ScopeMap::from_clang_json`]).
const READER_STACK: usize = 1 << 30;

/// How long clang may take to dump the AST.
const CLANG_TIMEOUT: Duration = Duration::from_secs(120);

/// What kind of value a variable holds, which decides how its value is
/// printed in the shadow program and compared with the debugger's text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VarKind {
    /// An integer type (including `char`, `_Bool`, enums and the `<stdint.h>`
    /// typedefs): `bits` wide, signed or not.
    Integer {
        /// Whether the type is signed.
        signed: bool,
        /// Width in bits (8 for `char`, 32 for `int` on x86-64).
        bits: u8,
    },
    /// A pointer: compared by whether it is null (addresses differ between
    /// builds).
    Pointer,
    /// An array of `len` elements of kind `elem`: an [`VarKind::Integer`],
    /// or, for a multi-dimensional array of integers, again an
    /// [`VarKind::Array`] (`int [2][3]` is 2 arrays of 3 ints).
    Array {
        /// The kind of one element.
        elem: Box<VarKind>,
        /// Number of elements of the outermost dimension.
        len: u32,
    },
    /// A struct: its named fields in declaration order, each with its kind
    /// (nested structs and arrays included). Empty when the record's
    /// definition was not found (values written before fields were known
    /// read back this way). A struct with bit-fields or anonymous members is
    /// [`VarKind::Other`].
    Struct {
        #[serde(default)]
        /// Field names and kinds, in declaration order.
        fields: Vec<(String, VarKind)>,
    },
    /// Anything else (floating point, unions, function pointers, arrays of
    /// non-integers, variable-length arrays): not checked.
    Other,
}

impl VarKind {
    /// Short stable name for signatures and statistics (`int`, `pointer`,
    /// `array`, `struct`, `other`).
    pub fn name(&self) -> &'static str {
        match self {
            VarKind::Integer { .. } => "int",
            VarKind::Pointer => "pointer",
            VarKind::Array { .. } => "array",
            VarKind::Struct { .. } => "struct",
            VarKind::Other => "other",
        }
    }

    /// The kind of a C type spelled as clang prints a desugared type
    /// (`unsigned char`, `int *const`, `short [4][2]`, `struct S`,
    /// `int (*)(int)`), for x86-64 Linux (LP64, signed `char`). Qualifiers
    /// are ignored. Enums are 32-bit signed integers (clang and gcc make an
    /// enum without negative constants `unsigned int`; the rendering agrees
    /// as long as its constants stay below 2^31). Unknown spellings are
    /// [`VarKind::Other`]. A `struct` is a [`VarKind::Struct`] without
    /// fields (see [`VarKind::of_c_type_with`] to resolve them).
    pub fn of_c_type(ty: &str) -> VarKind {
        VarKind::of_c_type_with(ty, &|_| VarKind::Struct { fields: Vec::new() })
    }

    /// [`VarKind::of_c_type`], with `struct T` (and arrays' elements) given
    /// the kind `record("T")`.
    pub fn of_c_type_with(ty: &str, record: &dyn Fn(&str) -> VarKind) -> VarKind {
        let ty = ty.trim();
        if ty.contains('(') {
            // Pointer to array, e.g. `int (*)[3]`; function (pointer) types
            // and `_Atomic(...)` are not checked.
            return if ty.contains("(*)[") {
                VarKind::Pointer
            } else {
                VarKind::Other
            };
        }
        if let Some(open) = ty.find('[') {
            let mut dims = Vec::new();
            let mut rest = &ty[open..];
            while let Some(r) = rest.strip_prefix('[') {
                let Some(close) = r.find(']') else {
                    return VarKind::Other;
                };
                let Ok(n) = r[..close].trim().parse::<u32>() else {
                    return VarKind::Other;
                };
                dims.push(n);
                rest = r[close + 1..].trim_start();
            }
            if !rest.is_empty() {
                return VarKind::Other;
            }
            let elem = VarKind::of_c_type_with(&ty[..open], record);
            if !matches!(elem, VarKind::Integer { .. }) {
                return VarKind::Other;
            }
            return dims.into_iter().rev().fold(elem, |elem, len| VarKind::Array {
                elem: Box::new(elem),
                len,
            });
        }
        if ty.contains('*') {
            return VarKind::Pointer;
        }
        let words: Vec<&str> = ty.split_whitespace().filter(|w| !QUALIFIERS.contains(w)).collect();
        match words.first().copied().unwrap_or("") {
            "struct" => {
                return match &words[1..] {
                    [tag] => record(tag),
                    _ => VarKind::Other,
                };
            }
            "enum" => return VarKind::Integer { signed: true, bits: 32 },
            _ => {}
        }
        const INTEGER_WORDS: [&str; 8] = [
            "signed", "unsigned", "char", "short", "int", "long", "_Bool", "__int128",
        ];
        if !words.iter().all(|w| INTEGER_WORDS.contains(w)) {
            return VarKind::Other;
        }
        let has = |w: &str| words.contains(&w);
        let longs = words.iter().filter(|w| **w == "long").count();
        let (signed, bits) = if has("_Bool") {
            (false, 8)
        } else if has("char") {
            (!has("unsigned"), 8)
        } else if has("short") {
            (!has("unsigned"), 16)
        } else if has("__int128") {
            (!has("unsigned"), 128)
        } else if longs > 0 {
            (!has("unsigned"), 64)
        } else {
            (!has("unsigned"), 32)
        };
        VarKind::Integer { signed, bits }
    }
}

/// `ty` with the typedef names of an array's element type replaced by their
/// types: clang desugars only the top of a type, so `int16_t[3]` comes
/// without a `desugaredQualType`. An array typedef's dimensions are the
/// innermost (`A[2]` with `A` = `int[3]` is `int[2][3]`). Other types,
/// and types with parentheses (pointers to arrays, functions), whose kind
/// the declarator decides, are returned as they are; so is an element
/// typedef to such a type (the array is not checked either way).
fn desugar_elements(ty: &str, typedefs: &HashMap<String, String>) -> String {
    if ty.contains('(') {
        return ty.to_string();
    }
    let Some(open) = ty.find('[') else {
        return ty.to_string();
    };
    let mut words: Vec<String> = ty[..open].split_whitespace().map(str::to_string).collect();
    let mut inner_dims = "";
    for w in &mut words {
        // Typedefs of typedefs are desugared at the top already.
        let Some(t) = typedefs.get(w.as_str()).filter(|t| !t.contains('(')) else {
            continue;
        };
        match t.find('[') {
            Some(i) => {
                inner_dims = &t[i..];
                *w = t[..i].trim().to_string();
            }
            None => *w = t.clone(),
        }
    }
    format!("{} {}{inner_dims}", words.join(" "), &ty[open..])
}

/// Type qualifiers and storage words that do not change a variable's kind.
const QUALIFIERS: [&str; 6] = ["const", "volatile", "restrict", "__restrict", "_Atomic", "register"];

/// A variable visible at a line, as the scope oracle found it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScopedVariable {
    /// The identifier as declared.
    pub name: String,
    /// The type as written (`int32_t`, `uint8_t *`).
    pub type_name: String,
    /// How its value is printed and compared.
    pub kind: VarKind,
    /// A formal parameter rather than a local.
    pub parameter: bool,
    /// Line (1-based) of its declaration.
    pub declared_at: u32,
}

/// One variable with where it is visible.
#[derive(Debug, Clone)]
struct Entry {
    var: ScopedVariable,
    /// Line (1-based) where its declaration ends; visible from the next line.
    declared_end: u32,
    /// First and last line (1-based, inclusive) of its scope.
    scope: (u32, u32),
    /// Nesting depth of the scope (function body = 1), for shadowing.
    depth: u32,
}

/// The variables of every function definition of one C file with their
/// scopes (see the module documentation for the rule).
#[derive(Debug, Clone, Default)]
pub struct ScopeMap {
    /// In document order: each function's parameters, then its locals.
    entries: Vec<Entry>,
    /// Typedefs and struct definitions of the translation unit, while
    /// building.
    types: TypeTables,
}

/// A struct definition: its named fields with their types (desugared at the
/// top), or `None` when it has a bit-field or an unnamed member (not
/// checked).
pub(crate) type Record = Option<Vec<(String, String)>>;

/// The typedefs and struct definitions of a translation unit, which resolve
/// a variable's [`VarKind`] from its type (shared by both scope oracles:
/// clang's here, tree-sitter's in [`super::ts_scope`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct TypeTables {
    /// Typedef name -> its type, desugared at the top (clang's
    /// `desugaredQualType` spelling).
    pub typedefs: HashMap<String, String>,
    /// Struct tag -> its definition.
    pub records: HashMap<String, Record>,
}

impl TypeTables {
    /// The kind of type `ty` (desugared at the top, spelled as clang spells
    /// it), with the elements of arrays and the fields of structs resolved
    /// from the tables.
    pub(crate) fn kind_of(&self, ty: &str) -> VarKind {
        self.kind_at(ty, 0)
    }

    /// [`TypeTables::kind_of`] for a type `depth` structs deep.
    fn kind_at(&self, ty: &str, depth: u32) -> VarKind {
        VarKind::of_c_type_with(&desugar_elements(ty, &self.typedefs), &|tag| {
            self.struct_kind(tag, depth + 1)
        })
    }

    /// The kind of `struct tag`: its fields' kinds, or [`VarKind::Other`]
    /// for a struct with bit-fields or unnamed members or nested too deep;
    /// a struct without a definition has no fields.
    fn struct_kind(&self, tag: &str, depth: u32) -> VarKind {
        if depth > MAX_STRUCT_DEPTH {
            return VarKind::Other;
        }
        match self.records.get(tag) {
            None => VarKind::Struct { fields: Vec::new() },
            Some(None) => VarKind::Other,
            Some(Some(fields)) => VarKind::Struct {
                fields: fields
                    .iter()
                    .map(|(name, ty)| (name.clone(), self.kind_at(ty, depth)))
                    .collect(),
            },
        }
    }
}

/// Deepest nesting of structs resolved (deeper ones are [`VarKind::Other`]).
const MAX_STRUCT_DEPTH: u32 = 8;

impl ScopeMap {
    /// The parameters and locals in scope at the start of 1-based `line`, in
    /// declaration order, one per name (the innermost declaration when
    /// several share it). Empty outside function bodies.
    pub fn visible_at(&self, line: u32) -> Vec<ScopedVariable> {
        let visible: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.declared_end < line && e.scope.0 <= line && line <= e.scope.1)
            .collect();
        visible
            .iter()
            .filter(|e| !visible.iter().any(|o| o.var.name == e.var.name && o.depth > e.depth))
            .map(|e| e.var.clone())
            .collect()
    }

    /// Number of variables (parameters and locals of all functions).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the file defines no function with a parameter or a local.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Builds the map from clang's JSON AST dump (`json`, the whole output of
    /// `-ast-dump=json`) of the file that clang was given as `main_file`
    /// (the path exactly as passed on clang's command line, which is how
    /// clang names it in the dump).
    ///
    /// Errors: `json` is not a clang JSON AST.
    pub fn from_clang_json(json: &[u8], main_file: &str) -> Result<ScopeMap, String> {
        let mut state = State {
            main_name: main_file.to_string(),
            ..State::default()
        };
        // Long expressions nest deeply (thousands of levels in Csmith
        // programs): no recursion limit, and a thread with a large stack
        // (reserved, only touched as deep as the nesting goes).
        let roots = std::thread::scope(|s| {
            std::thread::Builder::new()
                .name("clang-ast-json".into())
                .stack_size(READER_STACK)
                .spawn_scoped(s, || {
                    let mut de = serde_json::Deserializer::from_slice(json);
                    de.disable_recursion_limit();
                    let roots = NodeSeed(&mut state).deserialize(&mut de)?;
                    de.end().map(|_| roots)
                })
                .map_err(|e| format!("cannot start the AST reader: {e}"))?
                .join()
                .map_err(|_| "the AST reader panicked".to_string())
        })?
        .map_err(|e| format!("clang's JSON AST cannot be read: {e}"))?;
        let Some(main) = state.main else {
            return Ok(ScopeMap::default());
        };
        let mut map = ScopeMap {
            types: TypeTables {
                typedefs: std::mem::take(&mut state.typedefs),
                records: std::mem::take(&mut state.records),
            },
            ..ScopeMap::default()
        };
        for f in roots.iter().filter(|n| n.kind == "FunctionDecl") {
            map.add_function(f, main);
        }
        map.types = TypeTables::default();
        Ok(map)
    }

    /// Adds variable `var`, visible from the line after `declared_end`
    /// within lines `scope` (first, last; 1-based, inclusive) of nesting
    /// depth `depth` (function body = 1), after those added before (the
    /// order of [`ScopeMap::visible_at`]). For other builders of the map
    /// ([`super::ts_scope`]).
    pub(crate) fn push(&mut self, var: ScopedVariable, declared_end: u32, scope: (u32, u32), depth: u32) {
        self.entries.push(Entry {
            var,
            declared_end,
            scope,
            depth,
        });
    }

    fn add_function(&mut self, f: &Node, main: u32) {
        let Some(body) = f.inner.iter().rev().find(|n| n.kind == "CompoundStmt") else {
            return;
        };
        let Some(scope) = body.lines_in(main) else { return };
        for p in f.inner.iter().filter(|n| n.kind == "ParmVarDecl") {
            let end = p.end.or(p.loc).filter(|l| l.file == main);
            if let (Some(var), Some(end)) = (p.variable(true, &self.types), end) {
                self.push(var, end.line, scope, 1);
            }
        }
        self.add_block(body, scope, 1, main);
    }

    /// Adds the declarations of compound statement or `for` statement
    /// `block` (lines `scope`, depth `depth`) and of the blocks inside it.
    fn add_block(&mut self, block: &Node, scope: (u32, u32), depth: u32, main: u32) {
        for child in &block.inner {
            match child.kind.as_str() {
                "DeclStmt" => {
                    let Some(end) = child.end.filter(|l| l.file == main) else {
                        continue;
                    };
                    for v in child.inner.iter().filter(|n| n.kind == "VarDecl") {
                        if v.storage.as_deref() == Some("extern") {
                            continue;
                        }
                        if let Some(var) = v.variable(false, &self.types) {
                            self.push(var, end.line, scope, depth);
                        }
                    }
                    // Blocks inside initializers (statement expressions).
                    self.add_nested(child, depth, main);
                }
                "CompoundStmt" | "ForStmt" => {
                    if let Some(inner) = child.lines_in(main) {
                        self.add_block(child, inner, depth + 1, main);
                    }
                }
                _ => self.add_nested(child, depth, main),
            }
        }
    }

    /// Adds the blocks found anywhere below `node` (which opens no scope).
    fn add_nested(&mut self, node: &Node, depth: u32, main: u32) {
        for child in &node.inner {
            if matches!(child.kind.as_str(), "CompoundStmt" | "ForStmt") {
                if let Some(inner) = child.lines_in(main) {
                    self.add_block(child, inner, depth + 1, main);
                }
            } else {
                self.add_nested(child, depth, main);
            }
        }
    }
}

/// Runs `clang -Xclang -ast-dump=json -fsyntax-only -w` on `source` (with
/// `-I` for each of `include_dirs`, e.g. `/usr/include/csmith`) and builds
/// its [`ScopeMap`]. `clang` is the compiler to run (`clang`, `clang-16`, or
/// a path).
///
/// Errors (a reason, never a panic): clang is not installed (the scope
/// oracle needs it), the path is not UTF-8, clang fails or takes more than
/// two minutes (the file does not compile), its output is not a JSON AST.
pub async fn scopes(source: &Path, clang: &str, include_dirs: &[PathBuf]) -> Result<ScopeMap, String> {
    if process::which(clang).is_none() {
        return Err(format!(
            "{clang} is not installed: the scope oracle needs clang's JSON AST"
        ));
    }
    let main_file = source
        .to_str()
        .ok_or_else(|| format!("{} is not a UTF-8 path", source.display()))?
        .to_string();
    let mut cmd = Command::new(clang);
    cmd.args(["-Xclang", "-ast-dump=json", "-fsyntax-only", "-w"]);
    for d in include_dirs {
        cmd.arg("-I").arg(d);
    }
    cmd.arg(&main_file);
    let out = process::run(cmd, CLANG_TIMEOUT, Sandbox::default())
        .await
        .map_err(|e| format!("cannot run {clang}: {e}"))?;
    if out.timed_out {
        return Err(format!("{clang} -ast-dump=json took more than {CLANG_TIMEOUT:?}"));
    }
    if out.code != Some(0) {
        let tail: String = out.stderr.lines().take(20).collect::<Vec<_>>().join("\n");
        return Err(format!("{clang} -ast-dump=json failed ({:?}): {tail}", out.code));
    }
    tokio::task::spawn_blocking(move || ScopeMap::from_clang_json(out.stdout.as_bytes(), &main_file))
        .await
        .map_err(|e| format!("the AST reader panicked: {e}"))?
}
