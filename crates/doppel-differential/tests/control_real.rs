//! The control run before a differential run (issue 17 item 2) with the
//! real tools. node 20 lacks `Set.prototype.intersection` (ES2025), which
//! Chromium 156 has: the program below throws in node and ends normally in
//! Chromium, so without the control run its runs end on a divergence that
//! says nothing about the debuggers, and with it they are recorded as not
//! comparable, both control runs kept, the control run once per program.
//! And GDB vs LLDB on a normal C program: the control runs agree and the run
//! goes ahead as before. Last, the environment normalization of the same
//! issue item: node's global object and Chromium's window, passed as an
//! argument, read the same (`global_object`), and diverge without it.

use doppel_core::{Output, Verdict};
use doppel_debuggers::DebuggerConfig;
use doppel_differential::DiffConfig;
use doppel_differential::campaign::{self, CampaignSpec};
use doppel_differential::control::{self, ControlCache};
use doppel_lang::c::{BuildCache, BuildRecipe};
use std::path::PathBuf;
use std::time::Duration;

/// Throws a TypeError at line 5 in node 20, prints 2 in Chromium 156.
const INTERSECTION_JS: &str = "// Set.prototype.intersection is ES2025.
function common(a, b) {
  const x = new Set(a);
  const y = new Set(b);
  return x.intersection(y).size;
}
const n = common([1, 2, 3], [2, 3, 4]);
console.log(n);
";

fn spec(debuggers: &[&str], diff: DiffConfig) -> CampaignSpec {
    CampaignSpec {
        name: "control-real".into(),
        debuggers: debuggers.iter().map(|d| d.to_string()).collect(),
        debugger: DebuggerConfig {
            action_timeout: Duration::from_secs(20),
            ..DebuggerConfig::default()
        },
        diff,
        jobs: 1,
        resume: false,
        executables: [("lldb".to_string(), "/usr/bin/lldb-dap-22".to_string())].into(),
        tools: Vec::new(),
    }
}

#[tokio::test]
async fn node_lacking_an_es2025_built_in_is_not_comparable_with_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("intersection.js");
    std::fs::write(&file, INTERSECTION_JS).unwrap();
    let cache = doppel_lang::js::JsCache::new(dir.path().join("cache"));
    let p = doppel_lang::prepare::prepare_js_one(&cache, &file, "intersection.js").unwrap();
    assert!(p.error.is_none(), "{:?}", p.error);

    // Without the control run: no breakpoint, so the run is start and the
    // two ends, which differ (node's exit code 1 after the TypeError).
    let without = spec(
        &["node", "chromium"],
        DiffConfig {
            control_run: false,
            max_breakpoints: 0,
            ..DiffConfig::default()
        },
    );
    let mut dbg = campaign::create_debuggers(&without).unwrap();
    let old = campaign::run_one(&without, &p, 0, &mut dbg).await;
    assert!(
        matches!(old.verdict, Verdict::Divergence(_)),
        "without the control run: {:?}",
        old.verdict
    );

    // With it (the default), on three seeds sharing one control result.
    let with = spec(&["node", "chromium"], DiffConfig::default());
    assert!(with.diff.control_run, "on by default");
    let controls = ControlCache::default();
    let mut keys = Vec::new();
    for seed in 0..3 {
        let rec = campaign::run_one_with(&with, &p, seed, &mut dbg, &controls).await;
        let Verdict::NotComparable { reason, controls: runs } = &rec.verdict else {
            panic!("seed {seed}: {:?}", rec.verdict);
        };
        assert!(reason.contains("node exit code 1"), "{reason}");
        assert!(reason.contains("chromium exit code 0"), "{reason}");
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].debugger, "node");
        assert!(rec.traces.is_empty(), "no action was issued");
        // `doppel show` shows both ends.
        let view =
            doppel_core::technique::Technique::view(&doppel_differential::technique::Differential, &rec).unwrap();
        assert!(
            view.lines.iter().any(|l| l.starts_with("verdict: not comparable")),
            "{:?}",
            view.lines
        );
        assert!(
            view.lines.iter().any(|l| l == "  node: exit code 1"),
            "{:?}",
            view.lines
        );
        assert!(
            view.lines.iter().any(|l| l == "  chromium: exit code 0"),
            "{:?}",
            view.lines
        );
        keys.push(rec.key);
    }
    assert_eq!(
        controls.len(),
        1,
        "one control result for the program, not one per seed"
    );
    // A program that logs an object ends alike; node prints `{ a: 1 }`,
    // Chromium `Object`: not a difference of the program.
    let logs = dir.path().join("logs.js");
    std::fs::write(&logs, "const o = { a: 1 };\nconsole.log(o);\n").unwrap();
    let q = doppel_lang::prepare::prepare_js_one(&cache, &logs, "logs.js").unwrap();
    let runs = control::run(&mut dbg, &q.subject).await;
    assert_ne!(runs[0].program_output, runs[1].program_output, "{runs:?}");
    assert_eq!(control::verdict(&runs, &q.subject), None, "{runs:?}");
    // The switch is part of the run key: the two behaviours never mix.
    assert_ne!(campaign::run_key(&without, &p.subject, 0), keys[0]);
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
}

