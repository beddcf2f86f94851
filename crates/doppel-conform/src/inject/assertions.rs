//! A final [`State`] as labelled assertions in test262's harness vocabulary
//! (`assert.sameValue`, `assert.compareArray` of assert.js, `verifyProperty`
//! of propertyHelper.js).
//!
//! Order: first everything that reads without changing (values, then per
//! object its property values, prototype, extensibility, callability and
//! constructability; then key orders, which engines disagree on most often,
//! since a test stops at its first failed assertion), then the
//! property descriptors, because `verifyProperty` checks writability and
//! configurability by writing and deleting (it restores the property with
//! `restore: true`, but a deleted and redefined property moves to the end of
//! its object's key order).
//!
//! Each assertion's message starts with its marker `[doppel#<index> <kind>]`,
//! so a failing run names the assertion (see `crate::test262::failed_assertion`).

use super::{Injection, Object, Property, State, Value};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What an assertion checks; failures are grouped by it (JEST §III-E).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AssertionKind {
    /// A binding's or property's value (SameValue, so `-0` and `NaN` exactly).
    Value,
    /// A property descriptor (value, writable, enumerable, configurable, get/set presence).
    Descriptor,
    /// Own-key order (`Object.getOwnPropertyNames` / `Reflect.ownKeys`).
    KeyOrder,
    /// \[\[GetPrototypeOf\]\].
    Prototype,
    /// \[\[IsExtensible\]\].
    Extensibility,
    /// Callability (`typeof` is `function`).
    Callability,
    /// Constructability (has \[\[Construct\]\]).
    Constructability,
    /// The uncaught exception's constructor (test262 `negative:`).
    Exception,
}

impl AssertionKind {
    /// Every kind.
    pub const ALL: [AssertionKind; 8] = [
        Self::Value,
        Self::Descriptor,
        Self::KeyOrder,
        Self::Prototype,
        Self::Extensibility,
        Self::Callability,
        Self::Constructability,
        Self::Exception,
    ];

    /// The label in markers and reports: `value`, `key-order`, ...
    pub fn label(self) -> &'static str {
        match self {
            Self::Value => "value",
            Self::Descriptor => "descriptor",
            Self::KeyOrder => "key-order",
            Self::Prototype => "prototype",
            Self::Extensibility => "extensibility",
            Self::Callability => "callability",
            Self::Constructability => "constructability",
            Self::Exception => "exception",
        }
    }

    /// The kind with this label.
    pub fn from_label(label: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.label() == label)
    }
}

impl fmt::Display for AssertionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One injected assertion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assertion {
    /// Its index in the test (0-based; the marker's number).
    pub index: usize,
    /// What it checks.
    pub kind: AssertionKind,
    /// The expression it is about (`x`, `o.a`, `this`: the global object at a Script's top level).
    pub subject: String,
    /// The JavaScript statement (empty for [`AssertionKind::Exception`],
    /// which is the test's `negative:` front matter, not code).
    pub code: String,
    /// test262 feature tags the statement itself needs (`Reflect`, `Symbol`).
    pub features: Vec<String>,
}

/// The marker an assertion's message starts with: `[doppel#3 key-order]`.
pub fn marker(index: usize, kind: AssertionKind) -> String {
    format!("[doppel#{index} {}]", kind.label())
}

