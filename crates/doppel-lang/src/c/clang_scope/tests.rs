//! Tests of the clang scope oracle on real clang output.

use super::*;

const PROG: &str = r#"#include <stdint.h>
struct S { int a; };
int g;
int f(int p, uint8_t *q) {
  int a = 1;
  static int s;
  extern int g;
  {
    long a = 2;
    volatile int16_t v[3] = {1};
    uint32_t m[2][3];
    struct S st;
    a++;
  }
  for (int i = 0; i < 3; i++)
    a += i;
  double d = 1.0, e =
      2.0;
  return a + (int)d + (int)e;
}
#define DECL(t, n) t n = 0
int h(void) {
  DECL(char, c);
  return c;
}
int main(void) { return f(1, 0) + h(); }
"#;

fn names(vars: &[ScopedVariable]) -> Vec<String> {
    vars.iter()
        .map(|v| format!("{}:{}:{}", v.name, v.type_name, v.declared_at))
        .collect()
}

async fn map_of(src: &str, clang: &str) -> ScopeMap {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.c");
    std::fs::write(&f, src).unwrap();
    scopes(&f, clang, &[]).await.unwrap()
}

#[tokio::test]
async fn visible_variables_follow_declarations_blocks_and_shadowing() {
    for clang in ["clang", "clang-16", "clang-19"] {
        if process::which(clang).is_some() {
            check_prog(map_of(PROG, clang).await);
        }
    }
}

fn check_prog(m: ScopeMap) {
    // Outside functions and on the header line: nothing.
    assert!(m.visible_at(3).is_empty());
    assert!(m.visible_at(4).is_empty());
    assert_eq!(names(&m.visible_at(5)), ["p:int:4", "q:uint8_t *:4"]);
    assert_eq!(names(&m.visible_at(6)), ["p:int:4", "q:uint8_t *:4", "a:int:5"]);
    // The static local counts, the extern declaration does not.
    assert_eq!(
        names(&m.visible_at(8)),
        ["p:int:4", "q:uint8_t *:4", "a:int:5", "s:int:6"]
    );
    // The inner `a` is declared on line 9: visible from line 10, shadowing.
    assert_eq!(
        names(&m.visible_at(9)),
        ["p:int:4", "q:uint8_t *:4", "a:int:5", "s:int:6"]
    );
    assert_eq!(
        names(&m.visible_at(13)),
        [
            "p:int:4",
            "q:uint8_t *:4",
            "s:int:6",
            "a:long:9",
            "v:volatile int16_t[3]:10",
            "m:uint32_t[2][3]:11",
            "st:struct S:12"
        ]
    );
    // The `for` variable is visible in its body only.
    assert_eq!(
        names(&m.visible_at(16)),
        ["p:int:4", "q:uint8_t *:4", "a:int:5", "s:int:6", "i:int:15"]
    );
    // A declaration ends on its `;` line: d and e are visible after line 18.
    assert_eq!(names(&m.visible_at(18)).len(), 4);
    assert_eq!(
        names(&m.visible_at(19)),
        [
            "p:int:4",
            "q:uint8_t *:4",
            "a:int:5",
            "s:int:6",
            "d:double:17",
            "e:double:17"
        ]
    );
    // A declaration written by a macro is at its expansion.
    assert!(m.visible_at(23).is_empty());
    assert_eq!(names(&m.visible_at(24)), ["c:char:23"]);
    assert!(m.visible_at(26).is_empty());
    assert_eq!(m.len(), 12);

    let kinds: HashMap<String, VarKind> = (1..30)
        .flat_map(|l| m.visible_at(l))
        .map(|v| (v.name, v.kind))
        .collect();
    let int = |signed, bits| VarKind::Integer { signed, bits };
    assert_eq!(kinds["q"], VarKind::Pointer);
    assert_eq!(kinds["c"], int(true, 8));
    assert_eq!(
        kinds["v"],
        VarKind::Array {
            elem: Box::new(int(true, 16)),
            len: 3
        }
    );
    assert_eq!(
        kinds["m"],
        VarKind::Array {
            elem: Box::new(VarKind::Array {
                elem: Box::new(int(false, 32)),
                len: 3
            }),
            len: 2
        }
    );
    assert_eq!(
        kinds["st"],
        VarKind::Struct {
            fields: vec![("a".into(), int(true, 32))]
        }
    );
    assert_eq!(kinds["d"], VarKind::Other);
    let p = m.visible_at(5).remove(0);
    assert!(p.parameter);
    assert!(!m.visible_at(6)[2].parameter);
}

