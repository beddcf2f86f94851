//! `doppel report --out DIR`, and the report written at the end of `doppel diff --report DIR`.

use clap::Args;
use doppel_core::report::{ClassReport, ReportInput, ReportSection, write_html};
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

/// The campaign parameters of a differential campaign, shown in its report.
pub fn parameters(spec: &CampaignSpec) -> Vec<(String, String)> {
    let mut p = doppel_differential::technique::parameters(
        &spec.name,
        &doppel_differential::record::DiffRecord {
            debuggers: spec.debuggers.clone(),
            diff: spec.diff.clone(),
            executables: spec.executables.clone(),
            input: doppel_debuggers::record::DebuggerInput {
                source_text: String::new(),
                scripts: None,
                debugger: spec.debugger.clone(),
            },
            reduced: None,
        },
    );
    p.insert(p.len() - 1, ("jobs".into(), spec.jobs.to_string()));
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
    let mut tools = Vec::new();
    let all = store.classes(filter).await?;
    for c in &all {
        crate::techniques::get(&c.key.technique)?;
    }
    let mut sections = Vec::new();
    for technique in crate::techniques::all() {
        let mut classes = Vec::new();
        for c in all.iter().filter(|c| c.key.technique == technique.tag()) {
            let mut samples = Vec::new();
            for r in store.runs_in_class(&c.key, filter, per_class).await? {
                if let Some(rec) = store.run(r.id).await? {
                    if tools.is_empty() {
                        tools = rec.debuggers.clone();
                    }
                    let view = technique.view(&rec)?;
                    samples.push((rec, view));
                }
            }
            classes.push(ClassReport {
                parts: technique
                    .class_parts()
                    .iter()
                    .map(|p| c.key.part(p.name).unwrap_or_default().to_string())
                    .collect(),
                note: technique.class_note(&c.key),
                key: c.key.clone(),
                size: c.size,
                samples,
            });
        }
        if !classes.is_empty() {
            sections.push(ReportSection {
                title: technique.title().into(),
                legend: technique.class_legend().into(),
                headers: technique.class_parts().iter().map(|p| p.header.to_string()).collect(),
                classes,
            });
        }
    }
    let input = ReportInput {
        title: "doppel: differential debugger testing".into(),
        parameters,
        tools,
        summary,
        sections,
    };
    write_html(dir, &input)
}

pub async fn run(a: ReportArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let filter = RunFilter {
        technique: None,
        campaign: a.campaign.clone(),
    };
    // Parameters come from the first sampled run's technique and configuration.
    let params = match store.sample_round_robin(&filter, 1).await?.first() {
        Some(r) => match store.run(r.id).await? {
            Some(rec) => crate::techniques::get(&rec.technique)?.parameters(&rec),
            None => vec![],
        },
        None => vec![],
    };
    let index = write_with(&store, &filter, &a.out, params, a.per_class).await?;
    println!("{}", index.display());
    Ok(ExitCode::SUCCESS)
}
