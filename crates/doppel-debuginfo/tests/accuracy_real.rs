//! The false positives of issue 17 part 4, reproduced with real compilers
//! and debuggers and recognised from the DWARF at the pause address:
//! clang 19's loop rotation (a `for` line paused at first in the loop
//! latch's increment clause, after a pause in the body) in GDB and LLDB, and
//! LLDB 22 breaking at a gcc row without `is_stmt`.

use doppel_debuggers::{DebuggerConfig, registry};
use doppel_debuginfo::accuracy;
use doppel_debuginfo::check::check_binary;
use doppel_debuginfo::config::DebuginfoConfig;
use doppel_debuginfo::program::{Build, Cell};
use doppel_debuginfo::toolchain::Compiler;
use doppel_debuginfo::{CheckVerdict, Pair, Reference, ScopedVariable, VarKind};
use doppel_lang::c::{BuildCache, BuildRecipe};

/// clang-19 -O1 keeps line 6 only in the latch: `i++` (column 29) is its
/// first `is_stmt` row, reached after the first call of `step`.
const ROTATED: &str = r#"#include <stdio.h>
int g[64];
__attribute__((noinline)) int step(int x) { return x * 3 + 1 + g[x & 63]; }
int main(int argc, char **argv) {
  int s = 5;
  for (int i = 0; i < 100; i++) {
    s += step(i);
  }
  printf("%d %d\n", s, argc);
  return 0;
}
"#;

/// gcc -O2: LLDB 22 breaks on line 6 at `main+4`, a row without `is_stmt`
/// (GDB at `main`, the line's `is_stmt` row, view 1).
const HOISTED: &str = r#"#include <stdio.h>
int g[64];
__attribute__((noinline)) int step(int x) { return x * 3 + 1 + g[x & 63]; }
int main(int argc, char **argv) {
  int t = 5;
  int k = argc * 7;
  int m = k + g[3];
  for (int i = 0; i < 100; i++) {
    t += step(i) + m;
  }
  printf("%d %d\n", t, k);
  return 0;
}
"#;

/// gcc -O2 describes `p` at line 6 as `DW_OP_addr 0x4034; DW_OP_stack_value`
/// (`&g_9[1]`); LLDB 22 shows the file address 0x4034 unrelocated.
const POINTER: &str = r#"#include <stdio.h>
int g_9[4];
__attribute__((noinline)) void use(int *q) { *q += 1; }
int main(void) {
  int *p = &g_9[1];
  use(p);
  printf("%d\n", g_9[1]);
  use(p);
  return 0;
}
"#;

fn reference(line: u32, name: &str, value: &str) -> Reference {
    let mut r = int_reference(line, name, value);
    if name == "p" {
        r.pair.variable.kind = VarKind::Pointer;
        r.pair.variable.type_name = "int *".into();
    }
    r
}

fn int_reference(line: u32, name: &str, value: &str) -> Reference {
    Reference::new(
        Pair {
            line,
            variable: ScopedVariable {
                name: name.into(),
                type_name: "int".into(),
                kind: VarKind::Integer { signed: true, bits: 32 },
                parameter: false,
                declared_at: 0,
            },
        },
        value.into(),
    )
}

