//! Going on past findings with the real GDB and LLDB (lldb-dap-22), issue
//! 17 item 1 (more classes per run): GDB lists a function's `static` local
//! among the locals, LLDB does not, so at every pause in `henry` the
//! variables differ while both stand on the same line. With
//! `findings_per_run` above 1 the run notes that finding once (later pauses
//! in `henry` repeat it), goes on, and the finding is a run record of its
//! own that ends there and replays there; with 1 the run ends on it, as in
//! DBDB. And LLDB stopping again at the breakpoint a step over starts from
//! (a loop's every pass): realigned by one more step over in LLDB, noted
//! once, a repeat on the next pass.

mod common;

use doppel_core::{Action, Location, Verdict};
use doppel_differential::campaign::{self, CampaignSpec, Prepared};
use doppel_differential::{going_on, reduce, scripted};

/// `fred = fred + n;` is line 5, `return fred;` line 6; `henry` is called
/// on line 10.
const PROGRAM: &str = "#include <stdio.h>

int henry(int n) {
  static int fred = 4567;
  fred = fred + n;
  return fred;
}

int main(void) {
  int a = henry(1);
  int c = 0;
  do
    c = c + 1;
  while (c < 3);
  printf(\"%d %d\\n\", a, c);
  return 0;
}
";

fn spec(findings_per_run: usize) -> CampaignSpec {
    let mut s = common::gdb_lldb_spec("going-on-real", true);
    s.diff.findings_per_run = findings_per_run;
    s
}

async fn prepared(dir: &std::path::Path) -> Prepared {
    common::prepared_c(dir, "henry.c", PROGRAM).await
}

use common::over;

/// The finding notes of a trace: (action index, class, repeat).
fn notes(t: &doppel_core::Trace) -> Vec<(Option<usize>, String, bool)> {
    t.findings_gone_past()
        .map(|(f, repeat)| (f.action_index, f.class.to_string(), repeat))
        .collect()
}

#[tokio::test]
async fn a_static_local_only_gdb_lists_is_noted_once_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let p = prepared(dir.path()).await;
    let nt = |l: Option<u32>| p.node_type(l);
    // Break in henry, start (paused on line 5), step over to line 6 (the
    // same variable differs again), then on through the return to main.
    let script = vec![
        Action::SetBreakpoint {
            at: Location::line("henry.c", 5),
        },
        Action::Start,
        over(),
        over(),
        over(),
        over(),
        over(),
        over(),
        over(),
        over(),
        over(),
        over(),
    ];
    let mut dbg = campaign::create_debuggers(&spec(1)).unwrap();

    // DBDB: the run ends on the variables difference at start (action 1).
    let stop = scripted::run(&mut dbg, &p.subject, &script, &spec(1).diff, &nt).await;
    let f = stop.verdict.finding().unwrap_or_else(|| panic!("{:?}", stop.verdict));
    assert_eq!(f.class.part("divergence"), Some("variables"), "{}", f.class);
    assert_eq!(f.action_index, Some(1));
    assert!(f.detail.contains("fred"), "{}", f.detail);

    // Going on: noted once at start, repeats on lines 6 and 7, the return
    // to main realigned (a policy), and the script runs to its end.
    let on = scripted::run(&mut dbg, &p.subject, &script, &spec(5).diff, &nt).await;
    assert!(matches!(on.verdict, Verdict::MaxActions { .. }), "{:?}", on.verdict);
    let gdb = notes(&on.traces[0]);
    assert_eq!(gdb, notes(&on.traces[1]), "the same notes in every trace");
    let new: Vec<_> = gdb.iter().filter(|n| !n.2).collect();
    assert_eq!(new.len(), 1, "{gdb:?}");
    assert_eq!(new[0].0, Some(1));
    assert!(new[0].1.starts_with("variables|start"), "{gdb:?}");
    let repeats: Vec<Option<usize>> = gdb.iter().filter(|n| n.2).map(|n| n.0).collect();
    assert_eq!(repeats, vec![Some(2), Some(3)], "fred differs again on lines 6 and 7");
    // Past the loop to line 15: every pause agreed on its line.
    let last = on.traces[0]
        .outputs()
        .last()
        .and_then(|o| o.paused())
        .map(|s| s.location.line);
    assert_eq!(last, Some(15));
    // Without continuation past policies, DBDB throughout: it ends there.
    let mut dbdb = spec(5);
    dbdb.diff.continue_past_policies = false;
    let off = scripted::run(&mut dbg, &p.subject, &script, &dbdb.diff, &nt).await;
    assert_eq!(
        off.verdict.finding().and_then(|f| f.action_index),
        Some(1),
        "{:?}",
        off.verdict
    );
    // The same limit with the script cut at the finding: it ends there.
    let cut = scripted::run(&mut dbg, &p.subject, &script[..2], &spec(5).diff, &nt).await;
    assert_eq!(
        cut.verdict.finding().map(|f| &f.class),
        Some(&f.class),
        "{:?}",
        cut.verdict
    );
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
}

