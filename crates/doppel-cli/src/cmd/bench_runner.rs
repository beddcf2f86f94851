//! `doppel bench runner`: the campaign runner's own cost per work item
//! (issue 13: at most 1 ms). The same CPU-light fake items (a busy loop of
//! a fixed length, then a small record stored in a fresh SQLite store) run
//! twice in one invocation: in a plain sequential loop (the baseline), and
//! through `doppel_core::campaign::run` with one job. The runner's overhead
//! per item is the difference of the two wall times over the items. Prints
//! figures; asserts nothing.

use super::bench_fake::{self, Fake, Work};
use doppel_core::campaign::{self, Item, Options, Source};
use doppel_core::store::Store;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const TECHNIQUE: &str = "bench-runner";

/// Rounds of (baseline, runner), alternated so that drifting machine load
/// hits both alike; the medians are printed.
const ROUNDS: usize = 5;

/// A fresh SQLite store on a RAM file system when there is one (a disk's
/// fsync per stored run would swamp the figure), else in the temp dir.
async fn fresh_store(dir: &std::path::Path, name: &str) -> anyhow::Result<Store> {
    Store::open(dir.join(name).to_str().unwrap_or(name)).await
}

/// Seconds for the baseline: the same runs and stores in a plain loop.
async fn baseline(list: &[Item<String>], work: Duration, store: &Store) -> anyhow::Result<(f64, f64)> {
    let t = Instant::now();
    let mut run_ms = 0.0;
    for i in list {
        let ms = Work::Spin(work).perform().await;
        run_ms += ms;
        store
            .insert_run(&bench_fake::record(TECHNIQUE, &i.input, &i.key, i.seed, ms))
            .await?;
    }
    Ok((t.elapsed().as_secs_f64(), run_ms))
}

/// Seconds for the runner (one job, resume on: it reads the stored keys, as
/// a campaign does).
async fn runner(list: &[Item<String>], work: Duration, store: &Store) -> anyhow::Result<(f64, f64)> {
    let options = Options {
        campaign: "bench".into(),
        jobs: 1,
        resume: true,
        deadline: None,
        source: Source::All,
    };
    let t = Instant::now();
    let fake = Fake {
        name: TECHNIQUE,
        work: Work::Spin(work),
    };
    let stats = campaign::run(&fake, list, store, &options, &|_| {}).await?;
    let s = t.elapsed().as_secs_f64();
    anyhow::ensure!(
        stats.runs == list.len() && !stats.failed(),
        "the runner stored {} of {} runs",
        stats.runs,
        list.len()
    );
    Ok((s, stats.run_ms))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the benchmark: `items` fake items of `work_us` microseconds each.
///
/// Errors: a store cannot be created, or a run is not stored.
pub async fn run(items: u64, work_us: u64) -> anyhow::Result<ExitCode> {
    let work = Duration::from_micros(work_us);
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm)?
    } else {
        tempfile::tempdir()?
    };
    let list = bench_fake::items(TECHNIQUE, "bench", items);
    let load_before = bench_fake::load();
    let (mut base, mut run, mut overhead) = (Vec::new(), Vec::new(), Vec::new());
    let (mut base_run_ms, mut runner_run_ms) = (0.0, 0.0);
    for round in 0..ROUNDS {
        let (b, b_ms) = baseline(&list, work, &fresh_store(dir.path(), &format!("b{round}.db")).await?).await?;
        let (r, r_ms) = runner(&list, work, &fresh_store(dir.path(), &format!("r{round}.db")).await?).await?;
        base.push(b);
        run.push(r);
        overhead.push(r - b);
        base_run_ms = b_ms;
        runner_run_ms = r_ms;
    }
    let n = items.max(1) as f64;
    let per_item_ms = |s: f64| s * 1000.0 / n;
    println!(
        "bench runner: {items} fake items of {work_us} µs CPU each, one job, SQLite stores in {}, median of {ROUNDS} rounds",
        dir.path().parent().map(|p| p.display().to_string()).unwrap_or_default()
    );
    println!("  {load_before} before, {} after", bench_fake::load());
    println!(
        "  baseline (plain loop, same runs and stores): {:.3} ms/item, of which the runs {:.3} ms",
        per_item_ms(median(base.clone())),
        base_run_ms / n
    );
    println!(
        "  runner:                                       {:.3} ms/item, of which the runs {:.3} ms",
        per_item_ms(median(run.clone())),
        runner_run_ms / n
    );
    println!(
        "  runner overhead per item (runner - baseline): {:.3} ms (target <= 1 ms)",
        per_item_ms(median(overhead))
    );
    println!(
        "  wall minus the runs' own time, per item (runner; includes storing): {:.3} ms",
        (median(run) * 1000.0 - runner_run_ms) / n
    );
    Ok(ExitCode::SUCCESS)
}
