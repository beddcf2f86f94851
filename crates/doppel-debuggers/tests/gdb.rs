//! The GDB backend against real gdb and gcc -O0 -g programs.

mod common;

use common::*;
use doppel_core::{ExecAction, FailureKind, Location, Output, PauseReason, VariableKind};
use doppel_debuggers::backend::gdb::Gdb;
use doppel_debuggers::{BackendError, Debugger, DebuggerConfig};
use std::time::{Duration, Instant};

fn cfg() -> DebuggerConfig {
    DebuggerConfig {
        action_timeout: Duration::from_secs(10),
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
    let mut g = Gdb::new(&cfg()).unwrap();
    assert!(g.info().version.contains("gdb"), "{:?}", g.info());
    assert!(matches!(g.load(&s).await, Output::Finished { .. }));

    let bp = g.set_breakpoint(&Location::line("prog.c", COMMENT_LINE)).await;
    match &bp {
        Output::BreakpointSet { resolved: Some(r), .. } => assert_eq!((r.file.as_str(), r.line), ("prog.c", CALL_LINE)),
        other => panic!("{other:?}"),
    }
    let far = g.set_breakpoint(&Location::line("prog.c", 500)).await;
    assert!(
        matches!(
            far,
            Output::BreakpointSet {
                resolved: None,
                message: Some(_),
                ..
            }
        ),
        "{far:?}"
    );
    assert!(matches!(
        g.remove_breakpoint(&Location::line("prog.c", 500)).await,
        Output::BreakpointRemoved { ok: true, .. }
    ));

    let start = g.start().await;
    let st = paused(&start);
    assert_eq!(st.location.line, CALL_LINE);
    assert_eq!(st.reason, PauseReason::Breakpoint);
    assert_eq!(
        st.call_stack.iter().map(|f| f.function.as_str()).collect::<Vec<_>>(),
        ["main"]
    );
    let p = st.variables.iter().find(|v| v.name == "p").expect("struct local p");
    assert_eq!(p.type_name.as_deref(), Some("struct point"));
    assert_eq!(
        p.value
            .children
            .iter()
            .map(|c| (c.name.as_str(), c.value.text.as_str()))
            .collect::<Vec<_>>(),
        [("x", "1"), ("y", "2")]
    );
    assert!(st.variables.iter().any(|v| v.name == "c" && v.value.text == "97 'a'"));

    let inn = g.exec(ExecAction::StepIn).await;
    let st = paused(&inn);
    assert_eq!(st.location.line, SQUARE_BODY);
    assert_eq!(
        st.call_stack.iter().map(|f| f.function.as_str()).collect::<Vec<_>>(),
        ["square", "main"]
    );
    let x = st.variables.iter().find(|v| v.name == "x").unwrap();
    assert_eq!(x.kind, VariableKind::Argument);
    assert_eq!(x.type_name.as_deref(), Some("int"));

    let out = g.exec(ExecAction::StepOut).await;
    assert_eq!(paused(&out).location.line, CALL_LINE);
    // The step out reports what square(x) returned: x * x.
    let x: i64 = x.value.text.parse().unwrap();
    let ret = paused(&out)
        .return_value
        .as_ref()
        .expect("a return value after step out");
    assert_eq!(ret.value.text, (x * x).to_string(), "{ret:?}");
    assert!(paused(&out).variables.iter().all(|v| !v.name.contains("Return")));
    let over = g.exec(ExecAction::StepOver).await;
    assert_eq!(paused(&over).call_stack[0].function, "main");

    assert!(matches!(
        g.remove_breakpoint(&Location::line("prog.c", COMMENT_LINE)).await,
        Output::BreakpointRemoved { ok: true, .. }
    ));
    // finish in main: GDB refuses and the program stays where it is.
    let before = paused(&over).location.clone();
    let refused = g.exec(ExecAction::StepOut).await;
    assert_eq!(paused(&refused).location, before);
    let end = g.exec(ExecAction::Resume).await;
    assert_eq!(
        end,
        Output::Finished {
            exit_code: Some(3),
            signal: None
        }
    );
    assert_eq!(g.program_output(), "probe 5 1 a\n");
    let t = g.take_transcript();
    assert!(t.iter().any(|m| m.dir == "->" && m.text.contains("-exec-run")));
    assert!(t.iter().any(|m| m.dir == "<-" && m.text.contains("exited")));
    g.reset().await;
    g.shutdown().await;
}

#[tokio::test]
async fn warm_reuse_runs_two_programs_independently() {
    let dir = tempfile::tempdir().unwrap();
    let a = compile(dir.path(), "prog.c", PROG);
    let b = compile(dir.path(), "segv.c", SEGV);
    let mut g = Gdb::new(&cfg()).unwrap();
    g.load(&a).await;
    g.set_breakpoint(&Location::line("prog.c", SQUARE_BODY)).await;
    assert_eq!(paused(&g.start().await).location.line, SQUARE_BODY);
    let pid = g.debugger_pid().unwrap();
    g.reset().await;
    // Second run, same gdb: the old breakpoint must be gone.
    g.load(&b).await;
    assert_eq!(g.debugger_pid(), Some(pid), "warm reuse keeps the gdb process");
    let st = g.start().await;
    let st = paused(&st);
    assert_eq!(st.signal.as_deref(), Some("SIGSEGV"));
    assert_eq!(st.reason, PauseReason::Signal);
    assert_eq!(st.location.line, 5);
    let end = g.exec(ExecAction::Resume).await;
    assert_eq!(
        end,
        Output::Finished {
            exit_code: None,
            signal: Some("SIGSEGV".into())
        }
    );
    g.shutdown().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!alive(pid));
}

