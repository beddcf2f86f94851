//! `doppel show RUN`: the traces side by side, the divergence highlighted.

use clap::Args;
use comfy_table::{Cell, Color, Table, presets::UTF8_FULL_CONDENSED};
use doppel_core::report::side_by_side_rows;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Run id (from `doppel sample` or `doppel classes`).
    pub run: i64,
    /// Print the stored record as JSON (traces with raw protocol messages).
    #[arg(long)]
    pub json: bool,
}

pub async fn run(a: ShowArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let r = super::load_run(&store, a.run).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "run {}: {} seed {} ({}), {:.0} ms",
        a.run, r.subject.name, r.seed, r.subject.build, r.duration_ms
    );
    for d in &r.debuggers {
        println!("  {}: {} via {}", d.name, d.version, d.protocol);
    }
    match &r.verdict {
        doppel_core::Verdict::Divergence(f) => {
            println!(
                "verdict: divergence after action {} ({}), class {}",
                f.action_index, f.last_action, f.class
            );
            println!("  {}", f.detail);
        }
        doppel_core::Verdict::SubjectError { reason } => {
            println!("verdict: subject error: {reason}")
        }
        other => println!("verdict: {}", other.name()),
    }
    if r.technique == doppel_metamorphic::campaign::TECHNIQUE {
        show_metamorphic(&r);
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    let mut header = vec!["#".to_string(), "action".to_string()];
    header.extend(r.debuggers.iter().map(|d| d.name.clone()));
    t.set_header(header);
    for row in side_by_side_rows(&r) {
        let color = if row.divergent { Color::Red } else { Color::Reset };
        let mut cells = vec![Cell::new(row.index).fg(color), Cell::new(&row.action).fg(color)];
        cells.extend(row.outputs.iter().map(|o| Cell::new(o).fg(color)));
        t.add_row(cells);
    }
    println!("{t}");
    Ok(ExitCode::SUCCESS)
}

/// A metamorphic test: the transformation, then the initial and the
/// follow-up trace one after the other (the follow-up has actions of its
/// own: an added breakpoint, resynchronization), the violation highlighted.
fn show_metamorphic(r: &doppel_core::RunRecord) {
    let c = &r.config;
    let chain: Vec<String> = c["chain"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    println!("round {} of its sequence; chain: {}", c["round"], chain.join(" -> "));
    if let Some(d) = c["transformation"]["description"].as_str() {
        println!("transformation: {d}");
    }
    for s in c["skipped"].as_array().into_iter().flatten() {
        println!(
            "  (not applicable: {}: {})",
            s["transformation"].as_str().unwrap_or("?"),
            s["reason"].as_str().unwrap_or("")
        );
    }
    let divergent = r.verdict.finding().map(|f| f.action_index);
    for (i, (label, trace)) in ["initial", "follow-up"].iter().zip(&r.traces).enumerate() {
        let one = doppel_core::RunRecord {
            traces: vec![trace.clone()],
            verdict: doppel_core::Verdict::ProgramFinished { actions: 0 },
            ..r.clone()
        };
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED);
        t.set_header(["#", "action", label]);
        for row in side_by_side_rows(&one) {
            let red = i == 1 && divergent == Some(row.index);
            let color = if red { Color::Red } else { Color::Reset };
            t.add_row([
                Cell::new(row.index).fg(color),
                Cell::new(&row.action).fg(color),
                Cell::new(row.outputs.join("")).fg(color),
            ]);
        }
        println!("{t}");
    }
}
