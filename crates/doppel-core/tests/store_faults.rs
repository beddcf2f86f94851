//! Store faults (issue 13 part 5): a full disk, a corrupt file, a
//! PostgreSQL server that is down or goes away. Each case prints one line
//! `faults: group=store case=<name> ...` with what was stored, lost and
//! duplicated.
//!
//! The full-disk cases mount a small tmpfs (root only, like the PostgreSQL
//! tests, which switch to the `postgres` user): a real `ENOSPC` from the
//! kernel, so SQLite's own error path runs, not an imitation of it.

mod support;

use doppel_core::store::Store;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use support::*;

/// A tmpfs of `bytes` mounted on a fresh temporary directory; unmounted
/// (lazily, so an open file cannot keep it) on drop.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(bytes: usize) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "doppel-store-test"])
            .arg(dir.path())
            .output()
            .expect("run mount(8)");
        assert!(
            out.status.success(),
            "mounting a {bytes}-byte tmpfs failed (the full-disk tests run as root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallDisk { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// A run whose record is about `size` bytes (padding in its configuration).
fn padded_run(key: &str, seed: u64, size: usize) -> doppel_core::RunRecord {
    let mut r = run(key, "p.c", seed, None);
    // Not compressible and not repetitive, so no layer can shrink it.
    let pad: String = (0..size)
        .map(|i| {
            let x = (i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 59;
            char::from(b'a' + x as u8)
        })
        .collect();
    r.config = serde_json::json!({ "pad": pad });
    r
}

/// Inserts `n` runs of `size` bytes into the SQLite store at `db`, then
/// reopens it and compares: every insert that reported success must be
/// stored, and at least one must have failed (the disk is full).
/// Returns (reported ok, reported error, lost).
async fn fill(db: &Path, n: usize, size: usize) -> (usize, usize, usize) {
    let url = db.to_string_lossy().into_owned();
    let mut ok = HashSet::new();
    let mut failed = 0;
    {
        let store = Store::open(&url).await.expect("open the store while the disk has room");
        for i in 0..n {
            let key = format!("full-{i}");
            match store.insert_run(&padded_run(&key, i as u64, size)).await {
                Ok(_) => {
                    ok.insert(key);
                }
                Err(e) => {
                    let msg = format!("{e:#}");
                    assert!(
                        msg.contains("full") || msg.contains("disk") || msg.contains("space"),
                        "a full disk is named as the cause: {msg}"
                    );
                    failed += 1;
                }
            }
        }
        drop(store);
    }
    // Read back through a fresh connection (what `--resume` and `show` see).
    let stored = Store::open(&format!("sqlite:{url}?mode=ro"))
        .await
        .expect("reopen the full store read-only")
        .finished_keys("differential")
        .await
        .unwrap();
    let lost = ok.iter().filter(|k| !stored.contains(*k)).count();
    assert!(
        stored.iter().all(|k| ok.contains(k)),
        "a run reported as not stored is nevertheless in the store"
    );
    (ok.len(), failed, lost)
}

#[tokio::test]
async fn sqlite_on_a_full_disk_reports_every_run_it_did_not_store() {
    let disk = SmallDisk::mount(1 << 20);
    let n = 120;
    let (ok, failed, lost) = fill(&disk.path("doppel.db"), n, 20_000).await;
    println!(
        "faults: group=store case=sqlite_disk_full cases={n} stored={ok} reported_errors={failed} lost={lost} duplicated=0"
    );
    assert!(failed > 0, "1 MB cannot hold {n} runs of 20 kB: some insert must fail");
    assert_eq!(lost, 0, "runs reported as stored but missing after reopening");
}

/// Opens `url`, which must fail; returns the error text and asserts it
/// came within `limit` (not after the pool's acquire timeout).
async fn open_fails(url: &str, limit: std::time::Duration) -> String {
    let t = std::time::Instant::now();
    let r = tokio::time::timeout(std::time::Duration::from_secs(90), Store::open(url))
        .await
        .expect("Store::open returns within 90 s");
    let err = format!("{:#}", r.expect_err("opening must fail"));
    assert!(
        t.elapsed() < limit,
        "failing took {:?} (limit {limit:?}): {err}",
        t.elapsed()
    );
    err
}

#[tokio::test]
async fn a_corrupt_sqlite_file_fails_within_seconds_naming_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doppel.db");
    // Not a database: what a truncated copy or a wrong file looks like.
    std::fs::write(&path, b"this is not an SQLite database, just text. ".repeat(200)).unwrap();
    let err = open_fails(&path.to_string_lossy(), std::time::Duration::from_secs(10)).await;
    println!("faults: group=store case=sqlite_corrupt cases=1 lost=0 duplicated=0 error={err:?}");
    assert!(err.contains("not a database"), "{err}");
    assert!(!err.contains("pool timed out"), "{err}");
}

#[tokio::test]
async fn postgres_down_at_start_fails_within_seconds_naming_the_cause() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = open_fails(
        &format!("postgres://postgres:secret@127.0.0.1:{port}/doppel"),
        std::time::Duration::from_secs(10),
    )
    .await;
    println!("faults: group=store case=postgres_down_at_start cases=1 lost=0 duplicated=0 error={err:?}");
    assert!(err.to_lowercase().contains("refused"), "{err}");
    assert!(!err.contains("pool timed out") && !err.contains("secret"), "{err}");
}

