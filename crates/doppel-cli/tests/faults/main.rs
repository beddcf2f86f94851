//! The fault-injection suite (issue 14, docs/reliability.md): the `doppel`
//! binary with real gdb and lldb, under injected faults. Each group prints
//!
//! `faults: group=<g> cases=<n> panics=<n> hangs=<n> runs_lost=<n> runs_duplicated=<n> processes_left=<n> messages_without_cause=<n>`
//!
//! and asserts that every count but `cases` is 0. `DOPPEL_SOAK=<n>` repeats
//! the killed-doppel group with `n` kills instead of 2.
//!
//! Processes left behind are found two ways: every descendant of doppel
//! seen while it ran (sampled through `/proc`) that is still alive
//! afterwards, and every process whose executable lies in the test's
//! temporary directory (the programs under test are built there).

use doppel_core::Verdict;
use doppel_core::store::{RunFilter, Store};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A group's counts; [`Tally::finish`] prints the line and asserts.
#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    panics: usize,
    hangs: usize,
    runs_lost: usize,
    runs_duplicated: usize,
    processes_left: usize,
    messages_without_cause: usize,
    notes: Vec<String>,
}

impl Tally {
    fn finish(self, group: &str) {
        println!(
            "faults: group={group} cases={} panics={} hangs={} runs_lost={} runs_duplicated={} processes_left={} messages_without_cause={}",
            self.cases,
            self.panics,
            self.hangs,
            self.runs_lost,
            self.runs_duplicated,
            self.processes_left,
            self.messages_without_cause
        );
        let bad = self.panics
            + self.hangs
            + self.runs_lost
            + self.runs_duplicated
            + self.processes_left
            + self.messages_without_cause;
        assert_eq!(bad, 0, "group {group}: {:#?}", self);
    }
}

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/c")
        .join(name)
}

fn doppel_cmd(db: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("doppel"));
    c.arg("--db").arg(db).env("CI", "1").stdin(Stdio::null());
    c
}

/// Waits for `child` at most `limit`, sampling its descendants into `seen`.
/// `None` (after killing it) when it hangs.
fn wait_sampling(child: &mut Child, limit: Duration, seen: &mut BTreeSet<u32>) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        seen.extend(doppel_core::process::descendants(child.id()));
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// Processes still running among `seen`, or with an executable under
/// `dir`, after a grace period for the keeper (up to 5 s).
fn left_behind(seen: &BTreeSet<u32>, dir: &Path) -> Vec<String> {
    let start = Instant::now();
    loop {
        let mut left: Vec<String> = seen
            .iter()
            .filter(|&&p| running(p))
            .map(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default())
            .collect();
        if let Ok(procs) = std::fs::read_dir("/proc") {
            for e in procs.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                    continue;
                };
                let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
                if exe.starts_with(dir) && running(pid) && !seen.contains(&pid) {
                    left.push(format!("{pid} {}", exe.display()));
                }
            }
        }
        if left.is_empty() || start.elapsed() > Duration::from_secs(5) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every stored run, as (subject name, seed) -> count, with the runs.
async fn stored(db: &Path) -> (BTreeMap<(String, u64), usize>, Vec<doppel_core::RunRecord>) {
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
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
    for r in &runs {
        *keys.entry((r.subject.name.clone(), r.seed)).or_insert(0) += 1;
    }
    (keys, runs)
}

/// Whether a run's outcome names its cause.
fn without_cause(v: &Verdict) -> bool {
    match v {
        Verdict::SubjectError { reason } | Verdict::Inconclusive { reason, .. } => reason.trim().is_empty(),
        Verdict::Divergence(f) => f.detail.trim().is_empty(),
        _ => false,
    }
}

