//! Metamorphic testing as the commands see it ([`doppel_core::technique::Technique`]).

use crate::record::MetaRecord;
use anyhow::Context;
use doppel_core::report::trace_table;
use doppel_core::technique::{
    EvidenceTable, ReduceOptions, Reduction, ReplayAttempt, ReplayReport, Reproducer, RunView, Technique,
    TechniqueContext,
};
use doppel_core::{ClassKey, ClassPartSpec, RunRecord, Verdict};
use doppel_differential::technique::{how_to_run, verdict_lines};
use std::path::Path;

/// The metamorphic technique (ISSTA 2019).
#[derive(Debug, Default, Clone, Copy)]
pub struct Metamorphic;

/// The parts of a metamorphic class key: the transformation chain
/// (`meta:insert_no_op+add_breakpoint`), then the differential parts (which
/// relation broke where).
pub const CLASS_PARTS: [ClassPartSpec; 5] = [
    ClassPartSpec {
        name: "chain",
        prefix: Some("meta"),
        optional: false,
        header: "transformations",
    },
    doppel_differential::class::CLASS_PARTS[0],
    doppel_differential::class::CLASS_PARTS[1],
    doppel_differential::class::CLASS_PARTS[2],
    doppel_differential::class::CLASS_PARTS[3],
];

/// The hash of a sequence's first program, from a test's key
/// (`<sequence key>|r<round>[|last]`, the sequence key ending in
/// `|<program hash>|<seed>`, see [`crate::campaign::sequence_key`]): the
/// origin of the sequence's generators.
pub fn origin_of(test_key: &str) -> Option<String> {
    let k = test_key.strip_suffix("|last").unwrap_or(test_key);
    let (k, round) = k.rsplit_once('|')?;
    round.strip_prefix('r')?;
    let (k, _seed) = k.rsplit_once('|')?;
    let (_, hash) = k.rsplit_once('|')?;
    Some(hash.to_string())
}

/// A verdict for people, as a replay reports it.
pub(crate) fn describe(v: &Verdict) -> String {
    match v {
        Verdict::Divergence(f) => format!("warning after action {}: {}", f.action_parts().0, f.class),
        Verdict::Inconclusive { reason, .. } => format!("inconclusive: {reason}"),
        other => other.name().to_string(),
    }
}

