//! The JavaScript program transformations of ISSTA'19 section 3.2.2: exact
//! outputs on programs with a single candidate (or every possible output),
//! location maps, validity of the result, and the cases that must skip.

use doppel_lang::edit::Pos;
use doppel_lang::js::syntax_errors;
use doppel_lang::js::transform::{
    self, AddUnusedParameter, InsertDeadCode, InsertNoOp, LiteralToExpression, RemoveDeadCode,
};
use doppel_lang::transform::{
    Coverage, ExpectedVariable, ProgramInput, ProgramTransformation, ProgramTransformationKind, Skip, Transformed,
};
use rand::SeedableRng;
use rand::rngs::StdRng;

fn run_with(
    t: &dyn ProgramTransformation,
    source: &str,
    coverage: Option<&Coverage>,
    seed: u64,
) -> Result<Transformed, Skip> {
    let mut rng = StdRng::seed_from_u64(seed);
    let out = t.apply(ProgramInput::new(source, coverage), &mut rng);
    if let Ok(done) = &out {
        assert_eq!(syntax_errors(&done.text), Vec::<String>::new(), "{}", done.text);
        assert_eq!(done.kind, t.kind());
    }
    out
}

fn run(t: &dyn ProgramTransformation, source: &str, seed: u64) -> Result<Transformed, Skip> {
    run_with(t, source, None, seed)
}

/// Every output over a range of seeds.
fn outputs(t: &dyn ProgramTransformation, source: &str) -> Vec<Transformed> {
    (0..40).filter_map(|s| run(t, source, s).ok()).collect()
}

#[test]
fn all_registers_one_transformation_per_kind_in_order() {
    let kinds: Vec<_> = transform::all().iter().map(|t| t.kind()).collect();
    assert_eq!(kinds, ProgramTransformationKind::ALL.to_vec());
}

// ---- insert dead code -------------------------------------------------

#[test]
fn dead_code_goes_on_its_own_line_before_the_only_statement_with_a_variable() {
    let src = "function g(p) {\n  return p;\n}\ng(1);\n";
    let t = run(&InsertDeadCode, src, 7).unwrap();
    let expected: Vec<String> = (0..10)
        .map(|d| format!("function g(p) {{\n  if (false) {{ p = {d}; }}\n  return p;\n}}\ng(1);\n"))
        .collect();
    assert!(expected.contains(&t.text), "{}", t.text);
    assert_eq!(t.at, Pos::new(2, 3));
    assert_eq!(t.node, "ReturnStatement");
    assert!(t.description.contains("if (false) { p = "), "{}", t.description);
    assert_eq!(t.map.map(Pos::new(2, 3)), Some(Pos::new(3, 3)));
    assert_eq!(t.map.map(Pos::new(4, 1)), Some(Pos::new(5, 1)));
    assert_eq!(t.map.map_line(1), Some(1));
    assert_eq!(t.expect_variable, None);
}

#[test]
fn dead_code_is_deterministic_for_a_seed() {
    let src = "var a = 1;\nlet b = 2;\nfunction f(x) {\n  var y = x;\n  return y;\n}\nf(a + b);\n";
    for seed in 0..5 {
        assert_eq!(run(&InsertDeadCode, src, seed), run(&InsertDeadCode, src, seed));
    }
    assert!(outputs(&InsertDeadCode, src).len() == 40);
}

#[test]
fn dead_code_skips_without_a_program_variable() {
    // Only an implicit global, a const, a class and a function.
    let src = "x = 1;\nconst k = 2;\nclass C {}\nfunction h() {\n  return k;\n}\nh(x);\n";
    let e = run(&InsertDeadCode, src, 0).unwrap_err();
    assert_eq!(e.kind, ProgramTransformationKind::InsertDeadCode);
    assert!(e.reason.contains("no statement start"), "{}", e.reason);
    assert!(run(&InsertDeadCode, "console.log(1);\n", 0).is_err());
    assert!(run(&InsertDeadCode, "var a = ;\n", 0).is_err(), "does not parse");
}

// ---- insert no-op -----------------------------------------------------