const HOSTILE: &[(&str, &str)] = &[
    (
        "fork_bomb.c",
        "#include <unistd.h>\nint main(void) {\n    for (;;)\n        fork();\n}\n",
    ),
    (
        "daemon.c",
        "#include <stdlib.h>\n#include <unistd.h>\nint main(void) {\n    if (fork() == 0) {\n        setsid();\n        if (fork() == 0) {\n            for (;;)\n                sleep(1);\n        }\n        exit(0);\n    }\n    return 0;\n}\n",
    ),
    (
        "flood.c",
        "#include <stdio.h>\nint main(void) {\n    for (;;)\n        puts(\"flood flood flood flood flood flood flood flood\");\n}\n",
    ),
    (
        "alloc_20g.c",
        "#include <stdlib.h>\n#include <string.h>\nint main(void) {\n    char *p = malloc(20UL << 30);\n    if (p)\n        memset(p, 1, 20UL << 30);\n    return p == 0;\n}\n",
    ),
    (
        "segfault.c",
        "int main(void) {\n    volatile int *p = 0;\n    *p = 1;\n    return 0;\n}\n",
    ),
    ("abort.c", "#include <stdlib.h>\nint main(void) {\n    abort();\n}\n"),
    (
        "spin.c",
        "int main(void) {\n    volatile int x = 0;\n    for (;;)\n        x++;\n}\n",
    ),
];

/// Hostile programs under gdb and lldb: each is one recorded outcome with a
/// cause, the campaign goes on and ends, and nothing they start survives.
#[tokio::test(flavor = "multi_thread")]
async fn hostile_programs() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("hostile");
    std::fs::create_dir(&src).unwrap();
    for (name, text) in HOSTILE {
        std::fs::write(src.join(name), text).unwrap();
    }
    let db = dir.path().join("doppel.db");
    let mut t = Tally::default();
    let mut seen = BTreeSet::new();
    let mut child = doppel_cmd(&db)
        .args([
            "diff",
            "--runs-per-program",
            "1",
            "--action-timeout-ms",
            "3000",
            "--max-breakpoints",
            "1",
            "--quiet",
        ])
        .arg(&src)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_sampling(&mut child, Duration::from_secs(400), &mut seen);
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    t.cases = HOSTILE.len();
    match status {
        None => t.hangs += 1,
        Some(s) if !s.success() => {
            t.notes.push(format!("doppel exited with {s}: {err}"));
            t.messages_without_cause += usize::from(err.trim().is_empty());
            t.runs_lost += HOSTILE.len();
        }
        Some(_) => {}
    }
    t.panics += err.matches("panicked").count();
    let left = left_behind(&seen, dir.path());
    t.processes_left += left.len();
    t.notes.extend(left);
    let (keys, runs) = stored(&db).await;
    for (name, _) in HOSTILE {
        match keys.iter().find(|((s, _), _)| s.ends_with(name)) {
            None => t.runs_lost += 1,
            Some((_, &n)) => t.runs_duplicated += n - 1,
        }
    }
    for r in &runs {
        if without_cause(&r.verdict) {
            t.messages_without_cause += 1;
            t.notes.push(format!("{}: {:?}", r.subject.name, r.verdict));
        }
    }
    t.finish("hostile_programs");
}

