//! `doppel report --out DIR`, and the report written at the end of `doppel diff --report DIR`.

use clap::Args;
use doppel_core::report::{ClassReport, ReportInput, write_html};
use doppel_core::store::{RunFilter, Store};
use doppel_differential::campaign::CampaignSpec;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Output directory.
    #[arg(long)]
    pub out: PathBuf,
    /// Only runs of this campaign.
    #[arg(long)]
    pub campaign: Option<String>,
    /// Sample runs shown per class.
    #[arg(long, default_value_t = 3)]
    pub per_class: usize,
}

/// The campaign parameters shown in the report.
pub fn parameters(spec: &CampaignSpec) -> Vec<(String, String)> {
    let d = &spec.diff;
    let mut p = vec![
        ("campaign".to_string(), spec.name.clone()),
        ("debuggers".into(), spec.debuggers.join(", ")),
        ("breakpoints per line".into(), d.breakpoints_per_line.to_string()),
        ("max breakpoints".into(), d.max_breakpoints.to_string()),
        ("removal probability".into(), d.removal_probability.to_string()),
        ("max actions".into(), d.max_actions.to_string()),
        (
            "action weights".into(),
            format!(
                "resume {}, step in {}, step over {}, step out {}",
                d.weights.resume, d.weights.step_in, d.weights.step_over, d.weights.step_out
            ),
        ),
        ("action timeout".into(), format!("{} ms", d.action_timeout_ms)),
        ("compare columns".into(), d.compare_columns.to_string()),
        ("warm reuse".into(), spec.debugger.warm.to_string()),
        ("jobs".into(), spec.jobs.to_string()),
    ];
    let off: Vec<&str> = d
        .normalization
        .describe()
        .into_iter()
        .filter(|(_, on)| !on)
        .map(|(n, _)| n)
        .collect();
    p.push((
        "normalization".into(),
        if off.is_empty() {
            "all rules on (docs/normalization.md)".into()
        } else {
            format!("off: {}", off.join(", "))
        },
    ));
    p
}

/// Writes the report of the runs matching `filter` into `dir`; returns index.html.
pub async fn write(store: &Store, filter: &RunFilter, dir: &Path, spec: &CampaignSpec) -> anyhow::Result<PathBuf> {
    write_with(store, filter, dir, parameters(spec), 3).await
}

async fn write_with(
    store: &Store,
    filter: &RunFilter,
    dir: &Path,
    parameters: Vec<(String, String)>,
    per_class: usize,
) -> anyhow::Result<PathBuf> {
    let summary = store.summary(filter).await?;
    let mut classes = Vec::new();
    let mut tools = Vec::new();
    for c in store.classes(filter).await? {
        let mut samples = Vec::new();
        for r in store.runs_in_class(&c.key, filter, per_class).await? {
            if let Some(rec) = store.run(r.id).await? {
                if tools.is_empty() {
                    tools = rec.debuggers.clone();
                }
                samples.push(rec);
            }
        }
        // A tool failure is never a known policy difference, even in a store
        // written before the oracle stopped giving failures a policy.
        let note = c
            .key
            .policy
            .as_ref()
            .filter(|_| c.key.divergence != doppel_core::DivergenceKind::ToolFailure)
            .map(|p| format!("known policy difference: {p} (docs/normalization.md)"));
        classes.push(ClassReport {
            key: c.key,
            size: c.size,
            note,
            samples,
        });
    }
    let input = ReportInput {
        title: "doppel: differential debugger testing".into(),
        parameters,
        tools,
        summary,
        classes,
    };
    write_html(dir, &input)
}

pub async fn run(a: ReportArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let filter = RunFilter {
        technique: None,
        campaign: a.campaign.clone(),
    };
    // Parameters come from the first stored run's configuration.
    let params = match store.sample_round_robin(&filter, 1).await?.first() {
        Some(r) => match store.run(r.id).await? {
            Some(rec) => super::replay::spec_of(&rec).map(|s| parameters(&s)).unwrap_or_default(),
            None => vec![],
        },
        None => vec![],
    };
    let index = write_with(&store, &filter, &a.out, params, a.per_class).await?;
    println!("{}", index.display());
    Ok(ExitCode::SUCCESS)
}
