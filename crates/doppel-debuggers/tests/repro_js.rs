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
    let events = events_of(&actions[..n]);
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
    let files = doppel_debuggers::repro::write(&run(), dir.path()).unwrap();
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
        ["prelude/0/doppel-determinism.js", "prog.js", "epilogue/0/doppel-run.js"]
    );
    let readme = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
    assert!(
        readme.contains("click line 5")
            && readme.contains("F11 (Step into)")
            && readme.contains("Script First Statement")
            && readme.contains("press F8 (Resume) to start"),
        "{readme}"
    );

    let out = std::process::Command::new("timeout")
        .args(["60", "node", "repro-cdp.mjs"])
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
    assert_eq!(after("=== [3] resume"), "finished (exit 0)", "{stdout}");
}

#[test]
fn a_breakpoint_phase_divergence_shows_where_v8_resolved_the_breakpoint() {
    // As doppel's Node backend, the script sets breakpoints while paused
    // before the source runs (the source is parsed), so V8 answers at once.
    let mut r = run_of(1);
    let at = Location::line("prog.js", 5);
    r.verdict = Verdict::Divergence(doppel_core::Finding {
        class: doppel_core::ClassKey::new("differential")
            .with("divergence", "breakpoint_location")
            .with("last_action", "set_breakpoint")
            .with("node", "Program")
            .with_prefixed("policy", "policy", "slide_vs_reject"),
        action_index: Some(0),
        last_action: Some(Action::SetBreakpoint { at }),
        line: Some(5),
        detail: "node: breakpoint at prog.js:6:1; firefox: rejected".into(),
    });
    let stdout = replay(&r);
    assert!(
        answer(&stdout, "=== [0] set_breakpoint @ prog.js:5 ===  <-- divergence")
            .starts_with("breakpoint @ prog.js:6:"),
        "the comment line's breakpoint slides to line 6: {stdout}"
    );
}

/// The run `run_of(0)` with `source` as its program and `actions` as the
/// node trace's actions (each answered `Finished` in the stored trace; the
/// reproducer asks node anew).
fn run_with(source: &str, actions: &[Action]) -> RunRecord {
    let mut r = run_of(0);
    r.config["source_text"] = serde_json::Value::String(source.into());
    r.traces.truncate(1);
    r.debuggers.truncate(1);
    r.traces[0].events = events_of(actions);
    r
}

/// Writes the reproducer of `r` and runs its CDP script with the real node;
/// returns its stdout (the script must exit 0).
fn replay(r: &RunRecord) -> String {
    let dir = tempfile::tempdir().unwrap();
    doppel_debuggers::repro::write(r, dir.path()).unwrap();
    let out = std::process::Command::new("timeout")
        .args(["60", "node", "repro-cdp.mjs"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
}

/// The line after the header line `marker` in the script's output.
fn answer<'a>(stdout: &'a str, marker: &str) -> &'a str {
    let lines: Vec<&str> = stdout.lines().collect();
    let i = lines
        .iter()
        .position(|l| *l == marker)
        .unwrap_or_else(|| panic!("no line {marker:?} in {stdout}"));
    lines.get(i + 1).copied().unwrap_or("")
}

#[test]
fn a_breakpoint_keeps_its_column() {
    // Two statements on one line: doppel's Node backend requests column 12
    // (`let b`), and V8 resolves the breakpoint in the second statement; a
    // request without the column would resolve to the first one (1:9).
    let at = Location {
        file: "prog.js".into(),
        line: 1,
        column: Some(12),
    };
    let r = run_with(
        "let a = 1; let b = 2;\nconsole.log(a + b);\n",
        &[Action::SetBreakpoint { at: at.clone() }, Action::Start],
    );
    let stdout = replay(&r);
    let set = answer(&stdout, "=== [0] set_breakpoint @ prog.js:1:12 ===");
    let column: u32 = set
        .strip_prefix("breakpoint @ prog.js:1:")
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(column >= 12, "resolved in the first statement: {stdout}");
    assert!(
        answer(&stdout, "=== [1] start ===").starts_with(&format!("paused @ prog.js:1:{column} ")),
        "{stdout}"
    );
}

#[test]
fn a_node_that_dies_is_reported_with_its_signal() {
    // The program kills node (as V8 did in runs 11276, 12126 and 12594 with
    // SIGSEGV and SIGTRAP): the script says so instead of timing out.
    let r = run_with("process.kill(process.pid, 'SIGKILL');\n", &[Action::Start]);
    let stdout = replay(&r);
    assert_eq!(answer(&stdout, "=== [0] start ==="), "finished (SIGKILL)", "{stdout}");
}

#[test]
fn prelude_files_keep_a_stored_index_prefix() {
    // The corpus stores test262's harness as `1-assert.js`, and the traces
    // name it so; the reproducer must not call it `1-1-assert.js`. Each
    // script is `<i>/<stored name>`, as `doppel replay` writes them.
    let mut r = run();
    r.config["scripts"]["prelude"] = serde_json::json!([
        {"name": "0-doppel-determinism.js", "text": "globalThis.__prelude_ran = 1;\n"},
        {"name": "1-assert.js", "text": "var assert = 1;\n"},
    ]);
    let dir = tempfile::tempdir().unwrap();
    let files = doppel_debuggers::repro::write(&r, dir.path()).unwrap();
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    assert!(
        page.contains("\"prelude/0/0-doppel-determinism.js\"") && page.contains("\"prelude/1/1-assert.js\""),
        "{page}"
    );
    assert!(files.iter().any(|p| p.ends_with("prelude/1/1-assert.js")), "{files:?}");
    let loader = std::fs::read_to_string(dir.path().join("loader.js")).unwrap();
    assert!(!loader.contains("1-1-assert.js"), "{loader}");
}

