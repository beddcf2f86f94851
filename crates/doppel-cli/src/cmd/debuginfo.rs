//! `doppel debuginfo`: debug-information validation of optimized code
//! (PLDI'20) over Csmith programs, C files and Rust files, in GDB and LLDB.

use crate::settings::Settings;
use clap::{Args, Subcommand};
use doppel_core::process::{Limits, Sandbox};
use doppel_core::store::RunFilter;
use doppel_debuggers::DebuggerConfig;
use doppel_debuginfo::campaign::{self, DebuginfoSpec, Progress};
use doppel_lang::prepare as subjects;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `doppel debuginfo [FLAGS] [PATH...]` runs a campaign; `probe` and
/// `reduce` work on single findings.
#[derive(Args, Debug, Clone)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DebuginfoCmd {
    #[command(subcommand)]
    pub action: Option<DebuginfoAction>,
    #[command(flatten)]
    pub run: DebuginfoArgs,
}

#[derive(Subcommand, Debug, Clone)]
pub enum DebuginfoAction {
    /// Does a variant still show a finding? The debugger part of a
    /// reduction's interestingness test (exit 0: yes, 1: no, 2: error).
    Probe(Box<ProbeArgs>),
    /// Reduce a stored finding with C-Vise (keeps the result in the store).
    Reduce(ReduceArgs),
    /// Bisect the culprit pass (Clang, rustc) or flags (GCC) of stored wrong values
    /// and put it into their class signature.
    Bisect(BisectArgs),
}

#[derive(Args, Debug, Clone)]
pub struct BisectArgs {
    /// Finding run ids.
    pub runs: Vec<i64>,
    /// Bisect the first finding of every debuginfo class of `--campaign`
    /// (the representatives `doppel classes` shows).
    #[arg(long)]
    pub per_class: bool,
    /// Campaign of `--per-class`.
    #[arg(long, default_value = "default")]
    pub campaign: String,
}

