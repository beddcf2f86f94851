//! The coverage-guided program pool (JEST, ICSE 2021, §III-B): the
//! [`Generator`] turns seeds and mutants into kept programs.
//!
//! Candidates come in three phases, in this order:
//! 1. grammar seeds: one oxc-accepted program per reachable alternative of
//!    the ES2025 grammar ([`crate::synth::synthesize_checked`]), when a
//!    grammar is configured, each followed by its activated variants
//!    ([`crate::seed_activate::activate`], unless
//!    [`GeneratorConfig::activate`] is off);
//! 2. built-in calls ([`crate::seed_builtins::builtin_programs`]) over the
//!    built-ins walked in engine262 on the first call of [`Generator::next`];
//! 3. mutants: a mutator drawn uniformly from [`crate::mutate::registry`]
//!    edits a pool program; this phase never ends.
//!
//! Mutants do not wait for the seeds to run out: once the pool holds a
//! program, each candidate is a mutant with probability
//! [`GeneratorConfig::mutation_share`] while seeds remain.
//!
//! A candidate already tried (same text) is not run again. A candidate
//! enters the pool only when oxc accepts it, it is at most
//! [`GeneratorConfig::max_len`] bytes, engine262 (with coverage) ends it
//! normally or with an uncaught exception within [`GeneratorConfig::run`]'s
//! timeout (not a timeout, host stack overflow, crash or host error), and
//! its semantics coverage adds at least one algorithm or step to the pool's
//! union ([`CoverageUnion::add`]). Everything is drawn from one ChaCha8 RNG
//! seeded by the `seed` of [`Generator::new`]: with the same configuration,
//! seed and engine262 build, the same programs are kept in the same order.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use doppel_engines::coverage::{Catalogue, CoverageUnion, ProgramCoverage};
use doppel_engines::engine::engine262::Engine262;
use doppel_engines::{EnginesConfig, Outcome, RunOptions, Script};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::grammar::Grammar;
use crate::mutate::{MutationContext, Mutator, registry};
use crate::seed_builtins::{SpecVocabulary, builtin_programs};
use crate::seed_check::oxc_check;
use crate::seed_random::Palette;
use crate::shortest::{Shortest, ShortestParts};
use crate::synth::{SyntaxCoverage, synthesize_checked};

/// How the generator runs.
#[derive(Debug, Clone)]
pub struct GeneratorConfig {
    /// The ES2025 grammar (ESMeta `grammar.json`, [`Grammar::load`]): grammar
    /// seeds and random derivations. `None`: built-in seeds only, and the
    /// random mutator splices subtrees between pool programs.
    pub grammar: Option<Arc<Grammar>>,
    /// The goal symbol of grammar seeds (`Script`).
    pub goal: String,
    /// Whether to synthesize built-in function calls (phase 2).
    pub builtins: bool,
    /// Whether each grammar seed is followed by its activated variants
    /// ([`crate::seed_activate::activate`]: values of the right shape,
    /// drivers that call what it declares) and the activation mutator is
    /// drawn ([`crate::mutate::activate`]); off: JEST's inert seeds and
    /// five mutators only.
    pub activate: bool,
    /// Limits of one engine262 run (timeout; output cap).
    pub run: RunOptions,
    /// Longest candidate kept, in bytes (mutants grow by insertion).
    pub max_len: usize,
    /// Candidates one [`Generator::next`] call tries before returning `Ok(None)`.
    pub attempts_per_call: usize,
    /// While seeds remain, the probability that a candidate is a mutant
    /// (once the pool is non-empty); 0 runs all seeds first.
    pub mutation_share: f64,
    /// Where engine262 is installed (its bundle's string constants feed the
    /// string mutator).
    pub engines: EnginesConfig,
}

