//! `doppel reclassify`: re-judges stored divergences with the current rules
//! of their technique (no tool runs), for every technique that re-judges.

use clap::Args;
use doppel_core::store::RunFilter;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReclassifyArgs {
    /// Only runs of this campaign.
    #[arg(long)]
    pub campaign: Option<String>,
}

pub async fn run(a: ReclassifyArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let (mut changed, mut vanished, mut total) = (0, 0, 0);
    for technique in crate::techniques::all().iter().filter(|t| t.reclassifies()) {
        let filter = RunFilter {
            technique: Some(technique.tag().into()),
            campaign: a.campaign.clone(),
        };
        for id in store.divergent_run_ids(&filter).await? {
            let Some(mut run) = store.run(id).await? else { continue };
            total += 1;
            let Some(verdict) = technique.reclassify(&run) else {
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
    }
    println!(
        "{total} divergent runs re-judged: {changed} changed class, {vanished} no longer diverge (now inconclusive)"
    );
    Ok(ExitCode::SUCCESS)
}
