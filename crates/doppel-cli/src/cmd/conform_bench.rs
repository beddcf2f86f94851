//! `doppel bench conform`: complete N+1 verdicts per second (every engine of
//! the panel plus engine262, judged and voted) for JEST-sized programs
//! (1-3 lines; the paper's average is 2.01) and for test262-format tests
//! (given files or directories, harness included), with `--jobs` panels in
//! parallel. Prints figures; asserts nothing.

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use doppel_conform::matrix::load;
use doppel_conform::verdict::panel::{ConformTest, Panel, PanelConfig};
use doppel_engines::{EnginesConfig, Script};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `doppel bench conform`.
#[derive(clap::Args, Debug)]
pub struct ConformBenchArgs {
    /// JEST-sized programs to judge.
    #[arg(long, default_value_t = 100)]
    pub programs: usize,
    /// test262-format tests (files or directories); none: only the programs.
    #[arg(long)]
    pub tests: Vec<PathBuf>,
    /// At most this many of the tests (evenly spread).
    #[arg(long, default_value_t = 100)]
    pub max_tests: usize,
    /// Engines (default: every installed one).
    #[arg(long, value_delimiter = ',')]
    pub engines: Vec<String>,
    /// Panels running in parallel.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Without engine262's semantics coverage.
    #[arg(long)]
    pub no_coverage: bool,
}

/// JEST-sized programs; `{i}` varies them.
const TEMPLATES: &[&str] = &[
    "var x{i} = {i} + 1;",
    "var o{i} = { a: {i}, b: [1, 2] }; o{i}.a + o{i}.b.length;",
    "function f{i}(a) { return a * 2; } f{i}({i});",
    "[{i}, 2, 3].map(function (v) { return v + 1; }).join();",
    "var s{i} = 'x' + {i}; s{i}.length == 2;",
    "null == undefined; [1,2] == '1,2'; {i} === {i};",
    "var a{i} = []; a{i}.push({i}); a{i}.pop();",
    "try { null.x; } catch (e) { e instanceof TypeError; }",
    "Object.keys({ b: 1, a: 2, {i}: 3 });",
    "null.x{i};",
];

fn programs(n: usize) -> Vec<ConformTest> {
    (0..n)
        .map(|i| {
            let src = TEMPLATES[i % TEMPLATES.len()].replace("{i}", &i.to_string());
            ConformTest {
                name: format!("p{i}.js"),
                text: src.clone(),
                script: Script::new(src),
                expected: None,
            }
        })
        .collect()
}

/// (verdicts, seconds, findings) over `tests` on `jobs` panels.
async fn measure(cfg: &PanelConfig, tests: Vec<ConformTest>, jobs: usize) -> anyhow::Result<(usize, f64, usize)> {
    let engines = EnginesConfig::default();
    let mut panels = Vec::new();
    for _ in 0..jobs.max(1) {
        let mut p = Panel::new(cfg, &engines)?;
        // Warm-up: every worker starts and probes its features, untimed.
        let warm = ConformTest {
            name: "warm".into(),
            text: "void 0;".into(),
            script: Script {
                source: "void 0;".into(),
                features: vec!["let".into()],
            },
            expected: None,
        };
        p.run(&warm).await;
        panels.push(p);
    }
    let queue = std::sync::Mutex::new(tests.into_iter());
    let start = Instant::now();
    let results = futures::future::join_all(panels.iter_mut().map(|p| {
        let queue = &queue;
        async move {
            let (mut n, mut findings) = (0, 0);
            loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some(t) = next else { break };
                let run = p.run(&t).await;
                n += 1;
                if run.vote.candidate.is_finding() {
                    findings += 1;
                }
            }
            (n, findings)
        }
    }))
    .await;
    let secs = start.elapsed().as_secs_f64();
    for p in &mut panels {
        p.shutdown().await;
    }
    let n = results.iter().map(|r| r.0).sum();
    let f = results.iter().map(|r| r.1).sum();
    Ok((n, secs, f))
}

/// Runs the benchmark.
pub async fn run(a: ConformBenchArgs) -> anyhow::Result<ExitCode> {
    let cfg = PanelConfig {
        engines: a.engines.clone(),
        coverage: !a.no_coverage,
        ..PanelConfig::default()
    };
    let probe = Panel::new(&cfg, &EnginesConfig::default())?;
    let engines = probe.members().len();
    let families = probe.families();
    for m in probe.missing() {
        eprintln!("left out: {} ({})", m.engine, m.reason);
    }
    drop(probe);
    let mut rows = Vec::new();
    let (n, s, f) = measure(&cfg, programs(a.programs), a.jobs).await?;
    rows.push(("JEST-sized programs (1-3 lines)".to_string(), n, s, f));
    if !a.tests.is_empty() {
        let files = load::discover(&a.tests);
        let step = (files.len() / a.max_tests.max(1)).max(1);
        let tests: Vec<ConformTest> = files
            .iter()
            .step_by(step)
            .filter_map(|(p, root)| load::load(p, &load::name_of(p, root), None).ok())
            .take(a.max_tests)
            .collect();
        let (n, s, f) = measure(&cfg, tests, a.jobs).await?;
        rows.push(("test262-format tests (harness included)".to_string(), n, s, f));
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(["workload", "verdicts", "seconds", "verdicts/s", "findings"]);
    for (w, n, s, f) in &rows {
        t.add_row([
            w.clone(),
            n.to_string(),
            format!("{s:.1}"),
            format!("{:.2}", *n as f64 / s.max(1e-9)),
            f.to_string(),
        ]);
    }
    println!("{t}");
    println!(
        "a verdict = engine262 ({}) plus {engines} engines in {families} families, judged and voted; {} panels in parallel; wall clock on this machine (load: {})",
        if a.no_coverage { "no coverage" } else { "with coverage" },
        a.jobs.max(1),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(ExitCode::SUCCESS)
}
