//! The streaming reader of clang's JSON AST (see the parent's "Reading
//! clang's JSON"): one pass that keeps only the nodes the scope oracle
//! needs, hoists the kept descendants of every other node, drops function
//! definitions outside the main file as soon as they are read, and carries
//! clang's relative source locations (`file` and `line` printed only when
//! they change) through the document in order.

use super::{Record, ScopedVariable, TypeTables};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::collections::HashMap;
use std::fmt;

/// A source location: interned file and 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Loc {
    pub(super) file: u32,
    pub(super) line: u32,
}

/// The location state carried through the document.
#[derive(Default)]
pub(super) struct State {
    pub(super) files: HashMap<String, u32>,
    pub(super) file: Option<u32>,
    pub(super) line: u32,
    pub(super) main_name: String,
    /// The main file's id once it has been seen.
    pub(super) main: Option<u32>,
    /// Typedef name -> its type, desugared at the top.
    pub(super) typedefs: HashMap<String, String>,
    /// Struct tag -> its definition.
    pub(super) records: HashMap<String, Record>,
}

impl State {
    pub(super) fn set_file(&mut self, name: String) {
        let next = self.files.len() as u32;
        let is_main = name == self.main_name;
        let id = *self.files.entry(name).or_insert(next);
        if is_main {
            self.main = Some(id);
        }
        self.file = Some(id);
    }

    pub(super) fn current(&self) -> Option<Loc> {
        self.file.map(|file| Loc { file, line: self.line })
    }
}

/// A kept AST node.
#[derive(Debug, Default)]
pub(super) struct Node {
    pub(super) kind: String,
    pub(super) name: Option<String>,
    pub(super) loc: Option<Loc>,
    pub(super) begin: Option<Loc>,
    pub(super) end: Option<Loc>,
    /// `qualType`, `desugaredQualType`.
    pub(super) ty: Option<(String, Option<String>)>,
    pub(super) storage: Option<String>,
    /// `tagUsed` of a `RecordDecl` (`struct`, `union`).
    pub(super) tag: Option<String>,
    /// `completeDefinition` of a `RecordDecl`.
    pub(super) complete: bool,
    /// `isBitfield` of a `FieldDecl`.
    pub(super) bitfield: bool,
    pub(super) inner: Vec<Node>,
}

/// Node kinds the oracle needs.
pub(super) const KEPT: [&str; 7] = [
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
    pub(super) fn lines_in(&self, main: u32) -> Option<(u32, u32)> {
        match (self.begin, self.end) {
            (Some(b), Some(e)) if b.file == main && e.file == main => Some((b.line, e.line)),
            _ => None,
        }
    }

    /// The variable a named `ParmVarDecl`/`VarDecl` declares.
    pub(super) fn variable(&self, parameter: bool, types: &TypeTables) -> Option<ScopedVariable> {
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
pub(super) enum Key {
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
pub(super) struct Any<'a>(pub(super) &'a mut State);

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
pub(super) struct LocSeed<'a>(pub(super) &'a mut State);

impl<'de> DeserializeSeed<'de> for LocSeed<'_> {
    type Value = Option<Loc>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Loc>, D::Error> {
        let valid = Any(&mut *self.0).deserialize(d)?;
        Ok(if valid { self.0.current() } else { None })
    }
}

/// A `range` value: `{begin, end}`.
pub(super) struct RangeSeed<'a>(pub(super) &'a mut State);

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
pub(super) struct TypeSeed;

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
pub(super) struct NodeSeed<'a>(pub(super) &'a mut State);

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
pub(super) struct InnerSeed<'a>(pub(super) &'a mut State);

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
