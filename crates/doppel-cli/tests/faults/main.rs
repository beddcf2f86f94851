//! The fault-injection suite (issue 14, docs/reliability.md): the `doppel`
//! binary with real gdb, lldb, node, Chromium, Firefox, SQLite and
//! PostgreSQL, under injected faults. This file holds the groups of hostile
//! programs, killed doppel and killed or stopped debuggers;
//! `browsers.rs` and `store.rs` one group each; `support.rs` what they
//! share. Each group prints
//!
//! `faults: group=<g> cases=<n> panics=<n> hangs=<n> runs_lost=<n> runs_duplicated=<n> processes_left=<n> messages_without_cause=<n>`
//!
//! and asserts that every count but `cases` is 0. `DOPPEL_SOAK=<n>` repeats
//! the killed-doppel group with `n` kills instead of 2.
//!
//! Processes left behind are found two ways: every descendant of doppel
//! seen while it ran (sampled through `/proc`) that is still alive
//! afterwards, and every process whose executable lies in the test's
//! temporary directory (the programs under test are built there). Every
//! cgroup directory doppel made that still exists afterwards
//! (`doppel_core::cgroup::groups_left_by`) counts as left behind too.

mod browsers;
mod store;
mod support;

use doppel_core::faults::{Tally, Watch};
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::*;

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
    let mut watch = Watch::default();
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
    let status = wait_sampling(&mut child, Duration::from_secs(400), &mut watch);
    let err = stderr_of(&mut child);
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
    count_left(&mut t, &watch, &[child.id()], dir.path());
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
    finish(t, "hostile_programs");
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
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for i in 0..kills {
        t.cases += 1;
        let mut child = args(i > 0).spawn().unwrap();
        let mut watch = Watch::default();
        // Kill 1.5 to 6 s after the debuggers are up.
        let delay = Duration::from_millis(1500 + rng.next() % 4500);
        let start = Instant::now();
        let mut up = None;
        while start.elapsed() < Duration::from_secs(120) {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            let d = watch.sample(child.id());
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
        count_left(&mut t, &watch, &[child.id()], dir.path());
    }
    // Resume to the end.
    t.cases += 1;
    let mut child = args(true).spawn().unwrap();
    let mut watch = Watch::default();
    match wait_sampling(&mut child, Duration::from_secs(600), &mut watch) {
        None => t.hangs += 1,
        Some(s) if !s.success() => {
            let err = stderr_of(&mut child);
            t.panics += err.matches("panicked").count();
            t.notes.push(format!("resume exited with {s}: {err}"));
            t.runs_lost += 1;
        }
        Some(_) => {}
    }
    count_left(&mut t, &watch, &[child.id()], dir.path());
    let (keys, runs) = stored(&db).await;
    count_runs(&mut t, &keys, &runs, &programs, seeds);
    finish(t, "doppel_killed");
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
    let mut watch = Watch::default();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
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
        let tree = watch.sample(child.id());
        if Instant::now() >= next_fault {
            let debuggers: Vec<u32> = tree
                .into_iter()
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.trim() == "gdb" || c.trim().starts_with("lldb-dap"))
                })
                .collect();
            if !debuggers.is_empty() {
                let victim = debuggers[(rng.next() % debuggers.len() as u64) as usize];
                let sig = if rng.next().is_multiple_of(2) {
                    libc::SIGKILL
                } else {
                    libc::SIGSTOP
                };
                unsafe { libc::kill(victim as i32, sig) };
                t.cases += 1;
            }
            next_fault = Instant::now() + Duration::from_millis(1000 + rng.next() % 2000);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    tally_exit(&mut t, &mut child, status);
    count_left(&mut t, &watch, &[child.id()], dir.path());
    let (keys, runs) = stored(&db).await;
    count_runs(&mut t, &keys, &runs, &programs, seeds);
    assert!(t.cases > 0, "no debugger was seen to inject a fault into");
    finish(t, "debuggers_killed_and_stopped");
}
