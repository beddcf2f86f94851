//! Seed synthesis on a small grammar written here in ESMeta's JSON shape
//! (parameters, conditions, a lookahead, an optional, lexical productions
//! with "but not"), and on the real ES2025 grammar from ../shared.

use doppel_conform::grammar::{GrammarError, ProductionKind, Symbol};
use doppel_conform::shortest::Shortest;
use doppel_conform::{Grammar, synthesize};
use serde_json::{Value, json};

fn nt(name: &str, args: &[(&str, &str)]) -> Value {
    let args: Vec<Value> = args.iter().map(|(n, k)| json!({"kind": {*k: {}}, "name": n})).collect();
    json!({"name": name, "args": args})
}

fn t(s: &str) -> Value {
    json!({"term": s})
}

fn alt(conditions: &[(&str, bool)], symbols: Vec<Value>) -> Value {
    let c: Vec<Value> = conditions.iter().map(|(n, p)| json!({"name": n, "pass": p})).collect();
    json!({"conditions": c, "symbols": symbols, "id": null})
}

fn prod(name: &str, params: &[&str], kind: &str, alts: Vec<Value>) -> Value {
    json!({"lhs": {"name": name, "params": params}, "kind": {kind: {}}, "oneof": false, "rhsVec": alts})
}

/// Script : StatementList[~Yield]?
/// StatementList[Yield] : Statement[?Yield] | StatementList[?Yield] Statement[?Yield]
/// Statement[Yield] : ExpressionStatement[?Yield] | `{` StatementList[?Yield]? `}`
///                  | [+Yield] `yield` `;` | `function` `*` Identifier `(` `)` `{` StatementList[+Yield] `}`
/// ExpressionStatement[Yield] : [lookahead ∉ { `{` }] Expression `;`
/// Expression : Identifier | `{` `}`
/// Unused : `never`
/// Identifier :: IdentifierName but not ReservedWord
/// IdentifierName :: IdentifierChar | IdentifierName IdentifierChar
/// IdentifierChar :: <any code point with ID_Start>
/// ReservedWord :: `yield` | `function` | `a`
fn small() -> Grammar {
    let y = [("Yield", "Pass")];
    let text = json!({"prods": [
        prod("Script", &[], "Syntactic", vec![alt(&[], vec![json!({"symbol": nt("StatementList", &[("Yield", "False")])})])]),
        prod("StatementList", &["Yield"], "Syntactic", vec![
            alt(&[], vec![nt("Statement", &y)]),
            alt(&[], vec![nt("StatementList", &y), nt("Statement", &y)]),
        ]),
        prod("Statement", &["Yield"], "Syntactic", vec![
            alt(&[], vec![nt("ExpressionStatement", &y)]),
            alt(&[], vec![t("{"), json!({"symbol": nt("StatementList", &y)}), t("}")]),
            alt(&[("Yield", true)], vec![t("yield"), t(";")]),
            alt(&[], vec![t("function"), t("*"), nt("Identifier", &[]), t("("), t(")"), t("{"),
                nt("StatementList", &[("Yield", "True")]), t("}")]),
        ]),
        prod("ExpressionStatement", &["Yield"], "Syntactic", vec![
            alt(&[], vec![json!({"contains": false, "cases": [[t("{")]]}), nt("Expression", &[]), t(";")]),
        ]),
        prod("Expression", &[], "Syntactic", vec![
            alt(&[], vec![nt("Identifier", &[])]),
            alt(&[], vec![t("{"), t("}")]),
        ]),
        prod("Unused", &[], "Syntactic", vec![alt(&[], vec![t("never")])]),
        prod("Identifier", &[], "Lexical", vec![
            alt(&[], vec![json!({"base": nt("IdentifierName", &[]), "notCases": [nt("ReservedWord", &[])]})]),
        ]),
        prod("IdentifierName", &[], "Lexical", vec![
            alt(&[], vec![nt("IdentifierChar", &[])]),
            alt(&[], vec![nt("IdentifierName", &[]), nt("IdentifierChar", &[])]),
        ]),
        prod("IdentifierChar", &[], "Lexical", vec![alt(&[], vec![json!({"cpCond": "with the Unicode property “ID_Start”"})])]),
        prod("ReservedWord", &[], "Lexical", vec![
            alt(&[], vec![t("yield")]), alt(&[], vec![t("function")]), alt(&[], vec![t("a")]),
        ]),
    ], "prodsForWeb": []});
    Grammar::parse(&text.to_string()).expect("the small grammar parses")
}

#[test]
fn the_model_keeps_parameters_conditions_lookaheads_and_kinds() {
    let g = small();
    let st = g.production("Statement").unwrap();
    assert_eq!(st.params, ["Yield"]);
    assert_eq!(st.alternatives[2].conditions, [("Yield".to_string(), true)]);
    let es = g.production("ExpressionStatement").unwrap();
    assert!(matches!(&es.alternatives[0].symbols[0], Symbol::Lookahead { contains: false, cases } if cases.len() == 1));
    assert_eq!(g.production("Identifier").unwrap().kind, ProductionKind::Lexical);
    assert!(matches!(
        &g.production("Identifier").unwrap().alternatives[0].symbols[0],
        Symbol::ButNot { .. }
    ));
}

