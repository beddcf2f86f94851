//! The node backend against the real node (V8 over CDP).

mod common;

use common::*;
use doppel_core::{ExecAction, FailureKind, Location, Output, PauseReason, VariableKind};
use doppel_debuggers::backend::node::Node;
use doppel_debuggers::{BackendError, Debugger, DebuggerConfig};
use std::time::{Duration, Instant};

fn cfg() -> DebuggerConfig {
    DebuggerConfig {
        action_timeout: Duration::from_secs(15),
        ..Default::default()
    }
}

fn paused(o: &Output) -> &doppel_core::ProgramState {
    o.paused().unwrap_or_else(|| panic!("expected a pause, got {o:?}"))
}

fn functions(st: &doppel_core::ProgramState) -> Vec<&str> {
    st.call_stack.iter().map(|f| f.function.as_str()).collect()
}

#[tokio::test]
async fn a_full_session_slides_steps_and_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    let mut d = Node::new(&cfg()).unwrap();
    assert!(d.info().version.starts_with("node v"), "{:?}", d.info());
    let load = d.load(&s).await;
    assert!(matches!(load, Output::Finished { .. }), "{load:?}");

    match d.set_breakpoint(&Location::line("prog.js", JS_COMMENT_LINE)).await {
        Output::BreakpointSet { resolved: Some(r), .. } => {
            assert_eq!((r.file.as_str(), r.line, r.column), ("prog.js", JS_CALL_LINE, Some(9)));
        }
        other => panic!("{other:?}"),
    }
    let far = d.set_breakpoint(&Location::line("prog.js", 500)).await;
    assert!(matches!(far, Output::BreakpointSet { resolved: None, .. }), "{far:?}");
    assert!(matches!(
        d.remove_breakpoint(&Location::line("prog.js", 500)).await,
        Output::BreakpointRemoved { ok: true, .. }
    ));
    assert!(matches!(
        d.remove_breakpoint(&Location::line("prog.js", 7)).await,
        Output::BreakpointRemoved { ok: false, .. }
    ));

    let start = d.start().await;
    let st = paused(&start);
    assert_eq!(
        st.location,
        Location {
            file: "prog.js".into(),
            line: JS_CALL_LINE,
            column: Some(9)
        }
    );
    assert_eq!(st.reason, PauseReason::Breakpoint);
    assert_eq!(functions(st), ["main", "(anonymous)"]);
    assert_eq!(st.call_stack[1].location.as_ref().unwrap().line, JS_MAIN_CALL);
    let var = |name: &str| {
        st.variables
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no {name} in {:?}", st.variables))
    };
    assert_eq!(var("i").value.text, "0");
    assert_eq!(var("i").kind, VariableKind::Local);
    assert_eq!(var("total").value.text, "0");
    assert_eq!(var("name").value.text, "\"probe\"");
    let point = var("point");
    assert_eq!(point.value.text, "Object");
    let members: Vec<(&str, &str)> = point
        .value
        .children
        .iter()
        .map(|c| (c.name.as_str(), c.value.text.as_str()))
        .collect();
    assert_eq!(members, [("x", "1"), ("y", "Array(2)")]);
    let y = &point.value.children[1];
    assert_eq!(
        y.value
            .children
            .iter()
            .map(|c| c.value.text.as_str())
            .collect::<Vec<_>>()[..2],
        ["2", "3"]
    );

    let inn = d.exec(ExecAction::StepIn).await;
    let st = paused(&inn);
    assert_eq!(
        (st.location.file.as_str(), st.location.line),
        ("prog.js", JS_SQUARE_BODY)
    );
    assert_eq!(st.reason, PauseReason::Step);
    assert_eq!(functions(st), ["square", "main", "(anonymous)"]);
    assert_eq!(st.variables.iter().find(|v| v.name == "x").unwrap().value.text, "0");

    let out = d.exec(ExecAction::StepOut).await;
    let st = paused(&out);
    assert_eq!(functions(st), ["main", "(anonymous)"]);
    assert_eq!(
        st.location.line, JS_FOR_LINE,
        "V8 steps out to the i++ of the loop header"
    );
    let over = d.exec(ExecAction::StepOver).await;
    assert_eq!(paused(&over).call_stack[0].function, "main");
    assert!(matches!(
        d.remove_breakpoint(&Location::line("prog.js", JS_COMMENT_LINE)).await,
        Output::BreakpointRemoved { ok: true, .. }
    ));
    let end = d.exec(ExecAction::Resume).await;
    assert_eq!(
        end,
        Output::Finished {
            exit_code: Some(0),
            signal: None
        }
    );
    assert_eq!(d.program_output(), "probe 5 1\n");
    let t = d.take_transcript();
    assert!(
        t.iter()
            .any(|m| m.dir == "->" && m.text.contains("Debugger.setBreakpointByUrl"))
    );
    let internal = |m: &doppel_core::RawMessage| {
        let v: serde_json::Value = serde_json::from_str(&m.text).unwrap_or_default();
        v["method"] == "Debugger.scriptParsed" && v["params"]["url"].as_str().is_some_and(|u| u.starts_with("node:"))
    };
    assert!(t.iter().any(|m| m.text.contains("Debugger.scriptParsed")));
    assert!(!t.iter().any(internal), "node internals are left out");
    d.reset().await;
    d.shutdown().await;
}

