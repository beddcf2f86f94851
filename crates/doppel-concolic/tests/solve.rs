//! The symbolic shadow end to end with z3: for every symbolic branch of a C
//! program in user code, the path prefix plus the negated branch goes to
//! `z3 -smt2 -in`; each model, run concretely, must take the other direction
//! at that branch.

mod support;

use doppel_concolic::solver::{SatResult, Session, Solver, SolverError, Z3Process};
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
    // scanf's digit lookups (musl __intscan's table) are selects, not pinned digits.
    let selects = (1..run.arena.len() as u32)
        .filter(|&i| {
            matches!(
                run.arena.get(doppel_concolic::ExprId(i)),
                doppel_concolic::Expr::Select { .. }
            )
        })
        .count();
    assert!(selects > 0, "no table select in the path condition");
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

#[test]
fn a_missing_crashing_or_silent_solver_is_a_clear_error() {
    match Z3Process::with_program("/nonexistent/z3") {
        Err(SolverError::Missing { program, .. }) => assert_eq!(program, "/nonexistent/z3"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("started a missing program"),
    }
    // `false` exits at once: the next check finds the pipe closed.
    match Z3Process::with_program("false") {
        Err(SolverError::Crashed(_)) => {}
        Err(e) => panic!("{e}"),
        Ok(mut z) => assert!(matches!(
            z.check(Duration::from_millis(200)),
            Err(SolverError::Crashed(_))
        )),
    }
    // A solver that never answers is killed after its timeout plus grace.
    let dir = tempfile::tempdir().unwrap();
    let silent = dir.path().join("silent-solver");
    std::fs::write(&silent, "#!/bin/sh\nexec sleep 600\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&silent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut z = Z3Process::with_program(silent.to_str().unwrap()).unwrap();
    z.grace = Duration::from_millis(100);
    let start = std::time::Instant::now();
    assert!(matches!(
        z.check(Duration::from_millis(200)),
        Err(SolverError::Timeout(_))
    ));
    assert!(start.elapsed() < Duration::from_secs(5));
    // One that closes its output but lives on is a crash, not a hang.
    let closing = dir.path().join("closing-solver");
    std::fs::write(&closing, "#!/bin/sh\nexec cat > /dev/null\n").unwrap();
    std::fs::set_permissions(&closing, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut z = Z3Process::with_program(closing.to_str().unwrap()).unwrap();
    assert!(matches!(
        z.check(Duration::from_millis(200)),
        Err(SolverError::Crashed(_))
    ));
}

#[test]
fn z3_answers_unsat_and_models_through_the_session() {
    use doppel_concolic::expr::{BinOp, CmpOp};
    let mut a = doppel_concolic::ExprArena::new();
    let x = a.var(doppel_concolic::InputVar {
        source: doppel_concolic::InputSource::Stdin,
        index: 0,
    });
    let y = a.var(doppel_concolic::InputVar {
        source: doppel_concolic::InputSource::Arg(0),
        index: 2,
    });
    let sum = a.bin(BinOp::Add, x, y);
    let k = a.constant(8, 200);
    let eq = a.cmp(CmpOp::Eq, sum, k);
    let ten = a.constant(8, 10);
    let lt = a.cmp(CmpOp::Ult, x, ten);
    let mut s = Session::z3().unwrap();
    s.assert(&a, eq).unwrap();
    s.assert(&a, lt).unwrap();
    assert_eq!(s.check(Duration::from_secs(5)).unwrap(), SatResult::Sat);
    let model = s.model().unwrap();
    let get = |n: &str| model.iter().find(|(v, _)| v.name() == n).unwrap().1;
    assert_eq!(get("stdin_0").wrapping_add(get("arg0_2")), 200);
    assert!(get("stdin_0") < 10);
    s.push().unwrap();
    let twenty = a.constant(8, 20);
    let big = a.cmp(CmpOp::Ult, twenty, x);
    s.assert(&a, big).unwrap();
    assert_eq!(s.check(Duration::from_secs(5)).unwrap(), SatResult::Unsat);
    s.pop().unwrap();
    assert_eq!(s.check(Duration::from_secs(5)).unwrap(), SatResult::Sat);
    // Two arenas feed one solver through prefixed writers.
    let mut b = doppel_concolic::ExprArena::new();
    let xb = b.var(doppel_concolic::InputVar {
        source: doppel_concolic::InputSource::Stdin,
        index: 0,
    });
    let sb = b.bin(BinOp::Mul, xb, xb);
    let nine = b.constant(8, 9);
    let eb = b.cmp(CmpOp::Eq, sb, nine);
    let (mut wa, mut wb) = (
        doppel_concolic::smt::SmtWriter::with_prefix("p"),
        doppel_concolic::smt::SmtWriter::with_prefix("q"),
    );
    let mut z = Z3Process::new().unwrap();
    let mut decls = String::new();
    for v in a.vars(eq) {
        wa.declare(v, &mut decls);
        wb.assume_declared(v);
    }
    z.send(&decls).unwrap();
    z.send(&wa.assert(&a, eq)).unwrap();
    z.send(&wa.assert(&a, lt)).unwrap();
    z.send(&wb.assert(&b, eb)).unwrap();
    assert_eq!(z.check(Duration::from_secs(5)).unwrap(), SatResult::Sat);
    let v = z.values(&["stdin_0".to_string()]).unwrap()[0].1;
    assert!(v == 3 || v == 253 || v * v % 256 == 9, "{v}");
    let script = doppel_concolic::smt::script(&a, &[eq, lt]);
    assert!(script.contains("(declare-fun stdin_0 () (_ BitVec 8))") && script.ends_with("(check-sat)\n"));
}