/// Builds `text` with `flags`, checks `refs` in `debugger`, reviews the
/// session with `config`: the pairs' verdicts and situations.
async fn checked(
    text: &str,
    flags: &str,
    debugger: &str,
    refs: Vec<Reference>,
    config: &DebuginfoConfig,
) -> Vec<(CheckVerdict, Option<String>, Option<u64>)> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.c");
    std::fs::write(&src, text).unwrap();
    let cache = BuildCache::new(dir.path().join("cache"));
    let subject = cache
        .build(&src, "p.c", &BuildRecipe::parse(flags).unwrap())
        .await
        .unwrap();
    let compiler = Compiler::discover(flags.split_whitespace().next().unwrap())
        .await
        .unwrap();
    let mut dbg = registry::create(debugger, &DebuggerConfig::default()).unwrap();
    let session = check_binary(dbg.as_mut(), &subject, &refs).await;
    dbg.shutdown().await;
    let builds = vec![Build {
        compiler,
        level: "O1".into(),
        augmented: Vec::new(),
        subject,
        references: refs,
        recipe: flags.into(),
    }];
    let mut cells = vec![Cell {
        build: 0,
        debugger: debugger.into(),
        session,
    }];
    accuracy::review(config, &builds, &mut cells);
    eprintln!("{debugger} {flags}: {:#?}", cells[0].session.verdicts);
    cells
        .remove(0)
        .session
        .verdicts
        .into_iter()
        .map(|v| {
            let situation = v
                .dwarf
                .map(|d| format!("{} | {}", d.location_pattern, d.line_situation));
            (v.verdict, situation, v.pc)
        })
        .collect()
}

async fn loop_rotation_is_not_comparable(debugger: &str) {
    // At -O0 the first pause at line 6 is before the loop: s = 5. The body
    // (line 7) is paused at first, then line 6 in the latch, where s = 6.
    let refs = || vec![reference(6, "s", "5"), reference(7, "s", "5")];
    let on = checked(
        ROTATED,
        "clang-19 -O1 -g",
        debugger,
        refs(),
        &DebuginfoConfig::default(),
    )
    .await;
    assert_eq!(on[1].0, CheckVerdict::Match, "{debugger}: {on:?}");
    match &on[0].0 {
        CheckVerdict::NotComparable { reason, actual } => {
            assert_eq!(actual, "6", "{debugger}");
            assert!(reason.contains("increment clause"), "{debugger}: {reason}");
        }
        other => panic!("{debugger}: {other:?}"),
    }
    let situation = on[0].1.as_deref().unwrap();
    assert!(
        situation.ends_with("| is_stmt+for_increment+after_body"),
        "{debugger}: {situation}"
    );
    // The switch off: the wrong value of before, with its situation.
    let off_config = DebuginfoConfig {
        not_comparable: false,
        ..Default::default()
    };
    let off = checked(ROTATED, "clang-19 -O1 -g", debugger, refs(), &off_config).await;
    assert_eq!(
        off[0].0,
        CheckVerdict::WrongValue {
            expected: "5".into(),
            actual: "6".into()
        },
        "{debugger}"
    );
    assert_eq!(off[0].1, on[0].1, "{debugger}");
}

#[tokio::test]
async fn clang_loop_rotation_in_gdb_is_not_comparable() {
    loop_rotation_is_not_comparable("gdb").await;
}

#[tokio::test]
async fn clang_loop_rotation_in_lldb_is_not_comparable() {
    loop_rotation_is_not_comparable("lldb").await;
}

#[tokio::test]
async fn lldb_at_a_row_without_is_stmt_is_not_comparable_and_gdb_at_its_is_stmt_row_is_a_wrong_value() {
    // t is 5 at line 6 at every address; a deliberately wrong reference
    // makes the pause a wrong value, which only the row's flag decides.
    let refs = || vec![reference(6, "t", "4")];
    let lldb = checked(HOISTED, "gcc -O2 -g", "lldb", refs(), &DebuginfoConfig::default()).await;
    match &lldb[0].0 {
        CheckVerdict::NotComparable { reason, actual } => {
            assert_eq!(actual, "5");
            assert!(reason.contains("without is_stmt"), "{reason}");
        }
        other => panic!("lldb: {other:?}"),
    }
    assert!(lldb[0].1.as_deref().unwrap().ends_with("| no_is_stmt"), "{lldb:?}");
    let gdb = checked(HOISTED, "gcc -O2 -g", "gdb", refs(), &DebuginfoConfig::default()).await;
    assert!(matches!(gdb[0].0, CheckVerdict::WrongValue { .. }), "{gdb:?}");
    // GDB's row at `main` is line 6's is_stmt row after line 5's at the same
    // address (view 1).
    assert!(
        gdb[0].1.as_deref().unwrap().ends_with("| is_stmt+view_nonzero"),
        "{gdb:?}"
    );
    assert_ne!(gdb[0].2, lldb[0].2, "the debuggers pause at different addresses");
}

