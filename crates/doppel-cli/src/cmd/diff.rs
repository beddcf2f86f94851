//! `doppel diff`: a differential campaign over C or JavaScript programs.

use crate::settings::Settings;
use anyhow::Context;
use clap::Args;
use doppel_core::process::{Limits, Sandbox};
use doppel_core::store::RunFilter;
use doppel_debuggers::DebuggerConfig;
use doppel_differential::campaign::{self, CampaignSpec};
use doppel_differential::{ActionWeights, BreakpointLines};
use doppel_lang::c::BuildRecipe;
use doppel_lang::prepare as subjects;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug, Clone, Default)]
pub struct DiffArgs {
    /// Debuggers to compare, comma-separated (at least two).
    #[arg(long, value_delimiter = ',')]
    pub debuggers: Option<Vec<String>>,
    /// Runs (seeds) per program.
    #[arg(long)]
    pub runs_per_program: Option<u64>,
    /// First seed; run i of a program uses seed + i.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Parallel jobs, each with its own debugger processes.
    #[arg(long, value_parser = crate::settings::parse_jobs)]
    pub jobs: Option<usize>,
    /// Write the HTML report into this directory at the end.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Skip runs already in the store (same program, seed, configuration and debuggers).
    #[arg(long)]
    pub resume: bool,
    /// Campaign name stored with every run.
    #[arg(long, default_value = "default")]
    pub campaign: String,
    /// Compiler and flags (default `gcc -O0 -g`).
    #[arg(long)]
    pub compiler: Option<String>,
    /// Breakpoints per source line (DBDB: 0.1).
    #[arg(long)]
    pub breakpoints_per_line: Option<f64>,
    /// Maximum breakpoints per run.
    #[arg(long)]
    pub max_breakpoints: Option<usize>,
    /// Probability of removing a breakpoint right after setting it (DBDB: 0.2).
    #[arg(long)]
    pub removal_probability: Option<f64>,
    /// Lines breakpoints are drawn from: `all` (DBDB) or `code` (lines with
    /// at least one token: no blank or comment lines).
    #[arg(long)]
    pub breakpoint_lines: Option<String>,
    /// Go on past divergences that a known policy explains when the
    /// debuggers can be brought back to one state (`slide_vs_reject`: the
    /// breakpoint is removed again), recording each as a policy note (on by
    /// default; `--continue-past-policies=false`: DBDB's stop at the first
    /// divergence). Part of the run key.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub continue_past_policies: Option<bool>,
    /// With continuation: also go on past `return_lands_mid_line` and
    /// `resume_completes_interrupted_step` by issuing the action once more to
    /// the debugger that stopped short, when that realigns them (on by
    /// default). Part of the run key.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub realign_steps: Option<bool>,
    /// With continuation: do not draw step out while paused in `main`
    /// itself, where it can only end the run on `step_out_of_main` (on by
    /// default). Part of the run key.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub avoid_step_out_of_main: Option<bool>,
    /// With continuation: a run ends at its N-th finding (a divergence no policy explains) or
    /// at the first after which the debuggers do not stand in one state;
    /// the findings before it are noted and stored as runs of their own
    /// (default 5; 1: end at the first finding, DBDB). Part of the run key.
    #[arg(long, value_name = "N")]
    pub findings_per_run: Option<usize>,
    /// Run each program once in every debugger with no breakpoint before a
    /// run's actions; a program that ends differently in them (exit status,
    /// signal, output) is recorded as not comparable, not run (on by
    /// default; `--control-run=false`: the runs of before). Part of the run
    /// key. In `doppel meta`: the initial program (twice) and each follow-up
    /// program run with no breakpoint in the debugger under test; a test
    /// whose programs end differently is not comparable, not a violation.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub control_run: Option<bool>,
    /// Maximum execution actions per run (DBDB: 20).
    #[arg(long)]
    pub max_actions: Option<usize>,
    /// Action weights, e.g. `resume=1,step_in=2,step_over=2,step_out=1`.
    #[arg(long)]
    pub weights: Option<String>,
    /// Per-action timeout in milliseconds.
    #[arg(long)]
    pub action_timeout_ms: Option<u64>,
    /// Compare columns where every debugger reports them.
    #[arg(long)]
    pub compare_columns: bool,
    /// Switch off normalization rules (comma-separated names, or `all`).
    #[arg(long)]
    pub no_normalize: Option<String>,
    /// Executable of a debugger, `NAME=PATH` (repeatable), e.g. `lldb=/usr/bin/lldb-dap-22`.
    #[arg(long = "debugger-path", value_name = "NAME=PATH")]
    pub debugger_paths: Vec<String>,
    /// Start a fresh debugger process for every run (DBDB's way) instead of warm reuse.
    #[arg(long)]
    pub cold: bool,
    /// Let both debuggers load separate debug info of system libraries
    /// (libc6-dbg): stepping then enters the C library's sources, and every
    /// run re-reads that debug info in GDB (much slower).
    #[arg(long)]
    pub system_debug_info: bool,
    /// Use at most this many programs: the first in path order.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Use this many programs spread evenly over the path order (a
    /// deterministic sample of a large suite such as test262).
    #[arg(long, conflicts_with = "limit")]
    pub sample: Option<usize>,
    /// Hide the progress bar.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub runner: super::campaign::RunnerArgs,
    #[command(flatten)]
    pub reduce: super::reduce::ReduceFlags,
    /// C files or directories (default: the bundled corpus).
    pub paths: Vec<PathBuf>,
}

