//! Group `store`: store faults met by the `doppel` binary (issue 13 part 5,
//! issue 14): the SQLite store on a full disk, a corrupt SQLite file, a
//! PostgreSQL server that is down at start, restarted mid-campaign, and a
//! doppel killed mid-campaign on PostgreSQL then `--resume`d. The
//! store-level cases (a server down past the retry deadline, oversized
//! runs, lease take-over) are `doppel-core/tests/store_faults.rs` and
//! `queue.rs`; the PostgreSQL server is theirs (`support/postgres.rs`).

use super::support::*;
use doppel_core::faults::{Tally, Watch};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[path = "../../../doppel-core/tests/support/postgres.rs"]
mod postgres;

/// A tmpfs of `bytes` on a fresh directory (root only), unmounted on drop.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount(bytes: usize) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "doppel-faults-store"])
            .arg(dir.path())
            .output()
            .expect("run mount(8)");
        assert!(
            out.status.success(),
            "mounting a tmpfs failed (this test runs as root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallDisk(dir)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.0.path())
            .status();
    }
}

/// The programs of the SQLite cases and of the PostgreSQL restart.
const PROGRAMS: [&str; 2] = ["loops.c", "structs.c"];
/// The programs of the killed-doppel case: other run keys than
/// [`PROGRAMS`] in the same PostgreSQL store, so `--resume` cannot take
/// the restart case's runs for its own.
const PROGRAMS_KILLED: [&str; 2] = ["switch.c", "recursion.c"];

/// `doppel --db <db> diff` on `programs`, `seeds` each, run from `cwd`
/// (the build cache goes there for a PostgreSQL store), standard error
/// piped. `extra` before the programs (`--jobs 2` unless it says).
fn diff(db: &str, cwd: &Path, programs: &[&str], seeds: u64, extra: &[&str]) -> std::process::Command {
    let mut c = doppel_cmd(Path::new(db));
    c.current_dir(cwd)
        .args(["diff", "--quiet", "--runs-per-program"])
        .arg(seeds.to_string())
        .args(extra);
    if !extra.contains(&"--jobs") {
        c.args(["--jobs", "2"]);
    }
    for p in programs {
        c.arg(corpus(p));
    }
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    c
}

/// Runs `cmd` to its end (at most `limit`), watching its tree; counts a
/// hang, panics and what it left behind. Its exit status and stderr.
fn supervise(
    t: &mut Tally,
    mut cmd: std::process::Command,
    limit: Duration,
    dir: &Path,
) -> (Option<std::process::ExitStatus>, String) {
    let mut child = cmd.spawn().unwrap();
    let mut watch = Watch::default();
    let status = wait_sampling(&mut child, limit, &mut watch);
    let err = stderr_of(&mut child);
    t.panics += err.matches("panicked").count();
    if status.is_none() {
        t.hangs += 1;
        t.notes.push(format!("no end within {limit:?}: {err}"));
    }
    count_left(t, &watch, &[child.id()], dir);
    (status, err)
}

/// A campaign on a full disk fails, names every run it could not store,
/// and stores all the others.
async fn disk_full(t: &mut Tally) {
    let disk = SmallDisk::mount(256 << 10);
    // The build cache sits beside the store; keep it on a real disk, so
    // only the store runs out of space.
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), disk.0.path().join("cache")).unwrap();
    let db = disk.0.path().join("doppel.db");
    let seeds = 6;
    let runs = seeds as usize * PROGRAMS.len();
    t.cases += 1;
    let (status, err) = supervise(
        t,
        diff(
            db.to_str().unwrap(),
            elsewhere.path(),
            &PROGRAMS,
            seeds,
            &["--jobs", "1"],
        ),
        Duration::from_secs(600),
        elsewhere.path(),
    );
    let not_stored = err.lines().filter(|l| l.contains("not stored")).count();
    let unnamed = err
        .lines()
        .filter(|l| l.contains("not stored") && !l.contains("full"))
        .count();
    let stored = match doppel_core::store::Store::open(&format!("sqlite:{}?mode=ro", db.display())).await {
        Ok(s) => s.finished_keys("differential").await.unwrap().len(),
        Err(e) => {
            t.notes
                .push(format!("disk_full: the store cannot be read: {e:#}: {err}"));
            0
        }
    };
    t.runs_lost += runs.saturating_sub(stored + not_stored);
    t.messages_without_cause += unnamed;
    if status.is_some_and(|s| s.success()) || not_stored == 0 {
        // The disk is small enough that runs cannot all fit: the campaign
        // must say so and fail.
        t.messages_without_cause += 1;
        t.notes
            .push(format!("disk_full: no run reported as not stored ({status:?}): {err}"));
    }
    println!("store: case=disk_full runs={runs} stored={stored} reported_not_stored={not_stored}");
}

