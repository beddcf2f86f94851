//! A subject: one program under test, ready for a tool (for C: compiled).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The language of a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// C (compiled with gcc or clang, debugged with GDB, LLDB).
    C,
    /// JavaScript (run by Node.js, Chromium or Firefox under their debuggers).
    JavaScript,
    /// Rust (`doppel debuginfo` only: PLDI'20 section 6.1); the
    /// differential and metamorphic techniques reject it.
    Rust,
}

/// A program ready to be debugged.
///
/// `source` is the absolute path of the file the binary was compiled from;
/// backends set breakpoints by that path and map the paths the debugger
/// reports back to `source_name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    /// Stable identifier: the file name, or a path relative to the corpus root.
    pub name: String,
    /// Its language.
    pub language: Language,
    /// Absolute path of the source file as compiled.
    pub source: PathBuf,
    /// Name used for the file in [`crate::model::Location`]s (the file name).
    pub source_name: String,
    /// Number of lines in the source file.
    pub line_count: u32,
    /// The executable (C) to run under the debugger, if the language needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<PathBuf>,
    /// Scripts run in the same global scope before `source` (JavaScript: the
    /// determinism prelude, test262's harness files), each as a classic script
    /// of its own, so `source` keeps its own line numbers and traces speak of
    /// them. Empty for C.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prelude: Vec<PathBuf>,
    /// Scripts run in the same global scope after `source` (JavaScript: the
    /// `run();` call that starts a SunSpider program). Empty for C.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub epilogue: Vec<PathBuf>,
    /// Content hash of source and build recipe (hex SHA-256).
    pub hash: String,
    /// The build recipe (`gcc -O0 -g`), for reports and reproducers.
    pub build: String,
}
