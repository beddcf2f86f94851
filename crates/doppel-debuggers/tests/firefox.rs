//! The firefox backend against the real headless Firefox ESR (SpiderMonkey
//! over the Remote Debugging Protocol).

mod common;

use common::*;
use doppel_core::{ExecAction, FailureKind, Location, Output, PauseReason, VariableKind};
use doppel_debuggers::backend::firefox::Firefox;
use doppel_debuggers::{BackendError, Debugger, DebuggerConfig};
use std::time::{Duration, Instant};

/// One browser at a time: nine starting together on two cores take longer
/// than any sane startup bound.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn cfg() -> DebuggerConfig {
    DebuggerConfig {
        action_timeout: Duration::from_secs(20),
        ..Default::default()
    }
}

fn paused(o: &Output) -> &doppel_core::ProgramState {
    o.paused().unwrap_or_else(|| panic!("expected a pause, got {o:?}"))
}

fn functions(st: &doppel_core::ProgramState) -> Vec<&str> {
    st.call_stack.iter().map(|f| f.function.as_str()).collect()
}

/// Every firefox process whose command line names `profile` (a test's own
/// browsers only: each backend has a fresh profile directory).
fn firefox_pids_under(root: u32) -> Vec<u32> {
    let mut pids = doppel_core::process::descendants(root);
    pids.push(root);
    pids.into_iter().filter(|p| alive(*p)).collect()
}

#[tokio::test]
async fn a_full_session_emulates_the_front_end_steps_and_finishes() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    let mut d = Firefox::new(&cfg()).unwrap();
    assert!(d.info().version.contains("Firefox"), "{:?}", d.info());
    let load = d.load(&s).await;
    assert!(matches!(load, Output::Finished { .. }), "{load:?}");

    // The front end ignores a click on a comment line: no breakpoint.
    match d.set_breakpoint(&Location::line("prog.js", JS_COMMENT_LINE)).await {
        Output::BreakpointSet {
            resolved: None,
            message: Some(m),
            ..
        } => assert!(m.contains("not breakable"), "{m}"),
        other => panic!("{other:?}"),
    }
    match d.set_breakpoint(&Location::line("prog.js", JS_CALL_LINE)).await {
        Output::BreakpointSet { resolved: Some(r), .. } => {
            assert_eq!((r.file.as_str(), r.line, r.column), ("prog.js", JS_CALL_LINE, Some(9)));
        }
        other => panic!("{other:?}"),
    }
    let far = d.set_breakpoint(&Location::line("prog.js", 500)).await;
    assert!(matches!(far, Output::BreakpointSet { resolved: None, .. }), "{far:?}");
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
    assert!(!st.variables.iter().any(|v| v.name == "arguments"));
    let members: Vec<(&str, &str)> = var("point")
        .value
        .children
        .iter()
        .map(|c| (c.name.as_str(), c.value.text.as_str()))
        .collect();
    assert_eq!(members, [("x", "1"), ("y", "Array(2)")]);

    let inn = d.exec(ExecAction::StepIn).await;
    let st = paused(&inn);
    assert_eq!(
        (st.location.file.as_str(), st.location.line),
        ("prog.js", JS_SQUARE_BODY)
    );
    assert_eq!(st.reason, PauseReason::Step);
    assert_eq!(functions(st), ["square", "main", "(anonymous)"]);
    assert_eq!(st.variables.iter().find(|v| v.name == "x").unwrap().value.text, "0");

    let over = d.exec(ExecAction::StepOver).await;
    assert_eq!(paused(&over).location.line, JS_SQUARE_BODY + 1);

    let out = d.exec(ExecAction::StepOut).await;
    let st = paused(&out);
    assert_eq!(functions(st), ["main", "(anonymous)"]);
    assert_eq!(st.location.line, JS_FOR_LINE, "steps out to the i++ of the loop header");
    assert!(matches!(
        d.remove_breakpoint(&Location::line("prog.js", JS_CALL_LINE)).await,
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
    assert!(t.iter().any(|m| m.dir == "->" && m.text.contains("setBreakpoint")));
    d.reset().await;
    d.shutdown().await;
}

#[tokio::test]
async fn a_breakpoint_on_the_first_statement_and_steps_across_scripts() {
    let _one = ONE_AT_A_TIME.lock().await;
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
    let mut d = Firefox::new(&cfg()).unwrap();
    d.load(&s).await;
    match d.set_breakpoint(&Location::line("main.js", 2)).await {
        Output::BreakpointSet { resolved: Some(r), .. } => assert_eq!((r.file.as_str(), r.line), ("main.js", 2)),
        other => panic!("{other:?}"),
    }
    let st = d.start().await;
    assert_eq!(paused(&st).location.line, 2);
    assert_eq!(paused(&st).reason, PauseReason::Breakpoint);
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

    // Stepping to the end goes through the epilogue and ends.
    d.reset().await;
    d.load(&s).await;
    d.set_breakpoint(&Location::line("main.js", 2)).await;
    let mut out = d.start().await;
    let mut seen = Vec::new();
    while let Output::Paused(st) = &out {
        seen.push(st.location.to_string());
        assert!(seen.len() < 50, "{seen:?}");
        out = d.exec(ExecAction::StepOver).await;
    }
    assert_eq!(
        out,
        Output::Finished {
            exit_code: Some(0),
            signal: None
        },
        "{seen:?}"
    );
    assert!(seen.iter().any(|l| l.starts_with("epilogue.js:1")), "{seen:?}");
    d.shutdown().await;
}

#[tokio::test]
async fn syntax_errors_and_exceptions_are_outcomes() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let mut d = Firefox::new(&cfg()).unwrap();

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
    assert_eq!(d.program_output(), "a\nUncaught Error: boom\n");
    d.shutdown().await;
}

