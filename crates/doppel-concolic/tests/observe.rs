//! Observation points: predicates recorded as virtual branches
//! (`RunConfig::observe`) on a C program built with clang-16, checked
//! against concrete runs and solved with z3.

mod support;

use doppel_concolic::solver::{SatResult, Session};
use doppel_concolic::{BranchKind, BranchRecord, Inputs, Module, Observe, Predicate, Run, RunConfig, Symbolic, run};
use std::time::Duration;

const SOURCE: &str = include_str!("c/assign.c");

fn line_of(marker: &str) -> u32 {
    support::line_of(SOURCE, marker)
}

fn build() -> (tempfile::TempDir, Module) {
    support::build_c("assign.c", SOURCE)
}

fn observed(module: &Module, stdin: &[u8], symbolic: Symbolic, on: bool) -> Run {
    let config = RunConfig {
        inputs: Inputs {
            stdin: stdin.to_vec(),
            ..Default::default()
        },
        symbolic,
        observe: Observe {
            files: if on { vec!["assign.c".into()] } else { vec![] },
            returns: true,
            assignments: true,
            peers: 4,
            narrow: false,
            writes: false,
        },
        ..Default::default()
    };
    run(module, &config)
}

/// Predicate records at `line` of kind `p`.
fn at<'r>(module: &Module, r: &'r Run, line: u32, p: Predicate) -> Vec<&'r BranchRecord> {
    r.branches
        .iter()
        .filter(|b| b.kind == BranchKind::Predicate(p))
        .filter(|b| module.source_loc(b.offset).map(|l| l.line) == Some(line))
        .collect()
}

/// The virtual branches of a run (the default filter also records libc's
/// symbolic branches in symbolic runs only).
fn sequence(r: &Run) -> Vec<(u32, BranchKind, u32)> {
    r.branches
        .iter()
        .filter(|b| matches!(b.kind, BranchKind::Predicate(_)))
        .map(|b| (b.offset, b.kind, b.taken))
        .collect()
}

#[test]
fn call_results_are_observed_by_sign_and_zero() {
    let (_dir, module) = build();
    let call = line_of("CALL");
    for (input, negative, zero) in [(&b"1 3\n"[..], 1, 0), (b"1 5\n", 0, 1), (b"1 9\n", 0, 0)] {
        let r = observed(&module, input, Symbolic::ALL, true);
        let neg = at(&module, &r, call, Predicate::Negative);
        let z = at(&module, &r, call, Predicate::Zero);
        assert_eq!(neg.len(), 1, "{:?}", String::from_utf8_lossy(input));
        assert_eq!(z.len(), 1);
        assert_eq!((neg[0].taken, z[0].taken), (negative, zero));
        // Both depend on the input byte of b: symbolic, in the path condition.
        assert!(neg[0].path_index.is_some() && z[0].path_index.is_some());
    }
}

#[test]
fn assignments_compare_the_stored_value_with_variables_in_use() {
    let (_dir, module) = build();
    let assign = line_of("ASSIGN");
    let input = b"3 7\n";
    let r = observed(&module, input, Symbolic::ALL, true);
    let eq = at(&module, &r, assign, Predicate::Equal);
    assert!(!eq.is_empty(), "no x == y predicate at line {assign}");
    // c = 4 equals none of a = 3, b = 7, s = 10.
    assert!(eq.iter().all(|b| b.taken == 0));
    // Every constraint holds on the run's own input.
    for b in &r.branches {
        if let Some(c) = b.constraint {
            assert_eq!(r.arena.eval(c, &|v| input[v.index as usize]), 1);
        }
    }
    // Negating one gives an input on which the concrete run takes the
    // other direction at that virtual branch (here: a + 1 == b or == s).
    let mut arena = r.arena.clone();
    let mut flipped = 0;
    for b in eq.iter().filter(|b| b.path_index.is_some()) {
        let i = b.path_index.unwrap() as usize;
        let mut s = Session::z3().expect("z3 (Debian package z3) must be installed");
        // f up to the virtual branch (branch conditions: scanf's digit
        // checks keep the input's shape), then the negated predicate.
        for c in &r.path[..i] {
            if matches!(c.origin, doppel_concolic::ConstraintOrigin::Branch { .. }) {
                s.assert(&arena, c.expr).unwrap();
            }
        }
        let neg = arena.not(r.path[i].expr);
        s.assert(&arena, neg).unwrap();
        if s.check(Duration::from_secs(10)).unwrap() != SatResult::Sat {
            continue;
        }
        let model = s.model().unwrap();
        let t2 = Inputs {
            stdin: input.to_vec(),
            ..Default::default()
        }
        .with_values(&model)
        .stdin;
        let r2 = observed(&module, &t2, Symbolic::NONE, true);
        let again = at(&module, &r2, assign, Predicate::Equal);
        let k = eq.iter().position(|x| std::ptr::eq(*x, *b)).unwrap();
        if again.get(k).map(|x| x.taken) == Some(1) {
            flipped += 1;
        }
    }
    assert!(flipped > 0, "no x == y predicate could be flipped at line {assign}");
}

