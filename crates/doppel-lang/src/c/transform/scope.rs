//! Which variables are visible before a statement, with what kind of type:
//! the "variable randomly chosen from the scope" of ISSTA'19 section 3.2.2
//! (dead code, no-op, `v == v` for booleans).
//!
//! The analysis is syntactic (tree-sitter-c) and conservative: a variable is
//! reported only when its declaration is textually before the statement, in
//! an enclosing block, a `for` initializer, the function's parameters, or at
//! file scope before the function; inner declarations shadow outer ones (and
//! a shadowing function, typedef or enumerator hides the outer variable).
//! Declarations inside preprocessor conditionals are ignored, and so are
//! names that are also macros. A type the analysis cannot classify is
//! [`TypeClass::Other`], which no transformation uses.

use super::{ancestors, text};
use crate::transform::ScopeIndexing;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// What kind of value a variable holds, as far as assignments and
/// comparisons are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeClass {
    /// Integer types (`char`, `short`, `int`, `long`, `unsigned`, `_Bool`,
    /// enums, `size_t`-like standard typedefs).
    Integer,
    /// `float`, `double`, `long double`.
    Floating,
    /// Any pointer (object or function).
    Pointer,
    /// A struct or union whose definition is in the file and has no `const`
    /// member (so `s = s;` compiles).
    Record,
    /// An array (not assignable as a whole).
    Array,
    /// A function designator.
    Function,
    /// Anything else: unknown typedefs, incomplete records, enumerators,
    /// typedef names; such names only shadow.
    Other,
}

/// A variable visible at a statement boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// The identifier.
    pub name: String,
    /// What kind of type it has.
    pub class: TypeClass,
    /// The variable itself is `const` (a `const int`, an `int *const`).
    pub is_const: bool,
    /// `volatile` or `_Atomic`.
    pub is_volatile: bool,
    /// Declared `extern` (maybe never defined: using it could fail to link).
    pub is_extern: bool,
    /// 1-based line of the declaration.
    pub line: u32,
}

impl Variable {
    fn plain(&self) -> bool {
        !self.is_const && !self.is_volatile && !self.is_extern
    }

    /// Whether `v = <small integer>;` is valid: a modifiable arithmetic
    /// variable (ISSTA'19 "add dead code").
    pub fn takes_integer_literal(&self) -> bool {
        self.plain() && matches!(self.class, TypeClass::Integer | TypeClass::Floating)
    }

    /// Whether `v = v;` is valid and has no effect: modifiable, not volatile,
    /// not an array or function (ISSTA'19 "add no-op-like statement").
    pub fn self_assignable(&self) -> bool {
        self.plain()
            && matches!(
                self.class,
                TypeClass::Integer | TypeClass::Floating | TypeClass::Pointer | TypeClass::Record
            )
    }

    /// Whether `v == v` is always true (integers: no NaN).
    pub fn reflexive_integer(&self) -> bool {
        !self.is_volatile && !self.is_extern && self.class == TypeClass::Integer
    }
}

/// Per named child of a compound statement, in order: its end byte and
/// the variables it declares.
type BlockDeclarations = Vec<(usize, Vec<Variable>)>;

