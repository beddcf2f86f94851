//! `doppel bench soak` (issue 14, "Soak"): a long differential campaign
//! (`doppel diff`, gdb and lldb by default) on a C corpus, run as a child
//! process of this one, with a fault injected every few seconds: a debugger
//! killed (`SIGKILL`) or stopped (`SIGSTOP`), or doppel itself killed
//! (`SIGKILL`) and the campaign continued with `--resume`. Prints the fault
//! suite's counts ([`doppel_core::faults::Tally`]) plus doppel's peak
//! memory (RSS) and open file descriptors at start and end; progress lines
//! go to `<out>/progress.log` every minute, so a soak stopped early still
//! has its figures. Asserts nothing (a benchmark); the exit code is 1 when
//! a count that must be 0 is not.

use doppel_core::faults::{Tally, Watch, open_fds, peak_rss_kib};
use doppel_core::store::{RunFilter, Store};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The soak's settings (`doppel bench soak --help`).
#[derive(clap::Args, Debug)]
pub struct SoakArgs {
    /// Seeds per program: the campaign has programs x seeds runs.
    #[arg(long, default_value_t = 46)]
    pub seeds: u64,
    /// Only the first N programs (name order); 0: all.
    #[arg(long, default_value_t = 0)]
    pub programs: usize,
    /// Mean seconds between two faults (each is 0.5 to 1.5 times this).
    #[arg(long, default_value_t = 4.0)]
    pub fault_every_s: f64,
    /// Percent of faults that kill doppel itself (the rest are split
    /// evenly between debugger SIGKILL and SIGSTOP). A doppel process is
    /// killed only after its debuggers ran for `--doppel-min-life-s`.
    #[arg(long, default_value_t = 10)]
    pub doppel_kill_percent: u64,
    /// Seconds a doppel process runs runs (debuggers up) before it may be
    /// killed: a resumed campaign first finds its programs and run keys
    /// again, and a soak that kills doppel faster only measures restarts.
    #[arg(long, default_value_t = 30)]
    pub doppel_min_life_s: u64,
    /// Seed of the fault schedule.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Parallel jobs of the campaign.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Stop after this many minutes (the figures so far are printed; runs
    /// lost are then not counted, the campaign being unfinished).
    #[arg(long)]
    pub minutes: Option<f64>,
    /// A doppel process that stores no run for this many seconds is hung.
    #[arg(long, default_value_t = 300)]
    pub stall_s: u64,
    /// Directory for the store, each doppel process's standard error and
    /// `progress.log` (removed first; the build cache there is kept).
    #[arg(long, default_value = "soak-out")]
    pub out: PathBuf,
    /// More arguments for `doppel diff` (one flag or value each, e.g.
    /// `--diff-arg=--action-timeout-ms --diff-arg=3000`).
    #[arg(long = "diff-arg", allow_hyphen_values = true)]
    pub diff_args: Vec<String>,
    /// C programs (files or directories); default `../shared/corpus/c/c-testsuite`.
    pub paths: Vec<PathBuf>,
}

/// A seeded xorshift: the fault schedule is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Figures gathered while the soak runs.
#[derive(Default)]
struct Figures {
    tally: Tally,
    debugger_kills: usize,
    debugger_stops: usize,
    doppel_kills: usize,
    doppel_processes: usize,
    peak_rss_kib: u64,
    fds_start: Option<usize>,
    fds_end: Option<usize>,
    fds_max: usize,
    /// Seconds from each doppel process's start to its first debugger.
    startup_s: Vec<f64>,
}

fn programs(a: &SoakArgs) -> anyhow::Result<Vec<PathBuf>> {
    let roots = if a.paths.is_empty() {
        vec![PathBuf::from("../shared/corpus/c/c-testsuite")]
    } else {
        a.paths.clone()
    };
    let mut out = Vec::new();
    for r in roots {
        if r.is_dir() {
            for e in std::fs::read_dir(&r)? {
                let p = e?.path();
                if p.extension().is_some_and(|x| x == "c") {
                    out.push(p);
                }
            }
        } else if r.is_file() {
            out.push(r);
        } else {
            anyhow::bail!("{}: no such file or directory", r.display());
        }
    }
    out.sort();
    if a.programs > 0 {
        out.truncate(a.programs);
    }
    anyhow::ensure!(!out.is_empty(), "no C programs to soak on");
    Ok(out)
}

