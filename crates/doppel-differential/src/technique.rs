//! Differential testing as the commands see it ([`doppel_core::technique::Technique`]).

use crate::class::CLASS_PARTS;
use crate::record::DiffRecord;
use doppel_core::report::trace_table;
use doppel_core::technique::{
    ReduceOptions, Reduction, ReplayReport, Reproducer, RunView, Technique, TechniqueContext,
};
use doppel_core::{ClassKey, ClassPartSpec, Language, RunRecord, Verdict};
use std::path::Path;

/// The differential technique (DBDB, FSE 2018).
#[derive(Debug, Default, Clone, Copy)]
pub struct Differential;

/// The verdict lines of a debugger run's view: `verdict: divergence after
/// action 3 (step over), class ...` and the finding's detail.
pub fn verdict_lines(v: &Verdict) -> Vec<String> {
    match v {
        Verdict::Divergence(f) => vec![
            format!(
                "verdict: divergence after action {} ({}), class {}",
                f.action_parts().0,
                f.action_parts().1,
                f.class
            ),
            format!("  {}", f.detail),
        ],
        Verdict::SubjectError { reason } => vec![format!("verdict: subject error: {reason}")],
        Verdict::NotComparable { reason, controls } => {
            let mut lines = vec![format!("verdict: not comparable (control run): {reason}")];
            for c in controls {
                lines.push(format!("  {}: {}", c.debugger, control_end(&c.end)));
                for l in c.program_output.lines().take(20) {
                    lines.push(format!("    | {l}"));
                }
            }
            lines
        }
        other => vec![format!("verdict: {}", other.name())],
    }
}

/// How a control run ended, for people: `exit code 1`, `signal SIGSEGV`,
/// `failed (timeout): ...`, `still paused`.
fn control_end(o: &doppel_core::Output) -> String {
    use doppel_core::Output;
    match o {
        Output::Finished { signal: Some(s), .. } => format!("ended by signal {s}"),
        Output::Finished { exit_code: Some(c), .. } => format!("exit code {c}"),
        Output::Finished { .. } => "ended, no exit status".into(),
        Output::Failed { kind, detail } => format!("failed ({kind:?}): {detail}"),
        Output::Paused(s) => format!("still paused at line {}", s.location.line),
        other => format!("{other:?}"),
    }
}

/// The policy notes of a run that went on past known policies
/// (`continue_past_policies`): `policy notes: 2 (continued past)` and one
/// line per note, `  after action 0 (set breakpoint @ p.c:1): slide_vs_reject`.
/// Empty for a run without notes.
pub fn policy_note_lines(run: &RunRecord) -> Vec<String> {
    let notes = run.policy_notes();
    if notes.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!("policy notes: {} (continued past)", notes.len())];
    for f in notes {
        let (i, a) = f.action_parts();
        lines.push(format!(
            "  after action {i} ({a}): {}: {}",
            f.class.part("policy").unwrap_or("?"),
            f.detail
        ));
    }
    lines
}

/// The findings a run went on past (`findings_per_run` above 1, each also a
/// record of its own, key `...#finding<k>`): `findings noted: 2 (continued
/// past, each stored as a run of its own)` and one line per finding,
/// `  after action 4 (step over): variables|step_over|...: detail`. Empty
/// for a run without any.
pub fn finding_note_lines(run: &RunRecord) -> Vec<String> {
    let notes = run.finding_notes();
    if notes.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "findings noted: {} (continued past, each stored as a run of its own)",
        notes.len()
    )];
    for f in notes {
        let (i, a) = f.action_parts();
        lines.push(format!("  after action {i} ({a}): {}: {}", f.class, f.detail));
    }
    lines
}

/// The campaign parameters of a differential record, for reports.
pub fn parameters(name: &str, rec: &DiffRecord) -> Vec<(String, String)> {
    let d = &rec.diff;
    let mut p = vec![
        ("campaign".to_string(), name.to_string()),
        ("debuggers".into(), rec.debuggers.join(", ")),
        ("breakpoints per line".into(), d.breakpoints_per_line.to_string()),
        ("max breakpoints".into(), d.max_breakpoints.to_string()),
        ("removal probability".into(), d.removal_probability.to_string()),
        ("max actions".into(), d.max_actions.to_string()),
        (
            "action weights".into(),
            format!(
                "resume {}, step in {}, step over {}, step out {}",
                d.weights.resume, d.weights.step_in, d.weights.step_over, d.weights.step_out
            ),
        ),
        ("action timeout".into(), format!("{} ms", d.action_timeout_ms)),
        ("compare columns".into(), d.compare_columns.to_string()),
        (
            "continue past policies".into(),
            if d.continue_past_policies {
                "on (a policy divergence is a note; the run goes on where the debuggers can be realigned)".into()
            } else {
                "off (DBDB: the first divergence ends the run)".into()
            },
        ),
        (
            "findings per run".into(),
            if d.findings_per_run <= 1 {
                "1 (a run ends at its first finding)".into()
            } else {
                format!(
                    "{} (a run goes on past findings after which the debuggers stand in one state; each is a run of its own)",
                    d.findings_per_run
                )
            },
        ),
        ("warm reuse".into(), rec.input.debugger.warm.to_string()),
    ];
    let off: Vec<&str> = d
        .normalization
        .describe()
        .into_iter()
        .filter(|(_, on)| !on)
        .map(|(n, _)| n)
        .collect();
    p.push((
        "normalization".into(),
        if off.is_empty() {
            "all rules on (docs/normalization.md)".into()
        } else {
            format!("off: {}", off.join(", "))
        },
    ));
    p
}