#[derive(Args, Debug, Clone)]
pub struct ProbeArgs {
    /// The variant; s is the line of its single marker comment `/*DOPPEL_S*/`.
    #[arg(long)]
    pub source: PathBuf,
    /// The barrier translation unit.
    #[arg(long)]
    pub barrier: PathBuf,
    #[arg(long)]
    pub variable: String,
    #[arg(long)]
    pub compiler: String,
    /// Level without the dash (`O2`).
    #[arg(long)]
    pub level: String,
    #[arg(long)]
    pub debugger: String,
    /// The -O0 reference value.
    #[arg(long = "expect-wrong")]
    pub reference: String,
    /// `same` (with --actual) or `any`.
    #[arg(long = "wrong-class", default_value = "any")]
    pub wrong_class: String,
    #[arg(long)]
    pub actual: Option<String>,
    /// Clang: the culprit pass the variant must still bisect to.
    #[arg(long)]
    pub culprit: Option<String>,
    /// GCC: a culprit flag that must still cure the variant (repeatable).
    #[arg(long = "culprit-flag")]
    pub culprit_flags: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct ReduceArgs {
    /// The finding's run id.
    pub run: i64,
    /// Time budget in seconds.
    #[arg(long, default_value_t = 900)]
    pub budget: u64,
    /// Working directory (default: next to the store).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct DebuginfoArgs {
    /// Compilers under test, comma-separated (`gcc,clang,clang-19`).
    #[arg(long, value_delimiter = ',')]
    pub compilers: Option<Vec<String>>,
    /// Optimization levels, comma-separated (`O1,O2,O3,Og,Os`).
    #[arg(long, value_delimiter = ',')]
    pub levels: Option<Vec<String>>,
    /// Debuggers, comma-separated (`gdb,lldb`).
    #[arg(long, value_delimiter = ',')]
    pub debuggers: Option<Vec<String>>,
    /// Variable kinds checked, comma-separated (`int,pointer,array,struct`).
    #[arg(long, value_delimiter = ',')]
    pub kinds: Option<Vec<String>>,
    /// Generate this many Csmith programs (seeds `--seed`, `--seed`+1, ...).
    #[arg(long)]
    pub csmith: Option<u64>,
    /// First Csmith seed, and the seed of the pair sampling.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Parallel jobs (programs at a time), each with its own debuggers.
    #[arg(long, value_parser = crate::settings::parse_jobs)]
    pub jobs: Option<usize>,
    /// At most this many actionable pairs per program (0: all).
    #[arg(long)]
    pub max_pairs: Option<usize>,
    /// Do not bisect culprit passes.
    #[arg(long)]
    pub no_bisect: bool,
    /// Also run valgrind memcheck on every seed (slow).
    #[arg(long)]
    pub seed_memcheck: bool,
    /// Record every wrong value as a finding, also those the DWARF at the
    /// pause address explains as false positives (for-header clause after
    /// loop rotation, row without is_stmt): the behaviour before issue 17.
    #[arg(long)]
    pub no_not_comparable: bool,
    /// Compare pointers as null or non-null only (not as symbol plus offset,
    /// which makes an unrelocated global address a wrong value).
    #[arg(long)]
    pub no_pointer_symbols: bool,
    /// Bisect the culprit of every wrong value, not only of compiler suspects.
    #[arg(long)]
    pub culprits_for_every_suspect: bool,
    /// Leave a wrong value unconfirmed without re-running the other debugger
    /// on that pair alone.
    #[arg(long)]
    pub no_rerun_unconfirmed: bool,
    /// Skip programs already checked in the store.
    #[arg(long)]
    pub resume: bool,
    /// Campaign name stored with every record.
    #[arg(long, default_value = "default")]
    pub campaign: String,
    /// Executable of a debugger backend, `NAME=PATH` (repeatable).
    #[arg(long = "debugger-path", value_name = "NAME=PATH")]
    pub debugger_paths: Vec<String>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub runner: super::campaign::RunnerArgs,
    /// The compiler of Rust programs (`.rs` files among the paths).
    #[arg(long, default_value = "rustc")]
    pub rustc: String,
    /// C or Rust (`.rs`, a `fn main` program; PLDI'20 section 6.1) files or directories (default: the bundled corpus/debuginfo, unless --csmith).
    pub paths: Vec<PathBuf>,
}

/// The campaign spec from settings and flags.
pub fn spec(a: &DebuginfoArgs, s: &Settings, db: &str) -> anyhow::Result<DebuginfoSpec> {
    let mut config = s.debuginfo.clone();
    if let Some(v) = &a.compilers {
        config.compilers = v.clone();
    }
    if let Some(v) = &a.levels {
        config.levels = v.iter().map(|l| l.trim_start_matches('-').to_string()).collect();
    }
    if let Some(v) = &a.debuggers {
        config.debuggers = v.clone();
    }
    if let Some(v) = &a.kinds {
        config.kinds = v.clone();
    }
    if let Some(v) = a.max_pairs {
        config.max_pairs = v;
    }
    if let Some(v) = a.seed {
        config.seed = v;
    }
    config.bisect &= !a.no_bisect;
    config.not_comparable &= !a.no_not_comparable;
    config.pointer_symbols &= !a.no_pointer_symbols;
    config.compiler_culprits_only &= !a.culprits_for_every_suspect;
    config.rerun_unconfirmed &= !a.no_rerun_unconfirmed;
    config.seed_memcheck |= a.seed_memcheck;
    config.validate().map_err(anyhow::Error::msg)?;
    let executables = super::diff::executables_with(s, &a.debugger_paths)?;
    let debugger_config = DebuggerConfig {
        action_timeout: config.action_timeout,
        warm: s.campaign.warm,
        limits: Limits {
            cpu_seconds: s.limits.cpu_seconds,
            memory_bytes: s.limits.memory_mb << 20,
            file_size_bytes: s.limits.file_size_mb << 20,
        },
        sandbox: Sandbox {
            isolate_network: s.campaign.isolate_network,
            ..Sandbox::default()
        },
        ..DebuggerConfig::default()
    };
    Ok(DebuginfoSpec {
        name: a.campaign.clone(),
        config,
        debugger_config,
        jobs: a.jobs.unwrap_or(s.campaign.jobs).max(1),
        resume: a.resume,
        cache_dir: subjects::cache_dir(db).join("debuginfo"),
        executables,
        rustc: a.rustc.clone(),
        tools: String::new(),
    })
}

pub async fn run(cmd: DebuginfoCmd, s: &Settings, db: &str) -> anyhow::Result<ExitCode> {
    match cmd.action {
        Some(DebuginfoAction::Probe(p)) => probe(*p).await,
        Some(DebuginfoAction::Reduce(r)) => reduce(r, db).await,
        Some(DebuginfoAction::Bisect(b)) => bisect(b, db).await,
        None => campaign(cmd.run, s, db).await,
    }
}

/// `doppel debuginfo probe`: exit 0 when the variant is interesting, 1
/// when not (the reason on stderr), 2 when the probe cannot run.
async fn probe(p: ProbeArgs) -> anyhow::Result<ExitCode> {
    use doppel_debuginfo::reduce::WrongClass;
    let wrong = match (p.wrong_class.as_str(), p.actual) {
        ("same", Some(actual)) => WrongClass::Same { actual },
        ("same", None) => anyhow::bail!("--wrong-class same needs --actual"),
        ("any", _) => WrongClass::Any,
        (other, _) => anyhow::bail!("--wrong-class is same or any, not '{other}'"),
    };
    let spec = doppel_debuginfo::probe::ProbeSpec {
        source: p.source,
        barrier: p.barrier,
        variable: p.variable,
        compiler: p.compiler,
        level: p.level.trim_start_matches('-').to_string(),
        debugger: p.debugger,
        reference: p.reference,
        wrong,
        culprit: p.culprit,
        culprit_flags: p.culprit_flags,
    };
    let config = DebuggerConfig {
        action_timeout: Duration::from_secs(20),
        ..DebuggerConfig::default()
    };
    match doppel_debuginfo::probe::probe(&spec, &config).await {
        Ok(None) => Ok(ExitCode::SUCCESS),
        Ok(Some(why)) => {
            eprintln!("not interesting: {why}");
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(2))
        }
    }
}

