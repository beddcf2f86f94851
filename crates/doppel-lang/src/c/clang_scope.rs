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
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

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
    Integer { signed: bool, bits: u8 },
    /// A pointer: compared by whether it is null (addresses differ between
    /// builds).
    Pointer,
    /// An array of `len` elements of kind `elem`: an [`VarKind::Integer`],
    /// or, for a multi-dimensional array of integers, again an
    /// [`VarKind::Array`] (`int [2][3]` is 2 arrays of 3 ints).
    Array { elem: Box<VarKind>, len: u32 },
    /// A struct: its named fields in declaration order, each with its kind
    /// (nested structs and arrays included). Empty when the record's
    /// definition was not found (values written before fields were known
    /// read back this way). A struct with bit-fields or anonymous members is
    /// [`VarKind::Other`].
    Struct {
        #[serde(default)]
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
    pub name: String,
    /// The type as written (`int32_t`, `uint8_t *`).
    pub type_name: String,
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

// ---------------------------------------------------------------------------
// Streaming reader of clang's JSON AST.

/// A source location: interned file and 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Loc {
    file: u32,
    line: u32,
}

/// The location state carried through the document.
#[derive(Default)]
struct State {
    files: HashMap<String, u32>,
    file: Option<u32>,
    line: u32,
    main_name: String,
    /// The main file's id once it has been seen.
    main: Option<u32>,
    /// Typedef name -> its type, desugared at the top.
    typedefs: HashMap<String, String>,
    /// Struct tag -> its definition.
    records: HashMap<String, Record>,
}

impl State {
    fn set_file(&mut self, name: String) {
        let next = self.files.len() as u32;
        let is_main = name == self.main_name;
        let id = *self.files.entry(name).or_insert(next);
        if is_main {
            self.main = Some(id);
        }
        self.file = Some(id);
    }

    fn current(&self) -> Option<Loc> {
        self.file.map(|file| Loc { file, line: self.line })
    }
}

/// A kept AST node.
#[derive(Debug, Default)]
struct Node {
    kind: String,
    name: Option<String>,
    loc: Option<Loc>,
    begin: Option<Loc>,
    end: Option<Loc>,
    /// `qualType`, `desugaredQualType`.
    ty: Option<(String, Option<String>)>,
    storage: Option<String>,
    /// `tagUsed` of a `RecordDecl` (`struct`, `union`).
    tag: Option<String>,
    /// `completeDefinition` of a `RecordDecl`.
    complete: bool,
    /// `isBitfield` of a `FieldDecl`.
    bitfield: bool,
    inner: Vec<Node>,
}

/// Node kinds the oracle needs.
const KEPT: [&str; 7] = [
    "FieldDecl",
    "FunctionDecl",
    "ParmVarDecl",
    "CompoundStmt",
    "DeclStmt",
    "VarDecl",
    "ForStmt",
];

impl Node {
    /// First and last line of the node when both ends lie in file `main`.
    fn lines_in(&self, main: u32) -> Option<(u32, u32)> {
        match (self.begin, self.end) {
            (Some(b), Some(e)) if b.file == main && e.file == main => Some((b.line, e.line)),
            _ => None,
        }
    }

    /// The variable a named `ParmVarDecl`/`VarDecl` declares.
    fn variable(&self, parameter: bool, types: &TypeTables) -> Option<ScopedVariable> {
        let name = self.name.clone().filter(|n| !n.is_empty())?;
        let (qual, desugared) = self.ty.clone()?;
        let kind = types.kind_of(desugared.as_deref().unwrap_or(&qual));
        Some(ScopedVariable {
            name,
            type_name: qual,
            kind,
            parameter,
            declared_at: self.loc.or(self.begin)?.line,
        })
    }
}

