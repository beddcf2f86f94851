//! The record of one run, as the store keeps it and reports show it.

use crate::model::{Action, ToolInfo, Trace, Verdict};
use crate::subject::Subject;
use serde::{Deserialize, Serialize};

/// One finished run of a technique on one subject with one seed.
///
/// `key` identifies the run's inputs (technique, configuration fingerprint,
/// subject hash, seed, debuggers): a campaign started with `--resume` skips
/// every key already in the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Database id; `None` until stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// Unique key of the run's inputs (see above).
    pub key: String,
    /// `differential`, later `metamorphic`, `debuginfo`, ...
    pub technique: String,
    /// Campaign name (free text, for grouping runs).
    pub campaign: String,
    /// The program the run debugged or checked.
    pub subject: Subject,
    /// The run's seed (with the configuration, it determines the run).
    pub seed: u64,
    /// The technique's full configuration, enough to replay the run.
    pub config: serde_json::Value,
    /// The tools under test, in trace order.
    pub debuggers: Vec<ToolInfo>,
    /// How the run ended.
    pub verdict: Verdict,
    /// One trace per debugger, same order as `debuggers`.
    pub traces: Vec<Trace>,
    /// Wall time of the run in milliseconds.
    pub duration_ms: f64,
    /// Start of the run, milliseconds since the Unix epoch.
    pub started_at_ms: i64,
}

impl RunRecord {
    /// Execution actions (start, resume, steps) the run issued before it
    /// ended, counted in its first trace: DBDB Figure 7's x. 0 for a run that
    /// ended in the breakpoint phase, 1 for one that ended right after start.
    pub fn execution_actions(&self) -> usize {
        self.traces
            .first()
            .map(|t| {
                t.actions()
                    .filter(|a| matches!(a, Action::Start | Action::Exec { .. }))
                    .count()
            })
            .unwrap_or(0)
    }

    /// The policy notes of the run (read from its first trace): the
    /// divergences a known policy explained and the run went on past.
    pub fn policy_notes(&self) -> Vec<&crate::model::Finding> {
        self.traces
            .first()
            .map(|t| t.policy_notes().collect())
            .unwrap_or_default()
    }

    /// The findings the run went on past, new to it, in order (read from its
    /// first trace; [`crate::model::Trace::finding_notes`]). Each is stored as
    /// a run record of its own as well.
    pub fn finding_notes(&self) -> Vec<&crate::model::Finding> {
        self.traces
            .first()
            .map(|t| t.finding_notes().collect())
            .unwrap_or_default()
    }
}