/// What scope questions about one program need from the whole tree,
/// computed once ([`ScopeIndexing::PerProgram`]): identifier uses outside
/// `sizeof` per name, macro names, the first file-scope `typedef` of each
/// name, the first definition (body) of each struct/union tag, and each
/// function's file-scope declarations. With
/// [`ScopeIndexing::PerStatement`] nothing is kept and every question walks
/// the tree again, as the original algorithm did (the benchmark baseline).
/// Either way the answers are the same.
pub struct ScopeIndex<'t> {
    src: &'t str,
    root: Node<'t>,
    indexing: ScopeIndexing,
    /// Identifier name -> how many `identifier` nodes outside `sizeof`.
    uses: HashMap<&'t str, usize>,
    macros: HashSet<String>,
    /// Typedef name -> (its `type_definition`, the declarator), first wins.
    typedefs: HashMap<&'t str, (Node<'t>, Node<'t>)>,
    /// (`struct_specifier`/`union_specifier`, tag) -> the first body.
    records: RefCell<HashMap<(&'static str, &'t str), Option<Node<'t>>>>,
    /// Function definition node id -> the file-scope variables declared
    /// before it, as [`visible_at`] appends them.
    file_scope: RefCell<HashMap<usize, Vec<Variable>>>,
    /// Compound statement node id -> per named child, in order: its end
    /// byte and what it declares (as `declared_by` appends it), so a
    /// question about a statement in a long block does not read every
    /// earlier sibling again (Csmith functions have hundreds).
    blocks: RefCell<HashMap<usize, BlockDeclarations>>,
    /// Every node's parent (`Node::parent` is linear in the earlier siblings).
    parents: Option<super::Parents<'t>>,
}

impl<'t> ScopeIndex<'t> {
    /// Indexes the program `src` whose tree has the root `root` (one walk
    /// of the tree with [`ScopeIndexing::PerProgram`], none otherwise).
    pub fn new(src: &'t str, root: Node<'t>, indexing: ScopeIndexing) -> Self {
        let mut ix = Self {
            src,
            root,
            indexing,
            uses: HashMap::new(),
            macros: HashSet::new(),
            typedefs: HashMap::new(),
            records: RefCell::new(HashMap::new()),
            file_scope: RefCell::new(HashMap::new()),
            blocks: RefCell::new(HashMap::new()),
            parents: None,
        };
        if indexing == ScopeIndexing::PerProgram {
            ix.parents = Some(super::Parents::new(root));
            ix.uses = identifier_counts(root, src);
            ix.macros = macro_names(src, root);
            let mut cursor = root.walk();
            for td in root
                .named_children(&mut cursor)
                .filter(|n| n.kind() == "type_definition")
            {
                let mut c = td.walk();
                for d in td.children_by_field_name("declarator", &mut c) {
                    if let Some(n) = declarator_name(d) {
                        ix.typedefs.entry(text(n, src)).or_insert((td, d));
                    }
                }
            }
        }
        ix
    }

    fn indexed(&self) -> bool {
        self.indexing == ScopeIndexing::PerProgram
    }

