//! The symbolic shadow end to end with z3: for every symbolic branch of a C
//! program in user code, the path prefix plus the negated branch goes to
//! `z3 -smt2 -in`; each model, run concretely, must take the other direction
//! at that branch.

mod support;

use doppel_concolic::solver::{SatResult, Session};
use doppel_concolic::{BranchFilter, Inputs, Module, RunConfig, Symbolic};
use std::time::Duration;
use support::compile_c;

#[test]
fn negated_branches_solve_to_inputs_that_flip_them() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(format!("{}/tests/c/classify.c", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let wasm = compile_c(dir.path(), "classify.c", &source);
    let module = Module::decode(&std::fs::read(&wasm).unwrap()).unwrap();
    let config = RunConfig {
        inputs: Inputs {
            stdin: b"37\n".to_vec(),
            ..Default::default()
        },
        symbolic: Symbolic::ALL,
        branches: BranchFilter::Files(vec!["classify.c".into()]),
        ..Default::default()
    };
    let run = doppel_concolic::run(&module, &config);
    assert_eq!(run.stdout, b"37 is medium, 1 mod 4\ncount=1 sum=37\n");
    let mut arena = run.arena.clone();
    let mut session = Session::z3().expect("z3 (Debian package z3) must be installed");
    let all_vars: Vec<_> = (0..config.inputs.stdin.len() as u32)
        .map(|i| doppel_concolic::InputVar {
            source: doppel_concolic::InputSource::Stdin,
            index: i,
        })
        .collect();
    session.declare(&all_vars).unwrap();
    let mut asserted = 0;
    let (mut flipped, mut sat) = (0, 0);
    let mut seen = std::collections::HashSet::new();
    for b in run.branches.iter().filter(|b| b.constraint.is_some()) {
        let i = b.path_index.unwrap() as usize;
        // The prefix f = path[..i] is asserted once, incrementally.
        while asserted < i {
            session.assert(&arena, run.path[asserted].expr).unwrap();
            asserted += 1;
        }
        if !seen.insert((b.offset, b.taken)) {
            continue;
        }
        session.push().unwrap();
        let negated = arena.not(b.constraint.unwrap());
        session.assert(&arena, negated).unwrap();
        let answer = session.check(Duration::from_secs(5)).unwrap();
        if answer == SatResult::Sat {
            sat += 1;
            let model = session.model().unwrap();
            let inputs = config.inputs.with_values(&model);
            let rerun = doppel_concolic::run(
                &module,
                &RunConfig {
                    inputs: inputs.clone(),
                    ..config.clone()
                },
            );
            // Same prefix of user branches, then the other direction here.
            let here = rerun
                .branches
                .iter()
                .find(|r| r.offset == b.offset && r.path_index.map(|p| p as usize) == Some(i));
            match here {
                Some(r) if r.taken != b.taken => flipped += 1,
                other => panic!(
                    "model {:?} did not flip the branch at {:?}: {other:?}",
                    String::from_utf8_lossy(&inputs.stdin),
                    module.source_loc(b.offset)
                ),
            }
        }
        session.pop().unwrap();
    }
    // With the prefix (scanf saw a digit first, so n < 0 is out of reach and
    // two digits cannot exceed 1000), `n == 0`, `n < 10` and the switch can
    // be flipped.
    assert!(sat >= 3, "only {sat} satisfiable negations");
    assert_eq!(flipped, sat);
}
