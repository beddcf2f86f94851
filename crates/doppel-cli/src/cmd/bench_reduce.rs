//! `doppel bench reduce` (issue 17, "Speed" and item 5): reduces the
//! representative (first run) of every non-policy class of the stored
//! differential (or metamorphic) findings, as `doppel diff --reduce` does,
//! and prints per finding the actions and lines before and after and the
//! reduction's wall time, then the median reduced program size (target:
//! under 30 lines) and the median and 90th percentile of the reduction
//! time per finding. Each reduced case is stored on its run (findings
//! reduced before are reduced again). Prints figures; asserts nothing.

use clap::Args;
use doppel_core::store::RunFilter;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct BenchReduceArgs {
    /// The store holding the findings (default: the configured store).
    #[arg(long)]
    pub store: Option<String>,
    /// The technique whose findings are reduced (`differential`, `metamorphic`).
    #[arg(long, default_value = "differential")]
    pub technique: String,
    /// Only this campaign's findings.
    #[arg(long)]
    pub campaign: Option<String>,
    /// Wall-time budget of each reduction step per finding, seconds.
    #[arg(long, default_value_t = 120)]
    pub reduce_budget: u64,
    /// Reduce only the action sequences, not the programs.
    #[arg(long)]
    pub actions_only: bool,
}

/// The value at quantile `q` (nearest rank) of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

pub async fn run(a: BenchReduceArgs, default_db: &str) -> anyhow::Result<ExitCode> {
    let db = a.store.clone().unwrap_or_else(|| default_db.to_string());
    let store = super::open_store(&db).await?;
    let filter = RunFilter {
        technique: Some(a.technique.clone()),
        campaign: a.campaign.clone(),
    };
    let options = super::reduce::options(&db, a.reduce_budget, !a.actions_only)?;
    println!(
        "bench reduce: {} findings of {db}{}, one per non-policy class, budget {} s per step, program reduction {}",
        a.technique,
        a.campaign
            .as_ref()
            .map(|c| format!(" (campaign {c})"))
            .unwrap_or_default(),
        a.reduce_budget,
        if a.actions_only { "off" } else { "on (C: C-Vise)" }
    );
    let done = super::reduce::reduce_representatives(&store, &db, &filter, &options, true).await?;
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header(["run", "actions", "lines", "time s"]);
    for r in &done {
        table.add_row([
            r.run.id.unwrap_or_default().to_string(),
            format!("{} of {}", r.actions.0, r.actions.1),
            format!("{} of {}", r.lines.0, r.lines.1),
            format!("{:.1}", r.elapsed_ms / 1000.0),
        ]);
    }
    println!("{table}");
    let mut lines: Vec<f64> = done.iter().map(|r| r.lines.0 as f64).collect();
    let mut before: Vec<f64> = done.iter().map(|r| r.lines.1 as f64).collect();
    let mut actions: Vec<f64> = done.iter().map(|r| r.actions.0 as f64).collect();
    let mut secs: Vec<f64> = done.iter().map(|r| r.elapsed_ms / 1000.0).collect();
    for v in [&mut lines, &mut before, &mut actions, &mut secs] {
        v.sort_by(f64::total_cmp);
    }
    println!(
        "{} findings reduced: median program {} lines (before {}; target < 30), median {} actions; \
         reduction time per finding median {:.1} s, p90 {:.1} s",
        done.len(),
        quantile(&lines, 0.5),
        quantile(&before, 0.5),
        quantile(&actions, 0.5),
        quantile(&secs, 0.5),
        quantile(&secs, 0.9)
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(quantile(&v, 0.5), 5.0);
        assert_eq!(quantile(&v, 0.9), 9.0);
        assert_eq!(quantile(&[3.0], 0.9), 3.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}
