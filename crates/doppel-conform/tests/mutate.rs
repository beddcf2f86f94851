//! The five mutators of JEST and doppel's activation on hand-written pool programs: each output is accepted
//! by oxc, differs from its parent in the way the mutator claims, and is the
//! same for the same seed. The random mutator's grammar mode runs on the
//! real ES2025 grammar from ../shared.

use doppel_conform::Grammar;
use doppel_conform::mutate::diverters::legal;
use doppel_conform::mutate::nearest::{nearest_program, select_target, shared_depth};
use doppel_conform::mutate::{Mutant, MutationContext, Mutator, registry};
use doppel_conform::pool::{Kept, Origin};
use doppel_conform::seed_builtins::{Builtin, SpecVocabulary};
use doppel_conform::seed_check::{Context, oxc_check};
use doppel_conform::seed_random::{Palette, derive, shortest_for_derivations};
use doppel_conform::shortest::Shortest;
use doppel_engines::Outcome;
use doppel_engines::coverage::{Algorithm, Catalogue, CoverageUnion, ProgramCoverage, Step};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn kept(source: &str, algorithms: &[u32], steps: &[u32]) -> Kept {
    Kept {
        source: source.into(),
        origin: Origin::Builtin,
        outcome: Outcome::Normal,
        coverage: ProgramCoverage {
            algorithms: algorithms.to_vec(),
            steps: steps.to_vec(),
        },
        new_algorithms: 1,
        new_steps: 1,
    }
}

/// Algorithm 0 `IsLooselyEqual` with steps 1, 1.a, 1.a.i, 2; algorithm 1 `ToNumber` with step 1.
fn catalogue() -> Catalogue {
    let alg = |name: &str| Algorithm {
        id: name.into(),
        name: name.into(),
        kind: "operation".into(),
        source: String::new(),
    };
    let step = |algorithm: usize, label: &str, name: &str| Step {
        id: format!("{name}:{label}"),
        algorithm,
        label: label.into(),
        top: !label.contains('.'),
        source: String::new(),
    };
    Catalogue {
        engine262: "test".into(),
        edition: "ES2025".into(),
        algorithms: vec![alg("IsLooselyEqual"), alg("ToNumber")],
        steps: vec![
            step(0, "1", "IsLooselyEqual"),
            step(0, "1.a", "IsLooselyEqual"),
            step(0, "1.a.i", "IsLooselyEqual"),
            step(0, "2", "IsLooselyEqual"),
            step(1, "1", "ToNumber"),
        ],
    }
}

fn vocabulary() -> SpecVocabulary {
    SpecVocabulary {
        builtins: vec![Builtin {
            path: "Array.prototype.join".into(),
            length: 1,
            constructor: false,
        }],
        property_keys: vec!["length".into(), "lastIndex".into(), "0".into()],
        symbols: vec!["Symbol.iterator".into(), "Symbol.toPrimitive".into()],
        strings: vec!["default".into(), "number".into(), "[object Undefined]".into()],
    }
}

struct Fixture {
    pool: Vec<Kept>,
    union: CoverageUnion,
    catalogue: Catalogue,
    vocabulary: SpecVocabulary,
    palette: Palette,
}

fn fixture(sources: &[(&str, &[u32], &[u32])]) -> Fixture {
    let pool: Vec<Kept> = sources.iter().map(|(s, a, st)| kept(s, a, st)).collect();
    let mut union = CoverageUnion::default();
    for k in &pool {
        union.add(&k.coverage);
    }
    Fixture {
        pool,
        union,
        catalogue: catalogue(),
        vocabulary: vocabulary(),
        palette: Palette::default(),
    }
}

fn ctx<'a>(f: &'a Fixture, grammar: Option<&'a Shortest<'a>>) -> MutationContext<'a> {
    MutationContext {
        pool: &f.pool,
        covered: &f.union,
        catalogue: &f.catalogue,
        vocabulary: &f.vocabulary,
        grammar,
        palette: &f.palette,
    }
}

fn mutator(name: &str) -> Box<dyn Mutator> {
    registry().into_iter().find(|m| m.name() == name).expect(name)
}

