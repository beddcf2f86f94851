//! Reduction of a metamorphic finding (issue 17, item 5): delta debugging
//! (`doppel_differential::reduce::ddmin`, Zeller & Hildebrandt, TSE 2002)
//! of the initial input's action sequence, from which the follow-up's
//! sequence is derived. Each test runs the candidate as the initial run
//! (`doppel_differential::scripted`, one debugger), then the test's round
//! again on it ([`crate::sequence::replay_round`]: the same generator, so
//! the same transformation where it still applies) with the real debugger;
//! the candidate is interesting iff the relation breaks with the stored
//! class key (which names the transformation chain). The result is a
//! `ReducedCase` stored on the test ([`crate::record::MetaRecord::reduced`])
//! whose traces are the reduced initial and follow-up runs. Then the
//! test's initial program is reduced ([`crate::reduce_program`]) and the
//! case holds the reduced program, its follow-up and their traces.

use crate::program::{Builder, Program};
use crate::record::MetaRecord;
use anyhow::Context;
use doppel_core::technique::{ReduceOptions, Reduction};
use doppel_core::{Action, ClassKey, RunRecord, Trace, Verdict};
use doppel_debuggers::control::ControlCache;
use doppel_debuggers::{Debugger, DebuggerConfig};
use doppel_differential::reduce::{Interesting, ReducedCase, ddmin, describe, same_class};
use doppel_differential::reduce_program::{ProgramReduction, reduce_program_with};
use doppel_differential::scripted;
use std::time::{Duration, Instant};

/// What one test needs: the stored test's round, chain and generator
/// origin, the initial program, the debugger; with `controls` (program
/// reduction), the follow-up program's control run against the variant's
/// ([`crate::control::follow_up`]).
pub(crate) struct RoundTest<'a> {
    pub(crate) c: &'a MetaRecord,
    pub(crate) program: &'a Program,
    pub(crate) builder: &'a Builder,
    pub(crate) origin: &'a str,
    pub(crate) seed: u64,
    pub(crate) chain: &'a [crate::transformation::Transformation],
    pub(crate) class: &'a ClassKey,
    pub(crate) dcfg: DebuggerConfig,
    pub(crate) dbg: Box<dyn Debugger>,
    pub(crate) per_test: Duration,
    pub(crate) controls: Option<ControlCache>,
}

/// The bound on one test of a sequence of `actions` initial actions: the
/// initial run and a follow-up of about as many actions, plus builds.
pub(crate) fn per_test_timeout(dcfg: &DebuggerConfig, actions: usize) -> Duration {
    dcfg.action_timeout * (2 * actions as u32 + 10) + Duration::from_secs(60)
}

/// The transformations applied before the test's own (the stored chain
/// ends with it when the test applied one).
pub(crate) fn chain_before(c: &MetaRecord) -> Vec<crate::transformation::Transformation> {
    let mut chain = c.chain.clone();
    if c.transformation.is_some() {
        chain.pop();
    }
    chain
}

impl RoundTest<'_> {
    /// The candidate as the initial run, then the round: the initial and
    /// follow-up traces and the verdict; `None` past the bound (the
    /// debugger is then made afresh).
    pub(crate) async fn run(&mut self, candidate: &[Action]) -> Option<(Vec<Trace>, Verdict, Program)> {
        let program = self.program;
        let nt = |l: Option<u32>| program.node_type(l);
        let work = async {
            let initial = scripted::run(
                std::slice::from_mut(&mut self.dbg),
                &program.subject,
                candidate,
                &self.c.meta.initial,
                &nt,
            )
            .await;
            let trace = initial.traces.into_iter().next()?;
            let (follow, v, _, follow_program) = crate::sequence::replay_round_with_program(
                &mut self.dbg,
                program,
                &trace,
                self.origin,
                self.seed,
                self.c.round,
                self.chain,
                &self.c.meta,
                self.builder,
                self.controls.as_ref(),
            )
            .await;
            Some((std::iter::once(trace).chain(follow).collect(), v, follow_program))
        };
        match tokio::time::timeout(self.per_test, work).await {
            Ok(r) => r,
            Err(_) => {
                let _ = tokio::time::timeout(Duration::from_secs(10), self.dbg.shutdown()).await;
                match doppel_debuggers::registry::create(&self.c.debugger_name, &self.dcfg) {
                    Ok(d) => self.dbg = d,
                    Err(e) => tracing::warn!("reduction: cannot recreate {}: {e}", self.c.debugger_name),
                }
                None
            }
        }
    }
}

impl Interesting<Action> for RoundTest<'_> {
    async fn interesting(&mut self, c: &[Action]) -> bool {
        if !scripted::well_formed(c) {
            return false;
        }
        let class = self.class;
        self.run(c).await.is_some_and(|(_, v, _)| same_class(&v, class))
    }
}

