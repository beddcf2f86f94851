//! `doppel bench scale`: throughput of N workers claiming one campaign's
//! items from one PostgreSQL store (`--claim`) against one worker (issue
//! 13: three workers at least 2.5x one). Each worker is a process of this
//! binary (`--as-worker`, hidden) running the campaign runner with one job
//! on CPU-light fake items (a sleep of `--work-ms`, as a debugger run mostly
//! waits on the debugger, then a small record), so the figure measures the
//! claiming and storing, not the machine's cores. Prints figures; asserts
//! nothing.

use super::bench_fake::{self, Fake, Work};
use doppel_core::campaign::{self, Options, Source};
use doppel_core::store::Store;
use doppel_core::store::queue::WorkQueue;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const TECHNIQUE: &str = "bench-scale";

/// One worker (a process started by [`run`]): claims until the campaign is
/// done, prints `runs N`.
///
/// Errors: the store cannot be opened, or a run was not stored.
pub async fn worker(db: &str, campaign: &str, name: &str, n: u64, work_ms: u64) -> anyhow::Result<ExitCode> {
    let store = Store::open(db).await?;
    let options = Options {
        campaign: campaign.to_string(),
        jobs: 1,
        resume: false,
        deadline: None,
        source: Source::Claim {
            worker: name.to_string(),
            lease: Duration::from_secs(30),
        },
    };
    let fake = Fake {
        name: TECHNIQUE,
        work: Work::Sleep(Duration::from_millis(work_ms)),
    };
    let items = bench_fake::items(TECHNIQUE, campaign, n);
    let stats = campaign::run(&fake, &items, &store, &options, &|_| {}).await?;
    anyhow::ensure!(!stats.failed(), "worker {name}: {stats:?}");
    println!("runs {}", stats.runs);
    Ok(ExitCode::SUCCESS)
}

/// `workers` worker processes on a fresh campaign; returns (seconds until
/// every item was done, seconds until every worker had exited, runs the
/// workers reported). The first figure is the throughput's: at the end of a
/// campaign, workers with nothing left to claim wait a while for the last
/// items' holders (who could die and leave them), which is not work.
async fn round(db: &str, campaign: &str, workers: usize, n: u64, work_ms: u64) -> anyhow::Result<(f64, f64, u64)> {
    let exe = crate::cmd::doppel_exe()?;
    let store = Store::open(db).await?;
    let queue = WorkQueue::open(&store, campaign, "bench-observer", Duration::from_secs(30)).await?;
    let t = Instant::now();
    let children: Vec<tokio::process::Child> = (0..workers)
        .map(|w| {
            tokio::process::Command::new(&exe)
                .args(["bench", "scale", "--store", db, "--items", &n.to_string()])
                .args(["--work-ms", &work_ms.to_string(), "--as-worker", &format!("w{w}")])
                .args(["--campaign", campaign])
                .stdout(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
        })
        .collect::<Result<_, _>>()?;
    let limit = Duration::from_secs(60) + Duration::from_millis(2 * n * work_ms);
    let done = loop {
        if queue.counts().await?.done >= n {
            break t.elapsed().as_secs_f64();
        }
        anyhow::ensure!(t.elapsed() < limit, "the workers did not finish within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut runs = 0;
    for c in children {
        let out = c.wait_with_output().await?;
        anyhow::ensure!(out.status.success(), "a worker failed: {}", out.status);
        let text = String::from_utf8_lossy(&out.stdout);
        runs += text
            .lines()
            .find_map(|l| l.strip_prefix("runs ").and_then(|n| n.trim().parse::<u64>().ok()))
            .unwrap_or(0);
    }
    Ok((done, t.elapsed().as_secs_f64(), runs))
}

/// Runs the benchmark: `n` items of `work_ms` on one worker, then on
/// `workers` workers, each a fresh campaign in the PostgreSQL store `db`.
///
/// Errors: `db` is not PostgreSQL; a worker fails or the runs do not add up.
pub async fn run(db: &str, n: u64, work_ms: u64, workers: usize) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        db.starts_with("postgres://") || db.starts_with("postgresql://"),
        "doppel bench scale needs a PostgreSQL store (--store postgres://...): work claiming runs on PostgreSQL"
    );
    // Create the schema and queue table once, before workers race for it.
    Store::open(db).await?;
    let tag = format!("{}-{}", std::process::id(), chrono_free_now());
    let load_before = bench_fake::load();
    let mut figures = Vec::new();
    for w in [1, workers] {
        let campaign = format!("bench-scale-{tag}-{w}");
        let (secs, exited, runs) = round(db, &campaign, w, n, work_ms).await?;
        anyhow::ensure!(runs == n, "{w} workers stored {runs} of {n} runs");
        figures.push((w, secs, n as f64 / secs, exited));
    }
    println!(
        "bench scale: {n} fake items of {work_ms} ms (sleep: CPU-light), --jobs 1 per worker, one PostgreSQL store, --claim"
    );
    println!("  {load_before} before, {} after", bench_fake::load());
    for (w, secs, rate, exited) in &figures {
        println!(
            "  {w} worker(s): all items done after {secs:.2} s (processes started included; all exited after {exited:.2} s), \
             {rate:.1} items/s (ideal {:.1})",
            1000.0 * *w as f64 / work_ms as f64
        );
    }
    println!(
        "  throughput ratio {workers} workers / 1: {:.2}x (target >= 2.5x for 3 workers)",
        figures[1].2 / figures[0].2
    );
    Ok(ExitCode::SUCCESS)
}

/// Milliseconds since the Unix epoch (campaign names unique across runs).
fn chrono_free_now() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}