impl Default for GeneratorConfig {
    /// No grammar, built-ins and activation on, 5 s per run, 4 KiB programs, 2,000 attempts
    /// per call, half of the candidates mutants while seeds remain.
    fn default() -> Self {
        GeneratorConfig {
            grammar: None,
            goal: "Script".into(),
            builtins: true,
            activate: true,
            run: RunOptions::default(),
            max_len: 4096,
            attempts_per_call: 2000,
            mutation_share: 0.5,
            engines: EnginesConfig::default(),
        }
    }
}

/// Where a kept program came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// A grammar seed for one alternative (`production` `#alternative`).
    Grammar {
        /// The production.
        production: String,
        /// The alternative's index.
        alternative: usize,
    },
    /// An activated variant of the grammar seed for `production` `#alternative`
    /// ([`crate::seed_activate`]).
    Activated {
        /// The production.
        production: String,
        /// The alternative's index.
        alternative: usize,
    },
    /// A built-in call.
    Builtin,
    /// A mutant of a pool program.
    Mutant {
        /// The mutator's registry name (`random`, `nearest`, `string`, `object`, `diverter`).
        mutator: String,
        /// The parent's index in the pool ([`Generator::pool`]).
        parent: usize,
        /// What the mutator did.
        detail: String,
    },
}

impl Origin {
    /// `grammar`, `activated`, `builtin` or the mutator's name.
    pub fn label(&self) -> &str {
        match self {
            Origin::Grammar { .. } => "grammar",
            Origin::Activated { .. } => "activated",
            Origin::Builtin => "builtin",
            Origin::Mutant { mutator, .. } => mutator,
        }
    }
}

/// A program that entered the pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// The program (a classic Script).
    pub source: String,
    /// Where it came from.
    pub origin: Origin,
    /// How engine262 ended it: [`Outcome::Normal`] or [`Outcome::Exception`].
    pub outcome: Outcome,
    /// Its own semantics coverage in engine262 (indices into the catalogue).
    pub coverage: ProgramCoverage,
    /// Algorithms it added to the pool's union.
    pub new_algorithms: usize,
    /// Steps it added to the pool's union.
    pub new_steps: usize,
}

/// Counters of a generator's work so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratorStats {
    /// Candidates considered (seeds and mutants).
    pub candidates: usize,
    /// Mutation attempts that produced no accepted program.
    pub mutations_failed: usize,
    /// Candidates oxc rejected or longer than the limit.
    pub rejected_syntax: usize,
    /// Candidates identical to one tried before (not run again).
    pub duplicates: usize,
    /// Candidates engine262 did not end normally or by exception, by outcome label.
    pub rejected_outcome: BTreeMap<String, usize>,
    /// Candidates that ran fine but added no coverage.
    pub no_new_coverage: usize,
    /// Programs kept.
    pub kept: usize,
    /// Per origin label: (candidates, kept).
    pub by_origin: BTreeMap<String, (usize, usize)>,
}

/// Coverage figures of the pool (JEST Table II's measures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageFigures {
    /// Syntax coverage of the oxc-accepted grammar seeds (`None` without a grammar).
    pub syntax: Option<SyntaxCoverage>,
    /// (covered, total) engine262 algorithms.
    pub algorithms: (usize, usize),
    /// (covered, total) engine262 steps.
    pub steps: (usize, usize),
    /// (covered, total) top-level steps.
    pub top_steps: (usize, usize),
    /// Programs in the pool.
    pub programs: usize,
}

/// Grammar-side state: the grammar, its shortest strings (shared), the seeds.
struct GrammarState {
    grammar: Arc<Grammar>,
    shortest: ShortestParts,
    syntax: SyntaxCoverage,
}

/// The coverage-guided generator: seeds, then mutants; see the module doc.
pub struct Generator {
    config: GeneratorConfig,
    rng: ChaCha8Rng,
    grammar: Option<GrammarState>,
    queue: VecDeque<(String, Origin)>,
    builtins_queued: bool,
    vocabulary: Option<SpecVocabulary>,
    catalogue: Option<Catalogue>,
    mutators: Vec<Box<dyn Mutator>>,
    palette: Palette,
    pool: Vec<Kept>,
    union: CoverageUnion,
    stats: GeneratorStats,
    /// Hashes of every candidate tried (a mutant often repeats one).
    tried: HashSet<u64>,
}