    /// The parent of `node`.
    pub(crate) fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        match &self.parents {
            Some(p) => p.parent(node),
            None => node.parent(),
        }
    }

    /// The ancestors of `node`, nearest first.
    pub(crate) fn ancestors(&self, node: Node<'t>) -> Vec<Node<'t>> {
        match &self.parents {
            Some(p) => p.ancestors(node).collect(),
            None => ancestors(node).collect(),
        }
    }

    /// How many identifiers named `name` the program has outside `sizeof`.
    pub fn use_count(&self, name: &str) -> usize {
        if self.indexed() {
            self.uses.get(name).copied().unwrap_or(0)
        } else {
            identifier_count(self.root, self.src, name)
        }
    }

    /// [`visible_at`] without the variables the program never uses (no
    /// identifier besides the declaration): GCC gives an unused local no
    /// debug information at all, so a transformation that uses it makes it
    /// appear in the debugger, a change of the compiler's doing, not the
    /// debugger's (false warnings seen on c-testsuite). What
    /// transformations choose from.
    pub fn used_visible_at(&self, stmt: Node<'t>) -> Vec<Variable> {
        let mut vars = self.visible_at(stmt);
        vars.retain(|v| self.use_count(&v.name) >= 2);
        vars
    }

    /// [`visible_at`] for a statement of this program.
    pub fn visible_at(&self, stmt: Node<'t>) -> Vec<Variable> {
        let src = self.src;
        // Innermost first; the first entry of a name wins.
        let mut found: Vec<Variable> = Vec::new();
        let mut child = stmt;
        let mut in_function = false;
        for p in self.ancestors(stmt) {
            match p.kind() {
                "compound_statement" if self.indexed() => {
                    let start = child.start_byte();
                    let mut blocks = self.blocks.borrow_mut();
                    let entries = blocks.entry(p.id()).or_insert_with(|| {
                        let mut cursor = p.walk();
                        p.named_children(&mut cursor)
                            .map(|c| {
                                let mut declared = Vec::new();
                                self.declared_by(c, &mut declared, true);
                                (c.end_byte(), declared)
                            })
                            .collect()
                    });
                    // Siblings end in order: the ones before `child` are a prefix.
                    let before = entries.partition_point(|(end, _)| *end <= start);
                    for (_, declared) in entries[..before].iter().rev() {
                        found.extend(declared.iter().cloned());
                    }
                }
                "compound_statement" => {
                    let mut cursor = p.walk();
                    let before: Vec<Node> = p
                        .named_children(&mut cursor)
                        .filter(|c| c.end_byte() <= child.start_byte())
                        .collect();
                    for c in before.into_iter().rev() {
                        self.declared_by(c, &mut found, true);
                    }
                }
                "for_statement" => {
                    if let Some(init) = p.child_by_field_name("initializer")
                        && init.id() != child.id()
                        && init.kind() == "declaration"
                    {
                        self.declared_by(init, &mut found, true);
                    }
                }
                "function_definition" => {
                    in_function = true;
                    if let Some(params) = p
                        .child_by_field_name("declarator")
                        .and_then(function_declarator)
                        .and_then(|f| f.child_by_field_name("parameters"))
                    {
                        let mut cursor = params.walk();
                        let list: Vec<Node> = params
                            .named_children(&mut cursor)
                            .filter(|c| c.kind() == "parameter_declaration")
                            .collect();
                        for d in list.into_iter().rev() {
                            if let Some(decl) = d.child_by_field_name("declarator") {
                                self.push_declarator(d, decl, &mut found);
                            }
                        }
                    }
                    if self.parent(p).is_some_and(|u| u.kind() == "translation_unit") {
                        found.extend(self.file_scope_before(p));
                    }
                    break;
                }
                _ => {}
            }
            child = p;
        }
        if !in_function {
            return Vec::new();
        }
        let per_call;
        let macros = if self.indexed() {
            &self.macros
        } else {
            per_call = macro_names(src, self.root);
            &per_call
        };
        let mut seen = HashSet::new();
        found
            .into_iter()
            .filter(|v| seen.insert(v.name.clone()))
            .filter(|v| !matches!(v.class, TypeClass::Other | TypeClass::Function) && !macros.contains(&v.name))
            .collect()
    }

    /// The file-scope variables declared before the top-level function
    /// definition `f`, latest first.
    fn file_scope_before(&self, f: Node<'t>) -> Vec<Variable> {
        if self.indexed()
            && let Some(v) = self.file_scope.borrow().get(&f.id())
        {
            return v.clone();
        }
        let mut out = Vec::new();
        let mut cursor = self.root.walk();
        let before: Vec<Node> = self
            .root
            .named_children(&mut cursor)
            .filter(|c| c.end_byte() <= f.start_byte())
            .collect();
        for c in before.into_iter().rev() {
            self.declared_by(c, &mut out, false);
        }
        if self.indexed() {
            self.file_scope.borrow_mut().insert(f.id(), out.clone());
        }
        out
    }
}

/// [`ScopeIndex::used_visible_at`] with a per-call index (the tree walked
/// for this statement alone): for one question; ask a [`ScopeIndex`] for many.
pub fn used_visible_at(src: &str, stmt: Node<'_>) -> Vec<Variable> {
    let Some(root) = ancestors(stmt).last() else {
        return Vec::new();
    };
    ScopeIndex::new(src, root, ScopeIndexing::PerStatement).used_visible_at(stmt)
}