#[tokio::test]
async fn a_hanging_program_times_out_and_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "loop.c", LOOP);
    let mut g = Gdb::new(&DebuggerConfig {
        action_timeout: Duration::from_secs(2),
        ..Default::default()
    })
    .unwrap();
    g.load(&s).await;
    let pid = g.debugger_pid().unwrap();
    let t = Instant::now();
    let out = g.start().await;
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
    assert!(t.elapsed() < Duration::from_secs(6));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!alive(pid), "gdb killed");
    let leftovers = doppel_core::process::descendants(std::process::id());
    let names: Vec<String> = leftovers
        .iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok())
        .collect();
    // Other tests run gdb in parallel; only this test runs `loop`.
    assert!(!names.iter().any(|n| n.trim() == "loop"), "orphans: {names:?}");
    // The next run starts a fresh gdb.
    assert!(matches!(g.load(&s).await, Output::Finished { .. }));
    assert_ne!(g.debugger_pid(), Some(pid));
    g.shutdown().await;
}

#[tokio::test]
async fn a_killed_gdb_is_a_crash_and_the_next_load_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "prog.c", PROG);
    let mut g = Gdb::new(&cfg()).unwrap();
    g.load(&s).await;
    g.set_breakpoint(&Location::line("prog.c", CALL_LINE)).await;
    paused(&g.start().await);
    let pid = g.debugger_pid().unwrap();
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let out = g.exec(ExecAction::StepIn).await;
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
    g.reset().await;
    assert!(matches!(g.load(&s).await, Output::Finished { .. }));
    g.set_breakpoint(&Location::line("prog.c", CALL_LINE)).await;
    assert_eq!(paused(&g.start().await).location.line, CALL_LINE);
    g.shutdown().await;
}

#[test]
fn a_missing_gdb_is_not_installed() {
    let cfg = DebuggerConfig {
        executable: Some("/nonexistent/gdb".into()),
        ..Default::default()
    };
    match Gdb::new(&cfg) {
        Err(BackendError::NotInstalled { name, hint }) => {
            assert_eq!(name, "gdb");
            assert!(hint.contains("apt-get install gdb"));
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("created a backend for a missing executable"),
    }
}