impl Generator {
    /// A generator for `config` drawing from RNG seed `seed`. With a grammar,
    /// this synthesizes and oxc-checks the grammar seeds (a few seconds on
    /// ES2025). Errors: the goal is not in the grammar.
    pub fn new(config: GeneratorConfig, seed: u64) -> Result<Generator, String> {
        let mut queue = VecDeque::new();
        let grammar = match &config.grammar {
            Some(g) => {
                let synthesis = synthesize_checked(g, &config.goal)?;
                for s in synthesis.seeds {
                    let variants = if config.activate {
                        crate::seed_activate::activate(&s.program)
                    } else {
                        Vec::new()
                    };
                    let origin = Origin::Grammar {
                        production: s.production.clone(),
                        alternative: s.alternative,
                    };
                    queue.push_back((s.program, origin));
                    for v in variants {
                        let origin = Origin::Activated {
                            production: s.production.clone(),
                            alternative: s.alternative,
                        };
                        queue.push_back((v, origin));
                    }
                }
                let shortest = crate::seed_random::shortest_for_derivations(g, &config.goal)?.parts();
                Some(GrammarState {
                    grammar: Arc::clone(g),
                    shortest,
                    syntax: synthesis.coverage,
                })
            }
            None => None,
        };
        // Without activation, JEST's five mutators only.
        let mutators = registry()
            .into_iter()
            .filter(|m| config.activate || m.name() != crate::mutate::activate::Activation.name())
            .collect();
        Ok(Generator {
            config,
            rng: ChaCha8Rng::seed_from_u64(seed),
            grammar,
            queue,
            builtins_queued: false,
            vocabulary: None,
            catalogue: None,
            mutators,
            palette: Palette::default(),
            pool: Vec::new(),
            union: CoverageUnion::default(),
            stats: GeneratorStats::default(),
            tried: HashSet::new(),
        })
    }

    /// The next program that adds semantics coverage, after trying at most
    /// [`GeneratorConfig::attempts_per_call`] candidates (`Ok(None)` when
    /// none did; calling again continues).
    ///
    /// `spec` must run with coverage ([`Engine262::with_coverage`]). Errors
    /// (the generator cannot work at all): engine262 gives no catalogue, or
    /// the built-in walk in engine262 failed.
    pub async fn next(&mut self, spec: &mut Engine262) -> Result<Option<Kept>, String> {
        if self.catalogue.is_none() {
            self.catalogue = Some(spec.catalogue().await?);
        }
        if self.vocabulary.is_none() {
            let v = SpecVocabulary::from_engine262(spec, &self.config.engines).await?;
            if v.strings.len() > 1 {
                // Spec strings also feed random derivations.
                let mut extra: Vec<String> = v
                    .strings
                    .iter()
                    .take(400)
                    .map(|s| crate::seed_builtins::quote(s))
                    .collect();
                self.palette.strings.append(&mut extra);
            }
            self.vocabulary = Some(v);
        }
        for _ in 0..self.config.attempts_per_call {
            if self.queue.is_empty() && !self.builtins_queued {
                self.builtins_queued = true;
                if self.config.builtins {
                    let vocab = self.vocabulary.as_ref().expect("set above");
                    for p in builtin_programs(vocab, &mut self.rng) {
                        self.queue.push_back((p, Origin::Builtin));
                    }
                }
            }
            let share = self.config.mutation_share.clamp(0.0, 1.0);
            let mutate = self.queue.is_empty() || (!self.pool.is_empty() && self.rng.random_bool(share));
            let candidate = if mutate { self.mutant() } else { self.queue.pop_front() };
            let Some((source, origin)) = candidate else {
                self.stats.mutations_failed += 1;
                if self.pool.is_empty() {
                    // Nothing to mutate: no seed was kept.
                    return Ok(None);
                }
                continue;
            };
            if let Some(k) = self.consider(spec, source, origin).await {
                return Ok(Some(k));
            }
        }
        Ok(None)
    }