/// A store that cannot be opened (a corrupt SQLite file, a PostgreSQL
/// server that is not there) ends doppel within seconds, non-zero, with
/// the cause.
fn cannot_open(t: &mut Tally, case: &str, db: &str, cwd: &Path, cause: &[&str]) {
    t.cases += 1;
    let started = Instant::now();
    let (status, err) = supervise(t, diff(db, cwd, &PROGRAMS, 1, &[]), Duration::from_secs(60), cwd);
    let lower = err.to_lowercase();
    if status.is_some_and(|s| s.success()) || !cause.iter().any(|c| lower.contains(c)) {
        t.messages_without_cause += 1;
        t.notes.push(format!("{case}: {status:?}: {err}"));
    }
    println!(
        "store: case={case} ended_after_ms={} message={:?}",
        started.elapsed().as_millis(),
        err.lines().last().unwrap_or_default()
    );
}

/// PostgreSQL stopped for a few seconds mid-campaign: the campaign waits
/// and completes, every run stored once.
async fn postgres_restart(t: &mut Tally, pg: &mut postgres::Postgres, cwd: &Path) {
    let url = pg.url("postgres");
    let seeds = 6;
    t.cases += 1;
    let mut child = diff(&url, cwd, &PROGRAMS, seeds, &[]).spawn().unwrap();
    let mut watch = Watch::default();
    // Down once the first runs are stored.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) && child.try_wait().ok().flatten().is_none() {
        watch.sample(child.id());
        if stored(&url).await.1.len() >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    pg.stop();
    let down = Instant::now();
    while down.elapsed() < Duration::from_secs(4) {
        watch.sample(child.id());
        std::thread::sleep(Duration::from_millis(100));
    }
    pg.start();
    let status = wait_sampling(&mut child, Duration::from_secs(600), &mut watch);
    let err = stderr_of(&mut child);
    t.panics += err.matches("panicked").count();
    match status {
        None => t.hangs += 1,
        Some(s) if !s.success() => t.notes.push(format!("postgres_restart: doppel exited with {s}: {err}")),
        Some(_) => {}
    }
    count_left(t, &watch, &[child.id()], cwd);
    let (keys, runs) = stored(&url).await;
    let before = (t.runs_lost, t.runs_duplicated);
    count_runs(t, &keys, &runs, &PROGRAMS, seeds);
    println!(
        "store: case=postgres_restart runs={} lost={} duplicated={}",
        runs.len(),
        t.runs_lost - before.0,
        t.runs_duplicated - before.1
    );
}

/// doppel killed (`SIGKILL`) twice mid-campaign on PostgreSQL, then
/// `--resume`: every run stored once, nothing left running.
async fn postgres_doppel_killed(t: &mut Tally, pg: &postgres::Postgres, cwd: &Path) {
    let url = pg.url("postgres");
    let seeds = 6;
    let mut rng = Rng(0x1405_7b7e_f767_814f);
    for _ in 0..2 {
        t.cases += 1;
        let mut child = diff(&url, cwd, &PROGRAMS_KILLED, seeds, &["--resume"]).spawn().unwrap();
        let mut watch = Watch::default();
        let delay = Duration::from_millis(2000 + rng.next() % 3000);
        let start = Instant::now();
        while start.elapsed() < delay && child.try_wait().ok().flatten().is_none() {
            watch.sample(child.id());
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let _ = child.wait();
        count_left(t, &watch, &[child.id()], cwd);
    }
    t.cases += 1;
    let (status, err) = supervise(
        t,
        diff(&url, cwd, &PROGRAMS_KILLED, seeds, &["--resume"]),
        Duration::from_secs(600),
        cwd,
    );
    if status.is_some_and(|s| !s.success()) {
        t.notes
            .push(format!("postgres_doppel_killed: resume exited with {status:?}: {err}"));
    }
    let (keys, runs) = stored(&url).await;
    let runs: Vec<_> = runs
        .into_iter()
        .filter(|r| PROGRAMS_KILLED.iter().any(|p| r.subject.name.ends_with(p)))
        .collect();
    let before = (t.runs_lost, t.runs_duplicated);
    count_runs(t, &keys, &runs, &PROGRAMS_KILLED, seeds);
    println!(
        "store: case=postgres_doppel_killed runs={} lost={} duplicated={}",
        runs.len(),
        t.runs_lost - before.0,
        t.runs_duplicated - before.1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn store_faults() {
    let mut t = Tally::default();
    let dir = tempfile::tempdir().unwrap();
    disk_full(&mut t).await;
    let corrupt = dir.path().join("corrupt.db");
    std::fs::write(&corrupt, vec![0x5a; 64 << 10]).unwrap();
    cannot_open(
        &mut t,
        "sqlite_corrupt",
        corrupt.to_str().unwrap(),
        dir.path(),
        &["not a database", "corrupt", "malformed"],
    );
    let unused = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    cannot_open(
        &mut t,
        "postgres_down_at_start",
        &format!("postgres://postgres@127.0.0.1:{unused}/postgres"),
        dir.path(),
        &["refused", "unreachable"],
    );
    let mut pg = postgres::start_postgres();
    postgres_restart(&mut t, &mut pg, dir.path()).await;
    postgres_doppel_killed(&mut t, &pg, dir.path()).await;
    finish(t, "store");
}