/// A campaign's store loop in miniature: runs `keys` not yet stored, one
/// every 20 ms, and stops at the first error (as the runner does on
/// [`StoreUnavailable`]). Returns the keys it reported stored and the error
/// it stopped on.
async fn mini_campaign(store: &Store, keys: &[String]) -> (Vec<String>, Option<anyhow::Error>) {
    let done = store.finished_keys("differential").await.unwrap();
    let mut stored = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        if done.contains(k) {
            continue;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        match store.insert_run(&run(k, "p.c", i as u64, None)).await {
            Ok(_) => stored.push(k.clone()),
            Err(e) => return (stored, Some(e)),
        }
    }
    (stored, None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_mid_campaign_is_waited_for_then_a_clear_stop_and_resume_completes() {
    use doppel_core::store::retry::StoreUnavailable;
    use std::time::{Duration, Instant};
    let mut pg = support::postgres::start_postgres();
    let url = pg.url("postgres");
    let keys: Vec<String> = (0..60).map(|i| format!("pg-{i}")).collect();

    // 1. A restart within the deadline: the campaign waits and loses nothing.
    let store = Store::open(&url)
        .await
        .unwrap()
        .with_retry_deadline(Duration::from_secs(60));
    let campaign = {
        let (store, keys) = (store.clone(), keys[..30].to_vec());
        tokio::spawn(async move { mini_campaign(&store, &keys).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    pg.stop();
    tokio::time::sleep(Duration::from_secs(3)).await;
    pg.start();
    let (stored, err) = campaign.await.unwrap();
    assert!(err.is_none(), "{err:?}");
    assert_eq!(stored.len(), 30);
    let in_store = store.finished_keys("differential").await.unwrap();
    let lost = stored.iter().filter(|k| !in_store.contains(*k)).count();
    println!(
        "faults: group=store case=postgres_restart_mid_campaign cases=30 stored={} lost={lost} duplicated=0",
        in_store.len()
    );
    assert_eq!((lost, in_store.len()), (0, 30));

    // 2. Down past the deadline: the write fails with the real cause soon
    // after the deadline, and the campaign stops.
    let store = store.with_retry_deadline(Duration::from_secs(12));
    let campaign = {
        let (store, keys) = (store.clone(), keys.clone());
        tokio::spawn(async move { mini_campaign(&store, &keys).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let down = Instant::now();
    pg.stop();
    let (stored_before_stop, err) = tokio::time::timeout(Duration::from_secs(60), campaign)
        .await
        .expect("the campaign stops within 60 s")
        .unwrap();
    let waited = down.elapsed();
    let err = err.expect("the campaign stops with an error");
    let msg = format!("{err:#}");
    assert!(err.downcast_ref::<StoreUnavailable>().is_some(), "{msg}");
    assert!(
        msg.contains("unreachable") && msg.to_lowercase().contains("refused"),
        "{msg}"
    );
    assert!(waited < Duration::from_secs(30), "stopped after {waited:?}: {msg}");
    // A campaign that went on anyway: the next write does not wait the
    // deadline again (one attempt: the pool's 5 s acquire timeout).
    let t = Instant::now();
    let again = store.insert_run(&run("pg-late", "p.c", 99, None)).await.unwrap_err();
    assert!(again.downcast_ref::<StoreUnavailable>().is_some(), "{again:#}");
    assert!(
        t.elapsed() < Duration::from_secs(9),
        "the second write waited {:?}",
        t.elapsed()
    );

    // 3. --resume after the server is back: the rest, nothing twice.
    pg.start();
    let store = Store::open(&url).await.unwrap();
    let (resumed, err) = mini_campaign(&store, &keys).await;
    assert!(err.is_none(), "{err:?}");
    let in_store = store.finished_keys("differential").await.unwrap();
    let reported: Vec<&String> = stored.iter().chain(&stored_before_stop).chain(&resumed).collect();
    let unique: HashSet<_> = reported.iter().collect();
    let lost = keys.iter().filter(|k| !in_store.contains(*k)).count();
    println!(
        "faults: group=store case=postgres_down_mid_campaign cases={} stored={} lost={lost} duplicated={} stopped_after_ms={}",
        keys.len(),
        in_store.len(),
        reported.len() - unique.len(),
        waited.as_millis()
    );
    assert_eq!(lost, 0);
    assert_eq!(reported.len(), unique.len(), "a run was stored twice");
    assert_eq!(in_store.len(), keys.len());
}

#[tokio::test]
async fn oversized_runs_are_stored_cut_to_the_cap_with_markers() {
    use doppel_core::{EventKind, RawMessage};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cap.db");
    let store = Store::open(&db.to_string_lossy()).await.unwrap();

    // A 64 MB debugger line (as in a variable's value or an MI record).
    let mut line = run("huge-line", "p.c", 1, None);
    line.traces[0].events[1].raw = vec![RawMessage::received("x".repeat(64 << 20))];
    // A 62 MB transcript: 62,000 messages of 1 kB.
    let mut transcript = run("huge-transcript", "p.c", 2, None);
    transcript.traces[1].events[3].raw = (0..62_000)
        .map(|i| RawMessage::received(format!("{i:06} {}", "y".repeat(1000))))
        .collect();
    let (l_id, t_id) = (
        store.insert_run(&line).await.unwrap(),
        store.insert_run(&transcript).await.unwrap(),
    );

    let l = store.run(l_id).await.unwrap().unwrap();
    let text = &l.traces[0].events[1].raw[0].text;
    assert!(text.len() <= (1 << 20) + 64, "{}", text.len());
    assert!(text.ends_with(&format!("…[doppel cut: kept {} of {} bytes]", 1 << 20, 64 << 20)));
    assert_eq!(l.verdict, line.verdict, "the verdict is never cut");

    let t = store.run(t_id).await.unwrap().unwrap();
    let raw = &t.traces[1].events[3].raw;
    let marker = raw
        .iter()
        .find(|m| m.dir == "cut")
        .expect("a marker where messages were dropped");
    assert!(marker.text.contains("messages dropped"), "{}", marker.text);
    assert!(raw[0].text.starts_with("000000 ") && raw.last().unwrap().text.starts_with("061999 "));
    assert_eq!(
        t.traces[1].events.len(),
        transcript.traces[1].events.len(),
        "no event is dropped"
    );
    assert!(matches!(t.traces[1].events[3].kind, EventKind::Output(_)));

    let sizes: Vec<i64> = sqlx::query_scalar::<_, i64>("SELECT LENGTH(record_json) FROM runs ORDER BY id")
        .fetch_all(
            &sqlx::SqlitePool::connect(&format!("sqlite:{}", db.display()))
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    println!(
        "faults: group=store case=oversized_runs cases=2 lost=0 duplicated=0 stored_bytes={sizes:?} (from 64 MB and 62 MB)"
    );
    assert!(sizes.iter().all(|&s| s <= 16 << 20), "{sizes:?}");
}

/// A fake technique for the runner: each item sleeps 20 ms and stores one run.
struct Fake;
struct FakeJob;

impl doppel_core::campaign::Technique for Fake {
    type Input = ();
    type Job = FakeJob;
    fn name(&self) -> &str {
        "differential"
    }
    async fn setup(&self, _index: usize) -> anyhow::Result<FakeJob> {
        Ok(FakeJob)
    }
}

impl doppel_core::campaign::Job for FakeJob {
    type Input = ();
    async fn run(
        &mut self,
        item: &doppel_core::campaign::Item<()>,
        sink: &doppel_core::campaign::Sink<'_>,
    ) -> Result<(), doppel_core::campaign::ItemError> {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        sink.store(run(&item.key, "p.c", item.seed, None)).await;
        Ok(())
    }
    async fn shutdown(self) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runner_stops_when_postgres_stays_away_and_resume_completes() {
    use doppel_core::campaign::{self, Item, Options};
    use std::time::{Duration, Instant};
    let mut pg = support::postgres::start_postgres();
    let url = pg.url("postgres");
    let items: Vec<Item<()>> = (0..200)
        .map(|i| Item {
            key: format!("runner-{i}"),
            subject: "p.c".into(),
            seed: i,
            input: (),
        })
        .collect();
    let options = Options {
        campaign: "test".into(),
        jobs: 2,
        resume: true,
        ..Default::default()
    };
    let store = Store::open(&url)
        .await
        .unwrap()
        .with_retry_deadline(Duration::from_secs(3));
    let stopper = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        pg.stop();
        Instant::now()
    };
    let (stats, down) = tokio::join!(campaign::run(&Fake, &items, &store, &options, &|_| {}), stopper);
    let stats = stats.unwrap();
    let stopped_after = down.elapsed();
    assert!(stats.store_unavailable && stats.failed(), "{stats:?}");
    assert!(stats.not_started > 0, "{stats:?}");
    // Each job gives up after the deadline once; nothing waits per item.
    assert!(stopped_after < Duration::from_secs(30), "{stopped_after:?}");
    pg.start();
    let store = Store::open(&url).await.unwrap();
    let before = store.finished_keys("differential").await.unwrap().len();
    let resumed = campaign::run(&Fake, &items, &store, &options, &|_| {}).await.unwrap();
    assert!(!resumed.failed(), "{resumed:?}");
    let after = store.finished_keys("differential").await.unwrap().len();
    println!(
        "faults: group=store case=runner_postgres_down cases=200 stored_before_stop={before} not_stored={} \
         not_started={} stopped_after_ms={} lost={} duplicated=0",
        stats.store_errors,
        stats.not_started,
        stopped_after.as_millis(),
        200 - after
    );
    assert_eq!(after, 200, "--resume completes the campaign");
    assert_eq!(resumed.runs + resumed.skipped, 200);
}
