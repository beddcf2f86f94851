//! LLDB 20+'s re-stop at a breakpoint a step ended on, against the real
//! lldb-dap, with and without `DebuggerConfig::absorb_breakpoint_restop`,
//! on the bundled `corpus/c/bitwise.c` (gcc -O0 -g).

mod common;

use common::*;
use doppel_core::{ExecAction, Location, Output, PauseReason, ProgramState};
use doppel_debuggers::backend::lldb::{Lldb, RESTOP_ABSORBED};
use doppel_debuggers::{Debugger, DebuggerConfig};
use std::time::Duration;

const BITWISE: &str = include_str!("../../../corpus/c/bitwise.c");
/// `flags |= 1u << 5;`, `flags ^= 0xFFu;` (the operator at column 11),
/// the call of `popcount`, and the loop body `n += v & 1u;`.
const LINE_16: u32 = 16;
const LINE_17: u32 = 17;
const CALL: u32 = 19;
const LOOP_BODY: u32 = 7;

fn cfg(absorb: bool) -> DebuggerConfig {
    DebuggerConfig {
        action_timeout: Duration::from_secs(15),
        absorb_breakpoint_restop: absorb,
        ..Default::default()
    }
}

fn paused(o: &Output) -> &ProgramState {
    o.paused().unwrap_or_else(|| panic!("expected a pause, got {o:?}"))
}

fn at(s: &ProgramState) -> (u32, Option<u32>, PauseReason) {
    (s.location.line, s.location.column, s.reason)
}

fn value(s: &ProgramState, name: &str) -> String {
    s.variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", s.variables))
        .value
        .text
        .clone()
}

fn absorbed(d: &mut Lldb) -> bool {
    d.take_transcript().iter().any(|m| m.text.starts_with(RESTOP_ABSORBED))
}

/// Breakpoints at 16 and 17, start (pause at 16), step in: the step ends at
/// 17:11, the address of the breakpoint at 17, and is reported as a step.
async fn step_onto_breakpoint(d: &mut Lldb, s: &doppel_core::Subject) {
    assert!(matches!(d.load(s).await, Output::Finished { .. }));
    for line in [LINE_16, LINE_17] {
        match d.set_breakpoint(&Location::line("bitwise.c", line)).await {
            Output::BreakpointSet { resolved: Some(r), .. } => assert_eq!(r.line, line),
            other => panic!("{other:?}"),
        }
    }
    let start = d.start().await;
    assert_eq!(at(paused(&start)), (LINE_16, Some(11), PauseReason::Breakpoint));
    let step = d.exec(ExecAction::StepIn).await;
    assert_eq!(at(paused(&step)), (LINE_17, Some(11), PauseReason::Step));
    d.take_transcript();
}

#[tokio::test]
async fn without_the_option_a_continue_after_a_step_onto_a_breakpoint_stops_there_again() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "bitwise.c", BITWISE);
    let mut d = Lldb::new(&cfg(false)).unwrap();
    step_onto_breakpoint(&mut d, &s).await;
    let again = d.exec(ExecAction::Resume).await;
    let st = paused(&again);
    assert_eq!(
        at(st),
        (LINE_17, Some(11), PauseReason::Breakpoint),
        "LLDB 20+ re-stops"
    );
    // It did not move: line 17 has not run yet.
    assert_eq!(value(st, "flags"), "40");
    assert!(!absorbed(&mut d));
    let end = d.exec(ExecAction::Resume).await;
    assert!(matches!(end, Output::Finished { exit_code: Some(0), .. }), "{end:?}");
    d.shutdown().await;
}

#[tokio::test]
async fn with_the_option_the_continue_moves_on_and_the_transcript_keeps_both_stops() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "bitwise.c", BITWISE);
    let mut d = Lldb::new(&cfg(true)).unwrap();
    step_onto_breakpoint(&mut d, &s).await;
    let end = d.exec(ExecAction::Resume).await;
    assert!(matches!(end, Output::Finished { exit_code: Some(0), .. }), "{end:?}");
    let raw = d.take_transcript();
    let continues = raw
        .iter()
        .filter(|m| m.dir == "->" && m.text.contains("\"continue\""))
        .count();
    assert_eq!(continues, 2, "the continue was sent twice");
    assert!(raw.iter().any(|m| m.text.starts_with(RESTOP_ABSORBED)));
    let stops = raw
        .iter()
        .filter(|m| m.dir == "<-" && m.text.contains("\"stopped\""))
        .count();
    assert_eq!(stops, 1, "the re-stop stays in the transcript");
    d.shutdown().await;
}

#[tokio::test]
async fn with_the_option_a_step_onto_a_breakpoint_steps_on_and_a_later_hit_in_a_loop_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "bitwise.c", BITWISE);
    let mut d = Lldb::new(&cfg(true)).unwrap();

    // A step (not a continue) after the step onto the breakpoint: the step
    // is sent again and goes to line 18.
    step_onto_breakpoint(&mut d, &s).await;
    let next = d.exec(ExecAction::StepOver).await;
    let st = paused(&next);
    assert_eq!((st.location.line, st.reason), (18, PauseReason::Step), "{next:?}");
    assert!(absorbed(&mut d));
    d.reset().await;

    // In popcount's loop: a step over ends on the loop body's breakpoint
    // (v = 215); the continue's re-stop there is absorbed, and the
    // continue then stops at the same pc in the same frame one iteration
    // later (v = 107), a real hit, which is reported.
    assert!(matches!(d.load(&s).await, Output::Finished { .. }));
    for line in [CALL, LOOP_BODY] {
        assert!(matches!(
            d.set_breakpoint(&Location::line("bitwise.c", line)).await,
            Output::BreakpointSet { resolved: Some(_), .. }
        ));
    }
    assert_eq!(paused(&d.start().await).location.line, CALL);
    assert_eq!(paused(&d.exec(ExecAction::StepIn).await).location.line, 5);
    assert_eq!(paused(&d.exec(ExecAction::StepOver).await).location.line, 6);
    let onto = d.exec(ExecAction::StepOver).await;
    let st = paused(&onto);
    assert_eq!((st.location.line, st.reason), (LOOP_BODY, PauseReason::Step));
    assert_eq!(value(st, "v"), "215");
    d.take_transcript();
    let hit = d.exec(ExecAction::Resume).await;
    let st = paused(&hit);
    assert_eq!((st.location.line, st.reason), (LOOP_BODY, PauseReason::Breakpoint));
    assert_eq!(value(st, "v"), "107", "one iteration later, not the re-stop");
    assert!(absorbed(&mut d));
    // That pause was a hit: the next continue is not sent twice.
    let third = d.exec(ExecAction::Resume).await;
    let st = paused(&third);
    assert_eq!((st.location.line, st.reason), (LOOP_BODY, PauseReason::Breakpoint));
    assert_eq!(value(st, "v"), "53");
    assert!(!absorbed(&mut d));
    d.shutdown().await;
}