#[tokio::test]
async fn prelude_and_epilogue_share_the_global_scope_and_keep_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let prelude = [(
        "prelude.js",
        "var PRE = 41;\nfunction helper(v) {\n    return v + 1;\n}\n",
    )];
    let epilogue = [("epilogue.js", "console.log('epi', r);\n")];
    let s = js_subject(
        dir.path(),
        "main.js",
        "// first line\nvar r = helper(PRE);\n",
        &prelude,
        &epilogue,
    );
    let mut d = Node::new(&cfg()).unwrap();
    d.load(&s).await;
    match d.set_breakpoint(&Location::line("main.js", 1)).await {
        Output::BreakpointSet { resolved: Some(r), .. } => assert_eq!((r.file.as_str(), r.line), ("main.js", 2)),
        other => panic!("{other:?}"),
    }
    let st = d.start().await;
    assert_eq!(paused(&st).location.line, 2);
    let inn = d.exec(ExecAction::StepIn).await;
    let st = paused(&inn);
    assert_eq!((st.location.file.as_str(), st.location.line), ("prelude.js", 3));
    assert_eq!(st.call_stack[1].location.as_ref().unwrap().file, "main.js");
    let end = d.exec(ExecAction::Resume).await;
    assert_eq!(
        end,
        Output::Finished {
            exit_code: Some(0),
            signal: None
        }
    );
    assert_eq!(d.program_output(), "epi 42\n");
    d.shutdown().await;
}