/// `doppel debuginfo reduce RUN`: C-Vise on a stored finding; the result
/// goes into the finding's record (`config.reduced`), so `doppel repro`
/// bundles it.
async fn reduce(a: ReduceArgs, db: &str) -> anyhow::Result<ExitCode> {
    use doppel_debuginfo::finding::{StoredFinding, reduce_finding};
    let store = super::open_store(db).await?;
    let mut r = super::load_run(&store, a.run).await?;
    let f = StoredFinding::from_record(&r).map_err(anyhow::Error::msg)?;
    let out = a.out.unwrap_or_else(|| {
        subjects::cache_dir(db)
            .join("debuginfo")
            .join("reduce")
            .join(a.run.to_string())
    });
    let exe = crate::cmd::doppel_exe()?;
    eprintln!(
        "reducing run {} ({} lines) in {} for at most {} s",
        a.run,
        f.source_text.lines().count(),
        out.display(),
        a.budget
    );
    let reduced = reduce_finding(&f, &out, Duration::from_secs(a.budget), &exe)
        .await
        .map_err(anyhow::Error::msg)?;
    println!(
        "reduced {} -> {} lines ({} -> {} bytes) in {:.0} s{}{}; s is line {}: {}",
        reduced.summary.lines_before,
        reduced.summary.lines_after,
        reduced.summary.bytes_before,
        reduced.summary.bytes_after,
        reduced.summary.elapsed_seconds,
        if reduced.summary.timed_out {
            " (budget ran out)"
        } else {
            ""
        },
        if reduced.summary.verified {
            ", verified"
        } else {
            ", NOT verified"
        },
        reduced.line,
        reduced.summary.path.display()
    );
    let mut record = doppel_debuginfo::record::FindingRecord::from_value(&r.config).map_err(anyhow::Error::msg)?;
    record.reduced = Some(reduced);
    r.config = record.to_value();
    store.insert_run(&r).await?;
    Ok(ExitCode::SUCCESS)
}

