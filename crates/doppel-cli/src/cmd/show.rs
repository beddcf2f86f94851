//! `doppel show RUN`: the traces side by side, the divergence highlighted.

use clap::Args;
use comfy_table::{Cell, Color, Table, presets::UTF8_FULL_CONDENSED};
use doppel_core::report::side_by_side_rows;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Run id (from `doppel sample` or `doppel classes`).
    pub run: i64,
    /// Print the stored record as JSON (traces with raw protocol messages).
    #[arg(long)]
    pub json: bool,
}

pub async fn run(a: ShowArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let r = super::load_run(&store, a.run).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "run {}: {} seed {} ({}), {:.0} ms",
        a.run, r.subject.name, r.seed, r.subject.build, r.duration_ms
    );
    for d in &r.debuggers {
        println!("  {}: {} via {}", d.name, d.version, d.protocol);
    }
    match &r.verdict {
        doppel_core::Verdict::Divergence(f) => {
            println!(
                "verdict: divergence after action {} ({}), class {}",
                f.action_index, f.last_action, f.class
            );
            println!("  {}", f.detail);
        }
        doppel_core::Verdict::SubjectError { reason } => {
            println!("verdict: subject error: {reason}")
        }
        other => println!("verdict: {}", other.name()),
    }
    if r.technique == doppel_metamorphic::campaign::TECHNIQUE {
        show_metamorphic(&r);
        return Ok(ExitCode::SUCCESS);
    }
    if r.technique == doppel_debuginfo::campaign::TECHNIQUE {
        show_debuginfo(&r);
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    let mut header = vec!["#".to_string(), "action".to_string()];
    header.extend(r.debuggers.iter().map(|d| d.name.clone()));
    t.set_header(header);
    for row in side_by_side_rows(&r) {
        let color = if row.divergent { Color::Red } else { Color::Reset };
        let mut cells = vec![Cell::new(row.index).fg(color), Cell::new(&row.action).fg(color)];
        cells.extend(row.outputs.iter().map(|o| Cell::new(o).fg(color)));
        t.add_row(cells);
    }
    println!("{t}");
    Ok(ExitCode::SUCCESS)
}

/// A metamorphic test: the transformation, then the initial and the
/// follow-up trace one after the other (the follow-up has actions of its
/// own: an added breakpoint, resynchronization), the violation highlighted.
fn show_metamorphic(r: &doppel_core::RunRecord) {
    let c = &r.config;
    let chain: Vec<String> = c["chain"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    println!("round {} of its sequence; chain: {}", c["round"], chain.join(" -> "));
    if c["debugger_name"] == "lldb" {
        println!(
            "LLDB's re-stop at a breakpoint a step ended on: {}",
            if c["debugger"]["absorb_breakpoint_restop"] == true {
                "absorbed (absorb_breakpoint_restop on)"
            } else {
                "reported (absorb_breakpoint_restop off; stored before the option)"
            }
        );
    }
    if let Some(d) = c["transformation"]["description"].as_str() {
        println!("transformation: {d}");
    }
    for s in c["skipped"].as_array().into_iter().flatten() {
        println!(
            "  (not applicable: {}: {})",
            s["transformation"].as_str().unwrap_or("?"),
            s["reason"].as_str().unwrap_or("")
        );
    }
    let divergent = r.verdict.finding().map(|f| f.action_index);
    for (i, (label, trace)) in ["initial", "follow-up"].iter().zip(&r.traces).enumerate() {
        let one = doppel_core::RunRecord {
            traces: vec![trace.clone()],
            verdict: doppel_core::Verdict::ProgramFinished { actions: 0 },
            ..r.clone()
        };
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED);
        t.set_header(["#", "action", label]);
        for row in side_by_side_rows(&one) {
            let red = i == 1 && divergent == Some(row.index);
            let color = if red { Color::Red } else { Color::Reset };
            t.add_row([
                Cell::new(row.index).fg(color),
                Cell::new(&row.action).fg(color),
                Cell::new(row.outputs.join("")).fg(color),
            ]);
        }
        println!("{t}");
    }
}

