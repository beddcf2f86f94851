//! Predicate switching (`RunConfig::switch`): one recorded branch of a C
//! program built with clang-16 takes the other direction, and the rest of
//! the run follows from there.

mod support;

use doppel_concolic::{BranchFilter, BranchKind, Inputs, Module, Run, RunConfig, Symbolic, run};

const SOURCE: &str = include_str!("c/switch.c");

fn line_of(marker: &str) -> u32 {
    support::line_of(SOURCE, marker)
}

fn build() -> (tempfile::TempDir, Module) {
    support::build_c("switch.c", SOURCE)
}

fn switched(module: &Module, stdin: &[u8], switch: Option<u32>, symbolic: Symbolic) -> Run {
    let config = RunConfig {
        inputs: Inputs {
            stdin: stdin.to_vec(),
            ..Default::default()
        },
        symbolic,
        branches: BranchFilter::Files(vec!["switch.c".into()]),
        switch,
        ..Default::default()
    };
    run(module, &config)
}

/// Indices of the run's records at `line`.
fn at_line(module: &Module, r: &Run, line: u32) -> Vec<usize> {
    (0..r.branches.len())
        .filter(|&i| module.source_loc(r.branches[i].offset).map(|l| l.line) == Some(line))
        .collect()
}

#[test]
fn the_switched_branch_takes_the_other_direction_and_the_run_follows() {
    let (_dir, module) = build();
    let plain = switched(&module, b"6\n", None, Symbolic::NONE);
    assert_eq!(plain.stdout, b"big\n15\n");
    assert!(!plain.switched);
    let big = at_line(&module, &plain, line_of("BIG"));
    assert_eq!(big.len(), 1, "one record at the BIG condition");
    let k = big[0];
    let r = switched(&module, b"6\n", Some(k as u32), Symbolic::NONE);
    assert!(r.switched);
    assert_eq!(r.stdout, b"small\n15\n");
    // Everything before the switched record is the plain run's; the
    // record holds the direction taken.
    assert_eq!(r.branches[..k], plain.branches[..k]);
    assert_eq!(r.branches[k].offset, plain.branches[k].offset);
    assert_eq!(r.branches[k].taken, plain.branches[k].taken ^ 1);
    assert!(matches!(
        r.branches[k].kind,
        BranchKind::If | BranchKind::BrIf | BranchKind::Select
    ));
}

#[test]
fn switching_a_loop_exit_runs_one_more_iteration() {
    let (_dir, module) = build();
    let plain = switched(&module, b"5\n", None, Symbolic::NONE);
    assert_eq!(plain.stdout, b"small\n10\n");
    let exits = at_line(&module, &plain, line_of("LOOP"));
    // The loop condition is checked n + 1 = 6 times.
    assert_eq!(exits.len(), 6, "{:?}", plain.branches);
    let last = *exits.last().unwrap();
    let r = switched(&module, b"5\n", Some(last as u32), Symbolic::NONE);
    assert!(r.switched);
    // i = 5 runs too (s = 15), then the next check exits.
    assert_eq!(r.stdout, b"big\n15\n");
    assert_eq!(at_line(&module, &r, line_of("LOOP")).len(), 7);
}

#[test]
fn a_switch_past_the_last_record_changes_nothing_and_a_switched_run_is_concrete() {
    let (_dir, module) = build();
    let plain = switched(&module, b"2\n", None, Symbolic::NONE);
    assert_eq!(plain.stdout, b"small\n1\n");
    let beyond = switched(&module, b"2\n", Some(plain.branches.len() as u32), Symbolic::NONE);
    assert!(!beyond.switched);
    assert_eq!(beyond.stdout, plain.stdout);
    assert_eq!(beyond.branches, plain.branches);
    // Symbolic stdin is ignored under a switch: no path condition.
    let symbolic = switched(&module, b"2\n", Some(plain.branches.len() as u32), Symbolic::ALL);
    assert!(symbolic.path.is_empty());
    assert!(symbolic.branches.iter().all(|b| b.constraint.is_none()));
    assert_eq!(symbolic.stdout, plain.stdout);
    // Without a switch the same configuration is symbolic.
    assert!(!switched(&module, b"2\n", None, Symbolic::ALL).path.is_empty());
}
