//! The coverage-guided generator against the real engine262 (installed by
//! scripts/deps/setup-engines.sh): the built-in walk, and a pool that keeps
//! only programs that end normally or by exception and add coverage.

use doppel_conform::pool::{Generator, GeneratorConfig, Kept, Origin};
use doppel_engines::coverage::CoverageUnion;
use doppel_engines::engine::engine262::Engine262;
use doppel_engines::{EnginesConfig, Outcome};

fn engine262() -> Engine262 {
    let cfg = EnginesConfig::default();
    Engine262::with_coverage(&cfg)
        .unwrap_or_else(|e| panic!("engine262 must be installed for this test: {e}; {}", cfg.setup_hint()))
}

/// Kept programs until `candidates` candidates were tried.
async fn run(g: &mut Generator, spec: &mut Engine262, candidates: usize) -> Vec<Kept> {
    let mut kept = Vec::new();
    while g.stats().candidates < candidates {
        match g.next(spec).await.expect("the generator works") {
            Some(k) => kept.push(k),
            None => break,
        }
    }
    kept
}

fn config() -> GeneratorConfig {
    GeneratorConfig {
        attempts_per_call: 10,
        mutation_share: 0.0,
        ..GeneratorConfig::default()
    }
}

#[tokio::test]
async fn the_builtin_walk_finds_es2025_functions_and_leaves_later_ones_out() {
    let mut spec = engine262();
    let mut g = Generator::new(config(), 1).unwrap();
    run(&mut g, &mut spec, 1).await;
    let v = g.vocabulary().expect("walked on the first call");
    let find = |p: &str| v.builtins.iter().find(|b| b.path == p);
    let join = find("Array.prototype.join").expect("Array.prototype.join");
    assert_eq!((join.length, join.constructor), (1, false));
    let array = find("Array").expect("Array");
    assert!(array.constructor);
    assert!(
        v.builtins
            .iter()
            .any(|b| b.path.starts_with("Object.getPrototypeOf(") && b.path.ends_with("Array).from")),
        "%TypedArray%.from, reached through a typed array constructor's prototype"
    );
    assert!(find("RegExp.prototype[Symbol.replace]").is_some());
    assert!(find("Promise.try").is_some(), "ES2025");
    assert!(
        v.builtins
            .iter()
            .all(|b| !b.path.contains("Temporal") && !b.path.starts_with("$262"))
    );
    assert!(v.builtins.len() > 350, "{} built-ins", v.builtins.len());
    assert!(v.symbols.contains(&"Symbol.iterator".to_string()));
    assert!(
        !v.symbols.iter().any(|s| s.contains("dispose")),
        "post-ES2025 symbols left out"
    );
    for s in ["length", "prototype", "constructor", "toString"] {
        assert!(v.property_keys.iter().any(|k| k == s), "{s}");
    }
    for s in ["default", "number", "IsLooselyEqual"] {
        assert!(v.strings.iter().any(|k| k == s), "{s}");
    }
}

#[tokio::test]
async fn the_pool_keeps_only_terminating_programs_that_add_coverage() {
    let mut spec = engine262();
    let mut g = Generator::new(config(), 7).unwrap();
    let kept = run(&mut g, &mut spec, 30).await;
    assert!(!kept.is_empty());
    assert_eq!(kept, g.pool(), "every kept program is returned once, in order");
    // Replaying the union in order: each program added what it claims.
    let mut union = CoverageUnion::default();
    for k in &kept {
        assert!(
            matches!(k.outcome, Outcome::Normal | Outcome::Exception { .. }),
            "{:?}",
            k.outcome
        );
        assert_eq!(k.origin, Origin::Builtin, "built-in calls come first without a grammar");
        let added = union.add(&k.coverage);
        assert_eq!(added, (k.new_algorithms, k.new_steps), "{}", k.source);
        assert!(added.0 + added.1 > 0, "{}", k.source);
    }
    assert_eq!(&union, g.covered());
    let s = g.stats();
    assert_eq!(s.kept, kept.len());
    assert!(s.no_new_coverage > 0, "repeated calls of a built-in add nothing: {s:?}");
    assert_eq!(
        s.candidates,
        s.kept + s.no_new_coverage + s.rejected_syntax + s.duplicates + s.rejected_outcome.values().sum::<usize>()
    );
    let f = g.coverage();
    assert_eq!(f.programs, kept.len());
    assert!(f.algorithms.0 > 0 && f.algorithms.0 <= f.algorithms.1 && f.steps.0 > 0);
    assert!(f.syntax.is_none(), "no grammar configured");

    // The same seed keeps the same programs.
    let mut again = Generator::new(config(), 7).unwrap();
    let first = run(&mut again, &mut spec, 12).await;
    assert_eq!(first[..], kept[..first.len()]);
}

#[tokio::test]
async fn mutants_of_kept_programs_enter_the_pool_beside_the_seeds() {
    let mut spec = engine262();
    let mut g = Generator::new(
        GeneratorConfig {
            attempts_per_call: 10,
            mutation_share: 0.5,
            ..GeneratorConfig::default()
        },
        5,
    )
    .unwrap();
    let kept = run(&mut g, &mut spec, 60).await;
    let by = &g.stats().by_origin;
    let mutants: usize = by
        .iter()
        .filter(|(o, _)| *o != "builtin")
        .map(|(_, (tried, _))| tried)
        .sum();
    assert!(mutants > 10, "about half the candidates are mutants: {by:?}");
    for (i, k) in kept.iter().enumerate() {
        if let Origin::Mutant { parent, mutator, .. } = &k.origin {
            assert!(*parent < i, "a mutant's parent was kept before it");
            assert_ne!(k.source, kept[*parent].source, "{mutator}");
        }
    }

    // Without seeds nothing can be mutated: a clear `None`, not a hang.
    let mut empty = Generator::new(
        GeneratorConfig {
            builtins: false,
            ..config()
        },
        3,
    )
    .unwrap();
    assert_eq!(empty.next(&mut spec).await.unwrap(), None);
    assert_eq!(empty.stats().candidates, 0);
}