#[tokio::test]
async fn gdb_and_lldb_agree_on_a_normal_program_and_the_run_goes_ahead() {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = BuildCache::new(cache_dir.path().to_path_buf());
    let recipe = BuildRecipe::parse("gcc -O0 -g").unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c/exitcode.c");
    let p = doppel_lang::prepare::prepare_one(&cache, &src, "exitcode.c", &recipe)
        .await
        .unwrap();
    assert!(p.error.is_none(), "{:?}", p.error);
    let s = spec(&["gdb", "lldb"], DiffConfig::default());
    let mut dbg = campaign::create_debuggers(&s).unwrap();

    let runs = control::run(&mut dbg, &p.subject).await;
    for r in &runs {
        assert_eq!(
            r.end,
            Output::Finished {
                exit_code: Some(3),
                signal: None
            },
            "{}",
            r.debugger
        );
        // Both capture the program's output, so it is compared too.
        assert_eq!(r.program_output.trim(), "3", "{}", r.debugger);
    }
    assert_eq!(control::disagreement(&runs, true), None, "{runs:?}");

    let controls = ControlCache::default();
    for seed in 0..2 {
        let rec = campaign::run_one_with(&s, &p, seed, &mut dbg, &controls).await;
        assert!(
            !matches!(
                rec.verdict,
                Verdict::NotComparable { .. } | Verdict::SubjectError { .. }
            ),
            "seed {seed}: {:?}",
            rec.verdict
        );
        assert!(
            !rec.traces.is_empty() && rec.traces[0].actions().count() > 0,
            "seed {seed}: the run went ahead"
        );
    }
    assert_eq!(controls.len(), 1);
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
}

#[tokio::test]
async fn node_global_and_chromium_window_agree_under_the_global_object_rule() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("glob.js");
    std::fs::write(
        &file,
        "function f(g) {\n  const k = 1;\n  return k;\n}\nf(globalThis);\nf(globalThis);\n",
    )
    .unwrap();
    let cache = doppel_lang::js::JsCache::new(dir.path().join("cache"));
    let p = doppel_lang::prepare::prepare_js_one(&cache, &file, "glob.js").unwrap();
    assert!(p.error.is_none(), "{:?}", p.error);
    let diff = |rule: bool| {
        let mut d = DiffConfig {
            breakpoint_lines: doppel_differential::config::BreakpointLines::Code,
            ..DiffConfig::default()
        };
        if !rule {
            d.normalization.disable("global_object").unwrap();
        }
        spec(&["node", "chromium"], d)
    };
    let (on, off) = (diff(true), diff(false));
    let mut dbg = campaign::create_debuggers(&on).unwrap();
    for seed in 0..3 {
        let a = campaign::run_one(&on, &p, seed, &mut dbg).await;
        assert!(
            matches!(a.verdict, Verdict::ProgramFinished { .. } | Verdict::MaxActions { .. }),
            "seed {seed} with the rule: {:?}",
            a.verdict
        );
        assert!(a.finding_notes().is_empty(), "seed {seed}: {:?}", a.finding_notes());
        // Without it: a variables finding, which the run may go on past
        // (`findings_per_run`), so the verdict or its first finding note.
        let b = campaign::run_one(&off, &p, seed, &mut dbg).await;
        let f = b
            .finding_notes()
            .first()
            .copied()
            .or(b.verdict.finding())
            .unwrap_or_else(|| panic!("seed {seed} without: {:?}", b.verdict));
        assert!(
            f.detail.contains("g:global=") && f.detail.contains("g:Window="),
            "{}",
            f.detail
        );
    }
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
}
