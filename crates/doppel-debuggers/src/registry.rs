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