/// Identifier name -> how many identifiers of that name the tree under
/// `node` has outside `sizeof` (one walk; [`identifier_count`] for all names).
fn identifier_counts<'t>(node: Node<'t>, src: &'t str) -> HashMap<&'t str, usize> {
    let mut counts = HashMap::new();
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(x) = stack.pop() {
        if x.kind() == "identifier"
            && let Ok(t) = x.utf8_text(src.as_bytes())
        {
            *counts.entry(t).or_insert(0) += 1;
        }
        if x.kind() != "sizeof_expression" {
            stack.extend(x.children(&mut cursor));
        }
    }
    counts
}

/// How many identifiers named `name` the tree under `node` has, outside
/// `sizeof`.
fn identifier_count(node: Node<'_>, src: &str, name: &str) -> usize {
    let mut n = 0;
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(x) = stack.pop() {
        if x.kind() == "identifier" && x.utf8_text(src.as_bytes()).is_ok_and(|t| t == name) {
            n += 1;
        }
        // `sizeof x` does not use `x` (GCC still drops it).
        if x.kind() != "sizeof_expression" {
            stack.extend(x.children(&mut cursor));
        }
    }
    n
}

/// The variables visible just before `stmt` (a statement or declaration
/// inside a function body), innermost declaration per name, innermost
/// first; functions and names of unknown type are left out. Empty when
/// `stmt` is not inside a function definition.
pub fn visible_at(src: &str, stmt: Node<'_>) -> Vec<Variable> {
    let Some(root) = ancestors(stmt).last() else {
        return Vec::new();
    };
    ScopeIndex::new(src, root, ScopeIndexing::PerStatement).visible_at(stmt)
}

/// Names `#define`d anywhere in the file.
pub(crate) fn macro_names(src: &str, root: Node<'_>) -> HashSet<String> {
    super::descendants(root)
        .into_iter()
        .filter(|n| matches!(n.kind(), "preproc_def" | "preproc_function_def"))
        .filter_map(|n| n.child_by_field_name("name"))
        .map(|n| text(n, src).to_string())
        .collect()
}

/// The `function_declarator` a definition's declarator wraps (through
/// pointers for functions returning pointers), if its name is a plain identifier.
pub(crate) fn function_declarator(decl: Node<'_>) -> Option<Node<'_>> {
    let mut d = decl;
    loop {
        match d.kind() {
            "function_declarator" => {
                return d
                    .child_by_field_name("declarator")
                    .filter(|n| n.kind() == "identifier")
                    .map(|_| d);
            }
            "pointer_declarator" | "attributed_declarator" => {
                d = d.child_by_field_name("declarator").or_else(|| d.named_child(0))?;
            }
            _ => return None,
        }
    }
}

impl<'t> ScopeIndex<'t> {
    /// Adds what a block item or file-scope item declares, reversed (later
    /// declarations of the same scope shadow earlier ones).
    fn declared_by(&self, item: Node<'t>, out: &mut Vec<Variable>, local: bool) {
        let src = self.src;
        let line = item.start_position().row as u32 + 1;
        let shadow = |name: &str, class| Variable {
            name: name.to_string(),
            class,
            is_const: false,
            is_volatile: false,
            is_extern: false,
            line,
        };
        match item.kind() {
            "declaration" => {
                let mut cursor = item.walk();
                let decls: Vec<Node> = item.children_by_field_name("declarator", &mut cursor).collect();
                for d in decls.into_iter().rev() {
                    self.push_declarator(item, d, out);
                }
                if let Some(t) = item.child_by_field_name("type") {
                    enumerators(src, t, |n| out.push(shadow(n, TypeClass::Other)));
                }
            }
            "type_definition" => {
                let mut cursor = item.walk();
                let decls: Vec<Node> = item.children_by_field_name("declarator", &mut cursor).collect();
                for d in decls {
                    if let Some(name) = declarator_name(d) {
                        out.push(shadow(text(name, src), TypeClass::Other));
                    }
                }
                if let Some(t) = item.child_by_field_name("type") {
                    enumerators(src, t, |n| out.push(shadow(n, TypeClass::Other)));
                }
            }
            "function_definition" if !local => {
                if let Some(name) = item
                    .child_by_field_name("declarator")
                    .and_then(function_declarator)
                    .and_then(|f| f.child_by_field_name("declarator"))
                {
                    out.push(shadow(text(name, src), TypeClass::Function));
                }
            }
            "function_definition" => {
                // A GNU nested function hides outer names but is no variable.
                if let Some(name) = item.child_by_field_name("declarator").and_then(declarator_name) {
                    out.push(shadow(text(name, src), TypeClass::Function));
                }
            }
            _ => {
                if let Some(t) = item.child_by_field_name("type") {
                    enumerators(src, t, |n| out.push(shadow(n, TypeClass::Other)));
                }
            }
        }
    }
}

fn enumerators(src: &str, ty: Node<'_>, mut f: impl FnMut(&str)) {
    if ty.kind() != "enum_specifier" {
        return;
    }
    if let Some(body) = ty.child_by_field_name("body") {
        let mut cursor = body.walk();
        for e in body.named_children(&mut cursor) {
            if let Some(n) = e.child_by_field_name("name") {
                f(text(n, src));
            }
        }
    }
}

/// The identifier a declarator declares.
pub(crate) fn declarator_name(mut d: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..32 {
        match d.kind() {
            "identifier" | "field_identifier" | "type_identifier" => return Some(d),
            "parenthesized_declarator" | "attributed_declarator" => d = d.named_child(0)?,
            _ => d = d.child_by_field_name("declarator")?,
        }
    }
    None
}

/// The declarator layer closest to the name: the outermost type constructor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    None,
    Pointer { is_const: bool, is_volatile: bool },
    Array,
    Function,
    Unknown,
}

