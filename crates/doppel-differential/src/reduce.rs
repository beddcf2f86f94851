//! Automatic reduction of a differential finding (issue 17, "What must
//! exist" item 5): delta debugging of its action sequence while its class
//! stays the same, then (C) of its program ([`crate::reduce_program`]).
//!
//! [`ddmin`] is Zeller & Hildebrandt's minimizing delta debugging
//! ("Simplifying and Isolating Failure-Inducing Input", IEEE TSE 28(2),
//! 2002, Figure 5: subsets, then complements, then finer granularity),
//! with a cache of tested candidates and a deadline. Each test of
//! [`reduce_actions`] is one run of the candidate sequence with the real
//! debuggers ([`crate::scripted`]), bounded by a timeout; the candidate is
//! interesting iff the run diverges with the stored finding's class key.
//! The result is a [`ReducedCase`], stored on the run
//! ([`crate::record::DiffRecord::reduced`]) and used by replay and
//! reproducers.

use crate::campaign::{self, Prepared};
use crate::record::DiffRecord;
use crate::scripted;
use doppel_core::{Action, ClassKey, RunRecord, Trace, Verdict};
use doppel_debuggers::Debugger;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// A finding's reduced case, as stored on the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReducedCase {
    /// The reduced action sequence (for [`ReducedCase::source_text`] when
    /// the program was reduced too: its lines are that program's).
    pub actions: Vec<Action>,
    /// Actions of the original run up to its divergence.
    pub original_actions: usize,
    /// The reduced program, when program reduction ran and kept a smaller
    /// one; `None`: the run's own program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_text: Option<String>,
    /// Lines of the original program.
    pub original_lines: usize,
    /// Lines of the reduced program (of the original when not reduced).
    pub lines: usize,
    /// The verdict of the confirming run of the reduced case (same class).
    pub verdict: Verdict,
    /// The traces of that run (what the reproducer shows).
    pub traces: Vec<Trace>,
    /// Candidate runs of delta debugging (each a run with the real tools).
    pub action_tests: usize,
    /// Wall time of delta debugging, in milliseconds.
    pub action_ms: f64,
    /// Wall time of program reduction, in milliseconds (`None`: not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_ms: Option<f64>,
    /// Whether delta debugging finished (1-minimal) within its budget.
    pub complete: bool,
    /// Remarks (program reduction skipped and why, budget reached).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The outcome of [`ddmin`].
#[derive(Debug, Clone, PartialEq)]
pub struct Ddmin<T> {
    /// The smallest interesting configuration found.
    pub result: Vec<T>,
    /// Tests run (cache hits not counted).
    pub tests: usize,
    /// Whether the result is 1-minimal (false: the deadline stopped it).
    pub complete: bool,
}

/// Splits `c` into `n` chunks of near-equal size, in order.
fn chunks<T: Clone>(c: &[T], n: usize) -> Vec<Vec<T>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..n {
        let end = start + (c.len() - start) / (n - i);
        out.push(c[start..end].to_vec());
        start = end;
    }
    out
}

/// The test of delta debugging: whether a candidate configuration still
/// shows the failure (TSE 2002, section 3: the test outcome "fail").
pub trait Interesting<T> {
    /// Whether `candidate` is interesting.
    fn interesting(&mut self, candidate: &[T]) -> impl std::future::Future<Output = bool> + Send;
}

/// A synchronous predicate as a test (unit tests, cheap checks).
pub struct Predicate<F>(pub F);

impl<T, F: FnMut(&[T]) -> bool> Interesting<T> for Predicate<F> {
    fn interesting(&mut self, candidate: &[T]) -> impl std::future::Future<Output = bool> + Send {
        std::future::ready((self.0)(candidate))
    }
}

