//! Tests of shadow validation: parsers on recorded reports, real MSan and
//! memcheck runs of small programs and of a Csmith program.

use super::*;
use crate::{ScopedVariable, VarKind};

fn var(name: &str, kind: VarKind) -> ScopedVariable {
    ScopedVariable {
        name: name.into(),
        type_name: "int".into(),
        kind,
        parameter: false,
        declared_at: 1,
    }
}

fn int() -> VarKind {
    VarKind::Integer { signed: true, bits: 32 }
}

fn s_kind() -> VarKind {
    VarKind::Struct {
        fields: vec![
            ("f".into(), int()),
            (
                "g".into(),
                VarKind::Array {
                    elem: Box::new(VarKind::Integer { signed: true, bits: 16 }),
                    len: 2,
                },
            ),
            ("h".into(), VarKind::Pointer),
            (
                "in".into(),
                VarKind::Struct {
                    fields: vec![("u".into(), VarKind::Integer { signed: false, bits: 8 })],
                },
            ),
        ],
    }
}

#[test]
fn structs_print_field_by_field_in_the_normalized_form() {
    let (code, skipped) = shadow_source("int main(void) {\n  return 0;\n}\n", &[pair(2, "s", s_kind())]);
    assert!(skipped.is_empty(), "{skipped:?}");
    let l2 = code.lines().find(|l| l.contains("doppel_seen_2")).unwrap();
    assert!(
        l2.contains(
            "printf(\"@@doppel 2 s {f = %lld, g = {%lld, %lld}, h = %s, in = {u = %llu}}\\n\", \
                 (long long)((s).f), (long long)(((s).g)[0]), (long long)(((s).g)[1]), \
                 ((s).h) ? \"non-null\" : \"null\", (unsigned long long)(((s).in).u));"
        ),
        "{l2}"
    );
    let float_field = VarKind::Struct {
        fields: vec![("i".into(), int()), ("d".into(), VarKind::Other)],
    };
    let (_, skipped) = shadow_source("int x;\n", &[pair(1, "f", float_field)]);
    assert_eq!(skipped[0].1, "struct field d (other) is not printed");
    let (_, skipped) = shadow_source("int x;\n", &[pair(1, "t", VarKind::Struct { fields: vec![] })]);
    assert_eq!(skipped[0].1, "struct without known fields is not printed");
}

fn pair(line: u32, name: &str, kind: VarKind) -> Pair {
    Pair {
        line,
        variable: var(name, kind),
    }
}

const PROGRAM: &str = "\
#include <stdio.h>
struct S { int f; short g[2]; int *h; struct I { unsigned char u; } in; };
unsigned long long big = 18446744073709551615ULL;
int main(void) {
  int a = 5;
  int b;
  int arr[3] = {1, 2, 3};
  int *p = 0;
  struct S s = {1, {-1}, 0, {7}};
  for (int i = 0; i < 3; i++) {
    a = a + i;
  }
  p = &a;
  if (a > 100) {
    a = 0;
  }
  printf(\"%d %d\\n\", a, s.f);
  return 0;
}
";

#[test]
fn the_shadow_keeps_line_numbers_and_guards_each_line() {
    let pairs = vec![
        pair(11, "a", int()),
        pair(11, "i", int()),
        pair(11, "s", VarKind::Struct { fields: vec![] }),
        pair(13, "p", VarKind::Pointer),
    ];
    let (shadow, skipped) = shadow_source(PROGRAM, &pairs);
    assert_eq!(
        shadow.lines().count(),
        PROGRAM.lines().count() + 2,
        "#line fallback: line 1 is a directive"
    );
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].0.variable.name, "s");
    // Physical line 11 + 2 carries the code of line 11.
    let l11 = shadow.lines().nth(12).unwrap();
    assert!(l11.starts_with("{ static int doppel_seen_11;"), "{l11}");
    assert!(l11.ends_with("    a = a + i;"), "{l11}");
    assert!(l11.contains("(long long)(i)"), "{l11}");
}

#[test]
fn report_parsers_find_the_innermost_frame_in_the_shadow() {
    let msan = "==1==WARNING: MemorySanitizer: use-of-uninitialized-value\n    #0 0x55 in __interceptor_printf x.c:1:1\n    #1 0x56 in main /tmp/d/shadow.c:12:84\n    #2 0x57 in __libc_start_main csu/libc-start.c:360:3\n\nSUMMARY: MemorySanitizer: use-of-uninitialized-value /tmp/d/shadow.c:12:84 in main\n";
    let r = sanitizer_reports(msan, "shadow.c");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].site, Some(Site { line: 12, col: 84 }));
    let vg = "==9== Conditional jump or move depends on uninitialised value(s)\n==9==    at 0x1: __vfprintf_internal (vfprintf-process-arg.c:58)\n==9==    by 0x2: printf (printf.c:33)\n==9==    by 0x3: main (shadow.c:5)\n==9== \n==9== Use of uninitialised value of size 8\n==9==    at 0x4: f (shadow.c:7)\n==9== \n";
    let r = valgrind_reports(vg, "shadow.c");
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].site.map(|s| s.line), Some(5));
    assert_eq!(r[1].site.map(|s| s.line), Some(7));
    assert_eq!(
        parse_values("x@@doppel 3 a 5\n@@doppel 4 arr {1, 2, 3}\n@@doppel 3 a 6\n")
            .get(&(4, "arr".to_string()))
            .map(String::as_str),
        Some("{1, 2, 3}")
    );
}