fn innermost_layer(src: &str, mut d: Node<'_>) -> Layer {
    let mut layer = Layer::None;
    for _ in 0..32 {
        match d.kind() {
            "identifier" | "field_identifier" | "type_identifier" => return layer,
            "init_declarator" => match d.child_by_field_name("declarator") {
                Some(n) => d = n,
                None => return Layer::Unknown,
            },
            "parenthesized_declarator" | "attributed_declarator" => match d.named_child(0) {
                Some(n) => d = n,
                None => return Layer::Unknown,
            },
            kind @ ("pointer_declarator" | "array_declarator" | "function_declarator") => {
                layer = match kind {
                    "pointer_declarator" => {
                        let (c, v) = qualifiers(src, d);
                        Layer::Pointer {
                            is_const: c,
                            is_volatile: v,
                        }
                    }
                    "array_declarator" => Layer::Array,
                    _ => Layer::Function,
                };
                match d.child_by_field_name("declarator") {
                    Some(n) => d = n,
                    None => return Layer::Unknown,
                }
            }
            _ => return Layer::Unknown,
        }
    }
    Layer::Unknown
}

/// `const`, `volatile`/`_Atomic` among the direct `type_qualifier` children.
fn qualifiers(src: &str, n: Node<'_>) -> (bool, bool) {
    let mut cursor = n.walk();
    let quals: Vec<&str> = n
        .children(&mut cursor)
        .filter(|c| c.kind() == "type_qualifier")
        .map(|c| text(c, src))
        .collect();
    (
        quals.iter().any(|q| q.contains("const")),
        quals.iter().any(|q| q.contains("volatile") || q.contains("_Atomic")),
    )
}

impl<'t> ScopeIndex<'t> {
    /// Adds the variable `decl` (a declarator of the specifier node `spec`) declares.
    fn push_declarator(&self, spec: Node<'t>, decl: Node<'t>, out: &mut Vec<Variable>) {
        let src = self.src;
        let Some(name) = declarator_name(decl) else { return };
        let mut cursor = spec.walk();
        let is_extern = spec
            .children(&mut cursor)
            .any(|c| c.kind() == "storage_class_specifier" && text(c, src) == "extern");
        let (class, is_const, is_volatile) = self.classify(spec, decl, 0);
        out.push(Variable {
            name: text(name, src).to_string(),
            class,
            is_const,
            is_volatile,
            is_extern,
            line: decl.start_position().row as u32 + 1,
        });
    }

