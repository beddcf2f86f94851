//! `doppel`: finds bugs in debuggers by differential testing.
//!
//! Subcommands: `diff` (a campaign), `classes`, `sample`, `show`, `replay`,
//! `repro`, `report`, `reclassify`, `triage`, `backends`, `engines`, `bench`. See README.md.

mod cmd;
mod settings;
mod techniques;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "doppel",
    version,
    about = "Finds bugs in debuggers: differential testing of GDB and LLDB, and of the JavaScript debuggers of Node, Chromium and Firefox (DBDB, FSE 2018)"
)]
struct Cli {
    /// Settings file (default: ./doppel.toml if present).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Store: a SQLite file path or URL, or a postgres:// URL (default from doppel.toml, else doppel-out/doppel.db).
    #[arg(long, global = true, env = "DOPPEL_DB")]
    db: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a differential campaign (DBDB Algorithm 1) over C or JavaScript programs.
    Diff(cmd::diff::DiffArgs),
    /// Run a metamorphic campaign on one debugger (ISSTA'19): transformed programs and actions, live follow-up runs.
    Meta(cmd::meta::MetaArgs),
    /// Validate the debug information of optimized code (PLDI'20): actionable programs, -O0 references, GDB and LLDB on -O1..-Os builds.
    Debuginfo(cmd::debuginfo::DebuginfoCmd),
    /// Test JavaScript engines against engine262 (JEST, ICSE 2021): generated programs (`doppel conform`) or given test262 tests (`doppel conform run`).
    Conform(cmd::conform::ConformCmd),
    /// Root-cause a regression (Darwin, issue 16): the lines of P' (and P) to blame for a test P' fails, with witnesses, beside the diff and SBFL baselines; or every pair of a Codeflaws-layout corpus.
    Localize(cmd::localize::LocalizeArgs),
    /// Print the equivalence classes of the stored divergences with their sizes.
    Classes(cmd::classes::ClassesArgs),
    /// Draw divergent runs round robin over the classes (DBDB section 3.4).
    Sample(cmd::classes::SampleArgs),
    /// Show a run's traces side by side, the divergence highlighted.
    Show(cmd::show::ShowArgs),
    /// Re-run a stored run and say whether it reproduces.
    Replay(cmd::replay::ReplayArgs),
    /// Reduce a stored finding (differential: delta debugging of its actions, then C-Vise on its C program) and store the reduced case; replay and repro use it.
    Reduce(cmd::reduce::ReduceArgs),
    /// The interestingness test of program reduction (run by C-Vise's script).
    #[command(hide = true)]
    ReduceProbe(cmd::reduce::ReduceProbeArgs),
    /// The interestingness test of a conformance group's reduction (run by treereduce on each variant).
    #[command(hide = true)]
    ConformProbe(cmd::conform_reduce::ProbeArgs),
    /// Write a stand-alone reproducer (C: program, gdb and lldb command files; JavaScript: scripts, page, Node CDP replay; run.sh).
    Repro(cmd::repro::ReproArgs),
    /// Re-judge stored divergences under the current normalization rules and policies.
    Reclassify(cmd::reclassify::ReclassifyArgs),
    /// Record a decision about a root cause (bug, policy difference, false positive), kept across reclassify.
    Triage(cmd::triage::TriageArgs),
    /// Write the HTML report of the stored runs.
    Report(cmd::report::ReportArgs),
    /// List the debugger backends: installed or not, version, protocol, capabilities.
    Backends,
    /// List the JavaScript engines: installed or not (and why), version, family, feature level.
    Engines(cmd::engines::EnginesArgs),
    /// Benchmarks (print figures; nothing is asserted).
    Bench(cmd::bench::BenchArgs),
}

/// How this doppel process is contained (set first thing in `main`).
pub(crate) static CONTAINMENT: std::sync::OnceLock<doppel_core::cgroup::Containment> = std::sync::OnceLock::new();

fn main() -> ExitCode {
    // First, while the process has one thread: everything doppel starts
    // goes into a campaign group that a keeper kills when doppel exits,
    // however it dies (docs/reliability.md).
    let containment = doppel_core::cgroup::contain_self();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DOPPEL_LOG")
                .unwrap_or_else(|_| "warn,sqlx::query=error".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    if let doppel_core::cgroup::Containment::Unavailable(why) = &containment {
        tracing::info!("no campaign group: {why}");
    }
    let _ = CONTAINMENT.set(containment);
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = rt.block_on(async move {
        // Ctrl-C or SIGTERM: every run finished so far is in the store; kill
        // the debuggers (each in a process group of its own) and stop.
        tokio::spawn(async {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            let term = async {
                match term.as_mut() {
                    Some(t) => {
                        t.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            let code = tokio::select! {
                _ = tokio::signal::ctrl_c() => 130,
                _ = term => 143,
            };
            doppel_core::process::kill_all_spawned();
            eprintln!("doppel: interrupted; finished runs are stored (--resume continues)");
            std::process::exit(code);
        });
        let settings = settings::Settings::load(cli.config.as_deref())?;
        let db = cli.db.clone().unwrap_or_else(|| settings.campaign.db.clone());
        match cli.command {
            Command::Diff(a) => cmd::diff::run(a, &settings, &db).await,
            Command::Meta(a) => cmd::meta::run(a, &settings, &db).await,
            Command::Debuginfo(a) => cmd::debuginfo::run(a, &settings, &db).await,
            Command::Conform(a) => cmd::conform::run(a, &db).await,
            Command::Localize(a) => cmd::localize::run(a, &db).await,
            Command::Classes(a) => cmd::classes::classes(a, &db).await,
            Command::Sample(a) => cmd::classes::sample(a, &db).await,
            Command::Show(a) => cmd::show::run(a, &db).await,
            Command::Replay(a) => cmd::replay::run(a, &db).await,
            Command::Repro(a) => cmd::repro::run(a, &db).await,
            Command::Reduce(a) => cmd::reduce::run(a, &db).await,
            Command::ReduceProbe(a) => cmd::reduce::probe(a).await,
            Command::ConformProbe(a) => cmd::conform_reduce::probe(a).await,
            Command::Report(a) => cmd::report::run(a, &db).await,
            Command::Reclassify(a) => cmd::reclassify::run(a, &db).await,
            Command::Triage(a) => cmd::triage::run(a, &db).await,
            Command::Backends => cmd::backends::run(&settings),
            Command::Engines(a) => cmd::engines::run(a).await,
            Command::Bench(a) => cmd::bench::run(a, &settings).await,
        }
    });
    // The program groups of the last program of each job (the keeper would
    // remove them after exit; doing it here keeps a run's groups to its run).
    doppel_core::process::kill_all_programs();
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