#[tokio::test]
async fn uninitialized_reads_are_rejected_and_the_rest_has_exact_values() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let pairs = vec![
        pair(7, "a", int()),
        pair(7, "b", int()), // uninitialized: rejected
        pair(11, "a", int()),
        pair(11, "i", int()),
        pair(
            9,
            "arr",
            VarKind::Array {
                elem: Box::new(int()),
                len: 3,
            },
        ),
        pair(9, "p", VarKind::Pointer),
        pair(17, "p", VarKind::Pointer),
        pair(
            17,
            "big",
            VarKind::Integer {
                signed: false,
                bits: 64,
            },
        ),
        pair(17, "s", s_kind()),
        pair(17, "t", VarKind::Struct { fields: vec![] }), // skipped
        pair(15, "a", int()),                              // never executed
    ];
    let r = validate(&src, &pairs, &ShadowConfig::default()).await.unwrap();
    let got: Vec<(u32, &str, &str)> = r
        .references
        .iter()
        .map(|x| (x.pair.line, x.pair.variable.name.as_str(), x.value.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (7, "a", "5"),
            (11, "a", "5"),
            (11, "i", "0"),
            (9, "arr", "{1, 2, 3}"),
            (9, "p", "null"),
            (17, "p", "non-null"),
            (17, "big", "18446744073709551615"),
            (17, "s", "{f = 1, g = {-1, 0}, h = null, in = {u = 7}}"),
        ],
        "{r:#?}"
    );
    let rejected: BTreeMap<(u32, &str), &str> = r
        .rejected
        .iter()
        .map(|(p, why)| ((p.line, p.variable.name.as_str()), why.as_str()))
        .collect();
    assert!(rejected[&(7, "b")].contains("MSan"), "{rejected:?}");
    assert!(rejected[&(15, "a")].contains("not reached"), "{rejected:?}");
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert_eq!(r.skipped.len(), 1);
    assert_eq!(r.rounds, 2, "one round with the report, one clean");
    // The loop body's later executions (not references, see `later`);
    // straight-line code runs once.
    let later = |line: u32, name: &str| {
        r.references
            .iter()
            .find(|x| x.pair.line == line && x.pair.variable.name == name)
            .map(|x| x.later.clone())
            .unwrap()
    };
    assert_eq!(later(11, "a"), ["5", "6"]);
    assert_eq!(later(11, "i"), ["1", "2"]);
    assert!(later(7, "a").is_empty());
}

#[tokio::test]
async fn only_the_offending_pair_of_a_line_is_rejected() {
    // Both checkers report line 5; MSan's column names x, so y stays.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("q.c");
    std::fs::write(
        &src,
        "/* q */\nint main(void) {\n  int x;\n  int y = 1;\n  return y - 1;\n}\n",
    )
    .unwrap();
    let pairs = vec![pair(5, "x", int()), pair(5, "y", int())];
    let cfg = ShadowConfig {
        clang: "/bin/false-not-a-compiler".into(),
        ..ShadowConfig::default()
    };
    // A missing MSan compiler is an error, not a silent pass.
    assert!(validate(&src, &pairs, &cfg).await.is_err());
    let r = validate(&src, &pairs, &ShadowConfig::default()).await.unwrap();
    assert_eq!(r.references.len(), 1, "{r:#?}");
    assert_eq!(r.references[0].value, "1");
    assert_eq!(r.rejected.len(), 1);
    assert_eq!(r.rejected[0].0.variable.name, "x");
}

/// clang-19's MSan report when its symbolizer could not read the DWARF
/// (a fresh Debian 12 machine with llvm-14's `llvm-symbolizer` only).
const UNSYMBOLIZED: &str = "==23771==WARNING: MemorySanitizer: use-of-uninitialized-value
    #0 0x55885b113ca4  (/tmp/d/shadow-msan+0xc9ca4) (BuildId: 26b0f4abbc4deae2eebb8a4d381621ca3bfde58a)
    #1 0x7f08d28da249  (/lib/x86_64-linux-gnu/libc.so.6+0x27249) (BuildId: 93ac61ec5a8eb1396f9fbd350e3169a558528a40)

SUMMARY: MemorySanitizer: use-of-uninitialized-value (/tmp/d/shadow-msan+0xc9ca4) (BuildId: 26b0f4abbc4deae2eebb8a4d381621ca3bfde58a)
";

#[test]
fn an_unsymbolized_report_names_no_site() {
    let r = sanitizer_reports(UNSYMBOLIZED, "shadow.c");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].site, None);
    let vg = "==7== Warning: set address range perms: large range [0x1, 0x2) (defined)\n";
    assert!(valgrind_reports(vg, "shadow.c").is_empty());
}

