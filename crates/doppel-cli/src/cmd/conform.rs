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
use anyhow::Context;
use doppel_conform::group::{KnownIndex, group};
use doppel_conform::inject::Limits;
use doppel_conform::inject::campaign::{Prepared, plain, prepare};
use doppel_conform::matrix::{self, MatrixCache, Tally, load};
use doppel_conform::technique_campaign::{Campaign, summary_run};
use doppel_conform::technique_record::{ConformConfig, TestSource};
use doppel_conform::verdict::panel::{ConformTest, Panel, PanelConfig};
use doppel_engines::{EnginesConfig, RunOptions};
use std::collections::BTreeMap;
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
    /// The transpilers (babel, swc, esbuild, typescript: their output runs in node's V8) are engines
    /// here and on by default when installed (scripts/deps/setup-transpilers.sh); a missing one is
    /// left out with its reason. They vote apart from the engines: a transpiler failing where every
    /// engine family and the untranspiled v8-node agree with engine262 is a transpiler-bug candidate.
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
    /// Localize with each test's whole engine262 coverage, the harness's
    /// (or the host's) included, instead of subtracting what its prelude alone covers.
    #[arg(long)]
    pub keep_harness_coverage: bool,
    /// Timeout of one engine run, seconds (engine262 gets three times as long).
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Do not reduce each failure group's representative at the end (issue 15 part 7b).
    #[arg(long)]
    pub no_reduce: bool,
    /// Wall-time budget of the reduction of one group's representative, seconds.
    #[arg(long, default_value_t = 60)]
    pub reduce_seconds: u64,
    /// Each reduction probe starts its own panel instead of asking the warm
    /// one the reducing doppel keeps (the behaviour before the warm probe,
    /// for comparison: about 9x fewer probes per second).
    #[arg(long)]
    pub cold_probe: bool,
    /// The algorithm known to be faulty (an engine262 algorithm id such as
    /// `ArrayAccumulation_SpreadElement`, e.g. a seeded fault): every
    /// localization then reports its rank (JEST §IV, rank of the true fault).
    #[arg(long)]
    pub true_fault: Option<String>,
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
    /// Write engine262's suite coverage (the ids of the covered algorithms
    /// and steps, JSON) to this file, to compare two suites step by step
    /// (tests skipped by `--resume` are not in it).
    #[arg(long)]
    pub coverage_out: Option<PathBuf>,
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
    /// Judge generated programs by engine262's outcome only, without the
    /// assertions on their final state (JEST §III-D) that are injected by default.
    #[arg(long)]
    pub no_inject: bool,
    /// Try the grammar seeds as JEST synthesizes them only, without their
    /// activated variants (values of the right shape, drivers that call what
    /// a seed declares), for comparison.
    #[arg(long)]
    pub no_activate: bool,
    /// The evaluation budget of a candidate in the generator's engine262, in
    /// Evaluate() calls (deterministic): a candidate that runs past it is not
    /// kept. Judging keeps engine262's default budget (2,000,000) and `--timeout`.
    #[arg(long, default_value_t = 200_000)]
    pub candidate_budget: u64,
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
        subtract_harness: !a.keep_harness_coverage,
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
    eprintln!("{} tests, {} files skipped", tests.len(), skipped.len());
    let mut session = Session::open(&a.panel, TestSource::Files, 0, db).await?;
    let code = session.judge(tests, None).await?;
    session
        .finish(a.save_matrix.then_some(suite), skipped, a.coverage_out.as_deref())
        .await?;
    Ok(code)
}

fn grammar_path(a: &GenerateArgs) -> PathBuf {
    a.grammar.clone().unwrap_or_else(|| {
        let p = PathBuf::from(doppel_conform::DEFAULT_GRAMMAR_PATH);
        if p.exists() {
            p
        } else {
            doppel_engines::config::repo_root().join(p)
        }
    })
}