/// Mutants for seeds 0..n (those that exist), checked to parse and to be
/// the same when drawn again with the same seed.
fn mutants(m: &dyn Mutator, c: &MutationContext<'_>, n: u64) -> Vec<Mutant> {
    let mut out = Vec::new();
    for seed in 0..n {
        let a = m.mutate(c, &mut ChaCha8Rng::seed_from_u64(seed));
        let b = m.mutate(c, &mut ChaCha8Rng::seed_from_u64(seed));
        assert_eq!(a, b, "{} is deterministic for seed {seed}", m.name());
        if let Some(a) = a {
            assert!(oxc_check(&a.source).is_ok(), "{}: {}", m.name(), a.source);
            assert_ne!(a.source, c.pool[a.parent].source);
            out.push(a);
        }
    }
    assert!(
        out.len() as u64 >= n / 2,
        "{} produced only {} mutants",
        m.name(),
        out.len()
    );
    out
}

const PROGRAMS: &[(&str, &[u32], &[u32])] = &[
    ("var s = 'abc'; var o = { a: 1 }; o.a + s.length;", &[0], &[0]),
    (
        "for (var i = 0; i < 3; i++) { if (i == 1) { s += i; } } function g(x) { return x * 2; } g(i);",
        &[0, 1],
        &[0, 1, 4],
    ),
];

#[test]
fn every_mutator_is_registered_once() {
    let names: Vec<&str> = registry().iter().map(|m| m.name()).collect();
    assert_eq!(names, ["random", "nearest", "string", "object", "diverter", "activate"]);
}

#[test]
fn activation_calls_what_a_pool_program_defines() {
    let f = fixture(&[
        ("function g(x) { return x * 2; }", &[0], &[0]),
        ("var [a] = 0; var h = function* () { yield a; };", &[0], &[0]),
    ]);
    let c = ctx(&f, None);
    let all = mutants(mutator("activate").as_ref(), &c, 20);
    let sources: Vec<&str> = all.iter().map(|m| m.source.as_str()).collect();
    assert!(
        sources.iter().any(|s| s.contains("g();") || s.contains("g([0, 1]);")),
        "{sources:?}"
    );
    assert!(
        sources
            .iter()
            .any(|s| s.contains("var [a] = [0, 1]") && s.contains(".next(0)")),
        "{sources:?}"
    );
}

#[test]
fn random_mutation_splices_a_subtree_of_the_same_kind_without_a_grammar() {
    let f = fixture(PROGRAMS);
    let c = ctx(&f, None);
    for m in mutants(mutator("random").as_ref(), &c, 20) {
        assert!(
            m.detail.starts_with("expression ") || m.detail.starts_with("statement "),
            "{}",
            m.detail
        );
        if m.detail.starts_with("expression ") {
            assert!(
                m.source.contains('('),
                "a spliced expression is parenthesized: {}",
                m.source
            );
        }
    }
}

#[test]
fn nearest_picks_the_program_sharing_the_longest_step_prefix() {
    // P0 took IsLooselyEqual step 1, P1 steps 1 and 1.a (and ToNumber), P2 nothing of them.
    let f = fixture(&[
        ("1 == 1;", &[0], &[0]),
        ("'1' == 1; +'2';", &[0, 1], &[0, 1, 4]),
        ("var q;", &[], &[]),
    ]);
    let c = ctx(&f, None);
    assert_eq!(shared_depth("1.a.i", "1.a"), 2);
    assert_eq!(nearest_program(&c, 2), Some(1), "1.a.i: the program that took 1.a");
    assert_eq!(
        nearest_program(&c, 3),
        Some(0),
        "2: a tie at depth 1, the smaller program"
    );
    // Targets are uncovered steps of covered algorithms only: 1.a.i or 2.
    for seed in 0..10 {
        let t = select_target(&c, &mut ChaCha8Rng::seed_from_u64(seed)).unwrap();
        assert!(t == 2 || t == 3, "target {t}");
    }
    for m in mutants(mutator("nearest").as_ref(), &c, 10) {
        let toward_sub = m.detail.starts_with("toward IsLooselyEqual:1.a.i:");
        let toward_2 = m.detail.starts_with("toward IsLooselyEqual:2:");
        assert!(toward_sub || toward_2, "{}", m.detail);
        assert_eq!(m.parent, if toward_sub { 1 } else { 0 }, "{}", m.detail);
    }
}

