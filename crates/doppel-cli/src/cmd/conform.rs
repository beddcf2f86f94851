//! `doppel conform`: N+1-version differential testing of JavaScript engines
//! with engine262 as the executable specification (JEST, ICSE 2021), and
//! `doppel conform run TESTS...`: given test262-format tests on every
//! engine (the conformance matrix). Both run on the core campaign runner,
//! store one record per test plus a summary (matrix, groups, SBFL), and
//! print the matrix and the groups. Flags and wiring only: the technique is
//! `doppel-conform`.

use super::campaign::{RunnerArgs, finish, on_progress, parse_budget};
use super::conform_print::{print_summary, write_generated};
use super::{not_stored, open_store, progress_bar};
use doppel_conform::group::{KnownIndex, group};
use doppel_conform::matrix::{self, MatrixCache, Tally, load};
use doppel_conform::technique_campaign::{Campaign, summary_run};
use doppel_conform::technique_record::{ConformConfig, TestSource};
use doppel_conform::verdict::panel::{ConformTest, Panel, PanelConfig};
use doppel_engines::{EnginesConfig, RunOptions, Script};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `doppel conform` and its subcommands.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ConformCmd {
    #[command(subcommand)]
    pub sub: Option<ConformSub>,
    #[command(flatten)]
    pub generate: GenerateArgs,
}

/// The subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum ConformSub {
    /// Run test262-format tests (files or directories) on every engine and engine262: the conformance matrix.
    Run(RunArgs),
}

/// What both forms share.
#[derive(clap::Args, Debug, Clone)]
pub struct PanelArgs {
    /// Engines to test (comma-separated registry names, see `doppel engines`); default: every installed one.
    #[arg(long, value_delimiter = ',')]
    pub engines: Vec<String>,
    /// Parallel jobs (each with its own panel of engine workers).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Campaign name.
    #[arg(long, default_value = "conform")]
    pub campaign: String,
    /// Skip tests whose run with these engines is stored.
    #[arg(long)]
    pub resume: bool,
    /// Do not measure engine262's semantics coverage (faster; no localization, no known-vs-new).
    #[arg(long)]
    pub no_coverage: bool,
    /// Timeout of one engine run, seconds (engine262 gets three times as long).
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub runner: RunnerArgs,
}

/// `doppel conform run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// test262-format test files or directories.
    #[arg(required = true)]
    pub tests: Vec<PathBuf>,
    /// The test262 `harness/` directory (default: the nearest one above each test).
    #[arg(long)]
    pub harness: Option<PathBuf>,
    /// Save the results as this panel's cached test262 matrix (known vs new).
    #[arg(long)]
    pub save_matrix: bool,
    /// Run every Nth test only (an evenly spread sample).
    #[arg(long, default_value_t = 1)]
    pub stride: usize,
    #[command(flatten)]
    pub panel: PanelArgs,
}

/// `doppel conform` (generation).
#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// Time budget (`90s`, `30m`, `2h`): no new test after it.
    #[arg(long, value_parser = parse_budget, default_value = "1h")]
    pub budget: Duration,
    /// The campaign's seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where the generated tests are written (test262 format).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The ESMeta grammar (default: ../shared/data/ecmascript-grammar/grammar.json).
    #[arg(long)]
    pub grammar: Option<PathBuf>,
    #[command(flatten)]
    pub panel: PanelArgs,
}

fn panel_config(a: &PanelArgs) -> PanelConfig {
    let secs = a.timeout.max(1);
    PanelConfig {
        engines: a.engines.clone(),
        coverage: !a.no_coverage,
        run: RunOptions {
            timeout: Duration::from_secs(secs),
            output_cap: 16 * 1024,
        },
        spec_run: RunOptions {
            timeout: Duration::from_secs(secs * 3),
            output_cap: 16 * 1024,
        },
    }
}

/// Entry point.
pub async fn run(cmd: ConformCmd, db: &str) -> anyhow::Result<ExitCode> {
    match cmd.sub {
        Some(ConformSub::Run(a)) => run_files(a, db).await,
        None => generate(cmd.generate, db).await,
    }
}

async fn run_files(a: RunArgs, db: &str) -> anyhow::Result<ExitCode> {
    let mut tests = Vec::new();
    let mut skipped = Vec::new();
    let files = load::discover(&a.tests);
    anyhow::ensure!(!files.is_empty(), "no .js files under {:?}", a.tests);
    for (path, root) in files.into_iter().step_by(a.stride.max(1)) {
        match load::load(&path, &load::name_of(&path, &root), a.harness.as_deref()) {
            Ok(t) => tests.push(t),
            Err(s) => skipped.push(s.to_string()),
        }
    }
    let suite = a
        .tests
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    campaign(
        tests,
        skipped,
        &a.panel,
        TestSource::Files,
        0,
        db,
        a.save_matrix.then_some(suite),
        None,
    )
    .await
}