/// The soak's store, read-only (the campaign writes it meanwhile).
fn read_only(db: &Path) -> String {
    format!("sqlite:{}?mode=ro", db.display())
}

/// Stored runs and distinct run keys in the soak's store (an error after 30 s).
async fn counts(db: &Path) -> anyhow::Result<(u64, usize)> {
    let read = async {
        let store = Store::open(&read_only(db)).await?;
        let runs = store.summary(&RunFilter::default()).await?.runs as u64;
        let keys = store.finished_keys("differential").await?.len();
        anyhow::Ok((runs, keys))
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .map_err(|_| anyhow::anyhow!("reading the soak's store took over 30 s"))?
}

/// What reading every stored run back finds.
#[derive(Default)]
struct ReadBack {
    /// Runs whose outcome does not name its cause, a note each.
    without_cause: Vec<String>,
    /// Distinct (program, seed) pairs stored.
    pairs: usize,
    /// Runs of a (program, seed) stored before (under another key too:
    /// a run key that changed between doppel processes).
    pairs_duplicated: usize,
}

/// Reads every stored run back (see [`ReadBack`]).
async fn read_back(db: &Path, runs: u64) -> anyhow::Result<ReadBack> {
    let store = Store::open(&read_only(db)).await?;
    let mut out = Vec::new();
    let mut pairs = std::collections::BTreeMap::<(String, u64), usize>::new();
    let (mut id, mut seen) = (1i64, 0u64);
    while seen < runs && id < (runs as i64) * 2 + 1000 {
        if let Some(r) = store.run(id).await? {
            seen += 1;
            *pairs.entry((r.subject.name.clone(), r.seed)).or_default() += 1;
            let missing = match &r.verdict {
                doppel_core::Verdict::SubjectError { reason } | doppel_core::Verdict::Inconclusive { reason, .. } => {
                    reason.trim().is_empty()
                }
                doppel_core::Verdict::Divergence(f) => f.detail.trim().is_empty(),
                _ => false,
            };
            if missing {
                out.push(format!("run {id} {}: {:?}", r.subject.name, r.verdict));
            }
        }
        id += 1;
    }
    Ok(ReadBack {
        without_cause: out,
        pairs: pairs.len(),
        pairs_duplicated: pairs.values().map(|n| n - 1).sum(),
    })
}

fn log(out: &Path, line: &str) {
    println!("{line}");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out.join("progress.log"))
    {
        let _ = writeln!(f, "{line}");
    }
}

fn status_line(f: &Figures, elapsed: Duration, runs: u64, keys: usize, expected: u64) -> String {
    let t = &f.tally;
    format!(
        "soak: elapsed_s={} runs_stored={runs} distinct_keys={keys} of={expected} runs_per_min={:.1} doppel_processes={} faults={} (debugger_sigkill={} debugger_sigstop={} doppel_sigkill={}) panics={} hangs={} keys_duplicated={} processes_left={} peak_rss_mb={:.1} fds_start={} fds_now={} fds_max={}",
        elapsed.as_secs(),
        runs as f64 / elapsed.as_secs_f64().max(1.0) * 60.0,
        f.doppel_processes,
        t.cases,
        f.debugger_kills,
        f.debugger_stops,
        f.doppel_kills,
        t.panics,
        t.hangs,
        (runs as usize).saturating_sub(keys),
        t.processes_left,
        f.peak_rss_kib as f64 / 1024.0,
        f.fds_start.map_or("-".into(), |n| n.to_string()),
        f.fds_end.map_or("-".into(), |n| n.to_string()),
        f.fds_max,
    )
}

fn is_debugger(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| {
        let c = c.trim();
        c == "gdb" || c.starts_with("lldb-dap")
    })
}

