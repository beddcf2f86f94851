//! Triage decisions (`doppel triage ROOT --as bug|policy|false-positive
//! --note TEXT`, issue 17 item 7): what a person decided about a root cause
//! ([`crate::rootcause`]), kept in the table `triage` (schema 4, created by
//! `store/migrate.rs` for older stores).
//!
//! A decision is keyed by the root cause's key text, not by runs or
//! classes: `doppel reclassify` rewrites runs and their classes, and a new
//! campaign adds runs, but a decision stays with its cause. Deciding again
//! replaces the decision.

use super::Store;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use sqlx::Row;

/// The table, as schema 4 creates it (`root_cause` is [`crate::rootcause::RootCause::key`]).
pub(super) const DDL: &str = "CREATE TABLE IF NOT EXISTS triage (root_cause TEXT NOT NULL PRIMARY KEY, \
     root_id TEXT NOT NULL, technique TEXT NOT NULL, verdict TEXT NOT NULL, note TEXT NOT NULL, at_ms BIGINT NOT NULL)";

/// What a root cause is, as a person decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriageVerdict {
    /// A bug of a tool under test (to be reported, or reported).
    Bug,
    /// An intended policy difference of the tools, not a bug.
    Policy,
    /// A false positive of doppel's method.
    FalsePositive,
}

impl TriageVerdict {
    /// Stable name (`bug`, `policy`, `false-positive`), as stored and as
    /// `--as` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            TriageVerdict::Bug => "bug",
            TriageVerdict::Policy => "policy",
            TriageVerdict::FalsePositive => "false-positive",
        }
    }

    /// The verdict named `s` ([`TriageVerdict::as_str`]).
    pub fn parse(s: &str) -> Option<Self> {
        [TriageVerdict::Bug, TriageVerdict::Policy, TriageVerdict::FalsePositive]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// One decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Triage {
    /// The root cause's key ([`crate::rootcause::RootCause::key`]).
    pub root_cause: String,
    /// Its short name ([`crate::rootcause::RootCause::id`]).
    pub root_id: String,
    /// Its technique's tag.
    pub technique: String,
    /// The decision.
    pub verdict: TriageVerdict,
    /// Why, for people (may be empty).
    pub note: String,
    /// When, milliseconds since the Unix epoch.
    pub at_ms: i64,
}

impl Store {
    /// Stores a decision, replacing an earlier one about the same root cause.
    ///
    /// Errors: database errors.
    pub async fn set_triage(&self, t: &Triage) -> anyhow::Result<()> {
        let doing = || format!("storing the triage of {}", t.root_id);
        self.retrying(&doing, || async {
            sqlx::query(
                "INSERT INTO triage (root_cause, root_id, technique, verdict, note, at_ms) VALUES ($1,$2,$3,$4,$5,$6) \
                 ON CONFLICT (root_cause) DO UPDATE SET root_id=excluded.root_id, technique=excluded.technique, \
                 verdict=excluded.verdict, note=excluded.note, at_ms=excluded.at_ms",
            )
            .bind(t.root_cause.clone())
            .bind(t.root_id.clone())
            .bind(t.technique.clone())
            .bind(t.verdict.as_str().to_string())
            .bind(t.note.clone())
            .bind(t.at_ms)
            .execute(&self.pool)
            .await
            .with_context(doing)?;
            Ok(())
        })
        .await
    }

    /// Every decision, by root-cause key.
    ///
    /// Errors: database errors; a stored verdict this doppel does not know.
    pub async fn triages(&self) -> anyhow::Result<Vec<Triage>> {
        let rows =
            sqlx::query("SELECT root_cause, root_id, technique, verdict, note, at_ms FROM triage ORDER BY root_cause")
                .fetch_all(&self.pool)
                .await
                .context("reading the triage table")?;
        rows.iter()
            .map(|r| {
                let verdict: String = r.try_get(3)?;
                Ok(Triage {
                    root_cause: r.try_get(0)?,
                    root_id: r.try_get(1)?,
                    technique: r.try_get(2)?,
                    verdict: TriageVerdict::parse(&verdict)
                        .with_context(|| format!("unknown triage verdict {verdict:?} in the store"))?,
                    note: r.try_get(4)?,
                    at_ms: r.try_get(5)?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_names_round_trip() {
        for v in [TriageVerdict::Bug, TriageVerdict::Policy, TriageVerdict::FalsePositive] {
            assert_eq!(TriageVerdict::parse(v.as_str()), Some(v));
        }
        assert_eq!(TriageVerdict::parse("wontfix"), None);
    }
}
