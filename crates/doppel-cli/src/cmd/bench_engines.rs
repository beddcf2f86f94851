//! `doppel bench engines`: scripts per second per JavaScript engine on tiny
//! JEST-sized programs (1–3 lines), one engine at a time, warm (the first run,
//! which starts the worker, is timed apart), plus engine262 with semantics
//! coverage; then what confining a process costs (a one-shot shell's
//! start: its own network namespace, the shared one, none). Prints
//! figures; asserts nothing.

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use doppel_engines::engine::engine262::Engine262;
use doppel_engines::{Engine, EnginesConfig, RunOptions, Script, registry};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// JEST-sized programs (the paper's average is 2.01 lines); `{i}` varies them.
const TEMPLATES: &[&str] = &[
    "var x{i} = {i} + 1;",
    "var o{i} = { a: {i}, b: [1, 2] }; o{i}.a + o{i}.b.length;",
    "function f{i}(a) { return a * 2; } f{i}({i});",
    "[{i}, 2, 3].map(function (v) { return v + 1; }).join();",
    "var s{i} = 'x' + {i}; s{i}.length == 2;",
    "null == undefined; [1,2] == '1,2'; {i} === {i};",
    "var a{i} = []; a{i}.push({i}); a{i}.pop();",
    "try { null.x; } catch (e) { e instanceof TypeError; }",
    "var n{i} = Number('{i}'); n{i} !== n{i};",
    "Object.keys({ b: 1, a: 2, {i}: 3 });",
];

fn program(i: usize) -> String {
    TEMPLATES[i % TEMPLATES.len()].replace("{i}", &i.to_string())
}

struct Row {
    name: String,
    first_ms: f64,
    median_ms: f64,
    per_s: f64,
    outcomes: BTreeMap<String, usize>,
}

/// What is measured: an engine's plain run, or engine262's run with coverage.
enum Target<'a> {
    Plain(&'a mut dyn Engine),
    Coverage(&'a mut Engine262),
}

async fn measure(name: String, mut target: Target<'_>, programs: usize) -> Row {
    let opts = RunOptions {
        timeout: Duration::from_secs(10),
        output_cap: 4096,
    };
    let mut once = async |src: String| -> String {
        let s = Script::new(src);
        match &mut target {
            Target::Coverage(c) => c.run_with_coverage(&s, &opts).await.0.outcome.label(),
            Target::Plain(e) => e.run(&s, &opts).await.outcome.label(),
        }
    };
    let t = Instant::now();
    once("void 0;".into()).await;
    let first_ms = t.elapsed().as_secs_f64() * 1000.0;
    let mut times = Vec::with_capacity(programs);
    let mut outcomes = BTreeMap::new();
    let start = Instant::now();
    for i in 0..programs {
        let t = Instant::now();
        let label = once(program(i)).await;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        *outcomes.entry(label).or_insert(0) += 1;
    }
    let total = start.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);
    Row {
        name,
        first_ms,
        median_ms: times.get(times.len() / 2).copied().unwrap_or(0.0),
        per_s: times.len() as f64 / total.max(1e-9),
        outcomes,
    }
}

/// Runs the benchmark over `engines` (empty: every installed one).
pub async fn run(programs: usize, engines: Vec<String>) -> anyhow::Result<ExitCode> {
    let cfg = EnginesConfig::default();
    let mut rows = Vec::new();
    for entry in registry::all() {
        if !engines.is_empty() && !engines.iter().any(|n| n == entry.name) {
            continue;
        }
        let mut e = match (entry.create)(&cfg) {
            Ok(e) => e,
            Err(err) => {
                eprintln!("{}: skipped, {err}", entry.name);
                continue;
            }
        };
        rows.push(measure(entry.name.to_string(), Target::Plain(e.as_mut()), programs).await);
        e.shutdown().await;
        if entry.name == "engine262" {
            match Engine262::with_coverage(&cfg) {
                Ok(mut c) => {
                    rows.push(measure("engine262 + coverage".into(), Target::Coverage(&mut c), programs).await);
                    c.shutdown().await;
                }
                Err(err) => eprintln!("engine262 + coverage: skipped, {err}"),
            }
        }
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(["engine", "first run ms", "median ms", "scripts/s", "outcomes"]);
    for r in &rows {
        let outcomes: Vec<String> = r.outcomes.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        t.add_row([
            r.name.clone(),
            format!("{:.0}", r.first_ms),
            format!("{:.1}", r.median_ms),
            format!("{:.1}", r.per_s),
            outcomes.join(", "),
        ]);
    }
    println!("{t}");
    println!(
        "{programs} tiny programs per engine, sequential, one worker each; timings are wall clock on this machine"
    );
    confinement(programs).await?;
    Ok(ExitCode::SUCCESS)
}

/// `true` started `n` times under each confinement a tool gets (cgroup and
/// process group always; the network namespace varies): the baseline, a
/// namespace per process, against the shared loopback-only namespace the
/// one-shot shells use.
async fn confinement(n: usize) -> anyhow::Result<()> {
    use doppel_core::process::{Sandbox, run};
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(["process start (true)", "median ms", "starts/s"]);
    for (name, sandbox) in [
        ("a network namespace of its own (baseline)", Sandbox::default()),
        (
            "the shared loopback-only namespace (one-shot shells)",
            Sandbox::shared_loopback(),
        ),
        ("no network namespace", Sandbox::NONE),
    ] {
        let mut times = Vec::with_capacity(n);
        let start = Instant::now();
        for _ in 0..n {
            let t = Instant::now();
            let done = run(tokio::process::Command::new("true"), Duration::from_secs(10), sandbox).await?;
            anyhow::ensure!(done.code == Some(0), "true under {name}: {done:?}");
            times.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        let total = start.elapsed().as_secs_f64();
        times.sort_by(f64::total_cmp);
        t.add_row([
            name.to_string(),
            format!("{:.2}", times[times.len() / 2]),
            format!("{:.0}", n as f64 / total.max(1e-9)),
        ]);
    }
    println!("{t}");
    Ok(())
}