#[test]
fn shortest_strings_honour_parameters_and_but_not() {
    let g = small();
    let s = Shortest::compute(&g, &["Script"]).unwrap();
    let inst = |name: &str, mask| doppel_conform::shortest::Instance {
        production: g.index_of(name).unwrap(),
        mask,
    };
    // `a` is a reserved word here, so the shortest identifier is the next probe.
    assert_eq!(s.value(inst("Identifier", 0)).unwrap(), ["b"]);
    // `{ }` and `b ;` tie; the first found stays (only strictly shorter wins).
    assert_eq!(s.value(inst("Statement", 0)).unwrap(), ["{", "}"]);
    assert_eq!(s.value(inst("ExpressionStatement", 0)).unwrap(), ["b", ";"]);
    // `yield ;` is longer than `{ }`; under ~Yield it is not even a candidate.
    assert_eq!(s.value(inst("Statement", 1)).unwrap(), ["{", "}"]);
    assert_eq!(s.value(inst("Script", 0)).unwrap().len(), 0);
    // Unused is not reachable from Script.
    assert!(!s.reachable.contains(&inst("Unused", 0)));
}

#[test]
fn one_program_per_reachable_alternative_with_coverage() {
    let g = small();
    let syn = synthesize(&g, "Script").unwrap();
    let programs: Vec<(&str, usize, &str)> = syn
        .seeds
        .iter()
        .map(|s| (s.production.as_str(), s.alternative, s.program.as_str()))
        .collect();
    assert!(programs.contains(&("Statement", 1, "{ }")), "{programs:?}");
    // `yield ;` only inside a generator body: the +Yield condition is honoured.
    assert!(
        programs.contains(&("Statement", 2, "function * b ( ) { yield ; }")),
        "{programs:?}"
    );
    assert!(
        programs.contains(&("Statement", 3, "function * b ( ) { { } }")),
        "{programs:?}"
    );
    assert!(programs.contains(&("StatementList", 1, "{ } { }")), "{programs:?}");
    assert!(programs.contains(&("Expression", 0, "b ;")), "{programs:?}");
    assert!(programs.contains(&("Script", 0, "")), "{programs:?}");
    // Expression `{ }` is reachable only after the lookahead ∉ { `{` }: not reached.
    assert_eq!(syn.coverage.missed, ["Expression#1"]);
    assert_eq!(syn.coverage.reachable, 10);
    assert_eq!(syn.coverage.reached, 9);
    assert_eq!(syn.seeds.len(), 9);
}

#[test]
fn unknown_goal_and_missing_file_are_clear_errors() {
    let g = small();
    assert!(synthesize(&g, "Module").unwrap_err().contains("Module"));
    let err = Grammar::load(std::path::Path::new("/nonexistent/grammar.json")).unwrap_err();
    assert!(matches!(err, GrammarError::Read { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("/nonexistent/grammar.json") && msg.contains("--grammar"),
        "{msg}"
    );
    let bad = Grammar::parse(
        r#"{"prods": [{"lhs": {"name": "X", "params": []}, "kind": {"Weird": {}}, "oneof": false, "rhsVec": []}]}"#,
    );
    assert!(bad.unwrap_err().to_string().contains("X: unknown `kind`"));
}

fn es2025() -> Grammar {
    // ../shared beside the repository, or DOPPEL_SHARED (as the other crates).
    let shared = std::env::var_os("DOPPEL_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let path = shared.join("data/ecmascript-grammar/grammar.json");
    Grammar::load(&path).expect("the ES2025 grammar loads")
}

#[test]
#[ignore = "needs ../shared"]
fn es2025_loads_and_every_reachable_production_has_a_shortest_string() {
    let g = es2025();
    assert!(g.productions.len() > 300);
    let s = Shortest::compute(&g, &["Script", "Module"]).unwrap();
    let missing: Vec<String> = s
        .reachable
        .iter()
        .filter(|i| s.value(**i).is_none())
        .map(|i| format!("{}{:?}", g.productions[i.production].name, s.true_params(*i)))
        .collect();
    assert!(missing.is_empty(), "no shortest string: {missing:?}");
}

#[test]
#[ignore = "needs ../shared"]
fn es2025_script_seeds_cover_the_syntax() {
    let g = es2025();
    let syn = synthesize(&g, "Script").unwrap();
    eprintln!(
        "syntax coverage {}/{} = {:.2}%, missed {:?}",
        syn.coverage.reached,
        syn.coverage.reachable,
        100.0 * syn.coverage.ratio(),
        syn.coverage.missed
    );
    for s in syn.seeds.iter().take(400) {
        eprintln!("{}#{} {:?}: {}", s.production, s.alternative, s.params, s.program);
    }
    assert_eq!(syn.seeds.len(), syn.coverage.reached);
    assert!(syn.coverage.ratio() > 0.95, "{:?}", syn.coverage);
}

#[test]
#[ignore = "needs ../shared"]
fn es2025_script_seeds_accepted_by_oxc_cover_the_syntax() {
    // JEST's measure (§III-A, 97.78% for ES2019): alternatives with a program
    // a real parser accepts, early errors included, over reachable ones.
    let g = es2025();
    let syn = doppel_conform::synthesize_checked(&g, "Script").unwrap();
    eprintln!(
        "oxc-accepted syntax coverage {}/{} = {:.2}%, missed {:?}",
        syn.coverage.reached,
        syn.coverage.reachable,
        100.0 * syn.coverage.ratio(),
        syn.coverage.missed
    );
    for s in &syn.seeds {
        assert!(
            doppel_conform::seed_check::oxc_check(&s.program).is_ok(),
            "{}",
            s.program
        );
    }
    assert_eq!(syn.seeds.len(), syn.coverage.reached);
    assert!(syn.coverage.ratio() > 0.93, "{:?}", syn.coverage);
}
