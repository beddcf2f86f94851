//! `doppel meta`: interactive metamorphic testing of one debugger
//! (ISSTA'19) over C or JavaScript programs.

use super::diff::{self, DiffArgs};
use crate::settings::Settings;
use clap::Args;
use doppel_core::store::RunFilter;
use doppel_lang::c::BuildRecipe;
use doppel_lang::prepare as subjects;
use doppel_metamorphic::campaign::{self, MetaSpec};
use doppel_metamorphic::program::Builder;
use doppel_metamorphic::{MetaConfig, Transformation};
use std::process::ExitCode;

#[derive(Args, Debug, Clone)]
pub struct MetaArgs {
    /// The debugger under test (`gdb`, `lldb`, `node`, `chromium`, `firefox`).
    #[arg(long)]
    pub debugger: String,
    /// Metamorphic tests per sequence (ISSTA'19: 5); each follow-up input
    /// is the next test's initial input.
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Transformations to choose from, comma-separated, or `all`:
    /// add_breakpoint, replace_continue, breakpoint_sliding,
    /// insert_dead_code, remove_dead_code, add_unused_parameter,
    /// insert_no_op, literal_to_expression.
    #[arg(long)]
    pub transformations: Option<String>,
    /// Initial runs: the DBDB generator's flags, campaign flags and paths
    /// (as for `doppel diff`; `--debuggers` does not apply).
    #[command(flatten)]
    pub run: DiffArgs,
}

/// Builds the campaign spec from settings and flags.
pub fn spec(a: &MetaArgs, s: &Settings) -> anyhow::Result<MetaSpec> {
    if a.run.debuggers.is_some() {
        anyhow::bail!("doppel meta tests one debugger against itself: use --debugger NAME");
    }
    let mut initial = diff::diff_config(&a.run, s)?;
    // One debugger never diverges from itself within a run, so the switch
    // is moot here; off keeps the metamorphic run keys as they were.
    initial.continue_past_policies = false;
    // The control run compares tools; the initial runs here call the engine
    // with one debugger, which never runs it. Off keeps the run keys.
    initial.control_run = false;
    let mut debugger_config = campaign::debugger_config(&diff::debugger_config(&a.run, s, &initial));
    if let Some(exe) = diff::executables(&a.run, s)?.get(&a.debugger) {
        debugger_config.executable = Some(exe.clone());
    }
    let transformations = match &a.transformations {
        Some(t) => Transformation::parse_list(t).map_err(anyhow::Error::msg)?,
        None => s.meta.transformations()?,
    };
    let meta = MetaConfig {
        rounds: a.rounds.unwrap_or(s.meta.rounds),
        transformations,
        initial,
        // `--control-run[=false]` is the differential flag's; here it runs
        // the initial program (twice) and each follow-up program with no
        // breakpoint in the debugger under test (doppel_metamorphic::control).
        control_run: a.run.control_run.unwrap_or(s.meta.control_run),
    };
    meta.validate().map_err(anyhow::Error::msg)?;
    Ok(MetaSpec {
        name: a.run.campaign.clone(),
        debugger: a.debugger.clone(),
        debugger_config,
        meta,
        jobs: a.run.jobs.unwrap_or(s.campaign.jobs).max(1),
        resume: a.run.resume,
        tool: None,
    })
}

/// `, absorb_breakpoint_restop on` for LLDB (the one backend that honours
/// it), else nothing.
pub fn absorb_note(debugger: &str, cfg: &doppel_debuggers::DebuggerConfig) -> &'static str {
    if debugger == "lldb" && cfg.absorb_breakpoint_restop {
        ", absorb_breakpoint_restop on (LLDB's re-stop at a breakpoint a step ended on is absorbed)"
    } else {
        ""
    }
}

pub async fn run(a: MetaArgs, s: &Settings, db: &str) -> anyhow::Result<ExitCode> {
    let mut spec = spec(&a, s)?;
    // A missing debugger is one clear error before anything runs; its
    // probed executable and version are part of every key.
    campaign::probe_tool(&mut spec)?;
    let options = a.run.runner.options(&spec.name, spec.jobs, spec.resume, db)?;
    let store = super::open_store(db).await?;
    let language = doppel_debuggers::registry::language_of(std::slice::from_ref(&spec.debugger))?;
    let paths = if a.run.paths.is_empty() {
        vec![subjects::default_corpus_for(language)]
    } else {
        a.run.paths.clone()
    };
    let recipe =
        BuildRecipe::parse(a.run.compiler.as_deref().unwrap_or(&s.campaign.compiler)).map_err(anyhow::Error::msg)?;
    let prepared = subjects::prepare_for(
        language,
        &paths,
        db,
        &recipe,
        subjects::Selection::from_flags(a.run.limit, a.run.sample),
    )
    .await?;
    let runs = a.run.runs_per_program.unwrap_or(s.campaign.runs_per_program);
    let first = a.run.seed.unwrap_or(s.campaign.seed);
    let seeds: Vec<u64> = (0..runs).map(|i| first.wrapping_add(i)).collect();
    eprintln!(
        "doppel meta: {} programs ({} cannot run), {} seeds each, debugger {}, up to {} rounds, {} job(s){}, store {db}{}",
        prepared.len(),
        prepared.iter().filter(|p| p.error.is_some()).count(),
        seeds.len(),
        spec.debugger,
        spec.meta.rounds,
        spec.jobs,
        a.run.runner.describe(),
        absorb_note(&spec.debugger, &spec.debugger_config)
    );
    let builder = Builder::new(
        subjects::cache_dir(db).join("meta-sources"),
        subjects::cache_dir(db),
        spec.debugger_config.limits,
    );

    let bar = super::progress_bar(a.run.quiet, "sequences");
    let on_progress = super::campaign::on_progress(&bar, "sequences");
    let stats = campaign::run_campaign(&spec, prepared, &seeds, &store, &builder, &options, &on_progress).await?;
    bar.finish_and_clear();
    let filter = RunFilter {
        technique: Some(campaign::TECHNIQUE.into()),
        campaign: Some(spec.name.clone()),
    };
    super::classes::print_summary(&store, &filter).await?;
    eprintln!(
        "this invocation: {} sequences, {} metamorphic tests, {} warnings, {} inconclusive, {} not comparable (control run), {} skipped (resume){}",
        stats.items,
        stats.runs,
        stats.findings,
        stats.inconclusive,
        stats.not_comparable,
        stats.skipped,
        super::not_stored(stats.store_errors)
    );
    super::reduce::after_campaign(&store, db, &filter, &a.run.reduce).await?;
    Ok(super::campaign::finish(&stats, "sequences"))
}
