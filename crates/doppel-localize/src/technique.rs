//! Regression localization as the commands see it
//! ([`doppel_core::technique::Technique`]): a stored case
//! ([`LocalizeRecord`]) shown as its ranked report, replayed by running
//! the case again from its stored texts, and written out as a reproducer
//! directory ([`crate::repro`]).

use crate::darwin::reported_lines;
use crate::record::{CLASS_PARTS, LocalizeRecord, TECHNIQUE, outcome_name};
use crate::truth::Line;
use doppel_core::technique::{ReplayAttempt, ReplayReport, Reproducer, RunView, Technique, TechniqueContext};
use doppel_core::{ClassPartSpec, RunRecord};
use std::collections::BTreeSet;
use std::path::Path;

/// The localization technique (Darwin, ESEC/FSE 2009; issue 16).
#[derive(Debug, Default, Clone, Copy)]
pub struct Localize;

/// What a replay compares: the outcome and Darwin's set of lines.
fn signature(rec: &LocalizeRecord) -> (String, BTreeSet<Line>) {
    (
        outcome_name(&rec.result).to_string(),
        rec.result.darwin.as_ref().map(reported_lines).unwrap_or_default(),
    )
}

fn describe((outcome, lines): &(String, BTreeSet<Line>)) -> String {
    let l: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    format!("{outcome}, Darwin's lines [{}]", l.join(", "))
}

/// Runs a stored case again (its texts written to a temporary directory)
/// with its stored configuration; wasm builds go to `cache`.
///
/// Errors: the temporary files cannot be written.
pub async fn rerun(rec: &LocalizeRecord, cache: &Path) -> anyhow::Result<LocalizeRecord> {
    let dir = tempfile::tempdir()?;
    let case = rec.case.materialize(dir.path())?;
    let result = crate::case::run_case(&case, &rec.config.case_config(cache)).await;
    Ok(LocalizeRecord::new(rec.config.clone(), rec.case.clone(), result))
}

#[async_trait::async_trait]
impl Technique for Localize {
    fn tag(&self) -> &'static str {
        TECHNIQUE
    }

    fn title(&self) -> &'static str {
        "regression localization (Darwin, ESEC/FSE 2009)"
    }

    fn class_parts(&self) -> &'static [ClassPartSpec] {
        &CLASS_PARTS
    }

    fn class_legend(&self) -> &'static str {
        "Every case is a class member: its outcome (localized, no deviation found, budget spent, unsupported \
         instruction, P and P' agree, build failure, ...), its defect class, and, with a ground truth, whether \
         Darwin's report ranks a faulty line first (top1), holds one (in_report) or not (missed)."
    }

    fn view(&self, run: &RunRecord) -> anyhow::Result<RunView> {
        Ok(crate::view::view(&LocalizeRecord::of(run)?, true))
    }

    /// None: a case is stored as a finding so that classes group cases by
    /// outcome, but it is a measurement of localization, not a candidate
    /// bug of a tool, so it has no root cause for the maintainer's list.
    fn root_cause(&self, _run: &RunRecord) -> Option<doppel_core::rootcause::RootCause> {
        None
    }

    fn parameters(&self, run: &RunRecord) -> Vec<(String, String)> {
        match LocalizeRecord::of(run) {
            Ok(r) => vec![
                ("campaign".into(), run.campaign.clone()),
                ("budget".into(), format!("{}s", r.config.budget_secs)),
                ("seed".into(), r.config.seed.to_string()),
                ("darwin".into(), r.config.darwin.to_string()),
            ],
            Err(_) => vec![("campaign".into(), run.campaign.clone())],
        }
    }

    /// The case run again from its stored texts and configuration; it
    /// reproduces when the outcome and Darwin's set of lines come back.
    async fn replay(&self, run: &RunRecord, ctx: &TechniqueContext, times: usize) -> anyhow::Result<ReplayReport> {
        let rec = LocalizeRecord::of(run)?;
        let stored = signature(&rec);
        let mut report = ReplayReport {
            stored: describe(&stored),
            notes: vec![
                "Darwin's wall-clock budget makes a replay on a busier machine end sooner (budget_spent)".into(),
            ],
            attempts: Vec::new(),
        };
        for _ in 0..times.max(1) {
            let again = rerun(&rec, &ctx.cache_dir.join("wasm")).await?;
            let got = signature(&again);
            report.attempts.push(ReplayAttempt {
                reproduces: got == stored,
                got: describe(&got),
                notes: vec![format!("{:.2}s", again.result.seconds)],
            });
        }
        Ok(report)
    }

    /// A directory with P.c, P2.c, the input t, the witness inputs and
    /// `run.sh`, which builds both natively and shows their outputs.
    async fn repro(&self, run: &RunRecord, _ctx: &TechniqueContext, out: &Path) -> anyhow::Result<Reproducer> {
        let rec = LocalizeRecord::of(run)?;
        crate::repro::write(&rec, out)
    }
}
