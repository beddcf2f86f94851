//! What the fault-injection suite (`crates/doppel-cli/tests/faults/`) and
//! the soak benchmark (`doppel bench soak`) count, and how they find what a
//! doppel process left behind (issue 14, `docs/reliability.md`).
//!
//! A [`Tally`] is one group's counts, printed as one line of the suite's
//! table. A [`Watch`] follows the process trees of the doppel processes it
//! is shown ([`Watch::sample`]): every process seen is remembered with its
//! start time (pids are reused on a busy host), and [`Watch::left_behind`]
//! names those still alive after doppel ended, with every cgroup directory
//! doppel made that still exists ([`crate::cgroup::groups_left_by`]) and any
//! process still in one.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// One group's counts. Every count but `cases` must be 0.
#[derive(Default, Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Faults injected or hostile inputs tried.
    pub cases: usize,
    /// `panicked` in doppel's standard error, or a panic of the code under test.
    pub panics: usize,
    /// doppel (or the operation under test) not ending within its limit.
    pub hangs: usize,
    /// Runs (or records) that should be stored and are not.
    pub runs_lost: usize,
    /// Runs (or records) stored more than once.
    pub runs_duplicated: usize,
    /// Processes alive, and cgroup directories present, after doppel ended.
    pub processes_left: usize,
    /// Errors and recorded outcomes that do not name their cause.
    pub messages_without_cause: usize,
    /// What each non-zero count was about.
    pub notes: Vec<String>,
}

impl Tally {
    /// The sum of the counts that must be 0.
    pub fn bad(&self) -> usize {
        self.panics
            + self.hangs
            + self.runs_lost
            + self.runs_duplicated
            + self.processes_left
            + self.messages_without_cause
    }

    /// The table line: `faults: group=<g> cases=<n> panics=<n> hangs=<n>
    /// runs_lost=<n> runs_duplicated=<n> processes_left=<n>
    /// messages_without_cause=<n>`.
    pub fn line(&self, group: &str) -> String {
        format!(
            "faults: group={group} cases={} panics={} hangs={} runs_lost={} runs_duplicated={} processes_left={} messages_without_cause={}",
            self.cases,
            self.panics,
            self.hangs,
            self.runs_lost,
            self.runs_duplicated,
            self.processes_left,
            self.messages_without_cause
        )
    }

    /// Adds `other`'s counts and notes to these.
    pub fn add(&mut self, other: &Tally) {
        self.cases += other.cases;
        self.panics += other.panics;
        self.hangs += other.hangs;
        self.runs_lost += other.runs_lost;
        self.runs_duplicated += other.runs_duplicated;
        self.processes_left += other.processes_left;
        self.messages_without_cause += other.messages_without_cause;
        self.notes.extend(other.notes.iter().cloned());
    }
}

/// A process's start time since boot, in clock ticks (`/proc/<pid>/stat`
/// field 22), and whether it is running (not a zombie). `None` when gone.
fn start_time(pid: u32) -> Option<(u64, bool)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields after the command: state is field 3, start time field 22.
    let start = fields.get(19)?.parse().ok()?;
    Some((start, fields.first() != Some(&"Z")))
}

/// The processes of one or more doppel process trees, as seen while they ran.
#[derive(Default, Debug)]
pub struct Watch {
    /// pid -> (start time, command name) of every process seen.
    seen: BTreeMap<u32, (u64, String)>,
}

impl Watch {
    /// Records the live descendants of `root` (a doppel process) and every
    /// process in the cgroups it made; returns the descendants' pids.
    pub fn sample(&mut self, root: u32) -> Vec<u32> {
        let mut pids = crate::process::descendants(root);
        for dir in crate::cgroup::groups_left_by(root) {
            pids.extend(cgroup_procs(&dir));
        }
        for &p in &pids {
            if p == root || self.seen.contains_key(&p) {
                continue;
            }
            if let Some((start, _)) = start_time(p) {
                let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
                self.seen.insert(p, (start, comm.trim().to_string()));
            }
        }
        pids
    }

    /// How many processes were seen.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// Whether no process was seen.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// What is still there after the doppel processes `doppels` ended: seen
    /// processes still running (same pid and start time), cgroup
    /// directories they made, and processes in those. Waits up to `grace`
    /// for the keeper's clean-up, returning as soon as nothing is left.
    pub fn left_behind(&self, doppels: &[u32], grace: Duration) -> Vec<String> {
        let start = Instant::now();
        loop {
            let mut left: Vec<String> = self
                .seen
                .iter()
                .filter(|(p, (t, _))| start_time(**p).is_some_and(|(t2, running)| running && t2 == *t))
                .map(|(p, (_, comm))| format!("process {p} {comm}"))
                .collect();
            for &d in doppels {
                for dir in crate::cgroup::groups_left_by(d) {
                    for p in cgroup_procs(&dir) {
                        if !self.seen.contains_key(&p) {
                            left.push(format!("process {p} in {}", dir.display()));
                        }
                    }
                    left.push(format!("cgroup {}", dir.display()));
                }
            }
            if left.is_empty() || start.elapsed() >= grace {
                return left;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Forgets every process seen (a new doppel process is next).
    pub fn clear(&mut self) {
        self.seen.clear();
    }
}

fn cgroup_procs(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Peak resident set size of process `pid` so far (`VmHWM` of
/// `/proc/<pid>/status`), in KiB. `None` when gone.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Open file descriptors of process `pid` (entries of `/proc/<pid>/fd`).
/// `None` when gone.
pub fn open_fds(pid: u32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_sees_a_child_and_reports_it_alive_then_not() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let mut w = Watch::default();
        w.sample(std::process::id());
        assert!(w.len() >= 2, "{w:?}");
        let left = w.left_behind(&[], Duration::ZERO);
        assert!(left.iter().any(|l| l.ends_with(" sleep")), "{left:?}");
        crate::process::kill_tree(child.id());
        let _ = child.wait();
        let left = w.left_behind(&[], Duration::from_secs(5));
        assert!(
            left.iter().all(|l| !l.ends_with(" sleep") && !l.ends_with(" sh")),
            "{left:?}"
        );
        assert!(peak_rss_kib(std::process::id()).unwrap() > 0);
        assert!(open_fds(std::process::id()).unwrap() >= 3);
    }

    #[test]
    fn a_tally_line_lists_every_count_and_bad_sums_all_but_cases() {
        let t = Tally {
            cases: 5,
            hangs: 1,
            processes_left: 2,
            ..Tally::default()
        };
        assert_eq!(
            t.line("g"),
            "faults: group=g cases=5 panics=0 hangs=1 runs_lost=0 runs_duplicated=0 processes_left=2 messages_without_cause=0"
        );
        assert_eq!(t.bad(), 3);
    }
}
