//! `doppel classes` and `doppel sample`, and the end-of-campaign summary table.

use clap::Args;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use doppel_core::store::{RunFilter, Store};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ClassesArgs {
    /// Only runs of this campaign.
    #[arg(long)]
    pub campaign: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Instead of the classes, how many runs completed (and how) after at
    /// most x execution actions, for x = 0, 1, 2, 5, 10, 20 and the maximum
    /// (DBDB Figure 7).
    #[arg(long)]
    pub by_actions: bool,
    /// Only the root causes (findings grouped by what caused them), each
    /// marked new, known (with the upstream link), policy or triaged.
    #[arg(long)]
    pub root_causes: bool,
}

#[derive(Args, Debug)]
pub struct SampleArgs {
    /// Runs to draw per class.
    #[arg(long, default_value_t = 1)]
    pub per_class: usize,
    /// Only runs of this campaign.
    #[arg(long)]
    pub campaign: Option<String>,
}

fn filter(campaign: &Option<String>) -> RunFilter {
    RunFilter {
        technique: None,
        campaign: campaign.clone(),
    }
}

pub async fn classes(a: ClassesArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    if a.by_actions {
        return by_actions(&store, &filter(&a.campaign), a.json).await;
    }
    if a.root_causes {
        return root_causes(&store, &filter(&a.campaign), a.json).await;
    }
    let classes = store.classes(&filter(&a.campaign)).await?;
    if a.json {
        let rows: Vec<_> = classes
            .iter()
            .map(|c| serde_json::json!({"class": c.key.to_string(), "technique": c.key.technique, "size": c.size, "example_run": c.first_run}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    for t in class_tables(&classes)? {
        println!("{t}");
    }
    root_causes(&store, &filter(&a.campaign), false).await
}

/// The root causes as a table (or JSON): id, technique, runs, classes,
/// suspect, standing, representative run, key; then how many classes they
/// collapse.
async fn root_causes(store: &Store, filter: &RunFilter, json: bool) -> anyhow::Result<ExitCode> {
    let rows = super::triage::root_causes(store, filter).await?;
    if json {
        let out: Vec<_> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.group.cause.id(),
                    "key": r.group.cause.key(),
                    "cause": r.group.cause,
                    "size": r.group.size,
                    "classes": r.group.classes,
                    "representative_run": r.group.representative,
                    "standing": r.standing,
                    "described": r.standing.describe(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header([
        "root cause",
        "runs",
        "classes",
        "suspect",
        "standing",
        "example run",
        "key",
    ]);
    for r in &rows {
        t.add_row([
            r.group.cause.id(),
            r.group.size.to_string(),
            r.group.classes.len().to_string(),
            r.group.cause.suspect(),
            r.standing.describe(),
            r.group.representative.to_string(),
            r.group.cause.key(),
        ]);
    }
    let classes: std::collections::BTreeSet<&String> = rows.iter().flat_map(|r| &r.group.classes).collect();
    let new = rows.iter().filter(|r| r.standing.is_candidate()).count();
    println!("{t}");
    println!(
        "{} classes in {} root causes: {new} new or triaged as bugs (`doppel triage ROOT --as ...` records a decision)",
        classes.len(),
        rows.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// DBDB Figure 7 as a table (or JSON): cumulative completed runs per x.
async fn by_actions(store: &Store, filter: &RunFilter, json: bool) -> anyhow::Result<ExitCode> {
    use doppel_differential::completion;
    let runs = store.action_counts(filter).await?;
    let max = runs.iter().map(|r| r.execution_actions).max().unwrap_or(0);
    let mut xs: Vec<usize> = [0, 1, 2, 5, 10, 20].into_iter().filter(|&x| x < max).collect();
    xs.push(max);
    let rows = completion::curve(&runs, &xs);
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    let kinds: std::collections::BTreeSet<&String> = rows.iter().flat_map(|r| r.divergences.keys()).collect();
    let total = runs.len().max(1) as f64;
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    let mut header = vec![
        "x (execution actions)".to_string(),
        "completed".into(),
        "%".into(),
        "program finished".into(),
    ];
    header.extend(kinds.iter().map(|k| k.to_string()));
    header.extend(["max actions".into(), "other".into()]);
    t.set_header(header);
    for r in &rows {
        let mut cells = vec![
            format!("<= {}", r.actions),
            r.completed.to_string(),
            format!("{:.1}", 100.0 * r.completed as f64 / total),
            r.finished.to_string(),
        ];
        cells.extend(
            kinds
                .iter()
                .map(|k| r.divergences.get(*k).copied().unwrap_or(0).to_string()),
        );
        cells.extend([r.max_actions.to_string(), r.other.to_string()]);
        t.add_row(cells);
    }
    println!("{} runs\n{t}", runs.len());
    Ok(ExitCode::SUCCESS)
}

/// One table per technique among `classes` (in registry order): size, the
/// technique's class key parts, example run.
fn class_tables(classes: &[doppel_core::store::ClassSummary]) -> anyhow::Result<Vec<Table>> {
    for c in classes {
        crate::techniques::get(&c.key.technique)?;
    }
    let mut tables = Vec::new();
    for technique in crate::techniques::all() {
        let mine: Vec<_> = classes.iter().filter(|c| c.key.technique == technique.tag()).collect();
        if mine.is_empty() {
            continue;
        }
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED);
        let mut header = vec!["size"];
        header.extend(technique.class_parts().iter().map(|p| p.header));
        header.push("example run");
        t.set_header(header);
        for c in mine {
            let mut row = vec![c.size.to_string()];
            row.extend(
                technique
                    .class_parts()
                    .iter()
                    .map(|p| c.key.part(p.name).unwrap_or_default().to_string()),
            );
            row.push(c.first_run.to_string());
            t.add_row(row);
        }
        tables.push(t);
    }
    Ok(tables)
}

pub async fn sample(a: SampleArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let runs = store.sample_round_robin(&filter(&a.campaign), a.per_class).await?;
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(["run", "class", "subject", "seed"]);
    for r in runs {
        t.add_row([
            r.id.to_string(),
            r.class_key.map(|k| k.to_string()).unwrap_or_default(),
            r.subject_name,
            r.seed.to_string(),
        ]);
    }
    println!("{t}");
    Ok(ExitCode::SUCCESS)
}

/// Prints the verdict counts and the class table of the runs matching `filter`.
pub async fn print_summary(store: &Store, filter: &RunFilter) -> anyhow::Result<()> {
    let s = store.summary(filter).await?;
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(["verdict", "runs"]);
    for (verdict, n) in &s.verdicts {
        t.add_row([verdict.clone(), n.to_string()]);
    }
    println!("{t}");
    println!(
        "{} runs, {} divergences in {} classes; median run {:.0} ms",
        s.runs, s.divergences, s.classes, s.median_duration_ms
    );
    let classes = store.classes(filter).await?;
    for t in class_tables(&classes)? {
        println!("{t}");
    }
    Ok(())
}