#[tokio::test]
async fn an_unreached_pair_is_checked_again_by_the_other_debugger_alone() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.c");
    std::fs::write(&src, HOISTED).unwrap();
    let cache = BuildCache::new(dir.path().join("cache"));
    let subject = cache
        .build(&src, "p.c", &BuildRecipe::parse("gcc -O2 -g").unwrap())
        .await
        .unwrap();
    let refs = vec![reference(6, "t", "4"), reference(9, "t", "5")];
    let mut dbgs: Vec<(String, Box<dyn doppel_debuggers::Debugger>)> = ["gdb", "lldb"]
        .iter()
        .map(|d| (d.to_string(), registry::create(d, &DebuggerConfig::default()).unwrap()))
        .collect();
    let mut cells = Vec::new();
    for (name, dbg) in dbgs.iter_mut() {
        let session = check_binary(dbg.as_mut(), &subject, &refs).await;
        cells.push(Cell {
            build: 0,
            debugger: name.clone(),
            session,
        });
    }
    assert!(matches!(
        cells[0].session.verdicts[0].verdict,
        CheckVerdict::WrongValue { .. }
    ));
    // LLDB's session "gave up" before line 6 (as GDB's did after 179 of 181
    // pauses in a Csmith program).
    let gave_up = CheckVerdict::NotHit {
        detail: "line not reached (gave up after 179 pauses)".into(),
    };
    cells[1].session.verdicts[0].verdict = gave_up.clone();
    cells[1].session.verdicts[0].pc = None;
    let mut builds = vec![Build {
        compiler: Compiler::discover("gcc").await.unwrap(),
        level: "O2".into(),
        augmented: Vec::new(),
        subject,
        references: refs,
        recipe: "gcc -O2 -g".into(),
    }];
    // A second build (as an augmented one) with fewer references: its cells
    // are not the first build's others.
    let mut small = builds[0].clone();
    small.references.truncate(1);
    builds.push(small);
    let mut other = Cell {
        build: 1,
        debugger: "gdb".into(),
        session: cells[0].session.clone(),
    };
    other.session.verdicts.truncate(1);
    other.session.verdicts[0].verdict = gave_up.clone();
    cells.push(other);
    let off = DebuginfoConfig {
        rerun_unconfirmed: false,
        ..Default::default()
    };
    assert_eq!(
        accuracy::rerun_unconfirmed(&off, &builds, &mut cells, &mut dbgs).await,
        0
    );
    assert_eq!(cells[1].session.verdicts[0].verdict, gave_up);
    let runs = accuracy::rerun_unconfirmed(&DebuginfoConfig::default(), &builds, &mut cells, &mut dbgs).await;
    for (_, d) in dbgs.iter_mut() {
        d.shutdown().await;
    }
    assert_eq!(runs, 1);
    let v = &cells[1].session.verdicts[0];
    assert!(v.rerun, "{v:?}");
    assert_eq!(
        v.verdict,
        CheckVerdict::WrongValue {
            expected: "4".into(),
            actual: "5".into()
        }
    );
    assert!(v.pc.is_some());
    // The other pair, the other debugger's verdicts and the other build's
    // are untouched.
    assert!(!cells[1].session.verdicts[1].rerun && !cells[0].session.verdicts[0].rerun);
    assert_eq!(cells[2].session.verdicts[0].verdict, gave_up);
}

