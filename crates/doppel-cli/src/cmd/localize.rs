//! `doppel localize`: regression root-causing (Darwin, issue 16).
//!
//! One case: `--reference P.c --modified P2.c --input t [--args ...]`
//! (issue 16, item 6) prints Darwin's
//! ranked root causes (source lines, witnesses, both outputs) beside the
//! baselines' reports (`--json`: the typed record) and stores the case.
//! A corpus: `--corpus DIR` runs every pair of a Codeflaws-layout
//! directory on the shared campaign runner (jobs, `--resume`,
//! `--deadline`, progress), results in the store.

use clap::Args;
use doppel_core::store::RunFilter;
use doppel_localize::campaign::{CaseItem, LocalizeCampaign, corpus_cases, items};
use doppel_localize::case::{Case, CaseTest, TruthSource};
use doppel_localize::record::{LocalizeConfig, LocalizeRecord, TECHNIQUE, now_ms, outcome_name};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status: 0 when Darwin localized the regression (for `--corpus`:
/// every case stored); 1 when the case ended with another named outcome
/// (P and P' agree on t, a build failure, no deviation found, budget
/// spent, unsupported instruction, solver missing or failing; for
/// `--corpus`: a case not stored or an environment failure); 2 for a usage
/// or environment error (unreadable input file, store unavailable).
#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 localized (--corpus: every case stored); 1 the case ended with another \
                        named outcome (agree, build_failure, no_deviation_found, budget_spent, \
                        unsupported_instruction, solver_failure, ...; --corpus: a case not stored); 2 usage or \
                        environment error."
)]
pub struct LocalizeArgs {
    /// The reference program P (C).
    #[arg(long, requires_all = ["modified", "input"], conflicts_with = "corpus")]
    pub reference: Option<PathBuf>,
    /// The modified program P' (C), which misbehaves on the input.
    #[arg(long)]
    pub modified: Option<PathBuf>,
    /// The failing test t: a file given to both programs as standard input.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// Command-line arguments (argv[1..]) given to both programs in every
    /// run, native and wasm: `--args 3 x` (the values end at the next
    /// option); one that starts with `-` as `--args=-n` (repeatable,
    /// appended in order). Darwin keeps them concrete: its alternate
    /// inputs change the input t.
    #[arg(long, num_args = 1.., value_name = "ARG", requires = "reference")]
    pub args: Vec<String>,
    /// More tests (standard-input files) on which P is the oracle: they
    /// feed the SBFL baselines' spectra.
    #[arg(long = "test", value_name = "FILE")]
    pub tests: Vec<PathBuf>,
    /// A Codeflaws-layout directory (`<problem>-bug-<a>-<b>/` with both
    /// programs, `input-*`/`output-*` tests, `defects.tsv`): every pair is a case.
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// With --corpus: cross-author pairs (another author's accepted program as P).
    #[arg(long, requires = "corpus")]
    pub cross: bool,
    /// With --corpus: only the first N cases.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Darwin's wall-clock budget per case (`60s`, `5m`).
    #[arg(long, default_value = "60s", value_parser = super::campaign::parse_budget)]
    pub budget: std::time::Duration,
    /// Timeout of one solver query, milliseconds.
    #[arg(long, default_value_t = LocalizeConfig::default().query_timeout_ms)]
    pub query_timeout_ms: u64,
    /// Run the baselines only (no Darwin).
    #[arg(long)]
    pub no_darwin: bool,
    /// Darwin's queries without slicing: f and the whole prefix in every
    /// deviation query (the behaviour before slicing, for comparison).
    #[arg(long)]
    pub no_slicing: bool,
    /// When Darwin validates no deviation, report nothing instead of the
    /// first divergence of the runs on t (the first branch they take
    /// differently, or the statements that printed the first differing
    /// character).
    #[arg(long)]
    pub no_first_divergence: bool,
    /// Predicate deviations need not keep P's own predicates (the
    /// behaviour before `strict_predicates`, for comparison).
    #[arg(long)]
    pub loose_predicates: bool,
    /// Search no critical predicates (predicate switching: branch
    /// instances of P' on t whose inverted direction makes P' print P's
    /// output).
    #[arg(long)]
    pub no_predicate_switching: bool,
    /// The seed recorded with the case.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print the stored record as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Campaign name (part of run keys).
    #[arg(long, default_value = "localize")]
    pub campaign: String,
    /// With --corpus: parallel jobs (each runs one case at a time).
    #[arg(long, default_value_t = 1, value_parser = crate::settings::parse_jobs)]
    pub jobs: usize,
    /// With --corpus: skip cases whose result is stored.
    #[arg(long)]
    pub resume: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// The campaign runner's flags.
    #[command(flatten)]
    pub runner: super::campaign::RunnerArgs,
}

impl LocalizeArgs {
    fn config(&self) -> LocalizeConfig {
        LocalizeConfig {
            budget_secs: self.budget.as_secs_f64(),
            seed: self.seed,
            darwin: !self.no_darwin,
            query_timeout_ms: self.query_timeout_ms,
            slicing: !self.no_slicing,
            first_divergence: !self.no_first_divergence,
            strict_predicates: !self.loose_predicates,
            predicate_switching: !self.no_predicate_switching,
            ..LocalizeConfig::default()
        }
    }
}