/// doppel killed with SIGKILL at seeded random points of a gdb/lldb
/// campaign, then `--resume`: nothing doppel started survives the kill, and
/// the resumed campaign stores exactly one run per (program, seed).
#[tokio::test(flavor = "multi_thread")]
async fn doppel_killed() {
    let kills: u64 = std::env::var("DOPPEL_SOAK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("out/doppel.db");
    let seeds = 12u64;
    let programs = ["loops.c", "structs.c"];
    let args = |resume: bool| {
        let mut c = doppel_cmd(&db);
        c.args([
            "diff",
            "--runs-per-program",
            &seeds.to_string(),
            "--jobs",
            "2",
            "--quiet",
        ]);
        if resume {
            c.arg("--resume");
        }
        for p in programs {
            c.arg(corpus(p));
        }
        c.stdout(Stdio::null()).stderr(Stdio::piped());
        c
    };
    let mut t = Tally::default();
    // A seeded xorshift: the kill points are reproducible.
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for i in 0..kills {
        t.cases += 1;
        let mut child = args(i > 0).spawn().unwrap();
        let mut seen = BTreeSet::new();
        // Kill 1.5 to 6 s after the debuggers are up.
        let delay = Duration::from_millis(1500 + next() % 4500);
        let start = Instant::now();
        let mut up = None;
        while start.elapsed() < Duration::from_secs(120) {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            let d = doppel_core::process::descendants(child.id());
            seen.extend(d.iter().copied());
            if up.is_none() && d.len() >= 2 {
                up = Some(Instant::now());
            }
            if up.is_some_and(|u| u.elapsed() >= delay) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let _ = child.wait();
        let left = left_behind(&seen, dir.path());
        t.processes_left += left.len();
        t.notes.extend(left);
    }
    // Resume to the end.
    t.cases += 1;
    let mut child = args(true).spawn().unwrap();
    let mut seen = BTreeSet::new();
    match wait_sampling(&mut child, Duration::from_secs(600), &mut seen) {
        None => t.hangs += 1,
        Some(s) if !s.success() => {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            t.panics += err.matches("panicked").count();
            t.notes.push(format!("resume exited with {s}: {err}"));
            t.runs_lost += 1;
        }
        Some(_) => {}
    }
    let left = left_behind(&seen, dir.path());
    t.processes_left += left.len();
    t.notes.extend(left);
    let (keys, _) = stored(&db).await;
    for p in programs {
        for seed in 0..seeds {
            match keys.iter().find(|((s, k), _)| s.ends_with(p) && *k == seed) {
                None => t.runs_lost += 1,
                Some((_, &n)) => t.runs_duplicated += n - 1,
            }
        }
    }
    t.finish("doppel_killed");
}

/// Debuggers killed (`SIGKILL`) and stopped (`SIGSTOP`) at seeded random
/// points of a gdb/lldb campaign: each is a recorded tool failure or
/// timeout with its cause, the campaign ends with every (program, seed)
/// stored once, and nothing is left running.
#[tokio::test(flavor = "multi_thread")]
async fn debuggers_killed_and_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("doppel.db");
    let seeds = 6u64;
    let programs = ["loops.c", "structs.c"];
    let mut c = doppel_cmd(&db);
    c.args([
        "diff",
        "--runs-per-program",
        &seeds.to_string(),
        "--jobs",
        "2",
        "--action-timeout-ms",
        "3000",
        "--quiet",
    ]);
    for p in programs {
        c.arg(corpus(p));
    }
    let mut child = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut t = Tally::default();
    let mut seen = BTreeSet::new();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let start = Instant::now();
    let mut next_fault = Instant::now() + Duration::from_millis(1500);
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(600) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        let tree = doppel_core::process::descendants(child.id());
        seen.extend(tree.iter().copied());
        if Instant::now() >= next_fault {
            let debuggers: Vec<u32> = tree
                .into_iter()
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.trim() == "gdb" || c.trim().starts_with("lldb-dap"))
                })
                .collect();
            if !debuggers.is_empty() {
                let victim = debuggers[(next() % debuggers.len() as u64) as usize];
                let sig = if next() % 2 == 0 { libc::SIGKILL } else { libc::SIGSTOP };
                unsafe { libc::kill(victim as i32, sig) };
                t.cases += 1;
            }
            next_fault = Instant::now() + Duration::from_millis(1000 + next() % 2000);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    t.panics += err.matches("panicked").count();
    match status {
        None => t.hangs += 1,
        Some(s) if !s.success() => {
            t.notes.push(format!("doppel exited with {s}: {err}"));
            t.messages_without_cause += usize::from(err.trim().is_empty());
        }
        Some(_) => {}
    }
    let left = left_behind(&seen, dir.path());
    t.processes_left += left.len();
    t.notes.extend(left);
    let (keys, runs) = stored(&db).await;
    for p in programs {
        for seed in 0..seeds {
            match keys.iter().find(|((s, k), _)| s.ends_with(p) && *k == seed) {
                None => t.runs_lost += 1,
                Some((_, &n)) => t.runs_duplicated += n - 1,
            }
        }
    }
    for r in &runs {
        if without_cause(&r.verdict) {
            t.messages_without_cause += 1;
            t.notes.push(format!("{}: {:?}", r.subject.name, r.verdict));
        }
    }
    assert!(t.cases > 0, "no debugger was seen to inject a fault into");
    t.finish("debuggers_killed_and_stopped");
}
