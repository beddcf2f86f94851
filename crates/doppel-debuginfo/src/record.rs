//! What a debug-information record stores in its `config`, written by the
//! campaign and read by show and the report through these types. Three
//! kinds, tagged by `kind`: a finding (read through
//! [`crate::finding::StoredFinding`]), a session (one build in one
//! debugger, every pair's check: the evidence), a program (its preparation
//! and the matrix of its builds).

use crate::Reference;
use crate::check::PairVerdict;
use crate::config::DebuginfoConfig;
use crate::finding::StoredFinding;
use crate::program::Program;
use crate::toolchain::Compiler;
use doppel_core::RunRecord;
use serde::{Deserialize, Serialize};

/// A session: one build (compiler, level, plain or augmented) checked in
/// one debugger.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The campaign's settings.
    pub debuginfo: DebuginfoConfig,
    /// The program checked.
    pub program: Program,
    /// The compiler of the build.
    pub compiler: Compiler,
    /// Its optimization level (`O2`).
    pub level: String,
    /// The build command.
    pub recipe: String,
    /// Lines augmented with the barrier call (empty: the plain build).
    #[serde(default)]
    pub augmented: Vec<u32>,
    /// The debugger (a registered backend name).
    pub debugger_name: String,
    /// The -O0 references of the build's pairs.
    #[serde(default)]
    pub references: Vec<Reference>,
    /// Every pair's check, in the session's order.
    pub verdicts: Vec<PairVerdict>,
    /// How the session ended, for people.
    #[serde(default)]
    pub ending: String,
}

/// A program: its preparation (actionable pairs, references, rejections)
/// and one line per build of its matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProgramRecord {
    /// The campaign's settings.
    pub debuginfo: DebuginfoConfig,
    /// The program.
    pub program: Program,
    /// Its source text.
    pub source_text: String,
    /// The preparation's report (as `program::prepare` gives it).
    pub preparation: serde_json::Value,
    /// One entry per (compiler, level, debugger) build.
    #[serde(default)]
    pub matrix: Vec<serde_json::Value>,
}

/// The kind tag and its record, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Tagged {
    Session(SessionRecord),
    Program(ProgramRecord),
}

/// A stored debug-information record.
#[derive(Debug, Clone)]
pub enum DebuginfoRecord {
    /// A finding (a wrong value or a failed check).
    Finding(Box<StoredFinding>),
    /// A session's checks.
    Session(Box<SessionRecord>),
    /// A program's preparation and matrix.
    Program(Box<ProgramRecord>),
}

impl SessionRecord {
    /// As stored in `RunRecord::config` (with `kind: "session"`).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(Tagged::Session(self.clone())).unwrap_or_default()
    }
}

impl ProgramRecord {
    /// As stored in `RunRecord::config` (with `kind: "program"`).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(Tagged::Program(self.clone())).unwrap_or_default()
    }
}

impl DebuginfoRecord {
    /// Reads a stored record of any kind.
    ///
    /// Errors: the configuration is not a debug-information record of a
    /// known kind, or lacks a field.
    pub fn of(run: &RunRecord) -> anyhow::Result<Self> {
        if run.config["kind"] == "finding" {
            return StoredFinding::from_record(run)
                .map(|f| DebuginfoRecord::Finding(Box::new(f)))
                .map_err(anyhow::Error::msg);
        }
        let tagged: Tagged = serde_json::from_value(run.config.clone()).map_err(|e| {
            anyhow::anyhow!(
                "run {}: not a debug-information record: {e}",
                run.id.unwrap_or_default()
            )
        })?;
        Ok(match tagged {
            Tagged::Session(s) => DebuginfoRecord::Session(Box::new(s)),
            Tagged::Program(p) => DebuginfoRecord::Program(Box::new(p)),
        })
    }
}
