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
    /// Finds the installed engine and its version without starting it.
    /// Errors: [`EngineError::NotInstalled`] saying what is missing and how to install it.
    pub probe: fn(&EnginesConfig) -> Result<String, EngineError>,
    /// Creates the engine (processes start on the first run).
    pub create: fn(&EnginesConfig) -> Result<Box<dyn Engine>, EngineError>,
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
