//! The batched checker against real GDB and LLDB on a small optimized
//! program whose values at two lines are known.

use doppel_debuggers::{DebuggerConfig, registry};
use doppel_debuginfo::check::check_binary;
use doppel_debuginfo::{CheckVerdict, Pair, Reference, ScopedVariable, VarKind};
use doppel_lang::c::{BuildCache, BuildRecipe};

const PROGRAM: &str = r#"#include <stdio.h>
int g;
__attribute__((noinline)) int f(int a) {
  int b = a * 3;
  int c = b + 1;
  g = c;
  return c;
}
int main(void) {
  int x = f(4);
  signed char k = -5;
  printf("%d\n", x + k);
  return 0;
}
"#;

fn reference(line: u32, name: &str, kind: VarKind, value: &str) -> Reference {
    Reference::new(
        Pair {
            line,
            variable: ScopedVariable {
                name: name.into(),
                type_name: String::new(),
                kind,
                parameter: false,
                declared_at: 0,
            },
        },
        value.into(),
    )
}

fn int() -> VarKind {
    VarKind::Integer { signed: true, bits: 32 }
}

async fn run(debugger: &str, flags: &str) -> Vec<(u32, String, CheckVerdict)> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let cache = BuildCache::new(dir.path().join("cache"));
    let subject = cache
        .build(&src, "p.c", &BuildRecipe::parse(flags).unwrap())
        .await
        .unwrap();
    let refs = vec![
        reference(6, "a", int(), "4"),
        reference(6, "b", int(), "12"),
        reference(6, "c", int(), "13"),
        reference(12, "x", int(), "13"),
        reference(12, "k", VarKind::Integer { signed: true, bits: 8 }, "-5"),
        // A deliberately wrong reference: the checker must say so.
        reference(6, "c", int(), "14"),
        // A line without code.
        reference(2, "g", int(), "0"),
    ];
    let mut dbg = registry::create(debugger, &DebuggerConfig::default()).unwrap();
    let session = check_binary(dbg.as_mut(), &subject, &refs).await;
    dbg.shutdown().await;
    eprintln!("{debugger} {flags}: {}\n{:#?}", session.ending, session.verdicts);
    session
        .verdicts
        .into_iter()
        .map(|v| (v.line, v.variable, v.verdict))
        .collect()
}

async fn unoptimized_matches(debugger: &str) {
    let v = run(debugger, "gcc -O0 -g").await;
    for (line, name, verdict) in &v[..5] {
        assert_eq!(verdict, &CheckVerdict::Match, "{debugger}: {name} at {line}");
    }
    assert_eq!(
        v[5].2,
        CheckVerdict::WrongValue {
            expected: "14".into(),
            actual: "13".into()
        }
    );
    assert!(matches!(v[6].2, CheckVerdict::NotHit { .. }), "{:?}", v[6]);
}

#[tokio::test]
async fn gdb_unoptimized_build_matches_every_reference() {
    unoptimized_matches("gdb").await;
}

#[tokio::test]
async fn lldb_unoptimized_build_matches_every_reference() {
    unoptimized_matches("lldb").await;
}

#[tokio::test]
async fn optimized_builds_give_a_verdict_for_every_pair() {
    for dbg in ["gdb", "lldb"] {
        for cc in ["gcc -O2 -g", "clang -O2 -g"] {
            let v = run(dbg, cc).await;
            assert_eq!(v.len(), 7);
            // Nothing in this program makes a debugger fail.
            assert!(
                !v.iter()
                    .any(|(_, _, x)| matches!(x, CheckVerdict::DebuggerFailure { .. })),
                "{dbg} {cc}: {v:?}"
            );
        }
    }
}

const STRUCT_PROGRAM: &str = r#"#include <stdio.h>
struct In { unsigned char u; };
struct S { int a; int b[2]; int *c; struct In in; };
int main(void) {
  struct S s = {1, {0, -3}, 0, {7}};
  s.a += 1;
  printf("%d\n", s.a);
  return 0;
}
"#;

