//! What a debug-information record stores in its `config`, written by the
//! campaign and read by show and the report through these types. Three
//! kinds, tagged by `kind`: a finding (read through
//! [`crate::finding::StoredFinding`]), a session (one build in one
//! debugger, every pair's check: the evidence), a program (its preparation
//! and the matrix of its builds).

use crate::Reference;
use crate::bisect::Culprit;
use crate::check::PairVerdict;
use crate::config::DebuginfoConfig;
use crate::finding::{OtherCheck, ReducedText, StoredFinding};
use crate::program::Program;
use crate::toolchain::Compiler;
use crate::triage::Suspect;
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

/// A finding: one wrong value (or failed check) of one (line, variable)
/// pair in one build and one debugger, with what triage learned about it.
/// Written by [`crate::campaign::finding_record`], read through
/// [`StoredFinding::from_record`]; `doppel debuginfo bisect` and `reduce`
/// fill [`FindingRecord::culprit`] and [`FindingRecord::reduced`] later.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindingRecord {
    /// The campaign's settings.
    pub debuginfo: DebuginfoConfig,
    /// The program checked.
    pub program: Program,
    /// Its source text as generated or read.
    pub source_text: String,
    /// The line-augmented text that was checked, for an augmented build
    /// (`null` for a plain build, and in records written before it existed).
    #[serde(default)]
    pub augmented_text: Option<String>,
    /// The compiler of the build.
    pub compiler: Compiler,
    /// Its optimization level without the dash (`O2`).
    pub level: String,
    /// The build command, for people and reproducers.
    #[serde(default)]
    pub recipe: String,
    /// Lines augmented with the barrier call, in build order (empty: the
    /// plain build).
    #[serde(default)]
    pub augmented: Vec<u32>,
    /// The debugger that showed the wrong value (a registered backend name).
    pub debugger_name: String,
    /// The pair and its -O0 reference value.
    pub reference: Reference,
    /// This debugger's check of the pair.
    pub verdict: PairVerdict,
    /// The other debuggers' checks of the same pair on the same binary.
    #[serde(default)]
    pub others: Vec<OtherCheck>,
    /// Who the wrong value points at, from the other debuggers' checks
    /// (`null` in records that lack it).
    #[serde(default)]
    pub suspect: Option<Suspect>,
    /// The bisected culprit (optimization pass or flag), when bisected.
    #[serde(default)]
    pub culprit: Option<Culprit>,
    /// The C-Vise reduction, once `doppel debuginfo reduce` ran (absent
    /// before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced: Option<ReducedText>,
    /// What the DWARF says at the pause address (absent in records written
    /// before it existed, and when the binary could not be read): the input
    /// of root-cause deduplication (issue 17, part 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dwarf: Option<DwarfSituation>,
}

/// The DWARF situation of a wrong value at the address the debugger paused
/// at: the variable's location description (`.debug_loclists` /
/// `.debug_loc` / `DW_AT_location`, DWARF 5 section 2.6) and the line
/// table's rows there (`.debug_line`, DWARF 5 section 6.2). Two findings
/// with the same situation, compiler and debugger very likely share one
/// root cause, whatever their program, line or level.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DwarfSituation {
    /// The location description's operators with constants abstracted to
    /// `K`, joined by `; ` (`DW_OP_fbreg K`, `DW_OP_addr K; DW_OP_stack_value`,
    /// `DW_OP_reg6`, `DW_OP_lit0; DW_OP_stack_value`), `<no location>` when no
    /// range covers the address, `<unknown>` when it could not be read.
    pub location_pattern: String,
    /// The line-table situation of the pause address, facts joined by `+`
    /// in a fixed order (`is_stmt`, `no_is_stmt`, `view_nonzero`,
    /// `for_increment`, `for_condition`, `after_body`, ...): as written by
    /// [`crate::accuracy::LineFacts::situation`], `is_stmt` / `no_is_stmt` /
    /// `no_row` first, then `view_nonzero`, `for_increment` /
    /// `for_condition`, `after_body`, `location_view`.
    pub line_situation: String,
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
    Finding(Box<FindingRecord>),
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

impl FindingRecord {
    /// As stored in `RunRecord::config` (with `kind: "finding"`).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(Tagged::Finding(Box::new(self.clone()))).unwrap_or_default()
    }

    /// Reads the finding stored in `config`.
    ///
    /// Errors: `config` is not a finding (another kind, or a field missing
    /// or of the wrong type), with serde's message.
    pub fn from_value(config: &serde_json::Value) -> Result<FindingRecord, String> {
        match serde_json::from_value(config.clone()) {
            Ok(Tagged::Finding(f)) => Ok(*f),
            Ok(_) => Err(format!("not a finding (kind {})", config["kind"])),
            Err(e) => Err(format!("not a readable finding: {e}")),
        }
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
        let tagged: Tagged = serde_json::from_value(run.config.clone()).map_err(|e| {
            anyhow::anyhow!(
                "run {}: not a debug-information record: {e}",
                run.id.unwrap_or_default()
            )
        })?;
        Ok(match tagged {
            Tagged::Finding(f) => DebuginfoRecord::Finding(Box::new(StoredFinding::new(run, *f))),
            Tagged::Session(s) => DebuginfoRecord::Session(Box::new(s)),
            Tagged::Program(p) => DebuginfoRecord::Program(Box::new(p)),
        })
    }
}