/// `doppel debuginfo bisect`: culprits of stored wrong values.
async fn bisect(a: BisectArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let mut runs = a.runs.clone();
    if a.per_class {
        let filter = RunFilter {
            technique: Some(campaign::TECHNIQUE.into()),
            campaign: Some(a.campaign.clone()),
        };
        runs.extend(
            store
                .classes(&filter)
                .await?
                .into_iter()
                .filter(|c| c.key.part("finding") == Some(doppel_debuginfo::triage::FindingKind::WrongValue.as_str()))
                .map(|c| c.first_run),
        );
    }
    if runs.is_empty() {
        anyhow::bail!("no findings given (run ids, or --per-class)");
    }
    let cache = subjects::cache_dir(db).join("debuginfo");
    let config = DebuggerConfig {
        action_timeout: Duration::from_secs(20),
        ..DebuggerConfig::default()
    };
    let mut failed = 0;
    for id in runs {
        let mut r = super::load_run(&store, id).await?;
        match doppel_debuginfo::culprit::bisect_record(&mut r, &cache, &config).await {
            Ok(c) => {
                store.insert_run(&r).await?;
                println!("run {id}: culprit {} ({} checks)", c.signature(), c.checks);
            }
            Err(e) => {
                failed += 1;
                println!("run {id}: not bisected: {e}");
            }
        }
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

async fn campaign(a: DebuginfoArgs, s: &Settings, db: &str) -> anyhow::Result<ExitCode> {
    let spec = spec(&a, s, db)?;
    for d in &spec.config.debuggers {
        let entry = doppel_debuggers::registry::all()
            .into_iter()
            .find(|e| e.name == d)
            .ok_or_else(|| anyhow::anyhow!("unknown debugger '{d}' (see `doppel backends`)"))?;
        if !entry.languages.contains(&doppel_core::Language::C) {
            anyhow::bail!("{d} does not debug C programs");
        }
        let mut config = spec.debugger_config.clone();
        config.executable = spec.executables.get(d).cloned();
        (entry.probe)(&config)?;
    }
    let options = a.runner.options(&spec.name, spec.jobs, spec.resume, db)?;
    let store = super::open_store(db).await?;
    let programs = doppel_debuginfo::inputs::programs(
        a.csmith,
        spec.config.seed,
        &spec.cache_dir.join("csmith"),
        &a.paths,
        &|w| eprintln!("warning: {w}"),
    )
    .await?;
    eprintln!(
        "doppel debuginfo: {} programs, compilers {}, levels {}, debuggers {}, {} job(s){}, store {db}",
        programs.len(),
        spec.config.compilers.join(","),
        spec.config.levels.join(","),
        spec.config.debuggers.join(","),
        spec.jobs,
        a.runner.describe()
    );
    let bar = super::progress_bar(a.quiet, "programs");
    let on_progress = |p: Progress| match p {
        Progress::Missing(missing) => {
            for m in missing {
                bar.suspend(|| eprintln!("warning: {m}; going on without it"));
            }
        }
        Progress::ProgramDone {
            name,
            outcome,
            findings,
        } => bar.set_message(format!("{name}: {outcome}, {findings} findings")),
        Progress::Finding { name, class } => bar.suspend(|| eprintln!("finding in {name}: {class}")),
    };
    let on_runner = super::campaign::on_progress(&bar, "programs");
    let (stats, run) = campaign::run_campaign(&spec, programs, &store, &options, &on_progress, &on_runner).await?;
    bar.finish_and_clear();
    let filter = RunFilter {
        technique: Some(campaign::TECHNIQUE.into()),
        campaign: Some(spec.name.clone()),
    };
    super::classes::print_summary(&store, &filter).await?;
    let verdicts: Vec<String> = stats.verdicts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let rejected: Vec<String> = stats.rejected.iter().map(|(k, n)| format!("{k} {n}")).collect();
    eprintln!(
        "this invocation: {} programs ({} rejected: {}), {} references, {} sessions ({:.1} s), checks: {}; {} findings, {} bisections, {} re-runs of one pair, {} skipped (resume){}",
        stats.programs,
        stats.rejected.values().sum::<usize>(),
        if rejected.is_empty() {
            "none".to_string()
        } else {
            rejected.join(", ")
        },
        stats.references,
        stats.sessions,
        stats.session_seconds,
        verdicts.join(", "),
        stats.findings,
        stats.bisections,
        stats.reruns,
        stats.skipped,
        super::not_stored(stats.store_errors)
    );
    Ok(super::campaign::finish(&run, "programs"))
}