/// The JSON keys the reader acts on.
enum Key {
    Kind,
    Name,
    Loc,
    Range,
    Begin,
    End,
    Type,
    QualType,
    DesugaredQualType,
    StorageClass,
    TagUsed,
    CompleteDefinition,
    IsBitfield,
    Inner,
    File,
    Line,
    Offset,
    ExpansionLoc,
    IncludedFrom,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(match s {
                    "kind" => Key::Kind,
                    "name" => Key::Name,
                    "loc" => Key::Loc,
                    "range" => Key::Range,
                    "begin" => Key::Begin,
                    "end" => Key::End,
                    "type" => Key::Type,
                    "qualType" => Key::QualType,
                    "desugaredQualType" => Key::DesugaredQualType,
                    "storageClass" => Key::StorageClass,
                    "tagUsed" => Key::TagUsed,
                    "completeDefinition" => Key::CompleteDefinition,
                    "isBitfield" => Key::IsBitfield,
                    "inner" => Key::Inner,
                    "file" => Key::File,
                    "line" => Key::Line,
                    "offset" => Key::Offset,
                    "expansionLoc" => Key::ExpansionLoc,
                    "includedFrom" => Key::IncludedFrom,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

/// Walks any value, following the location state; its value is whether the
/// value was a valid location (a map with `offset` or `expansionLoc`).
struct Any<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for Any<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Any<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element_seed(Any(self.0))?.is_some() {}
        Ok(false)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut location = false;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::File => {
                    let name: String = map.next_value()?;
                    self.0.set_file(name);
                }
                Key::Line => self.0.line = map.next_value()?,
                Key::Offset => {
                    location = true;
                    map.next_value::<IgnoredAny>()?;
                }
                Key::ExpansionLoc => {
                    location = true;
                    map.next_value_seed(Any(self.0))?;
                }
                Key::IncludedFrom => {
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value_seed(Any(self.0))?;
                }
            }
        }
        Ok(location)
    }
}

/// A location value: the state after walking it, when it is valid.
struct LocSeed<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for LocSeed<'_> {
    type Value = Option<Loc>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Loc>, D::Error> {
        let valid = Any(&mut *self.0).deserialize(d)?;
        Ok(if valid { self.0.current() } else { None })
    }
}

/// A `range` value: `{begin, end}`.
struct RangeSeed<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for RangeSeed<'_> {
    type Value = (Option<Loc>, Option<Loc>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RangeSeed<'_> {
    type Value = (Option<Loc>, Option<Loc>);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a source range")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut begin, mut end) = (None, None);
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Begin => begin = map.next_value_seed(LocSeed(self.0))?,
                Key::End => end = map.next_value_seed(LocSeed(self.0))?,
                _ => {
                    map.next_value_seed(Any(self.0))?;
                }
            }
        }
        Ok((begin, end))
    }
}

/// A `type` value: `qualType` and `desugaredQualType`.
struct TypeSeed;

