//! Failure groups (JEST §III-E): a campaign's failing tests grouped by
//! (engine family, failure, spec algorithm blamed), deduplicated, each with
//! a representative (the smallest test) and, given the test262 matrix, a
//! known-vs-new reading ([`KnownIndex`]).
//!
//! The algorithm blamed for a failing test is the highest-ranked algorithm
//! it covers in its target's ER1b ranking ([`crate::localize`]): the target
//! of an engine-bug candidate is its family (failing = the tests the family
//! failed, passing = those it passed), the target of a specification or
//! engine262 candidate is the specification (failing = those candidates,
//! passing = the tests every family agreed on).

use crate::localize::{Observation, blame, rank_algorithms};
use crate::technique_record::{GroupRecord, LocalizationRecord, RankedElement};
use crate::verdict::{Candidate, Failure, FamilyVerdict, FamilyVote, Vote};
use doppel_engines::Family;
use doppel_engines::coverage::{Catalogue, ProgramCoverage};
use doppel_sbfl::{Formula, Ranking, formula::Er1b};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What grouping needs of one test's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observed {
    /// The test's name.
    pub name: String,
    /// Its stored run, if stored.
    pub run_id: Option<i64>,
    /// Its size in bytes (the representative is the smallest).
    pub size: usize,
    /// Its test262 features.
    pub features: Vec<String>,
    /// The expectation the engines were judged against (`None`: engine262 gave none).
    pub expected: Option<crate::verdict::Expected>,
    /// The families' votes.
    pub vote: Vote,
    /// engine262's failure of the test's own expectation, if any.
    pub spec_failure: Option<Failure>,
    /// engine262's coverage, when measured.
    pub coverage: Option<ProgramCoverage>,
}

/// Whose failures a ranking localizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Family(Family),
    Spec,
}

impl Target {
    fn name(self) -> String {
        match self {
            Target::Family(f) => f.to_string(),
            Target::Spec => "specification".into(),
        }
    }

    /// Whether `o` failed / passed for this target (`None`: not in its spectra).
    fn verdict(self, o: &Observed) -> Option<bool> {
        match self {
            Target::Family(f) => o
                .vote
                .families
                .iter()
                .chain(&o.vote.transpilers)
                .find(|v| v.family == f)
                .and_then(|v| match v.verdict {
                    FamilyVerdict::Pass => Some(false),
                    FamilyVerdict::Fail(_) | FamilyVerdict::Split { .. } => Some(true),
                    FamilyVerdict::Abstain => None,
                }),
            Target::Spec => match o.vote.candidate {
                Candidate::SpecBug { .. } | Candidate::Engine262Bug => Some(true),
                Candidate::Agree => Some(false),
                _ => None,
            },
        }
    }
}

fn rank(
    target: Target,
    tests: &[Observed],
    catalogue: &Catalogue,
    formula: &dyn Formula,
) -> (Ranking<String>, usize, usize) {
    let obs: Vec<Observation<'_>> = tests
        .iter()
        .filter_map(|o| {
            let failed = target.verdict(o)?;
            Some(Observation {
                coverage: o.coverage.as_ref()?,
                failed,
            })
        })
        .collect();
    let failing = obs.iter().filter(|o| o.failed).count();
    (rank_algorithms(catalogue, &obs, formula), failing, obs.len() - failing)
}

/// The (target, failure key) pairs a finding test contributes to groups.
fn memberships(o: &Observed) -> Vec<(String, Target, String, String)> {
    // A failing family's membership in a group of `candidate`.
    let member = |candidate: &str, f: &FamilyVote| match &f.verdict {
        FamilyVerdict::Fail(x) | FamilyVerdict::Split { failure: x, .. } => Some((
            candidate.to_string(),
            Target::Family(f.family),
            f.family.to_string(),
            x.key(),
        )),
        _ => None,
    };
    match &o.vote.candidate {
        Candidate::EngineBug { .. } => o
            .vote
            .failing()
            .filter_map(|f| member("engine_bug", f))
            .chain(
                o.vote
                    .failing_transpilers()
                    .filter(|f| o.vote.also_transpiler_bugs.contains(&f.family))
                    .filter_map(|f| member("transpiler_bug", f)),
            )
            .collect(),
        Candidate::SpecBug { families } => {
            let failure = o
                .vote
                .failing()
                .find_map(|f| match &f.verdict {
                    FamilyVerdict::Fail(x) => Some(x.key()),
                    _ => None,
                })
                .unwrap_or_else(|| "?".into());
            let fams: Vec<String> = families.iter().map(|f| f.to_string()).collect();
            vec![("spec_bug".into(), Target::Spec, fams.join("+"), failure)]
        }
        Candidate::TranspilerBug { .. } => o
            .vote
            .failing_transpilers()
            .filter_map(|f| member("transpiler_bug", f))
            .collect(),
        Candidate::Engine262Bug => vec![(
            "engine262_bug".into(),
            Target::Spec,
            "engine262".into(),
            o.spec_failure.as_ref().map(|f| f.key()).unwrap_or_else(|| "?".into()),
        )],
        _ => Vec::new(),
    }
}

