//! C programs (tests/c/*.c) built with clang-16 for wasm32-wasi: concrete and
//! symbolic runs must print what node's WASI prints and end alike; line
//! coverage and user-code branch records come from the module's DWARF.

mod support;

use doppel_concolic::{BranchFilter, Inputs, Module, RunConfig, Symbolic};
use support::{compile_c, node, ours};

fn check(name: &str, cases: &[(&[u8], &[&str])], files: &[(&str, &[u8])]) {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(format!("{}/tests/c/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let wasm = compile_c(dir.path(), name, &source);
    for (f, data) in files {
        std::fs::write(dir.path().join(f), data).unwrap();
    }
    let files: Vec<(String, Vec<u8>)> = files.iter().map(|(f, d)| (f.to_string(), d.to_vec())).collect();
    let module = Module::decode(&std::fs::read(&wasm).unwrap()).expect("decode");
    for (stdin, args) in cases {
        let want = node(&wasm, stdin, args, dir.path());
        for sym in [Symbolic::NONE, Symbolic::ALL] {
            let (got, run) = ours(&module, stdin, args, files.clone(), sym);
            assert_eq!(
                got,
                want,
                "{name} on {:?} {args:?} (symbolic: {})\nours: {}\nnode: {}",
                String::from_utf8_lossy(stdin),
                sym.any(),
                String::from_utf8_lossy(&got.stdout),
                String::from_utf8_lossy(&want.stdout)
            );
            for c in &run.path {
                let input = Inputs {
                    stdin: stdin.to_vec(),
                    args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
                    files: files.clone(),
                    ..Default::default()
                };
                assert_eq!(
                    run.arena.eval(c.expr, &|v| input.byte(v).unwrap()),
                    1,
                    "{name}: constraint false on its own input"
                );
            }
        }
    }
}

#[test]
fn classify_agrees_with_node() {
    check(
        "classify.c",
        &[
            (b"5\n", &[]),
            (b"-17 0 3 999 123456\n", &[]),
            (b"", &[]),
            (b"12 x 4", &[]),
            (b"2147483647 -2147483648\n", &[]),
        ],
        &[],
    );
}

#[test]
fn words_agree_with_node() {
    check("words.c", &[(b"hello World 42abc\nstop Zebra\n", &[]), (b"", &[])], &[]);
}

#[test]
fn numeric_agrees_with_node() {
    check(
        "numeric.c",
        &[
            (b"2.25 -3.5 1000000000007\n", &[]),
            (b"-0.0 0 -9223372036854775807", &[]),
            (b"1e10 7 -5\n", &[]),
            (b"x", &[]),
        ],
        &[],
    );
}

#[test]
fn argv_and_files_agree_with_node() {
    check(
        "argsfile.c",
        &[
            (b"", &["in.txt"]),
            (b"", &["in.txt", "-v"]),
            (b"", &["missing.txt"]),
            (b"", &[]),
        ],
        &[("in.txt", b"one\ntwo\nthree\n")],
    );
}

#[test]
fn recursion_and_indirect_calls_agree_with_node() {
    check(
        "recurse.c",
        &[(b"10\n", &[]), (b"0", &[]), (b"20\n", &[]), (b"99\n", &[])],
        &[],
    );
}

#[test]
fn user_branches_and_line_coverage_come_from_dwarf() {
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(format!("{}/tests/c/classify.c", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let wasm = compile_c(dir.path(), "classify.c", &source);
    let module = Module::decode(&std::fs::read(&wasm).unwrap()).unwrap();
    let config = RunConfig {
        inputs: Inputs {
            stdin: b"5\n".to_vec(),
            ..Default::default()
        },
        symbolic: Symbolic::ALL,
        branches: BranchFilter::Files(vec!["classify.c".into()]),
        coverage: true,
        ..Default::default()
    };
    let run = doppel_concolic::run(&module, &config);
    assert!(!run.branches.is_empty());
    let mut lines = Vec::new();
    for b in &run.branches {
        let loc = module.source_loc(b.offset).expect("user branch has a line");
        assert!(loc.file.ends_with("classify.c"), "{loc:?}");
        lines.push((loc.line, loc.function.clone()));
    }
    // `if (n < 0)` in size() on line 5, the loop condition in main on line 15.
    assert!(lines.contains(&(5, "size".to_string())), "{lines:?}");
    assert!(lines.iter().any(|(l, f)| *l == 15 && f == "main"), "{lines:?}");
    // n = 5 depends on the input: the branch on line 5 is symbolic.
    assert!(
        run.branches
            .iter()
            .any(|b| module.source_loc(b.offset).unwrap().line == 5 && b.constraint.is_some())
    );
    let user_lines: Vec<u32> = run
        .lines
        .iter()
        .filter(|(f, _)| f.ends_with("classify.c"))
        .map(|(_, l)| *l)
        .collect();
    for l in [5, 6, 7, 15, 16, 17, 18, 21, 29] {
        assert!(user_lines.contains(&l), "line {l} executed: {user_lines:?}");
    }
    assert!(!user_lines.contains(&9), "line 9 (medium) not executed: {user_lines:?}");
}
