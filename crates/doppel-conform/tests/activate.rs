//! Seed activation against the real engine262 with coverage (installed by
//! scripts/deps/setup-engines.sh): inert grammar seeds, as the synthesizer
//! writes them, cover the declaration and the early TypeError; their
//! activated variants reach the nested steps, and the generator's shorter
//! evaluation budget ends a looping candidate as a timeout.

use doppel_conform::seed_activate::activate;
use doppel_engines::coverage::{Catalogue, CoverageUnion};
use doppel_engines::engine::engine262::Engine262;
use doppel_engines::{EnginesConfig, Outcome, RunOptions, Script};

fn engine262(budget: Option<u64>) -> Engine262 {
    let cfg = EnginesConfig::default();
    let e = match budget {
        Some(n) => Engine262::with_coverage_budget(&cfg, n),
        None => Engine262::with_coverage(&cfg),
    };
    e.unwrap_or_else(|e| panic!("engine262 must be installed for this test: {e}; {}", cfg.setup_hint()))
}

/// The union of the programs' coverage, as step ids.
async fn steps(spec: &mut Engine262, cat: &Catalogue, programs: &[String]) -> Vec<String> {
    let mut u = CoverageUnion::default();
    for p in programs {
        let (r, c) = spec
            .run_with_coverage(&Script::new(p.clone()), &RunOptions::default())
            .await;
        let c = c.unwrap_or_else(|| panic!("no coverage for {p}: {:?}", r.outcome));
        u.add(&c);
    }
    u.ids(cat).steps
}

fn count(steps: &[String], algorithm: &str) -> usize {
    steps.iter().filter(|s| s.starts_with(&format!("{algorithm}:"))).count()
}

#[tokio::test]
async fn activated_seeds_reach_the_steps_inert_seeds_miss() {
    let mut spec = engine262(None);
    let cat = spec.catalogue().await.expect("catalogue");
    // Grammar seeds as the synthesizer writes them (tokens joined by spaces).
    // The YieldExpression seed: a generator method in an object literal, in
    // the expression's shortest context `do ; while ( E ) ;` (an endless loop).
    let seeds = [
        "do ; while ( { * 0 ( ) { for ( yield ; ; ) ; } } ) ;",
        "[ $ ] = 0 ;",
        "class $ extends 0 { }",
    ];
    let inert = steps(&mut spec, &cat, &seeds.map(String::from)).await;
    let variants: Vec<String> = seeds.iter().flat_map(|s| activate(s)).collect();
    let active = steps(&mut spec, &cat, &variants).await;
    for (algorithm, what) in [
        ("Evaluate_YieldExpression", "a driven generator resumes past its yield"),
        (
            "IteratorDestructuringAssignmentEvaluation",
            "an iterable is destructured",
        ),
        ("ClassDefinitionEvaluation", "a constructor heritage"),
    ] {
        assert!(
            count(&active, algorithm) > count(&inert, algorithm),
            "{what}: {algorithm} {} steps activated vs {} inert",
            count(&active, algorithm),
            count(&inert, algorithm)
        );
    }
    // A seed's declarations run as eval code too.
    assert!(count(&active, "EvalDeclarationInstantiation") > 0, "{variants:?}");
}

#[tokio::test]
async fn the_candidate_budget_ends_a_loop_as_a_timeout() {
    let mut spec = engine262(Some(20_000));
    let (r, _) = spec
        .run_with_coverage(&Script::new("for (;;) ;"), &RunOptions::default())
        .await;
    assert!(matches!(r.outcome, Outcome::Timeout), "{:?}", r.outcome);
    // A program well inside the budget still completes.
    let (r, c) = spec
        .run_with_coverage(&Script::new("for (var i = 0; i < 10; i++) ;"), &RunOptions::default())
        .await;
    assert!(matches!(r.outcome, Outcome::Normal), "{:?}", r.outcome);
    assert!(c.is_some());
}

/// The generator's built-in walk runs at engine262's default budget, not at
/// the generator's per-candidate one, also when nothing is cached (a fresh
/// machine: every generation campaign failed there with a walk "timeout").
#[tokio::test]
async fn the_builtin_walk_is_not_bound_by_the_candidate_budget() {
    use doppel_conform::pool::{Generator, GeneratorConfig};
    let tmp = tempfile::tempdir().unwrap();
    let cfg = EnginesConfig {
        cache: tmp.path().to_path_buf(),
        ..EnginesConfig::default()
    };
    let mut spec = Engine262::with_coverage_budget(&cfg, 20_000)
        .unwrap_or_else(|e| panic!("engine262 must be installed for this test: {e}; {}", cfg.setup_hint()));
    let mut g = Generator::new(
        GeneratorConfig {
            engines: cfg.clone(),
            attempts_per_call: 3,
            mutation_share: 0.0,
            ..GeneratorConfig::default()
        },
        1,
    )
    .unwrap();
    g.next(&mut spec).await.expect("the walk runs at the default budget");
    let v = g.vocabulary().expect("walked");
    assert!(v.builtins.len() > 100, "{} built-ins", v.builtins.len());
}