/// Groups the findings among `tests` and localizes each target's failures
/// with every formula (top `top` algorithms each, and the place of
/// `true_fault`, an algorithm id, where the experiment knows the faulty
/// algorithm). Without a catalogue (no coverage) groups have no algorithm
/// and there are no localizations.
pub fn group(
    tests: &[Observed],
    catalogue: Option<&Catalogue>,
    known: Option<&KnownIndex>,
    top: usize,
    true_fault: Option<&str>,
) -> (Vec<GroupRecord>, Vec<LocalizationRecord>) {
    let mut targets: Vec<Target> = tests.iter().flat_map(memberships).map(|m| m.1).collect();
    targets.sort();
    targets.dedup();
    let mut er1b: BTreeMap<Target, Ranking<String>> = BTreeMap::new();
    let mut localizations = Vec::new();
    if let Some(cat) = catalogue {
        for &t in &targets {
            for f in doppel_sbfl::registry::all() {
                let (r, failing, passing) = rank(t, tests, cat, f.as_ref());
                let place = |e: &doppel_sbfl::Ranked<String>| RankedElement {
                    element: e.element.clone(),
                    score: e.score,
                    rank: e.rank.average,
                };
                localizations.push(LocalizationRecord {
                    ranked: r.entries.len(),
                    true_fault: true_fault.and_then(|alg| r.entries.iter().find(|e| e.element == alg).map(place)),
                    target: t.name(),
                    formula: f.name(),
                    failing,
                    passing,
                    top: r.entries.iter().take(top).map(place).collect(),
                });
            }
            er1b.insert(t, rank(t, tests, cat, &Er1b).0);
        }
    }
    let mut groups: BTreeMap<(String, String, String, Option<String>), Vec<&Observed>> = BTreeMap::new();
    for o in tests {
        for (candidate, target, family, failure) in memberships(o) {
            let algorithm = match (catalogue, &o.coverage, er1b.get(&target)) {
                (Some(cat), Some(cov), Some(r)) => blame(cat, cov, r),
                _ => None,
            };
            groups
                .entry((candidate, family, failure, algorithm))
                .or_default()
                .push(o);
        }
    }
    let records = groups
        .into_iter()
        .map(|((candidate, family, failure, algorithm), mut members)| {
            members.sort_by_key(|o| o.size);
            let rep = members[0];
            let (known_flag, known_by) = match (known, &algorithm) {
                (Some(k), Some(a)) if candidate == "engine_bug" => {
                    let by = k.known(&family, a, &rep.features);
                    (Some(by.is_some()), by)
                }
                _ => (None, None),
            };
            GroupRecord {
                candidate,
                family,
                failure,
                algorithm,
                tests: members.iter().map(|o| o.name.clone()).collect(),
                representative_run: rep.run_id,
                known: known_flag,
                known_by,
                reduction: None,
            }
        })
        .collect();
    (records, localizations)
}

/// What test262 already shows per family: each failing test262 test's
/// blamed algorithm and features (from the cached conformance matrix).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KnownIndex {
    /// Family name -> (blamed algorithm, features, test name) of its failing test262 tests.
    pub failing: BTreeMap<String, Vec<(String, Vec<String>, String)>>,
}

impl KnownIndex {
    /// Builds the index from the test262 matrix's observations.
    pub fn build(matrix: &[Observed], catalogue: &Catalogue) -> KnownIndex {
        let mut families: Vec<Family> = matrix
            .iter()
            .flat_map(|o| o.vote.families.iter().map(|f| f.family))
            .collect();
        families.sort();
        families.dedup();
        let mut failing: BTreeMap<String, Vec<(String, Vec<String>, String)>> = BTreeMap::new();
        for f in families {
            let target = Target::Family(f);
            let (r, _, _) = rank(target, matrix, catalogue, &Er1b);
            for o in matrix {
                if target.verdict(o) == Some(true)
                    && let Some(cov) = &o.coverage
                    && let Some(a) = blame(catalogue, cov, &r)
                {
                    failing
                        .entry(f.to_string())
                        .or_default()
                        .push((a, o.features.clone(), o.name.clone()));
                }
            }
        }
        KnownIndex { failing }
    }

    /// The test262 test that makes a finding of `family` blaming
    /// `algorithm` with `features` known: it fails on that family, blames
    /// the same algorithm, and shares a feature (or both have none).
    pub fn known(&self, family: &str, algorithm: &str, features: &[String]) -> Option<String> {
        self.failing.get(family)?.iter().find_map(|(a, fs, name)| {
            let same_feature = (fs.is_empty() && features.is_empty()) || fs.iter().any(|f| features.contains(f));
            (a == algorithm && same_feature).then(|| name.clone())
        })
    }
}