/// `s` as an ASCII JavaScript string literal.
pub fn js_string(s: &str) -> String {
    let mut out = String::from("\"");
    let mut buf = [0u16; 2];
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            _ => {
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

struct Builder<'a> {
    state: &'a State,
    out: Vec<Assertion>,
}

impl Builder<'_> {
    fn push(&mut self, kind: AssertionKind, subject: &str, features: &[&str], code: impl FnOnce(&str) -> String) {
        let index = self.out.len();
        let message = js_string(&format!("{} {subject}", marker(index, kind)));
        self.out.push(Assertion {
            index,
            kind,
            subject: subject.to_string(),
            code: code(&message),
            features: features.iter().map(|f| f.to_string()).collect(),
        });
    }

    /// The expression for a value, if one exists: a primitive's or
    /// intrinsic's source, or an earlier-walked object's path.
    fn expr(&self, v: &Value) -> Option<String> {
        if v.t == "object" {
            return v.id.and_then(|id| self.state.objects.get(id)).map(|o| o.path.clone());
        }
        v.src.clone()
    }

    /// Value assertion for `path` holding `v` (none when `path` is where the
    /// walk first reached the object: its own assertions describe it).
    fn value(&mut self, path: &str, v: &Value) {
        match (v.t.as_str(), self.expr(v)) {
            ("object", Some(first)) if first == path => {}
            ("symbol", None) => self.push(AssertionKind::Value, path, &["Symbol"], |m| {
                format!("assert.sameValue(typeof {path}, \"symbol\", {m});")
            }),
            (t, Some(e)) => {
                let features: &[&str] = match t {
                    "symbol" => &["Symbol"],
                    "bigint" => &["BigInt"],
                    _ => &[],
                };
                self.push(AssertionKind::Value, path, features, |m| {
                    format!("assert.sameValue({path}, {e}, {m});")
                })
            }
            _ => {}
        }
    }

    fn object(&mut self, o: &Object) {
        let p = &o.path;
        let proto_path = format!("Object.getPrototypeOf({p})");
        match (o.proto.t.as_str(), self.expr(&o.proto)) {
            ("object", Some(e)) if e == proto_path => {}
            (_, Some(e)) => self.push(AssertionKind::Prototype, p, &[], |m| {
                format!("assert.sameValue({proto_path}, {e}, {m});")
            }),
            _ => {}
        }
        self.push(AssertionKind::Extensibility, p, &[], |m| {
            format!("assert.sameValue(Object.isExtensible({p}), {}, {m});", o.extensible)
        });
        for prop in &o.props {
            if let Some(v) = &prop.value {
                self.value(&prop.path, v);
            }
        }
        let ty = if o.callable { "function" } else { "object" };
        self.push(AssertionKind::Callability, p, &[], |m| {
            format!("assert.sameValue(typeof {p}, \"{ty}\", {m});")
        });
        if o.callable {
            // Without Reflect.construct (ES5 engines) [[Construct]] cannot be
            // observed without calling the function: there the check holds
            // vacuously, so the rest of the test still runs.
            let c = o.constructor;
            self.push(AssertionKind::Constructability, p, &[], |m| {
                format!(
                    "assert.sameValue(typeof Reflect !== \"object\" || typeof Reflect.construct !== \"function\" ? {c} : \
                     function (f) {{ try {{ Reflect.construct(function () {{}}, [], f); return true; }} \
                     catch (e) {{ return false; }} }}({p}), {c}, {m});"
                )
            });
        }
    }

    /// The key-order assertion of a walked object. For an error instance
    /// only the order of engine262's keys among the engine's is asserted:
    /// engines add their own (`stack`, `fileName`, `line`), which ECMA-262 17
    /// allows, and every engine failed `AggregateError('1', 2 ** 32)`'s keys.
    fn key_order(&mut self, o: &Object) {
        let p = &o.path;
        if let Some(keys) = o.keys.iter().cloned().collect::<Option<Vec<String>>>() {
            let symbols = keys.iter().any(|k| !k.starts_with('"'));
            let list = keys.join(", ");
            let own = if symbols {
                format!("Reflect.ownKeys({p})")
            } else {
                format!("Object.getOwnPropertyNames({p})")
            };
            let actual = if o.error {
                format!("{own}.filter(function (k) {{ return [{list}].indexOf(k) >= 0; }})")
            } else {
                own
            };
            let features: &[&str] = if symbols { &["Reflect", "Symbol"] } else { &[] };
            self.push(AssertionKind::KeyOrder, p, features, |m| {
                format!("assert.compareArray({actual}, [{list}], {m});")
            });
        }
    }

    /// Descriptor assertions for `prop` of `owner` (`extensible`: the owner's
    /// extensibility; `verifyProperty` cannot restore a deleted property of a
    /// non-extensible object, so there configurability is read instead).
    fn descriptor(&mut self, owner: &str, extensible: bool, prop: &Property) {
        let Some(key) = &prop.key else { return };
        let mut fields = Vec::new();
        if let Some(v) = &prop.value
            && let Some(e) = self.expr(v)
        {
            fields.push(format!("value: {e}"));
        }
        if let Some(w) = prop.writable {
            fields.push(format!("writable: {w}"));
        }
        fields.push(format!("enumerable: {}", prop.enumerable));
        let read_configurable = prop.configurable && !extensible;
        if !read_configurable {
            fields.push(format!("configurable: {}", prop.configurable));
        }
        let subject = prop.path.clone();
        self.push(AssertionKind::Descriptor, &subject, &[], |m| {
            format!(
                "verifyProperty({owner}, {key}, {{ {} }}, {{ restore: true, label: {m} }});",
                fields.join(", ")
            )
        });
        if read_configurable {
            self.push(AssertionKind::Descriptor, &subject, &[], |m| {
                format!("assert.sameValue(Object.getOwnPropertyDescriptor({owner}, {key}).configurable, true, {m});")
            });
        }
        for (field, presence) in [("get", &prop.get), ("set", &prop.set)] {
            if let Some(t) = presence {
                self.push(AssertionKind::Descriptor, &subject, &[], |m| {
                    format!("assert.sameValue(typeof Object.getOwnPropertyDescriptor({owner}, {key}).{field}, \"{t}\", {m});")
                });
            }
        }
    }
}