#[test]
fn no_op_never_names_a_let_in_its_temporal_dead_zone() {
    let src = "{\n  foo();\n  let t = 1;\n  bar(t);\n}\n";
    let t = run(&InsertNoOp, src, 3).unwrap();
    assert_eq!(t.text, "{\n  foo();\n  let t = 1;\n  t = t;\n  bar(t);\n}\n");
    assert_eq!(t.at, Pos::new(4, 3));
    assert_eq!(t.node, "ExpressionStatement");
    assert_eq!(t.map.map(Pos::new(4, 3)), Some(Pos::new(5, 3)));
    assert_eq!(t.map.map(Pos::new(2, 3)), Some(Pos::new(2, 3)));
    assert_eq!(t.map.map_line(5), Some(6));
}

#[test]
fn no_op_uses_vars_and_parameters_anywhere_but_lets_only_in_their_own_function() {
    // `v` is a top-level let: a hoisted `f` may run before it is initialized.
    let src = "let v = 1;\nfunction f(p) {\n  return p;\n}\nf(v);\n";
    let all = outputs(&InsertNoOp, src);
    assert!(!all.is_empty());
    for t in &all {
        let lines: Vec<&str> = t.text.lines().collect();
        match lines.iter().position(|l| l.trim() == "v = v;" || l.trim() == "p = p;") {
            Some(1) | Some(4) => assert_eq!(lines[t.at.line as usize - 1].trim(), "v = v;", "{}", t.text),
            Some(2) => assert_eq!(lines[2].trim(), "p = p;", "{}", t.text),
            other => panic!("unexpected place {other:?}:\n{}", t.text),
        }
    }
    assert!(all.iter().any(|t| t.text.contains("  p = p;\n")));
}

#[test]
fn no_op_skips_with_switch_lets_consts_and_globals() {
    let with = "var o = {};\nwith (o) {\n  o.x = 1;\n}\n";
    assert!(run(&InsertNoOp, with, 0).is_err());
    let switch = "switch (1) {\n  case 0:\n    let s = 1;\n  case 1:\n    {\n      f(s);\n    }\n}\n";
    assert!(
        run(&InsertNoOp, switch, 0).is_err(),
        "{:?}",
        run(&InsertNoOp, switch, 0)
    );
    let consts = "const c = 1;\ng = c;\nf(g);\n";
    assert!(run(&InsertNoOp, consts, 0).is_err());
    let stack = "var e = new Error();\nconsole.log(e.stack);\n";
    assert!(run(&InsertNoOp, stack, 0).unwrap_err().reason.contains("stack"));
}

// ---- literal to expression --------------------------------------------

#[test]
fn an_integer_becomes_one_of_four_expressions_and_keys_stay() {
    let src = "var s = \"a\";\nvar o = { 5: s };\nconsole.log(o[7]);\n";
    let forms = ["(6+1)", "(8-1)", "(7/1)", "(7*1)"];
    let mut seen = Vec::new();
    for t in outputs(&LiteralToExpression, src) {
        let form = forms
            .iter()
            .find(|f| t.text == format!("var s = \"a\";\nvar o = {{ 5: s }};\nconsole.log(o[{f}]);\n"))
            .unwrap_or_else(|| panic!("{}", t.text));
        assert_eq!(t.at, Pos::new(3, 15));
        assert_eq!(t.node, "Literal");
        assert_eq!(
            t.map.map(Pos::new(3, 16)),
            Some(Pos::new(3, 20)),
            "`]` moves right by 4"
        );
        assert_eq!(t.map.map(Pos::new(2, 11)), Some(Pos::new(2, 11)));
        seen.push(*form);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 4, "all forms occur: {seen:?}");
}

#[test]
fn literal_values_are_exact_in_any_notation() {
    let t = run(&LiteralToExpression, "var h = 0x1F;\n", 1).unwrap();
    assert!(
        ["(30+1)", "(32-1)", "(31/1)", "(31*1)"]
            .iter()
            .any(|f| t.text == format!("var h = {f};\n")),
        "{}",
        t.text
    );
    let z = outputs(&LiteralToExpression, "var z = 0;\n");
    assert!(z.iter().all(|t| {
        ["(-1+1)", "(1-1)", "(0/1)", "(0*1)"]
            .iter()
            .any(|f| t.text == format!("var z = {f};\n"))
    }));
}

