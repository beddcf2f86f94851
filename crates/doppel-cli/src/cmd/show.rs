//! `doppel show RUN`: the run as its technique shows it (for debugger
//! techniques the traces side by side, the divergence highlighted).

use clap::Args;
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
    let technique = crate::techniques::get(&r.technique)?;
    println!(
        "run {}: {} seed {} ({}), {:.0} ms",
        a.run, r.subject.name, r.seed, r.subject.build, r.duration_ms
    );
    for d in &r.debuggers {
        println!("  {}: {} via {}", d.name, d.version, d.protocol);
    }
    let view = technique.view(&r)?;
    for l in &view.lines {
        println!("{l}");
    }
    for l in super::triage::describe_run(&store, &r).await? {
        println!("{l}");
    }
    super::print_tables(&view.tables);
    Ok(ExitCode::SUCCESS)
}
