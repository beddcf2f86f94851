//! engine262's semantics coverage on real programs: non-empty, deterministic,
//! mapped to the spec algorithms and steps the program exercises.

use doppel_engines::coverage::{CoverageUnion, ProgramCoverage};
use doppel_engines::engine::engine262::Engine262;
use doppel_engines::{EnginesConfig, Outcome, RunOptions, Script};

fn engine() -> Engine262 {
    let cfg = EnginesConfig::default();
    Engine262::with_coverage(&cfg)
        .unwrap_or_else(|e| panic!("engine262 must be installed for this test: {e}; {}", cfg.setup_hint()))
}

async fn covered(e: &mut Engine262, src: &str) -> (Outcome, ProgramCoverage) {
    let (r, cov) = e.run_with_coverage(&Script::new(src), &RunOptions::default()).await;
    (r.outcome, cov.expect("coverage in coverage mode"))
}

#[tokio::test]
async fn coverage_is_non_empty_deterministic_and_names_spec_steps() {
    let mut e = engine();
    let cat = e.catalogue().await.expect("catalogue");
    assert!(cat.algorithms.len() > 1200, "{} algorithms", cat.algorithms.len());
    assert!(cat.top_steps() > 2500, "{} top-level steps", cat.top_steps());
    assert_eq!(cat.edition, "ES2025");

    let eq = "[1,2] == '1,2'; ({ valueOf() { return 3; } }) == 3; null == undefined;";
    let (o1, c1) = covered(&mut e, eq).await;
    let (o2, c2) = covered(&mut e, eq).await;
    assert_eq!((o1, o2), (Outcome::Normal, Outcome::Normal));
    assert!(!c1.algorithms.is_empty() && !c1.steps.is_empty());
    assert_eq!(c1, c2, "the same program covers the same algorithms and steps");

    let names: Vec<&str> = c1
        .algorithms
        .iter()
        .map(|i| cat.algorithms[*i as usize].name.as_str())
        .collect();
    for want in [
        "IsLooselyEqual",
        "ToPrimitive",
        "OrdinaryToPrimitive",
        "Evaluate_EqualityExpression",
    ] {
        assert!(names.contains(&want), "{want} not covered: {names:?}");
    }
    let steps: Vec<&str> = c1.steps.iter().map(|i| cat.steps[*i as usize].id.as_str()).collect();
    assert!(steps.contains(&"IsLooselyEqual:1"), "{steps:?}");
    assert!(!steps.contains(&"IsLooselyEqual:6.a"), "BigInt/string step not taken");

    // A program exercising other semantics adds coverage; a union counts it.
    let mut u = CoverageUnion::default();
    u.add(&c1);
    let (o, c3) = covered(&mut e, "class A { #x = 1; get x() { return this.#x; } } new A().x;").await;
    assert_eq!(o, Outcome::Normal);
    let (new_algorithms, new_steps) = u.add(&c3);
    assert!(new_algorithms > 0 && new_steps > 0);
    let [alg, steps, top] = u.ratios(&cat);
    assert!(alg.0 > 0 && steps.0 > 0 && top.0 > 0 && top.0 <= top.1);

    // Exceptions and timeouts still give outcomes; coverage stays available.
    let (o, c) = covered(&mut e, "null.x;").await;
    assert!(
        matches!(o, Outcome::Exception { constructor: Some(ref c), .. } if c == "TypeError"),
        "{o:?}"
    );
    assert!(!c.algorithms.is_empty());
    let (r, _) = e
        .run_with_coverage(
            &Script::new("for (;;) {}"),
            &RunOptions {
                timeout: std::time::Duration::from_secs(30),
                ..RunOptions::default()
            },
        )
        .await;
    assert_eq!(r.outcome, Outcome::Timeout, "the node budget stops it");
    let (o, c4) = covered(&mut e, eq).await;
    assert_eq!((o, c4), (Outcome::Normal, c1), "still deterministic after a timeout");
}

/// The host clock the program sees moves by the requested skew
/// (HostSystemUTCEpochNanoseconds), for that run only.
#[tokio::test]
async fn a_clock_skew_moves_the_programs_clock_for_one_run() {
    let mut e = engine();
    let src = "print(Date.now());";
    let now = |r: &doppel_engines::RunResult| -> i64 {
        assert_eq!(r.outcome, Outcome::Normal, "{r:?}");
        r.output.trim().parse().unwrap_or_else(|_| panic!("{:?}", r.output))
    };
    let day = 86_400_000;
    let before = now(&e.run_with_clock_skew(src, &RunOptions::default(), day).await);
    let real = now(&doppel_engines::Engine::run(&mut e, &Script::new(src), &RunOptions::default()).await);
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64;
    assert!((real - wall).abs() < 60_000, "the real clock: {real} vs {wall}");
    assert!(
        (before - real - day).abs() < 60_000,
        "skewed by a day: {before} vs {real}"
    );
    doppel_engines::Engine::shutdown(&mut e).await;
}
