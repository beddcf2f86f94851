//! Iterative metamorphic testing (ISSTA'19 section 3.3): an initial run
//! from DBDB's action generator, then up to `rounds` metamorphic tests, each
//! follow-up input becoming the next test's initial input, until a relation
//! breaks or a test is inconclusive.

use crate::config::MetaConfig;
use crate::follow_up::FollowUpOutcome;
use crate::program::{Builder, Program};
use crate::round::{self, Applied};
use crate::script::Script;
use crate::transformation::Transformation;
use doppel_core::{ClassKey, Finding, Output, Trace, Verdict};
use doppel_debuggers::Debugger;
use doppel_debuggers::control::ControlCache;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One metamorphic test of a sequence, as it is stored.
#[derive(Debug, Clone)]
pub struct TestRecord {
    /// 1-based.
    pub round: usize,
    /// Transformations applied so far, this test's last.
    pub chain: Vec<Transformation>,
    /// The transformation this test applied (`None`: none applied).
    pub applied: Option<Applied>,
    /// Transformations tried before it that did not apply, each with why.
    pub skipped: Vec<(Transformation, String)>,
    /// The program the initial run of this test ran.
    pub initial: Program,
    /// The initial run's trace on it.
    pub initial_trace: Trace,
    /// The follow-up program (the initial one for action transformations).
    pub follow_up: Program,
    /// Empty when no follow-up ran.
    pub follow_up_trace: Option<Trace>,
    /// How the test ended (a divergence when the relation was broken).
    pub verdict: Verdict,
    /// The follow-up run's wall time (the initial run's too in round 1), ms.
    pub duration_ms: f64,
    /// Whether the sequence ends with this test.
    pub last: bool,
}

/// Runs the sequence for `program` with `seed` on `dbg`, handing every test
/// to `emit` as soon as it is done. Never fails: failures are verdicts.
/// With [`MetaConfig::control_run`], the programs' control runs
/// ([`crate::control`]) are taken from `controls` (run the first time): a
/// program that is not deterministic ends the sequence before its initial
/// run, a follow-up program that ends differently ends it at its test, each
/// as one not comparable test.
pub async fn run(
    dbg: &mut Box<dyn Debugger>,
    program: Program,
    seed: u64,
    cfg: &MetaConfig,
    builder: &Builder,
    controls: &ControlCache,
    emit: &mut (dyn FnMut(TestRecord) + Send),
) {
    let controls = cfg.control_run.then_some(controls);
    if let Some(cache) = controls
        && let Some(verdict) = crate::control::initial(cache, dbg.as_mut(), &program).await
    {
        emit(TestRecord {
            round: 1,
            chain: vec![],
            applied: None,
            skipped: vec![],
            follow_up: program.clone(),
            initial: program,
            initial_trace: Trace {
                debugger: dbg.info().clone(),
                events: vec![],
            },
            follow_up_trace: None,
            verdict,
            duration_ms: 0.0,
            last: true,
        });
        return;
    }
    let nt = |l: Option<u32>| program.node_type(l);
    let initial =
        doppel_differential::engine::run(std::slice::from_mut(dbg), &program.subject, seed, &cfg.initial, &nt).await;
    let trace = initial.traces.into_iter().next().unwrap_or_else(|| Trace {
        debugger: dbg.info().clone(),
        events: vec![],
    });
    let script = Script::from_trace(&trace).within_program(&program.subject);
    if let Some(reason) = unusable(&initial.verdict, &script) {
        emit(TestRecord {
            round: 1,
            chain: vec![],
            applied: None,
            skipped: vec![],
            follow_up: program.clone(),
            initial: program,
            initial_trace: trace,
            follow_up_trace: None,
            verdict: Verdict::Inconclusive { actions: 0, reason },
            duration_ms: initial.duration_ms,
            last: true,
        });
        return;
    }
    let mut extra_ms = initial.duration_ms;
    let (mut program, mut trace, mut script) = (program, trace, script);
    let mut chain = Vec::new();
    let origin = program.subject.hash.clone();
    for r in 1..=cfg.rounds {
        let mut rng = round_rng(&origin, seed, r);
        let test = round::run(dbg.as_mut(), &program, &script, cfg, builder, &mut rng, controls).await;
        if let Some(a) = &test.applied {
            chain.push(a.transformation);
        }
        let verdict = verdict(&test, &chain);
        let last = r == cfg.rounds || !matches!(verdict, Verdict::ProgramFinished { .. } | Verdict::MaxActions { .. });
        let follow_trace = test.follow_up.as_ref().map(|f| f.trace.clone());
        emit(TestRecord {
            round: r,
            chain: chain.clone(),
            applied: test.applied.clone(),
            skipped: test.skipped.clone(),
            initial: program.clone(),
            initial_trace: trace.clone(),
            follow_up: test.program.clone(),
            follow_up_trace: follow_trace.clone(),
            verdict,
            duration_ms: test.follow_up.as_ref().map_or(0.0, |f| f.duration_ms) + extra_ms,
            last,
        });
        extra_ms = 0.0;
        match (last, follow_trace) {
            (false, Some(t)) => {
                script = Script::from_trace(&t).within_program(&test.program.subject);
                trace = t;
                program = test.program;
            }
            _ => break,
        }
    }
}