/// Minimizing delta debugging (TSE 2002, Figure 5) of `items`, which must
/// be interesting (not re-tested). `test` decides whether a candidate is
/// interesting; no candidate is tested twice, and no test starts after
/// `deadline`.
pub async fn ddmin<T: Clone + PartialEq + Send + Sync>(
    items: Vec<T>,
    test: &mut impl Interesting<T>,
    deadline: Instant,
) -> Ddmin<T> {
    let mut c = items;
    let mut n = 2usize;
    let mut tested: Vec<Vec<T>> = Vec::new();
    let mut tests = 0;
    while c.len() >= 2 {
        let parts = chunks(&c, n);
        let mut next: Option<(Vec<T>, usize)> = None;
        // Subsets first, then complements (n > 2: for n = 2 they are the subsets).
        let complements: Vec<Vec<T>> = if n > 2 {
            (0..n)
                .map(|i| {
                    parts
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .flat_map(|(_, p)| p.clone())
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        let candidates = parts
            .iter()
            .map(|p| (p.clone(), 2usize))
            .chain(complements.into_iter().map(|p| (p, n.saturating_sub(1).max(2))));
        for (cand, next_n) in candidates {
            if cand.is_empty() || tested.contains(&cand) {
                continue;
            }
            if Instant::now() >= deadline {
                return Ddmin {
                    result: c,
                    tests,
                    complete: false,
                };
            }
            tests += 1;
            let yes = test.interesting(&cand).await;
            tested.push(cand.clone());
            if yes {
                next = Some((cand, next_n));
                break;
            }
        }
        match next {
            Some((cand, next_n)) => {
                c = cand;
                n = next_n;
            }
            None if n >= c.len() => break,
            None => n = (2 * n).min(c.len()),
        }
    }
    Ddmin {
        result: c,
        tests,
        complete: true,
    }
}

/// The action sequence of a divergent run up to its divergence (the
/// actions recorded in its first trace, policy removals included).
pub fn divergent_actions(run: &RunRecord) -> anyhow::Result<(Vec<Action>, ClassKey)> {
    let f = run
        .verdict
        .finding()
        .ok_or_else(|| anyhow::anyhow!("run {}: not a divergence", run.id.unwrap_or_default()))?;
    let trace = run
        .traces
        .first()
        .ok_or_else(|| anyhow::anyhow!("run {}: no traces", run.id.unwrap_or_default()))?;
    let mut actions: Vec<Action> = trace.actions().cloned().collect();
    if let Some(i) = f.action_index {
        actions.truncate(i + 1);
    }
    Ok((actions, f.class.clone()))
}

/// Runs `script` on `p` with the run's configuration, bounded by
/// `per_test`; the verdict, or `None` when the bound stopped it (the
/// debuggers are then made afresh: one may be stuck mid-action).
pub async fn try_script(
    rec: &DiffRecord,
    p: &Prepared,
    script: &[Action],
    dbg: &mut Vec<Box<dyn Debugger>>,
    per_test: Duration,
) -> anyhow::Result<Option<crate::engine::RunOutcome>> {
    let spec = rec.spec("reduce".into());
    let nt = |l: Option<u32>| p.node_type(l);
    match tokio::time::timeout(per_test, scripted::run(dbg, &p.subject, script, &rec.diff, &nt)).await {
        Ok(out) => Ok(Some(out)),
        Err(_) => {
            for d in dbg.iter_mut() {
                let _ = tokio::time::timeout(Duration::from_secs(10), d.shutdown()).await;
            }
            *dbg = campaign::create_debuggers(&spec)?;
            Ok(None)
        }
    }
}

/// The bound on one test: every action may take the action timeout, plus
/// load and reset.
pub fn per_test_timeout(rec: &DiffRecord, actions: usize) -> Duration {
    Duration::from_millis(rec.diff.action_timeout_ms) * (actions as u32 + 3) + Duration::from_secs(10)
}

/// Delta debugging's test for an action sequence: one run of the candidate
/// with the real debuggers; ill-formed candidates are not run.
struct ScriptTest<'a> {
    rec: &'a DiffRecord,
    p: &'a Prepared,
    class: &'a ClassKey,
    dbg: Vec<Box<dyn Debugger>>,
    per_test: Duration,
}

impl Interesting<Action> for ScriptTest<'_> {
    async fn interesting(&mut self, c: &[Action]) -> bool {
        if !scripted::well_formed(c) {
            return false;
        }
        match try_script(self.rec, self.p, c, &mut self.dbg, self.per_test).await {
            Ok(Some(o)) => same_class(&o.verdict, self.class),
            Ok(None) => false,
            Err(e) => {
                tracing::warn!("reduction test: {e:#}");
                false
            }
        }
    }
}

/// Whether an outcome is the finding again: a divergence with `class`.
pub fn same_class(v: &Verdict, class: &ClassKey) -> bool {
    v.finding().is_some_and(|f| &f.class == class)
}

/// Reduces the action sequence of the divergent run `run` by [`ddmin`],
/// its subject rebuilt under `cache_dir`, within `budget`.
///
/// Errors: the run is not a divergence, cannot be replayed, or its
/// sequence does not give the same class when run as a script (the case
/// is then not reduced).
pub async fn reduce_actions(
    run: &RunRecord,
    cache_dir: &std::path::Path,
    budget: Duration,
) -> anyhow::Result<ReducedCase> {
    let started = Instant::now();
    let deadline = started + budget;
    let rec = DiffRecord::of(run)?;
    let (actions, class) = divergent_actions(run)?;
    let p = crate::replay::prepared_of(run, &rec.input, cache_dir).await?;
    if let Some(e) = &p.error {
        anyhow::bail!("the program does not build now: {e}");
    }
    let mut dbg = campaign::create_debuggers(&rec.spec("reduce".into()))?;
    let per_test = per_test_timeout(&rec, actions.len());
    let first = try_script(&rec, &p, &actions, &mut dbg, per_test).await?;
    let Some(first) = first.filter(|o| same_class(&o.verdict, &class)) else {
        for d in dbg.iter_mut() {
            d.shutdown().await;
        }
        anyhow::bail!(
            "the run's {} actions, run as a script, do not diverge with class {class}",
            actions.len()
        );
    };
    let mut test = ScriptTest {
        rec: &rec,
        p: &p,
        class: &class,
        dbg,
        per_test,
    };
    let dd = ddmin(actions.clone(), &mut test, deadline).await;
    let mut dbg = test.dbg;
    // The confirming run of the result (its traces are the reproducer's).
    let confirm = if dd.result == actions {
        Some(first)
    } else {
        try_script(&rec, &p, &dd.result, &mut dbg, per_test).await?
    };
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    let mut notes = Vec::new();
    if !dd.complete {
        notes.push(format!(
            "delta debugging stopped at its budget of {} s",
            budget.as_secs()
        ));
    }
    let confirm = match confirm {
        Some(o) if same_class(&o.verdict, &class) => o,
        _ => anyhow::bail!("the reduced sequence did not diverge again with class {class} (flaky tools?)"),
    };
    let lines = rec.input.source_text.lines().count();
    Ok(ReducedCase {
        actions: dd.result,
        original_actions: actions.len(),
        source_text: None,
        original_lines: lines,
        lines,
        verdict: confirm.verdict,
        traces: confirm.traces,
        action_tests: dd.tests + 1,
        action_ms: started.elapsed().as_secs_f64() * 1000.0,
        program_ms: None,
        complete: dd.complete,
        notes,
    })
}

/// Reduces a stored differential finding: its actions by [`ddmin`], then
/// (with `options.program`, C only) its program with C-Vise
/// ([`crate::reduce_program`]), each step within `options.budget`. The
/// returned run holds the [`ReducedCase`] in its record.
///
/// Errors: as [`reduce_actions`]; program reduction's own errors are
/// notes on the case (the reduced actions are kept).
pub async fn reduce_run(
    run: &RunRecord,
    cache_dir: &std::path::Path,
    options: &doppel_core::technique::ReduceOptions,
) -> anyhow::Result<doppel_core::technique::Reduction> {
    let started = Instant::now();
    let mut case = reduce_actions(run, cache_dir, options.budget).await?;
    if options.program {
        let work = options.work_dir.join(format!("run-{}", run.id.unwrap_or_default()));
        match crate::reduce_program::reduce_program(
            run,
            case.clone(),
            &options.doppel_exe,
            cache_dir,
            &work,
            options.budget,
        )
        .await
        {
            Ok(c) => case = c,
            Err(e) => case.notes.push(format!("program not reduced: {e:#}")),
        }
    }
    let mut rec = DiffRecord::of(run)?;
    let summary = describe(&case);
    let actions = (case.actions.len(), case.original_actions);
    let lines = (case.lines, case.original_lines);
    rec.reduced = Some(case);
    let mut out = run.clone();
    out.config = rec.to_value();
    Ok(doppel_core::technique::Reduction {
        run: out,
        summary,
        actions,
        lines,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// A reduced case for people: `reduced: 3 of 14 actions, 12 of 180 lines
/// (41 tests, 38.2 s + program 95.0 s)` and its notes.
pub fn describe(case: &ReducedCase) -> String {
    let mut s = format!(
        "reduced: {} of {} actions, {} of {} lines ({} tests, {:.1} s",
        case.actions.len(),
        case.original_actions,
        case.lines,
        case.original_lines,
        case.action_tests,
        case.action_ms / 1000.0
    );
    if let Some(ms) = case.program_ms {
        s.push_str(&format!(" + program {:.1} s", ms / 1000.0));
    }
    s.push(')');
    for n in &case.notes {
        s.push_str(&format!("; {n}"));
    }
    s
}

/// A reduced case as text for people (reports): its summary, the actions
/// one per line, then the program (`original` when it was not reduced).
pub fn reproducer_text(case: &ReducedCase, original: &str) -> String {
    let mut s = format!("/* {} */\n", describe(case).replace("*/", "* /"));
    for (i, a) in case.actions.iter().enumerate() {
        s.push_str(&format!("/* [{i}] {} */\n", a.to_string().replace("*/", "* /")));
    }
    s.push_str(case.source_text.as_deref().unwrap_or(original));
    s
}

/// The content hash of a program text (a reduced program's subject hash).
pub fn text_hash(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

/// The run as its reduced case: the reduced program (if any) as its source
/// text, the reduced traces and verdict; what the reproducer is written
/// from. `None` when the run holds no reduced case.
pub fn reduced_run(run: &RunRecord) -> Option<RunRecord> {
    let rec = DiffRecord::of(run).ok()?;
    let case = rec.reduced.clone()?;
    let mut r = run.clone();
    let mut rec2 = rec;
    if let Some(t) = &case.source_text {
        rec2.input.source_text = t.clone();
        r.subject.line_count = t.lines().count() as u32;
        r.subject.hash = text_hash(t);
    }
    rec2.reduced = None;
    r.config = rec2.to_value();
    r.traces = case.traces;
    r.verdict = case.verdict;
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ddmin_finds_the_failure_inducing_pair() {
        // Interesting iff 3 and 7 are both present (the TSE paper's shape).
        let mut runs = 0;
        let mut test = Predicate(|c: &[u32]| {
            runs += 1;
            c.contains(&3) && c.contains(&7)
        });
        let far = Instant::now() + Duration::from_secs(60);
        let r = ddmin((0..12).collect(), &mut test, far).await;
        assert_eq!(r.result, vec![3, 7]);
        assert!(r.complete);
        assert_eq!(r.tests, runs);
        assert!(r.tests < 40, "{} tests", r.tests);
    }

    #[tokio::test]
    async fn ddmin_stops_at_its_deadline() {
        let mut test = Predicate(|c: &[u32]| c.contains(&5));
        let r = ddmin((0..8).collect(), &mut test, Instant::now()).await;
        assert_eq!(r.result.len(), 8);
        assert!(!r.complete);
        assert_eq!(r.tests, 0);
    }

    #[test]
    fn chunks_cover_in_order() {
        assert_eq!(chunks(&[1, 2, 3, 4, 5], 2), vec![vec![1, 2], vec![3, 4, 5]]);
        assert_eq!(chunks(&[1, 2, 3], 3), vec![vec![1], vec![2], vec![3]]);
    }
}