#[test]
fn kinds_of_desugared_types() {
    let int = |signed, bits| VarKind::Integer { signed, bits };
    let cases = [
        ("int", int(true, 32)),
        ("unsigned int", int(false, 32)),
        ("unsigned", int(false, 32)),
        ("signed char", int(true, 8)),
        ("unsigned char", int(false, 8)),
        ("char", int(true, 8)),
        ("_Bool", int(false, 8)),
        ("short", int(true, 16)),
        ("unsigned short", int(false, 16)),
        ("long", int(true, 64)),
        ("unsigned long", int(false, 64)),
        ("long long", int(true, 64)),
        ("const volatile unsigned long long", int(false, 64)),
        ("__int128", int(true, 128)),
        ("enum E", int(true, 32)),
        ("int *", VarKind::Pointer),
        ("const int *const", VarKind::Pointer),
        ("int **volatile", VarKind::Pointer),
        ("int (*)[3]", VarKind::Pointer),
        ("int (*)(int)", VarKind::Other),
        ("struct S", VarKind::Struct { fields: vec![] }),
        ("const struct S", VarKind::Struct { fields: vec![] }),
        ("struct S [2]", VarKind::Other),
        ("union U", VarKind::Other),
        ("double", VarKind::Other),
        ("long double", VarKind::Other),
        ("float [2]", VarKind::Other),
        ("int *[2]", VarKind::Other),
        ("int [n]", VarKind::Other),
        ("int []", VarKind::Other),
        ("void", VarKind::Other),
    ];
    for (ty, kind) in cases {
        assert_eq!(VarKind::of_c_type(ty), kind, "{ty}");
    }
    assert_eq!(
        VarKind::of_c_type("unsigned char [4]"),
        VarKind::Array {
            elem: Box::new(int(false, 8)),
            len: 4
        }
    );
}

const STRUCTS: &str = r#"#include <stdint.h>
struct S1 { int x; uint64_t y[2][3]; };
struct S0 { int32_t a; uint8_t b[2]; int *c; struct S1 d; const volatile int16_t e; };
typedef struct S0 S0_t;
typedef struct { int q; } T;
struct B { int f : 3; int g; };
struct F { double d; int i; };
struct O { struct In { short s; } in; union U { int a; } u; };
union U2 { int a; };
int main(void) {
  struct S0 s = {0}; S0_t t = {0}; const struct S1 r = {0}; T anon = {1};
  struct B b = {0}; struct F f = {0}; struct O o = {0}; union U2 u; struct S0 arr[2];
  return 0;
}
"#;

#[tokio::test]
async fn structs_get_their_fields_from_the_record_declarations() {
    for clang in ["clang", "clang-16", "clang-19"] {
        if process::which(clang).is_none() {
            continue;
        }
        let m = map_of(STRUCTS, clang).await;
        let kinds: HashMap<String, VarKind> = m.visible_at(13).into_iter().map(|v| (v.name, v.kind)).collect();
        let int = |signed, bits| VarKind::Integer { signed, bits };
        let arr = |elem: VarKind, len| VarKind::Array {
            elem: Box::new(elem),
            len,
        };
        let s1 = VarKind::Struct {
            fields: vec![
                ("x".into(), int(true, 32)),
                ("y".into(), arr(arr(int(false, 64), 3), 2)),
            ],
        };
        let s0 = VarKind::Struct {
            fields: vec![
                ("a".into(), int(true, 32)),
                ("b".into(), arr(int(false, 8), 2)),
                ("c".into(), VarKind::Pointer),
                ("d".into(), s1.clone()),
                ("e".into(), int(true, 16)),
            ],
        };
        assert_eq!(kinds["s"], s0, "{clang}");
        assert_eq!(kinds["t"], s0, "{clang}: a typedef of a struct");
        assert_eq!(kinds["r"], s1, "{clang}");
        // An unnamed struct behind a typedef is not resolved.
        assert_eq!(kinds["anon"], VarKind::Other, "{clang}");
        // Bit-fields make the whole struct unchecked.
        assert_eq!(kinds["b"], VarKind::Other, "{clang}");
        // Fields of other kinds are kept as such (the shadow skips them).
        assert_eq!(
            kinds["f"],
            VarKind::Struct {
                fields: vec![("d".into(), VarKind::Other), ("i".into(), int(true, 32))]
            },
            "{clang}"
        );
        assert_eq!(
            kinds["o"],
            VarKind::Struct {
                fields: vec![
                    (
                        "in".into(),
                        VarKind::Struct {
                            fields: vec![("s".into(), int(true, 16))]
                        }
                    ),
                    ("u".into(), VarKind::Other),
                ]
            },
            "{clang}"
        );
        assert_eq!(kinds["u"], VarKind::Other, "{clang}");
        assert_eq!(kinds["arr"], VarKind::Other, "{clang}");
    }
}

