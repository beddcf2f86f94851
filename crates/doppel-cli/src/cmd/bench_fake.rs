//! The fake technique of the runner benchmarks (`doppel bench runner`,
//! `doppel bench scale`): items that do a fixed amount of work and store one
//! small record, so that what is measured is the campaign runner and the
//! store, not a debugger. Also what both print beside their figures (the
//! load average).

use doppel_core::campaign::{Item, ItemError, Job, Sink, Technique};
use doppel_core::{Language, RunRecord, Subject, ToolInfo, Verdict};
use std::time::{Duration, Instant};

/// What one fake item costs.
#[derive(Debug, Clone, Copy)]
pub enum Work {
    /// Busy CPU for this long (no sleeping: the scheduler's wake-up latency
    /// would swamp a sub-millisecond overhead). `bench runner`.
    Spin(Duration),
    /// A sleep of this long: latency without CPU, as a debugger run mostly
    /// waits on the debugger, so N workers on fewer cores can still show the
    /// design's speed-up. `bench scale`.
    Sleep(Duration),
}

impl Work {
    /// Does the work; returns its wall time in milliseconds.
    pub async fn perform(self) -> f64 {
        let t = Instant::now();
        match self {
            Work::Spin(d) => {
                while t.elapsed() < d {
                    std::hint::spin_loop();
                }
            }
            Work::Sleep(d) => tokio::time::sleep(d).await,
        }
        t.elapsed().as_secs_f64() * 1000.0
    }
}

/// The fake technique: every item does `work` and stores one record under
/// technique tag `name`.
pub struct Fake {
    /// The technique tag of the stored runs (`bench-runner`, `bench-scale`).
    pub name: &'static str,
    /// Each item's work.
    pub work: Work,
}

/// A job of [`Fake`].
pub struct FakeJob {
    name: &'static str,
    work: Work,
}

impl Technique for Fake {
    /// The campaign name (stored in each record).
    type Input = String;
    type Job = FakeJob;
    fn name(&self) -> &str {
        self.name
    }
    async fn setup(&self, _index: usize) -> anyhow::Result<FakeJob> {
        Ok(FakeJob {
            name: self.name,
            work: self.work,
        })
    }
}

impl Job for FakeJob {
    type Input = String;
    async fn run(&mut self, item: &Item<String>, sink: &Sink<'_>) -> Result<(), ItemError> {
        let ms = self.work.perform().await;
        sink.store(record(self.name, &item.input, &item.key, item.seed, ms))
            .await;
        Ok(())
    }
    async fn shutdown(self) {}
}

/// `n` items of campaign `campaign`, keyed `TECHNIQUE|CAMPAIGN|seed`.
pub fn items(technique: &str, campaign: &str, n: u64) -> Vec<Item<String>> {
    (0..n)
        .map(|seed| Item {
            key: format!("{technique}|{campaign}|{seed}"),
            subject: "fake".into(),
            seed,
            input: campaign.to_string(),
        })
        .collect()
}

/// The small record a fake item stores (`duration_ms`: its work's wall time).
pub fn record(technique: &str, campaign: &str, key: &str, seed: u64, duration_ms: f64) -> RunRecord {
    RunRecord {
        id: None,
        key: key.to_string(),
        technique: technique.into(),
        campaign: campaign.into(),
        subject: Subject {
            name: "fake".into(),
            language: Language::C,
            source: "fake.c".into(),
            source_name: "fake.c".into(),
            line_count: 1,
            binary: None,
            prelude: vec![],
            epilogue: vec![],
            hash: "fake".into(),
            build: "none".into(),
        },
        seed,
        config: serde_json::Value::Null,
        debuggers: vec![ToolInfo {
            name: "fake".into(),
            version: "0".into(),
            protocol: "none".into(),
            executable: "none".into(),
        }],
        verdict: Verdict::ProgramFinished { actions: 1 },
        traces: vec![],
        duration_ms,
        started_at_ms: 0,
    }
}

/// The machine's load averages over 1, 5 and 15 minutes and its cores
/// (`/proc/loadavg`, `available_parallelism`), for the line beside the
/// figures: a benchmark on a loaded machine says so.
pub fn load() -> String {
    let avg = std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("load average {avg} on {cores} cores")
}