#[tokio::test]
async fn a_hanging_program_times_out_and_the_next_run_works() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "loop.js", "let x = 0;\nfor (;;) {\n    x++;\n}\n", &[], &[]);
    let mut d = Firefox::new(&DebuggerConfig {
        action_timeout: Duration::from_secs(4),
        ..Default::default()
    })
    .unwrap();
    let load = d.load(&s).await;
    assert!(matches!(load, Output::Finished { .. }), "{load:?}");
    let pid = d.debugger_pid().unwrap();
    let tree = firefox_pids_under(pid);
    assert!(tree.len() > 1, "firefox runs content processes as children");
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
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let left: Vec<u32> = tree.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "survivors of the timeout: {left:?}");
    let p = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    assert!(matches!(d.load(&p).await, Output::Finished { .. }));
    assert_ne!(d.debugger_pid(), Some(pid));
    assert_eq!(
        d.start().await,
        Output::Finished {
            exit_code: Some(0),
            signal: None
        }
    );
    d.shutdown().await;
}

#[tokio::test]
async fn a_killed_browser_is_a_crash_and_the_next_load_recovers() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    let mut d = Firefox::new(&cfg()).unwrap();
    d.load(&s).await;
    d.set_breakpoint(&Location::line("prog.js", JS_CALL_LINE)).await;
    paused(&d.start().await);
    let pid = d.debugger_pid().unwrap();
    // SIGKILL to the browser process alone (not its tree).
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let out = d.exec(ExecAction::StepIn).await;
    assert!(
        matches!(
            out,
            Output::Failed {
                kind: FailureKind::Crash,
                ..
            }
        ),
        "{out:?}"
    );
    d.reset().await;
    assert!(matches!(d.load(&s).await, Output::Finished { .. }));
    assert_ne!(d.debugger_pid(), Some(pid));
    d.set_breakpoint(&Location::line("prog.js", JS_CALL_LINE)).await;
    assert_eq!(paused(&d.start().await).location.line, JS_CALL_LINE);
    let new = d.debugger_pid().unwrap();
    let tree = firefox_pids_under(new);
    d.shutdown().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let left: Vec<u32> = tree.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "orphans after shutdown: {left:?}");
}

/// One run: the locations and `x` of each pause at the square body.
async fn square_run(d: &mut Firefox, s: &doppel_core::Subject) -> Vec<String> {
    assert!(matches!(d.load(s).await, Output::Finished { .. }));
    d.set_breakpoint(&Location::line("prog.js", JS_SQUARE_BODY)).await;
    let mut out = d.start().await;
    let mut trace = Vec::new();
    while let Output::Paused(st) = &out {
        let x = &st.variables.iter().find(|v| v.name == "x").unwrap().value.text;
        trace.push(format!("{} x={x} {:?}", st.location, functions(st)));
        out = d.exec(ExecAction::Resume).await;
    }
    trace.push(format!("{out:?}"));
    assert_eq!(d.program_output(), "probe 5 1\n", "output of this run only");
    d.reset().await;
    trace
}

