//! `doppel repro RUN --out DIR`: a stand-alone reproducer for maintainers,
//! written by the run's technique.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReproArgs {
    /// Run id.
    pub run: i64,
    /// Output directory.
    #[arg(long)]
    pub out: PathBuf,
}

pub async fn run(a: ReproArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let r = super::load_run(&store, a.run).await?;
    let technique = crate::techniques::get(&r.technique)?;
    let ctx = super::technique_context(&store, db);
    let written = technique.repro(&r, &ctx, &a.out).await?;
    for f in &written.files {
        println!("{}", f.display());
    }
    println!("{}", written.how);
    Ok(ExitCode::SUCCESS)
}