#[test]
fn string_substitution_uses_spec_strings() {
    let f = fixture(PROGRAMS);
    let c = ctx(&f, None);
    let spec: Vec<String> = f
        .vocabulary
        .strings
        .iter()
        .chain(&f.vocabulary.property_keys)
        .map(|s| format!("'{s}'"))
        .collect();
    for m in mutants(mutator("string").as_ref(), &c, 20) {
        assert!(spec.iter().any(|s| m.source.contains(s.as_str())), "{}", m.source);
        assert!(m.detail.starts_with("string "), "{}", m.detail);
    }
}

#[test]
fn object_substitution_uses_spec_keys_and_well_known_symbols() {
    let f = fixture(PROGRAMS);
    let c = ctx(&f, None);
    let ms = mutants(mutator("object").as_ref(), &c, 30);
    let mut kinds = (0, 0);
    for m in &ms {
        let spec = ["length", "lastIndex", "'0'", "Symbol.iterator", "Symbol.toPrimitive"];
        assert!(spec.iter().any(|k| m.source.contains(k)), "{}", m.source);
        if m.detail.starts_with("property ") {
            kinds.0 += 1;
        } else {
            assert!(m.detail.starts_with("object "), "{}", m.detail);
            kinds.1 += 1;
        }
    }
    assert!(kinds.0 > 0 && kinds.1 > 0, "both kinds drawn: {kinds:?}");
}

#[test]
fn statement_insertion_adds_only_legal_diverters() {
    let loop_in_function = Context {
        function: true,
        iteration: true,
        ..Context::default()
    };
    assert_eq!(legal(&loop_in_function), ["continue", "break", "return", "throw"]);
    assert_eq!(legal(&Context::default()), ["throw"]);
    let f = fixture(PROGRAMS);
    let c = ctx(&f, None);
    let ms = mutants(mutator("diverter").as_ref(), &c, 30);
    let mut seen = std::collections::BTreeSet::new();
    for m in &ms {
        let kind = ["break", "continue", "return", "throw"]
            .into_iter()
            .find(|k| m.detail.contains(&format!(" {k}")) || m.detail.contains(&format!("`{k}")))
            .unwrap_or_else(|| panic!("{}", m.detail));
        seen.insert(kind);
        // One statement more than the parent, nothing else changed.
        let parent = &c.pool[m.parent].source;
        assert!(m.source.len() > parent.len());
    }
    assert!(seen.len() >= 3, "several diverters drawn: {seen:?}");
}

#[test]
#[ignore = "needs ../shared"]
fn random_derivations_of_the_es2025_grammar_mostly_parse() {
    let shared = std::env::var_os("DOPPEL_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let g = Grammar::load(&shared.join("data/ecmascript-grammar/grammar.json")).expect("the ES2025 grammar loads");
    let s = shortest_for_derivations(&g, "Script").unwrap();
    let palette = Palette::default();
    let mut ok = 0;
    for seed in 0..200 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let e = derive(&s, &palette, "AssignmentExpression", &["In"], 40, &mut rng).unwrap();
        assert!(e.len() < 200, "bounded: {e}");
        match oxc_check(&format!("({e});")) {
            Ok(()) => ok += 1,
            Err(why) if seed < 40 => eprintln!("rejected: ({e}); -- {why}"),
            Err(_) => {}
        }
    }
    eprintln!("{ok}/200 random AssignmentExpressions parse");
    assert!(ok >= 150, "{ok}/200");
    let f = fixture(PROGRAMS);
    let c = ctx(&f, Some(&s));
    for m in mutants(mutator("random").as_ref(), &c, 20) {
        eprintln!("{}", m.detail);
    }
}
