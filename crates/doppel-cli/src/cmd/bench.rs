//! `doppel bench diff` (and the dispatch of the other benchmarks; `bench engines` is in bench_engines.rs): wall time per differential run with warm debugger
//! reuse against a fresh debugger process per run (DBDB's implementation),
//! on the bundled corpus of the debuggers' language or the given programs
//! (for the JavaScript debuggers: `doppel bench diff --debuggers
//! node,chromium ../shared/corpus/js/sunspider`). Prints figures; asserts nothing.
//! With `--continue-past-policies`: classes per CPU hour with and without
//! continuation past known policies instead (bench_policies.rs).

use crate::settings::Settings;
use clap::{Args, Subcommand};
use doppel_differential::campaign::{self, CampaignSpec, Prepared};
use doppel_lang::c::BuildRecipe;
use doppel_lang::prepare as subjects;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchWhat,
}

#[derive(Subcommand, Debug)]
pub enum BenchWhat {
    /// Differential runs: warm reuse vs a fresh debugger per run.
    Diff {
        /// Programs from the bundled corpus (the first N in name order).
        #[arg(long, default_value_t = 10)]
        programs: usize,
        /// Seeds per program.
        #[arg(long, default_value_t = 10)]
        seeds: u64,
        /// Debuggers.
        #[arg(long, value_delimiter = ',', default_value = "gdb,lldb")]
        debuggers: Vec<String>,
        /// Let the debuggers load libc6-dbg's debug info (as `diff --system-debug-info`).
        #[arg(long)]
        system_debug_info: bool,
        /// Instead of warm against fresh: distinct non-policy classes per CPU
        /// hour with runs going on past known policies against the stop at
        /// the first divergence, same seeds and budget (cmd/bench_policies.rs).
        #[arg(long)]
        continue_past_policies: bool,
        /// With --continue-past-policies: wall-time budget of each behaviour, seconds.
        #[arg(long, default_value_t = 300)]
        budget_s: u64,
        /// Lines breakpoints are drawn from: `all` (DBDB) or `code`.
        #[arg(long)]
        breakpoint_lines: Option<String>,
        /// Programs to run (files or directories; default: the bundled corpus
        /// of the debuggers' language).
        paths: Vec<std::path::PathBuf>,
    },
    /// Metamorphic tests (ISSTA'19) on one debugger: wall time of a test
    /// (initial plus follow-up run), warm debugger.
    Meta {
        /// The debugger under test.
        #[arg(long, default_value = "gdb")]
        debugger: String,
        /// Programs (the first N in name order).
        #[arg(long, default_value_t = 10)]
        programs: usize,
        /// Seeds per program.
        #[arg(long, default_value_t = 5)]
        seeds: u64,
        /// Programs to run (default: the bundled corpus of the debugger's language).
        paths: Vec<std::path::PathBuf>,
    },
    /// The campaign runner's own overhead per work item (target: at most
    /// 1 ms), on CPU-light fake items, against a plain loop doing the same.
    Runner {
        /// Fake work items.
        #[arg(long, default_value_t = 2000)]
        items: u64,
        /// CPU time of each fake item, microseconds.
        #[arg(long, default_value_t = 200)]
        work_us: u64,
    },
    /// Throughput of N workers claiming one campaign from one PostgreSQL
    /// store (`--claim`) against one worker (target: 3 workers >= 2.5x), on
    /// CPU-light fake items, one job per worker.
    Scale {
        /// The PostgreSQL store (`postgres://...`); each round is a fresh campaign in it.
        #[arg(long)]
        store: String,
        /// Fake work items per round.
        #[arg(long, default_value_t = 300)]
        items: u64,
        /// Wall time of each fake item (a sleep: CPU-light), milliseconds.
        #[arg(long, default_value_t = 20)]
        work_ms: u64,
        /// Workers of the parallel round.
        #[arg(long, default_value_t = 3)]
        workers: usize,
        /// Internal: run as one worker of a round, under this name.
        #[arg(long, hide = true)]
        as_worker: Option<String>,
        /// Internal: the round's campaign (with --as-worker).
        #[arg(long, hide = true)]
        campaign: Option<String>,
    },
    /// Debug-information checks (PLDI'20): checks per second with one
    /// debugger session per binary (batched) against one launch per (s, v)
    /// pair, on the same Csmith programs, builds and references.
    Debuginfo {
        /// Csmith programs (seeds --seed, --seed+1, ...).
        #[arg(long, default_value_t = 3)]
        csmith: u64,
        #[arg(long, default_value_t = 7)]
        seed: u64,
        #[arg(long, value_delimiter = ',', default_value = "gcc,clang")]
        compilers: Vec<String>,
        #[arg(long, value_delimiter = ',', default_value = "O2")]
        levels: Vec<String>,
        #[arg(long, value_delimiter = ',', default_value = "gdb,lldb")]
        debuggers: Vec<String>,
        /// Pairs per build checked one launch each.
        #[arg(long, default_value_t = 10)]
        sample: usize,
        /// Pairs per program.
        #[arg(long, default_value_t = 100)]
        max_pairs: usize,
    },
    /// C program transformations (metamorphic testing): preparation time
    /// against program size, per-program scope index vs the original
    /// per-statement walk, on generated Csmith-shaped programs and real
    /// Csmith programs.
    Transform {
        /// Lines of the generated programs.
        #[arg(long, value_delimiter = ',', default_value = "100,250,500,1000,2000,5000")]
        sizes: Vec<usize>,
        /// Csmith seeds of the real programs.
        #[arg(long, value_delimiter = ',', default_value = "1,4,6")]
        csmith: Vec<u64>,
        /// Generator seeds per transformation kind.
        #[arg(long, default_value_t = 3)]
        seeds: u64,
        /// Skip the original walk (0: always) on larger programs once one took
        /// longer than this, seconds.
        #[arg(long, default_value_t = 120)]
        old_budget_s: u64,
    },
    /// Regression localization (issue 16): seconds per case (median, p90),
    /// the solver's share of Darwin's time, and the concolic interpreter's
    /// instructions per second, concretely and with shadow state.
    Localize(super::bench_localize::BenchLocalizeArgs),
    /// Reduction of stored findings (issue 17, item 5): reduced program
    /// sizes and reduction time per finding (cmd/bench_reduce.rs).
    Reduce(super::bench_reduce::BenchReduceArgs),
    /// Soak (issue 14): a long differential campaign on a C corpus with a
    /// fault every few seconds (debugger SIGKILL/SIGSTOP, doppel SIGKILL
    /// and --resume): the fault suite's counts, peak RSS, open descriptors.
    Soak(super::bench_soak::SoakArgs),
    /// N+1 verdicts per second: JEST-sized programs and test262 tests on every engine plus engine262.
    Conform(super::conform_bench::ConformBenchArgs),
    /// JavaScript engines: scripts per second per engine on tiny JEST-sized
    /// programs, warm workers, plus engine262 with semantics coverage.
    Engines {
        /// Programs per engine.
        #[arg(long, default_value_t = 200)]
        programs: usize,
        /// Engines (default: every installed one).
        #[arg(long, value_delimiter = ',')]
        engines: Vec<String>,
    },
}