#[test]
fn literal_skips_keys_bigints_fractions_and_huge_numbers() {
    for src in [
        "var s = \"str\";\n",
        "var b = 10n;\n",
        "var f = 1.5;\n",
        "var big = 9007199254740992;\n",
        "var neg = -0.25;\n",
        "class A {\n  3() {}\n  static 4 = \"x\";\n}\n",
        "var o = { 1: \"a\" };\nvar { 2: q } = o;\n",
    ] {
        let e = run(&LiteralToExpression, src, 0).unwrap_err();
        assert!(e.reason.contains("no replaceable"), "{src}: {}", e.reason);
    }
}

#[test]
fn a_literal_starting_a_line_after_an_expression_is_not_parenthesized() {
    // `(1*1)` there would call the function expression.
    let src = "var b = function () {}\n1 + 2;\n";
    for t in outputs(&LiteralToExpression, src) {
        assert!(t.text.starts_with("var b = function () {}\n1 + ("), "{}", t.text);
    }
}

#[test]
fn booleans_use_a_variable_that_only_holds_primitives() {
    let src = "var n = 0;\nif (true) {\n  n++;\n}\n";
    let all = outputs(&LiteralToExpression, src);
    let b = all
        .iter()
        .find(|t| t.text.contains("isNaN"))
        .expect("the boolean is chosen for some seed");
    assert_eq!(b.text, "var n = 0;\nif ((isNaN(n) || n == n)) {\n  n++;\n}\n");
    assert_eq!(b.at, Pos::new(2, 5));
    let f = run(&LiteralToExpression, "var n = 0;\nwhile (false) {}\n", 0);
    let f = (0..20)
        .filter_map(|s| run(&LiteralToExpression, "var n = 0;\nwhile (false) {}\n", s).ok())
        .find(|t| t.text.contains("isNaN"))
        .unwrap_or_else(|| panic!("{f:?}"));
    assert_eq!(f.text, "var n = 0;\nwhile ((!isNaN(n) && n != n)) {}\n");
    // An object (valueOf could run), a let in its TDZ, a redefined isNaN.
    for src in [
        "var o = {};\nif (true) {}\n",
        "if (true) {}\nlet late;\n",
        "var n = 1;\nfunction isNaN() {}\nif (true) {}\n",
    ] {
        for t in outputs(&LiteralToExpression, src) {
            assert!(!t.text.contains("(isNaN") && !t.text.contains("(!isNaN"), "{}", t.text);
        }
    }
}

// ---- add unused parameter ---------------------------------------------

#[test]
fn a_fresh_parameter_goes_last_and_the_debugger_must_show_it() {
    let src = "function add(a, b) {\n  return a + b;\n}\nconsole.log(add(1, 2));\n";
    let t = run(&AddUnusedParameter, src, 0).unwrap();
    assert_eq!(
        t.text,
        "function add(a, b, __doppel_p1) {\n  return a + b;\n}\nconsole.log(add(1, 2));\n"
    );
    assert_eq!(t.at, Pos::new(1, 20));
    assert_eq!(t.node, "FunctionDeclaration");
    assert_eq!(
        t.expect_variable,
        Some(ExpectedVariable {
            function: "add".into(),
            lines: (1, 3),
            name: "__doppel_p1".into(),
            value: "undefined".into(),
        })
    );
    assert_eq!(t.map.map(Pos::new(1, 19)), Some(Pos::new(1, 32)), "`)` moves");
    assert_eq!(t.map.map(Pos::new(2, 3)), Some(Pos::new(2, 3)));
}

#[test]
fn function_expressions_and_empty_parameter_lists() {
    let src = "var sq = function (x) {\n  return x * x;\n};\nsq(3);\n";
    let t = run(&AddUnusedParameter, src, 0).unwrap();
    assert_eq!(
        t.text,
        "var sq = function (x, __doppel_p1) {\n  return x * x;\n};\nsq(3);\n"
    );
    assert_eq!(t.node, "FunctionExpression");
    assert_eq!(t.expect_variable.unwrap().function, "sq");
    let src = "function f() {\n  return 1;\n}\nf();\n";
    let t = run(&AddUnusedParameter, src, 0).unwrap();
    assert_eq!(t.text, "function f(__doppel_p1) {\n  return 1;\n}\nf();\n");
    assert_eq!(t.at, Pos::new(1, 12));
    let taken = "var __doppel_p1 = 0;\nfunction f() {\n  return 1;\n}\nf();\n";
    assert!(
        run(&AddUnusedParameter, taken, 0)
            .unwrap()
            .text
            .contains("function f(__doppel_p2)")
    );
}