/// Reduces the stored metamorphic test `r` (a broken relation): its
/// initial actions by delta debugging within `options.budget`, then, with
/// `options.program`, its initial program with C-Vise or treereduce
/// ([`crate::reduce_program`]) within `options.budget` again; program
/// reduction's own failures are notes on the case.
///
/// Errors: not a finding, no initial run, the program does not build, the
/// debugger is missing, or the stored initial actions do not give the
/// class again.
pub async fn reduce(r: &RunRecord, cache_dir: &std::path::Path, options: &ReduceOptions) -> anyhow::Result<Reduction> {
    let started = Instant::now();
    let deadline = started + options.budget;
    let c = MetaRecord::of(r)?;
    let class = r
        .verdict
        .finding()
        .map(|f| f.class.clone())
        .ok_or_else(|| anyhow::anyhow!("run {}: not a broken relation", r.id.unwrap_or_default()))?;
    let chain = chain_before(&c);
    let origin = crate::technique::origin_of(&r.key).context("malformed key")?;
    let initial = r.traces.first().context("the test has no initial trace")?;
    let actions: Vec<Action> = initial.actions().cloned().collect();
    let p = doppel_differential::replay::prepared_of(r, &c.input, cache_dir).await?;
    if let Some(e) = &p.error {
        anyhow::bail!("the initial program does not build again: {e}");
    }
    let program = Program::new(p.subject.clone(), p.source_text.clone());
    let dcfg = crate::campaign::debugger_config(&c.input.debugger);
    let builder = Builder::new(cache_dir.join("meta-sources"), cache_dir.to_path_buf(), dcfg.limits);
    let dbg = doppel_debuggers::registry::create(&c.debugger_name, &dcfg)?;
    let per_test = per_test_timeout(&dcfg, actions.len());
    let mut test = RoundTest {
        c: &c,
        program: &program,
        builder: &builder,
        origin: &origin,
        seed: r.seed,
        chain: &chain,
        class: &class,
        dcfg: dcfg.clone(),
        dbg,
        per_test,
        controls: None,
    };
    let first = test.run(&actions).await;
    if !first.as_ref().is_some_and(|(_, v, _)| same_class(v, &class)) {
        test.dbg.shutdown().await;
        anyhow::bail!(
            "the test's {} initial actions, run as a script, do not break the relation with class {class}",
            actions.len()
        );
    }
    let dd = ddmin(actions.clone(), &mut test, deadline).await;
    let confirm = if dd.result == actions {
        first
    } else {
        test.run(&dd.result).await
    };
    test.dbg.shutdown().await;
    let Some((traces, verdict, follow_program)) = confirm.filter(|(_, v, _)| same_class(v, &class)) else {
        anyhow::bail!("the reduced sequence did not break the relation again with class {class} (flaky debugger?)");
    };
    let lines = c.input.source_text.lines().count();
    let mut notes = Vec::new();
    if !dd.complete {
        notes.push(format!(
            "delta debugging stopped at its budget of {} s",
            options.budget.as_secs()
        ));
    }
    let mut case = ReducedCase {
        actions: dd.result,
        original_actions: actions.len(),
        source_text: None,
        original_lines: lines,
        lines,
        verdict,
        traces,
        action_tests: dd.tests + 1,
        action_ms: started.elapsed().as_secs_f64() * 1000.0,
        program_ms: None,
        complete: dd.complete,
        notes,
    };
    let mut follow_up = crate::record::FollowUpProgram {
        subject: follow_program.subject.clone(),
        source_text: follow_program.text.clone(),
    };
    // Then the program (issue 17 item 5): the test's initial program, each
    // variant tested by the round re-applied to it.
    if options.program {
        let work = options.work_dir.join(format!("meta-run-{}", r.id.unwrap_or_default()));
        let reduction = ProgramReduction {
            run: r,
            source_text: &c.input.source_text,
            per_probe: per_test_timeout(&dcfg, case.actions.len()) + Duration::from_secs(30),
            doppel_exe: &options.doppel_exe,
            cache_dir,
            work: &work,
            budget: options.budget,
        };
        match reduce_program_with(&reduction, case.clone(), &crate::reduce_program::MetaProbe).await {
            Ok((reduced, extra)) => {
                case = reduced;
                if let Some(f) = extra {
                    follow_up = f;
                }
            }
            Err(e) => case.notes.push(format!("program not reduced: {e:#}")),
        }
    }
    let summary = describe(&case);
    let (n, m) = (case.actions.len(), case.original_actions);
    let line_counts = (case.lines, case.original_lines);
    let mut rec = c.clone();
    rec.reduced = Some(case);
    rec.reduced_follow_up = Some(follow_up);
    let mut out = r.clone();
    out.config = rec.to_value();
    Ok(Reduction {
        run: out,
        summary,
        actions: (n, m),
        lines: line_counts,
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// The test as its reduced case (reduced initial program when the program
/// was reduced, its follow-up program, reduced traces and verdict), what
/// the reproducer is written from; `None` without one.
pub fn reduced_run(run: &RunRecord) -> Option<RunRecord> {
    let mut rec = MetaRecord::of(run).ok()?;
    let case = rec.reduced.take()?;
    if let Some(f) = rec.reduced_follow_up.take() {
        rec.follow_up = f;
    }
    let mut r = run.clone();
    if let Some(t) = &case.source_text {
        rec.input.source_text = t.clone();
        r.subject.line_count = t.lines().count() as u32;
        r.subject.hash = doppel_differential::reduce::text_hash(t);
    }
    r.config = rec.to_value();
    r.traces = case.traces;
    r.verdict = case.verdict;
    Some(r)
}
