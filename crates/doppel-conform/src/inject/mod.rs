//! Assertion injection (JEST, ICSE 2021, §III-D): a program's final state in
//! engine262, the executable specification, turned into assertions.
//!
//! [`inspect`] runs the program in engine262 with an inspector in the same
//! realm (`inspector.js`, evaluated before the program; the worker calls it
//! after the program's script ends, before promise jobs run: the point where
//! assertions appended to the program run too). The final [`State`] holds
//! every global property the program created (in the global object's own-key
//! order) and every top-level `let`/`const`/`class` binding; for each value:
//! primitives exactly (as JavaScript source: `-0`, `NaN`, escaped strings,
//! `Symbol.for(...)`), objects by a bounded walk (property descriptors,
//! own-key order, prototype as a path to an intrinsic or an earlier object,
//! extensibility, callability, constructability). An uncaught exception is
//! kept as its constructor name.
//!
//! [`assertions`] turns a state into labelled assertions; `crate::test262`
//! writes them as a test262 test; [`campaign`] makes a generated program
//! the injected test `doppel conform` runs on the panel.

mod assertions;
pub mod campaign;
pub mod program;

pub use assertions::{Assertion, AssertionKind, assertions};
pub use program::{DeclarationKind, ProgramFacts};

use doppel_engines::engine::engine262::Engine262;
use doppel_engines::{Outcome, RunOptions};
use serde::{Deserialize, Serialize};

/// The inspector's source, with `LEXICAL_NAMES` and `LIMITS` placeholders.
const INSPECTOR: &str = include_str!("inspector.js");

/// Bounds of the object walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Deepest object level walked (a binding's value is level 0).
    pub depth: u32,
    /// Properties described per object.
    pub keys: u32,
    /// Objects described in all.
    pub objects: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            depth: 3,
            keys: 32,
            objects: 64,
        }
    }
}

/// A value in the final state. Primitives and intrinsics carry `src`, a
/// JavaScript expression giving the same value (for an intrinsic: its path,
/// such as `Array.prototype`); a walked object carries `id`, its index in
/// [`State::objects`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Value {
    /// `undefined`, `null`, `boolean`, `number`, `bigint`, `string`,
    /// `symbol`, `intrinsic` or `object`.
    pub t: String,
    /// The expression giving this value, when there is one (a unique symbol has none).
    #[serde(default)]
    pub src: Option<String>,
    /// A walked object's index in [`State::objects`]; `None` for an object past the walk's bounds.
    #[serde(default)]
    pub id: Option<usize>,
    /// A symbol's description as a string literal (`None`: undefined).
    #[serde(default)]
    pub description: Option<String>,
}

/// One own property (ECMA-262 §6.1.7.1): a data or an accessor property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Property {
    /// The key as source (a string literal or a symbol expression).
    pub key: Option<String>,
    /// An expression reading the property (`o.a`, `this["a b"]`).
    pub path: String,
    /// \[\[Enumerable\]\].
    pub enumerable: bool,
    /// \[\[Configurable\]\].
    pub configurable: bool,
    /// \[\[Writable\]\] (data properties).
    #[serde(default)]
    pub writable: Option<bool>,
    /// \[\[Value\]\] (data properties).
    #[serde(default)]
    pub value: Option<Value>,
    /// \[\[Get\]\]: `function` or `undefined` (accessor properties).
    #[serde(default)]
    pub get: Option<String>,
    /// \[\[Set\]\]: `function` or `undefined` (accessor properties).
    #[serde(default)]
    pub set: Option<String>,
}

/// A top-level lexical binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lexical {
    /// The binding's name.
    pub name: String,
    /// Still in its temporal dead zone (the program threw before initializing it).
    #[serde(default)]
    pub uninitialized: bool,
    /// Its value (initialized bindings).
    #[serde(default)]
    pub value: Option<Value>,
}

