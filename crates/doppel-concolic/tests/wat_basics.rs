//! Hand-written modules (WAT) exercising control flow, WASI stdio and the
//! symbolic shadow without any external tool.

use doppel_concolic::{BranchFilter, Inputs, Module, Outcome, RunConfig, Symbolic, Trap, run};

fn module(wat: &str) -> Module {
    Module::decode(&wat::parse_str(wat).expect("wat")).expect("decode")
}

/// Reads up to 16 bytes of stdin at 100, prints "Y\n" when the first byte is
/// 'a' (and the count is non-zero), "N\n" otherwise; exits with the count.
const CLASSIFY: &str = r#"
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 200) "Y\n")
  (data (i32.const 202) "N\n")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 100))
    (i32.store (i32.const 4) (i32.const 16))
    (drop (call $read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
    (i32.store (i32.const 16) (i32.const 202))
    (if (i32.and (i32.ne (i32.load (i32.const 8)) (i32.const 0))
                 (i32.eq (i32.load8_u (i32.const 100)) (i32.const 97)))
      (then (i32.store (i32.const 16) (i32.const 200))))
    (i32.store (i32.const 20) (i32.const 2))
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24)))
    (call $exit (i32.load (i32.const 8)))))
"#;

fn stdin_config(stdin: &[u8], symbolic: Symbolic) -> RunConfig {
    RunConfig {
        inputs: Inputs {
            stdin: stdin.to_vec(),
            ..Default::default()
        },
        symbolic,
        branches: BranchFilter::All,
        ..Default::default()
    }
}

#[test]
fn stdio_and_exit_code() {
    let m = module(CLASSIFY);
    let r = run(&m, &stdin_config(b"abc", Symbolic::NONE));
    assert_eq!(r.stdout, b"Y\n");
    assert_eq!(r.outcome, Outcome::Exited { code: 3 });
    let r = run(&m, &stdin_config(b"xbc", Symbolic::NONE));
    assert_eq!(r.stdout, b"N\n");
    assert_eq!(r.branches.len(), 1, "one `if` executed");
    assert_eq!(r.branches[0].taken, 0);
    assert!(r.branches[0].constraint.is_none(), "concrete run: no constraint");
}

#[test]
fn symbolic_stdin_gives_a_constraint_on_the_first_byte() {
    let m = module(CLASSIFY);
    let r = run(&m, &stdin_config(b"xbc", Symbolic::ALL));
    assert_eq!(r.stdout, b"N\n");
    assert_eq!(r.path.len(), 1, "{:?}", r.path);
    let c = r.path[0].expr;
    let vars = r.arena.vars(c);
    assert_eq!(vars.len(), 1);
    assert_eq!(vars[0].name(), "stdin_0");
    // The constraint holds on the actual input and fails when byte 0 is 'a'.
    assert_eq!(r.arena.eval(c, &|_| b'x'), 1);
    assert_eq!(r.arena.eval(c, &|_| b'a'), 0);
}

#[test]
fn traps_and_unsupported_instructions_are_outcomes() {
    let m = module(r#"(module (memory 1) (func (export "_start") (drop (i32.div_s (i32.const 1) (i32.const 0)))))"#);
    assert!(matches!(
        run(&m, &RunConfig::default()).outcome,
        Outcome::Trap {
            trap: Trap::DivisionByZero,
            ..
        }
    ));
    let m = module(r#"(module (memory 1) (func (export "_start") (drop (i32.load (i32.const 65535)))))"#);
    assert!(matches!(
        run(&m, &RunConfig::default()).outcome,
        Outcome::Trap {
            trap: Trap::MemoryOutOfBounds,
            ..
        }
    ));
    let m = module(
        r#"(module (memory 1) (func (export "_start") (memory.fill (i32.const 0) (i32.const 0) (i32.const 4))))"#,
    );
    match run(&m, &RunConfig::default()).outcome {
        Outcome::Unsupported { opcode, .. } => assert_eq!(opcode, "MemoryFill"),
        o => panic!("{o:?}"),
    }
    let m = module(
        r#"(module (import "wasi_snapshot_preview1" "sock_accept" (func $a (param i32 i32 i32) (result i32)))
             (func (export "_start") (drop (call $a (i32.const 0) (i32.const 0) (i32.const 0)))))"#,
    );
    assert_eq!(
        run(&m, &RunConfig::default()).outcome,
        Outcome::UnsupportedImport {
            module: "wasi_snapshot_preview1".into(),
            name: "sock_accept".into()
        }
    );
}

#[test]
fn budgets_end_runs_with_named_outcomes() {
    let m = module(r#"(module (func (export "_start") (loop $l (br $l))))"#);
    let mut c = RunConfig::default();
    c.budget.instructions = 10_000;
    assert_eq!(
        run(&m, &c).outcome,
        Outcome::Budget {
            budget: doppel_concolic::BudgetKind::Instructions
        }
    );
    let m = module(r#"(module (func $f (export "_start") (call $f)))"#);
    assert_eq!(
        run(&m, &RunConfig::default()).outcome,
        Outcome::Budget {
            budget: doppel_concolic::BudgetKind::CallDepth
        }
    );
}

#[test]
fn bench_measures_both_modes() {
    let m = module(CLASSIFY);
    let b = doppel_concolic::bench::measure(&m, &stdin_config(b"abc", Symbolic::NONE), 3);
    assert_eq!(b.concrete.runs, 3);
    assert!(b.concrete.instructions > 20 && b.concrete.instructions == b.symbolic.instructions);
    assert_eq!(b.concrete.constraints, 0);
    assert_eq!(b.symbolic.constraints, 1, "the `if` on the first input byte");
    assert!(b.concrete.per_second > 0.0 && b.symbolic.per_second > 0.0);
}

#[test]
fn constraint_budget_and_per_site_cap() {
    // A loop over the first input byte: one symbolic branch per iteration.
    let wat = r#"
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (memory 1)
  (func (export "_start") (local $i i32)
    (i32.store (i32.const 0) (i32.const 100))
    (i32.store (i32.const 4) (i32.const 1))
    (drop (call $read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
    (loop $l
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.load8_u (i32.const 100)))))))
"#;
    let m = module(wat);
    let mut c = stdin_config(b"\xc8", Symbolic::ALL);
    let r = run(&m, &c);
    assert_eq!(r.outcome, Outcome::Exited { code: 0 });
    assert_eq!(r.path.len(), 200);
    c.budget.constraints = 50;
    let r = run(&m, &c);
    assert_eq!(
        r.outcome,
        Outcome::Budget {
            budget: doppel_concolic::BudgetKind::Constraints
        }
    );
    assert_eq!(r.path.len(), 50);
    assert!(r.branches.iter().all(|b| b.path_index.is_some()));
    c.budget.constraints = 100_000;
    c.budget.per_site = 10;
    let r = run(&m, &c);
    assert_eq!(r.outcome, Outcome::Exited { code: 0 });
    assert_eq!((r.path.len(), r.dropped_constraints), (10, 190));
}