#[test]
fn a_step_into_a_prelude_function_stops_there_under_its_stored_name() {
    // doppel's Node backend answers a step that ends in the test262 harness
    // (a prelude script) with that pause; the reproducer used to resume
    // there, so a run that diverged in `assert.js` (10364, 13529) did not
    // reproduce.
    let mut r = run_with(
        "var a = 1;\nvar b = helper(a);\nvar c = b;\n",
        &[
            Action::SetBreakpoint {
                at: Location::line("prog.js", 2),
            },
            Action::Start,
            Action::Exec {
                exec: ExecAction::StepIn,
            },
            Action::Exec {
                exec: ExecAction::StepOut,
            },
        ],
    );
    r.config["scripts"]["prelude"] = serde_json::json!([{
        "name": "0-lib.js",
        "text": "function helper(n) {\n  return n + 1;\n}\nglobalThis.__prelude_ran = 1;\n",
    }]);
    let dir = tempfile::tempdir().unwrap();
    let files = doppel_debuggers::repro::write(&r, dir.path()).unwrap();
    assert!(files.iter().any(|p| p.ends_with("prelude/0/0-lib.js")), "{files:?}");
    let stdout = replay(&r);
    assert!(
        answer(&stdout, "=== [1] start ===").starts_with("paused @ prog.js:2:"),
        "{stdout}"
    );
    let step_in = answer(&stdout, "=== [2] step_in ===");
    assert!(
        step_in.starts_with("paused @ 0-lib.js:2:"),
        "the step in stops in the prelude's helper: {stdout}"
    );
    assert!(step_in.contains("[helper <- (anonymous)]"), "{stdout}");
    assert!(
        answer(&stdout, "=== [3] step_out ===").starts_with("paused @ prog.js:"),
        "{stdout}"
    );
}

#[test]
fn a_breakpoint_request_keeps_its_column() {
    // Two statements on line 1: a request at the second one's column must
    // not become a request for the whole line (column 0), which resolves
    // to the first statement.
    let prog = "var a = 1; var b = 2;\nvar c = a + b;\n";
    let column = prog.find("var b").unwrap() as u32 + 1;
    let at = Location {
        file: "prog.js".into(),
        line: 1,
        column: Some(column),
    };
    let stdout = replay(&run_with(prog, &[Action::SetBreakpoint { at }, Action::Start]));
    assert!(
        stdout.contains(&format!("=== [0] set_breakpoint @ prog.js:1:{column} ===")),
        "{stdout}"
    );
    let paused = answer(&stdout, "=== [1] start ===");
    let col: u32 = paused
        .strip_prefix("paused @ prog.js:1:")
        .and_then(|r| r.split(' ').next())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no pause on line 1: {stdout}"));
    assert!(
        col >= column,
        "the pause is at the second statement (column {col} >= {column}): {stdout}"
    );
}

#[test]
fn a_step_into_node_s_own_javascript_comes_back_out() {
    // `process.hrtime` is JavaScript in node (`node:internal/...`), where
    // V8 ignores blackboxing: as doppel's Node backend, a step into it steps
    // out again and answers in the program (the old script resumed there and
    // answered `finished`).
    let r = run_with(
        "process.hrtime();\nvar z = 2;\n",
        &[
            Action::SetBreakpoint {
                at: Location::line("prog.js", 1),
            },
            Action::Start,
            Action::Exec {
                exec: ExecAction::StepIn,
            },
        ],
    );
    let stdout = replay(&r);
    assert!(
        answer(&stdout, "=== [1] start ===").starts_with("paused @ prog.js:1:"),
        "{stdout}"
    );
    assert!(
        answer(&stdout, "=== [2] step_in ===").starts_with("paused @ prog.js:"),
        "the step in answers in prog.js: {stdout}"
    );
}

#[test]
fn a_step_off_the_end_of_the_source_stops_in_the_next_script() {
    // As doppel's Node backend (and Chromium between two `<script>`s), a step
    // from the source's end stops at the first statement of the epilogue,
    // not at the program's end.
    let r = run_with(
        "var z = 2;\n",
        &[
            Action::SetBreakpoint {
                at: Location::line("prog.js", 1),
            },
            Action::Start,
            Action::Exec {
                exec: ExecAction::StepOver,
            },
            Action::Exec {
                exec: ExecAction::StepOver,
            },
        ],
    );
    let stdout = replay(&r);
    assert!(
        answer(&stdout, "=== [1] start ===").starts_with("paused @ prog.js:1:"),
        "{stdout}"
    );
    // V8 pauses at the script's end (2:1) first.
    assert!(
        answer(&stdout, "=== [2] step_over ===").starts_with("paused @ prog.js:2:1 "),
        "{stdout}"
    );
    assert!(
        answer(&stdout, "=== [3] step_over ===").starts_with("paused @ doppel-run.js:1:"),
        "the step stops in the epilogue: {stdout}"
    );
}

/// Each action followed by a placeholder answer (the reproducer replays
/// actions; the stored answers only label its output).
fn events_of(actions: &[Action]) -> Vec<Event> {
    actions
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
        .collect()
}