#[async_trait::async_trait]
impl Technique for Metamorphic {
    fn tag(&self) -> &'static str {
        crate::campaign::TECHNIQUE
    }

    fn title(&self) -> &'static str {
        "metamorphic testing (ISSTA 2019)"
    }

    fn class_parts(&self) -> &'static [ClassPartSpec] {
        &CLASS_PARTS
    }

    fn class_legend(&self) -> &'static str {
        "Class key: the transformation chain, then which relation broke where: divergence type, last action, \
         AST node type of the line (docs/metamorphic.md)."
    }

    fn class_note(&self, key: &ClassKey) -> Option<String> {
        // A tool failure is never a known policy difference, even in a store
        // written before the oracle stopped giving failures a policy.
        key.part("policy")
            .filter(|_| key.part("divergence") != Some(doppel_core::DivergenceKind::ToolFailure.as_str()))
            .map(|p| format!("known policy difference: {p} (docs/normalization.md)"))
    }

    /// The transformation, then the initial and the follow-up trace one
    /// after the other (the follow-up has actions of its own: an added
    /// breakpoint, resynchronization), the violation highlighted.
    fn view(&self, run: &RunRecord) -> anyhow::Result<RunView> {
        let c = MetaRecord::of(run)?;
        let mut lines = verdict_lines(&run.verdict);
        let chain: Vec<String> = c.chain.iter().map(|t| t.to_string()).collect();
        lines.push(format!(
            "round {} of its sequence; chain: {}",
            c.round,
            chain.join(" -> ")
        ));
        if c.debugger_name == "lldb" {
            lines.push(format!(
                "LLDB's re-stop at a breakpoint a step ended on: {}",
                if c.input.debugger.absorb_breakpoint_restop {
                    "absorbed (absorb_breakpoint_restop on)"
                } else {
                    "reported (absorb_breakpoint_restop off; stored before the option)"
                }
            ));
        }
        if let Some(t) = &c.transformation {
            lines.push(format!("transformation: {}", t.description));
        }
        if let Some(case) = &c.reduced {
            lines.push(doppel_differential::reduce::describe(case));
        }
        for s in &c.skipped {
            lines.push(format!("  (not applicable: {}: {})", s.transformation, s.reason));
        }
        let divergent = run.verdict.finding().and_then(|f| f.action_index);
        let mut tables = Vec::new();
        for (i, (label, trace)) in ["initial", "follow-up"].iter().zip(&run.traces).enumerate() {
            let one = RunRecord {
                traces: vec![trace.clone()],
                verdict: Verdict::ProgramFinished { actions: 0 },
                ..run.clone()
            };
            let mut t: EvidenceTable = trace_table(&one);
            t.caption = Some(label.to_string());
            for (n, row) in t.rows.iter_mut().enumerate() {
                row.highlight = i == 1 && divergent == Some(n);
            }
            tables.push(t);
        }
        Ok(RunView { lines, tables })
    }

    /// The shape of the follow-up's action sequence up to the violation
    /// (the finding's action index is the follow-up trace's), the last
    /// action, the divergence type and the debugger
    /// (`doppel_differential::class::root_cause`); not the transformation
    /// chain, which the class key has.
    fn root_cause(&self, run: &RunRecord) -> Option<doppel_core::rootcause::RootCause> {
        if let Some(reduced) = crate::reduce::reduced_run(run) {
            let follow_up = reduced.traces.last()?;
            let name = follow_up.debugger.name.clone();
            return doppel_differential::class::root_cause_with_tail(
                self.tag(),
                &reduced,
                follow_up,
                &name,
                // As the unreduced runs: see doppel-differential's technique.
                doppel_differential::class::UNREDUCED_SHAPE_TAIL,
            );
        }
        let follow_up = run.traces.last()?;
        doppel_differential::class::root_cause(self.tag(), run, follow_up, &follow_up.debugger.name)
    }

    /// The reduced case (`doppel reduce`), when stored: the initial
    /// actions, then the follow-up program.
    fn reduced_reproducer(&self, run: &RunRecord) -> Option<String> {
        let c = MetaRecord::of(run).ok()?;
        let case = c.reduced.as_ref()?;
        let program = c.reduced_follow_up.as_ref().unwrap_or(&c.follow_up);
        Some(doppel_differential::reduce::reproducer_text(case, &program.source_text))
    }

    fn parameters(&self, run: &RunRecord) -> Vec<(String, String)> {
        let Ok(c) = MetaRecord::of(run) else {
            return Vec::new();
        };
        vec![
            ("campaign".into(), run.campaign.clone()),
            ("debugger".into(), c.debugger_name.clone()),
            ("rounds".into(), c.meta.rounds.to_string()),
            (
                "transformations".into(),
                c.meta
                    .transformations
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ]
    }

    /// Its round again from the stored initial input, generator and
    /// configuration (the follow-up is decided live again).
    async fn replay(&self, r: &RunRecord, ctx: &TechniqueContext, times: usize) -> anyhow::Result<ReplayReport> {
        use crate::program::{Builder, Program};
        let c = MetaRecord::of(r)?;
        // Replays behave as today's campaigns, also for tests stored before
        // the option existed.
        let dcfg = crate::campaign::debugger_config(&c.input.debugger);
        let mut chain = c.chain.clone();
        if r.traces.len() == 2 {
            chain.pop();
        }
        let origin = origin_of(&r.key).context("malformed key")?;
        let initial = r.traces.first().context("the test has no initial trace")?;
        if initial.events.is_empty() {
            anyhow::bail!(
                "run {} has no initial run to replay ({})",
                r.id.unwrap_or_default(),
                r.verdict.name()
            );
        }
        let p = doppel_differential::replay::prepared_of(r, &c.input, &ctx.cache_dir).await?;
        if let Some(e) = &p.error {
            anyhow::bail!("the initial program does not build again: {e}");
        }
        let program = Program::new(p.subject.clone(), p.source_text.clone());
        let builder = Builder::new(ctx.cache_dir.join("meta-sources"), ctx.cache_dir.clone(), dcfg.limits);
        let mut report = ReplayReport {
            stored: describe(&r.verdict),
            ..Default::default()
        };
        if dcfg.absorb_breakpoint_restop != c.input.debugger.absorb_breakpoint_restop {
            report.notes.push(
                "replayed with absorb_breakpoint_restop on (stored off): LLDB's re-stop at a breakpoint a step \
                 ended on is absorbed"
                    .into(),
            );
        }
        let mut dbg = doppel_debuggers::registry::create(&c.debugger_name, &dcfg)?;
        for _ in 0..times.max(1) {
            let (_, v, applied) = crate::sequence::replay_round(
                &mut dbg, &program, initial, &origin, r.seed, c.round, &chain, &c.meta, &builder,
            )
            .await;
            // The same generator may choose another transformation when the
            // transformations' rules changed since the run was stored.
            let applied = match &applied {
                Some(t) => format!("applied:  {}: {}", t.transformation, t.description),
                None => "applied:  no transformation".into(),
            };
            report.attempts.push(ReplayAttempt {
                reproduces: doppel_differential::replay::same_verdict(&r.verdict, &v),
                got: describe(&v),
                notes: vec![applied],
            });
        }
        // The reduced case (`doppel reduce`): its initial actions as a
        // script on its initial program (reduced or not), then the round again.
        if let Some(case) = &c.reduced {
            let program = match &case.source_text {
                Some(text) => crate::reduce_program::program_of(r, text, &ctx.cache_dir)
                    .await?
                    .map_err(|e| anyhow::anyhow!("the reduced program: {e}"))?,
                None => program.clone(),
            };
            let nt = |l: Option<u32>| program.node_type(l);
            for _ in 0..times.max(1) {
                let initial = doppel_differential::scripted::run(
                    std::slice::from_mut(&mut dbg),
                    &program.subject,
                    &case.actions,
                    &c.meta.initial,
                    &nt,
                )
                .await;
                let trace = initial.traces.into_iter().next().context("no initial trace")?;
                let (_, v, _) = crate::sequence::replay_round(
                    &mut dbg, &program, &trace, &origin, r.seed, c.round, &chain, &c.meta, &builder,
                )
                .await;
                report.attempts.push(ReplayAttempt {
                    reproduces: doppel_differential::reduce::same_class(
                        &v,
                        &case
                            .verdict
                            .finding()
                            .map(|f| f.class.clone())
                            .context("reduced case without class")?,
                    ),
                    got: describe(&v),
                    notes: vec![format!(
                        "reduced case: {} of {} initial actions, {} of {} lines",
                        case.actions.len(),
                        case.original_actions,
                        case.lines,
                        case.original_lines
                    )],
                });
            }
        }
        dbg.shutdown().await;
        Ok(report)
    }

    async fn reduce(
        &self,
        run: &RunRecord,
        ctx: &TechniqueContext,
        options: &ReduceOptions,
    ) -> anyhow::Result<Option<Reduction>> {
        crate::reduce::reduce(run, &ctx.cache_dir, options).await.map(Some)
    }

    async fn probe_variant(&self, case_json: &str, text: &str) -> anyhow::Result<Result<(), String>> {
        let case: doppel_differential::reduce_program::ProbeCase = serde_json::from_str(case_json)?;
        Ok(crate::reduce_program::probe(&case, text, true).await?.map(|_| ()))
    }

    async fn repro(&self, run: &RunRecord, _ctx: &TechniqueContext, out: &Path) -> anyhow::Result<Reproducer> {
        // The reduced case when there is one.
        let reduced = crate::reduce::reduced_run(run);
        let built = crate::repro::build(reduced.as_ref().unwrap_or(run)).map_err(anyhow::Error::msg)?;
        Ok(Reproducer {
            files: doppel_differential::repro::write_files(&built, out)?,
            how: how_to_run(run.subject.language, out),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_is_the_program_hash_before_the_seed() {
        let k = "metamorphic|default|dae2da1199ca|lldb|427f4345efe4|9db1680d|1|r4|last";
        assert_eq!(origin_of(k).as_deref(), Some("9db1680d"));
        assert_eq!(origin_of("metamorphic|c|f|gdb|t|abc|7|r1").as_deref(), Some("abc"));
        assert_eq!(origin_of("nonsense"), None);
    }

    #[test]
    fn metamorphic_keys_keep_their_display_form_and_parse_back() {
        let k = doppel_differential::class::with_debugger_parts(
            ClassKey::new("metamorphic").with_prefixed("chain", "meta", "insert_no_op+add_breakpoint"),
            doppel_core::DivergenceKind::PauseLocation,
            doppel_core::ActionKind::StepOver,
            "for_statement",
            None,
        );
        assert_eq!(
            k.to_string(),
            "meta:insert_no_op+add_breakpoint|pause_location|step_over|for_statement"
        );
        assert_eq!(ClassKey::parse("metamorphic", &k.to_string(), &CLASS_PARTS), Some(k));
    }
}