/// JEST's two phases, in rounds until the budget is spent: the
/// coverage-guided generator (grammar seeds, built-in calls, mutants; each
/// kept program adds engine262 coverage) for a slice of the budget, then
/// the kept programs on the panel (each judged by engine262's outcome).
async fn generate(a: GenerateArgs, db: &str) -> anyhow::Result<ExitCode> {
    use doppel_conform::{Generator, GeneratorConfig};
    let started = std::time::Instant::now();
    let deadline = started + a.budget;
    let grammar = std::sync::Arc::new(doppel_conform::Grammar::load(&grammar_path(&a))?);
    let engines = EnginesConfig::default();
    let gen_config = GeneratorConfig {
        grammar: Some(grammar),
        run: RunOptions {
            timeout: Duration::from_secs(a.panel.timeout.max(1)),
            output_cap: 16 * 1024,
        },
        attempts_per_call: 50,
        activate: !a.no_activate,
        engines: engines.clone(),
        ..GeneratorConfig::default()
    };
    let mut generator = Generator::new(gen_config, a.seed).map_err(|e| anyhow::anyhow!("generator: {e}"))?;
    let mut spec = doppel_engines::engine::engine262::Engine262::with_coverage_budget(&engines, a.candidate_budget)?;
    // Injection runs each kept program three times (inspected, then as its
    // test262 test with the harness, once with the clock moved): without
    // coverage and its unoptimized node, at engine262's default budget.
    let mut inject_spec = doppel_engines::engine::engine262::Engine262::new(&engines, false)?;
    // Injection writes test262 tests: test262's own harness files run them.
    let harness =
        if a.no_inject {
            None
        } else {
            Some(doppel_conform::test262::harness::Harness::locate().map_err(|e| {
                anyhow::anyhow!("{e} (or pass --no-inject to judge programs by engine262's outcome only)")
            })?)
        };
    let mut injection = InjectionStats::default();
    let mut session = Session::open(&a.panel, TestSource::Generated, a.seed, db).await?;
    // A round generates for a sixth of the budget (at least 20 s), then judges.
    let slice = (a.budget / 6).max(Duration::from_secs(20));
    let mut round = 0;
    let mut failures = 0;
    let mut code = ExitCode::SUCCESS;
    while std::time::Instant::now() < deadline {
        round += 1;
        let until = (std::time::Instant::now() + slice).min(deadline);
        let mut kept = Vec::new();
        while std::time::Instant::now() < until {
            match generator.next(&mut spec).await {
                Ok(Some(k)) => {
                    failures = 0;
                    kept.push(k)
                }
                Ok(None) => continue,
                // engine262's catalogue or built-in walk did not finish
                // (a loaded machine can push the walk past its timeout):
                // the generator tries again on the next call, three times.
                Err(e) if failures < 3 => {
                    failures += 1;
                    eprintln!("generator: {e}; retrying ({failures} of 3)");
                }
                Err(e) => anyhow::bail!("generator: {e} (after 3 retries)"),
            }
        }
        let first = generator.pool().len() - kept.len();
        let mut tests: Vec<ConformTest> = Vec::with_capacity(kept.len());
        for (i, k) in kept.into_iter().enumerate() {
            let name = format!("gen-s{}-{:05}.js", a.seed, first + i);
            let test = match &harness {
                None => plain(&name, &k.source),
                Some(h) => {
                    let opts = RunOptions {
                        timeout: Duration::from_secs(a.panel.timeout.max(1) * 3),
                        output_cap: 16 * 1024,
                    };
                    let p = prepare(&mut inject_spec, h, &name, &k.source, &Limits::default(), &opts).await;
                    injection.add(&p);
                    p.into_test()
                }
            };
            tests.push(test);
        }
        let c = generator.coverage();
        eprintln!(
            "round {round}: {} programs kept (pool {}), engine262 algorithms {}/{}, steps {}/{}, top-level steps {}/{}; judging",
            tests.len(),
            c.programs,
            c.algorithms.0,
            c.algorithms.1,
            c.steps.0,
            c.steps.1,
            c.top_steps.0,
            c.top_steps.1
        );
        if tests.is_empty() {
            continue;
        }
        // Judging a round may run past the budget by the round's tests only.
        let round_code = session.judge(tests, None).await?;
        if round_code != ExitCode::SUCCESS {
            code = round_code;
        }
    }
    doppel_engines::Engine::shutdown(&mut spec).await;
    if harness.is_some() {
        injection.print();
    }
    let c = generator.coverage();
    let stats = generator.stats();
    if let Some(sx) = &c.syntax {
        eprintln!(
            "syntax coverage of the grammar seeds: {}/{} alternatives (oxc-accepted)",
            sx.reached, sx.reachable
        );
    }
    eprintln!(
        "generator: {} candidates, {} kept; by origin (candidates, kept): {}",
        stats.candidates,
        stats.kept,
        stats
            .by_origin
            .iter()
            .map(|(k, (n, m))| format!("{k} {n}/{m}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(dir) = &a.out {
        write_generated(
            dir,
            &session.tests,
            &session.tally.lock().unwrap_or_else(|e| e.into_inner()),
        )?;
    }
    session.finish(None, Vec::new(), None).await?;
    Ok(code)
}

/// How many generated programs got injected assertions, and why the others did not.
#[derive(Default)]
struct InjectionStats {
    injected: usize,
    assertions: usize,
    plain: BTreeMap<String, usize>,
}

impl InjectionStats {
    fn add(&mut self, p: &Prepared) {
        match p {
            Prepared::Injected { assertions, .. } => {
                self.injected += 1;
                self.assertions += assertions;
            }
            Prepared::Plain { reason, .. } => {
                // Reasons by their first words (the rest names the program's values).
                let head: String = reason.split(':').next().unwrap_or(reason).chars().take(80).collect();
                *self.plain.entry(head).or_default() += 1;
            }
        }
    }

    fn print(&self) {
        let plain: usize = self.plain.values().sum();
        eprintln!(
            "injection: {} programs with {} assertions, {plain} judged by engine262's outcome only",
            self.injected, self.assertions
        );
        for (why, n) in &self.plain {
            eprintln!("  not injected ({n}): {why}");
        }
    }
}

/// One conformance campaign: the panel's identity, the store, the tally
/// shared across rounds.
struct Session {
    campaign: Campaign,
    id: doppel_conform::technique_campaign::PanelIdentity,
    store: doppel_core::store::Store,
    args: PanelArgs,
    db: String,
    tally: Arc<Mutex<Tally>>,
    tests: Vec<ConformTest>,
    stats: doppel_core::campaign::CampaignStats,
}

impl Session {
    async fn open(a: &PanelArgs, source: TestSource, seed: u64, db: &str) -> anyhow::Result<Session> {
        let engines = EnginesConfig::default();
        let config = ConformConfig {
            seed,
            source,
            panel: panel_config(a),
        };
        let tally = Arc::new(Mutex::new(Tally::default()));
        let campaign = Campaign {
            name: a.campaign.clone(),
            config,
            engines,
            tally: tally.clone(),
        };
        let id = campaign.identity()?;
        let (transpilers, engines): (Vec<_>, Vec<_>) = id.members.iter().partition(|m| m.info.family.is_transpiler());
        let mut families: Vec<_> = engines.iter().map(|m| m.info.family).collect();
        families.sort();
        families.dedup();
        eprintln!(
            "conform: {} engines in {} families plus engine262 {}{}",
            engines.len(),
            families.len(),
            id.spec.version,
            if transpilers.is_empty() {
                String::new()
            } else {
                let names: Vec<&str> = transpilers.iter().map(|m| m.info.name.as_str()).collect();
                format!("; transpilers {} (their output runs on v8-node's V8)", names.join(", "))
            }
        );
        for m in &id.missing {
            eprintln!("left out: {} ({})", m.engine, m.reason);
        }
        Ok(Session {
            campaign,
            id,
            store: open_store(db).await?,
            args: a.clone(),
            db: db.to_string(),
            tally,
            tests: Vec::new(),
            stats: Default::default(),
        })
    }

    /// Runs `tests` on the panel through the campaign runner.
    async fn judge(&mut self, tests: Vec<ConformTest>, deadline: Option<Duration>) -> anyhow::Result<ExitCode> {
        let a = &self.args;
        let items: Vec<_> = tests.iter().cloned().map(|t| self.campaign.item(&self.id, t)).collect();
        let mut runner = a.runner.clone();
        if deadline.is_some() {
            runner.deadline = deadline;
        }
        let options = runner.options(&a.campaign, a.jobs.max(1), a.resume, &self.db)?;
        let bar = progress_bar(a.quiet, "tests");
        let stats = doppel_core::campaign::run(
            &self.campaign,
            &items,
            &self.store,
            &options,
            &on_progress(&bar, "tests"),
        )
        .await?;
        bar.finish_and_clear();
        let code = finish(&stats, "tests");
        self.stats.runs += stats.runs;
        self.stats.findings += stats.findings;
        self.stats.store_errors += stats.store_errors;
        self.tests.extend(tests);
        Ok(code)
    }

    /// The summary: catalogue, matrix cache, known vs new, groups; printed and stored.
    async fn finish(
        self,
        save_matrix: Option<String>,
        skipped: Vec<String>,
        coverage_out: Option<&std::path::Path>,
    ) -> anyhow::Result<()> {
        let config = self.campaign.config.clone();
        let engines = &self.campaign.engines;
        let id = &self.id;
        let tally = std::mem::take(&mut *self.tally.lock().unwrap_or_else(|e| e.into_inner()));
        // The catalogue (coverage denominators and algorithm names) from a
        // fresh panel: the campaign's panels are shut down.
        let catalogue = if config.panel.coverage {
            let mut p = Panel::new(&config.panel, engines)?;
            let cat = p.catalogue().await.map_err(|e| eprintln!("no catalogue: {e}")).ok();
            p.shutdown().await;
            cat
        } else {
            None
        };
        if let Some(path) = coverage_out {
            let cat = catalogue
                .as_ref()
                .ok_or_else(|| anyhow::anyhow!("--coverage-out: no coverage catalogue"))?;
            let ids = tally.union.ids(cat);
            std::fs::write(path, serde_json::to_vec_pretty(&ids)?)
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("suite coverage written: {}", path.display());
        }
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
        let (mut groups, localizations) = group(
            &tally.observed,
            catalogue.as_ref(),
            known.as_ref(),
            10,
            self.args.true_fault.as_deref(),
        );
        if !self.args.no_reduce && !groups.is_empty() {
            eprintln!(
                "reducing {} group representatives with treereduce (up to {} s each; --no-reduce: off)",
                groups.len(),
                self.args.reduce_seconds
            );
            super::conform_reduce::reduce_groups(
                &self.store,
                &self.db,
                &self.args.campaign,
                &tally.observed,
                &mut groups,
                Duration::from_secs(self.args.reduce_seconds.max(1)),
                !self.args.cold_probe,
            )
            .await;
        }
        summary.groups = groups;
        summary.localizations = localizations;
        print_summary(&summary);
        match self
            .store
            .insert_run(&summary_run(&self.args.campaign, summary, id)?)
            .await
        {
            Ok(rid) => println!("summary stored as run {rid} (doppel show {rid})"),
            Err(e) => eprintln!("error: the summary was NOT STORED: {e:#}"),
        }
        println!(
            "{} tests stored, {} findings{}",
            self.stats.runs,
            self.stats.findings,
            not_stored(self.stats.store_errors)
        );
        Ok(())
    }
}