/// Re-runs test `round` of a stored sequence: the same initial input
/// (`program` and its recorded `initial_trace`), the same generator (the
/// sequence's first program hash `origin` and `seed`), the same
/// configuration. Returns the new follow-up trace (if one ran), the verdict
/// and the transformation applied (`None`: none applied); `chain_before` is
/// the chain of the rounds before it.
#[allow(clippy::too_many_arguments)]
pub async fn replay_round(
    dbg: &mut Box<dyn Debugger>,
    program: &Program,
    initial_trace: &Trace,
    origin: &str,
    seed: u64,
    round: usize,
    chain_before: &[Transformation],
    cfg: &MetaConfig,
    builder: &Builder,
) -> (Option<Trace>, Verdict, Option<Applied>) {
    let (t, v, a, _) = replay_round_with_program(
        dbg,
        program,
        initial_trace,
        origin,
        seed,
        round,
        chain_before,
        cfg,
        builder,
        None,
    )
    .await;
    (t, v, a)
}

/// [`replay_round`], also giving the follow-up program (the initial one
/// for action transformations); with `controls`, a follow-up program that
/// ends differently from `program` with no breakpoint is not run (the
/// verdict is then not comparable: [`crate::control::follow_up`]).
#[allow(clippy::too_many_arguments)]
pub async fn replay_round_with_program(
    dbg: &mut Box<dyn Debugger>,
    program: &Program,
    initial_trace: &Trace,
    origin: &str,
    seed: u64,
    round: usize,
    chain_before: &[Transformation],
    cfg: &MetaConfig,
    builder: &Builder,
    controls: Option<&ControlCache>,
) -> (Option<Trace>, Verdict, Option<Applied>, Program) {
    let script = Script::from_trace(initial_trace).within_program(&program.subject);
    let mut rng = round_rng(origin, seed, round);
    let test = round::run(dbg.as_mut(), program, &script, cfg, builder, &mut rng, controls).await;
    let mut chain = chain_before.to_vec();
    if let Some(a) = &test.applied {
        chain.push(a.transformation);
    }
    let v = verdict(&test, &chain);
    (test.follow_up.map(|f| f.trace), v, test.applied, test.program)
}

/// The generator of round `r` of the sequence of (`program_hash`, `seed`):
/// every program gets its own choices, not only every seed.
fn round_rng(program_hash: &str, seed: u64, r: usize) -> ChaCha8Rng {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(format!("{program_hash}|{seed}|{r}").as_bytes());
    let mut b = [0u8; 32];
    b.copy_from_slice(&d);
    ChaCha8Rng::from_seed(b)
}

/// Why an initial run cannot start a sequence: it failed, or it diverged
/// from itself (a debugger failure), or nothing ran.
fn unusable(verdict: &Verdict, script: &Script) -> Option<String> {
    match verdict {
        Verdict::Inconclusive { reason, .. } => return Some(format!("initial run: {reason}")),
        Verdict::SubjectError { reason } => return Some(format!("initial run: {reason}")),
        Verdict::Divergence(f) => return Some(format!("initial run failed: {}", f.detail)),
        _ => {}
    }
    if script.steps.is_empty() {
        return Some("initial run: no action".into());
    }
    if script.steps.iter().any(|s| matches!(s.output, Output::Failed { .. })) {
        return Some("initial run: the debugger failed".into());
    }
    None
}

fn verdict(test: &round::Test, chain: &[Transformation]) -> Verdict {
    if let Some(v) = &test.not_comparable {
        return v.clone();
    }
    let Some(f) = &test.follow_up else {
        let reasons: Vec<String> = test.skipped.iter().map(|(t, r)| format!("{t}: {r}")).collect();
        return Verdict::Inconclusive {
            actions: 0,
            reason: format!("no transformation applies ({})", reasons.join("; ")),
        };
    };
    match &f.outcome {
        FollowUpOutcome::Held { actions, .. } => {
            if f.trace
                .outputs()
                .last()
                .is_some_and(|o| matches!(o, Output::Finished { .. }))
            {
                Verdict::ProgramFinished { actions: *actions }
            } else {
                Verdict::MaxActions { actions: *actions }
            }
        }
        FollowUpOutcome::Inconclusive { reason } => Verdict::Inconclusive {
            actions: f.trace.actions().count(),
            reason: reason.clone(),
        },
        FollowUpOutcome::Violated {
            index,
            action,
            line,
            difference,
        } => Verdict::Divergence(Finding {
            class: doppel_differential::class::with_debugger_parts(
                ClassKey::new(crate::campaign::TECHNIQUE).with_prefixed("chain", "meta", MetaConfig::chain_key(chain)),
                difference.kind,
                action.kind(),
                test.program.node_type(*line),
                difference.policy.as_deref(),
            ),
            action_index: Some(*index),
            last_action: Some(action.clone()),
            line: *line,
            detail: difference.detail.clone(),
        }),
    }
}
