//! What a differential run stores in its record's `config`: the campaign's
//! knobs and debuggers, and the input to run it again. The campaign writes
//! it, and replay, reproducers, reclassification and reports read it, all
//! through [`DiffRecord`]. The evidence is the run's traces, one per
//! debugger (`RunRecord::traces`).

use crate::campaign::{CampaignSpec, Prepared};
use crate::config::DiffConfig;
use doppel_core::RunRecord;
use doppel_debuggers::record::{DebuggerInput, StoredScripts};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A differential run's configuration, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DiffRecord {
    /// The compared backends, in trace order.
    pub debuggers: Vec<String>,
    /// Algorithm 1's knobs.
    pub diff: DiffConfig,
    /// Executable per debugger name, overriding discovery.
    #[serde(default)]
    pub executables: BTreeMap<String, String>,
    /// Program text, scripts and backend settings.
    #[serde(flatten)]
    pub input: DebuggerInput,
    /// The finding's reduced case (`doppel reduce`, `--reduce`); absent in
    /// runs not reduced and in records written before reduction existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced: Option<crate::reduce::ReducedCase>,
}

impl DiffRecord {
    /// The record of a run of `spec` on `prepared`: enough to replay it. For
    /// JavaScript it includes the prelude and epilogue scripts, so a replay
    /// does not depend on the cache or the corpus it came from.
    pub fn new(spec: &CampaignSpec, prepared: &Prepared) -> Self {
        let s = &prepared.subject;
        let scripts = StoredScripts::read(&s.prelude, &s.epilogue);
        Self {
            debuggers: spec.debuggers.clone(),
            diff: spec.diff.clone(),
            executables: spec.executables.clone(),
            input: DebuggerInput {
                source_text: prepared.source_text.clone(),
                scripts: (!scripts.is_empty()).then_some(scripts),
                debugger: spec.debugger.clone(),
            },
            reduced: None,
        }
    }

    /// The record of a stored run.
    ///
    /// Errors: the run's configuration is not a differential record.
    /// A record without `diff.continue_past_policies` ran DBDB's stop at the
    /// first divergence (records written before the switch existed, and
    /// runs with it off, which leave it out of the serialized form), although
    /// a new campaign's default is on. The same for `diff.control_run`,
    /// `diff.realign_steps` and `diff.avoid_step_out_of_main`; a record
    /// without `diff.findings_per_run` ended at its first finding (1).
    pub fn of(run: &RunRecord) -> anyhow::Result<Self> {
        let mut rec: Self = serde_json::from_value(run.config.clone()).map_err(|e| {
            anyhow::anyhow!(
                "run {}: not a differential configuration: {e}",
                run.id.unwrap_or_default()
            )
        })?;
        rec.diff.continue_past_policies = run.config["diff"]["continue_past_policies"] == true;
        rec.diff.control_run = run.config["diff"]["control_run"] == true;
        rec.diff.realign_steps = run.config["diff"]["realign_steps"] == true;
        rec.diff.avoid_step_out_of_main = run.config["diff"]["avoid_step_out_of_main"] == true;
        rec.diff.findings_per_run = run.config["diff"]["findings_per_run"]
            .as_u64()
            .map_or(1, |n| n as usize);
        Ok(rec)
    }

    /// As stored in `RunRecord::config`.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The campaign spec the run was made with (one job, no resume).
    pub fn spec(&self, name: String) -> CampaignSpec {
        CampaignSpec {
            name,
            debuggers: self.debuggers.clone(),
            debugger: self.input.debugger.clone(),
            diff: self.diff.clone(),
            jobs: 1,
            resume: false,
            executables: self.executables.clone(),
            tools: Vec::new(),
        }
    }
}