/// The struct local `s` at line 7 of [`STRUCT_PROGRAM`], its kind from the
/// scope oracle, checked with `debugger` in a gcc -O0 build against its
/// value and a wrong one.
async fn struct_verdicts(debugger: &str) -> Vec<CheckVerdict> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("s.c");
    std::fs::write(&src, STRUCT_PROGRAM).unwrap();
    let scopes = doppel_lang::c::clang_scope::scopes(&src, "clang", &[]).await.unwrap();
    let s = scopes.visible_at(7).into_iter().find(|v| v.name == "s").unwrap();
    assert_eq!(s.kind.name(), "struct");
    let cache = BuildCache::new(dir.path().join("cache"));
    let subject = cache
        .build(&src, "s.c", &BuildRecipe::parse("gcc -O0 -g").unwrap())
        .await
        .unwrap();
    let refs = vec![
        reference(7, "s", s.kind.clone(), "{a = 2, b = {0, -3}, c = null, in = {u = 7}}"),
        reference(7, "s", s.kind, "{a = 1, b = {0, -3}, c = null, in = {u = 7}}"),
    ];
    let mut dbg = registry::create(debugger, &DebuggerConfig::default()).unwrap();
    let session = check_binary(dbg.as_mut(), &subject, &refs).await;
    dbg.shutdown().await;
    eprintln!("{debugger}: {}\n{:#?}", session.ending, session.verdicts);
    session.verdicts.into_iter().map(|v| v.verdict).collect()
}

async fn struct_matches(debugger: &str) {
    let v = struct_verdicts(debugger).await;
    assert_eq!(v[0], CheckVerdict::Match, "{debugger}");
    assert_eq!(
        v[1],
        CheckVerdict::WrongValue {
            expected: "{a = 1, b = {0, -3}, c = null, in = {u = 7}}".into(),
            actual: "{a = 2, b = {0, -3}, c = null, in = {u = 7}}".into()
        },
        "{debugger}"
    );
}

#[tokio::test]
async fn gdb_reads_a_struct_local_field_by_field() {
    struct_matches("gdb").await;
}

#[tokio::test]
async fn lldb_reads_a_struct_local_field_by_field() {
    struct_matches("lldb").await;
}

/// A debugger that dies at once, and one that never answers: every pair is
/// a `debugger_failure` with the reason, nothing panics, nothing hangs (the
/// action timeout ends the wait and the process tree is killed).
#[tokio::test]
async fn a_crashing_or_hanging_debugger_gives_debugger_failures() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let cache = BuildCache::new(dir.path().join("cache"));
    let subject = cache
        .build(&src, "p.c", &BuildRecipe::parse("gcc -O2 -g").unwrap())
        .await
        .unwrap();
    let refs = vec![reference(6, "c", int(), "13"), reference(12, "x", int(), "13")];
    for (name, body) in [("crashing-gdb", "exit 3"), ("hanging-gdb", "exec sleep 600")] {
        let exe = dir.path().join(name);
        // The version probe is answered (a debugger that does not answer it
        // is an error of the campaign, not a recorded session failure); the
        // session itself crashes or hangs.
        std::fs::write(
            &exe,
            format!("#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 'GNU gdb (fake) 13.1'; exit 0; }}\n{body}\n"),
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let config = DebuggerConfig {
            executable: Some(exe.to_string_lossy().into_owned()),
            action_timeout: std::time::Duration::from_secs(2),
            ..DebuggerConfig::default()
        };
        let mut dbg = registry::create("gdb", &config).unwrap();
        let session = check_binary(dbg.as_mut(), &subject, &refs).await;
        dbg.shutdown().await;
        assert_eq!(session.verdicts.len(), 2);
        for v in &session.verdicts {
            match &v.verdict {
                CheckVerdict::DebuggerFailure { detail } => assert!(!detail.is_empty(), "{name}"),
                other => panic!("{name}: {other:?}"),
            }
        }
        assert!(
            session.ending.contains("debugger failure"),
            "{name}: {}",
            session.ending
        );
    }
}
