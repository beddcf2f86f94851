//! Types for the tree-sitter-c scope oracle (see the parent's "Types"
//! section): each variable's type rebuilt from its declaration's specifiers
//! and declarator (pointers, arrays, functions, parentheses) and spelled as
//! clang spells a `qualType`; header typedefs from a fixed list; struct and
//! enum definitions of the file; array sizes from integer constant
//! expressions of literals and enumerators.

use super::super::clang_scope::Record;
use super::super::transform::text;
use super::{Builder, named_children};
use tree_sitter::Node;

/// Header typedefs known without reading headers: LP64 glibc's
/// (`<stdint.h>`, `<stddef.h>`, `<sys/types.h>`), desugared as clang
/// desugars them.
pub(super) const HEADER_TYPEDEFS: [(&str, &str); 16] = [
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
pub(super) struct Quals {
    pub(super) is_const: bool,
    pub(super) is_volatile: bool,
    pub(super) is_restrict: bool,
    /// `_Atomic` (clang spells `_Atomic(T)`).
    is_atomic: bool,
}

impl Quals {
    /// The `type_qualifier` children of `node`.
    pub(super) fn of(node: Node<'_>, src: &str) -> Quals {
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

    pub(super) fn union(self, o: Quals) -> Quals {
        Quals {
            is_const: self.is_const || o.is_const,
            is_volatile: self.is_volatile || o.is_volatile,
            is_restrict: self.is_restrict || o.is_restrict,
            is_atomic: self.is_atomic || o.is_atomic,
        }
    }

    /// `const volatile restrict`, without `_Atomic`.
    pub(super) fn words(self) -> Vec<&'static str> {
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
pub(super) enum Ty {
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
    pub(super) fn spell(&self) -> String {
        self.print(String::new())
    }

    /// Clang's type printer: the type around declarator text `inner`.
    pub(super) fn print(&self, inner: String) -> String {
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
    pub(super) fn qualified(&self, q: Quals) -> Ty {
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

impl<'s> Builder<'s> {
    /// The number of elements of an array of `elem` initialized by `value`
    /// (an initializer list without designators, or a plain string literal
    /// for an array of a character type), when it can be counted.
    pub(super) fn initializer_len(&self, elem: &Ty, value: Node<'_>) -> Option<u64> {
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
    pub(super) fn declared<'t>(&self, spec: Node<'t>, d: Option<Node<'t>>) -> Option<(Ty, Option<Node<'t>>)> {
        let base = self.base_type(spec)?;
        match d {
            Some(d) => self.apply(base, d),
            None => Some((base, None)),
        }
    }

    /// The type named by the specifiers of `spec`, with their qualifiers.
    pub(super) fn base_type(&self, spec: Node<'_>) -> Option<Ty> {
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
    pub(super) fn apply<'t>(&self, mut ty: Ty, mut d: Node<'t>) -> Option<(Ty, Option<Node<'t>>)> {
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
    pub(super) fn parameter_spellings(&self, list: Node<'_>) -> Vec<String> {
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
    pub(super) fn decayed(&self, ty: &Ty) -> Option<Ty> {
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
    pub(super) fn desugar_top(&self, ty: &Ty) -> Ty {
        if let Ty::Named { quals, name } = ty
            && let Some(t) = self.typedefs.get(name)
        {
            return t.qualified(*quals);
        }
        ty.clone()
    }

    /// Registers the names a `type_definition` declares.
    pub(super) fn typedef(&mut self, def: Node<'_>) {
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
    pub(super) fn record(&mut self, spec: Node<'_>) {
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
    pub(super) fn enum_values(&mut self, spec: Node<'_>) {
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
    pub(super) fn eval(&self, e: Node<'_>) -> Option<i128> {
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
pub(super) fn definition_declarator(mut d: Node<'_>) -> Option<Node<'_>> {
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

pub(super) fn strip_parens(mut d: Node<'_>) -> Option<Node<'_>> {
    while matches!(d.kind(), "parenthesized_declarator" | "attributed_declarator") {
        d = named_children(d).into_iter().next()?;
    }
    Some(d)
}

/// For an anonymous struct, union or enum in type definition `spec`: the
/// first name the definition gives the tag itself (`T` in `typedef struct
/// { ... } T, *PT;`), which clang uses to spell the type.
pub(super) fn anonymous_typedef_name(spec: Node<'_>) -> Option<Node<'_>> {
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
pub(super) fn builtin(words: &[&str]) -> Option<String> {
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
pub(super) fn int_literal(t: &str) -> Option<i128> {
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
