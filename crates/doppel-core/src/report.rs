//! The HTML report of a campaign: parameters, tool versions, summary, per
//! technique the class table with sizes, and per class its sample runs as
//! the technique shows them ([`crate::technique::RunView`]: for debugger
//! techniques the traces side by side, one column per debugger, one row per
//! action, the divergent row highlighted). Static HTML, inline CSS, no JavaScript, no external
//! resources; templates are minijinja `*.html`, so every value (program
//! output, variable values: untrusted) is escaped.
//!
//! Files: `index.html` (first the root causes for a maintainer: new ones,
//! the candidate bugs, with suspect, size and a link to their page; policy
//! differences, known upstream bugs and triaged false positives collapsed
//! in `<details>` below; then campaign parameters, tools, verdict counts,
//! the class table; each class number and size links to its page),
//! `class-N.html` for the N-th class of [`ReportSection::classes`]
//! (1-based, across sections), and `root-N.html` for the N-th of
//! [`ReportInput::root_causes`] (its representative run and reduced
//! reproducer), and the techniques' own pages ([`ReportInput::pages`]:
//! a conformance campaign's engine-by-test matrix and failure groups).
//!
//! Documented check in a real browser (run by `tests/report.rs` on both
//! pages when `/usr/bin/chromium` exists; required when `CI` is set). Look at
//! the PNG: tables within the window, the divergent row red, values legible:
//!
//! ```sh
//! chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
//!   --disable-background-networking --disable-component-update --disable-sync \
//!   --user-data-dir=$(mktemp -d) --screenshot=/tmp/report.png --window-size=1400,1000 \
//!   file://$PWD/doppel-out/report/index.html
//! ```
//!
//! (and the same with `class-1.html` for a class page).

mod rows;

pub use rows::{Row, describe_output, side_by_side_rows, trace_table};

use crate::model::{ClassKey, ToolInfo};
use crate::rootcause::Standing;
use crate::run::RunRecord;
use crate::store::CampaignSummary;
use crate::technique::{ReportPage, RunView};
use anyhow::Context;
use minijinja::{Environment, context};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Everything the report shows.
#[derive(Debug, Clone)]
pub struct ReportInput {
    /// Page title and heading.
    pub title: String,
    /// The root causes ([`crate::rootcause`]), in the order listed within
    /// each standing (largest first, by convention); the first page lists
    /// candidate bugs first and collapses the rest.
    pub root_causes: Vec<RootCauseReport>,
    /// Campaign parameters as (name, value).
    pub parameters: Vec<(String, String)>,
    /// The tools under test (name, version, protocol, executable).
    pub tools: Vec<ToolInfo>,
    /// Run counts and durations (from [`crate::store::Store::summary`]).
    pub summary: CampaignSummary,
    /// One section per technique with classes, in the order shown.
    pub sections: Vec<ReportSection>,
    /// Techniques' own pages ([`crate::technique::Technique::report_pages`]:
    /// a conformance campaign's engine-by-test matrix, its failure groups),
    /// linked from the first page.
    pub pages: Vec<ReportPage>,
}

/// The classes of one technique ([`crate::technique::Technique`]).
#[derive(Debug, Clone)]
pub struct ReportSection {
    /// Heading ([`crate::technique::Technique::title`]).
    pub title: String,
    /// What the class key's parts mean ([`crate::technique::Technique::class_legend`]).
    pub legend: String,
    /// One column per class key part ([`crate::ClassPartSpec::header`]), in
    /// the order of [`ClassReport::parts`].
    pub headers: Vec<String>,
    /// The classes in the order they are listed (largest first, by convention).
    pub classes: Vec<ClassReport>,
}

/// One equivalence class with sample runs.
#[derive(Debug, Clone)]
pub struct ClassReport {
    /// The class key.
    pub key: ClassKey,
    /// The key's part values under [`ReportSection::headers`] (empty for a
    /// part the key lacks).
    pub parts: Vec<String>,
    /// Number of runs in the class (not only the samples).
    pub size: u64,
    /// A reading of the class (policy difference, bug, normalization gap).
    pub note: Option<String>,
    /// Runs to show (with `id` set, for the replay and reproducer commands
    /// shown next to them), each with the technique's view of it.
    pub samples: Vec<(RunRecord, RunView)>,
}

/// One root cause for a maintainer: where it stands, who is suspect, its
/// size, and its representative run with the reduced reproducer.
#[derive(Debug, Clone, Serialize)]
pub struct RootCauseReport {
    /// Its short name ([`crate::rootcause::RootCause::id`]).
    pub id: String,
    /// Its key ([`crate::rootcause::RootCause::key`]).
    pub key: String,
    /// The technique's title.
    pub technique: String,
    /// Where it stands (new, known, policy, triaged).
    pub standing: Standing,
    /// Who is suspect, for people (the `suspect` fact, else the tools).
    pub suspect: String,
    /// Its divergent runs.
    pub size: u64,
    /// The classes they are in.
    pub classes: usize,
    /// The representative run's id.
    pub representative: i64,
    /// The representative run as its technique shows it.
    pub view: Option<RunView>,
    /// The reduced reproducer, when one is stored.
    pub reduced: Option<String>,
}