impl<'de> DeserializeSeed<'de> for TypeSeed {
    type Value = Option<(String, Option<String>)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TypeSeed {
    type Value = Option<(String, Option<String>)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a type")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut qual, mut desugared) = (None, None);
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::QualType => qual = Some(map.next_value::<String>()?),
                Key::DesugaredQualType => desugared = Some(map.next_value::<String>()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(qual.map(|q| (q, desugared)))
    }
}

/// An AST node: itself if its kind is kept, else its kept descendants.
/// Function definitions outside the main file are dropped.
struct NodeSeed<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = Vec<Node>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Node>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_> {
    type Value = Vec<Node>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a clang AST node")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<Node>, A::Error> {
        let mut node = Node::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Kind => node.kind = map.next_value()?,
                Key::Name => node.name = map.next_value()?,
                Key::StorageClass => node.storage = map.next_value()?,
                Key::TagUsed => node.tag = map.next_value()?,
                Key::CompleteDefinition => node.complete = map.next_value()?,
                Key::IsBitfield => node.bitfield = map.next_value()?,
                Key::Loc => node.loc = map.next_value_seed(LocSeed(self.0))?,
                Key::Range => (node.begin, node.end) = map.next_value_seed(RangeSeed(self.0))?,
                Key::Type => node.ty = map.next_value_seed(TypeSeed)?,
                Key::Inner => node.inner = map.next_value_seed(InnerSeed(self.0))?,
                _ => {
                    map.next_value_seed(Any(self.0))?;
                }
            }
        }
        if node.kind == "TypedefDecl" {
            if let (Some(name), Some((qual, desugared))) = (node.name, node.ty) {
                self.0.typedefs.insert(name, desugared.unwrap_or(qual));
            }
            return Ok(Vec::new());
        }
        if node.kind == "RecordDecl" {
            // Its fields are read; nested definitions registered themselves.
            if let Some(name) = node.name.filter(|n| !n.is_empty())
                && node.tag.as_deref() == Some("struct")
                && node.complete
            {
                let fields = node.inner.iter().filter(|n| n.kind == "FieldDecl");
                let record: Record = fields
                    .map(|f| {
                        let name = f.name.clone().filter(|n| !n.is_empty() && !f.bitfield)?;
                        let (qual, desugared) = f.ty.clone()?;
                        Some((name, desugared.unwrap_or(qual)))
                    })
                    .collect();
                self.0.records.insert(name, record);
            }
            return Ok(Vec::new());
        }
        if !KEPT.contains(&node.kind.as_str()) {
            return Ok(node.inner);
        }
        if node.kind == "FunctionDecl" {
            let in_main = node.loc.or(node.begin).is_some_and(|l| Some(l.file) == self.0.main);
            if !in_main {
                return Ok(Vec::new());
            }
        }
        Ok(vec![node])
    }
}

/// An `inner` array: the kept nodes of all its elements.
struct InnerSeed<'a>(&'a mut State);

