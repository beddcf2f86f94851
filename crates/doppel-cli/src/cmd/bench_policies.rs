//! `doppel bench diff --continue-past-policies` (issue 17, "Speed"): distinct
//! non-policy divergence classes per CPU hour with runs that go on past
//! known policies against DBDB's stop at the first divergence, on the same
//! programs and seeds with the same time budget, all in one invocation. The
//! continuation is measured switch by switch (`slide_vs_reject` only, then
//! with `DiffConfig::realign_steps`, then with
//! `DiffConfig::avoid_step_out_of_main`, then going on past findings after
//! which the debuggers stand in one state, `DiffConfig::findings_per_run`,
//! the default; the classes of the findings a run went on past count, as
//! they are records of their own). Prints figures, the
//! policies runs ended on, and the ratios (the target: at least 3x);
//! asserts nothing.
//!
//! The programs and seeds are cut into 8 slices, and the behaviours take
//! turns on each slice (in an order rotated slice by slice), each slice on
//! debuggers of its own: the machine's speed drifts over a run of minutes
//! (a virtual machine's neighbours), and one behaviour after another let
//! that drift fall on whichever ran last (the stop behaviour's CPU for the
//! same work varied by 20 % between invocations).
//!
//! CPU time is doppel's own user and system time plus that of its reaped
//! children (the debuggers, shut down at the end of each slice, and through
//! them the programs they ran and reaped): `getrusage` `RUSAGE_SELF` +
//! `RUSAGE_CHILDREN`, read before and after each slice.

use doppel_core::Verdict;
use doppel_differential::campaign::{self, CampaignSpec, Prepared};
use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Slices the behaviours take turns on.
const SLICES: usize = 8;

/// What one behaviour's round measured (summed over its slices).
#[derive(Default)]
struct Round {
    runs: usize,
    /// Runs that ended on a policy, per policy name.
    ending_policies: std::collections::BTreeMap<String, usize>,
    /// Runs per verdict: program finished, action limit, policy, finding,
    /// inconclusive, subject error, not comparable (where the CPU went).
    verdicts: std::collections::BTreeMap<&'static str, usize>,
    /// Runs that ended on a non-policy finding, per divergence kind.
    ending_findings: std::collections::BTreeMap<String, usize>,
    policy_notes: usize,
    /// Findings runs went on past (new to their run): records of their own.
    finding_notes: usize,
    classes: BTreeSet<String>,
    cpu_s: f64,
    wall_s: f64,
    execution_actions: usize,
}

impl Round {
    fn per_cpu_hour(&self) -> f64 {
        self.classes.len() as f64 * 3600.0 / self.cpu_s.max(1e-9)
    }
}

