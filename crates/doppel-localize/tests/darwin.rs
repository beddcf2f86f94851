//! Darwin on the bundled pair: wasm builds, concolic runs, z3, validated
//! alternate inputs.

use doppel_concolic::Module;
use doppel_lang::c::codeflaws;
use doppel_lang::c::wasm::WasmBuildCache;
use doppel_localize::darwin::{DarwinConfig, DarwinOutcome, Program, analyze};
use doppel_localize::truth::Side;
use std::path::Path;

#[tokio::test]
async fn darwin_blames_the_changed_condition_of_the_bundled_pair() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/regressions/1-A-bug-10-11");
    let pair = codeflaws::read_pair(&root, None).unwrap();
    let d = tempfile::tempdir().unwrap();
    let cache = WasmBuildCache::new(d.path().to_path_buf());
    let pw = cache.build_wasm(&pair.reference).await.unwrap();
    let qw = cache.build_wasm(&pair.modified).await.unwrap();
    let pm = Module::decode(&std::fs::read(&pw.output).unwrap()).unwrap();
    let qm = Module::decode(&std::fs::read(&qw.output).unwrap()).unwrap();
    let p = Program {
        module: &pm,
        source: pw.source.to_string_lossy().into_owned(),
        side: Side::Reference,
    };
    let q = Program {
        module: &qm,
        source: qw.source.to_string_lossy().into_owned(),
        side: Side::Modified,
    };
    let t = codeflaws::read_bytes(&pair.failing[0].input).unwrap();
    let r = analyze(&p, &q, &t, DarwinConfig::default());
    eprintln!("{r:#?}");
    assert_eq!(r.outcome, DarwinOutcome::Localized);
    let lines: Vec<String> = r.causes.iter().map(|c| c.line.to_string()).collect();
    assert!(lines.contains(&"P':9".to_string()), "{lines:?}");
    for c in &r.causes {
        assert_ne!(c.witness.input, t, "an alternate input differs from t");
    }
}

/// The bundled DCCR pair: P' adds a wrong constant in an assignment (line
/// 12, `b - a + 2` for `b - a + 1`). No branch condition differs between P
/// and P', so without predicate instrumentation Darwin finds nothing; with
/// it, the virtual branch `floors == a` at the assignment parts the paths.
#[tokio::test]
async fn predicates_localize_a_wrong_constant_in_an_assignment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/regressions");
    let pair = codeflaws::discover_pairs(&root)
        .into_iter()
        .map(Result::unwrap)
        .find(|p| p.name == "2-B-bug-20-21")
        .unwrap();
    assert_eq!(pair.class.as_deref(), Some("DCCR"));
    let d = tempfile::tempdir().unwrap();
    let cache = WasmBuildCache::new(d.path().to_path_buf());
    let pw = cache.build_wasm(&pair.reference).await.unwrap();
    let qw = cache.build_wasm(&pair.modified).await.unwrap();
    let pm = Module::decode(&std::fs::read(&pw.output).unwrap()).unwrap();
    let qm = Module::decode(&std::fs::read(&qw.output).unwrap()).unwrap();
    let p = Program {
        module: &pm,
        source: pw.source.to_string_lossy().into_owned(),
        side: Side::Reference,
    };
    let q = Program {
        module: &qm,
        source: qw.source.to_string_lossy().into_owned(),
        side: Side::Modified,
    };
    let t = codeflaws::read_bytes(&pair.failing[0].input).unwrap();
    assert_eq!(t, b"3 7\n");
    let without = analyze(
        &p,
        &q,
        &t,
        DarwinConfig {
            predicates: false,
            first_divergence: false,
            ..DarwinConfig::default()
        },
    );
    assert_eq!(without.outcome, DarwinOutcome::NoDeviationFound, "{without:#?}");
    let r = analyze(&p, &q, &t, DarwinConfig::default());
    eprintln!("{r:#?}");
    assert_eq!(r.outcome, DarwinOutcome::Localized);
    assert!(r.stats.predicate_candidates > 0);
    assert!(
        r.report.entries.iter().any(|e| e.line.to_string() == "P':12"),
        "{:?}",
        r.report
    );
    // Earlier predicates first ranks the assignment first; the default,
    // later first, puts the output statement's predicates above it (the
    // measured trade-off of `DarwinConfig::late_predicates`).
    let early = doppel_localize::darwin::rank(&r.causes, 5, false, false);
    assert_eq!(early.entries[0].line.to_string(), "P':12", "{early:?}");
    assert!(DarwinConfig::default().late_predicates);
    assert_ne!(r.report.entries[0].line.to_string(), "P':12", "{:?}", r.report);
    let cause = r.causes.iter().find(|c| c.line.to_string() == "P':12").unwrap();
    assert!(cause.predicate, "found through a virtual branch");
    // The witness goes up too (P's path), but P' leaves its path at line 12.
    let w = &cause.witness;
    assert_ne!(w.input, t);
    assert_ne!(w.reference_output, w.modified_output);
}