pub async fn run(a: LocalizeArgs, db: &str) -> anyhow::Result<ExitCode> {
    if a.corpus.is_some() {
        return corpus(a, db).await;
    }
    let (Some(reference), Some(modified), Some(input)) = (&a.reference, &a.modified, &a.input) else {
        anyhow::bail!("give --reference P.c --modified P2.c --input t, or --corpus DIR");
    };
    let read = |p: &PathBuf| std::fs::read(p).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()));
    let mut tests = vec![CaseTest {
        name: "t".into(),
        input: read(input)?,
        expected: None,
        failing: true,
    }];
    for (i, t) in a.tests.iter().enumerate() {
        tests.push(CaseTest {
            name: format!("test{}", i + 1),
            input: read(t)?,
            expected: None,
            failing: false,
        });
    }
    let case = Case {
        name: format!(
            "{}-vs-{}",
            reference.file_stem().unwrap_or_default().to_string_lossy(),
            modified.file_stem().unwrap_or_default().to_string_lossy()
        ),
        class: None,
        reference: reference.clone(),
        modified: modified.clone(),
        truth: TruthSource::Unknown,
        tests,
        dropped: Vec::new(),
        args: a.args.clone(),
    };
    let store = super::open_store(db).await?;
    let spec = LocalizeCampaign {
        campaign: a.campaign.clone(),
        config: a.config(),
        wasm_cache: super::technique_context(&store, db).cache_dir.join("wasm"),
    };
    let job = <LocalizeCampaign as doppel_core::campaign::Technique>::setup(&spec, 0).await?;
    let started = now_ms();
    let rec = job.case(&CaseItem::new(case)).await;
    let run = rec.to_run(&a.campaign, started);
    let stored = store.insert_run(&run).await;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rec)?);
    } else {
        print_case(&rec);
    }
    match stored {
        Ok(id) => {
            eprintln!("stored as run {id} in {db} (doppel show {id}; doppel replay {id}; doppel repro {id} --out DIR)")
        }
        Err(e) => {
            eprintln!("error: the case was NOT STORED: {e:#}");
            return Ok(ExitCode::from(2));
        }
    }
    Ok(
        if matches!(outcome_name(&rec.result), "localized" | "first_divergence") {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}

/// The human table of one case.
fn print_case(rec: &LocalizeRecord) {
    let view = doppel_localize::view::view(rec, false);
    for l in &view.lines {
        println!("{l}");
    }
    super::print_tables(&view.tables);
}

/// Darwin's and the baselines' measures over every stored case of the
/// campaign (docs/results/localize.md's tables): outcomes, seconds per
/// case, and per technique the share of cases whose faulty line is in the
/// report and ranked first, report sizes, per defect class.
async fn print_measures(store: &doppel_core::store::Store, filter: &RunFilter) -> anyhow::Result<()> {
    let mut results = Vec::new();
    for id in store.divergent_run_ids(filter).await? {
        if let Some(run) = store.run(id).await? {
            results.push(LocalizeRecord::of(&run)?.result);
        }
    }
    println!("\n{}", doppel_localize::summary::markdown(&results));
    Ok(())
}

async fn corpus(a: LocalizeArgs, db: &str) -> anyhow::Result<ExitCode> {
    let dir = a.corpus.clone().unwrap_or_default();
    anyhow::ensure!(dir.is_dir(), "--corpus {}: not a directory", dir.display());
    let (mut cases, errors) = corpus_cases(&dir, a.cross);
    for e in &errors {
        eprintln!("warning: a pair directory cannot be read: {e}");
    }
    anyhow::ensure!(
        !cases.is_empty(),
        "--corpus {}: no pair directories (`<problem>-bug-<a>-<b>/`) found",
        dir.display()
    );
    if let Some(n) = a.limit {
        cases.truncate(n);
    }
    let store = super::open_store(db).await?;
    let spec = LocalizeCampaign {
        campaign: a.campaign.clone(),
        config: a.config(),
        wasm_cache: super::technique_context(&store, db).cache_dir.join("wasm"),
    };
    let items = items(&a.campaign, &spec.config, cases);
    let options = a.runner.options(&a.campaign, a.jobs, a.resume, db)?;
    eprintln!(
        "doppel localize: {} cases from {}{}, budget {:?} per case, {} job(s){}, store {db}",
        items.len(),
        dir.display(),
        if a.cross { " (cross-author pairs)" } else { "" },
        a.budget,
        a.jobs,
        a.runner.describe()
    );
    let bar = super::progress_bar(a.quiet, "cases");
    let on_runner = super::campaign::on_progress(&bar, "cases");
    let stats = doppel_core::campaign::run(&spec, &items, &store, &options, &on_runner).await?;
    bar.finish_and_clear();
    let filter = RunFilter {
        technique: Some(TECHNIQUE.into()),
        campaign: Some(a.campaign.clone()),
    };
    super::classes::print_summary(&store, &filter).await?;
    print_measures(&store, &filter).await?;
    eprintln!(
        "this invocation: {} cases run, {} skipped (resume){}",
        stats.items,
        stats.skipped,
        super::not_stored(stats.store_errors)
    );
    Ok(super::campaign::finish(&stats, "cases"))
}