#[tokio::test]
async fn lldb_showing_an_unrelocated_global_address_is_a_wrong_value() {
    let refs = || vec![reference(6, "p", "non-null")];
    let lldb = checked(POINTER, "gcc -O2 -g", "lldb", refs(), &DebuginfoConfig::default()).await;
    assert_eq!(
        lldb[0].0,
        CheckVerdict::WrongValue {
            expected: "non-null".into(),
            actual: "unrelocated &g_9+4".into()
        },
        "{lldb:?}"
    );
    // LLDB paused at a row without is_stmt, but an unrelocated address is
    // wrong at any address: a wrong value, with its situation.
    assert_eq!(
        lldb[0].1.as_deref(),
        Some("DW_OP_addr K; DW_OP_stack_value | no_is_stmt"),
        "{lldb:?}"
    );
    let gdb = checked(POINTER, "gcc -O2 -g", "gdb", refs(), &DebuginfoConfig::default()).await;
    assert_eq!(gdb[0].0, CheckVerdict::Match, "{gdb:?}");
    let off = DebuginfoConfig {
        pointer_symbols: false,
        ..Default::default()
    };
    let lldb = checked(POINTER, "gcc -O2 -g", "lldb", refs(), &off).await;
    assert_eq!(lldb[0].0, CheckVerdict::Match, "{lldb:?}");
}

/// The file address of `main` in `binary` (nm).
fn main_address(binary: &std::path::Path) -> u64 {
    let nm = std::process::Command::new("nm").arg(binary).output().unwrap();
    String::from_utf8_lossy(&nm.stdout)
        .lines()
        .find(|l| l.ends_with(" T main"))
        .and_then(|l| u64::from_str_radix(l.split_whitespace().next()?, 16).ok())
        .unwrap()
}

async fn gcc_o2(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.c");
    std::fs::write(&src, text).unwrap();
    let cache = BuildCache::new(dir.path().join("cache"));
    let subject = cache
        .build(&src, "p.c", &BuildRecipe::parse("gcc -O2 -g").unwrap())
        .await
        .unwrap();
    (dir, subject.binary.clone().unwrap())
}

#[tokio::test]
async fn a_row_outside_the_location_views_is_not_comparable() {
    use doppel_lang::c::location::{DEBUGGER_PIE_BASE, at_pause};
    // gcc -O2, HOISTED: t's range `DW_OP_lit5` ends at main+0x20 at view 3,
    // where the `for` line's rows have views 0 to 2 and line 9's view 3. At
    // line 8 t is still 5 by the views, but a debugger ignoring them reads
    // the next range (a register). The pauses are the ones a debugger takes
    // at that address, with the debuggers' PIE load bias (neither GDB nor
    // LLDB stops at line 8 there: GDB reports line 9).
    let (_dir, binary) = gcc_o2(HOISTED).await;
    let pc = main_address(&binary) + 0x20 + DEBUGGER_PIE_BASE;
    let pause = at_pause(&binary, pc, 8, "p.c", "t").unwrap();
    let f = accuracy::facts(&pause, HOISTED, 8, &[]);
    assert_eq!(f.situation(), "is_stmt+location_view", "{pause:?}");
    assert!(f.not_comparable().unwrap().contains("location views"));
    let pause = at_pause(&binary, pc, 9, "p.c", "t").unwrap();
    let f = accuracy::facts(&pause, HOISTED, 9, &[]);
    assert_eq!(f.situation(), "is_stmt+view_nonzero", "{pause:?}");
    assert_eq!(f.not_comparable(), None);
    // POINTER: lines 4, 5 and 6 at main with views 0, 1, 2; p's range starts
    // at view 2. Line 5 is before it, but p is `DW_OP_addr K;
    // DW_OP_stack_value`, an address computed with, which no mechanism
    // explains (LLDB shows it unrelocated at any address).
    let (_dir, binary) = gcc_o2(POINTER).await;
    let pc = main_address(&binary) + DEBUGGER_PIE_BASE;
    let pause = at_pause(&binary, pc, 5, "p.c", "p").unwrap();
    let f = accuracy::facts(&pause, POINTER, 5, &[]);
    assert_eq!(f.situation(), "is_stmt+view_nonzero+location_view", "{pause:?}");
    assert!(f.address_value);
    assert_eq!(f.not_comparable(), None);
}
