//! Issue 13 part 3's scale-out test: three worker processes claim one
//! campaign's work items from one PostgreSQL (`store::queue`), each in its
//! own network namespace as on the project's test hosts (a veth pair per
//! worker; PostgreSQL listens on the host ends), and one is killed with
//! SIGKILL midway, holding leases. The union of the stored runs must equal
//! a single-machine campaign with the same seeds: no duplicate, no loss.
//!
//! The workers run the campaign runner (`doppel_core::campaign`, as
//! `--claim --jobs 1`) on a CPU-light, deterministic fake technique (a run
//! is a 40 ms sleep and a record that depends only on its key and seed), so
//! the test checks the claiming, not a debugger; the CLI's `e2e_claim`
//! runs `doppel diff --claim` with real debuggers.
//!
//! `harness = false`: this binary is also the worker (`--worker ...`), so
//! no extra binary has to be built or found. Needs root (namespaces, veth)
//! and PostgreSQL 15, like the store's other PostgreSQL tests.

mod support;

use doppel_core::RunRecord;
use doppel_core::campaign::{self, Item, ItemError, Job, Options, Progress, Sink, Source, Technique};
use doppel_core::process::{Sandbox, spawn};
use doppel_core::store::Store;
use doppel_core::store::queue::WorkItem;
use doppel_core::{ActionKind, DivergenceKind};
use std::collections::{BTreeMap, HashSet};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::postgres::start_postgres_on;
use support::*;
use tokio::io::{AsyncBufReadExt, BufReader};

const ITEMS: usize = 90;
const RUN_MS: u64 = 40;
const LEASE: Duration = Duration::from_secs(2);
const CAMPAIGN: &str = "scale";

/// The run of item `i`: deterministic in (key, seed); every fourth diverges.
fn fake_run(key: &str, seed: u64) -> RunRecord {
    let class = seed
        .is_multiple_of(4)
        .then(|| class(DivergenceKind::PauseLocation, ActionKind::StepOver, "for_statement"));
    let mut r = run(key, "p.c", seed, class);
    r.campaign = CAMPAIGN.into();
    r
}

fn items() -> Vec<WorkItem> {
    (0..ITEMS)
        .map(|i| WorkItem {
            key: format!("scale-{i:03}"),
            payload: serde_json::json!({ "seed": i }),
        })
        .collect()
}

/// The fake technique: an item sleeps [`RUN_MS`] (a debugger run mostly
/// waits) and stores [`fake_run`]. With `SCALE_HANG_AFTER=n` in its
/// environment, a worker's job hangs in its item after n stored runs,
/// holding that item's lease until it is killed.
struct Fake;

struct FakeJob {
    runs: usize,
    hang_after: Option<usize>,
}

impl Technique for Fake {
    type Input = ();
    type Job = FakeJob;
    fn name(&self) -> &str {
        "differential"
    }
    async fn setup(&self, _index: usize) -> anyhow::Result<FakeJob> {
        Ok(FakeJob {
            runs: 0,
            hang_after: std::env::var("SCALE_HANG_AFTER").ok().and_then(|n| n.parse().ok()),
        })
    }
}

impl Job for FakeJob {
    type Input = ();
    async fn run(&mut self, item: &Item<()>, sink: &Sink<'_>) -> Result<(), ItemError> {
        if self.hang_after == Some(self.runs) {
            tokio::time::sleep(Duration::from_secs(600)).await;
        }
        tokio::time::sleep(Duration::from_millis(RUN_MS)).await;
        sink.store(fake_run(&item.key, item.seed)).await;
        self.runs += 1;
        Ok(())
    }
    async fn shutdown(self) {}
}

/// The worker: the campaign runner with one job claiming from the queue
/// (`--claim`), as `doppel diff --claim --jobs 1` runs it. Prints `stored
/// KEY` per stored run.
async fn worker(url: &str, name: &str) -> anyhow::Result<()> {
    let store = Store::open(url).await?.with_retry_deadline(Duration::from_secs(30));
    let items: Vec<Item<()>> = items()
        .into_iter()
        .enumerate()
        .map(|(i, w)| Item {
            key: w.key,
            subject: "p.c".into(),
            seed: i as u64,
            input: (),
        })
        .collect();
    let options = Options {
        campaign: CAMPAIGN.into(),
        jobs: 1,
        resume: true,
        deadline: None,
        source: Source::Claim {
            worker: name.into(),
            lease: LEASE,
        },
    };
    let on_progress = |p: Progress<'_>| {
        if let Progress::Stored { run, .. } = p {
            println!("stored {}", run.key);
        }
    };
    let stats = campaign::run(&Fake, &items, &store, &options, &on_progress).await?;
    anyhow::ensure!(!stats.failed(), "worker {name}: {stats:?}");
    Ok(())
}