/// Runs the soak (see the module documentation).
pub async fn run(a: SoakArgs) -> anyhow::Result<ExitCode> {
    let programs = programs(&a)?;
    let expected = programs.len() as u64 * a.seeds;
    // A fresh store and logs; the build cache (`cache/`, beside the store)
    // is kept: compiling the corpus again measures the compilers.
    std::fs::create_dir_all(&a.out)?;
    for e in std::fs::read_dir(&a.out)? {
        let e = e?;
        if e.file_name() != "cache" && e.file_type()?.is_file() {
            std::fs::remove_file(e.path())?;
        }
    }
    let out = a.out.canonicalize()?;
    let db = out.join("soak.db");
    let exe = crate::cmd::doppel_exe()?;
    log(
        &out,
        &format!(
            "soak: {} programs x {} seeds = {expected} runs, jobs {}, a fault every ~{} s ({}% doppel SIGKILL + --resume), seed {}",
            programs.len(),
            a.seeds,
            a.jobs,
            a.fault_every_s,
            a.doppel_kill_percent,
            a.seed
        ),
    );
    let mut f = Figures::default();
    let mut rng = Rng(a.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let start = Instant::now();
    let limit = a.minutes.map(|m| Duration::from_secs_f64(m * 60.0));
    let gap = |rng: &mut Rng| Duration::from_secs_f64(a.fault_every_s * (0.5 + (rng.next() % 1000) as f64 / 1000.0));
    let mut next_fault = Instant::now() + gap(&mut rng);
    let mut next_progress = Instant::now() + Duration::from_secs(60);
    let (mut runs, mut keys) = (0u64, 0usize);
    let mut finished = false;
    let mut stopped_early = false;
    let mut failing = 0;
    while !finished && !stopped_early {
        // One doppel process: until it ends, is killed, or hangs.
        f.doppel_processes += 1;
        let n = f.doppel_processes;
        let stderr = std::fs::File::create(out.join(format!("doppel-{n}.stderr")))?;
        let mut cmd = Command::new(&exe);
        cmd.arg("--db")
            .arg(&db)
            .args(["diff", "--resume", "--quiet", "--reduce=false", "--runs-per-program"])
            .arg(a.seeds.to_string())
            .arg("--jobs")
            .arg(a.jobs.to_string())
            .args(&a.diff_args)
            .args(&programs)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        let r_before = runs;
        let mut child: Child = cmd.spawn()?;
        let pid = child.id();
        let mut watch = Watch::default();
        let began = Instant::now();
        let mut last_growth = Instant::now();
        let mut fds_sampled = false;
        let mut up: Option<Instant> = None;
        let mut killed = false;
        let status = loop {
            if let Ok(Some(s)) = child.try_wait() {
                break Some(s);
            }
            let tree = watch.sample(pid);
            if let Some(k) = peak_rss_kib(pid) {
                f.peak_rss_kib = f.peak_rss_kib.max(k);
            }
            if let Some(fds) = open_fds(pid) {
                f.fds_max = f.fds_max.max(fds);
                f.fds_end = Some(fds);
                // "At start": the first doppel, 30 s in (its debuggers up).
                if f.fds_start.is_none() && !fds_sampled && began.elapsed() > Duration::from_secs(30) {
                    f.fds_start = Some(fds);
                }
                fds_sampled |= began.elapsed() > Duration::from_secs(30);
            }
            if limit.is_some_and(|l| start.elapsed() >= l) {
                stopped_early = true;
                killed = true;
                // SAFETY: kill(2) on our own child.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                let _ = child.wait();
                break None;
            }
            let debuggers: Vec<u32> = tree.into_iter().filter(|&p| is_debugger(p)).collect();
            if up.is_none() && !debuggers.is_empty() {
                up = Some(Instant::now());
                f.startup_s.push(began.elapsed().as_secs_f64());
            }
            // Faults only while runs run (debuggers up): not while doppel
            // finds its programs and run keys.
            if Instant::now() >= next_fault && !debuggers.is_empty() {
                next_fault = Instant::now() + gap(&mut rng);
                let roll = rng.next() % 100;
                let may_kill_doppel = up.is_some_and(|u| u.elapsed() >= Duration::from_secs(a.doppel_min_life_s));
                if roll < a.doppel_kill_percent && may_kill_doppel {
                    f.doppel_kills += 1;
                    f.tally.cases += 1;
                    killed = true;
                    // SAFETY: kill(2) on our own child.
                    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                    let _ = child.wait();
                    break None;
                }
                {
                    let victim = debuggers[(rng.next() % debuggers.len() as u64) as usize];
                    let sig = if roll.is_multiple_of(2) {
                        libc::SIGKILL
                    } else {
                        libc::SIGSTOP
                    };
                    // SAFETY: kill(2) with a positive pid of a debugger doppel started.
                    unsafe { libc::kill(victim as i32, sig) };
                    f.tally.cases += 1;
                    if sig == libc::SIGKILL {
                        f.debugger_kills += 1;
                    } else {
                        f.debugger_stops += 1;
                    }
                }
            }
            if Instant::now() >= next_progress {
                next_progress = Instant::now() + Duration::from_secs(60);
                if let Ok((r, k)) = counts(&db).await {
                    if r > runs {
                        last_growth = Instant::now();
                    }
                    (runs, keys) = (r, k);
                }
                log(&out, &status_line(&f, start.elapsed(), runs, keys, expected));
                if last_growth.elapsed() > Duration::from_secs(a.stall_s) {
                    f.tally.hangs += 1;
                    f.tally
                        .notes
                        .push(format!("doppel {n} stored no run for {} s", a.stall_s));
                    killed = true;
                    // SAFETY: kill(2) on our own child.
                    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                    let _ = child.wait();
                    break None;
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        let err = std::fs::read_to_string(out.join(format!("doppel-{n}.stderr"))).unwrap_or_default();
        let panics = err.matches("panicked").count();
        f.tally.panics += panics;
        if panics > 0 {
            f.tally
                .notes
                .push(format!("doppel {n} panicked: see doppel-{n}.stderr"));
        }
        match status {
            Some(s) if s.success() => finished = true,
            Some(s) => {
                // A campaign that ends with an error must say why.
                if err.trim().is_empty() {
                    f.tally.messages_without_cause += 1;
                }
                f.tally.notes.push(format!(
                    "doppel {n} exited with {s}: {}",
                    err.lines().last().unwrap_or_default()
                ));
                // Environment failures exit non-zero and are run again by
                // --resume; stop if nothing progresses (the stall check).
            }
            None => debug_assert!(killed),
        }
        let left = watch.left_behind(&[pid], Duration::from_secs(10));
        f.tally.processes_left += left.len();
        f.tally
            .notes
            .extend(left.into_iter().map(|l| format!("after doppel {n}: {l}")));
        if let Ok((r, k)) = counts(&db).await {
            (runs, keys) = (r, k);
        }
        if r_before == runs && status.is_some_and(|s| !s.success()) {
            failing += 1;
        } else {
            failing = 0;
        }
        if failing >= 3 {
            // Fails again and again without storing a run: no use going on.
            f.tally
                .notes
                .push("doppel failed 3 times in a row without storing a run; soak stopped".into());
            stopped_early = true;
        }
    }
    let back = tokio::time::timeout(Duration::from_secs(600), read_back(&db, runs))
        .await
        .map_err(|_| anyhow::anyhow!("reading the stored runs back took over 600 s"))??;
    // Stored twice: under one key, or a (program, seed) under two keys.
    f.tally.runs_duplicated = (runs as usize).saturating_sub(keys).max(back.pairs_duplicated);
    if back.pairs_duplicated > 0 {
        f.tally.notes.push(format!(
            "{} runs of a (program, seed) already stored under another run key",
            back.pairs_duplicated
        ));
    }
    if finished {
        f.tally.runs_lost = (expected as usize).saturating_sub(back.pairs);
    }
    f.tally.messages_without_cause += back.without_cause.len();
    f.tally.notes.extend(back.without_cause);
    log(&out, &status_line(&f, start.elapsed(), runs, keys, expected));
    log(
        &out,
        &format!(
            "{}{}",
            f.tally.line("soak"),
            if finished {
                String::new()
            } else {
                format!(" (stopped before the end: runs_lost not counted, {keys} of {expected} runs stored)")
            }
        ),
    );
    log(
        &out,
        &format!(
            "soak: doppel peak RSS {:.1} MB, open fds at start {} and end {} (max {})",
            f.peak_rss_kib as f64 / 1024.0,
            f.fds_start.map_or("-".into(), |n| n.to_string()),
            f.fds_end.map_or("-".into(), |n| n.to_string()),
            f.fds_max
        ),
    );
    if !f.startup_s.is_empty() {
        log(
            &out,
            &format!(
                "soak: {} doppel processes, {:.1} s on average from start to the first debugger (resume included)",
                f.startup_s.len(),
                f.startup_s.iter().sum::<f64>() / f.startup_s.len() as f64
            ),
        );
    }
    for note in f.tally.notes.iter().take(50) {
        log(&out, &format!("soak: note: {note}"));
    }
    Ok(if f.tally.bad() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