#[test]
fn array_elements_are_desugared_through_the_typedefs() {
    let int = |signed, bits| VarKind::Integer { signed, bits };
    let arr = |elem: VarKind, len| VarKind::Array {
        elem: Box::new(elem),
        len,
    };
    let typedefs = [
        ("int16_t", "short"),
        ("A", "int[3]"),
        ("P", "int *"),
        ("PA", "int (*)[3]"),
    ];
    let tables = TypeTables {
        typedefs: typedefs.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect(),
        records: HashMap::new(),
    };
    let cases = [
        ("volatile int16_t[3]", arr(int(true, 16), 3)),
        // Pointers to arrays stay pointers.
        ("int (*)[3]", VarKind::Pointer),
        ("int16_t (*)[3]", VarKind::Pointer),
        ("int (**)[3]", VarKind::Other),
        // An array of an array typedef: the typedef's dimension is the
        // innermost.
        ("A[2]", arr(arr(int(true, 32), 3), 2)),
        ("const A[2][4]", arr(arr(arr(int(true, 32), 3), 4), 2)),
        ("P[2]", VarKind::Other),
        ("PA[2]", VarKind::Other),
    ];
    for (ty, kind) in cases {
        assert_eq!(tables.kind_of(ty), kind, "{ty}");
    }
}

