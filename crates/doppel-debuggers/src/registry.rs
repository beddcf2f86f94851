//! The registered backends: one line each.

use crate::{BackendError, Debugger, DebuggerConfig};
use doppel_core::ToolInfo;

/// A registered backend.
pub struct BackendEntry {
    /// Name on the command line (`gdb`, `lldb`).
    pub name: &'static str,
    /// Languages it debugs.
    pub languages: &'static [doppel_core::Language],
    /// Finds the executable and its version without starting a session.
    /// Errors: [`BackendError::NotInstalled`] with an install hint.
    pub probe: fn(&DebuggerConfig) -> Result<ToolInfo, BackendError>,
    /// Creates the backend (the debugger process starts on the first `load`).
    pub create: fn(&DebuggerConfig) -> Result<Box<dyn Debugger>, BackendError>,
}

/// All backends, in the order `doppel backends` lists them.
pub fn all() -> Vec<BackendEntry> {
    vec![
        crate::backend::gdb::entry(),
        crate::backend::lldb::entry(),
        crate::backend::node::entry(),
        crate::backend::chromium::entry(),
        crate::backend::firefox::entry(),
    ]
}

/// The language every one of `debuggers` debugs (the first they share).
///
/// Errors: an unknown debugger, or debuggers of different languages.
pub fn language_of(debuggers: &[String]) -> anyhow::Result<doppel_core::Language> {
    let entries = all();
    let mut common: Option<Vec<doppel_core::Language>> = None;
    for name in debuggers {
        let e = entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| anyhow::anyhow!("unknown debugger '{name}' (see `doppel backends`)"))?;
        common = Some(match common {
            None => e.languages.to_vec(),
            Some(c) => c.into_iter().filter(|l| e.languages.contains(l)).collect(),
        });
    }
    common
        .and_then(|c| c.first().copied())
        .ok_or_else(|| anyhow::anyhow!("debuggers {} share no language", debuggers.join(",")))
}

/// Creates the backend called `name`.
///
/// Errors: [`BackendError::Unknown`] for an unregistered name,
/// [`BackendError::NotInstalled`] when its executable is missing.
pub fn create(name: &str, config: &DebuggerConfig) -> Result<Box<dyn Debugger>, BackendError> {
    let entries = all();
    match entries.iter().find(|e| e.name == name) {
        Some(e) => (e.create)(config),
        None => Err(BackendError::Unknown(
            name.to_string(),
            entries.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
        )),
    }
}