/// A program with an uninitialized read in the printing code only: with
/// a working symbolizer the pair is rejected at its column.
const UNINIT: &str = "/* q */\nint main(void) {\n  int x;\n  int y = 1;\n  return y - 1;\n}\n";

#[tokio::test]
async fn a_missing_or_blind_symbolizer_is_an_error_of_the_machine_not_a_rejection() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("q.c");
    std::fs::write(&src, UNINIT).unwrap();
    let pairs = vec![pair(5, "x", int()), pair(5, "y", int())];
    let missing = ShadowConfig {
        symbolizer: Some("/nonexistent/llvm-symbolizer".into()),
        valgrind: false,
        ..ShadowConfig::default()
    };
    match validate(&src, &pairs, &missing).await {
        Err(ShadowError::Environment(e)) => assert!(e.contains("/nonexistent/llvm-symbolizer"), "{e}"),
        other => panic!("{other:?}"),
    }
    // A symbolizer that runs but finds no line (as llvm-14's on clang-19's
    // DWARF): the report names no line of the program.
    let blind = dir.path().join("bin/llvm-symbolizer");
    std::fs::create_dir_all(blind.parent().unwrap()).unwrap();
    std::fs::write(
        &blind,
        "#!/bin/sh\nwhile read -r l; do printf '??\\n??:0:0\\n\\n'; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&blind, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let cfg = ShadowConfig {
        symbolizer: Some(blind.clone()),
        valgrind: false,
        ..ShadowConfig::default()
    };
    match validate(&src, &pairs, &cfg).await {
        Err(ShadowError::Environment(e)) => {
            assert!(e.contains("no line of the program"), "{e}");
            assert!(e.contains(&blind.display().to_string()), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // The matching symbolizer attributes the report to x's printing code.
    let ok = ShadowConfig {
        valgrind: false,
        ..ShadowConfig::default()
    };
    let r = validate(&src, &pairs, &ok).await.unwrap();
    assert_eq!(r.rejected.len(), 1, "{r:#?}");
    assert_eq!(r.rejected[0].0.variable.name, "x");
    assert!(r.rejected[0].1.starts_with("MSan: "), "{r:#?}");
}

#[tokio::test]
async fn a_csmith_program_yields_references() {
    let dir = tempfile::tempdir().unwrap();
    let seed = crate::wellformed::tests::first_csmith_seed(dir.path()).await;
    let text = std::fs::read_to_string(&seed.path).unwrap();
    // Globals g_* are in scope everywhere. Lines: statements of `main`
    // that call `func_N` or `transparent_crc`; variables: the integer
    // globals declared as `static [const] [volatile] int32_t g_N = ...;`.
    let main_at = text.lines().position(|l| l.starts_with("int main")).unwrap() as u32 + 1;
    let lines: Vec<u32> = text
        .lines()
        .enumerate()
        .filter(|(n, l)| {
            let l = l.trim_start();
            *n as u32 + 1 > main_at && (l.starts_with("func_") || l.starts_with("transparent_crc("))
        })
        .map(|(n, _)| n as u32 + 1)
        .take(3)
        .collect();
    assert!(!lines.is_empty(), "no call lines in main");
    let globals: Vec<(String, bool, u8)> = text
        .lines()
        .filter(|l| l.starts_with("static ") && l.contains(" g_") && l.trim_end().ends_with(';') && !l.contains('['))
        .filter_map(|l| {
            let mut w = l
                .split_whitespace()
                .skip(1)
                .filter(|w| *w != "volatile" && *w != "const");
            let ty = w.next()?;
            let name = w.next()?;
            let (signed, bits) = match ty {
                "int8_t" => (true, 8),
                "uint8_t" => (false, 8),
                "int16_t" => (true, 16),
                "uint16_t" => (false, 16),
                "int32_t" => (true, 32),
                "uint32_t" => (false, 32),
                "int64_t" => (true, 64),
                "uint64_t" => (false, 64),
                _ => return None,
            };
            (name.starts_with("g_") && name.chars().skip(2).all(|c| c.is_ascii_digit()))
                .then(|| (name.to_string(), signed, bits))
        })
        .take(10)
        .collect();
    assert!(!globals.is_empty(), "no integer globals");
    let pairs: Vec<Pair> = lines
        .iter()
        .flat_map(|&s| {
            globals.iter().map(move |(n, signed, bits)| {
                pair(
                    s,
                    n,
                    VarKind::Integer {
                        signed: *signed,
                        bits: *bits,
                    },
                )
            })
        })
        .collect();
    let r = validate(&seed.path, &pairs, &ShadowConfig::default()).await.unwrap();
    eprintln!(
        "shadow validation of csmith-{} ({} bytes, {} pairs): {:.2} s, {} rounds, {} references, {} rejected",
        seed.seed,
        seed.size_bytes,
        pairs.len(),
        r.seconds,
        r.rounds,
        r.references.len(),
        r.rejected.len()
    );
    assert_eq!(r.references.len() + r.rejected.len(), pairs.len(), "{r:#?}");
    assert!(!r.references.is_empty(), "{r:#?}");
    for x in &r.references {
        assert!(x.value.parse::<i128>().is_ok(), "{x:?}");
    }
}
