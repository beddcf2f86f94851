//! Going on past `return_lands_mid_line` with the real GDB and LLDB
//! (lldb-dap-22), issue 17 item 1: a `step over` at the closing brace of a
//! callee takes GDB on to the caller's next line, while LLDB stops back on
//! the call line, mid-statement (at the assignment of the returned value).
//! With continuation, LLDB alone takes one more `step over` (a realignment,
//! recorded in its trace only), both debuggers agree again, the divergence
//! is a policy note and the run goes on; without it the run ends there, as
//! in DBDB. Replays and reproducers issue the realignment too.

mod common;

use doppel_core::{Action, EventKind, Location, Verdict};
use doppel_differential::campaign::{self, CampaignSpec, Prepared};
use doppel_differential::scripted;

/// `return y;` is line 3, the closing brace line 4; `square` is called on
/// lines 7 and 9.
const PROGRAM: &str = "int square(int x) {
  int y = x * x;
  return y;
}

int main(void) {
  int a = square(3);
  int b = a + 1;
  int c = square(b);
  return c - 25;
}
";

fn spec(continue_past_policies: bool) -> CampaignSpec {
    common::gdb_lldb_spec("realign-real", continue_past_policies)
}

async fn prepared(dir: &std::path::Path) -> Prepared {
    common::prepared_c(dir, "square.c", PROGRAM).await
}

use common::over;

/// Indices of the traces holding a realignment, and the realignments.
fn realigned(traces: &[doppel_core::Trace]) -> Vec<(usize, Vec<(usize, Action)>)> {
    traces
        .iter()
        .enumerate()
        .map(|(i, t)| {
            (
                i,
                t.realignments()
                    .into_iter()
                    .map(|(j, a)| (j, a.clone()))
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, r)| !r.is_empty())
        .collect()
}

#[tokio::test]
async fn lldb_alone_steps_once_more_after_a_return_mid_line_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let p = prepared(dir.path()).await;
    let nt = |l: Option<u32>| p.node_type(l);
    // Break at `return y;`, start, step over to `}`, step over out of
    // square (the policy), then two more steps in main.
    let script = vec![
        Action::SetBreakpoint {
            at: Location::line("square.c", 3),
        },
        Action::Start,
        over(),
        over(),
        over(),
        over(),
    ];
    let stop = spec(false);
    let mut dbg = campaign::create_debuggers(&stop).unwrap();

    // DBDB: the run ends on the policy at action 3.
    let off = scripted::run(&mut dbg, &p.subject, &script, &stop.diff, &nt).await;
    let f = off.verdict.finding().unwrap_or_else(|| panic!("{:?}", off.verdict));
    assert_eq!(f.class.part("policy"), Some("return_lands_mid_line"), "{}", f.class);
    assert_eq!(f.action_index, Some(3));
    assert!(realigned(&off.traces).is_empty());

    // Continued: LLDB (the debugger back on line 7) alone steps once more,
    // the run goes on to the script's end in agreement.
    let go_on = spec(true);
    let on = scripted::run(&mut dbg, &p.subject, &script, &go_on.diff, &nt).await;
    assert!(
        matches!(on.verdict, Verdict::MaxActions { .. } | Verdict::ProgramFinished { .. }),
        "{:?}",
        on.verdict
    );
    let notes: Vec<_> = on.traces[0].policy_notes().collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].class.part("policy"), Some("return_lands_mid_line"));
    assert_eq!(notes[0].action_index, Some(3));
    let r = realigned(&on.traces);
    assert_eq!(r.len(), 1, "one debugger realigned: {r:?}");
    let (who, steps) = &r[0];
    assert_eq!(on.traces[*who].debugger.name, "lldb");
    assert_eq!(steps, &vec![(3, over())]);
    // Every trace has the same actions; the realignment is not one of them.
    for t in &on.traces {
        assert_eq!(t.actions().cloned().collect::<Vec<_>>(), script);
    }
    // After the realignment, both are paused on line 8, then 9, then (the
    // step over `square(b)` meets the breakpoint) on 3 again.
    let lines = |t: &doppel_core::Trace| -> Vec<u32> {
        t.outputs()
            .filter_map(|o| o.paused())
            .map(|s| s.location.line)
            .collect()
    };
    let gdb_lines = lines(&on.traces[1 - *who]);
    let lldb_lines = lines(&on.traces[*who]);
    assert_eq!(gdb_lines, vec![3, 4, 8, 9, 3], "gdb");
    assert_eq!(lldb_lines, vec![3, 4, 7, 8, 9, 3], "lldb: 7 then, realigned, 8");
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
}

#[tokio::test]
async fn a_generated_run_past_a_return_mid_line_replays_and_its_reproducer_realigns() {
    let dir = tempfile::tempdir().unwrap();
    let p = prepared(dir.path()).await;
    let go_on = spec(true);
    let mut dbg = campaign::create_debuggers(&go_on).unwrap();
    // The first seed whose run goes on past the policy by realigning.
    let mut found = None;
    for seed in 0..60 {
        let rec = campaign::run_one(&go_on, &p, seed, &mut dbg).await;
        if !realigned(&rec.traces).is_empty() {
            found = Some(rec);
            break;
        }
    }
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    let rec = found.expect("a seed among 60 whose run realigns after return_lands_mid_line");
    assert!(
        rec.policy_notes()
            .iter()
            .any(|n| n.class.part("policy") == Some("return_lands_mid_line")),
        "{:?}",
        rec.policy_notes()
    );
    // The trace table shows the realigned answer.
    let rows = doppel_core::report::side_by_side_rows(&rec);
    assert!(
        rows.iter()
            .any(|r| r.outputs.iter().any(|o| o.contains("realigned (step "))),
        "{rows:?}"
    );
    // The reproducer's LLDB command file steps once more where doppel did.
    let repro = doppel_debuggers::repro::build(&rec).unwrap();
    let lldb = &repro.files.iter().find(|(n, _)| n == "repro.lldb").unwrap().1;
    assert!(lldb.contains("# doppel realigned LLDB"), "{lldb}");
    let gdb = &repro.files.iter().find(|(n, _)| n == "repro.gdb").unwrap().1;
    assert!(!gdb.contains("# doppel realigned"), "{gdb}");
    // The stored record replays: same verdict, realignment included.
    let report = doppel_differential::replay::replay(&rec, dir.path(), 1).await.unwrap();
    assert!(
        report.attempts.iter().all(|a| a.reproduces),
        "stored {}, replayed {:?}",
        report.stored,
        report.attempts.iter().map(|a| &a.got).collect::<Vec<_>>()
    );
    let realignment_events = rec
        .traces
        .iter()
        .flat_map(|t| &t.events)
        .filter(|e| matches!(e.kind, EventKind::Realignment(_)))
        .count();
    assert!(realignment_events >= 1);
}