/// A debug-information record: a finding with its source context, a
/// session's verdicts, or a program's preparation and matrix.
fn show_debuginfo(r: &doppel_core::RunRecord) {
    let c = &r.config;
    match c["kind"].as_str() {
        Some("finding") => {
            let line = c["reference"]["pair"]["line"].as_u64().unwrap_or(0) as usize;
            let var = c["reference"]["pair"]["variable"]["name"].as_str().unwrap_or("?");
            println!(
                "compiler: {} ({}), level -{}, debugger {}",
                c["compiler"]["name"].as_str().unwrap_or("?"),
                c["compiler"]["version"].as_str().unwrap_or("?"),
                c["level"].as_str().unwrap_or("?"),
                c["debugger_name"].as_str().unwrap_or("?")
            );
            println!("build: {}", c["recipe"].as_str().unwrap_or("?"));
            println!(
                "pair: line {line}, variable {var} ({}); -O0 reference {}; shown {}",
                c["reference"]["pair"]["variable"]["type_name"].as_str().unwrap_or("?"),
                c["reference"]["value"],
                c["verdict"]["shown"]
            );
            for o in c["others"].as_array().into_iter().flatten() {
                println!(
                    "  {} on the same binary: {} (shows {})",
                    o["debugger"].as_str().unwrap_or("?"),
                    o["verdict"]["verdict"]["verdict"].as_str().unwrap_or("?"),
                    o["verdict"]["shown"]
                );
            }
            println!("suspect: {}", c["suspect"].as_str().unwrap_or("?"));
            if !c["culprit"].is_null() {
                println!("culprit: {}", c["culprit"]);
            }
            let text = c["augmented_text"].as_str().or(c["source_text"].as_str()).unwrap_or("");
            let lines: Vec<&str> = text.lines().collect();
            let from = line.saturating_sub(4).max(1);
            for n in from..=(line + 3).min(lines.len()) {
                let mark = if n == line { ">" } else { " " };
                println!("{mark}{n:5} | {}", lines[n - 1]);
            }
        }
        Some("session") => {
            println!(
                "session: {} -{} {} build, debugger {}: {}",
                c["compiler"]["name"].as_str().unwrap_or("?"),
                c["level"].as_str().unwrap_or("?"),
                if c["augmented"].as_array().is_some_and(|a| !a.is_empty()) {
                    "augmented"
                } else {
                    "plain"
                },
                c["debugger_name"].as_str().unwrap_or("?"),
                c["ending"].as_str().unwrap_or("")
            );
            let mut t = Table::new();
            t.load_style(UTF8_FULL_CONDENSED);
            t.set_header(["line", "variable", "verdict", "shown"]);
            for v in c["verdicts"].as_array().into_iter().flatten() {
                let verdict = &v["verdict"];
                let text = match verdict["verdict"].as_str().unwrap_or("?") {
                    "wrong_value" => format!("wrong value, expected {}", verdict["expected"]),
                    other => match verdict["detail"].as_str() {
                        Some(d) => format!("{other}: {d}"),
                        None => other.to_string(),
                    },
                };
                let color = if v["verdict"]["verdict"] == "wrong_value" {
                    Color::Red
                } else {
                    Color::Reset
                };
                t.add_row([
                    Cell::new(&v["line"]).fg(color),
                    Cell::new(v["variable"].as_str().unwrap_or("?")).fg(color),
                    Cell::new(text).fg(color),
                    Cell::new(v["shown"].as_str().unwrap_or("")).fg(color),
                ]);
            }
            println!("{t}");
        }
        _ => {
            println!(
                "program preparation: {}",
                serde_json::to_string_pretty(&without_lists(&c["preparation"])).unwrap_or_default()
            );
            for m in c["matrix"].as_array().into_iter().flatten() {
                println!("  {m}");
            }
        }
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
