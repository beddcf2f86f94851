//! Debug-information validation as the commands see it
//! ([`doppel_core::technique::Technique`]). Its records
//! ([`crate::record::DebuginfoRecord`]) are of three kinds: a finding (a
//! wrong value, with its source context), a session (one build in one
//! debugger: every pair's check), and a program (its preparation and the
//! matrix of its builds).

use crate::CheckVerdict;
use crate::finding::StoredFinding;
use crate::record::{DebuginfoRecord, SessionRecord};
use crate::triage::CLASS_PARTS;
use doppel_core::store::RunFilter;
use doppel_core::technique::{
    EvidenceRow, EvidenceTable, ReplayAttempt, ReplayReport, Reproducer, RunView, Technique, TechniqueContext,
};
use doppel_core::{ClassPartSpec, RunRecord, Verdict};
use std::path::Path;

/// The debug-information technique (PLDI 2020).
#[derive(Debug, Default, Clone, Copy)]
pub struct Debuginfo;

fn verdict_line(v: &Verdict) -> String {
    match v {
        Verdict::Divergence(f) => format!(
            "verdict: {}, class {}",
            f.class.part("finding").unwrap_or("finding"),
            f.class
        ),
        Verdict::SubjectError { reason } => format!("verdict: subject error: {reason}"),
        Verdict::Checked { checks } => format!("verdict: checked ({checks} checks, nothing to report)"),
        other => format!("verdict: {}", other.name()),
    }
}

/// JSON text of an optional rendering (`"25"`, `null`), as reports quote values.
fn quoted(v: &Option<String>) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// A finding with the lines around its pair.
fn finding_view(run: &RunRecord, f: &StoredFinding, lines: &mut Vec<String>) {
    if let Some(fd) = run.verdict.finding() {
        lines.push(format!("  {}", fd.detail));
    }
    let pair = &f.reference.pair;
    let line = pair.line as usize;
    lines.push(format!(
        "compiler: {} ({}), level -{}, debugger {}",
        f.compiler.name, f.compiler.version, f.level, f.debugger
    ));
    lines.push(format!("build: {}", run.config["recipe"].as_str().unwrap_or("?")));
    lines.push(format!(
        "pair: line {line}, variable {} ({}); -O0 reference {}; shown {}",
        pair.variable.name,
        pair.variable.type_name,
        serde_json::to_string(&f.reference.value).unwrap_or_default(),
        quoted(&f.verdict.shown)
    ));
    for o in &f.others {
        lines.push(format!(
            "  {} on the same binary: {} (shows {})",
            o.debugger,
            o.verdict.verdict.name(),
            quoted(&o.verdict.shown)
        ));
    }
    lines.push(format!("suspect: {}", f.suspect));
    if let Some(c) = &f.culprit {
        lines.push(format!("culprit: {}", serde_json::to_string(c).unwrap_or_default()));
    }
    let text = f.checked_text();
    let source: Vec<&str> = text.lines().collect();
    let from = line.saturating_sub(4).max(1);
    for n in from..=(line + 3).min(source.len()) {
        let mark = if n == line { ">" } else { " " };
        lines.push(format!("{mark}{n:5} | {}", source[n - 1]));
    }
}

/// A session's checks, one row per pair, wrong values highlighted.
fn session_view(s: &SessionRecord, lines: &mut Vec<String>) -> EvidenceTable {
    lines.push(format!(
        "session: {} -{} {} build, debugger {}: {}",
        s.compiler.name,
        s.level,
        if s.augmented.is_empty() { "plain" } else { "augmented" },
        s.debugger_name,
        s.ending
    ));
    let rows = s
        .verdicts
        .iter()
        .map(|v| {
            let wrong = matches!(v.verdict, CheckVerdict::WrongValue { .. });
            let text = match &v.verdict {
                CheckVerdict::WrongValue { expected, .. } => {
                    format!(
                        "wrong value, expected {}",
                        serde_json::to_string(expected).unwrap_or_default()
                    )
                }
                other => {
                    let j = serde_json::to_value(other).unwrap_or_default();
                    match j["detail"].as_str() {
                        Some(d) => format!("{}: {d}", other.name()),
                        None => other.name().to_string(),
                    }
                }
            };
            EvidenceRow {
                cells: vec![
                    v.line.to_string(),
                    v.variable.clone(),
                    text,
                    v.shown.clone().unwrap_or_default(),
                ],
                highlight: wrong,
            }
        })
        .collect();
    EvidenceTable {
        caption: None,
        header: ["line", "variable", "verdict", "shown"].map(String::from).to_vec(),
        rows,
    }
}

/// The preparation without its long lists (references, rejected pairs).
fn without_lists(v: &serde_json::Value) -> serde_json::Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        for k in ["references", "rejected"] {
            if let Some(n) = o.get(k).and_then(|x| x.as_array()).map(|a| a.len()) {
                o.insert(k.to_string(), serde_json::json!(format!("{n} entries")));
            }
        }
    }
    v
}

