//! The LLDB backend against the real lldb-dap (lldb-dap-22 in CI, server
//! mode; lldb-dap-19 through a spare adapter) and gcc -O0 -g programs.

mod common;

use common::*;
use doppel_core::{ExecAction, FailureKind, Location, Output, PauseReason, VariableKind};
use doppel_debuggers::backend::lldb::{Lldb, MAX_SERVERS};
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

#[tokio::test]
async fn a_full_session_slides_steps_and_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "prog.c", PROG);
    let mut d = Lldb::new(&cfg()).unwrap();
    assert!(d.info().version.contains("lldb"), "{:?}", d.info());
    assert!(matches!(d.load(&s).await, Output::Finished { .. }));

    match d.set_breakpoint(&Location::line("prog.c", COMMENT_LINE)).await {
        Output::BreakpointSet { resolved: Some(r), .. } => {
            assert_eq!((r.file.as_str(), r.line), ("prog.c", CALL_LINE));
            assert!(r.column.is_some(), "lldb-dap reports columns");
        }
        other => panic!("{other:?}"),
    }
    let far = d.set_breakpoint(&Location::line("prog.c", 500)).await;
    assert!(matches!(far, Output::BreakpointSet { resolved: None, .. }), "{far:?}");
    assert!(matches!(
        d.remove_breakpoint(&Location::line("prog.c", 500)).await,
        Output::BreakpointRemoved { ok: true, .. }
    ));
    assert!(matches!(
        d.remove_breakpoint(&Location::line("prog.c", 7)).await,
        Output::BreakpointRemoved { ok: false, .. }
    ));

    let start = d.start().await;
    let st = paused(&start);
    assert_eq!(st.location.line, CALL_LINE);
    assert_eq!(st.reason, PauseReason::Breakpoint);
    assert_eq!(st.call_stack[0].function, "main");
    let p = st.variables.iter().find(|v| v.name == "p").expect("struct local p");
    assert_eq!(
        p.value
            .children
            .iter()
            .map(|c| (c.name.as_str(), c.value.text.as_str()))
            .collect::<Vec<_>>(),
        [("x", "1"), ("y", "2")]
    );
    let name = st.variables.iter().find(|v| v.name == "name").unwrap();
    assert!(name.value.text.contains("\"probe\""), "{name:?}");
    assert!(name.value.children.is_empty(), "strings are not expanded");

    let inn = d.exec(ExecAction::StepIn).await;
    let st = paused(&inn);
    assert_eq!(st.location.line, SQUARE_BODY);
    assert_eq!(
        &st.call_stack[..2]
            .iter()
            .map(|f| f.function.as_str())
            .collect::<Vec<_>>(),
        &["square", "main"]
    );
    let x = st.variables.iter().find(|v| v.name == "x").unwrap();
    assert_eq!(x.kind, VariableKind::Argument);
    assert_eq!(
        st.variables.iter().find(|v| v.name == "y").unwrap().kind,
        VariableKind::Local
    );

    let out = d.exec(ExecAction::StepOut).await;
    assert_eq!(paused(&out).location.line, CALL_LINE);
    // The step out reports what square(x) returned: x * x.
    let x: i64 = x.value.text.parse().unwrap();
    let ret = paused(&out)
        .return_value
        .as_ref()
        .expect("a return value after step out");
    assert_eq!(ret.value.text, (x * x).to_string(), "{ret:?}");
    assert!(paused(&out).variables.iter().all(|v| !v.name.contains("Return")));
    let over = d.exec(ExecAction::StepOver).await;
    assert_eq!(paused(&over).call_stack[0].function, "main");
    assert!(matches!(
        d.remove_breakpoint(&Location::line("prog.c", COMMENT_LINE)).await,
        Output::BreakpointRemoved { ok: true, .. }
    ));
    let end = d.exec(ExecAction::Resume).await;
    assert_eq!(
        end,
        Output::Finished {
            exit_code: Some(3),
            signal: None
        }
    );
    assert_eq!(d.program_output(), "probe 5 1 a\n");
    let t = d.take_transcript();
    assert!(t.iter().any(|m| m.dir == "->" && m.text.contains("configurationDone")));
    d.reset().await;
    d.shutdown().await;
}

#[tokio::test]
async fn two_runs_in_a_row_are_independent_and_crashes_are_signals() {
    let dir = tempfile::tempdir().unwrap();
    let a = compile(dir.path(), "prog.c", PROG);
    let b = compile(dir.path(), "segv.c", SEGV);
    let mut d = Lldb::new(&cfg()).unwrap();
    d.load(&a).await;
    d.set_breakpoint(&Location::line("prog.c", SQUARE_BODY)).await;
    assert_eq!(paused(&d.start().await).location.line, SQUARE_BODY);
    let first = d.debugger_pid();
    d.reset().await;
    d.load(&b).await;
    // lldb-dap 20 and later serve every run from one process (server mode).
    let major: u32 = d
        .info()
        .version
        .split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    assert_eq!(d.uses_server_mode(), major >= 20, "{:?}", d.info());
    if d.uses_server_mode() {
        // The first server is still in the pool, warm, whichever serves this run.
        assert!(d.server_pids().contains(&first.unwrap()), "the warm server was dropped");
        assert!(d.capabilities().warm_reuse);
    }
    let st = d.start().await;
    let st = paused(&st);
    assert_eq!(st.signal.as_deref(), Some("SIGSEGV"));
    assert_eq!(st.reason, PauseReason::Signal);
    assert_eq!(st.location.line, 5);
    let end = d.exec(ExecAction::Resume).await;
    assert!(matches!(end, Output::Finished { .. }), "{end:?}");
    assert!(d.program_output().contains("before"), "{:?}", d.program_output());
    d.reset().await;
    // After a reset nothing of the run is left below the adapter.
    if let Some(server) = d.debugger_pid() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let left: Vec<String> = doppel_core::process::descendants(server)
            .iter()
            .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok())
            .map(|n| n.trim().to_string())
            .collect();
        assert!(!left.iter().any(|n| n == "segv" || n == "prog"), "left: {left:?}");
    }
    d.shutdown().await;
}