/// Darwin on one Codeflaws pair named by `DOPPEL_DARWIN_PAIR` (a directory
/// of ../shared/corpus/regressions/codeflaws), printing the result: for
/// reading a case by hand.
#[tokio::test]
#[ignore = "needs ../shared"]
async fn one_codeflaws_pair_by_name() {
    let shared = std::env::var_os("DOPPEL_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let name = std::env::var("DOPPEL_DARWIN_PAIR").unwrap_or_else(|_| "118-A-bug-18073097-18080639".into());
    let dir = shared.join("corpus/regressions/codeflaws").join(&name);
    let pair = codeflaws::read_pair(&dir, None).unwrap();
    let case = doppel_localize::case::Case::from_pair(&pair);
    let r = doppel_localize::case::run_case(&case, &doppel_localize::case::CaseConfig::default()).await;
    let d = r.darwin.as_ref().unwrap();
    eprintln!("truth {:?}\n{:#?}\n{:?}", r.truth, d.stats, d.outcome);
    for c in &d.causes {
        eprintln!("{} {:?}", c.line, c.witness);
    }
    assert!(!matches!(d.outcome, DarwinOutcome::SolverFailure { .. }));
}

/// Both programs of a bundled pair built for wasm, and its first failing test.
struct Built {
    _dir: tempfile::TempDir,
    p: (Module, String),
    q: (Module, String),
    t: Vec<u8>,
}

impl Built {
    async fn bundled(name: &str) -> Built {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../corpus/regressions")
            .join(name);
        let pair = codeflaws::read_pair(&root, None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cache = WasmBuildCache::new(dir.path().to_path_buf());
        let mut built = Vec::new();
        for src in [&pair.reference, &pair.modified] {
            let w = cache.build_wasm(src).await.unwrap();
            let m = Module::decode(&std::fs::read(&w.output).unwrap()).unwrap();
            built.push((m, w.source.to_string_lossy().into_owned()));
        }
        let q = built.pop().unwrap();
        let p = built.pop().unwrap();
        let t = codeflaws::read_bytes(&pair.failing[0].input).unwrap();
        Built { _dir: dir, p, q, t }
    }

    fn analyze(&self, cfg: DarwinConfig) -> doppel_localize::darwin::DarwinResult {
        let p = Program {
            module: &self.p.0,
            source: self.p.1.clone(),
            side: Side::Reference,
        };
        let q = Program {
            module: &self.q.0,
            source: self.q.1.clone(),
            side: Side::Modified,
        };
        analyze(&p, &q, &self.t, cfg)
    }

    /// The shadow's expression count of a symbolic run of `m` on t with
    /// Darwin's observation points.
    fn expressions(&self, m: &(Module, String)) -> usize {
        use doppel_concolic::{BranchFilter, Inputs, Observe, RunConfig, Symbolic, run};
        let cfg = RunConfig {
            inputs: Inputs {
                stdin: self.t.clone(),
                ..Default::default()
            },
            symbolic: Symbolic::ALL,
            branches: BranchFilter::Files(vec![m.1.clone()]),
            observe: Observe {
                files: vec![m.1.clone()],
                returns: true,
                assignments: true,
                peers: 4,
                narrow: false,
                writes: false,
            },
            ..Default::default()
        };
        run(&m.0, &cfg).arena.len()
    }
}

/// Own branches first (both directions, then predicates) and the walk in
/// path order try the same candidates and both rank the changed condition
/// first.
/// The bundled pair whose fault is a printed constant (`More even` for
/// `MORE EVEN`, line 13): no branch or predicate deviates, so Darwin ends
/// at the output divergence point, the printing statement of P' first; with
/// that switch off the case ends `no deviation found` with nothing.
#[tokio::test]
async fn a_wrong_printed_constant_is_found_at_the_first_divergence_point() {
    let b = Built::bundled("4-A-bug-40-41").await;
    let r = b.analyze(DarwinConfig {
        strict_predicates: true,
        ..DarwinConfig::default()
    });
    eprintln!("{:?} {:?}", r.outcome, r.report.entries);
    assert!(
        matches!(&r.outcome, DarwinOutcome::FirstDivergence { after } if after == "no deviation found"),
        "{:?}",
        r.outcome
    );
    let lines: Vec<String> = r.report.entries.iter().map(|e| e.line.to_string()).collect();
    assert_eq!(lines, ["P':13", "P:13"]);
    assert!(
        r.causes
            .iter()
            .all(|c| c.kind() == "output divergence" && c.witness.input == b.t)
    );
    assert_eq!(r.causes[0].witness.modified_output, "More even\n");
    assert_eq!(r.causes[0].witness.reference_output, "MORE EVEN\n");
    let off = b.analyze(DarwinConfig {
        first_divergence: false,
        strict_predicates: true,
        ..DarwinConfig::default()
    });
    assert_eq!(off.outcome, DarwinOutcome::NoDeviationFound);
    assert!(off.causes.is_empty());
}

/// The branch divergence point on the bundled ORRN pair (`x >= 0` for
/// `x > 0`, line 9; t holds a zero): the runs of P and P' on t take the
/// same branches up to the zero and part at line 9 of both.
#[tokio::test]
async fn runs_on_t_part_at_the_changed_condition() {
    use doppel_concolic::{BranchFilter, Inputs, Observe, RunConfig, run};
    use doppel_localize::darwin::DivergencePoint;
    use doppel_localize::divergence::first_divergence;
    let b = Built::bundled("1-A-bug-10-11").await;
    let on_t = |m: &(Module, String)| {
        run(
            &m.0,
            &RunConfig {
                inputs: Inputs {
                    stdin: b.t.clone(),
                    ..Default::default()
                },
                branches: BranchFilter::Files(vec![m.1.clone()]),
                observe: Observe {
                    files: vec![m.1.clone()],
                    writes: true,
                    ..Default::default()
                },
                ..Default::default()
            },
        )
    };
    let (rp, rq) = (on_t(&b.p), on_t(&b.q));
    fn program(m: &(Module, String), side: Side) -> Program<'_> {
        Program {
            module: &m.0,
            source: m.1.clone(),
            side,
        }
    }
    let (p, q) = (program(&b.p, Side::Reference), program(&b.q, Side::Modified));
    let found = first_divergence(&p, &q, &rp, &rq, &b.t);
    let lines: Vec<(String, &str)> = found.iter().map(|c| (c.line.to_string(), c.kind())).collect();
    assert_eq!(
        lines,
        [
            ("P':9".to_string(), "branch divergence"),
            ("P:9".to_string(), "branch divergence")
        ]
    );
    assert!(
        found
            .iter()
            .all(|c| c.point == Some(DivergencePoint::Branch) && c.witness.input == b.t)
    );
    let common = found[0].position.0;
    assert!(common >= 1, "after a common prefix: {common}");
    // A run against itself does not part: neither point.
    assert!(first_divergence(&q, &q, &rq, &rq, &b.t).is_empty());
}

#[tokio::test]
async fn own_branches_first_and_path_order_try_the_same_candidates() {
    let b = Built::bundled("1-A-bug-10-11").await;
    let first = b.analyze(DarwinConfig::default());
    assert!(DarwinConfig::default().own_branches_first);
    let in_order = b.analyze(DarwinConfig {
        own_branches_first: false,
        ..DarwinConfig::default()
    });
    for r in [&first, &in_order] {
        assert_eq!(r.outcome, DarwinOutcome::Localized, "{r:#?}");
        // Line 9 is the changed condition in both programs (P:9 or P':9).
        assert_eq!(r.report.entries[0].line.line, 9, "{:?}", r.report);
        assert!(r.causes.iter().any(|c| c.line.to_string() == "P':9"), "{:?}", r.report);
    }
    assert_eq!(first.stats.candidates, in_order.stats.candidates);
    assert_eq!(first.stats.predicate_candidates, in_order.stats.predicate_candidates);
    assert!(first.stats.predicate_candidates > 0);
}

/// A symbolic run cut by the shadow's expression budget: without
/// `prefix_on_budget` the case ends `budget spent`; with it, the deviations
/// along the path condition up to the cut still blame the changed
/// condition (the loop's first `x >= 0` comes early), validated against
/// complete concrete runs.
#[tokio::test]
async fn a_run_cut_by_the_expression_budget_still_localizes_along_its_prefix() {
    let b = Built::bundled("1-A-bug-10-11").await;
    let most = b.expressions(&b.p).max(b.expressions(&b.q));
    let mut cfg = DarwinConfig::default();
    cfg.run_budget.expressions = most * 9 / 10;
    // The cut run's output is incomplete: no divergence point either.
    let cut = b.analyze(cfg);
    assert!(
        matches!(&cut.outcome, DarwinOutcome::BudgetSpent { reason } if reason.contains("Expressions")),
        "{cut:#?}"
    );
    let r = b.analyze(DarwinConfig {
        prefix_on_budget: true,
        ..cfg
    });
    assert_eq!(r.outcome, DarwinOutcome::Localized, "{r:#?}");
    let lines: Vec<String> = r.causes.iter().map(|c| c.line.to_string()).collect();
    assert!(lines.contains(&"P':9".to_string()), "{lines:?}");
    // A budget too small for anything user code does: still `budget spent`
    // (without what t shows, which needs no symbolic run).
    let tiny = b.analyze(DarwinConfig {
        prefix_on_budget: true,
        run_budget: doppel_concolic::Budget {
            expressions: 1,
            ..cfg.run_budget
        },
        first_divergence: false,
        predicate_switching: false,
        ..cfg
    });
    assert!(matches!(tiny.outcome, DarwinOutcome::BudgetSpent { .. }), "{tiny:#?}");
}

/// Sliced queries (the default), sliced queries without the near-t first
/// try, and f with the whole prefix in every query find the same root-cause
/// lines on every bundled pair, and the slices are smaller than f and the
/// prefix: the bytes a slice leaves out keep t's values, which satisfy the
/// constraints left out.
#[tokio::test]
async fn sliced_and_whole_queries_find_the_same_root_causes() {
    assert!(DarwinConfig::default().slicing);
    let mut smaller = false;
    let mut near_t = 0;
    for name in ["1-A-bug-10-11", "2-A-bug-20-21", "2-B-bug-20-21", "3-B-bug-30-31"] {
        let b = Built::bundled(name).await;
        let sliced = b.analyze(DarwinConfig::default());
        let whole = b.analyze(DarwinConfig {
            slicing: false,
            ..DarwinConfig::default()
        });
        assert_eq!(sliced.outcome, whole.outcome, "{name}: {sliced:#?}\n{whole:#?}");
        let lines = |r: &doppel_localize::darwin::DarwinResult| doppel_localize::darwin::reported_lines(r);
        assert_eq!(lines(&sliced), lines(&whole), "{name}");
        assert_eq!(sliced.stats.solver_errors, 0, "{name}: {:#?}", sliced.stats);
        let (in_slices, available) = sliced.stats.slice_constraints;
        assert!(in_slices <= available, "{name}: {:?}", sliced.stats);
        smaller |= in_slices < available;
        assert_eq!(whole.stats.slice_constraints, (0, 0));
        // The whole slice free at once finds the same lines; near t first
        // found some of them with only the negated branch's bytes free.
        let free = b.analyze(DarwinConfig {
            near_t_first: false,
            ..DarwinConfig::default()
        });
        assert_eq!(lines(&free), lines(&sliced), "{name}");
        assert_eq!(free.stats.near_t, 0);
        near_t += sliced.stats.near_t;
        for c in &sliced.causes {
            assert_ne!(c.witness.input, b.t, "{name}: an alternate input differs from t");
        }
    }
    assert!(smaller, "no slice left a constraint out on any bundled pair");
    assert!(near_t > 0, "no deviation was found near t on any bundled pair");
}

/// A spent budget ends the analysis before any deviation query, whatever
/// the query timeouts: no query sent, and the first divergence
/// reported, saying the budget was spent.
#[tokio::test]
async fn a_spent_budget_sends_no_query() {
    let b = Built::bundled("1-A-bug-10-11").await;
    let r = b.analyze(DarwinConfig {
        budget: std::time::Duration::ZERO,
        query_timeout: std::time::Duration::from_secs(3600),
        ..DarwinConfig::default()
    });
    assert!(
        matches!(&r.outcome, DarwinOutcome::FirstDivergence { after } if after.starts_with("budget spent")),
        "{r:#?}"
    );
    assert!(r.causes.iter().all(|c| c.point.is_some()));
    assert_eq!((r.stats.queries, r.stats.precheck_unsat), (0, 0), "{:#?}", r.stats);
}

/// Predicate switching (`doppel_localize::switching`) on the bundled
/// pair's P' alone: of every branch instance of P' on t, only the one at
/// the faulty condition (line 9, at t's zero) makes P' print P's output
/// when switched.
#[tokio::test]
async fn switching_the_faulty_condition_makes_the_modified_program_print_the_expected_output() {
    use doppel_concolic::{BranchFilter, Inputs, RunConfig, run};
    use doppel_localize::darwin::DivergencePoint;
    use doppel_localize::switching::{SwitchLimits, candidates, critical_predicates};
    use std::time::{Duration, Instant};
    let b = Built::bundled("1-A-bug-10-11").await;
    let config = |m: &(Module, String)| RunConfig {
        inputs: Inputs {
            stdin: b.t.clone(),
            ..Default::default()
        },
        branches: BranchFilter::Files(vec![m.1.clone()]),
        ..Default::default()
    };
    let (cp, cq) = (config(&b.p), config(&b.q));
    let (rp, rq) = (run(&b.p.0, &cp), run(&b.q.0, &cq));
    assert_eq!(
        (rp.stdout.as_slice(), rq.stdout.as_slice()),
        (&b"1 5\n"[..], &b"2 5\n"[..])
    );
    let q = Program {
        module: &b.q.0,
        source: b.q.1.clone(),
        side: Side::Modified,
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let (found, stats) = critical_predicates(&q, &rq, &cq, &rp.stdout, SwitchLimits::default(), deadline);
    let lines: Vec<(String, &str)> = found.iter().map(|c| (c.line.to_string(), c.kind())).collect();
    assert_eq!(lines, [("P':9".to_string(), "critical predicate")]);
    assert_eq!(found[0].point, Some(DivergencePoint::CriticalPredicate));
    assert_eq!(found[0].witness.input, b.t);
    assert_eq!(found[0].witness.reference_output, "1 5\n");
    // Every candidate was tried (the program is small) but the later
    // instances at line 9, already critical; one was critical.
    assert_eq!(
        stats.candidates,
        candidates(&rq, SwitchLimits::default().first_instances).len()
    );
    assert!(stats.runs < stats.candidates && stats.runs >= 8, "{stats:?}");
    assert_eq!(stats.critical, 1);
    // A run that already prints the expected output has none.
    let (none, s) = critical_predicates(&q, &rq, &cq, &rq.stdout, SwitchLimits::default(), deadline);
    assert!(none.is_empty() && s.runs == 0);
    // With the run limit at 0, nothing is switched.
    let capped = SwitchLimits {
        runs: 0,
        ..SwitchLimits::default()
    };
    assert!(
        critical_predicates(&q, &rq, &cq, &rp.stdout, capped, deadline)
            .0
            .is_empty()
    );
}
