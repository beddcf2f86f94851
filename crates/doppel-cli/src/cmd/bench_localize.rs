//! `doppel bench localize`: seconds per localization case (all techniques,
//! and Darwin alone with its wasm builds), the solver's share of Darwin's
//! time, and the concolic interpreter's instructions per second on each
//! case's P' and t, concretely and with every input byte symbolic (issue
//! 16, "Speed"). On the bundled pairs or `--corpus DIR`. Nothing is stored;
//! prints figures, asserts nothing.

use clap::Args;
use doppel_concolic::{BranchFilter, Inputs, Module, RunConfig, bench};
use doppel_lang::c::wasm::WasmBuildCache;
use doppel_localize::campaign::corpus_cases;
use doppel_localize::case::{Case, run_case};
use doppel_localize::record::{LocalizeConfig, outcome_name};
use doppel_localize::summary::quantile;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `doppel bench localize`.
#[derive(Args, Debug)]
pub struct BenchLocalizeArgs {
    /// A Codeflaws-layout directory (default: the bundled corpus/regressions).
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Cross-author pairs of the corpus.
    #[arg(long)]
    pub cross: bool,
    /// At most N cases, spread evenly over the corpus's order.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Darwin's budget per case.
    #[arg(long, default_value = "60s", value_parser = super::campaign::parse_budget)]
    pub budget: std::time::Duration,
    /// Timed interpreter runs per case and mode.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Also run every case with Darwin's queries unsliced (the behaviour
    /// before slicing) and print both, as the baseline in the same run.
    #[arg(long)]
    pub compare_slicing: bool,
}

fn bundled() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/regressions")
}

/// Every k-th case, so that a limit samples the whole corpus.
fn spread(cases: Vec<Case>, limit: Option<usize>) -> Vec<Case> {
    match limit {
        Some(n) if n > 0 && n < cases.len() => {
            let step = cases.len() as f64 / n as f64;
            (0..n).map(|i| cases[(i as f64 * step) as usize].clone()).collect()
        }
        _ => cases,
    }
}

/// The interpreter's throughput on the case's P' and its failing test.
async fn throughput(case: &Case, t: &[u8], cache: &WasmBuildCache, runs: u32) -> Result<bench::Measurement, String> {
    let b = cache.build_wasm(&case.modified).await.map_err(|e| e.to_string())?;
    let bytes = std::fs::read(&b.output).map_err(|e| e.to_string())?;
    let module = Module::decode(&bytes).map_err(|e| e.to_string())?;
    let cfg = RunConfig {
        inputs: Inputs {
            stdin: t.to_vec(),
            ..Default::default()
        },
        branches: BranchFilter::Files(vec![b.source.to_string_lossy().into_owned()]),
        ..Default::default()
    };
    // One untimed run first: the first run of a module pays for page
    // faults of its fresh linear memory, which would dominate the
    // thousands of instructions of a small program.
    let _ = doppel_concolic::run(&module, &cfg);
    Ok(bench::measure(&module, &cfg, runs))
}