#[test]
fn struct_kinds_serialize_with_their_fields_and_old_ones_read_as_empty() {
    let k = VarKind::Struct {
        fields: vec![("a".into(), VarKind::Pointer)],
    };
    let j = serde_json::to_string(&k).unwrap();
    assert_eq!(j, r#"{"kind":"struct","fields":[["a",{"kind":"pointer"}]]}"#);
    assert_eq!(serde_json::from_str::<VarKind>(&j).unwrap(), k);
    assert_eq!(
        serde_json::from_str::<VarKind>(r#"{"kind":"struct"}"#).unwrap(),
        VarKind::Struct { fields: vec![] }
    );
    assert_eq!(k.name(), "struct");
}

#[test]
fn omitted_file_and_line_are_carried_over_and_included_from_is_not_a_file() {
    // Hand-made dump: a header function (dropped), then the main file's
    // function whose locations omit `file` and `line` when unchanged.
    let json = r#"{"kind":"TranslationUnitDecl","loc":{},"range":{"begin":{},"end":{}},"inner":[
          {"kind":"FunctionDecl","loc":{"offset":1,"file":"h.h","line":1,"col":1,"tokLen":1,
             "includedFrom":{"file":"m.c"}},"range":{"begin":{"offset":1,"col":1,"tokLen":1},
             "end":{"offset":9,"line":3,"col":1,"tokLen":1}},"name":"hf","inner":[
             {"kind":"CompoundStmt","range":{"begin":{"offset":5,"col":1,"tokLen":1},"end":{"offset":9,"col":1,"tokLen":1}},
              "inner":[{"kind":"DeclStmt","range":{"begin":{"offset":6,"line":2,"col":1,"tokLen":1},"end":{"offset":7,"col":2,"tokLen":1}},
                "inner":[{"kind":"VarDecl","loc":{"offset":6,"col":1,"tokLen":1},"range":{"begin":{"offset":6,"col":1,"tokLen":1},"end":{"offset":6,"col":1,"tokLen":1}},"name":"hv","type":{"qualType":"int"}}]}]}]},
          {"kind":"FunctionDecl","loc":{"offset":20,"file":"m.c","line":5,"col":5,"tokLen":1},
             "range":{"begin":{"offset":16,"col":1,"tokLen":3},"end":{"offset":40,"line":9,"col":1,"tokLen":1}},
             "name":"f","inner":[
             {"kind":"ParmVarDecl","loc":{"offset":26,"line":5,"col":11,"tokLen":1},"range":{"begin":{"offset":22,"col":7,"tokLen":3},"end":{"offset":26,"col":11,"tokLen":1}},"name":"x","type":{"qualType":"int32_t","desugaredQualType":"int"}},
             {"kind":"CompoundStmt","range":{"begin":{"offset":29,"line":6,"col":1,"tokLen":1},"end":{"offset":40,"line":9,"col":1,"tokLen":1}},
              "inner":[{"kind":"DeclStmt","range":{"begin":{"offset":31,"line":7,"col":3,"tokLen":3},
                   "end":{"spellingLoc":{"offset":3,"file":"h.h","line":1,"col":1,"tokLen":1,"includedFrom":{"file":"m.c"}},
                          "expansionLoc":{"offset":36,"file":"m.c","line":7,"col":8,"tokLen":1}}},
                "inner":[{"kind":"VarDecl","loc":{"offset":35,"col":7,"tokLen":1},"range":{"begin":{"offset":31,"col":3,"tokLen":3},"end":{"offset":35,"col":7,"tokLen":1}},"name":"y","type":{"qualType":"uint8_t","desugaredQualType":"unsigned char"}}]}]}]}
        ]}"#;
    let m = ScopeMap::from_clang_json(json.as_bytes(), "m.c").unwrap();
    assert_eq!(m.len(), 2);
    assert!(m.visible_at(2).is_empty());
    assert_eq!(names(&m.visible_at(7)), ["x:int32_t:5"]);
    let at8 = m.visible_at(8);
    assert_eq!(names(&at8), ["x:int32_t:5", "y:uint8_t:7"]);
    assert_eq!(at8[1].kind, VarKind::Integer { signed: false, bits: 8 });
    assert!(m.visible_at(10).is_empty());

    assert!(ScopeMap::from_clang_json(b"{\"kind\": ", "m.c").is_err());
    assert!(
        ScopeMap::from_clang_json(json.as_bytes(), "other.c")
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn missing_clang_and_compile_errors_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.c");
    std::fs::write(&f, "int main(void) { return x; }\n").unwrap();
    let err = scopes(&f, "clang", &[]).await.unwrap_err();
    assert!(err.contains("failed"), "{err}");
    let err = scopes(&f, "no-such-clang-doppel", &[]).await.unwrap_err();
    assert!(err.contains("not installed"), "{err}");
}

#[tokio::test]
async fn csmith_program_parameters_are_visible_in_their_bodies() {
    assert!(
        process::which("csmith").is_some(),
        "csmith is needed (apt-get install csmith libcsmith-dev)"
    );
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.c");
    // csmith writes platform.info into its working directory.
    let out = std::process::Command::new("csmith")
        .current_dir(dir.path())
        .args([
            "--seed",
            "7",
            "--no-unions",
            "--safe-math",
            "--no-argc",
            "--no-inline-function",
        ])
        .args(["--no-bitfields", "--no-return-structs", "--max-funcs", "5"])
        .output()
        .unwrap();
    std::fs::write(&f, &out.stdout).unwrap();
    let m = scopes(&f, "clang", &[PathBuf::from("/usr/include/csmith")])
        .await
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // Every function definition `static T func_N(params)` followed by `{`
    // on the next line: its parameters are visible on the line after `{`.
    let lines: Vec<&str> = text.lines().collect();
    let mut checked = 0;
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("static ") && l.contains(" func_") && !l.ends_with(';') && lines[i + 1].starts_with('{') {
            let params: Vec<String> = m
                .visible_at(i as u32 + 3)
                .into_iter()
                .filter(|v| v.parameter)
                .map(|v| v.name)
                .collect();
            let expected = l.matches("p_").count();
            assert_eq!(params.len(), expected, "{l}: {params:?}");
            checked += 1;
        }
    }
    assert!(checked >= 2, "{checked}");
    // Nothing is visible among the globals at the top of the file.
    assert!(m.visible_at(20).is_empty());
    // main: `{`, `int i, j, k;`, `int print_hash_value = 0;`, then calls.
    let main_line = lines.iter().position(|l| l.starts_with("int main")).unwrap() as u32 + 1;
    let at: Vec<String> = m.visible_at(main_line + 4).into_iter().map(|v| v.name).collect();
    assert_eq!(at, ["i", "j", "k", "print_hash_value"]);
}