#[tokio::test]
async fn syntax_errors_exceptions_and_exit_codes_are_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Node::new(&cfg()).unwrap();

    let bad = js_subject(dir.path(), "bad.js", "console.log(1);\nfunction f( {\n", &[], &[]);
    assert!(matches!(d.load(&bad).await, Output::Finished { .. }));
    match d.set_breakpoint(&Location::line("bad.js", 1)).await {
        Output::BreakpointSet {
            resolved: None,
            message: Some(m),
            ..
        } => assert!(m.contains("ended before"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        d.start().await,
        Output::Finished {
            exit_code: Some(1),
            signal: None
        }
    );
    assert!(d.program_output().contains("SyntaxError"), "{}", d.program_output());
    d.reset().await;

    let throws = js_subject(
        dir.path(),
        "throws.js",
        "console.log('a');\nthrow new Error('boom');\n",
        &[],
        &[],
    );
    d.load(&throws).await;
    assert_eq!(
        d.start().await,
        Output::Finished {
            exit_code: Some(1),
            signal: None
        }
    );
    assert!(d.program_output().contains("Error: boom"), "{}", d.program_output());
    d.reset().await;

    let exits = js_subject(
        dir.path(),
        "exits.js",
        "process.exitCode = 0;\nprocess.exit(3);\n",
        &[],
        &[],
    );
    d.load(&exits).await;
    d.set_breakpoint(&Location::line("exits.js", 2)).await;
    assert_eq!(paused(&d.start().await).location.line, 2);
    assert_eq!(
        d.exec(ExecAction::StepOver).await,
        Output::Finished {
            exit_code: Some(3),
            signal: None
        }
    );
    d.shutdown().await;
}

#[tokio::test]
async fn a_hanging_program_times_out_and_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "loop.js", "let x = 0;\nfor (;;) {\n    x++;\n}\n", &[], &[]);
    let mut d = Node::new(&DebuggerConfig {
        action_timeout: Duration::from_secs(3),
        warm: false,
        ..Default::default()
    })
    .unwrap();
    assert!(matches!(d.load(&s).await, Output::Finished { .. }));
    let pid = d.debugger_pid().unwrap();
    let t = Instant::now();
    let out = d.start().await;
    assert!(
        matches!(
            out,
            Output::Failed {
                kind: FailureKind::Timeout,
                ..
            }
        ),
        "{out:?}"
    );
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!alive(pid), "node {pid} survived the timeout");
    assert!(d.debugger_pid().is_none());
    d.shutdown().await;
}

#[tokio::test]
async fn a_killed_node_is_a_finish_by_signal_and_the_next_load_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    let mut d = Node::new(&cfg()).unwrap();
    d.load(&s).await;
    d.set_breakpoint(&Location::line("prog.js", JS_CALL_LINE)).await;
    paused(&d.start().await);
    let pid = d.debugger_pid().unwrap();
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let out = d.exec(ExecAction::StepIn).await;
    assert_eq!(
        out,
        Output::Finished {
            exit_code: None,
            signal: Some("SIGKILL".into())
        }
    );
    d.reset().await;
    assert!(matches!(d.load(&s).await, Output::Finished { .. }));
    d.set_breakpoint(&Location::line("prog.js", JS_CALL_LINE)).await;
    assert_eq!(paused(&d.start().await).location.line, JS_CALL_LINE);
    d.shutdown().await;
}

#[tokio::test]
async fn warm_runs_are_fast_and_independent() {
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    let mut d = Node::new(&cfg()).unwrap();
    let mut times = Vec::new();
    for _ in 0..6 {
        let t = Instant::now();
        assert!(matches!(d.load(&s).await, Output::Finished { .. }));
        d.set_breakpoint(&Location::line("prog.js", JS_SQUARE_BODY)).await;
        let mut out = d.start().await;
        let mut pauses = 0;
        while let Output::Paused(st) = &out {
            assert_eq!(
                st.variables.iter().find(|v| v.name == "x").unwrap().value.text,
                pauses.to_string()
            );
            pauses += 1;
            out = d.exec(ExecAction::Resume).await;
        }
        assert_eq!(pauses, 3);
        assert_eq!(
            out,
            Output::Finished {
                exit_code: Some(0),
                signal: None
            }
        );
        d.reset().await;
        times.push(t.elapsed());
    }
    // The first run starts node on the critical path; later ones take the spare.
    let warm = &times[1..];
    let mean = warm.iter().sum::<Duration>() / warm.len() as u32;
    eprintln!("node runs: {times:?}; warm mean {mean:?}");
    assert!(mean < Duration::from_secs(2), "{times:?}");
    d.shutdown().await;
}

#[test]
fn a_missing_node_is_not_installed() {
    let cfg = DebuggerConfig {
        executable: Some("/nonexistent/node".into()),
        ..Default::default()
    };
    match Node::new(&cfg) {
        Err(BackendError::NotInstalled { name, hint }) => {
            assert_eq!(name, "node");
            assert!(hint.contains("setup-00-node.sh"), "{hint}");
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("created a backend for a missing executable"),
    }
}