pub async fn run(a: BenchLocalizeArgs) -> anyhow::Result<ExitCode> {
    let dir = a.corpus.clone().unwrap_or_else(bundled);
    let (cases, errors) = corpus_cases(&dir, a.cross);
    for e in &errors {
        eprintln!("warning: {e}");
    }
    let cases = spread(cases, a.limit);
    anyhow::ensure!(!cases.is_empty(), "{}: no pair directories", dir.display());
    let config = LocalizeConfig {
        budget_secs: a.budget.as_secs_f64(),
        ..LocalizeConfig::default()
    };
    let scratch = tempfile::tempdir()?;
    let wasm = scratch.path().join("wasm");
    let cache = WasmBuildCache::new(wasm.clone());
    println!(
        "doppel bench localize: {} cases of {}, budget {:?}, {} interpreter runs per mode",
        cases.len(),
        dir.display(),
        a.budget,
        a.runs
    );
    println!(
        "{:<40} {:<24} {:>8} {:>8} {:>7} {:>12} {:>12}",
        "case", "outcome", "case s", "darwin s", "solver", "concrete i/s", "shadow i/s"
    );
    let (mut secs, mut dsecs) = (Vec::new(), Vec::new());
    let (mut solver_ms, mut darwin_ms) = (0u64, 0f64);
    let (mut conc, mut sym) = ((0u64, 0f64), (0u64, 0f64));
    let (mut conc_rates, mut sym_rates) = (Vec::new(), Vec::new());
    let unsliced = LocalizeConfig {
        slicing: false,
        ..config.clone()
    };
    let (mut whole_secs, mut whole_solver_ms, mut whole_ms) = (Vec::new(), 0u64, 0f64);
    let mut localized = (0usize, 0usize);
    for (i, case) in cases.iter().enumerate() {
        // With the baseline, the two behaviours take turns at running first:
        // the first run of a case pays its wasm builds, the second finds
        // them in the cache.
        let baseline_first = a.compare_slicing && i % 2 == 1;
        let early = if baseline_first {
            Some(run_case(case, &unsliced.case_config(&wasm)).await)
        } else {
            None
        };
        let r = run_case(case, &config.case_config(&wasm)).await;
        let mut whole = String::new();
        if a.compare_slicing {
            let w = match early {
                Some(w) => w,
                None => run_case(case, &unsliced.case_config(&wasm)).await,
            };
            if let Some(d) = &w.darwin {
                whole_secs.push(w.darwin_seconds);
                whole_solver_ms += d.stats.solver_ms;
                whole_ms += w.darwin_seconds * 1000.0;
                localized.1 += usize::from(!d.causes.is_empty());
            }
            localized.0 += usize::from(r.darwin.as_ref().is_some_and(|d| !d.causes.is_empty()));
            whole = format!("  unsliced: {} {:.2} s", outcome_name(&w), w.darwin_seconds);
        }
        secs.push(r.seconds);
        let mut solver = String::from("-");
        if let Some(d) = &r.darwin {
            dsecs.push(r.darwin_seconds);
            solver_ms += d.stats.solver_ms;
            darwin_ms += r.darwin_seconds * 1000.0;
            if r.darwin_seconds > 0.0 {
                solver = format!("{:.0}%", 100.0 * d.stats.solver_ms as f64 / (r.darwin_seconds * 1000.0));
            }
        }
        let t = r
            .failing_test
            .as_ref()
            .and_then(|n| case.tests.iter().find(|t| &t.name == n))
            .map(|t| t.input.clone());
        let (mut c, mut s) = ("-".to_string(), "-".to_string());
        if let Some(t) = t {
            match throughput(case, &t, &cache, a.runs).await {
                Ok(m) => {
                    conc.0 += m.concrete.instructions * m.concrete.runs as u64;
                    conc.1 += m.concrete.seconds;
                    sym.0 += m.symbolic.instructions * m.symbolic.runs as u64;
                    sym.1 += m.symbolic.seconds;
                    conc_rates.push(m.concrete.per_second);
                    sym_rates.push(m.symbolic.per_second);
                    c = format!("{:.2e}", m.concrete.per_second);
                    s = format!("{:.2e}", m.symbolic.per_second);
                }
                Err(e) => c = format!("({e:.40})"),
            }
        }
        println!(
            "{:<40} {:<24} {:>8.2} {:>8.2} {:>7} {:>12} {:>12}{whole}",
            r.name,
            outcome_name(&r),
            r.seconds,
            r.darwin_seconds,
            solver,
            c,
            s
        );
    }
    println!();
    println!(
        "seconds per case (all techniques): median {:.2}, p90 {:.2}; Darwin alone (wasm builds included): median {:.2}, p90 {:.2}",
        quantile(&secs, 0.5),
        quantile(&secs, 0.9),
        quantile(&dsecs, 0.5),
        quantile(&dsecs, 0.9)
    );
    println!(
        "solver share of Darwin's time: {:.0}% ({:.1} s of {:.1} s)",
        100.0 * solver_ms as f64 / darwin_ms.max(1e-9),
        solver_ms as f64 / 1000.0,
        darwin_ms / 1000.0
    );
    if a.compare_slicing {
        println!(
            "Darwin alone, sliced queries: median {:.2}, p90 {:.2}, solver share {:.0}%, cases with a root cause {}; \
             unsliced (baseline, same cases): median {:.2}, p90 {:.2}, solver share {:.0}%, cases with a root cause {}",
            quantile(&dsecs, 0.5),
            quantile(&dsecs, 0.9),
            100.0 * solver_ms as f64 / darwin_ms.max(1e-9),
            localized.0,
            quantile(&whole_secs, 0.5),
            quantile(&whole_secs, 0.9),
            100.0 * whole_solver_ms as f64 / whole_ms.max(1e-9),
            localized.1
        );
    }
    println!(
        "interpreter, instructions per second: concrete {:.3e} overall (median per case {:.3e}), \
         with shadow state {:.3e} overall (median per case {:.3e})",
        conc.0 as f64 / conc.1.max(1e-9),
        quantile(&conc_rates, 0.5),
        sym.0 as f64 / sym.1.max(1e-9),
        quantile(&sym_rates, 0.5)
    );
    Ok(ExitCode::SUCCESS)
}