/// The DBDB generator knobs from settings and flags.
pub fn diff_config(a: &DiffArgs, s: &Settings) -> anyhow::Result<doppel_differential::DiffConfig> {
    let mut diff = s.diff.clone();
    if let Some(v) = a.breakpoints_per_line {
        diff.breakpoints_per_line = v;
    }
    if let Some(v) = a.max_breakpoints {
        diff.max_breakpoints = v;
    }
    if let Some(v) = a.removal_probability {
        diff.removal_probability = v;
    }
    if let Some(v) = &a.breakpoint_lines {
        diff.breakpoint_lines = BreakpointLines::parse(v).map_err(anyhow::Error::msg)?;
    }
    if let Some(v) = a.max_actions {
        diff.max_actions = v;
    }
    if let Some(v) = a.continue_past_policies {
        diff.continue_past_policies = v;
    }
    if let Some(v) = a.realign_steps {
        diff.realign_steps = v;
    }
    if let Some(v) = a.avoid_step_out_of_main {
        diff.avoid_step_out_of_main = v;
    }
    if let Some(v) = a.control_run {
        diff.control_run = v;
    }
    if let Some(v) = a.findings_per_run {
        diff.findings_per_run = v;
    }
    if let Some(w) = &a.weights {
        diff.weights = ActionWeights::parse(w).map_err(anyhow::Error::msg)?;
    }
    if let Some(v) = a.action_timeout_ms {
        diff.action_timeout_ms = v;
    }
    if a.compare_columns {
        diff.compare_columns = true;
    }
    if let Some(n) = &a.no_normalize {
        diff.normalization.disable(n).map_err(anyhow::Error::msg)?;
    }
    diff.validate().map_err(anyhow::Error::msg)?;
    Ok(diff)
}

/// The backend settings from settings and flags (`action_timeout` from `diff`).
pub fn debugger_config(a: &DiffArgs, s: &Settings, diff: &doppel_differential::DiffConfig) -> DebuggerConfig {
    DebuggerConfig {
        action_timeout: Duration::from_millis(diff.action_timeout_ms),
        warm: s.campaign.warm && !a.cold,
        limits: Limits {
            cpu_seconds: s.limits.cpu_seconds,
            memory_bytes: s.limits.memory_mb << 20,
            file_size_bytes: s.limits.file_size_mb << 20,
        },
        sandbox: Sandbox {
            isolate_network: s.campaign.isolate_network,
            ..Sandbox::default()
        },
        system_debug_info: s.campaign.system_debug_info || a.system_debug_info,
        ..DebuggerConfig::default()
    }
}

/// The executable overrides from settings and `--debugger-path NAME=PATH`.
pub fn executables(a: &DiffArgs, s: &Settings) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    executables_with(s, &a.debugger_paths)
}