#[test]
fn functions_that_could_observe_the_parameter_are_not_changed() {
    for src in [
        "function f(x) {}\nvar g = f;\nf(1);\n",
        "function f(x) {\n  return arguments.length;\n}\nf(1);\n",
        "function f(x) {}\nf(1, 2);\n",
        "function f(...r) {}\nf();\n",
        "function f(x) {}\nf(...[1]);\n",
        "function f(x) {}\nf(1);\nconsole.log(f.toString());\n",
        "function f(x) {}\nf(1);\nthis.f(1, 2);\n",
        "function f(x) {}\n[1].forEach(f);\n",
        "function run() {}\n",
        "var o = { m(x) {}, get g() { return 1; } };\no.m(1);\n",
        "var a = (x) => x;\na(1);\n",
    ] {
        let e = run(&AddUnusedParameter, src, 0).unwrap_err();
        assert_eq!(e.kind, ProgramTransformationKind::AddUnusedParameter, "{src}");
    }
}

// ---- remove dead code -------------------------------------------------

const DEAD: &str = "function used(x) {\n  if (x > 10) {\n    console.log(\"big\");\n    x = 0;\n  }\n  return x;\n}\nfunction unused() {\n  return 1;\n}\nused(3);\n";

fn dead_coverage() -> Coverage {
    Coverage {
        dead: vec![(Pos::new(2, 15), Pos::new(5, 4)), (Pos::new(8, 1), Pos::new(10, 2))],
    }
}

#[test]
fn dead_blocks_are_emptied_and_dead_functions_removed() {
    let cov = dead_coverage();
    let all: Vec<Transformed> = (0..20)
        .filter_map(|s| run_with(&RemoveDeadCode, DEAD, Some(&cov), s).ok())
        .collect();
    let block = all
        .iter()
        .find(|t| t.node == "BlockStatement")
        .expect("the block is chosen");
    assert_eq!(
        block.text,
        "function used(x) {\n  if (x > 10) {}\n  return x;\n}\nfunction unused() {\n  return 1;\n}\nused(3);\n"
    );
    assert_eq!(block.at, Pos::new(2, 15));
    assert_eq!(block.map.map_line(3), None);
    assert_eq!(block.map.map(Pos::new(6, 3)), Some(Pos::new(3, 3)));
    assert_eq!(block.map.map_line(11), Some(8));
    assert_eq!(
        block.breakability_may_change,
        vec![2],
        "the `if` line, which now holds the `}}` too"
    );
    let func = all
        .iter()
        .find(|t| t.node == "FunctionDeclaration")
        .expect("the function is chosen");
    assert_eq!(
        func.text,
        "function used(x) {\n  if (x > 10) {\n    console.log(\"big\");\n    x = 0;\n  }\n  return x;\n}\nused(3);\n"
    );
    assert_eq!(func.map.map_line(9), None);
    assert_eq!(func.map.map_line(11), Some(8));
    assert_eq!(func.map.map(Pos::new(6, 3)), Some(Pos::new(6, 3)));
    assert!(
        func.breakability_may_change.is_empty(),
        "whole lines went: no line holds other code than before"
    );
}

