//! What every group of the suite shares: the `doppel` command, waiting for
//! it while watching its process tree, reading back the store, and the
//! table line of a group ([`finish`]).

use doppel_core::Verdict;
use doppel_core::faults::{Tally, Watch};
use doppel_core::store::{RunFilter, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Prints the group's table line and asserts that every count but `cases`
/// is 0 (the notes say what each was about).
pub fn finish(t: Tally, group: &str) {
    println!("{}", t.line(group));
    assert_eq!(t.bad(), 0, "group {group}: {t:#?}");
}

/// A program of the bundled C corpus.
pub fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/c")
        .join(name)
}

/// A program of the bundled JavaScript corpus.
pub fn corpus_js(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/js")
        .join(name)
}

/// `doppel --db <db>` with no terminal input.
pub fn doppel_cmd(db: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("doppel"));
    // Reduction (on by default) is tested in e2e_diff_reduce.rs.
    c.arg("--db")
        .arg(db)
        .env("CI", "1")
        .env("DOPPEL_REDUCE", "false")
        .stdin(Stdio::null());
    c
}

/// Waits for `child` at most `limit`, sampling its process tree into
/// `watch`. `None` (after killing it) when it hangs.
pub fn wait_sampling(child: &mut Child, limit: Duration, watch: &mut Watch) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        watch.sample(child.id());
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Counts how a faulted campaign's doppel ended: panics in its stderr, a
/// hang (`status` is `None`), or a failing exit with its message (a
/// message without a cause when stderr is empty).
pub fn tally_exit(t: &mut Tally, child: &mut Child, status: Option<std::process::ExitStatus>) {
    let err = stderr_of(child);
    t.panics += err.matches("panicked").count();
    match status {
        None => t.hangs += 1,
        Some(s) if !s.success() => {
            t.notes.push(format!("doppel exited with {s}: {err}"));
            t.messages_without_cause += usize::from(err.trim().is_empty());
        }
        Some(_) => {}
    }
}

/// The rest of `child`'s standard error (piped).
pub fn stderr_of(child: &mut Child) -> String {
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    err
}

/// Counts what `watch` and the cgroups of the doppel processes `doppels`
/// left behind (processes still running, cgroup directories) into `t`,
/// after up to 5 s for the keeper, plus every live process whose
/// executable lies under `dir` (the programs under test are built there).
pub fn count_left(t: &mut Tally, watch: &Watch, doppels: &[u32], dir: &Path) {
    let mut left = watch.left_behind(doppels, Duration::from_secs(5));
    if let Ok(procs) = std::fs::read_dir("/proc") {
        for e in procs.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
            let running = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
            if exe.starts_with(dir) && running && !left.iter().any(|l| l.starts_with(&format!("process {pid} "))) {
                left.push(format!("process {pid} {}", exe.display()));
            }
        }
    }
    t.processes_left += left.len();
    t.notes.extend(left);
}

/// Every run stored at `db` (a SQLite path or a store URL), as (subject
/// name, seed) -> count, with the runs.
pub async fn stored(db: impl AsRef<std::ffi::OsStr>) -> (BTreeMap<(String, u64), usize>, Vec<doppel_core::RunRecord>) {
    let store = Store::open(db.as_ref().to_str().unwrap()).await.unwrap();
    let n = store.summary(&RunFilter::default()).await.unwrap().runs as usize;
    let mut runs = Vec::new();
    let mut id = 1;
    while runs.len() < n && id < 100_000 {
        if let Some(r) = store.run(id).await.unwrap() {
            runs.push(r);
        }
        id += 1;
    }
    let mut keys = BTreeMap::new();
    // A finding a run went on past is a record of its own (`...#finding<k>`),
    // not another run of its (program, seed).
    for r in runs.iter().filter(|r| !r.key.contains("#finding")) {
        *keys.entry((r.subject.name.clone(), r.seed)).or_insert(0) += 1;
    }
    (keys, runs)
}

/// Counts, for every (program, seed) of a campaign, a run not stored as
/// lost and one stored more than once as duplicated; and every stored run
/// whose outcome does not name its cause.
pub fn count_runs(
    t: &mut Tally,
    keys: &BTreeMap<(String, u64), usize>,
    runs: &[doppel_core::RunRecord],
    programs: &[&str],
    seeds: u64,
) {
    for p in programs {
        for seed in 0..seeds {
            match keys.iter().find(|((s, k), _)| s.ends_with(p) && *k == seed) {
                None => t.runs_lost += 1,
                Some((_, &n)) => t.runs_duplicated += n - 1,
            }
        }
    }
    for r in runs {
        if without_cause(&r.verdict) {
            t.messages_without_cause += 1;
            t.notes.push(format!("{}: {:?}", r.subject.name, r.verdict));
        }
    }
}

/// Whether a run's outcome names its cause.
pub fn without_cause(v: &Verdict) -> bool {
    match v {
        Verdict::SubjectError { reason } | Verdict::Inconclusive { reason, .. } => reason.trim().is_empty(),
        Verdict::Divergence(f) => f.detail.trim().is_empty(),
        _ => false,
    }
}

/// A seeded xorshift: fault points are reproducible.
pub struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