/// User plus system CPU seconds of this process and its reaped children.
fn cpu_seconds() -> f64 {
    let of = |who| {
        // SAFETY: getrusage writes into the zeroed struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut u) } != 0 {
            return 0.0;
        }
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
        t(u.ru_utime) + t(u.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

/// One slice of a behaviour's round: `items` run on debuggers of their
/// own, shut down at the end (so that `RUSAGE_CHILDREN` holds their CPU),
/// added to `r`; stops once the behaviour's wall time reaches `budget`.
async fn slice(
    spec: &CampaignSpec,
    items: &[(&Arc<Prepared>, u64)],
    r: &mut Round,
    budget: Duration,
) -> anyhow::Result<()> {
    if r.wall_s >= budget.as_secs_f64() {
        return Ok(());
    }
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let mut dbg = campaign::create_debuggers(spec)?;
    // As the campaign does: one control run per program, not per seed.
    let controls = doppel_differential::control::ControlCache::default();
    for (i, &(p, seed)) in items.iter().enumerate() {
        if r.wall_s + start.elapsed().as_secs_f64() >= budget.as_secs_f64() {
            break;
        }
        if let Some((n, _)) = items.get(i + 1) {
            for d in dbg.iter_mut() {
                d.preload(&n.subject);
            }
        }
        let rec = campaign::run_one_with(spec, p, seed, &mut dbg, &controls).await;
        r.runs += 1;
        r.policy_notes += rec.policy_notes().len();
        // The findings it went on past are records of their own, with their classes.
        let noted = rec.finding_notes();
        r.finding_notes += noted.len();
        for f in noted {
            r.classes.insert(f.class.to_string());
        }
        r.execution_actions += rec.execution_actions();
        let verdict = match &rec.verdict {
            Verdict::ProgramFinished { .. } => "finished",
            Verdict::MaxActions { .. } => "action limit",
            Verdict::Divergence(f) if f.class.part("policy").is_some() => "policy",
            Verdict::Divergence(_) => "finding",
            Verdict::Inconclusive { .. } => "inconclusive",
            Verdict::SubjectError { .. } => "subject error",
            Verdict::NotComparable { .. } => "not comparable",
            Verdict::Checked { .. } => "checked",
        };
        *r.verdicts.entry(verdict).or_default() += 1;
        if let Verdict::Divergence(f) = &rec.verdict {
            if let Some(p) = f.class.part("policy") {
                *r.ending_policies.entry(p.to_string()).or_default() += 1;
            } else {
                let kind = f.class.part("divergence").unwrap_or("?").to_string();
                *r.ending_findings.entry(kind).or_default() += 1;
                r.classes.insert(f.class.to_string());
            }
        }
    }
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    drop(dbg);
    // Let the runtime reap the debuggers it was told to kill.
    tokio::time::sleep(Duration::from_millis(200)).await;
    r.wall_s += start.elapsed().as_secs_f64();
    r.cpu_s += cpu_seconds() - cpu0;
    Ok(())
}

/// Runs both behaviours on `subjects` x `seeds` (seeds 0..seeds), each
/// within `budget`, and prints the comparison.
///
/// Errors: the debuggers cannot be created.
pub async fn run(
    mut spec: CampaignSpec,
    subjects: &[Arc<Prepared>],
    seeds: u64,
    budget: Duration,
) -> anyhow::Result<ExitCode> {
    println!(
        "bench diff --continue-past-policies: {} programs x {seeds} seeds, debuggers {}, sequential (1 job), \
         budget {} s per behaviour, breakpoint lines {:?}",
        subjects.len(),
        spec.debuggers.join(","),
        budget.as_secs(),
        spec.diff.breakpoint_lines
    );
    // The stop at the first divergence, then the continuation step by step:
    // slide_vs_reject only (2026-11-28), + realigned steps, + no step out of
    // main itself (the default). Each its own switch, measured in the same run.
    // Then going on past findings too (2026-12-03, `findings_per_run`).
    let past = spec.diff.findings_per_run.max(2);
    let behaviours = [
        ("stop at first (DBDB)", false, false, false, 1),
        ("continue: slide only", true, false, false, 1),
        ("continue: + realign", true, true, false, 1),
        ("continue: + no main out", true, true, true, 1),
        ("continue: + past findings", true, true, true, past),
    ];
    // The behaviours take turns slice by slice (each slice on debuggers of
    // its own), so that a drift of the machine's speed over the run is
    // shared by all of them instead of falling on whichever ran last.
    let items: Vec<(&Arc<Prepared>, u64)> = subjects.iter().flat_map(|p| (0..seeds).map(move |s| (p, s))).collect();
    let mut rounds: Vec<Round> = behaviours.iter().map(|_| Round::default()).collect();
    for (k, part) in items.chunks(items.len().div_ceil(SLICES).max(1)).enumerate() {
        for j in 0..behaviours.len() {
            let b = (j + k) % behaviours.len();
            let (_, on, realign, avoid, per_run) = behaviours[b];
            spec.diff.continue_past_policies = on;
            spec.diff.realign_steps = realign;
            spec.diff.avoid_step_out_of_main = avoid;
            spec.diff.findings_per_run = per_run;
            slice(&spec, part, &mut rounds[b], budget).await?;
        }
    }
    for (r, (name, ..)) in rounds.iter().zip(behaviours) {
        println!(
            "{name:<26} runs {:4}  ended on a policy {:4}  policy notes {:4}  finding notes {:4}  execution actions {:5}  \
             non-policy classes {:3}  CPU {:7.1} s  wall {:7.1} s  classes per CPU hour {:7.1}",
            r.runs,
            r.ending_policies.values().sum::<usize>(),
            r.policy_notes,
            r.finding_notes,
            r.execution_actions,
            r.classes.len(),
            r.cpu_s,
            r.wall_s,
            r.per_cpu_hour()
        );
        let ending: Vec<String> = r.ending_policies.iter().map(|(p, n)| format!("{p} {n}")).collect();
        println!("{:<26} ended on: {}", "", ending.join(", "));
        let verdicts: Vec<String> = r.verdicts.iter().map(|(v, n)| format!("{v} {n}")).collect();
        println!("{:<26} runs by verdict: {}", "", verdicts.join(", "));
        let findings: Vec<String> = r.ending_findings.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!("{:<26} ended on a finding: {}", "", findings.join(", "));
    }
    let (stop, cont) = (&rounds[0], &rounds[rounds.len() - 1]);
    if !stop.classes.is_empty() {
        for (r, (name, ..)) in rounds.iter().zip(behaviours).skip(1) {
            println!(
                "{name:<26} ratio to the stop: {:.2}x",
                r.per_cpu_hour() / stop.per_cpu_hour()
            );
        }
    }
    let only_continued: Vec<&String> = cont.classes.difference(&stop.classes).collect();
    if stop.classes.is_empty() {
        println!(
            "ratio (continue, the default / stop): undefined, the stop-at-first behaviour found no non-policy class"
        );
    } else {
        println!(
            "ratio (continue, the default / stop) of distinct non-policy classes per CPU hour: {:.2}x  (issue 17 target: >= 3x)",
            cont.per_cpu_hour() / stop.per_cpu_hour()
        );
    }
    println!("classes found only with continuation: {}", only_continued.len());
    for c in only_continued {
        println!("  {c}");
    }
    Ok(ExitCode::SUCCESS)
}