#[test]
fn concrete_and_symbolic_runs_record_the_same_virtual_branches() {
    let (_dir, module) = build();
    for input in [&b"3 7\n"[..], b"-4 5\n", b"12 13\n"] {
        let c = observed(&module, input, Symbolic::NONE, true);
        let s = observed(&module, input, Symbolic::ALL, true);
        assert_eq!(c.stdout, s.stdout);
        assert_eq!(sequence(&c), sequence(&s));
        assert!(c.branches.iter().any(|b| matches!(b.kind, BranchKind::Predicate(_))));
    }
}

#[test]
fn observation_is_off_by_default() {
    let (_dir, module) = build();
    let r = observed(&module, b"3 7\n", Symbolic::ALL, false);
    assert!(!r.branches.iter().any(|b| matches!(b.kind, BranchKind::Predicate(_))));
    assert_eq!(String::from_utf8_lossy(&r.stdout), "10 4 2\n");
}

const NARROW: &str = include_str!("c/narrow.c");

/// A run of `narrow.c` with `x == y` predicates, at 1- and 2-byte stores
/// when `narrow`.
fn narrow_run(module: &Module, stdin: &[u8], symbolic: Symbolic, narrow: bool) -> Run {
    let config = RunConfig {
        inputs: Inputs {
            stdin: stdin.to_vec(),
            ..Default::default()
        },
        symbolic,
        observe: Observe {
            files: vec!["narrow.c".into()],
            returns: false,
            assignments: true,
            peers: 4,
            narrow,
            writes: false,
        },
        ..Default::default()
    };
    run(module, &config)
}

#[test]
fn char_and_short_assignments_are_observed_with_narrow_stores() {
    let (_dir, module) = support::build_c("narrow.c", NARROW);
    let line = |m: &str| support::line_of(NARROW, m);
    let (chr, short) = (line("CHAR"), line("SHORT"));
    let input = b"a c 5 7\n";
    // Off: no predicate at either assignment (only 4/8-byte stores).
    let off = narrow_run(&module, input, Symbolic::ALL, false);
    assert!(at(&module, &off, chr, Predicate::Equal).is_empty());
    assert!(at(&module, &off, short, Predicate::Equal).is_empty());
    let r = narrow_run(&module, input, Symbolic::ALL, true);
    assert_eq!(String::from_utf8_lossy(&r.stdout), "a c b 5 7 10\n");
    // Concrete and symbolic runs record the same virtual branches.
    assert_eq!(
        sequence(&narrow_run(&module, input, Symbolic::NONE, true)),
        sequence(&r)
    );
    for l in [chr, short] {
        let eq = at(&module, &r, l, Predicate::Equal);
        assert!(!eq.is_empty(), "no x == y predicate at line {l}");
        // c = 'b' differs from a = 'a' and d = b = 'c'; s = 10 from x = 5.
        assert!(eq.iter().all(|b| b.taken == 0), "line {l}");
        assert!(eq.iter().all(|b| b.constraint.is_some()), "line {l}: input-dependent");
        // Negating each one and solving gives an input on which the
        // concrete run takes the predicate (c == d: a + 1 == b; s == x: x == 0).
        let mut arena = r.arena.clone();
        let mut flipped = 0;
        for (k, b) in eq.iter().enumerate() {
            let i = b.path_index.unwrap() as usize;
            let mut s = Session::z3().expect("z3 (Debian package z3) must be installed");
            for c in &r.path[..i] {
                if matches!(c.origin, doppel_concolic::ConstraintOrigin::Branch { .. }) {
                    s.assert(&arena, c.expr).unwrap();
                }
            }
            let neg = arena.not(r.path[i].expr);
            s.assert(&arena, neg).unwrap();
            if s.check(Duration::from_secs(10)).unwrap() != SatResult::Sat {
                continue;
            }
            let t2 = Inputs {
                stdin: input.to_vec(),
                ..Default::default()
            }
            .with_values(&s.model().unwrap())
            .stdin;
            let again = narrow_run(&module, &t2, Symbolic::NONE, true);
            if at(&module, &again, l, Predicate::Equal).get(k).map(|x| x.taken) == Some(1) {
                flipped += 1;
            }
        }
        assert!(flipped > 0, "no x == y predicate could be flipped at line {l}");
    }
}