/// The assertions for an injection. A program that threw gets one
/// [`AssertionKind::Exception`] assertion (the test is `negative:`; nothing
/// after the throw runs); otherwise: each global's and lexical binding's
/// value, each walked object's property values, prototype, extensibility,
/// callability and constructability, then the key orders (objects, then the
/// global properties it created), then every descriptor.
pub fn assertions(inj: &Injection) -> Vec<Assertion> {
    let state = &inj.state;
    let mut b = Builder { state, out: Vec::new() };
    if let doppel_engines::Outcome::Exception { constructor, .. } = &inj.outcome {
        let subject = constructor.clone().unwrap_or_else(|| "?".into());
        b.push(AssertionKind::Exception, &subject, &[], |_| String::new());
        return b.out;
    }
    for g in &state.globals {
        if let Some(v) = &g.value {
            b.value(&g.path, v);
        }
    }
    for l in &state.lexicals {
        if let Some(v) = &l.value {
            b.value(&l.name, v);
        }
    }
    for o in &state.objects {
        b.object(o);
    }
    // Key orders after values and shapes: engines disagree on them often
    // (global declaration order, class keys) and a test stops at its first
    // failed assertion.
    for o in &state.objects {
        b.key_order(o);
    }
    let global_keys: Vec<&String> = state.globals.iter().filter_map(|g| g.key.as_ref()).collect();
    if global_keys.len() >= 2 {
        let list = global_keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ");
        let symbols = global_keys.iter().any(|k| !k.starts_with('"'));
        let (all, features): (&str, &[&str]) = if symbols {
            ("Reflect.ownKeys", &["Reflect", "Symbol"])
        } else {
            ("Object.getOwnPropertyNames", &[])
        };
        b.push(AssertionKind::KeyOrder, "this", features, |m| {
            format!(
                "assert.compareArray({all}(this).filter(function (k) {{ return [{list}].indexOf(k) !== -1; }}), \
                 [{list}], {m});"
            )
        });
    }
    for g in &state.globals {
        b.descriptor("this", true, g);
    }
    for o in &state.objects {
        for prop in &o.props {
            b.descriptor(&o.path, o.extensible, prop);
        }
    }
    b.out
}