    /// One mutant from a uniformly drawn mutator, as a candidate.
    fn mutant(&mut self) -> Option<(String, Origin)> {
        let m = self.mutators.choose(&mut self.rng)?;
        let name = m.name();
        let shortest = self
            .grammar
            .as_ref()
            .map(|g| Shortest::from_parts(&g.grammar, &g.shortest));
        let ctx = MutationContext {
            pool: &self.pool,
            covered: &self.union,
            catalogue: self.catalogue.as_ref()?,
            vocabulary: self.vocabulary.as_ref()?,
            grammar: shortest.as_ref(),
            palette: &self.palette,
        };
        let mutant = m.mutate(&ctx, &mut self.rng)?;
        Some((
            mutant.source,
            Origin::Mutant {
                mutator: name.to_string(),
                parent: mutant.parent,
                detail: mutant.detail,
            },
        ))
    }

    /// Runs one candidate through the filters; `Some` when it was kept.
    async fn consider(&mut self, spec: &mut Engine262, source: String, origin: Origin) -> Option<Kept> {
        self.stats.candidates += 1;
        let label = origin.label().to_string();
        self.stats.by_origin.entry(label.clone()).or_default().0 += 1;
        let mut h = DefaultHasher::new();
        source.hash(&mut h);
        if !self.tried.insert(h.finish()) {
            self.stats.duplicates += 1;
            return None;
        }
        if source.len() > self.config.max_len || oxc_check(&source).is_err() {
            self.stats.rejected_syntax += 1;
            return None;
        }
        let (r, coverage) = spec
            .run_with_coverage(&Script::new(source.clone()), &self.config.run)
            .await;
        let coverage = match (&r.outcome, coverage) {
            (Outcome::Normal | Outcome::Exception { .. }, Some(c)) => c,
            (o, _) => {
                let key = match o {
                    Outcome::HostError { .. } => "host error".to_string(),
                    o => o.label(),
                };
                *self.stats.rejected_outcome.entry(key).or_default() += 1;
                return None;
            }
        };
        let (new_algorithms, new_steps) = self.union.add(&coverage);
        if new_algorithms == 0 && new_steps == 0 {
            self.stats.no_new_coverage += 1;
            return None;
        }
        self.stats.kept += 1;
        self.stats.by_origin.entry(label).or_default().1 += 1;
        let kept = Kept {
            source,
            origin,
            outcome: r.outcome,
            coverage,
            new_algorithms,
            new_steps,
        };
        self.pool.push(kept.clone());
        Some(kept)
    }

    /// The programs kept so far, in the order they were kept.
    pub fn pool(&self) -> &[Kept] {
        &self.pool
    }

    /// The union of the pool's coverage.
    pub fn covered(&self) -> &CoverageUnion {
        &self.union
    }

    /// The built-ins and spec strings in use (after the first [`Generator::next`]).
    pub fn vocabulary(&self) -> Option<&SpecVocabulary> {
        self.vocabulary.as_ref()
    }

    /// Counters so far.
    pub fn stats(&self) -> &GeneratorStats {
        &self.stats
    }

    /// Grammar seeds and built-in calls not yet tried.
    pub fn seeds_pending(&self) -> usize {
        self.queue.len()
    }

    /// Syntax and semantics coverage of the pool so far (semantics totals
    /// are 0 before the first [`Generator::next`] fetched the catalogue).
    pub fn coverage(&self) -> CoverageFigures {
        let [algorithms, steps, top_steps] = match &self.catalogue {
            Some(cat) => self.union.ratios(cat),
            None => [(0, 0); 3],
        };
        CoverageFigures {
            syntax: self.grammar.as_ref().map(|g| g.syntax.clone()),
            algorithms,
            steps,
            top_steps,
            programs: self.pool.len(),
        }
    }
}