/// The executable overrides from settings and `NAME=PATH` pairs (the
/// `--debugger-path` flags of any subcommand).
pub fn executables_with(s: &Settings, pairs: &[String]) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let mut executables = s.campaign.executables.clone();
    for kv in pairs {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--debugger-path wants NAME=PATH, got '{kv}'"))?;
        crate::settings::known_debugger(k.trim()).with_context(|| format!("--debugger-path {kv}"))?;
        executables.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(executables)
}

/// Builds the campaign spec from settings and flags.
pub fn spec(a: &DiffArgs, s: &Settings) -> anyhow::Result<CampaignSpec> {
    let diff = diff_config(a, s)?;
    let debuggers = a.debuggers.clone().unwrap_or_else(|| s.campaign.debuggers.clone());
    if debuggers.len() < 2 {
        anyhow::bail!(
            "differential testing needs at least two debuggers (got {})",
            debuggers.join(",")
        );
    }
    let debugger = debugger_config(a, s, &diff);
    let executables = executables(a, s)?;
    Ok(CampaignSpec {
        executables,
        name: a.campaign.clone(),
        debuggers,
        debugger,
        diff,
        jobs: a.jobs.unwrap_or(s.campaign.jobs).max(1),
        resume: a.resume,
        tools: Vec::new(),
    })
}

pub async fn run(a: DiffArgs, s: &Settings, db: &str) -> anyhow::Result<ExitCode> {
    let mut spec = spec(&a, s)?;
    // A missing debugger is one clear error before anything runs; the
    // probed executables and versions are part of every run key.
    campaign::probe_tools(&mut spec)?;
    let options = a.runner.options(&spec.name, spec.jobs, spec.resume, db)?;
    let store = super::open_store(db).await?;
    let language = doppel_debuggers::registry::language_of(&spec.debuggers)?;
    let paths = if a.paths.is_empty() {
        vec![subjects::default_corpus_for(language)]
    } else {
        a.paths.clone()
    };
    let recipe =
        BuildRecipe::parse(a.compiler.as_deref().unwrap_or(&s.campaign.compiler)).map_err(anyhow::Error::msg)?;
    let prepared = subjects::prepare_for(
        language,
        &paths,
        db,
        &recipe,
        subjects::Selection::from_flags(a.limit, a.sample),
    )
    .await?;
    let failed_builds = prepared.iter().filter(|p| p.error.is_some()).count();
    let runs = a.runs_per_program.unwrap_or(s.campaign.runs_per_program);
    let first = a.seed.unwrap_or(s.campaign.seed);
    let seeds: Vec<u64> = (0..runs).map(|i| first.wrapping_add(i)).collect();
    eprintln!(
        "doppel diff: {} programs ({} cannot run: they do not compile or parse), {} seeds each, debuggers {}, {} job(s){}, store {db}",
        prepared.len(),
        failed_builds,
        seeds.len(),
        spec.debuggers.join(","),
        spec.jobs,
        a.runner.describe()
    );

    let bar = super::progress_bar(a.quiet, "runs");
    let on_progress = super::campaign::on_progress(&bar, "runs");
    let stats = campaign::run_campaign(&spec, prepared, &seeds, &store, &options, &on_progress).await?;
    bar.finish_and_clear();

    let filter = RunFilter {
        technique: Some(campaign::TECHNIQUE.into()),
        campaign: Some(spec.name.clone()),
    };
    super::classes::print_summary(&store, &filter).await?;
    eprintln!(
        "this invocation: {} runs, {} divergences, {} skipped (resume){}",
        stats.runs,
        stats.findings,
        stats.skipped,
        super::not_stored(stats.store_errors)
    );
    // The findings runs went on past (`findings_per_run`) are records of
    // their own, counted among the runs above.
    let noted = store
        .run_ids_by_key(&filter, "%#finding%", i64::MAX as usize)
        .await?
        .len();
    if noted > 0 {
        eprintln!(
            "of the campaign's stored runs, {noted} are findings a run went on past (key ...#finding<k>), \
             each stored as a run that ends there"
        );
    }
    super::reduce::after_campaign(&store, db, &filter, &a.reduce).await?;
    if let Some(dir) = &a.report {
        let index = super::report::write(&store, &filter, dir, &spec).await?;
        eprintln!("report: {}", index.display());
    }
    Ok(super::campaign::finish(&stats, "runs"))
}