#[derive(Serialize)]
struct SampleView<'a> {
    id: String,
    subject: String,
    seed: u64,
    view: &'a RunView,
}

/// Writes `index.html` and one `class-N.html` per class into `dir`
/// (classes numbered across sections, from 1; created if needed, existing
/// files of those names overwritten); returns the path of `index.html`.
/// Every value is HTML-escaped.
///
/// Errors: I/O errors, template errors.
pub fn write_html(dir: &Path, input: &ReportInput) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut env = Environment::new();
    env.add_template("style.html", include_str!("report/style.html"))?;
    env.add_template("index.html", include_str!("report/index.html"))?;
    env.add_template("class.html", include_str!("report/class.html"))?;
    env.add_template("root.html", include_str!("report/root.html"))?;
    env.add_template("roots.html", include_str!("report/roots.html"))?;
    env.add_template("view.html", include_str!("report/view.html"))?;
    env.add_template("page.html", include_str!("report/page.html"))?;
    let roots: Vec<_> = input
        .root_causes
        .iter()
        .enumerate()
        .map(|(i, r)| {
            context! {
                n => i + 1,
                id => r.id.clone(),
                key => r.key.clone(),
                technique => r.technique.clone(),
                standing => r.standing.describe(),
                link => match &r.standing { Standing::Known { link, .. } => Some(link.clone()), _ => None },
                group => standing_group(&r.standing),
                suspect => r.suspect.clone(),
                size => r.size,
                classes => r.classes,
                representative => r.representative,
                reduced => r.reduced.is_some(),
            }
        })
        .collect();
    let mut n = 0;
    let sections: Vec<_> = input
        .sections
        .iter()
        .map(|s| {
            let classes: Vec<_> = s
                .classes
                .iter()
                .map(|c| {
                    n += 1;
                    context! {
                        n => n,
                        key => c.key.to_string(),
                        parts => c.parts.clone(),
                        size => c.size,
                        note => c.note.clone(),
                    }
                })
                .collect();
            context! {
                title => s.title.clone(),
                legend => s.legend.clone(),
                headers => s.headers.clone(),
                classes => classes,
            }
        })
        .collect();
    let s = &input.summary;
    let index = env.get_template("index.html")?.render(context! {
        title => input.title.clone(),
        parameters => input.parameters.clone(),
        tools => minijinja::Value::from(minijinja::value::Serde(&input.tools)),
        verdicts => s.verdicts.clone(),
        runs => s.runs,
        divergences => s.divergences,
        class_count => s.classes,
        median_ms => format!("{:.0}", s.median_duration_ms),
        total_s => format!("{:.1}", s.total_duration_ms / 1000.0),
        sections => sections,
        roots => roots,
        pages => input.pages.iter().map(|p| context! { file => p.file.clone(), title => p.title.clone() }).collect::<Vec<_>>(),
    })?;
    let index_path = dir.join("index.html");
    std::fs::write(&index_path, index)?;
    let tmpl = env.get_template("class.html")?;
    for (i, c) in input.sections.iter().flat_map(|s| &s.classes).enumerate() {
        let samples: Vec<SampleView> = c
            .samples
            .iter()
            .map(|(r, view)| SampleView {
                id: r.id.map(|i| i.to_string()).unwrap_or_default(),
                subject: r.subject.name.clone(),
                seed: r.seed,
                view,
            })
            .collect();
        let page = tmpl.render(context! {
            title => input.title.clone(),
            n => i + 1,
            key => c.key.to_string(),
            size => c.size,
            note => c.note.clone(),
            samples => minijinja::Value::from(minijinja::value::Serde(&samples)),
        })?;
        std::fs::write(dir.join(format!("class-{}.html", i + 1)), page)?;
    }
    let tmpl = env.get_template("root.html")?;
    for (i, r) in input.root_causes.iter().enumerate() {
        let page = tmpl.render(context! {
            title => input.title.clone(),
            n => i + 1,
            root => minijinja::Value::from(minijinja::value::Serde(r)),
            standing => r.standing.describe(),
        })?;
        std::fs::write(dir.join(format!("root-{}.html", i + 1)), page)?;
    }
    let tmpl = env.get_template("page.html")?;
    for p in &input.pages {
        anyhow::ensure!(
            !p.file.is_empty()
                && !p.file.starts_with('.')
                && p.file.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
            "a report page's file name {:?} is not a plain file name",
            p.file
        );
        let page = tmpl.render(context! {
            title => p.title.clone(),
            v => minijinja::Value::from(minijinja::value::Serde(&p.view)),
        })?;
        std::fs::write(dir.join(&p.file), page)?;
    }
    Ok(index_path)
}

/// The first page's group of a root cause: `candidate` (listed first),
/// `policy`, `known`, `false_positive` (collapsed below).
fn standing_group(s: &Standing) -> &'static str {
    match s {
        Standing::New | Standing::Bug { .. } => "candidate",
        Standing::Policy { .. } => "policy",
        Standing::Known { .. } => "known",
        Standing::FalsePositive { .. } => "false_positive",
    }
}
