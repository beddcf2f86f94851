//! The JavaScript reproducer replays a run's actions against the real Node
//! inspector: its CDP script runs stand-alone and shows the breakpoint, the
//! pauses and the locals, and its page and loader load the stored scripts.

use doppel_core::{
    Action, Event, EventKind, ExecAction, Language, Location, Output, RunRecord, Subject, ToolInfo, Trace, Verdict,
};

const PROG: &str = "function square(x) {\n  const y = x * x;\n  return y;\n}\n// a comment\nlet total = 0;\nfor (let i = 0; i < 3; i++) {\n  total += square(i);\n}\n";

fn run() -> RunRecord {
    run_of(4)
}

/// The run with its first `n` actions (a run that diverged at action `n - 1`).
fn run_of(n: usize) -> RunRecord {
    let actions = [
        Action::SetBreakpoint {
            at: Location::line("prog.js", 5),
        },
        Action::Start,
        Action::Exec {
            exec: ExecAction::StepIn,
        },
        Action::Exec {
            exec: ExecAction::Resume,
        },
    ];
    let events: Vec<Event> = actions[..n]
        .iter()
        .flat_map(|a| {
            [
                Event {
                    t_ms: 0.0,
                    kind: EventKind::Action(a.clone()),
                    raw: vec![],
                },
                Event {
                    t_ms: 0.0,
                    kind: EventKind::Output(Output::Finished {
                        exit_code: None,
                        signal: None,
                    }),
                    raw: vec![],
                },
            ]
        })
        .collect();
    let tool = |name: &str| ToolInfo {
        name: name.into(),
        version: "v20".into(),
        protocol: "CDP".into(),
        executable: "node".into(),
    };
    RunRecord {
        id: Some(7),
        key: "k".into(),
        technique: "differential".into(),
        campaign: "c".into(),
        subject: Subject {
            name: "prog.js".into(),
            language: Language::JavaScript,
            source: "/nonexistent/prog.js".into(),
            source_name: "prog.js".into(),
            line_count: 9,
            binary: None,
            prelude: vec![],
            epilogue: vec![],
            hash: "h".into(),
            build: "js".into(),
        },
        seed: 1,
        config: serde_json::json!({
            "source_text": PROG,
            "scripts": {
                "prelude": [{"name": "doppel-determinism.js", "text": "globalThis.__prelude_ran = 1;\n"}],
                "epilogue": [{"name": "doppel-run.js", "text": "if (globalThis.__prelude_ran !== 1) throw new Error('prelude did not run');\n"}],
            },
        }),
        debuggers: vec![tool("node"), tool("chromium")],
        verdict: Verdict::MaxActions { actions: 4 },
        traces: vec![
            Trace {
                debugger: tool("node"),
                events: events.clone(),
            },
            Trace {
                debugger: tool("chromium"),
                events,
            },
        ],
        duration_ms: 1.0,
        started_at_ms: 0,
    }
}

#[test]
fn the_cdp_script_replays_the_actions_against_real_node() {
    let dir = tempfile::tempdir().unwrap();
    let files = doppel_differential::repro::write(&run(), dir.path()).unwrap();
    for f in [
        "prog.js",
        "page.html",
        "loader.js",
        "repro-cdp.mjs",
        "run.sh",
        "README.md",
    ] {
        assert!(files.iter().any(|p| p.ends_with(f)), "{f} missing: {files:?}");
    }
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    let order: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix("<script src=\""))
        .map(|l| l.trim_end_matches("\"></script>"))
        .collect();
    assert_eq!(
        order,
        ["prelude/0-doppel-determinism.js", "prog.js", "epilogue/0-doppel-run.js"]
    );
    let readme = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
    assert!(
        readme.contains("click line 5") && readme.contains("F11 (Step into)"),
        "{readme}"
    );

    let out = std::process::Command::new("timeout")
        .args(["60", "node", "--experimental-websocket", "repro-cdp.mjs"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The comment line's breakpoint slides to the next statement (line 6),
    // the step in enters square, and resume runs to the end (the loop's
    // breakpoint is before it, so no second stop).
    let lines: Vec<&str> = stdout.lines().collect();
    let after = |marker: &str| -> &str {
        let i = lines
            .iter()
            .position(|l| l.starts_with(marker))
            .unwrap_or_else(|| panic!("{stdout}"));
        lines[i + 1]
    };
    assert!(after("=== [1] start").starts_with("paused @ prog.js:6:"), "{stdout}");
    assert!(
        after("=== [1] start").contains("[(anonymous)] "),
        "only the program's frames: {stdout}"
    );
    assert!(after("=== [2] step_in").starts_with("paused @ prog.js:"), "{stdout}");
    assert_eq!(after("=== [3] resume"), "finished", "{stdout}");
}

#[test]
fn a_breakpoint_phase_divergence_shows_where_v8_resolved_the_breakpoint() {
    // V8 resolves a breakpoint set by URL only when the script is parsed, so
    // a run that ended in the breakpoint phase starts the program to show it.
    let mut r = run_of(1);
    let at = Location::line("prog.js", 5);
    r.verdict = Verdict::Divergence(doppel_core::Finding {
        class: doppel_core::ClassKey {
            divergence: doppel_core::DivergenceKind::BreakpointLocation,
            last_action: doppel_core::ActionKind::SetBreakpoint,
            ast_node: "Program".into(),
            policy: Some("slide_vs_reject".into()),
            transformations: None,
            signature: None,
        },
        action_index: 0,
        last_action: Action::SetBreakpoint { at },
        line: Some(5),
        detail: "node: breakpoint at prog.js:6:1; firefox: rejected".into(),
    });
    let dir = tempfile::tempdir().unwrap();
    doppel_differential::repro::write(&r, dir.path()).unwrap();
    let out = std::process::Command::new("timeout")
        .args(["60", "node", "--experimental-websocket", "repro-cdp.mjs"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("breakpoint requested @ prog.js:5 resolved @ prog.js:6:"),
        "the comment line's breakpoint slides to line 6: {stdout}"
    );
}

#[test]
fn prelude_files_keep_a_stored_index_prefix() {
    // The corpus stores test262's harness as `1-assert.js`, and the traces
    // name it so; the reproducer must not call it `1-1-assert.js`.
    let mut r = run();
    r.config["scripts"]["prelude"] = serde_json::json!([
        {"name": "0-doppel-determinism.js", "text": "globalThis.__prelude_ran = 1;\n"},
        {"name": "1-assert.js", "text": "var assert = 1;\n"},
    ]);
    let dir = tempfile::tempdir().unwrap();
    let files = doppel_differential::repro::write(&r, dir.path()).unwrap();
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    assert!(
        page.contains("\"prelude/0-doppel-determinism.js\"") && page.contains("\"prelude/1-assert.js\""),
        "{page}"
    );
    assert!(files.iter().any(|p| p.ends_with("prelude/1-assert.js")), "{files:?}");
    let loader = std::fs::read_to_string(dir.path().join("loader.js")).unwrap();
    assert!(!loader.contains("1-1-assert.js"), "{loader}");
}