#[tokio::test]
async fn warm_runs_reuse_the_browser_and_give_identical_traces() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    let mut d = Firefox::new(&cfg()).unwrap();
    assert!(d.capabilities().warm_reuse);
    let mut times = Vec::new();
    let mut pids = Vec::new();
    let mut traces = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        traces.push(square_run(&mut d, &s).await);
        pids.push(d.debugger_pid().unwrap());
        times.push(t.elapsed());
    }
    assert_eq!(traces[0].len(), 4, "{:?}", traces[0]);
    assert!(traces.iter().all(|t| *t == traces[0]), "{traces:#?}");
    assert!(pids.iter().all(|p| *p == pids[0]), "one browser: {pids:?}");
    let mut warm = times[1..].to_vec();
    warm.sort();
    eprintln!("firefox warm runs: {times:?}; median {:?}", warm[warm.len() / 2]);
    d.shutdown().await;
}

#[tokio::test]
async fn cold_runs_start_a_fresh_browser_each_time() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    let mut d = Firefox::new(&DebuggerConfig { warm: false, ..cfg() }).unwrap();
    assert!(!d.capabilities().warm_reuse);
    let mut traces = Vec::new();
    let mut times = Vec::new();
    for _ in 0..2 {
        let t = Instant::now();
        traces.push(square_run(&mut d, &s).await);
        times.push(t.elapsed());
        assert!(d.debugger_pid().is_none(), "reset shuts a cold browser down");
    }
    eprintln!("firefox cold runs: {times:?}");
    assert_eq!(traces[0], traces[1]);
}

#[tokio::test]
async fn a_run_abandoned_while_paused_leaves_the_browser_usable() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    let mut d = Firefox::new(&cfg()).unwrap();
    d.load(&s).await;
    d.set_breakpoint(&Location::line("prog.js", JS_SQUARE_BODY)).await;
    paused(&d.start().await);
    let pid = d.debugger_pid().unwrap();
    d.reset().await;
    d.load(&s).await;
    assert_eq!(d.debugger_pid(), Some(pid), "the same browser serves the next run");
    d.set_breakpoint(&Location::line("prog.js", JS_CALL_LINE)).await;
    let st = d.start().await;
    assert_eq!(
        paused(&st).location.line,
        JS_CALL_LINE,
        "the old run's breakpoint is gone"
    );
    let again = d.exec(ExecAction::Resume).await;
    let i = paused(&again)
        .variables
        .iter()
        .find(|v| v.name == "i")
        .map(|v| v.value.text.clone());
    assert_eq!(i.as_deref(), Some("1"));
    d.shutdown().await;
}

/// Firefox sometimes gives the functions of a large script the URL of the
/// page's first script (with their right line and column) when the thread
/// pauses at each script's first statement, as this backend's loader does
/// (campaign run 6972: `function floorShader(tri, pos, view)` in one run,
/// `function(tri, pos, view)` in the next). The header must come from the
/// source text in every run all the same.
#[tokio::test]
async fn a_function_is_rendered_from_its_own_script_whatever_url_firefox_names() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let mut src = String::from(
        "function run() {\n  var other = 2;\n  var shade = function (tri, pos) {\n    return tri + pos;\n  };\n  return shade(1, 2);\n}\nrun();\n",
    );
    // Large enough (16 KB) for the case to show.
    for i in 0..400 {
        src.push_str(&format!("function filler{i}(a) {{ return a + {i}; }}\n"));
    }
    let s = js_subject(dir.path(), "big.js", &src, &[("pre.js", "var pre = 1;\n")], &[]);
    let mut d = Firefox::new(&cfg()).unwrap();
    for run in 0..6 {
        d.load(&s).await;
        d.set_breakpoint(&Location::line("big.js", 6)).await;
        let st = d.start().await;
        let shade = paused(&st)
            .variables
            .iter()
            .find(|v| v.name == "shade")
            .map(|v| v.value.text.clone());
        assert_eq!(shade.as_deref(), Some("function (tri, pos)"), "run {run}");
        d.reset().await;
    }
    d.shutdown().await;
}

#[test]
fn a_missing_browser_is_not_installed() {
    let cfg = DebuggerConfig {
        executable: Some("/nonexistent/firefox-esr".into()),
        ..Default::default()
    };
    match Firefox::new(&cfg) {
        Err(BackendError::NotInstalled { name, hint }) => {
            assert_eq!(name, "firefox");
            assert!(hint.contains("apt-get install firefox-esr"), "{hint}");
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("created a backend for a missing executable"),
    }
}

#[tokio::test]
async fn a_browser_that_stops_answering_times_out_and_is_replaced() {
    let _one = ONE_AT_A_TIME.lock().await;
    let timeout = Duration::from_secs(4);
    let mut d = Firefox::new(&DebuggerConfig {
        action_timeout: timeout,
        ..cfg()
    })
    .unwrap();
    frozen_debugger_times_out_and_is_replaced(&mut d, Firefox::debugger_pid, timeout).await;
}