    /// The [`TypeClass`] of the variable `decl` (a declarator of the
    /// declaration or parameter `spec`) declares.
    pub(crate) fn class_of(&self, spec: Node<'t>, decl: Node<'t>) -> TypeClass {
        self.classify(spec, decl, 0).0
    }

    /// Classifies the type `decl` gets from the specifiers of `spec`:
    /// (class, const, volatile).
    fn classify(&self, spec: Node<'t>, decl: Node<'t>, depth: u32) -> (TypeClass, bool, bool) {
        let src = self.src;
        const OTHER: (TypeClass, bool, bool) = (TypeClass::Other, false, false);
        if depth > 8 {
            return OTHER;
        }
        match innermost_layer(src, decl) {
            Layer::Pointer { is_const, is_volatile } => return (TypeClass::Pointer, is_const, is_volatile),
            Layer::Array => return (TypeClass::Array, false, false),
            Layer::Function => return (TypeClass::Function, false, false),
            Layer::Unknown => return OTHER,
            Layer::None => {}
        }
        let (mut is_const, mut is_volatile) = qualifiers(src, spec);
        let Some(ty) = spec.child_by_field_name("type") else {
            return OTHER;
        };
        let class = match ty.kind() {
            "primitive_type" => match text(ty, src) {
                "float" | "double" => TypeClass::Floating,
                "void" | "nullptr_t" | "max_align_t" | "charptr_t" => TypeClass::Other,
                _ => TypeClass::Integer,
            },
            "sized_type_specifier" => {
                let t = text(ty, src);
                if t.contains("complex") || t.contains("_Complex") {
                    TypeClass::Other
                } else if t.contains("double") || t.contains("float") {
                    TypeClass::Floating
                } else {
                    let (c, v) = qualifiers(src, ty);
                    is_const |= c;
                    is_volatile |= v;
                    TypeClass::Integer
                }
            }
            "enum_specifier" => TypeClass::Integer,
            "struct_specifier" | "union_specifier" => self.record_class(ty),
            "type_identifier" => {
                let name = text(ty, src);
                match self.typedef_of(name) {
                    Some((tspec, tdecl)) => {
                        let (c, k, v) = self.classify(tspec, tdecl, depth + 1);
                        is_const |= k;
                        is_volatile |= v;
                        c
                    }
                    None if STANDARD_INTEGER_TYPEDEFS.contains(&name) => TypeClass::Integer,
                    None => TypeClass::Other,
                }
            }
            _ => TypeClass::Other,
        };
        (class, is_const, is_volatile)
    }
}

/// Integer typedefs of the C library that are never const, arrays or records.
const STANDARD_INTEGER_TYPEDEFS: &[&str] = &[
    "_Bool",
    "size_t",
    "ssize_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "intmax_t",
    "uintmax_t",
    "off_t",
    "time_t",
    "clock_t",
    "pid_t",
    "wchar_t",
    "wint_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "u_int",
    "uint",
    "ulong",
    "ushort",
];

impl<'t> ScopeIndex<'t> {
    /// The file-scope `typedef` declaring `name`: its specifier node and declarator.
    fn typedef_of(&self, name: &str) -> Option<(Node<'t>, Node<'t>)> {
        if self.indexed() {
            return self.typedefs.get(name).copied();
        }
        let (src, root) = (self.src, self.root);
        let mut cursor = root.walk();
        let items: Vec<Node> = root.named_children(&mut cursor).collect();
        items
            .into_iter()
            .filter(|n| n.kind() == "type_definition")
            .find_map(|td| {
                let mut c = td.walk();
                let decls: Vec<Node> = td.children_by_field_name("declarator", &mut c).collect();
                decls
                    .into_iter()
                    .find(|d| declarator_name(*d).is_some_and(|n| text(n, src) == name))
                    .map(|d| (td, d))
            })
    }