impl<'de> DeserializeSeed<'de> for InnerSeed<'_> {
    type Value = Vec<Node>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Node>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for InnerSeed<'_> {
    type Value = Vec<Node>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of AST nodes")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Node>, A::Error> {
        let mut out = Vec::new();
        while let Some(mut nodes) = seq.next_element_seed(NodeSeed(self.0))? {
            out.append(&mut nodes);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROG: &str = r#"#include <stdint.h>
struct S { int a; };
int g;
int f(int p, uint8_t *q) {
  int a = 1;
  static int s;
  extern int g;
  {
    long a = 2;
    volatile int16_t v[3] = {1};
    uint32_t m[2][3];
    struct S st;
    a++;
  }
  for (int i = 0; i < 3; i++)
    a += i;
  double d = 1.0, e =
      2.0;
  return a + (int)d + (int)e;
}
#define DECL(t, n) t n = 0
int h(void) {
  DECL(char, c);
  return c;
}
int main(void) { return f(1, 0) + h(); }
"#;

    fn names(vars: &[ScopedVariable]) -> Vec<String> {
        vars.iter()
            .map(|v| format!("{}:{}:{}", v.name, v.type_name, v.declared_at))
            .collect()
    }

    async fn map_of(src: &str, clang: &str) -> ScopeMap {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.c");
        std::fs::write(&f, src).unwrap();
        scopes(&f, clang, &[]).await.unwrap()
    }

    #[tokio::test]
    async fn visible_variables_follow_declarations_blocks_and_shadowing() {
        for clang in ["clang", "clang-16", "clang-19"] {
            if process::which(clang).is_some() {
                check_prog(map_of(PROG, clang).await);
            }
        }
    }

    fn check_prog(m: ScopeMap) {
        // Outside functions and on the header line: nothing.
        assert!(m.visible_at(3).is_empty());
        assert!(m.visible_at(4).is_empty());
        assert_eq!(names(&m.visible_at(5)), ["p:int:4", "q:uint8_t *:4"]);
        assert_eq!(names(&m.visible_at(6)), ["p:int:4", "q:uint8_t *:4", "a:int:5"]);
        // The static local counts, the extern declaration does not.
        assert_eq!(
            names(&m.visible_at(8)),
            ["p:int:4", "q:uint8_t *:4", "a:int:5", "s:int:6"]
        );
        // The inner `a` is declared on line 9: visible from line 10, shadowing.
        assert_eq!(
            names(&m.visible_at(9)),
            ["p:int:4", "q:uint8_t *:4", "a:int:5", "s:int:6"]
        );
        assert_eq!(
            names(&m.visible_at(13)),
            [
                "p:int:4",
                "q:uint8_t *:4",
                "s:int:6",
                "a:long:9",
                "v:volatile int16_t[3]:10",
                "m:uint32_t[2][3]:11",
                "st:struct S:12"
            ]
        );
        // The `for` variable is visible in its body only.
        assert_eq!(
            names(&m.visible_at(16)),
            ["p:int:4", "q:uint8_t *:4", "a:int:5", "s:int:6", "i:int:15"]
        );
        // A declaration ends on its `;` line: d and e are visible after line 18.
        assert_eq!(names(&m.visible_at(18)).len(), 4);
        assert_eq!(
            names(&m.visible_at(19)),
            [
                "p:int:4",
                "q:uint8_t *:4",
                "a:int:5",
                "s:int:6",
                "d:double:17",
                "e:double:17"
            ]
        );
        // A declaration written by a macro is at its expansion.
        assert!(m.visible_at(23).is_empty());
        assert_eq!(names(&m.visible_at(24)), ["c:char:23"]);
        assert!(m.visible_at(26).is_empty());
        assert_eq!(m.len(), 12);

        let kinds: HashMap<String, VarKind> = (1..30)
            .flat_map(|l| m.visible_at(l))
            .map(|v| (v.name, v.kind))
            .collect();
        let int = |signed, bits| VarKind::Integer { signed, bits };
        assert_eq!(kinds["q"], VarKind::Pointer);
        assert_eq!(kinds["c"], int(true, 8));
        assert_eq!(
            kinds["v"],
            VarKind::Array {
                elem: Box::new(int(true, 16)),
                len: 3
            }
        );
        assert_eq!(
            kinds["m"],
            VarKind::Array {
                elem: Box::new(VarKind::Array {
                    elem: Box::new(int(false, 32)),
                    len: 3
                }),
                len: 2
            }
        );
        assert_eq!(
            kinds["st"],
            VarKind::Struct {
                fields: vec![("a".into(), int(true, 32))]
            }
        );
        assert_eq!(kinds["d"], VarKind::Other);
        let p = m.visible_at(5).remove(0);
        assert!(p.parameter);
        assert!(!m.visible_at(6)[2].parameter);
    }

    #[test]
    fn kinds_of_desugared_types() {
        let int = |signed, bits| VarKind::Integer { signed, bits };
        let cases = [
            ("int", int(true, 32)),
            ("unsigned int", int(false, 32)),
            ("unsigned", int(false, 32)),
            ("signed char", int(true, 8)),
            ("unsigned char", int(false, 8)),
            ("char", int(true, 8)),
            ("_Bool", int(false, 8)),
            ("short", int(true, 16)),
            ("unsigned short", int(false, 16)),
            ("long", int(true, 64)),
            ("unsigned long", int(false, 64)),
            ("long long", int(true, 64)),
            ("const volatile unsigned long long", int(false, 64)),
            ("__int128", int(true, 128)),
            ("enum E", int(true, 32)),
            ("int *", VarKind::Pointer),
            ("const int *const", VarKind::Pointer),
            ("int **volatile", VarKind::Pointer),
            ("int (*)[3]", VarKind::Pointer),
            ("int (*)(int)", VarKind::Other),
            ("struct S", VarKind::Struct { fields: vec![] }),
            ("const struct S", VarKind::Struct { fields: vec![] }),
            ("struct S [2]", VarKind::Other),
            ("union U", VarKind::Other),
            ("double", VarKind::Other),
            ("long double", VarKind::Other),
            ("float [2]", VarKind::Other),
            ("int *[2]", VarKind::Other),
            ("int [n]", VarKind::Other),
            ("int []", VarKind::Other),
            ("void", VarKind::Other),
        ];
        for (ty, kind) in cases {
            assert_eq!(VarKind::of_c_type(ty), kind, "{ty}");
        }
        assert_eq!(
            VarKind::of_c_type("unsigned char [4]"),
            VarKind::Array {
                elem: Box::new(int(false, 8)),
                len: 4
            }
        );
    }

    const STRUCTS: &str = r#"#include <stdint.h>
struct S1 { int x; uint64_t y[2][3]; };
struct S0 { int32_t a; uint8_t b[2]; int *c; struct S1 d; const volatile int16_t e; };
typedef struct S0 S0_t;
typedef struct { int q; } T;
struct B { int f : 3; int g; };
struct F { double d; int i; };
struct O { struct In { short s; } in; union U { int a; } u; };
union U2 { int a; };
int main(void) {
  struct S0 s = {0}; S0_t t = {0}; const struct S1 r = {0}; T anon = {1};
  struct B b = {0}; struct F f = {0}; struct O o = {0}; union U2 u; struct S0 arr[2];
  return 0;
}
"#;

    #[tokio::test]
    async fn structs_get_their_fields_from_the_record_declarations() {
        for clang in ["clang", "clang-16", "clang-19"] {
            if process::which(clang).is_none() {
                continue;
            }
            let m = map_of(STRUCTS, clang).await;
            let kinds: HashMap<String, VarKind> = m.visible_at(13).into_iter().map(|v| (v.name, v.kind)).collect();
            let int = |signed, bits| VarKind::Integer { signed, bits };
            let arr = |elem: VarKind, len| VarKind::Array {
                elem: Box::new(elem),
                len,
            };
            let s1 = VarKind::Struct {
                fields: vec![
                    ("x".into(), int(true, 32)),
                    ("y".into(), arr(arr(int(false, 64), 3), 2)),
                ],
            };
            let s0 = VarKind::Struct {
                fields: vec![
                    ("a".into(), int(true, 32)),
                    ("b".into(), arr(int(false, 8), 2)),
                    ("c".into(), VarKind::Pointer),
                    ("d".into(), s1.clone()),
                    ("e".into(), int(true, 16)),
                ],
            };
            assert_eq!(kinds["s"], s0, "{clang}");
            assert_eq!(kinds["t"], s0, "{clang}: a typedef of a struct");
            assert_eq!(kinds["r"], s1, "{clang}");
            // An unnamed struct behind a typedef is not resolved.
            assert_eq!(kinds["anon"], VarKind::Other, "{clang}");
            // Bit-fields make the whole struct unchecked.
            assert_eq!(kinds["b"], VarKind::Other, "{clang}");
            // Fields of other kinds are kept as such (the shadow skips them).
            assert_eq!(
                kinds["f"],
                VarKind::Struct {
                    fields: vec![("d".into(), VarKind::Other), ("i".into(), int(true, 32))]
                },
                "{clang}"
            );
            assert_eq!(
                kinds["o"],
                VarKind::Struct {
                    fields: vec![
                        (
                            "in".into(),
                            VarKind::Struct {
                                fields: vec![("s".into(), int(true, 16))]
                            }
                        ),
                        ("u".into(), VarKind::Other),
                    ]
                },
                "{clang}"
            );
            assert_eq!(kinds["u"], VarKind::Other, "{clang}");
            assert_eq!(kinds["arr"], VarKind::Other, "{clang}");
        }
    }

    #[test]
    fn array_elements_are_desugared_through_the_typedefs() {
        let int = |signed, bits| VarKind::Integer { signed, bits };
        let arr = |elem: VarKind, len| VarKind::Array {
            elem: Box::new(elem),
            len,
        };
        let typedefs = [
            ("int16_t", "short"),
            ("A", "int[3]"),
            ("P", "int *"),
            ("PA", "int (*)[3]"),
        ];
        let tables = TypeTables {
            typedefs: typedefs.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect(),
            records: HashMap::new(),
        };
        let cases = [
            ("volatile int16_t[3]", arr(int(true, 16), 3)),
            // Pointers to arrays stay pointers.
            ("int (*)[3]", VarKind::Pointer),
            ("int16_t (*)[3]", VarKind::Pointer),
            ("int (**)[3]", VarKind::Other),
            // An array of an array typedef: the typedef's dimension is the
            // innermost.
            ("A[2]", arr(arr(int(true, 32), 3), 2)),
            ("const A[2][4]", arr(arr(arr(int(true, 32), 3), 4), 2)),
            ("P[2]", VarKind::Other),
            ("PA[2]", VarKind::Other),
        ];
        for (ty, kind) in cases {
            assert_eq!(tables.kind_of(ty), kind, "{ty}");
        }
    }

    #[test]
    fn struct_kinds_serialize_with_their_fields_and_old_ones_read_as_empty() {
        let k = VarKind::Struct {
            fields: vec![("a".into(), VarKind::Pointer)],
        };
        let j = serde_json::to_string(&k).unwrap();
        assert_eq!(j, r#"{"kind":"struct","fields":[["a",{"kind":"pointer"}]]}"#);
        assert_eq!(serde_json::from_str::<VarKind>(&j).unwrap(), k);
        assert_eq!(
            serde_json::from_str::<VarKind>(r#"{"kind":"struct"}"#).unwrap(),
            VarKind::Struct { fields: vec![] }
        );
        assert_eq!(k.name(), "struct");
    }

    #[test]
    fn omitted_file_and_line_are_carried_over_and_included_from_is_not_a_file() {
        // Hand-made dump: a header function (dropped), then the main file's
        // function whose locations omit `file` and `line` when unchanged.
        let json = r#"{"kind":"TranslationUnitDecl","loc":{},"range":{"begin":{},"end":{}},"inner":[
          {"kind":"FunctionDecl","loc":{"offset":1,"file":"h.h","line":1,"col":1,"tokLen":1,
             "includedFrom":{"file":"m.c"}},"range":{"begin":{"offset":1,"col":1,"tokLen":1},
             "end":{"offset":9,"line":3,"col":1,"tokLen":1}},"name":"hf","inner":[
             {"kind":"CompoundStmt","range":{"begin":{"offset":5,"col":1,"tokLen":1},"end":{"offset":9,"col":1,"tokLen":1}},
              "inner":[{"kind":"DeclStmt","range":{"begin":{"offset":6,"line":2,"col":1,"tokLen":1},"end":{"offset":7,"col":2,"tokLen":1}},
                "inner":[{"kind":"VarDecl","loc":{"offset":6,"col":1,"tokLen":1},"range":{"begin":{"offset":6,"col":1,"tokLen":1},"end":{"offset":6,"col":1,"tokLen":1}},"name":"hv","type":{"qualType":"int"}}]}]}]},
          {"kind":"FunctionDecl","loc":{"offset":20,"file":"m.c","line":5,"col":5,"tokLen":1},
             "range":{"begin":{"offset":16,"col":1,"tokLen":3},"end":{"offset":40,"line":9,"col":1,"tokLen":1}},
             "name":"f","inner":[
             {"kind":"ParmVarDecl","loc":{"offset":26,"line":5,"col":11,"tokLen":1},"range":{"begin":{"offset":22,"col":7,"tokLen":3},"end":{"offset":26,"col":11,"tokLen":1}},"name":"x","type":{"qualType":"int32_t","desugaredQualType":"int"}},
             {"kind":"CompoundStmt","range":{"begin":{"offset":29,"line":6,"col":1,"tokLen":1},"end":{"offset":40,"line":9,"col":1,"tokLen":1}},
              "inner":[{"kind":"DeclStmt","range":{"begin":{"offset":31,"line":7,"col":3,"tokLen":3},
                   "end":{"spellingLoc":{"offset":3,"file":"h.h","line":1,"col":1,"tokLen":1,"includedFrom":{"file":"m.c"}},
                          "expansionLoc":{"offset":36,"file":"m.c","line":7,"col":8,"tokLen":1}}},
                "inner":[{"kind":"VarDecl","loc":{"offset":35,"col":7,"tokLen":1},"range":{"begin":{"offset":31,"col":3,"tokLen":3},"end":{"offset":35,"col":7,"tokLen":1}},"name":"y","type":{"qualType":"uint8_t","desugaredQualType":"unsigned char"}}]}]}]}
        ]}"#;
        let m = ScopeMap::from_clang_json(json.as_bytes(), "m.c").unwrap();
        assert_eq!(m.len(), 2);
        assert!(m.visible_at(2).is_empty());
        assert_eq!(names(&m.visible_at(7)), ["x:int32_t:5"]);
        let at8 = m.visible_at(8);
        assert_eq!(names(&at8), ["x:int32_t:5", "y:uint8_t:7"]);
        assert_eq!(at8[1].kind, VarKind::Integer { signed: false, bits: 8 });
        assert!(m.visible_at(10).is_empty());

        assert!(ScopeMap::from_clang_json(b"{\"kind\": ", "m.c").is_err());
        assert!(
            ScopeMap::from_clang_json(json.as_bytes(), "other.c")
                .unwrap()
                .is_empty()
        );
    }

    #[tokio::test]
    async fn missing_clang_and_compile_errors_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.c");
        std::fs::write(&f, "int main(void) { return x; }\n").unwrap();
        let err = scopes(&f, "clang", &[]).await.unwrap_err();
        assert!(err.contains("failed"), "{err}");
        let err = scopes(&f, "no-such-clang-doppel", &[]).await.unwrap_err();
        assert!(err.contains("not installed"), "{err}");
    }

    #[tokio::test]
    async fn csmith_program_parameters_are_visible_in_their_bodies() {
        assert!(
            process::which("csmith").is_some(),
            "csmith is needed (apt-get install csmith libcsmith-dev)"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.c");
        // csmith writes platform.info into its working directory.
        let out = std::process::Command::new("csmith")
            .current_dir(dir.path())
            .args([
                "--seed",
                "7",
                "--no-unions",
                "--safe-math",
                "--no-argc",
                "--no-inline-function",
            ])
            .args(["--no-bitfields", "--no-return-structs", "--max-funcs", "5"])
            .output()
            .unwrap();
        std::fs::write(&f, &out.stdout).unwrap();
        let m = scopes(&f, "clang", &[PathBuf::from("/usr/include/csmith")])
            .await
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        // Every function definition `static T func_N(params)` followed by `{`
        // on the next line: its parameters are visible on the line after `{`.
        let lines: Vec<&str> = text.lines().collect();
        let mut checked = 0;
        for (i, l) in lines.iter().enumerate() {
            if l.starts_with("static ") && l.contains(" func_") && !l.ends_with(';') && lines[i + 1].starts_with('{') {
                let params: Vec<String> = m
                    .visible_at(i as u32 + 3)
                    .into_iter()
                    .filter(|v| v.parameter)
                    .map(|v| v.name)
                    .collect();
                let expected = l.matches("p_").count();
                assert_eq!(params.len(), expected, "{l}: {params:?}");
                checked += 1;
            }
        }
        assert!(checked >= 2, "{checked}");
        // Nothing is visible among the globals at the top of the file.
        assert!(m.visible_at(20).is_empty());
        // main: `{`, `int i, j, k;`, `int print_hash_value = 0;`, then calls.
        let main_line = lines.iter().position(|l| l.starts_with("int main")).unwrap() as u32 + 1;
        let at: Vec<String> = m.visible_at(main_line + 4).into_iter().map(|v| v.name).collect();
        assert_eq!(at, ["i", "j", "k", "print_hash_value"]);
    }
}
