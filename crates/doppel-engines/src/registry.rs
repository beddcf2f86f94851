//! The registered engines: one line each. A new engine is one file in
//! `engine/` plus one line in [`all`].

use crate::{Engine, EngineError, EnginesConfig, Family};

/// A registered engine build.
pub struct EngineEntry {
    /// Name on the command line (`jsc`, `v8-mini-racer`).
    pub name: &'static str,
    /// Family it votes with.
    pub family: Family,
    /// What it is and how it is installed, for `doppel engines`.
    pub about: &'static str,
    /// What its host can and cannot observe (for the verdict layer).
    pub traits: HostTraits,
    /// Finds the installed engine and its version without starting it.
    /// Errors: [`EngineError::NotInstalled`] saying what is missing and how to install it.
    pub probe: fn(&EnginesConfig) -> Result<String, EngineError>,
    /// Creates the engine (processes start on the first run).
    pub create: fn(&EnginesConfig) -> Result<Box<dyn Engine>, EngineError>,
}

/// What an engine's host can observe, so that verdicts compare only what
/// every side really measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostTraits {
    /// The thrown value's constructor is read inside the engine; otherwise it
    /// is the error's `name` parsed from the engine's message (a subclass
    /// without its own `name` reads as its base, primitives may be unknown).
    pub exact_constructor: bool,
    /// The global object behaves as the spec says for user declarations
    /// (descriptors, key order); node's `vm` contexts do not (notes §5.2).
    pub conformant_global: bool,
    /// Promise jobs run after the script (boabem never runs them).
    pub runs_promise_jobs: bool,
    /// The host defined a global `$` (an alias of `$262`) and removed it
    /// before the program, and the removal leaves a trace: in JSC 2.50's
    /// shell realms a global `$` the program then declares is enumerable by
    /// its descriptor but missed by `for-in` (test262's `verifyProperty`
    /// reads enumerability with `for-in`), unlike any other global name.
    /// Descriptor and key-order assertions on a global `$` give no verdict.
    #[serde(default)]
    pub dollar_removed: bool,
}

impl HostTraits {
    /// A host that observes everything.
    pub const EXACT: HostTraits = HostTraits {
        exact_constructor: true,
        conformant_global: true,
        runs_promise_jobs: true,
        dollar_removed: false,
    };
    /// A host that sees the thrown value only as the engine's message text.
    pub const MESSAGE_ONLY: HostTraits = HostTraits {
        exact_constructor: false,
        ..HostTraits::EXACT
    };
}

/// The registry entry called `name`, if any.
pub fn entry(name: &str) -> Option<EngineEntry> {
    all().into_iter().find(|e| e.name == name)
}

/// All engines, in the order `doppel engines` lists them.
pub fn all() -> Vec<EngineEntry> {
    vec![
        crate::engine::engine262::entry(),
        crate::engine::v8_mini_racer::entry(),
        crate::engine::node_vm::entry(),
        crate::engine::jsc::entry(),
        crate::engine::sm_pythonmonkey::entry(),
        crate::engine::js102::entry(),
        crate::engine::quickjs::entry(),
        crate::engine::quickjs_ng::entry(),
        crate::engine::boa::entry(),
        crate::engine::hermes::entry(),
        crate::engine::duktape::entry(),
        crate::engine::njs::entry(),
        crate::engine::mujs::entry(),
        crate::engine::rhino::entry(),
        crate::engine::babel::entry(),
        crate::engine::swc::entry(),
        crate::engine::esbuild::entry(),
        crate::engine::typescript::entry(),
    ]
}

/// Creates the engine called `name`.
///
/// Errors: [`EngineError::Unknown`] for an unregistered name,
/// [`EngineError::NotInstalled`] when it is missing.
pub fn create(name: &str, config: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let entries = all();
    match entries.iter().find(|e| e.name == name) {
        Some(e) => (e.create)(config),
        None => Err(EngineError::Unknown(
            name.to_string(),
            entries.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
        )),
    }
}