    /// [`TypeClass::Record`] when the struct/union's body (here or in a
    /// file-scope definition of the same tag) has no `const`; else `Other`.
    fn record_class(&self, ty: Node<'t>) -> TypeClass {
        let (src, root) = (self.src, self.root);
        let body = ty.child_by_field_name("body").or_else(|| {
            let tag = text(ty.child_by_field_name("name")?, src);
            let find = || {
                super::descendants(root)
                    .into_iter()
                    .filter(|n| n.kind() == ty.kind())
                    .filter(|n| n.child_by_field_name("name").is_some_and(|t| text(t, src) == tag))
                    .find_map(|n| n.child_by_field_name("body"))
            };
            if !self.indexed() {
                return find();
            }
            *self.records.borrow_mut().entry((ty.kind(), tag)).or_insert_with(find)
        });
        match body {
            Some(b) if !text(b, src).contains("const") => TypeClass::Record,
            _ => TypeClass::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::c::transform::{descendants, parse};

    /// Variables visible before the statement starting with `marker`.
    fn at(src: &str, marker: &str) -> Vec<Variable> {
        let tree = parse(src).unwrap();
        let off = src.find(marker).unwrap();
        let stmt = descendants(tree.root_node())
            .into_iter()
            .find(|n| n.start_byte() == off && n.parent().is_some_and(|p| p.kind() == "compound_statement"))
            .unwrap();
        visible_at(src, stmt)
    }

    fn names(vs: &[Variable]) -> Vec<&str> {
        vs.iter().map(|v| v.name.as_str()).collect()
    }

    const SRC: &str = r#"
#define M 1
typedef struct pt { int x; int y; } Pt;
typedef const int CI;
struct k { const int a; };
int g;
double gd;
const int gc = 1;
extern int ge;
int late_fn(void);
int f(int p, char *s, int arr[3]) {
    int a = 1;
    const char *cs = s;
    char *const pc = s;
    float fl[2];
    Pt pt;
    struct k kk;
    CI ci = 2;
    volatile int vol;
    int M2;
    {
        double a = 2.0;
        for (int i = 0; i < 3; i++) {
            HERE: ;
            g = a;
        }
    }
    int after = 3;
    return a;
}
int later;
"#;

    #[test]
    fn inner_declarations_shadow_and_later_ones_are_invisible() {
        let vs = at(SRC, "g = a;");
        let n = names(&vs);
        assert_eq!(n[0], "i");
        assert_eq!(n[1], "a");
        assert_eq!(vs[1].class, TypeClass::Floating, "inner double a shadows int a");
        assert!(n.contains(&"p") && n.contains(&"g") && n.contains(&"gd"));
        assert!(!n.contains(&"after") && !n.contains(&"later"));
        assert!(!n.contains(&"late_fn"), "functions are no variables");
    }

    #[test]
    fn types_and_qualifiers_are_classified() {
        let vs = at(SRC, "g = a;");
        let get = |name: &str| vs.iter().find(|v| v.name == name).unwrap();
        assert!(get("cs").self_assignable(), "pointer to const is modifiable");
        assert!(!get("pc").self_assignable(), "const pointer");
        assert!(!get("fl").self_assignable() && get("fl").class == TypeClass::Array);
        assert_eq!(get("pt").class, TypeClass::Record);
        assert!(get("pt").self_assignable());
        assert!(!vs.iter().any(|v| v.name == "kk"), "struct with a const member");
        assert!(get("ci").is_const, "const through a typedef");
        assert!(get("vol").is_volatile);
        assert!(get("gc").is_const && !get("gc").takes_integer_literal());
        assert!(get("ge").is_extern && !get("ge").self_assignable());
        assert_eq!(get("arr").class, TypeClass::Array);
        assert!(get("p").reflexive_integer() && !get("gd").reflexive_integer());
        assert!(get("gd").takes_integer_literal());
    }
}