/// A walked object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Object {
    /// The expression the walk first reached it by.
    pub path: String,
    /// Has \[\[Call\]\].
    pub callable: bool,
    /// Has \[\[Construct\]\].
    pub constructor: bool,
    /// \[\[IsExtensible\]\].
    pub extensible: bool,
    /// \[\[GetPrototypeOf\]\]: `null`, an intrinsic, or another walked object.
    pub proto: Value,
    /// `Reflect.ownKeys` order, as key sources (`None`: a unique symbol).
    pub keys: Vec<Option<String>>,
    /// Own properties described (at most [`Limits::keys`]).
    pub props: Vec<Property>,
    /// Keys left out (limit reached, or unique symbols).
    pub truncated: bool,
    /// Has \[\[ErrorData\]\] (an error instance): engines add own properties
    /// of their own to these (`stack`, `line`, `fileName`, ...; ECMA-262 17
    /// allows additional properties), so its key order is asserted among
    /// engine262's keys only.
    #[serde(default)]
    pub error: bool,
}

/// A program's final state in engine262.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Whether the program's script threw.
    pub threw: bool,
    /// Global properties the program created, in the global object's key order.
    pub globals: Vec<Property>,
    /// Top-level lexical bindings, in source order.
    pub lexicals: Vec<Lexical>,
    /// Walked objects (ids index this list).
    pub objects: Vec<Object>,
    /// Whether any bound was hit or any key could not be written as source.
    pub truncated: bool,
}

/// A program with its final state: what emission needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    /// The program's source.
    pub program: String,
    /// Its syntax facts.
    pub facts: ProgramFacts,
    /// How engine262 ended it: [`Outcome::Normal`] or [`Outcome::Exception`].
    pub outcome: Outcome,
    /// The state the inspector read.
    pub state: State,
}

/// Why a program's state could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    /// The program is not a valid Script.
    #[error("the program does not parse as a Script: {}", .0.join("; "))]
    Syntax(Vec<String>),
    /// engine262 did not end the program normally or with an exception.
    #[error("engine262 did not finish the program: {}", .0.label())]
    Run(Outcome),
    /// The inspector failed (its reason), or gave output that is not a state.
    #[error("the state inspector failed: {0}")]
    Inspector(String),
}

/// The inspector script for `facts` and `limits` (what
/// [`Engine262::run_inspected`] evaluates before the program).
pub fn inspector_source(facts: &ProgramFacts, limits: &Limits) -> String {
    let names = serde_json::to_string(&facts.lexical_names()).expect("strings serialize");
    let limits = serde_json::to_string(limits).expect("plain data serializes");
    INSPECTOR
        .replace("LEXICAL_NAMES, LIMITS", &format!("{names}, {limits}"))
        .to_string()
}

/// Runs `program` in engine262 and reads its final state.
///
/// Errors: [`InjectError::Syntax`] (checked with oxc before running),
/// [`InjectError::Run`] (timeout, host stack overflow, host error),
/// [`InjectError::Inspector`].
pub async fn inspect(
    engine: &mut Engine262,
    program: &str,
    limits: &Limits,
    opts: &RunOptions,
) -> Result<Injection, InjectError> {
    let facts = program::facts(program).map_err(InjectError::Syntax)?;
    let inspector = inspector_source(&facts, limits);
    let (result, inspection) = engine.run_inspected(program, &inspector, opts).await;
    if !matches!(result.outcome, Outcome::Normal | Outcome::Exception { .. }) {
        return Err(InjectError::Run(result.outcome));
    }
    let text = match inspection {
        Some(Ok(text)) => text,
        Some(Err(reason)) => return Err(InjectError::Inspector(reason)),
        None => return Err(InjectError::Inspector("the worker ran no inspector".into())),
    };
    let state: State = serde_json::from_str(&text)
        .map_err(|e| InjectError::Inspector(format!("not a state ({e}): {}", clip(&text))))?;
    Ok(Injection {
        program: program.to_string(),
        facts,
        outcome: result.outcome,
        state,
    })
}

fn clip(s: &str) -> String {
    s.chars().take(300).collect()
}