#[async_trait::async_trait]
impl Technique for Debuginfo {
    fn tag(&self) -> &'static str {
        crate::campaign::TECHNIQUE
    }

    fn title(&self) -> &'static str {
        "debug-information validation (PLDI 2020)"
    }

    fn class_parts(&self) -> &'static [ClassPartSpec] {
        &CLASS_PARTS
    }

    fn class_legend(&self) -> &'static str {
        "Class key: the dedup signature (compiler and version, level, suspect, culprit pass or flags, variable \
         kind, debugger), what the check found, how the line was reached, and the line's AST node type \
         (docs/debuginfo.md)."
    }

    fn view(&self, run: &RunRecord) -> anyhow::Result<RunView> {
        let mut view = RunView {
            lines: vec![verdict_line(&run.verdict)],
            tables: Vec::new(),
        };
        match DebuginfoRecord::of(run)? {
            DebuginfoRecord::Finding(f) => finding_view(run, &f, &mut view.lines),
            DebuginfoRecord::Session(s) => {
                let t = session_view(&s, &mut view.lines);
                view.tables.push(t);
            }
            DebuginfoRecord::Program(p) => {
                view.lines.push(format!(
                    "program preparation: {}",
                    serde_json::to_string_pretty(&without_lists(&p.preparation)).unwrap_or_default()
                ));
                for m in &p.matrix {
                    view.lines.push(format!("  {m}"));
                }
            }
        }
        Ok(view)
    }

    fn parameters(&self, run: &RunRecord) -> Vec<(String, String)> {
        let c = &run.config["debuginfo"];
        let list = |k: &str| {
            c[k].as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        vec![
            ("campaign".into(), run.campaign.clone()),
            ("compilers".into(), list("compilers")),
            ("levels".into(), list("levels")),
            ("debuggers".into(), list("debuggers")),
        ]
    }

    /// Compiler, debugger, suspect and the DWARF situation at the pause
    /// address, or the variable kind and AST node when the record has no
    /// DWARF situation ([`crate::triage::root_cause`]). A finding record
    /// this doppel cannot read keeps its class key as its cause.
    fn root_cause(&self, run: &RunRecord) -> Option<doppel_core::rootcause::RootCause> {
        let f = run.verdict.finding()?;
        Some(match crate::record::FindingRecord::from_value(&run.config) {
            Ok(rec) => crate::triage::root_cause(&rec, &f.class),
            Err(_) => doppel_core::rootcause::RootCause::from_class(&f.class),
        })
    }

    /// The C-Vise-reduced program (`doppel debuginfo reduce`), when stored.
    fn reduced_reproducer(&self, run: &RunRecord) -> Option<String> {
        let rec = crate::record::FindingRecord::from_value(&run.config).ok()?;
        rec.reduced.map(|r| {
            format!(
                "/* reduced: line {} (the marker), {} */\n{}",
                r.line, rec.debugger_name, r.text
            )
        })
    }

    /// The program rebuilt from its stored text with the stored compiler,
    /// level and augmentation, the pair checked again with the stored debugger.
    async fn replay(&self, r: &RunRecord, ctx: &TechniqueContext, times: usize) -> anyhow::Result<ReplayReport> {
        let stored = crate::replay::stored_verdict(r).map_err(anyhow::Error::msg)?;
        let cache = ctx.cache_dir.join("debuginfo");
        let config = doppel_debuggers::DebuggerConfig {
            action_timeout: std::time::Duration::from_secs(20),
            ..Default::default()
        };
        let mut report = ReplayReport {
            stored: stored.to_string(),
            ..Default::default()
        };
        for _ in 0..times.max(1) {
            let again = crate::replay::replay(r, &cache, &config)
                .await
                .map_err(anyhow::Error::msg)?;
            report.attempts.push(ReplayAttempt {
                reproduces: again.reproduces(&stored),
                got: again.verdict.verdict.to_string(),
                notes: again
                    .version_changed
                    .iter()
                    .map(|v| format!("note: the compiler is now {v}"))
                    .collect(),
            });
        }
        Ok(report)
    }

    /// The bug-report bundle of a finding.
    async fn repro(&self, r: &RunRecord, ctx: &TechniqueContext, out: &Path) -> anyhow::Result<Reproducer> {
        let f = StoredFinding::from_record(r).map_err(anyhow::Error::msg)?;
        let in_class = match r.verdict.finding() {
            Some(fd) => ctx
                .store
                .runs_in_class(&fd.class, &RunFilter::default(), 100_000)
                .await
                .map(|v| v.len() as u32)
                .unwrap_or(1),
            None => 1,
        };
        crate::finding::write_bundle(&f, in_class, out, &doppel_debuggers::DebuggerConfig::default())
            .await
            .map_err(anyhow::Error::msg)?;
        Ok(Reproducer {
            files: vec![out.to_path_buf()],
            how: format!(
                "wrote the bug-report bundle to {} (README.md, a.c, opt_me_not.c, build.sh, gdb.cmd, lldb.cmd, \
                 transcripts, matrix.md)",
                out.display()
            ),
        })
    }
}