/// The programs of the generation phase. Until the coverage-guided
/// generator lands, the seeds of grammar synthesis (one program per
/// reachable alternative), each judged by engine262's outcome.
fn generated(a: &GenerateArgs) -> anyhow::Result<Vec<ConformTest>> {
    let path = a.grammar.clone().unwrap_or_else(|| {
        let p = PathBuf::from(doppel_conform::DEFAULT_GRAMMAR_PATH);
        if p.exists() {
            p
        } else {
            doppel_engines::config::repo_root().join(p)
        }
    });
    let grammar = doppel_conform::Grammar::load(&path)?;
    let synthesis = doppel_conform::synthesize(&grammar, "Script").map_err(|e| anyhow::anyhow!("synthesis: {e}"))?;
    eprintln!(
        "synthesis: {} seed programs, syntax coverage {}/{} alternatives (grammar level, not filtered by a parser)",
        synthesis.seeds.len(),
        synthesis.coverage.reached,
        synthesis.coverage.reachable
    );
    Ok(synthesis
        .seeds
        .iter()
        .enumerate()
        .map(|(i, s)| ConformTest {
            name: format!("seed-{i:04}.js"),
            text: s.program.clone(),
            script: Script::new(s.program.clone()),
            expected: None,
        })
        .collect())
}

async fn generate(a: GenerateArgs, db: &str) -> anyhow::Result<ExitCode> {
    let tests = generated(&a)?;
    let mut panel = a.panel.clone();
    let deadline = panel.runner.deadline.map_or(a.budget, |d| d.min(a.budget));
    panel.runner.deadline = Some(deadline);
    campaign(
        tests,
        Vec::new(),
        &panel,
        TestSource::Generated,
        a.seed,
        db,
        None,
        a.out.clone(),
    )
    .await
}

#[allow(clippy::too_many_arguments)]
async fn campaign(
    tests: Vec<ConformTest>,
    skipped: Vec<String>,
    a: &PanelArgs,
    source: TestSource,
    seed: u64,
    db: &str,
    save_matrix: Option<String>,
    out: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let engines = EnginesConfig::default();
    let config = ConformConfig {
        seed,
        source,
        panel: panel_config(a),
    };
    let tally = Arc::new(Mutex::new(Tally::default()));
    let c = Campaign {
        name: a.campaign.clone(),
        config: config.clone(),
        engines: engines.clone(),
        tally: tally.clone(),
    };
    let id = c.identity()?;
    let families = {
        let mut f: Vec<_> = id.members.iter().map(|m| m.info.family).collect();
        f.sort();
        f.dedup();
        f.len()
    };
    eprintln!(
        "conform: {} tests ({} skipped) on {} engines in {families} families plus engine262 {}",
        tests.len(),
        skipped.len(),
        id.members.len(),
        id.spec.version
    );
    for m in &id.missing {
        eprintln!("left out: {} ({})", m.engine, m.reason);
    }
    let store = open_store(db).await?;
    let items: Vec<_> = tests.iter().cloned().map(|t| c.item(&id, t)).collect();
    let options = a.runner.options(&a.campaign, a.jobs.max(1), a.resume, db)?;
    let bar = progress_bar(a.quiet, "tests");
    let stats = doppel_core::campaign::run(&c, &items, &store, &options, &on_progress(&bar, "tests")).await?;
    bar.finish_and_clear();
    let tally = std::mem::take(&mut *tally.lock().unwrap_or_else(|e| e.into_inner()));
    // The catalogue (coverage denominators and algorithm names) from a
    // panel of engine262 alone: the campaign's panels are shut down.
    let catalogue = if config.panel.coverage {
        let mut p = Panel::new(&config.panel, &engines)?;
        let cat = p.catalogue().await.map_err(|e| eprintln!("no catalogue: {e}")).ok();
        p.shutdown().await;
        cat
    } else {
        None
    };
    let cache_path = matrix::cache_path(&engines.cache, &id.spec, &id.members);
    if let (Some(suite), Some(_)) = (&save_matrix, &catalogue) {
        let cache = MatrixCache {
            suite: suite.clone(),
            engines: std::iter::once(id.spec.clone())
                .chain(id.members.iter().map(|m| m.info.clone()))
                .collect(),
            observed: tally.observed.clone(),
        };
        match matrix::write_cache(&cache_path, &cache) {
            Ok(()) => eprintln!("test262 matrix cached: {}", cache_path.display()),
            Err(e) => eprintln!("error: the matrix cache was not written: {e}"),
        }
    }
    let known = match (&catalogue, matrix::read_cache(&cache_path)) {
        (Some(cat), Ok(Some(m))) => Some(KnownIndex::build(&m.observed, cat)),
        (_, Err(e)) => {
            eprintln!("error: the test262 matrix cache is unreadable: {e}");
            None
        }
        _ => None,
    };
    if known.is_none() {
        eprintln!(
            "known vs new: no cached test262 matrix for these engines (run `doppel conform run <test262>/test --save-matrix` with the same engines)"
        );
    }
    let mut summary = tally.summary(
        config,
        id.members.clone(),
        id.missing.clone(),
        &skipped,
        catalogue.as_ref(),
    );
    let (groups, localizations) = group(&tally.observed, catalogue.as_ref(), known.as_ref(), 10);
    summary.groups = groups;
    summary.localizations = localizations;
    if let Some(dir) = &out {
        write_generated(dir, &tests, &tally)?;
    }
    print_summary(&summary);
    let stored = store.insert_run(&summary_run(&a.campaign, summary, &id)?).await;
    match stored {
        Ok(rid) => {
            println!("summary stored as run {rid} (doppel show {rid}); doppel report draws the matrix and groups")
        }
        Err(e) => eprintln!("error: the summary was NOT STORED: {e:#}"),
    }
    println!(
        "{} tests stored, {} findings{}",
        stats.runs,
        stats.findings,
        not_stored(stats.store_errors)
    );
    Ok(finish(&stats, "tests"))
}
