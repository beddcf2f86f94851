//! `doppel reclassify`: re-judges stored divergences with the current
//! normalization rules and policies (no debugger runs).

use clap::Args;
use doppel_core::store::RunFilter;
use doppel_differential::DiffConfig;
use doppel_differential::reclassify::reclassify;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReclassifyArgs {
    /// Only runs of this campaign.
    #[arg(long)]
    pub campaign: Option<String>,
}

pub async fn run(a: ReclassifyArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let filter = RunFilter {
        technique: Some("differential".into()),
        campaign: a.campaign,
    };
    let (mut changed, mut vanished, mut total) = (0, 0, 0);
    for id in store.divergent_run_ids(&filter).await? {
        let Some(mut run) = store.run(id).await? else { continue };
        total += 1;
        // The run's own knobs; rules added since default to on.
        let cfg: DiffConfig = serde_json::from_value(run.config["diff"].clone()).unwrap_or_default();
        let Some(verdict) = reclassify(&run, &cfg) else {
            continue;
        };
        if verdict != run.verdict {
            if verdict.finding().is_none() {
                vanished += 1;
            }
            changed += 1;
            run.verdict = verdict;
            store.insert_run(&run).await?;
        }
    }
    println!(
        "{total} divergent runs re-judged: {changed} changed class, {vanished} no longer diverge (now inconclusive)"
    );
    Ok(ExitCode::SUCCESS)
}