/// How to run a debugger reproducer, by language.
pub fn how_to_run(language: Language, out: &Path) -> String {
    let with = match language {
        Language::C | Language::Rust => "the plain gdb and lldb CLIs",
        Language::JavaScript => "Node's inspector (see README.md there for the browsers' DevTools)",
    };
    format!("run `sh {}/run.sh` to see the divergence with {with}", out.display())
}

#[async_trait::async_trait]
impl Technique for Differential {
    fn tag(&self) -> &'static str {
        crate::campaign::TECHNIQUE
    }

    fn title(&self) -> &'static str {
        "differential testing (DBDB, FSE 2018)"
    }

    fn class_parts(&self) -> &'static [ClassPartSpec] {
        &CLASS_PARTS
    }

    fn class_legend(&self) -> &'static str {
        "Class key (DBDB, FSE 2018, Definition 4): divergence type, last action, AST node type of the line where \
         the last action was issued. A policy names a known, intended difference (docs/normalization.md)."
    }

    fn class_note(&self, key: &ClassKey) -> Option<String> {
        // A tool failure is never a known policy difference, even in a store
        // written before the oracle stopped giving failures a policy.
        key.part("policy")
            .filter(|_| key.part("divergence") != Some(doppel_core::DivergenceKind::ToolFailure.as_str()))
            .map(|p| format!("known policy difference: {p} (docs/normalization.md)"))
    }

    fn view(&self, run: &RunRecord) -> anyhow::Result<RunView> {
        let mut lines = verdict_lines(&run.verdict);
        lines.extend(policy_note_lines(run));
        lines.extend(finding_note_lines(run));
        if let Some(case) = DiffRecord::of(run).ok().and_then(|r| r.reduced) {
            lines.push(crate::reduce::describe(&case));
        }
        Ok(RunView {
            lines,
            tables: vec![trace_table(run)],
        })
    }

    fn parameters(&self, run: &RunRecord) -> Vec<(String, String)> {
        DiffRecord::of(run)
            .map(|rec| parameters(&run.campaign, &rec))
            .unwrap_or_default()
    }

    async fn replay(&self, run: &RunRecord, ctx: &TechniqueContext, times: usize) -> anyhow::Result<ReplayReport> {
        crate::replay::replay(run, &ctx.cache_dir, times).await
    }

    async fn repro(&self, run: &RunRecord, _ctx: &TechniqueContext, out: &Path) -> anyhow::Result<Reproducer> {
        // The reduced case when there is one (`doppel reduce`, `--reduce`).
        let reduced = crate::reduce::reduced_run(run);
        Ok(Reproducer {
            files: crate::repro::write(reduced.as_ref().unwrap_or(run), out)?,
            how: how_to_run(run.subject.language, out),
        })
    }

    async fn reduce(
        &self,
        run: &RunRecord,
        ctx: &TechniqueContext,
        options: &ReduceOptions,
    ) -> anyhow::Result<Option<Reduction>> {
        crate::reduce::reduce_run(run, &ctx.cache_dir, options).await.map(Some)
    }

    async fn probe_variant(&self, case_json: &str, text: &str) -> anyhow::Result<Result<(), String>> {
        let case: crate::reduce_program::ProbeCase = serde_json::from_str(case_json)?;
        Ok(crate::reduce_program::probe(&case, text, true).await?.map(|_| ()))
    }

    fn reclassifies(&self) -> bool {
        true
    }

    /// The shape of the action sequence up to the divergence in the first
    /// trace, the last action, the divergence type and the debugger pair
    /// ([`crate::class::root_cause`]).
    /// A reduced run's shape is its whole reduced sequence.
    fn root_cause(&self, run: &RunRecord) -> Option<doppel_core::rootcause::RootCause> {
        let tools: Vec<&str> = run.traces.iter().map(|t| t.debugger.name.as_str()).collect();
        if let Some(reduced) = crate::reduce::reduced_run(run) {
            return crate::class::root_cause_with_tail(
                self.tag(),
                &reduced,
                reduced.traces.first()?,
                &tools.join(","),
                // The same tail as the unreduced runs of its class: with the
                // whole reduced sequence, reducing a representative moved it
                // out of its root cause, which then counted twice.
                crate::class::UNREDUCED_SHAPE_TAIL,
            );
        }
        crate::class::root_cause(self.tag(), run, run.traces.first()?, &tools.join(","))
    }

    /// The reduced case (`doppel reduce`), when stored: the actions, then
    /// the program.
    fn reduced_reproducer(&self, run: &RunRecord) -> Option<String> {
        let rec = DiffRecord::of(run).ok()?;
        let case = rec.reduced.as_ref()?;
        Some(crate::reduce::reproducer_text(case, &rec.input.source_text))
    }

    fn reclassify(&self, run: &RunRecord) -> Option<Verdict> {
        // The run's own knobs; rules added since default to on.
        let cfg = DiffRecord::of(run).map(|r| r.diff).unwrap_or_default();
        crate::reclassify::reclassify(run, &cfg)
    }
}
