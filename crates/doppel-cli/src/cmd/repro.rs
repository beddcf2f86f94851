//! `doppel repro RUN --out DIR`: a stand-alone reproducer for maintainers.

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
    let files = if r.technique == doppel_metamorphic::campaign::TECHNIQUE {
        let built = doppel_metamorphic::repro::build(&r).map_err(anyhow::Error::msg)?;
        doppel_differential::repro::write_files(&built, &a.out)?
    } else {
        doppel_differential::repro::write(&r, &a.out)?
    };
    for f in files {
        println!("{}", f.display());
    }
    let with = match r.subject.language {
        doppel_core::Language::C => "the plain gdb and lldb CLIs",
        doppel_core::Language::JavaScript => "Node's inspector (see README.md there for the browsers' DevTools)",
    };
    println!("run `sh {}/run.sh` to see the divergence with {with}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
