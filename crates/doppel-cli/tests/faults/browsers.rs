//! Group `browsers_killed_and_stopped`: a JavaScript differential campaign
//! (node, Chromium over CDP, Firefox over its remote debugging protocol)
//! whose browser processes and, separately, renderer and content processes
//! are killed (`SIGKILL`) or stopped (`SIGSTOP`) at seeded random points.

use super::support::*;
use doppel_core::faults::{Tally, Watch};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// What a fault hits.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    /// Chromium's or Firefox's main (browser) process.
    Browser,
    /// A Chromium renderer or a Firefox content process (the page's JavaScript).
    Page,
}

/// Classifies a process of doppel's tree by its command line.
fn target_of(pid: u32) -> Option<Target> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    // Chromium's and Firefox's child processes rewrite their command line
    // into one string (arguments separated by spaces, not NULs).
    let args: Vec<String> = cmdline
        .split(|&b| b == 0 || b == b' ')
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let exe = exe.file_name()?.to_string_lossy().into_owned();
    let chromium = exe == "chromium" || exe == "chrome";
    let firefox = exe.starts_with("firefox");
    if chromium {
        match args.iter().find_map(|a| a.strip_prefix("--type=")) {
            None => Some(Target::Browser),
            Some("renderer") => Some(Target::Page),
            Some(_) => None,
        }
    } else if firefox {
        match args.iter().position(|a| a == "-contentproc") {
            None => Some(Target::Browser),
            // Content processes name their kind last (`tab`); the others
            // (socket, rdd, utility) serve the browser.
            Some(_) if args.last().is_some_and(|k| k == "tab") => Some(Target::Page),
            Some(_) => None,
        }
    } else {
        None
    }
}

/// Browsers and their page processes killed and stopped mid-run: each a
/// recorded tool failure or timeout with its cause, the campaign ends with
/// every (program, seed) stored once, and no browser process, no node and
/// no cgroup of doppel's is left.
#[tokio::test(flavor = "multi_thread")]
async fn browsers_killed_and_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("doppel.db");
    // Runs take about 0.6 s each (browsers stay warm): 30 runs outlast the
    // eight faults below, which the test waits for. With 4 seeds the
    // campaign ended after 7 s, before the third fault (found on a fresh
    // root and then on every machine once runs became this fast).
    let seeds = 10u64;
    let programs = ["closures.js", "classes.js", "exceptions.js"];
    let mut c = doppel_cmd(&db);
    c.args([
        "diff",
        "--debuggers",
        "node,chromium,firefox",
        "--runs-per-program",
        &seeds.to_string(),
        "--jobs",
        "1",
        "--action-timeout-ms",
        "4000",
        "--quiet",
    ]);
    for p in programs {
        c.arg(corpus_js(p));
    }
    let mut child = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut t = Tally::default();
    let mut watch = Watch::default();
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    // The four faults in turn, each at a random victim of its kind, until
    // each kind has hit MAX_PER_KIND times: a fault between runs (a killed
    // browser is restarted by the next run's load) records nothing, so only
    // the faults that land in a run count, and the more faults the surer one
    // does; the cap keeps a slow machine's campaign from growing with them.
    let faults = [
        (Target::Browser, libc::SIGKILL),
        (Target::Page, libc::SIGKILL),
        (Target::Browser, libc::SIGSTOP),
        (Target::Page, libc::SIGSTOP),
    ];
    let mut hit = [0usize; 4];
    let start = Instant::now();
    const PER_KIND: usize = 2;
    const MAX_PER_KIND: usize = 4;
    let mut next_fault = Instant::now() + Duration::from_millis(4000);
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(900) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        let tree = watch.sample(child.id());
        // Faults only while a page is open, i.e. while runs go on: a
        // browser without a page is a start-up probe (`chromium --version`),
        // and killing that ended the campaign before its first run (exit 2,
        // no run stored) on the fresh root of 2026-12-02.
        let page_open = tree.iter().any(|&p| target_of(p) == Some(Target::Page));
        if page_open && Instant::now() >= next_fault && hit.iter().any(|&n| n < MAX_PER_KIND) {
            let k = t.cases % faults.len();
            let (want, sig) = faults[k];
            let mut victims: Vec<u32> = tree.into_iter().filter(|&p| target_of(p) == Some(want)).collect();
            victims.sort_unstable();
            victims.dedup();
            if !victims.is_empty() {
                let victim = victims[(rng.next() % victims.len() as u64) as usize];
                // SAFETY: kill(2) with a positive pid of a browser doppel started.
                unsafe { libc::kill(victim as i32, sig) };
                t.cases += 1;
                hit[k] += 1;
            }
            next_fault = Instant::now() + Duration::from_millis(1500 + rng.next() % 2000);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    tally_exit(&mut t, &mut child, status);
    count_left(&mut t, &watch, &[child.id()], dir.path());
    let (keys, runs) = stored(&db).await;
    count_runs(&mut t, &keys, &runs, &programs, seeds);
    // The faults landed in runs: some run records a browser's failure.
    let failures = runs
        .iter()
        .filter(|r| match &r.verdict {
            doppel_core::Verdict::Divergence(f) => format!("{:?}", f.class).contains("tool_failure"),
            doppel_core::Verdict::Inconclusive { .. } => true,
            _ => false,
        })
        .count();
    println!(
        "browsers: faults {hit:?} (browser kill, page kill, browser stop, page stop); runs with a tool failure or timeout: {failures}"
    );
    assert!(
        hit.iter().all(|&n| n >= PER_KIND),
        "every kind of fault was injected {PER_KIND} times before the campaign ended: {hit:?} (doppel: {status:?}; {} runs stored)",
        runs.len()
    );
    assert!(failures > 0, "no run records a browser failure");
    finish(t, "browsers_killed_and_stopped");
}
