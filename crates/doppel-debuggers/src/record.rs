//! The part of a debugger technique's stored run that replays and
//! reproducers read: the program's text, the JavaScript prelude and
//! epilogue scripts, and the backend settings. Differential and metamorphic
//! records both carry it (flattened into their own record types), so the
//! reproducer writers read one type whichever technique stored the run.

use crate::DebuggerConfig;
use doppel_core::RunRecord;
use serde::{Deserialize, Serialize};

/// A script stored with a run: its file name as the run saw it (the
/// cache's `<i>-<name>`) and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredScript {
    /// File name.
    pub name: String,
    /// Contents.
    pub text: String,
}

/// The scripts run around a JavaScript subject, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredScripts {
    /// Run before the source.
    #[serde(default)]
    pub prelude: Vec<StoredScript>,
    /// Run after the source.
    #[serde(default)]
    pub epilogue: Vec<StoredScript>,
}

impl StoredScripts {
    /// The scripts of `paths` as stored (file name and text; an unreadable
    /// file stores an empty text).
    pub fn read(prelude: &[std::path::PathBuf], epilogue: &[std::path::PathBuf]) -> Self {
        let read = |paths: &[std::path::PathBuf]| {
            paths
                .iter()
                .map(|p| StoredScript {
                    name: p
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    text: std::fs::read_to_string(p).unwrap_or_default(),
                })
                .collect()
        };
        Self {
            prelude: read(prelude),
            epilogue: read(epilogue),
        }
    }

    /// Whether there are no scripts.
    pub fn is_empty(&self) -> bool {
        self.prelude.is_empty() && self.epilogue.is_empty()
    }
}

/// What a debugger run needs to be run again (stored in the run's `config`
/// by differential and metamorphic testing).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DebuggerInput {
    /// The program's source text.
    pub source_text: String,
    /// The JavaScript prelude and epilogue (absent for C).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scripts: Option<StoredScripts>,
    /// The backend settings the run used (defaults when a record lacks
    /// them: no separate debug info of system libraries).
    #[serde(default)]
    pub debugger: DebuggerConfig,
}

impl DebuggerInput {
    /// Reads the input part of a stored run's configuration.
    ///
    /// Errors: the configuration lacks the source text or the debugger
    /// settings (a record of another technique).
    pub fn of(run: &RunRecord) -> Result<Self, String> {
        serde_json::from_value(run.config.clone())
            .map_err(|e| format!("run {}: stored configuration: {e}", run.id.unwrap_or_default()))
    }
}
