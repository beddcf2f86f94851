//! `doppel replay RUN`: re-runs a stored run with its seed and configuration
//! (through its technique) and says whether the verdict reproduces.

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Run id.
    pub run: i64,
    /// Replay this many times (a flaky divergence reproduces only sometimes).
    #[arg(long, default_value_t = 1)]
    pub times: usize,
}

pub async fn run(a: ReplayArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let r = super::load_run(&store, a.run).await?;
    let technique = crate::techniques::get(&r.technique)?;
    let ctx = super::technique_context(&store, db);
    let report = technique.replay(&r, &ctx, a.times.max(1)).await?;
    for n in &report.notes {
        println!("note: {n}");
    }
    for (i, at) in report.attempts.iter().enumerate() {
        println!(
            "replay {}: {} ({})",
            i + 1,
            if at.reproduces { "REPRODUCES" } else { "DIFFERS" },
            at.got
        );
        if !at.reproduces {
            println!("  stored:   {}", report.stored);
        }
        for n in &at.notes {
            println!("  {n}");
        }
    }
    let reproduced = report.attempts.iter().filter(|a| a.reproduces).count();
    println!("{reproduced}/{} replays reproduce run {}", report.attempts.len(), a.run);
    Ok(if reproduced > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
