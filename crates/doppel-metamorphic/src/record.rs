//! What a metamorphic test stores in its record's `config`, written by the
//! campaign and read by show, replay and reproducers through one type. The
//! evidence is the traces: the initial run's and, when a follow-up ran, the
//! follow-up's (`RunRecord::traces`, in that order).

use crate::config::MetaConfig;
use crate::round::Applied;
use crate::transformation::Transformation;
use doppel_core::{RunRecord, Subject};
use doppel_debuggers::record::DebuggerInput;
use serde::{Deserialize, Serialize};

/// A transformation that was tried first and did not apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Its kind.
    pub transformation: Transformation,
    /// Why it did not apply.
    pub reason: String,
}

/// The follow-up program of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FollowUpProgram {
    /// The subject as built.
    pub subject: Subject,
    /// Its source text.
    pub source_text: String,
}

/// A metamorphic test's configuration and inputs, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetaRecord {
    /// The campaign's knobs.
    pub meta: MetaConfig,
    /// The debugger under test (a registered backend name).
    pub debugger_name: String,
    /// 1-based round of the test in its sequence.
    pub round: usize,
    /// Transformations applied in the sequence so far, this test's last.
    #[serde(default)]
    pub chain: Vec<Transformation>,
    /// The transformation this test applied (`None`: none applied).
    #[serde(default)]
    pub transformation: Option<Applied>,
    /// Transformations tried first that did not apply.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// The follow-up program.
    pub follow_up: FollowUpProgram,
    /// The initial program's text, scripts and the backend settings.
    #[serde(flatten)]
    pub input: DebuggerInput,
    /// The test's reduced case (`doppel reduce`, `--reduce`): the reduced
    /// initial actions, the initial and follow-up traces of its run; absent
    /// in tests not reduced and in records written before reduction existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced: Option<doppel_differential::reduce::ReducedCase>,
    /// The follow-up program of the reduced case (the same transformation
    /// may choose another place on a shorter initial run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced_follow_up: Option<FollowUpProgram>,
}

impl MetaRecord {
    /// The record of a stored test.
    ///
    /// Errors: the run's configuration is not a metamorphic record.
    /// A record without `meta.control_run` ran without control runs
    /// (records written before the switch existed, and tests with it off,
    /// which leave it out of the serialized form), although a new
    /// campaign's default is on.
    pub fn of(run: &RunRecord) -> anyhow::Result<Self> {
        let mut rec: Self = serde_json::from_value(run.config.clone()).map_err(|e| {
            anyhow::anyhow!(
                "run {}: not a metamorphic configuration: {e}",
                run.id.unwrap_or_default()
            )
        })?;
        rec.meta.control_run = run.config["meta"]["control_run"] == true;
        Ok(rec)
    }

    /// As stored in `RunRecord::config`.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