#[test]
fn breakability_may_change_from_the_statement_head_to_the_emptied_block() {
    // A multi-line `if` head, and an `else` block after the consequent.
    let src = "var x = 1;\nif (x > 10 &&\n    x < 20)\n{\n  x = 0;\n}\nelse {\n  x = 2;\n}\nif (x) {\n  x = 3;\n} else {\n  x = 4;\n}\n";
    let head = Coverage {
        dead: vec![(Pos::new(4, 1), Pos::new(6, 2))],
    };
    let t = run_with(&RemoveDeadCode, src, Some(&head), 0).unwrap();
    assert!(
        t.text
            .starts_with("var x = 1;\nif (x > 10 &&\n    x < 20)\n{}\nelse {\n"),
        "{}",
        t.text
    );
    assert_eq!(t.breakability_may_change, vec![2, 3, 4]);
    let alternate = Coverage {
        dead: vec![(Pos::new(12, 8), Pos::new(14, 2))],
    };
    let t = run_with(&RemoveDeadCode, src, Some(&alternate), 0).unwrap();
    assert!(t.text.ends_with("if (x) {\n  x = 3;\n} else {}\n"), "{}", t.text);
    assert_eq!(
        t.breakability_may_change,
        vec![12],
        "the `else` line, not the `if` line"
    );
}

#[test]
fn dead_code_removal_skips_without_coverage_or_safe_candidates() {
    assert!(run(&RemoveDeadCode, DEAD, 0).unwrap_err().reason.contains("coverage"));
    let none = Coverage::default();
    assert!(run_with(&RemoveDeadCode, DEAD, Some(&none), 0).is_err());
    // A `var` in the dead block, a referenced dead function.
    let src = "function f(x) {\n  if (x) {\n    var y = 1;\n  }\n}\nfunction g() {}\nif (0) {\n  g();\n}\nf(0);\n";
    let cov = Coverage {
        dead: vec![
            (Pos::new(2, 10), Pos::new(4, 4)),
            (Pos::new(6, 1), Pos::new(6, 16)),
            (Pos::new(7, 8), Pos::new(9, 2)),
        ],
    };
    let all: Vec<Transformed> = (0..20)
        .filter_map(|s| run_with(&RemoveDeadCode, src, Some(&cov), s).ok())
        .collect();
    assert!(!all.is_empty());
    for t in all {
        assert_eq!(t.node, "BlockStatement");
        assert!(
            t.text.contains("if (0) {}\n") && t.text.contains("var y = 1;"),
            "{}",
            t.text
        );
    }
}

/// Smoke run over the bundled JavaScript corpus (`corpus/js`): every
/// transformation with two seeds, no panic, every output parses, and every
/// program prints the same before and after under node.
#[test]
fn bundled_corpus_smoke() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/js");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    let mut done = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let before = node_output(&src);
        for t in transform::all() {
            for seed in 0..2 {
                if let Ok(out) = run(t.as_ref(), &src, seed) {
                    done += 1;
                    assert_eq!(before, node_output(&out.text), "{}: {}", f.display(), out.description);
                }
            }
        }
    }
    assert!(
        done > 2 * files.len(),
        "{done} transformations on {} files",
        files.len()
    );
}

/// Smoke run over the shared JavaScript corpus (test262 and SunSpider, the
/// first 600 files): no panic, every output parses, and a SunSpider
/// program prints the same before and after (needs node, ~30 s).
#[test]
#[ignore = "needs ../shared"]
fn corpus_smoke() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/js");
    assert!(root.is_dir(), "the shared corpus is missing: {}", root.display());
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "js") && !p.to_string_lossy().contains("harness") {
                files.push(p);
            }
        }
    }
    files.sort();
    files.truncate(600);
    let mut done = 0;
    for f in &files {
        let Ok(src) = std::fs::read_to_string(f) else { continue };
        for t in transform::all() {
            for seed in 0..2 {
                if let Ok(out) = run(t.as_ref(), &src, seed) {
                    done += 1;
                    if f.to_string_lossy().contains("sunspider") {
                        let a = node_output(&src);
                        let b = node_output(&out.text);
                        assert_eq!(a, b, "{}: {}", f.display(), out.description);
                    }
                }
            }
        }
    }
    eprintln!("{done} transformations on {} files", files.len());
    assert!(
        files.len() >= 600 && done > files.len(),
        "{done} transformations on {} files",
        files.len()
    );
}

fn node_output(src: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.js");
    std::fs::write(
        &p,
        format!("Math.random = () => 0.5; Date.now = () => 0;\n{src}\n;typeof run === 'function' && run();\n"),
    )
    .unwrap();
    let out = std::process::Command::new("node").arg(&p).output().unwrap();
    format!("{}{}", String::from_utf8_lossy(&out.stdout), out.status)
}
