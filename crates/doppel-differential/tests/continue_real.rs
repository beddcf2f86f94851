//! Going on past `slide_vs_reject` with the real GDB and LLDB (lldb-dap-22),
//! issue 17 item 1: on the bundled `globals.c`, whose first six lines
//! (comment, include, blank line, global declarations) hold no code, GDB
//! slides a breakpoint there to the next line with code and LLDB leaves it
//! unverified. With the seed whose first breakpoint falls there, DBDB's stop
//! at the first divergence ends the run at action 0; with continuation the
//! run records a policy note, removes the breakpoint again, starts the
//! program and goes on; `doppel replay` (the library call) reproduces the
//! continued run.

mod common;

use doppel_core::{Action, Verdict};
use doppel_differential::campaign::{self, CampaignSpec};
use doppel_lang::c::{BuildCache, BuildRecipe};
use rand::{Rng, SeedableRng};
use std::path::PathBuf;

fn globals_c() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c/globals.c")
}

fn spec(continue_past_policies: bool) -> CampaignSpec {
    common::gdb_lldb_spec("continue-real", continue_past_policies)
}

/// The first seed whose first breakpoint line (the engine's first draw,
/// `random_range(1..=lines)` of the run's ChaCha8 generator) is one of
/// `globals.c`'s lines 1-6, which hold no code.
fn seed_drawing_a_line_without_code(lines: u32) -> u64 {
    (0..1000u64)
        .find(|&s| rand_chacha::ChaCha8Rng::seed_from_u64(s).random_range(1..=lines) <= 6)
        .expect("a seed among 1000")
}

#[tokio::test]
async fn gdb_and_lldb_go_on_past_slide_versus_reject_and_replay_reproduces_it() {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = BuildCache::new(cache_dir.path().to_path_buf());
    let recipe = BuildRecipe::parse("gcc -O0 -g").unwrap();
    let p = doppel_lang::prepare::prepare_one(&cache, &globals_c(), "globals.c", &recipe)
        .await
        .unwrap();
    assert!(p.error.is_none(), "{:?}", p.error);
    let seed = seed_drawing_a_line_without_code(p.subject.line_count);

    // DBDB: the run ends at its first action.
    let stop = spec(false);
    let mut dbg = campaign::create_debuggers(&stop).unwrap();
    let off = campaign::run_one(&stop, &p, seed, &mut dbg).await;
    let f = off.verdict.finding().unwrap_or_else(|| panic!("{:?}", off.verdict));
    assert_eq!(f.class.part("policy"), Some("slide_vs_reject"), "{}", f.class);
    assert_eq!(f.action_index, Some(0));
    assert_eq!(off.execution_actions(), 0);
    assert!(off.policy_notes().is_empty());

    // Continued: a note, the removal, the start, and actions after it.
    let go_on = spec(true);
    let on = campaign::run_one(&go_on, &p, seed, &mut dbg).await;
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    let notes = on.policy_notes();
    assert!(!notes.is_empty());
    assert_eq!(notes[0].class.part("policy"), Some("slide_vs_reject"));
    assert_eq!(notes[0].action_index, Some(0));
    let actions: Vec<&Action> = on.traces[0].actions().collect();
    let Action::SetBreakpoint { at } = actions[0] else {
        panic!("{:?}", actions[0]);
    };
    assert_eq!(*actions[1], Action::RemoveBreakpoint { at: at.clone() });
    assert!(
        on.execution_actions() >= 2,
        "started and executed at least one action: {} execution actions, verdict {:?}",
        on.execution_actions(),
        on.verdict
    );
    if let Verdict::Divergence(f) = &on.verdict {
        assert_ne!(f.class.part("policy"), Some("slide_vs_reject"), "{}", f.class);
        assert!(f.action_index.unwrap() > 1);
    }
    // `doppel show` and the HTML report's sample runs show the notes.
    let view = doppel_core::technique::Technique::view(&doppel_differential::technique::Differential, &on).unwrap();
    assert!(
        view.lines.iter().any(|l| l.starts_with("policy notes: ")),
        "{:?}",
        view.lines
    );
    assert!(
        view.tables[0].rows[0].cells[1].ends_with("(policy slide_vs_reject: continued)"),
        "{:?}",
        view.tables[0].rows[0].cells
    );
    // Both behaviours have their own run key (`--resume` never mixes them).
    assert_ne!(off.key, on.key);

    // The stored record replays the continued run: same verdict, removal included.
    let report = doppel_differential::replay::replay(&on, cache_dir.path(), 1)
        .await
        .unwrap();
    assert!(
        report.attempts.iter().all(|a| a.reproduces),
        "stored {}, replayed {:?}",
        report.stored,
        report.attempts.iter().map(|a| &a.got).collect::<Vec<_>>()
    );
}
