//! The whole Codeflaws corpora through the case runner: every case ends
//! with a named outcome, and the summary tables (docs/results/localize.md)
//! are written to `$DOPPEL_LOCALIZE_OUT` (default: the system temp dir).
//!
//! An experiment, not a test (the corpora take hours):
//! `cargo run --release -p doppel-localize --example corpus -- same|cross|summarize`
//! with ../shared beside the checkout (or `DOPPEL_SHARED`).

use doppel_lang::c::codeflaws;
use doppel_localize::case::{Case, CaseConfig, run_case};
use doppel_localize::summary;
use std::path::{Path, PathBuf};

fn shared() -> PathBuf {
    std::env::var_os("DOPPEL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

fn out_dir() -> PathBuf {
    std::env::var_os("DOPPEL_LOCALIZE_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
}

async fn run_set(label: &str, pairs: &[codeflaws::RegressionPair]) {
    use std::io::Write as _;
    // `DOPPEL_LOCALIZE_ONLY=name,name`: only these cases (a quick look at a
    // few), written under the label `<label>-only`.
    let only: Option<Vec<String>> = std::env::var("DOPPEL_LOCALIZE_ONLY")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    let selected: Vec<codeflaws::RegressionPair>;
    let (label, pairs) = match &only {
        Some(names) => {
            selected = pairs
                .iter()
                .filter(|p| names.iter().any(|n| p.name.starts_with(n.as_str())))
                .cloned()
                .collect();
            (format!("{label}-only"), &selected[..])
        }
        None => (label.to_string(), pairs),
    };
    // `DOPPEL_LOCALIZE_LIMIT=N`: the first N cases only (with the round
    // robin over classes, a sample of every class).
    let limit = std::env::var("DOPPEL_LOCALIZE_LIMIT")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(usize::MAX);
    let pairs = &pairs[..pairs.len().min(limit)];
    let cfg = case_config();
    let mut results = Vec::new();
    // One JSON line per finished case, so an interrupted run still counts.
    let mut lines = std::fs::File::create(out_dir().join(format!("localize-{label}.jsonl"))).unwrap();
    for p in pairs {
        let r = run_case(&Case::from_pair(p), &cfg).await;
        writeln!(lines, "{}", serde_json::to_string(&r).unwrap()).unwrap();
        eprintln!(
            "{} {:?} darwin={:?} {:.1}s",
            r.name,
            r.outcome,
            r.darwin.as_ref().map(|d| &d.outcome),
            r.seconds
        );
        results.push(r);
    }
    assert_eq!(results.len(), pairs.len());
    let md = summary::markdown(&results);
    std::fs::write(out_dir().join(format!("localize-{label}.md")), &md).unwrap();
    std::fs::write(
        out_dir().join(format!("localize-{label}.json")),
        serde_json::to_string(&results).unwrap(),
    )
    .unwrap();
}

/// The case configuration, with Darwin's switches from the environment
/// (before/after measurements in one build): `DOPPEL_DARWIN_OWN_FIRST=0`
/// walks own branches and predicates in path order
/// (`DarwinConfig::own_branches_first`); `DOPPEL_DARWIN_NARROW=1` adds
/// predicates at 1- and 2-byte stores (`DarwinConfig::narrow_stores`);
/// `DOPPEL_DARWIN_PREFIX=1` deviates along the prefix of a symbolic run cut
/// by the shadow's budgets (`DarwinConfig::prefix_on_budget`);
/// `DOPPEL_DARWIN_SLICE=0` sends f and the whole prefix with every query
/// (`DarwinConfig::slicing`); `DOPPEL_DARWIN_NEAR=0` frees the whole slice
/// at once (`DarwinConfig::near_t_first`); `DOPPEL_DARWIN_LATE=0` ranks
/// predicates earlier first (`DarwinConfig::late_predicates`, also for
/// `DOPPEL_LOCALIZE_RERANK`); `DOPPEL_DARWIN_OUTPUT=0` reports nothing
/// when no deviation is found (`DarwinConfig::first_divergence`);
/// `DOPPEL_DARWIN_STRICT=1` (or `0`) sets
/// `DarwinConfig::strict_predicates`; `DOPPEL_DARWIN_SWITCH=0` searches no
/// critical predicates (`DarwinConfig::predicate_switching`);
/// `DOPPEL_DARWIN_ON_T=0` reports the lines found on t only when no
/// deviation is validated (`DarwinConfig::on_t_with_deviations`, also for
/// `DOPPEL_LOCALIZE_RERANK`).
fn case_config() -> CaseConfig {
    let mut cfg = CaseConfig::default();
    if let Some(d) = cfg.darwin.as_mut() {
        if std::env::var("DOPPEL_DARWIN_OWN_FIRST").as_deref() == Ok("0") {
            d.own_branches_first = false;
        }
        if std::env::var("DOPPEL_DARWIN_NARROW").as_deref() == Ok("1") {
            d.narrow_stores = true;
        }
        if std::env::var("DOPPEL_DARWIN_PREFIX").as_deref() == Ok("1") {
            d.prefix_on_budget = true;
        }
        if std::env::var("DOPPEL_DARWIN_SLICE").as_deref() == Ok("0") {
            d.slicing = false;
        }
        if std::env::var("DOPPEL_DARWIN_NEAR").as_deref() == Ok("0") {
            d.near_t_first = false;
        }
        if std::env::var("DOPPEL_DARWIN_LATE").as_deref() == Ok("0") {
            d.late_predicates = false;
        }
        if std::env::var("DOPPEL_DARWIN_OUTPUT").as_deref() == Ok("0") {
            d.first_divergence = false;
        }
        match std::env::var("DOPPEL_DARWIN_STRICT").as_deref() {
            Ok("1") => d.strict_predicates = true,
            Ok("0") => d.strict_predicates = false,
            _ => {}
        }
        if std::env::var("DOPPEL_DARWIN_SWITCH").as_deref() == Ok("0") {
            d.predicate_switching = false;
        }
        if std::env::var("DOPPEL_DARWIN_ON_T").as_deref() == Ok("0") {
            d.on_t_with_deviations = false;
        }
        eprintln!("darwin config: {d:?}");
    }
    cfg
}

async fn all_same_author_pairs() {
    let root = shared().join("corpus/regressions/codeflaws");
    let pairs: Vec<_> = codeflaws::discover_pairs(&root)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(pairs.len(), 140);
    // Round robin over the defect classes, so that a run cut short is a
    // sample of every class.
    let mut by_class: std::collections::BTreeMap<String, Vec<codeflaws::RegressionPair>> = Default::default();
    for p in pairs {
        by_class.entry(p.class.clone().unwrap_or_default()).or_default().push(p);
    }
    let mut order = Vec::new();
    let longest = by_class.values().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for v in by_class.values() {
            if let Some(p) = v.get(i) {
                order.push(p.clone());
            }
        }
    }
    assert_eq!(order.len(), 140);
    run_set("codeflaws", &order).await;
}

async fn all_cross_author_pairs() {
    let root = shared().join("corpus/regressions/codeflaws-cross");
    let dirs: Vec<_> = codeflaws::discover_pairs(&root)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    // One reference per modified program (the first other author of the
    // problem): every wrong-answer program once.
    let mut seen = std::collections::BTreeSet::new();
    let pairs: Vec<_> = codeflaws::cross_pairs(&dirs)
        .into_iter()
        .filter(|p| seen.insert(p.modified.clone()))
        .collect();
    assert_eq!(pairs.len(), dirs.len());
    run_set("codeflaws-cross", &pairs).await;
}

/// The summary tables of whatever `localize-<label>.jsonl` holds
/// (`DOPPEL_LOCALIZE_LABEL`, default `codeflaws`), for a run cut short.
fn summarize_a_partial_run() {
    let label = std::env::var("DOPPEL_LOCALIZE_LABEL").unwrap_or_else(|_| "codeflaws".into());
    let text = std::fs::read_to_string(out_dir().join(format!("localize-{label}.jsonl"))).unwrap();
    let results: Vec<doppel_localize::case::CaseResult> =
        // JSON has no infinity: DStar's +inf scores were written as null.
        text.lines()
            .map(|l| serde_json::from_str(&l.replace("\"score\":null", "\"score\":1e308")).unwrap())
            .collect();
    assert!(!results.is_empty());
    // `DOPPEL_LOCALIZE_RERANK=N`: Darwin's report rebuilt from the stored
    // causes with the current ranking, at most N lines (0: all), and measured
    // again: the causes do not depend on the ranking, so a run's causes
    // measure every ranking.
    let results = match std::env::var("DOPPEL_LOCALIZE_RERANK")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(n) => results.into_iter().map(|r| rerank(r, n)).collect(),
        None => results,
    };
    std::fs::write(
        out_dir().join(format!("localize-{label}.md")),
        summary::markdown(&results),
    )
    .unwrap();
}

fn rerank(mut r: doppel_localize::case::CaseResult, lines: usize) -> doppel_localize::case::CaseResult {
    let Some(d) = r.darwin.as_mut() else { return r };
    d.report = doppel_localize::darwin::rank(
        &d.causes,
        lines,
        std::env::var("DOPPEL_DARWIN_LATE").as_deref() != Ok("0"),
        std::env::var("DOPPEL_DARWIN_ON_T").as_deref() != Ok("0"),
    );
    for (report, m) in r.reports.iter_mut() {
        if report.technique == "darwin" {
            *report = d.report.clone();
            if m.is_some() {
                *m = Some(report.measure(&r.truth));
            }
        }
    }
    r
}

#[tokio::main]
async fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("same") => all_same_author_pairs().await,
        Some("cross") => all_cross_author_pairs().await,
        Some("summarize") => summarize_a_partial_run(),
        _ => {
            eprintln!("usage: corpus same|cross|summarize");
            std::process::exit(2);
        }
    }
}
