//! Debug-information validation as the commands see it
//! ([`doppel_core::technique::Technique`]). Its records are of three kinds
//! (config `kind`): a finding (a wrong value, with its source context), a
//! session (one build in one debugger: every pair's check), and a program
//! (its preparation and the matrix of its builds).

use crate::finding::StoredFinding;
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

fn s<'a>(v: &'a serde_json::Value, or: &'a str) -> &'a str {
    v.as_str().unwrap_or(or)
}

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

/// A finding with the lines around its pair.
fn finding_view(run: &RunRecord, lines: &mut Vec<String>) {
    let c = &run.config;
    if let Some(f) = run.verdict.finding() {
        lines.push(format!("  {}", f.detail));
    }
    let line = c["reference"]["pair"]["line"].as_u64().unwrap_or(0) as usize;
    let var = s(&c["reference"]["pair"]["variable"]["name"], "?");
    lines.push(format!(
        "compiler: {} ({}), level -{}, debugger {}",
        s(&c["compiler"]["name"], "?"),
        s(&c["compiler"]["version"], "?"),
        s(&c["level"], "?"),
        s(&c["debugger_name"], "?")
    ));
    lines.push(format!("build: {}", s(&c["recipe"], "?")));
    lines.push(format!(
        "pair: line {line}, variable {var} ({}); -O0 reference {}; shown {}",
        s(&c["reference"]["pair"]["variable"]["type_name"], "?"),
        c["reference"]["value"],
        c["verdict"]["shown"]
    ));
    for o in c["others"].as_array().into_iter().flatten() {
        lines.push(format!(
            "  {} on the same binary: {} (shows {})",
            s(&o["debugger"], "?"),
            s(&o["verdict"]["verdict"]["verdict"], "?"),
            o["verdict"]["shown"]
        ));
    }
    lines.push(format!("suspect: {}", s(&c["suspect"], "?")));
    if !c["culprit"].is_null() {
        lines.push(format!("culprit: {}", c["culprit"]));
    }
    let text = c["augmented_text"].as_str().or(c["source_text"].as_str()).unwrap_or("");
    let source: Vec<&str> = text.lines().collect();
    let from = line.saturating_sub(4).max(1);
    for n in from..=(line + 3).min(source.len()) {
        let mark = if n == line { ">" } else { " " };
        lines.push(format!("{mark}{n:5} | {}", source[n - 1]));
    }
}

/// A session's checks, one row per pair, wrong values highlighted.
fn session_view(run: &RunRecord, lines: &mut Vec<String>) -> EvidenceTable {
    let c = &run.config;
    lines.push(format!(
        "session: {} -{} {} build, debugger {}: {}",
        s(&c["compiler"]["name"], "?"),
        s(&c["level"], "?"),
        if c["augmented"].as_array().is_some_and(|a| !a.is_empty()) {
            "augmented"
        } else {
            "plain"
        },
        s(&c["debugger_name"], "?"),
        s(&c["ending"], "")
    ));
    let rows = c["verdicts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let verdict = &v["verdict"];
            let text = match s(&verdict["verdict"], "?") {
                "wrong_value" => format!("wrong value, expected {}", verdict["expected"]),
                other => match verdict["detail"].as_str() {
                    Some(d) => format!("{other}: {d}"),
                    None => other.to_string(),
                },
            };
            EvidenceRow {
                cells: vec![
                    v["line"].to_string(),
                    s(&v["variable"], "?").to_string(),
                    text,
                    s(&v["shown"], "").to_string(),
                ],
                highlight: verdict["verdict"] == "wrong_value",
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
        match run.config["kind"].as_str() {
            Some("finding") => finding_view(run, &mut view.lines),
            Some("session") => {
                let t = session_view(run, &mut view.lines);
                view.tables.push(t);
            }
            _ => {
                view.lines.push(format!(
                    "program preparation: {}",
                    serde_json::to_string_pretty(&without_lists(&run.config["preparation"])).unwrap_or_default()
                ));
                for m in run.config["matrix"].as_array().into_iter().flatten() {
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
