//! Runs the coverage-guided generator for a while and prints what it kept:
//! the measurement of the generation half of JEST (§III-A..C) for
//! docs/results (the `doppel conform` campaign does the rest).
//!
//! `cargo run --release -p doppel-conform --example generate -- SECONDS [SEED] [GRAMMAR] [OUT.jsonl]`
//! (GRAMMAR defaults to ../shared/data/ecmascript-grammar/grammar.json
//! beside the repository; OUT gets one kept program per line). With
//! `DOPPEL_NO_ACTIVATE=1` the grammar seeds are tried without their
//! activated variants, for comparison; `DOPPEL_CANDIDATE_BUDGET` sets
//! engine262's evaluation budget per candidate (default 200,000).

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use doppel_conform::pool::{Generator, GeneratorConfig};
use doppel_conform::{DEFAULT_GRAMMAR_PATH, Grammar};
use doppel_engines::EnginesConfig;
use doppel_engines::engine::engine262::Engine262;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(60);
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let grammar_path = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| format!("{}/../../{DEFAULT_GRAMMAR_PATH}", env!("CARGO_MANIFEST_DIR")));
    let mut out = match args.get(3) {
        Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("{p}: {e}"))?),
        None => None,
    };
    let started = Instant::now();
    let grammar = Grammar::load(std::path::Path::new(&grammar_path)).map_err(|e| e.to_string())?;
    let config = GeneratorConfig {
        grammar: Some(Arc::new(grammar)),
        attempts_per_call: 50,
        activate: std::env::var_os("DOPPEL_NO_ACTIVATE").is_none(),
        ..GeneratorConfig::default()
    };
    let mut g = Generator::new(config, seed)?;
    eprintln!(
        "grammar seeds synthesized and oxc-checked in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let cfg = EnginesConfig::default();
    let budget = std::env::var("DOPPEL_CANDIDATE_BUDGET")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(200_000);
    let mut spec = Engine262::with_coverage_budget(&cfg, budget).map_err(|e| format!("{e}; {}", cfg.setup_hint()))?;
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let mut last = Instant::now();
    while Instant::now() < deadline {
        if let Some(k) = g.next(&mut spec).await?
            && let Some(f) = out.as_mut()
        {
            let line = serde_json::to_string(&k).map_err(|e| e.to_string())?;
            writeln!(f, "{line}").map_err(|e| e.to_string())?;
        }
        if last.elapsed() > Duration::from_secs(30) {
            last = Instant::now();
            let c = g.coverage();
            let s = g.stats();
            eprintln!(
                "{:>5.0} s: kept {} of {} candidates ({} seeds pending), algorithms {}/{}, steps {}/{}",
                start.elapsed().as_secs_f64(),
                s.kept,
                s.candidates,
                g.seeds_pending(),
                c.algorithms.0,
                c.algorithms.1,
                c.steps.0,
                c.steps.1
            );
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let c = g.coverage();
    let s = g.stats();
    let pct = |(a, b): (usize, usize)| 100.0 * a as f64 / b.max(1) as f64;
    println!("seconds: {secs:.0}");
    if let Some(syn) = &c.syntax {
        println!(
            "syntax coverage (oxc-accepted grammar seeds): {}/{} = {:.2}%",
            syn.reached,
            syn.reachable,
            100.0 * syn.ratio()
        );
    }
    println!("candidates: {} ({:.2}/s)", s.candidates, s.candidates as f64 / secs);
    println!("kept: {} ({:.3}/s)", s.kept, s.kept as f64 / secs);
    println!(
        "engine262 algorithms: {}/{} = {:.2}%",
        c.algorithms.0,
        c.algorithms.1,
        pct(c.algorithms)
    );
    println!("engine262 steps: {}/{} = {:.2}%", c.steps.0, c.steps.1, pct(c.steps));
    println!(
        "engine262 top-level steps: {}/{} = {:.2}%",
        c.top_steps.0,
        c.top_steps.1,
        pct(c.top_steps)
    );
    println!(
        "rejected: syntax {}, duplicate {}, outcome {:?}, no new coverage {}, failed mutations {}",
        s.rejected_syntax, s.duplicates, s.rejected_outcome, s.no_new_coverage, s.mutations_failed
    );
    for (origin, (tried, kept)) in &s.by_origin {
        println!("  {origin}: {kept} kept of {tried}");
    }
    spec_shutdown(spec).await;
    Ok(())
}

async fn spec_shutdown(mut spec: Engine262) {
    use doppel_engines::Engine;
    spec.shutdown().await;
}