#[tokio::test]
async fn a_finding_a_generated_run_went_on_past_is_a_run_of_its_own_that_replays() {
    let dir = tempfile::tempdir().unwrap();
    let p = prepared(dir.path()).await;
    let go_on = spec(5);
    let mut dbg = campaign::create_debuggers(&go_on).unwrap();
    // The first seed whose run notes a finding and goes on.
    let mut found = None;
    for seed in 0..40 {
        let rec = campaign::run_one(&go_on, &p, seed, &mut dbg).await;
        if !rec.finding_notes().is_empty() {
            found = Some(rec);
            break;
        }
    }
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    let rec = found.expect("a seed among 40 whose run goes on past a finding");
    let records = going_on::finding_records(&rec);
    assert_eq!(records.len(), rec.finding_notes().len());
    let first = &records[0];
    let f = first.verdict.finding().expect("a finding record is a divergence");
    assert_eq!(f, rec.finding_notes()[0]);
    assert!(first.key.ends_with("#finding1") && first.key.starts_with(&rec.key));
    assert_eq!(first.config["diff"]["findings_per_run"], 1);
    // `doppel show` lists the notes of the run.
    let lines = doppel_differential::technique::finding_note_lines(&rec);
    assert!(lines[0].starts_with("findings noted: "), "{lines:?}");
    // The record ends at its finding: its last action is the finding's.
    let (actions, class) = reduce::divergent_actions(first).unwrap();
    assert_eq!(Some(actions.len() - 1), f.action_index);
    assert_eq!(first.traces[0].actions().count(), actions.len());
    // Replayed from its seed with its own configuration, the run ends there
    // again; run as a script (reduction's test), too.
    let cache = tempfile::tempdir().unwrap();
    let report = doppel_differential::replay::replay(first, cache.path(), 1)
        .await
        .unwrap();
    assert!(report.attempts.iter().all(|a| a.reproduces), "{report:?}");
    let rrec = doppel_differential::record::DiffRecord::of(first).unwrap();
    let mut dbg = campaign::create_debuggers(&go_on).unwrap();
    let per_test = reduce::per_test_timeout(&rrec, actions.len());
    let out = reduce::try_script(&rrec, &p, &actions, &mut dbg, per_test)
        .await
        .unwrap()
        .unwrap();
    assert!(reduce::same_class(&out.verdict, &class), "{:?}", out.verdict);
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
}

/// `printf` is line 5, in a loop whose every pass meets its breakpoint.
const LOOP: &str = "#include <stdio.h>
int main(void) {
  int a = 1;
  do {
    printf(\"%d\\n\", a);
    a = a + 1;
  } while (a < 4);
  return 0;
}
";

#[tokio::test]
async fn a_step_lldb_ends_where_it_started_is_realigned_and_noted_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = common::prepared_c(dir.path(), "loop.c", LOOP).await;
    let nt = |l: Option<u32>| p.node_type(l);
    let mut script = vec![
        Action::SetBreakpoint {
            at: Location::line("loop.c", 5),
        },
        Action::Start,
    ];
    script.extend(std::iter::repeat_n(over(), 9));
    let mut dbg = campaign::create_debuggers(&spec(5)).unwrap();
    // Back on line 5 after a step over from line 7, LLDB stops there with
    // reason "step" (GDB: "breakpoint"); its next step over stops there
    // again at the breakpoint, while GDB goes on to line 6. LLDB alone takes
    // one more step over and the run goes on; on the next pass the same
    // places again are a repeat.
    let on = scripted::run(&mut dbg, &p.subject, &script, &spec(5).diff, &nt).await;
    assert!(matches!(on.verdict, Verdict::MaxActions { .. }), "{:?}", on.verdict);
    let (gdb, lldb) = (&on.traces[0], &on.traces[1]);
    assert_eq!(notes(gdb), notes(lldb));
    let n = notes(gdb);
    assert_eq!(n.len(), 2, "{n:?}");
    assert_eq!((n[0].0, n[0].2), (Some(5), false), "{n:?}");
    assert!(n[0].1.starts_with("pause_location|step_over"), "{n:?}");
    assert_eq!((n[1].0, n[1].2), (Some(8), true), "{n:?}");
    assert!(gdb.realignments().is_empty());
    let again: Vec<(usize, Action)> = lldb.realignments().into_iter().map(|(i, a)| (i, a.clone())).collect();
    assert_eq!(again, vec![(5, over()), (8, over())]);
    let lines = |t: &doppel_core::Trace| -> Vec<u32> {
        t.outputs()
            .filter_map(|o| o.paused())
            .map(|s| s.location.line)
            .collect()
    };
    assert_eq!(lines(gdb), vec![5, 6, 7, 5, 6, 7, 5, 6, 7, 8]);
    assert_eq!(
        lines(lldb),
        vec![5, 6, 7, 5, 5, 6, 7, 5, 5, 6, 7, 8],
        "the realigned answers included"
    );
    // With the end at the first finding, the run ends there.
    let stop = scripted::run(&mut dbg, &p.subject, &script, &spec(1).diff, &nt).await;
    let f = stop.verdict.finding().unwrap_or_else(|| panic!("{:?}", stop.verdict));
    assert_eq!(f.action_index, Some(5));
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
}