struct Figures {
    median_ms: f64,
    runs_per_s: f64,
    runs: usize,
}

async fn measure(spec: &CampaignSpec, subjects: &[Arc<Prepared>], seeds: u64) -> anyhow::Result<Figures> {
    let mut dbg = campaign::create_debuggers(spec)?;
    let mut times = Vec::new();
    let start = Instant::now();
    let items: Vec<(&Arc<Prepared>, u64)> = subjects.iter().flat_map(|p| (0..seeds).map(move |s| (p, s))).collect();
    // As the campaign does: one control run per program, not per seed.
    let controls = doppel_differential::control::ControlCache::default();
    for (i, &(p, seed)) in items.iter().enumerate() {
        // As the campaign does: the next run is named ahead.
        if let Some((n, _)) = items.get(i + 1) {
            for d in dbg.iter_mut() {
                d.preload(&n.subject);
            }
        }
        let t = Instant::now();
        let _ = campaign::run_one_with(spec, p, seed, &mut dbg, &controls).await;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let total = start.elapsed().as_secs_f64();
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    times.sort_by(f64::total_cmp);
    let median_ms = if times.is_empty() { 0.0 } else { times[times.len() / 2] };
    Ok(Figures {
        median_ms,
        runs_per_s: times.len() as f64 / total.max(1e-9),
        runs: times.len(),
    })
}

pub async fn run(a: BenchArgs, s: &Settings) -> anyhow::Result<ExitCode> {
    if let BenchWhat::Reduce(r) = a.what {
        return super::bench_reduce::run(r, &s.campaign.db).await;
    }
    if let BenchWhat::Localize(l) = a.what {
        return super::bench_localize::run(l).await;
    }
    if let BenchWhat::Soak(soak) = a.what {
        return super::bench_soak::run(soak).await;
    }
    if let BenchWhat::Conform(c) = a.what {
        return super::conform_bench::run(c).await;
    }
    if let BenchWhat::Engines { programs, engines } = a.what {
        return super::bench_engines::run(programs, engines).await;
    }
    if let BenchWhat::Debuginfo {
        csmith,
        seed,
        compilers,
        levels,
        debuggers,
        sample,
        max_pairs,
    } = &a.what
    {
        return debuginfo(*csmith, *seed, compilers, levels, debuggers, *sample, *max_pairs).await;
    }
    if let BenchWhat::Scale {
        store,
        items,
        work_ms,
        workers,
        as_worker,
        campaign,
    } = &a.what
    {
        return match (as_worker, campaign) {
            (Some(name), Some(c)) => super::bench_scale::worker(store, c, name, *items, *work_ms).await,
            _ => super::bench_scale::run(store, *items, *work_ms, *workers).await,
        };
    }
    if let BenchWhat::Transform {
        sizes,
        csmith,
        seeds,
        old_budget_s,
    } = &a.what
    {
        return super::bench_transform::run(super::bench_transform::Options {
            sizes: sizes.clone(),
            csmith: csmith.clone(),
            seeds: *seeds,
            old_budget: std::time::Duration::from_secs(*old_budget_s),
        })
        .await;
    }
    if let BenchWhat::Runner { items, work_us } = a.what {
        return super::bench_runner::run(items, work_us).await;
    }
    if let BenchWhat::Meta {
        debugger,
        programs,
        seeds,
        paths,
    } = a.what
    {
        return meta(debugger, programs, seeds, paths, s).await;
    }
    let BenchWhat::Diff {
        programs,
        seeds,
        debuggers,
        system_debug_info,
        continue_past_policies,
        budget_s,
        breakpoint_lines,
        paths,
    } = a.what
    else {
        unreachable!("handled above")
    };
    let args = super::diff::DiffArgs {
        debuggers: Some(debuggers),
        jobs: Some(1),
        system_debug_info,
        breakpoint_lines,
        ..Default::default()
    };
    let mut spec = super::diff::spec(&args, s)?;
    let recipe = BuildRecipe::parse(&s.campaign.compiler).map_err(anyhow::Error::msg)?;
    let language = doppel_debuggers::registry::language_of(&spec.debuggers)?;
    let prepared = programs_for(language, paths, programs, &recipe, s).await?;
    if continue_past_policies {
        spec.debugger.warm = true;
        let budget = std::time::Duration::from_secs(budget_s);
        return super::bench_policies::run(spec, &prepared, seeds, budget).await;
    }
    println!(
        "bench diff: {} programs x {seeds} seeds, debuggers {}, sequential (1 job), system debug info {}",
        prepared.len(),
        spec.debuggers.join(","),
        if spec.debugger.system_debug_info { "on" } else { "off" }
    );
    spec.debugger.warm = true;
    let warm = measure(&spec, &prepared, seeds).await?;
    println!(
        "warm reuse:         median {:7.1} ms/run   {:6.2} runs/s   ({} runs)",
        warm.median_ms, warm.runs_per_s, warm.runs
    );
    spec.debugger.warm = false;
    let cold = measure(&spec, &prepared, seeds).await?;
    println!(
        "fresh per run:      median {:7.1} ms/run   {:6.2} runs/s   ({} runs)",
        cold.median_ms, cold.runs_per_s, cold.runs
    );
    println!(
        "speed-up of warm reuse: {:.2}x (median), {:.2}x (throughput)",
        cold.median_ms / warm.median_ms.max(1e-9),
        warm.runs_per_s / cold.runs_per_s.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

/// `bench meta`: one-round sequences (a metamorphic test = the initial run
/// plus one follow-up run, ISSTA'19 Figure 5) and five-round sequences
/// (iterative testing: later tests reuse the previous follow-up as their
/// initial run), sequential, warm debugger.
async fn meta(
    debugger: String,
    programs: usize,
    seeds: u64,
    paths: Vec<std::path::PathBuf>,
    s: &Settings,
) -> anyhow::Result<ExitCode> {
    use doppel_metamorphic::program::{Builder, Program};
    let args = super::meta::MetaArgs {
        debugger: debugger.clone(),
        rounds: Some(1),
        transformations: None,
        run: super::diff::DiffArgs {
            jobs: Some(1),
            ..Default::default()
        },
    };
    let mut spec = super::meta::spec(&args, s)?;
    let language = doppel_debuggers::registry::language_of(std::slice::from_ref(&debugger))?;
    let recipe = BuildRecipe::parse(&s.campaign.compiler).map_err(anyhow::Error::msg)?;
    let prepared = programs_for(language, paths, programs, &recipe, s).await?;
    let cache = subjects::cache_dir(&s.campaign.db);
    let builder = Builder::new(cache.join("meta-sources"), cache, spec.debugger_config.limits);
    println!(
        "bench meta: {} programs x {seeds} seeds, debugger {debugger}, sequential, warm{}",
        prepared.len(),
        super::meta::absorb_note(&debugger, &spec.debugger_config)
    );
    let mut dbg = doppel_debuggers::registry::create(&debugger, &spec.debugger_config)?;
    for rounds in [1usize, 5] {
        spec.meta.rounds = rounds;
        // As the campaign does: one control run per program, not per seed.
        let controls = doppel_debuggers::control::ControlCache::default();
        let mut per_sequence = Vec::new();
        let mut tests = 0usize;
        let start = Instant::now();
        for p in &prepared {
            for seed in 0..seeds {
                let t = Instant::now();
                let mut n = 0;
                let program = Program::new(p.subject.clone(), p.source_text.clone());
                doppel_metamorphic::sequence::run(&mut dbg, program, seed, &spec.meta, &builder, &controls, &mut |r| {
                    if r.follow_up_trace.is_some() {
                        n += 1;
                    }
                })
                .await;
                tests += n;
                if n > 0 {
                    per_sequence.push(t.elapsed().as_secs_f64() * 1000.0 / n as f64);
                }
            }
        }
        let total = start.elapsed().as_secs_f64() * 1000.0;
        per_sequence.sort_by(f64::total_cmp);
        let median = per_sequence.get(per_sequence.len() / 2).copied().unwrap_or(0.0);
        println!(
            "{rounds} round(s) per sequence: median {median:7.1} ms per metamorphic test   mean {:7.1} ms   ({tests} tests)",
            total / tests.max(1) as f64
        );
    }
    dbg.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// The first `n` runnable programs under `paths` (default: the bundled
/// corpus of `language`).
async fn programs_for(
    language: doppel_core::Language,
    paths: Vec<std::path::PathBuf>,
    n: usize,
    recipe: &BuildRecipe,
    s: &Settings,
) -> anyhow::Result<Vec<Arc<Prepared>>> {
    let paths = if paths.is_empty() {
        vec![subjects::default_corpus_for(language)]
    } else {
        paths
    };
    Ok(
        subjects::prepare_for(language, &paths, &s.campaign.db, recipe, subjects::Selection::First(n))
            .await?
            .into_iter()
            .filter(|p| p.error.is_none())
            .collect(),
    )
}

/// `doppel bench debuginfo`.
async fn debuginfo(
    csmith: u64,
    seed: u64,
    compilers: &[String],
    levels: &[String],
    debuggers: &[String],
    sample: usize,
    max_pairs: usize,
) -> anyhow::Result<ExitCode> {
    use doppel_debuginfo::{program::Program, seed as cs, toolchain::Compiler};
    let dir = tempfile::tempdir()?;
    let mut programs = Vec::new();
    let mut s = seed;
    while (programs.len() as u64) < csmith && s < seed + 10 * csmith.max(1) {
        if let Ok(g) = cs::generate(s, &cs::CsmithConfig::default(), &dir.path().join("csmith")).await {
            programs.push(Program::from_file(&format!("csmith-{s}.c"), &g.path).map_err(anyhow::Error::msg)?);
        }
        s += 1;
    }
    let mut cc = Vec::new();
    for c in compilers {
        cc.push(Compiler::discover(c).await.map_err(anyhow::Error::msg)?);
    }
    let config = doppel_debuginfo::config::DebuginfoConfig {
        levels: levels.to_vec(),
        debuggers: debuggers.to_vec(),
        max_pairs,
        ..Default::default()
    };
    let dcfg = doppel_debuggers::DebuggerConfig {
        action_timeout: std::time::Duration::from_secs(20),
        ..Default::default()
    };
    let cache = doppel_lang::c::BuildCache::new(dir.path().join("cache"));
    eprintln!(
        "doppel bench debuginfo: {} Csmith programs, {} x {} x {}, up to {sample} pairs per build one launch each",
        programs.len(),
        compilers.join(","),
        levels.join(","),
        debuggers.join(",")
    );
    let f = doppel_debuginfo::bench::run(&programs, &cc, &config, &dcfg, &cache, sample)
        .await
        .map_err(anyhow::Error::msg)?;
    println!(
        "{} programs, {} builds; batched: {} checks in {} sessions, {:.1} s: {:.1} checks/s",
        f.programs,
        f.builds,
        f.batched_checks,
        f.batched_sessions,
        f.batched_seconds,
        f.batched_rate()
    );
    println!(
        "one launch per pair (PLDI'20): {} checks in {:.1} s: {:.2} checks/s",
        f.single_checks,
        f.single_seconds,
        f.single_rate()
    );
    println!(
        "batching is {:.1}x faster (checks per second per core; one job)",
        f.batched_rate() / f.single_rate().max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}