#[tokio::test]
async fn a_hanging_program_times_out_and_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "loop_lldb.c", LOOP);
    let mut d = Lldb::new(&DebuggerConfig {
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
    assert!(t.elapsed() < Duration::from_secs(8));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!alive(pid));
    let names: Vec<String> = doppel_core::process::descendants(std::process::id())
        .iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok())
        .collect();
    assert!(!names.iter().any(|n| n.trim() == "loop_lldb"), "orphans: {names:?}");
    d.shutdown().await;
}

#[tokio::test]
async fn a_killed_adapter_is_a_crash_and_the_next_load_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "prog.c", PROG);
    let mut d = Lldb::new(&cfg()).unwrap();
    d.load(&s).await;
    d.set_breakpoint(&Location::line("prog.c", CALL_LINE)).await;
    paused(&d.start().await);
    let pid = d.debugger_pid().unwrap();
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
    d.set_breakpoint(&Location::line("prog.c", CALL_LINE)).await;
    assert_eq!(paused(&d.start().await).location.line, CALL_LINE);
    d.shutdown().await;
}

#[test]
fn a_missing_adapter_is_not_installed() {
    let cfg = DebuggerConfig {
        executable: Some("/nonexistent/lldb-dap-19".into()),
        ..Default::default()
    };
    match Lldb::new(&cfg) {
        Err(BackendError::NotInstalled { name, hint }) => {
            assert_eq!(name, "lldb");
            assert!(hint.contains("apt-get install lldb-22"), "{hint}");
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("created a backend for a missing executable"),
    }
}

#[tokio::test]
async fn one_warm_adapter_serves_many_runs() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "prog.c", PROG);
    let mut d = Lldb::new(&cfg()).unwrap();
    let mut pids = std::collections::BTreeSet::new();
    for run in 0..16 {
        assert!(matches!(d.load(&s).await, Output::Finished { .. }), "run {run}");
        d.set_breakpoint(&Location::line("prog.c", CALL_LINE)).await;
        if run % 2 == 1 {
            // A run that ends before the program starts (a divergence at a
            // breakpoint): lldb-dap 22's server died of SIGPIPE after such a
            // session when the client closed the connection too early.
            pids.insert(d.debugger_pid());
            d.reset().await;
            continue;
        }
        let st = d.start().await;
        assert_eq!(paused(&st).location.line, CALL_LINE, "run {run}: {st:?}");
        assert!(matches!(d.exec(ExecAction::StepIn).await.paused(), Some(p) if p.location.line == SQUARE_BODY));
        pids.insert(d.debugger_pid());
        d.reset().await;
    }
    if d.uses_server_mode() {
        // 16 runs served by a warm pool, not by a process per run.
        assert!(
            pids.len() <= MAX_SERVERS,
            "more adapter servers than the pool holds: {pids:?}"
        );
        assert!(d.server_pids().len() <= MAX_SERVERS);
    }
    d.shutdown().await;
}

/// Preloading (server mode): a hinted run is launched in the background and
/// adopted by its `load`, and behaves as a plain run; a wrong hint is
/// discarded and the run of the other program is launched as usual.
#[tokio::test]
async fn preloaded_runs_are_adopted_and_wrong_hints_are_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let a = compile(dir.path(), "prog.c", PROG);
    let other = tempfile::tempdir().unwrap();
    let b = compile(other.path(), "prog.c", PROG);
    let mut d = Lldb::new(&cfg()).unwrap();
    if !d.uses_server_mode() {
        // lldb-dap 19 and older: one launch per adapter, no preloading.
        assert!(
            d.capabilities()
                .notes
                .iter()
                .any(|n| n.contains("one launch per adapter"))
        );
        return;
    }
    // Run 1 hints run 2 (same program), run 2 hints b, run 3 loads a instead.
    let plan = [(&a, Some(&a)), (&a, Some(&b)), (&a, None), (&b, None)];
    let mut adopted = Vec::new();
    for (run, (subject, hint)) in plan.iter().enumerate() {
        if let Some(h) = hint {
            d.preload(h);
        }
        assert!(matches!(d.load(subject).await, Output::Finished { .. }), "run {run}");
        d.set_breakpoint(&Location::line("prog.c", CALL_LINE)).await;
        let st = d.start().await;
        assert_eq!(paused(&st).location.line, CALL_LINE, "run {run}: {st:?}");
        assert!(matches!(d.exec(ExecAction::StepIn).await.paused(), Some(p) if p.location.line == SQUARE_BODY));
        d.remove_breakpoint(&Location::line("prog.c", CALL_LINE)).await;
        assert_eq!(
            d.exec(ExecAction::Resume).await,
            Output::Finished {
                exit_code: Some(3),
                signal: None
            },
            "run {run}"
        );
        let t = d.take_transcript();
        adopted.push(t.iter().any(|m| m.text.contains("adopted the run launched ahead")));
        d.reset().await;
    }
    // Run 2 adopts the preload of a; run 3 loads a while b was launched
    // ahead (discarded); the hint b stays, so b is launched again after run
    // 3's load and run 4 adopts it.
    assert_eq!(adopted, [false, true, false, true]);
    assert!(d.server_pids().len() <= MAX_SERVERS);
    d.shutdown().await;
}