/// `ip` with arguments; panics with its stderr on failure.
fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip(8) (iproute2)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The path `ip netns add` binds namespace `name` to.
fn netns_path(name: &str) -> String {
    format!("/var/run/netns/{name}")
}

/// `ip` with arguments inside network namespace `name`, entered with
/// nsenter(1) rather than `ip -n`/`ip netns exec`: those also make `/`
/// a slave mount and remount `/sys`, which fails where `/` is not a mount
/// point (a chroot, as on the fresh-machine check's Debian root).
fn in_netns(name: &str, args: &[&str]) {
    let out = Command::new("nsenter")
        .arg(format!("--net={}", netns_path(name)))
        .arg("ip")
        .args(args)
        .output()
        .expect("run nsenter(1) (util-linux)");
    assert!(
        out.status.success(),
        "ip -n {name} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Network namespaces `dplN-w1..3`, each with a veth pair to the host:
/// host end 10.O.i.1, namespace end 10.O.i.2 (O picked unused). Removed on drop.
struct Namespaces {
    names: Vec<String>,
    hosts: Vec<String>,
}

impl Namespaces {
    fn create(n: usize) -> Namespaces {
        let pid = std::process::id();
        let used =
            String::from_utf8_lossy(&Command::new("ip").args(["-o", "addr"]).output().unwrap().stdout).into_owned();
        let octet = (0..100)
            .map(|k| 100 + (pid as usize + k) % 100)
            .find(|o| !used.contains(&format!(" 10.{o}.")))
            .expect("a free 10.x.0.0/16");
        let mut ns = Namespaces {
            names: Vec::new(),
            hosts: Vec::new(),
        };
        for i in 1..=n {
            let name = format!("dpl{pid}-w{i}");
            let (h, p) = (format!("dph{}{i}", pid % 100_000), format!("dpn{}{i}", pid % 100_000));
            ip(&["netns", "add", &name]);
            ns.names.push(name.clone());
            ip(&["link", "add", &h, "type", "veth", "peer", "name", &p]);
            ip(&["link", "set", &p, "netns", &name]);
            let host = format!("10.{octet}.{i}.1");
            ip(&["addr", "add", &format!("{host}/24"), "dev", &h]);
            ip(&["link", "set", &h, "up"]);
            in_netns(&name, &["addr", "add", &format!("10.{octet}.{i}.2/24"), "dev", &p]);
            in_netns(&name, &["link", "set", &p, "up"]);
            in_netns(&name, &["link", "set", "lo", "up"]);
            ns.hosts.push(host);
        }
        ns
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        // Deleting a namespace deletes its veth end, and so the pair.
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "delete", n]).status();
        }
    }
}

/// A running worker process and the lines it printed.
struct Worker {
    guard: doppel_core::process::ProcessGuard,
    lines: Arc<Mutex<Vec<String>>>,
}

fn start_worker(netns: Option<&str>, url: &str, name: &str, hang_after: Option<usize>) -> Worker {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = tokio::process::Command::new("nsenter");
            c.arg(format!("--net={}", netns_path(ns))).arg(&exe);
            c
        }
        None => tokio::process::Command::new(&exe),
    };
    if let Some(n) = hang_after {
        cmd.env("SCALE_HANG_AFTER", n.to_string());
    }
    cmd.args(["--worker", url, name])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    let mut guard = spawn(cmd, Sandbox::NONE).expect("spawn a worker");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let out = guard.child_mut().stdout.take().unwrap();
    let l = lines.clone();
    tokio::spawn(async move {
        let mut r = BufReader::new(out).lines();
        while let Ok(Some(line)) = r.next_line().await {
            l.lock().unwrap().push(line);
        }
    });
    Worker { guard, lines }
}

impl Worker {
    async fn finish(&mut self) -> std::process::ExitStatus {
        self.guard
            .wait_timeout(Duration::from_secs(150))
            .await
            .expect("worker exits within 150 s")
    }

    fn stored(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap();
        lines
            .iter()
            .filter_map(|l| l.strip_prefix("stored ").map(str::to_string))
            .collect()
    }
}

/// Every stored run of the campaign by key, ids cleared.
async fn runs_of(url: &str) -> BTreeMap<String, RunRecord> {
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM runs WHERE campaign = $1")
        .bind(CAMPAIGN)
        .fetch_all(&pool)
        .await
        .unwrap();
    let store = Store::open(url).await.unwrap();
    let mut out = BTreeMap::new();
    for id in ids {
        let mut r = store.run(id).await.unwrap().unwrap();
        r.id = None;
        assert!(out.insert(r.key.clone(), r).is_none(), "key stored twice");
    }
    out
}

