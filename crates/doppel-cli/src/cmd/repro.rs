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
    if r.technique == doppel_debuginfo::campaign::TECHNIQUE {
        let f = doppel_debuginfo::finding::StoredFinding::from_record(&r).map_err(anyhow::Error::msg)?;
        let in_class = match r.verdict.finding() {
            Some(fd) => store
                .runs_in_class(&fd.class, &doppel_core::store::RunFilter::default(), 100_000)
                .await
                .map(|v| v.len() as u32)
                .unwrap_or(1),
            None => 1,
        };
        doppel_debuginfo::finding::write_bundle(&f, in_class, &a.out, &doppel_debuggers::DebuggerConfig::default())
            .await
            .map_err(anyhow::Error::msg)?;
        println!(
            "wrote the bug-report bundle to {} (README.md, a.c, opt_me_not.c, build.sh, gdb.cmd, lldb.cmd, transcripts, matrix.md)",
            a.out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let files = if r.technique == doppel_metamorphic::campaign::TECHNIQUE {
        let built = doppel_metamorphic::repro::build(&r).map_err(anyhow::Error::msg)?;
        doppel_debuggers::repro::write_files(&built, &a.out)?
    } else {
        doppel_debuggers::repro::write(&r, &a.out)?
    };
    for f in files {
        println!("{}", f.display());
    }
    let with = match r.subject.language {
        doppel_core::Language::C | doppel_core::Language::Rust => "the plain gdb and lldb CLIs",
        doppel_core::Language::JavaScript => "Node's inspector (see README.md there for the browsers' DevTools)",
    };
    println!("run `sh {}/run.sh` to see the divergence with {with}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
