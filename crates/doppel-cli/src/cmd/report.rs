//! `doppel report --out DIR`, and the report written at the end of `doppel diff --report DIR`.

use clap::Args;
use doppel_core::report::{ClassReport, ReportInput, ReportSection, RootCauseReport, write_html};
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
    let mut root_causes = Vec::new();
    for r in super::triage::root_causes(store, filter).await? {
        let technique = crate::techniques::get(&r.group.cause.technique)?;
        let view = match store.run(r.group.representative).await? {
            Some(rec) => Some(technique.view(&rec)?),
            None => None,
        };
        root_causes.push(RootCauseReport {
            id: r.group.cause.id(),
            key: r.group.cause.key(),
            technique: technique.title().into(),
            suspect: r.group.cause.suspect(),
            standing: r.standing,
            size: r.group.size,
            classes: r.group.classes.len(),
            representative: r.group.representative,
            view,
            reduced: r.group.reduced,
        });
    }
    let mut pages = Vec::new();
    for technique in crate::techniques::all() {
        pages.extend(technique.report_pages(store, filter).await?);
    }
    let input = ReportInput {
        title: title(&sections),
        pages,
        root_causes,
        parameters,
        tools,
        summary,
        sections,
    };
    write_html(dir, &input)
}

/// The report's title: doppel and the techniques whose classes it shows
/// (`doppel: debug-information validation (PLDI 2020)`).
fn title(sections: &[ReportSection]) -> String {
    if sections.is_empty() {
        return "doppel report".into();
    }
    let titles: Vec<&str> = sections.iter().map(|s| s.title.as_str()).collect();
    format!("doppel: {}", titles.join("; "))
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