async fn scale_out_test() {
    let ns = Namespaces::create(3);
    let pg = start_postgres_on(&ns.hosts, Some("10.0.0.0/8"));
    let admin = sqlx::PgPool::connect(&pg.url("postgres")).await.unwrap();
    for db in ["single", "three"] {
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {db}")))
            .execute(&admin)
            .await
            .unwrap();
    }

    // One machine: one worker on loopback.
    let single_url = pg.url("single");
    let t = Instant::now();
    let mut single = start_worker(None, &single_url, "solo", None);
    assert!(single.finish().await.success(), "the single worker failed");
    let single_time = t.elapsed();

    // Three workers, one per namespace, reaching PostgreSQL over its veth.
    let urls: Vec<String> = ns
        .hosts
        .iter()
        .map(|h| format!("postgres://postgres@{h}:{}/three", pg.port))
        .collect();
    let t = Instant::now();
    let mut workers: Vec<Worker> = (0..3)
        .map(|i| {
            start_worker(
                Some(&ns.names[i]),
                &urls[i],
                &format!("w{}", i + 1),
                (i == 1).then_some(5),
            )
        })
        .collect();
    // Kill worker 2 once it has stored five runs and hangs in its sixth,
    // holding that item's lease (killing it between two items, as the test
    // once did, leaves no lease to take over).
    let pool = sqlx::PgPool::connect(&pg.url("three")).await.unwrap();
    let waited = Instant::now();
    loop {
        // The queue's table exists once a run is stored.
        if workers[1].stored().len() >= 5 {
            let held: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM work_items WHERE worker = 'w2' AND state = 'claimed'")
                    .fetch_one(&pool)
                    .await
                    .unwrap();
            if held >= 1 {
                break;
            }
        }
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "worker 2 did not store 5 runs and hold a lease within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(workers[1].guard.pid() as i32, libc::SIGKILL) };
    let killed = workers[1].finish().await;
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&killed),
        Some(libc::SIGKILL)
    );
    for i in [0, 2] {
        assert!(workers[i].finish().await.success(), "worker {} failed", i + 1);
    }
    let three_time = t.elapsed();

    let taken_over: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM work_items WHERE attempts > 1")
        .fetch_one(&pool)
        .await
        .unwrap();
    let single_runs = runs_of(&single_url).await;
    let three_runs = runs_of(&pg.url("three")).await;
    let reported: Vec<String> = workers.iter().flat_map(|w| w.stored()).collect();
    let unique: HashSet<&String> = reported.iter().collect();
    let lost = single_runs.keys().filter(|k| !three_runs.contains_key(*k)).count();
    let duplicated = reported.len() - unique.len();
    println!(
        "faults: group=store case=worker_sigkill cases={ITEMS} stored={} lost={lost} duplicated={duplicated} \
         taken_over={taken_over} killed_worker_stored={}",
        three_runs.len(),
        workers[1].stored().len()
    );
    println!("scale: one worker {single_time:.2?}, three workers (one killed, {LEASE:?} leases) {three_time:.2?}");
    assert_eq!(single_runs.len(), ITEMS);
    assert_eq!(lost, 0);
    assert_eq!(duplicated, 0, "a run was stored by two workers");
    assert_eq!(reported.len(), ITEMS, "every run reported stored exactly once");
    assert!(taken_over >= 1, "the killed worker held leases that others took over");
    assert!(workers[1].stored().len() >= 5 && !workers[0].stored().is_empty() && !workers[2].stored().is_empty());
    assert_eq!(three_runs, single_runs, "the union equals the single-machine campaign");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if args.get(1).map(String::as_str) == Some("--worker") {
        let (url, name) = (&args[2], &args[3]);
        if let Err(e) = rt.block_on(worker(url, name)) {
            eprintln!("worker {name}: {e:#}");
            std::process::exit(1);
        }
        return;
    }
    // The harness's conventions for one test: `--list`, name filters, and
    // `--ignored` (this test is not ignored).
    const NAME: &str = "scale_out_three_workers_one_killed";
    if args.iter().any(|a| a == "--list") {
        println!("{NAME}: test");
        return;
    }
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    if args.iter().any(|a| a == "--ignored")
        || (!filters.is_empty() && !filters.iter().any(|f| NAME.contains(f.as_str())))
    {
        println!("running 0 tests");
        return;
    }
    println!("running 1 test");
    rt.block_on(scale_out_test());
    println!("test {NAME} ... ok");
}
