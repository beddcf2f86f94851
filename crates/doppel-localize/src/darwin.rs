//! Darwin (Qi, Roychoudhury, Liang and Vaswani, ESEC/FSE 2009 / TOSEM,
//! sections 3-4) on doppel's concolic wasm interpreter.
//!
//! Given the reference P, the modified P' and a test t on which they
//! disagree: f is P's path condition on t, f' is P''s. Writing
//! f' = ψ1 ∧ ... ∧ ψm, every satisfying input of a deviation
//! φi = f ∧ ψ1..ψi ∧ ¬ψi+1 (at a branch of the user's source, the paper's
//! "source-code branches") follows P's path but leaves P''s path at branch
//! i+1: that branch is a root-cause candidate in P'. The symmetric
//! direction f' ∧ ¬f gives candidates in P (code missing in P'). Before the
//! full query, the paper's cheap check of ψ1..ψi ∧ ¬ψi+1 without f (short
//! timeout) discards unsatisfiable deviations. Each query is sliced
//! ([`crate::slice`]): only the constraints that share an input byte with
//! ¬ψi+1, directly or through other constraints, go to the solver, and the
//! other bytes keep t's values (concretization; a model names only the
//! slice's bytes). Every alternate input t' is
//! validated by concrete runs of P and P': P's own branch sequence must be
//! t's, P''s must differ; t' is *successful* when P and P' then agree
//! (Codeflaws' comparison), and successful lines rank first, then earlier
//! deviations.
//!
//! Predicate instrumentation (TOSEM section 5, "errors that do not affect
//! control flow"): with [`DarwinConfig::predicates`], both programs run with
//! doppel-concolic's observation points on the user's source, so the sign
//! and zero of call results and `x == y` at assignments are virtual
//! branches in f and f'; a wrong constant or a wrong assigned variable then
//! parts the path conditions at the assignment. With
//! [`DarwinConfig::strict_predicates`], P's virtual branches belong to f as
//! the paper has it: a predicate deviation must keep P's predicates.
//!
//! What t itself shows completes the report: the critical predicates of
//! P' on t ([`DarwinConfig::predicate_switching`], [`crate::switching`])
//! and where the executions on t part ([`DarwinConfig::first_divergence`],
//! [`crate::divergence`]), ranked after every validated deviation, and
//! reported when there is none or (with
//! [`DarwinConfig::on_t_with_deviations`]) beside them.

use crate::dual::{Dual, Model};
use crate::ranking::on_t_shown;
pub use crate::ranking::{rank, score};
use crate::report::Report;
use crate::sliced::SlicedSession;
use crate::truth::{Line, Side};
use doppel_concolic::solver::{SatResult, Solver, SolverError};
use doppel_concolic::{
    BranchFilter, BranchKind, Budget, BudgetKind, ExprArena, ExprId, InputSource, InputVar, Inputs, Module, Observe,
    Outcome as RunOutcome, Run, RunConfig, Symbolic, run,
};
use doppel_lang::c::codeflaws::outputs_match;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Knobs of one Darwin analysis.
#[derive(Debug, Clone, Copy)]
pub struct DarwinConfig {
    /// Timeout of one full deviation query.
    pub query_timeout: Duration,
    /// Timeout of the cheap pre-check (without f).
    pub precheck_timeout: Duration,
    /// Wall-clock budget of the whole analysis: no deviation query starts
    /// after it and no solver wait outlasts it (a query's timeouts are cut
    /// to what is left). The case runner counts the wasm builds in it.
    pub budget: Duration,
    /// Interpreter budgets of one run.
    pub run_budget: Budget,
    /// Deviations tried per static branch site (loops repeat a branch).
    pub per_site: usize,
    /// Predicate instrumentation (TOSEM section 5): virtual branches for
    /// call results (sign, zero) and `x == y` at assignments in the user's
    /// source, through doppel-concolic's observation points.
    pub predicates: bool,
    /// Other recently assigned variables each assignment is compared with.
    pub peers: u32,
    /// `x == y` predicates at 1- and 2-byte stores too (`char` and `short`
    /// variables; doppel-concolic's `Observe::narrow`).
    pub narrow_stores: bool,
    /// Timeout of a full query in the long-lived incremental solver; a query
    /// it cannot decide goes to a fresh z3 process (`query_timeout`).
    pub incremental_timeout: Duration,
    /// Lines in the report (the best ranked; 0: all).
    pub report_lines: usize,
    /// Walk the program's own branches (both directions) before any
    /// predicate, within the same wall-clock budget: predicates are about 2
    /// of 3 deviation candidates, and walking them in path order let the
    /// budget end the walk before later own branches were tried
    /// (docs/results/localize.md). `false`: one walk in path order.
    pub own_branches_first: bool,
    /// A symbolic run of t that exceeds the interpreter's expression or
    /// constraint budget (the shadow state, not the program, is too big)
    /// still gives its path condition up to there: deviations are tried
    /// along that prefix, and alternate inputs are validated against the
    /// complete paths of concrete runs of t. `false`: such a case ends
    /// `budget spent`.
    pub prefix_on_budget: bool,
    /// Slice every deviation query to the constraints that share an input
    /// byte with the negated branch, directly or through other
    /// constraints (TOSEM section 5's slicing; [`crate::slice`]): the
    /// other bytes keep t's values. `false`: f and the whole prefix in
    /// every query, asserted incrementally in one long-lived z3.
    pub slicing: bool,
    /// With slicing, each deviation query first keeps every byte of the
    /// slice that ¬ψi+1 does not read at t's value (only the negated
    /// branch's own bytes are free): its model is the alternate input
    /// nearest t, which most often keeps P's path where it runs through
    /// concretized floats and addresses (not in f). When that is
    /// unsatisfiable, undecided or fails validation, the whole slice is
    /// free. `false`: the whole slice only.
    pub near_t_first: bool,
    /// Rank predicate causes found later in their run's path before earlier
    /// ones ([`score`]); `false`: earlier first, as own branches. Measured
    /// on the stored causes of both Codeflaws sets (docs/results/localize.md):
    /// same-author 65 faulty lines in the 5-line report against 59 (top-1
    /// 48 against 49), cross-author 20 against 18 (top-1 10 against 5). Its
    /// cost: the output statement's predicates (`printf`'s result, the
    /// return value's store) can rank above a wrong constant's assignment
    /// before them, as on the bundled DCCR pair.
    pub late_predicates: bool,
    /// When no deviation is validated (none exists, or the budget ran out
    /// first), report where the executions of P and P' on t first part
    /// ([`crate::divergence`]): the first own branch they take differently
    /// after a common prefix, else the statements that printed the first
    /// differing character. Faults in what a statement prints, in how libc
    /// parses the input, or whose deviation the rest of the path pins leave
    /// no branch to deviate at. `false`: such cases end `no deviation
    /// found` or `budget spent` with an empty report.
    pub first_divergence: bool,
    /// A deviation at a virtual branch (a predicate) counts only if P's own
    /// predicates keep their directions too: f includes P's predicate
    /// constraints in the predicate walk, and validation asks P's whole
    /// user path on t' (own and virtual branches) to be t's, as the
    /// paper's f over the instrumented P. A predicate that P and P' share
    /// unchanged then flips in both and is no deviation (without this, any
    /// input that flips such a predicate in P' validates, the predicate
    /// noise of docs/results/localize.md). `false`: P keeps its own
    /// branches only.
    pub strict_predicates: bool,
    /// Predicate switching ([`crate::switching`]; Zhang, Gupta and Gupta,
    /// ICSE 2006): the branch instances of P' on t whose inverted direction
    /// makes P' print P's output (critical predicates), found by switched
    /// concrete runs of P' alone. They need no alignment of P and P', so
    /// they also apply to programs by different authors. Ranked after the
    /// validated deviations and before the divergence points ([`score`]).
    /// `false`: not searched.
    pub predicate_switching: bool,
    /// Limits of the predicate-switching search.
    pub switch_limits: crate::switching::SwitchLimits,
    /// The report holds the lines found on t (the first divergence,
    /// critical predicates) after validated deviations too, within
    /// `report_lines`, when none of those deviations has a successful
    /// witness (P and P' agree on none of their t'); `false`: only when
    /// no deviation is validated. A successful witness is the paper's
    /// strong evidence; without one, deviations of two programs by
    /// different authors are mostly about each program's own structure
    /// (docs/results/localize.md), and what t shows is the better evidence.
    pub on_t_with_deviations: bool,
}

impl Default for DarwinConfig {
    fn default() -> Self {
        Self {
            query_timeout: Duration::from_millis(5000),
            precheck_timeout: Duration::from_millis(200),
            budget: Duration::from_secs(30),
            run_budget: Budget {
                per_site: 256,
                ..Budget::default()
            },
            per_site: 4,
            predicates: true,
            peers: 4,
            narrow_stores: false,
            incremental_timeout: Duration::from_millis(300),
            report_lines: 5,
            own_branches_first: true,
            prefix_on_budget: false,
            slicing: true,
            near_t_first: true,
            late_predicates: true,
            first_divergence: true,
            strict_predicates: true,
            predicate_switching: true,
            switch_limits: crate::switching::SwitchLimits::default(),
            on_t_with_deviations: true,
        }
    }
}

/// Which deviation targets one walk along a path condition tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Targets {
    /// Every user branch, own and virtual, in path order.
    All,
    /// The program's own branches only.
    Own,
    /// Virtual branches (predicates) only.
    Predicates,
}

impl Targets {
    fn admits(self, kind: BranchKind) -> bool {
        let predicate = matches!(kind, BranchKind::Predicate(_));
        match self {
            Targets::All => true,
            Targets::Own => !predicate,
            Targets::Predicates => predicate,
        }
    }
}

/// A validated alternate input and what both programs print on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Witness {
    /// The alternate input t' (stdin).
    pub input: Vec<u8>,
    /// P's standard output on t'.
    pub reference_output: String,
    /// P''s standard output on t'.
    pub modified_output: String,
    /// Whether P and P' agree on t' (Codeflaws' comparison).
    pub successful: bool,
}

/// One root-cause branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootCause {
    /// The branch's line (P' for f ∧ ¬f', P for f' ∧ ¬f).
    pub line: Line,
    /// The enclosing function.
    pub function: String,
    /// The branch's wasm code offset.
    pub offset: u32,
    /// The witness.
    pub witness: Witness,
    /// Whether the branch is a virtual one (a predicate of the
    /// instrumentation), not a condition of the program.
    #[serde(default)]
    pub predicate: bool,
    /// Index of the deviating branch's constraint in its run's path
    /// condition, and that path condition's length (earlier deviations are
    /// closer to where the runs part).
    #[serde(default)]
    pub position: (u32, u32),
    /// `Some` when the line is not a validated deviation but a point
    /// where the executions of P and P' on t first part
    /// ([`crate::divergence`]; the witness is t itself, and `position` is
    /// the index of the branch in the compared sequences, or the differing
    /// character's offset and the output's length).
    #[serde(default)]
    pub point: Option<DivergencePoint>,
}

/// Where the executions of P and P' on t first part ([`crate::divergence`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergencePoint {
    /// The first own branch the two runs take differently (compared by
    /// source text and direction) after a common prefix.
    Branch,
    /// The statement that printed the first differing character.
    Output,
    /// A branch of P' whose inverted direction on t makes P' print P's
    /// output ([`crate::switching`]): not where the runs part, but found
    /// on t alone likewise (`position` is the instance's index among P''s
    /// branch records on t, and their number).
    CriticalPredicate,
}

impl RootCause {
    /// What kind of line it is: `branch` (a condition of the program),
    /// `predicate` (a virtual branch of the instrumentation), `branch
    /// divergence` or `output divergence` (where the runs on t part,
    /// [`crate::divergence`]), `critical predicate` (a branch of P' whose
    /// switched direction makes it print P's output, [`crate::switching`]).
    pub fn kind(&self) -> &'static str {
        match self.point {
            Some(DivergencePoint::CriticalPredicate) => "critical predicate",
            Some(DivergencePoint::Branch) => "branch divergence",
            Some(DivergencePoint::Output) => "output divergence",
            None if self.predicate => "predicate",
            None => "branch",
        }
    }
}

/// How a Darwin analysis ended (issue 16's named outcomes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DarwinOutcome {
    /// At least one validated root-cause branch.
    Localized,
    /// Every deviation was unsatisfiable or failed validation.
    NoDeviationFound,
    /// No deviation was validated (`after` says why: none found, or the
    /// budget ran out first); the report holds what t itself shows: the
    /// critical predicates of P' ([`DarwinConfig::predicate_switching`])
    /// and where the executions of P and P' on t first part, a branch or
    /// the statements that printed the first differing character
    /// ([`DarwinConfig::first_divergence`]).
    FirstDivergence {
        /// Why no deviation: `no deviation found` or the budget's reason.
        after: String,
    },
    /// A budget ran out (the wall clock, or the interpreter's), before any
    /// line was found.
    BudgetSpent {
        /// Which.
        reason: String,
    },
    /// The program uses an instruction or import the interpreter lacks.
    UnsupportedInstruction {
        /// Which.
        reason: String,
    },
    /// P and P' print the same on t under wasm.
    Agree,
    /// P or P' does not build for wasm32-wasi, or its module does not decode.
    BuildFailure {
        /// The compiler's or decoder's message.
        message: String,
    },
    /// The solver is missing or failed.
    SolverFailure {
        /// Why.
        reason: String,
    },
}

/// Counters of one analysis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DarwinStats {
    /// User-code branch records with a constraint, both directions.
    pub candidates: usize,
    /// Deviations the cheap check proved unsatisfiable.
    pub precheck_unsat: usize,
    /// Full queries sent.
    pub queries: usize,
    /// Satisfiable full queries.
    pub sat: usize,
    /// Alternate inputs that passed validation.
    pub validated: usize,
    /// Full queries the solver gave up on (its timeout).
    pub unknown: usize,
    /// Full queries the long-lived incremental solver decided (the rest
    /// went to a fresh z3 process).
    #[serde(default)]
    pub incremental: usize,
    /// Virtual branches (predicates) among the candidates.
    #[serde(default)]
    pub predicate_candidates: usize,
    /// Solver failures survived by starting a fresh solver.
    pub solver_errors: usize,
    /// Length of f and f' (path condition entries).
    pub path_lengths: (usize, usize),
    /// Wasm instructions of the symbolic runs of P and P' on t.
    pub instructions: (u64, u64),
    /// Wall-clock milliseconds spent in deviation queries (the cheap
    /// check and the full query, z3 processes included): the solver's
    /// share of a case (`doppel bench localize`).
    #[serde(default)]
    pub solver_ms: u64,
    /// With slicing: constraints in the queries' slices, summed over the
    /// queries, and constraints of f and the prefix at those queries.
    #[serde(default)]
    pub slice_constraints: (usize, usize),
    /// With `near_t_first`: deviations found with only the negated
    /// branch's own bytes free (validated).
    #[serde(default)]
    pub near_t: usize,
    /// The predicate-switching search ([`DarwinConfig::predicate_switching`]).
    #[serde(default)]
    pub switching: crate::switching::SwitchStats,
}

/// The result of one analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DarwinResult {
    /// How it ended.
    pub outcome: DarwinOutcome,
    /// Validated root causes (one per line, the first witness found).
    pub causes: Vec<RootCause>,
    /// The ranked report (`darwin`): successful witnesses first.
    pub report: Report,
    /// Counters.
    pub stats: DarwinStats,
}

/// One program of the analysis.
pub struct Program<'a> {
    /// The decoded module.
    pub module: &'a Module,
    /// Its source file as DWARF names it (the build's source path).
    pub source: String,
    /// Which side it is.
    pub side: Side,
}

fn config(input: &[u8], args: &[String], symbolic: bool, source: &str, cfg: &DarwinConfig) -> RunConfig {
    RunConfig {
        inputs: Inputs {
            stdin: input.to_vec(),
            program_name: "prog".into(),
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            ..Default::default()
        },
        // Standard input only: the command line stays concrete (the
        // deviations' variables are t's bytes).
        symbolic: Symbolic {
            stdin: symbolic,
            ..Symbolic::NONE
        },
        budget: cfg.run_budget,
        branches: BranchFilter::Files(vec![source.to_string()]),
        coverage: false,
        output_cap: 1 << 20,
        observe: Observe {
            files: if cfg.predicates || cfg.first_divergence {
                vec![source.to_string()]
            } else {
                Vec::new()
            },
            returns: cfg.predicates,
            assignments: cfg.predicates,
            peers: cfg.peers,
            narrow: cfg.narrow_stores,
            writes: cfg.first_divergence,
        },
        switch: None,
    }
}

/// The user-branch sequence of a run: (offset, direction), virtual
/// branches (predicates) included.
fn user_path(r: &Run) -> Vec<(u32, u32)> {
    r.branches.iter().map(|b| (b.offset, b.taken)).collect()
}

/// The program's own branches of a run (no predicates): the path the base
/// program must keep on an alternate input.
fn real_path(r: &Run) -> Vec<(u32, u32)> {
    r.branches
        .iter()
        .filter(|b| !matches!(b.kind, BranchKind::Predicate(_)))
        .map(|b| (b.offset, b.taken))
        .collect()
}

fn run_problem(r: &Run) -> Option<DarwinOutcome> {
    match &r.outcome {
        RunOutcome::Unsupported { opcode, offset } => Some(DarwinOutcome::UnsupportedInstruction {
            reason: format!("{opcode} at offset {offset}"),
        }),
        RunOutcome::UnsupportedImport { module, name } => Some(DarwinOutcome::UnsupportedInstruction {
            reason: format!("import {module}.{name}"),
        }),
        RunOutcome::Budget { budget } => Some(DarwinOutcome::BudgetSpent {
            reason: format!("interpreter budget {budget:?}"),
        }),
        RunOutcome::NoEntryPoint => Some(DarwinOutcome::UnsupportedInstruction {
            reason: "no entry point".into(),
        }),
        _ => None,
    }
}

/// A result without analysis (the programs could not be run).
pub fn not_run(outcome: DarwinOutcome) -> DarwinResult {
    DarwinResult {
        outcome,
        causes: Vec::new(),
        report: Report::set("darwin", []),
        stats: DarwinStats::default(),
    }
}

/// Runs Darwin for `p` (reference) and `q` (modified) on stdin `t`.
pub fn analyze(p: &Program, q: &Program, t: &[u8], cfg: DarwinConfig) -> DarwinResult {
    analyze_with_args(p, q, t, &[], cfg)
}

/// Runs Darwin for `p` and `q` on stdin `t`, both started with the
/// command-line arguments `args` (argv\[1..\]) in every run. The
/// arguments are concrete: alternate inputs differ from t in standard
/// input only.
pub fn analyze_with_args(p: &Program, q: &Program, t: &[u8], args: &[String], cfg: DarwinConfig) -> DarwinResult {
    let start = Instant::now();
    let mut stats = DarwinStats::default();
    let done = |outcome: DarwinOutcome, causes: Vec<RootCause>, stats: DarwinStats| {
        let report = rank(&causes, cfg.report_lines, cfg.late_predicates, cfg.on_t_with_deviations);
        DarwinResult {
            outcome,
            causes,
            report,
            stats,
        }
    };
    let rp = run(p.module, &config(t, args, true, &p.source, &cfg));
    let rq = run(q.module, &config(t, args, true, &q.source, &cfg));
    stats.path_lengths = (rp.path.len(), rq.path.len());
    stats.instructions = (rp.instructions, rq.instructions);
    // With `prefix_on_budget`, a symbolic run cut by the shadow's budgets
    // is replaced, for its output and its complete path, by a concrete run.
    let shadow_cut = |r: &Run| {
        cfg.prefix_on_budget
            && matches!(
                r.outcome,
                RunOutcome::Budget {
                    budget: BudgetKind::Expressions | BudgetKind::Constraints
                }
            )
    };
    let concrete =
        |r: &Run, prog: &Program| shadow_cut(r).then(|| run(prog.module, &config(t, args, false, &prog.source, &cfg)));
    let (cp, cq) = (concrete(&rp, p), concrete(&rq, q));
    let (whole_p, whole_q) = (cp.as_ref().unwrap_or(&rp), cq.as_ref().unwrap_or(&rq));
    if let Some(o) = run_problem(whole_p).or_else(|| run_problem(whole_q)) {
        return done(o, Vec::new(), stats);
    }
    if outputs_match(&whole_p.stdout, &whole_q.stdout) {
        return done(DarwinOutcome::Agree, Vec::new(), stats);
    }
    let vars: Vec<InputVar> = (0..t.len() as u32)
        .map(|index| InputVar {
            source: InputSource::Stdin,
            index,
        })
        .collect();
    let mut causes: BTreeMap<Line, RootCause> = BTreeMap::new();
    let mut budget_hit = false;
    // Direction 1: f ∧ ¬f' (lines in P'); direction 2: f' ∧ ¬f (lines in P);
    // with `own_branches_first`, both directions at own branches, then both
    // at predicates.
    let walks: &[Targets] = if cfg.own_branches_first && cfg.predicates {
        &[Targets::Own, Targets::Predicates]
    } else {
        &[Targets::All]
    };
    let (paths_p, paths_q) = (
        (real_path(whole_p), user_path(whole_p)),
        (real_path(whole_q), user_path(whole_q)),
    );
    'walks: for &targets in walks {
        for (base, dev, base_prog, dev_prog, base_user, base_all, dev_user) in [
            (&rp, &rq, p, q, &paths_p.0, &paths_p.1, &paths_q.1),
            (&rq, &rp, q, p, &paths_q.0, &paths_q.1, &paths_p.1),
        ] {
            let res = deviate(
                Walk {
                    base,
                    dev,
                    base_prog,
                    dev_prog,
                    targets,
                    args,
                    base_user,
                    base_all,
                    dev_user,
                },
                t,
                &vars,
                cfg,
                start,
                &mut stats,
                &mut causes,
            );
            match res {
                Ok(true) => {}
                Ok(false) => {
                    budget_hit = true;
                    break 'walks;
                }
                Err(e) => {
                    let causes: Vec<RootCause> = causes.into_values().collect();
                    if causes.is_empty() {
                        return done(DarwinOutcome::SolverFailure { reason: e.to_string() }, causes, stats);
                    }
                    return done(DarwinOutcome::Localized, causes, stats);
                }
            }
        }
    }
    let mut causes: Vec<RootCause> = causes.into_values().collect();
    let outcome = if !causes.is_empty() {
        DarwinOutcome::Localized
    } else if budget_hit {
        DarwinOutcome::BudgetSpent {
            reason: format!("the analysis budget of {:?}", cfg.budget),
        }
    } else if let Some(r) = [&rp, &rq].into_iter().find(|r| shadow_cut(r)) {
        // Nothing along the prefix: the case still ends on the budget.
        DarwinOutcome::BudgetSpent {
            reason: match &r.outcome {
                RunOutcome::Budget { budget } => {
                    format!("interpreter budget {budget:?} (nothing found along the path condition up to there)")
                }
                _ => String::new(),
            },
        }
    } else {
        DarwinOutcome::NoDeviationFound
    };
    // What t itself shows is searched when the report can hold it.
    let wanted = on_t_shown(&causes, cfg.on_t_with_deviations);
    let critical = if cfg.predicate_switching && wanted {
        let plain_cfg = config(t, args, false, &q.source, &cfg);
        let plain = run(q.module, &plain_cfg);
        // A little time past the budget, as the divergence points: the
        // search is cheap and bounded by its own limits.
        let deadline = (start + cfg.budget).max(Instant::now()) + Duration::from_secs(1);
        let (found, s) =
            crate::switching::critical_predicates(q, &plain, &plain_cfg, &whole_p.stdout, cfg.switch_limits, deadline);
        stats.switching = s;
        found
    } else {
        Vec::new()
    };
    // What t itself shows: the critical predicates, then where the runs
    // part; one cause per line, a line a deviation names keeps the
    // deviation. [`rank`] decides how much of it the report holds.
    let mut on_t = critical;
    if cfg.first_divergence && wanted {
        on_t.extend(crate::divergence::first_divergence(p, q, whole_p, whole_q, t));
    }
    let mut named: BTreeSet<Line> = causes.iter().map(|c| c.line).collect();
    on_t.retain(|c| named.insert(c.line));
    if causes.is_empty() {
        let after = match &outcome {
            DarwinOutcome::NoDeviationFound => Some("no deviation found".to_string()),
            DarwinOutcome::BudgetSpent { reason } => Some(format!("budget spent: {reason}")),
            _ => None,
        };
        if let Some(after) = after
            && !on_t.is_empty()
        {
            return done(DarwinOutcome::FirstDivergence { after }, on_t, stats);
        }
        return done(outcome, causes, stats);
    }
    causes.extend(on_t);
    done(outcome, causes, stats)
}

/// One walk: a direction (the run whose path condition holds, the run
/// whose path is left) and the deviation targets tried.
struct Walk<'r, 'p> {
    base: &'r Run,
    dev: &'r Run,
    base_prog: &'r Program<'p>,
    dev_prog: &'r Program<'p>,
    targets: Targets,
    /// Both programs' command line (concrete).
    args: &'r [String],
    /// `base`'s own branches on t (complete: from a concrete run when the
    /// symbolic one was cut), which an alternate input must keep.
    base_user: &'r [(u32, u32)],
    /// `base`'s user branches on t, virtual ones included (complete
    /// likewise), which an alternate input must keep at a predicate
    /// deviation with [`DarwinConfig::strict_predicates`].
    base_all: &'r [(u32, u32)],
    /// `dev`'s user branches on t, which an alternate input must leave.
    dev_user: &'r [(u32, u32)],
}

/// One walk: inputs satisfying `base`'s path condition that leave `dev`'s
/// path at one of its user branches that `targets` admits. `Ok(false)`
/// when the budget ran out.
fn deviate(
    walk: Walk,
    t: &[u8],
    vars: &[InputVar],
    cfg: DarwinConfig,
    start: Instant,
    stats: &mut DarwinStats,
    causes: &mut BTreeMap<Line, RootCause>,
) -> Result<bool, SolverError> {
    let Walk {
        base,
        dev,
        base_prog,
        dev_prog,
        targets,
        args,
        base_user,
        base_all,
        dev_user,
    } = walk;
    // Path indices of `dev`'s user branches (those with a constraint) that
    // this walk tries.
    let user: BTreeMap<u32, (u32, BranchKind)> = dev
        .branches
        .iter()
        .filter(|b| targets.admits(b.kind))
        .filter_map(|b| b.path_index.map(|i| (i, (b.offset, b.kind))))
        .collect();
    if user.is_empty() {
        return Ok(true);
    }
    stats.candidates += user.len();
    stats.predicate_candidates += user
        .values()
        .filter(|(_, k)| matches!(k, BranchKind::Predicate(_)))
        .count();
    let mut arena = dev.arena.clone();
    let mut queries = if cfg.slicing {
        Queries::Sliced(Box::new(SlicedSession::new(
            vars,
            t,
            &base.arena,
            &f_constraints(base, cfg.strict_predicates && targets == Targets::Predicates),
        )?))
    } else {
        Queries::Whole(Box::new(sessions(base, dev, &arena, 0, vars)?))
    };
    let mut tried: BTreeMap<u32, usize> = BTreeMap::new();
    let last = *user.keys().next_back().unwrap_or(&0);
    for (j, c) in dev.path.iter().enumerate() {
        let j = j as u32;
        if j > last {
            break;
        }
        if let Some(&(offset, kind)) = user.get(&j) {
            let Some(left) = cfg.budget.checked_sub(start.elapsed()) else {
                return Ok(false);
            };
            // No solver wait outlives the budget.
            let floor = Duration::from_millis(50);
            let cfg = DarwinConfig {
                query_timeout: cfg.query_timeout.min(left.max(floor)),
                incremental_timeout: cfg.incremental_timeout.min(left.max(floor)),
                precheck_timeout: cfg.precheck_timeout.min(left.max(floor)),
                ..cfg
            };
            let line = dev_prog.module.source_loc(offset).map(|l| l.line).unwrap_or(0);
            let key = Line {
                side: dev_prog.side,
                line,
            };
            let n = tried.entry(offset).or_default();
            if *n < cfg.per_site && !causes.contains_key(&key) {
                *n += 1;
                let neg = arena.not(c.expr);
                let before = (stats.precheck_unsat, stats.sat, stats.unknown);
                let asked = Instant::now();
                // Validation of a model: concrete runs, not solver time.
                let validating = std::cell::Cell::new(Duration::ZERO);
                let check = |model: &Model| {
                    let began = Instant::now();
                    let t2 = Inputs {
                        stdin: t.to_vec(),
                        ..Default::default()
                    }
                    .with_values(model)
                    .stdin;
                    let keep = if cfg.strict_predicates && matches!(kind, BranchKind::Predicate(_)) {
                        Keep::All(base_all)
                    } else {
                        Keep::Own(base_user)
                    };
                    let w = validate(base_prog, dev_prog, &t2, args, keep, dev_user, cfg);
                    validating.set(validating.get() + began.elapsed());
                    w
                };
                let witness = match &mut queries {
                    Queries::Whole(whole) => match query(&mut whole.0, &mut whole.1, &arena, neg, vars, cfg, stats) {
                        Ok(model) => model.and_then(|m| check(&m)),
                        Err(_) => {
                            // A solver that failed (a canceled scope after a
                            // timeout, a crash) is replaced and told the path so far.
                            stats.solver_errors += 1;
                            queries = Queries::Whole(Box::new(sessions(base, dev, &arena, j as usize, vars)?));
                            None
                        }
                    },
                    // A sliced session replaces a failed solver itself; its
                    // error means no solver could be started.
                    Queries::Sliced(session) => session.query([&base.arena, &arena], neg, &cfg, stats, &check)?,
                };
                stats.solver_ms += asked.elapsed().saturating_sub(validating.get()).as_millis() as u64;
                if std::env::var_os("DOPPEL_DARWIN_DEBUG").is_some() {
                    eprintln!(
                        "deviation {key} j={j} (pre-unsat, sat, unknown) {:?} -> {:?} vars {:?} validated {}",
                        before,
                        (stats.precheck_unsat, stats.sat, stats.unknown),
                        arena.vars(c.expr).iter().map(|v| v.name()).collect::<Vec<_>>(),
                        witness.is_some()
                    );
                }
                if let Some(w) = witness {
                    stats.validated += 1;
                    let function = dev_prog
                        .module
                        .source_loc(offset)
                        .map(|l| l.function.clone())
                        .unwrap_or_default();
                    causes.insert(
                        key,
                        RootCause {
                            line: key,
                            function,
                            offset,
                            witness: w,
                            predicate: matches!(kind, BranchKind::Predicate(_)),
                            position: (j, dev.path.len() as u32),
                            point: None,
                        },
                    );
                }
            }
        }
        if kept(c) {
            match &mut queries {
                Queries::Whole(whole) => {
                    whole.1.assert(1, &arena, c.expr)?;
                    whole.0.assert(1, &arena, c.expr)?;
                }
                Queries::Sliced(session) => session.add(1, &arena, c.expr)?,
            }
        }
    }
    Ok(true)
}

/// The solver sessions of one walk.
enum Queries {
    /// `full` (f and the prefix) and `pre` (the prefix), asserted
    /// incrementally.
    Whole(Box<(Dual, Dual)>),
    /// Definitions only; each query asserts its slice.
    Sliced(Box<SlicedSession>),
}

/// f's entries in the queries: `base`'s kept constraints up to its last
/// user branch. What libc does after it (printf's digit loops: divisions
/// of symbolic values) cannot change the user path but makes queries slow
/// and constrains the output's digits (darwin-measured.md trap 15).
fn f_constraints(base: &Run, predicates: bool) -> Vec<ExprId> {
    let f_end = base
        .branches
        .iter()
        .filter_map(|b| b.path_index)
        .max()
        .map_or(0, |i| i as usize + 1);
    let predicate = |c: &doppel_concolic::PathConstraint| {
        matches!(
            c.origin,
            doppel_concolic::ConstraintOrigin::Branch {
                kind: BranchKind::Predicate(_)
            }
        )
    };
    base.path[..f_end]
        .iter()
        .filter(|c| kept(c) || (predicates && predicate(c)))
        .map(|c| c.expr)
        .collect()
}

/// Fresh solvers: `full` knows `base`'s path condition and `dev`'s first
/// `upto` entries, `pre` only the latter.
fn sessions(
    base: &Run,
    dev: &Run,
    arena: &ExprArena,
    upto: usize,
    vars: &[InputVar],
) -> Result<(Dual, Dual), SolverError> {
    let mut full = Dual::new(vars)?;
    let mut pre = Dual::new(vars)?;
    for e in f_constraints(base, false) {
        full.assert(0, &base.arena, e)?;
    }
    for c in dev.path[..upto].iter().filter(|c| kept(c)) {
        full.assert(1, arena, c.expr)?;
        pre.assert(1, arena, c.expr)?;
    }
    Ok((full, pre))
}

/// The cheap check without f, then the full deviation query: the model of
/// a satisfiable deviation, `None` when unsatisfiable or unknown.
fn query(
    full: &mut Dual,
    pre: &mut Dual,
    arena: &ExprArena,
    neg: ExprId,
    vars: &[InputVar],
    cfg: DarwinConfig,
    stats: &mut DarwinStats,
) -> Result<Option<Model>, SolverError> {
    pre.push()?;
    pre.assert(1, arena, neg)?;
    let cheap = pre.solver.check(cfg.precheck_timeout)?;
    pre.pop()?;
    if cheap == SatResult::Unsat {
        stats.precheck_unsat += 1;
        return Ok(None);
    }
    stats.queries += 1;
    let (mut answer, mut model) = (SatResult::Unknown, None);
    if !cfg.incremental_timeout.is_zero() {
        (answer, model) = full.incremental(arena, neg, vars, cfg.incremental_timeout)?;
        if answer != SatResult::Unknown {
            stats.incremental += 1;
        }
    }
    if answer == SatResult::Unknown {
        (answer, model) = full.one_shot(arena, neg, vars, cfg.query_timeout)?;
    }
    match answer {
        SatResult::Unknown => stats.unknown += 1,
        SatResult::Sat => stats.sat += 1,
        SatResult::Unsat => {}
    }
    Ok(model)
}

/// Whether a path-condition entry goes into the queries: branch conditions
/// do; concretizations of symbolic addresses and float operands do not.
/// musl's `%s` conversion indexes a scanset bitmap on the stack by the
/// input byte, and the interpreter fixes such writable-memory addresses to
/// their concrete value, which would pin every byte `scanf` reads and make
/// every deviation unsatisfiable. Without them a model may leave the path
/// through such a lookup; the concrete validation of every alternate input
/// rejects those.
///
/// Virtual branches (predicates) are deviation targets only, never part of
/// f or of the prefix ψ1..ψi: as constraints they pin the values they
/// compare (`x != y` at every assignment of a loop), which made deviations
/// at real branches unsatisfiable that were satisfiable without them
/// (252-A, 218-A). So predicates only add root-cause candidates.
fn kept(c: &doppel_concolic::PathConstraint) -> bool {
    matches!(c.origin, doppel_concolic::ConstraintOrigin::Branch { kind } if !matches!(kind, BranchKind::Predicate(_)))
}

/// What the base program must keep on an alternate input.
#[derive(Clone, Copy)]
enum Keep<'a> {
    /// Its own branches on t.
    Own(&'a [(u32, u32)]),
    /// Its own and virtual branches on t.
    All(&'a [(u32, u32)]),
}

/// Concrete runs of both programs on `t2`: the base program must follow
/// its path on t (`keep`), the deviating one must leave its user path.
fn validate(
    base_prog: &Program,
    dev_prog: &Program,
    t2: &[u8],
    args: &[String],
    keep: Keep,
    dev_user: &[(u32, u32)],
    cfg: DarwinConfig,
) -> Option<Witness> {
    let b = run(base_prog.module, &config(t2, args, false, &base_prog.source, &cfg));
    let d = run(dev_prog.module, &config(t2, args, false, &dev_prog.source, &cfg));
    if run_problem(&b).is_some() || run_problem(&d).is_some() {
        return None;
    }
    let kept = match keep {
        Keep::Own(path) => real_path(&b) == path,
        Keep::All(path) => user_path(&b) == path,
    };
    if std::env::var_os("DOPPEL_DARWIN_DEBUG").is_some() {
        eprintln!(
            "validate {:?}: base keeps its path {}, deviating run leaves its path {}",
            String::from_utf8_lossy(t2),
            kept,
            user_path(&d) != dev_user
        );
    }
    if !kept || user_path(&d) == dev_user {
        return None;
    }
    let (p_out, q_out) = if base_prog.side == Side::Reference {
        (&b.stdout, &d.stdout)
    } else {
        (&d.stdout, &b.stdout)
    };
    Some(Witness {
        input: t2.to_vec(),
        reference_output: String::from_utf8_lossy(p_out).into_owned(),
        modified_output: String::from_utf8_lossy(q_out).into_owned(),
        successful: outputs_match(p_out, q_out),
    })
}

/// The set of lines a result reports, for tests and summaries.
pub fn reported_lines(r: &DarwinResult) -> BTreeSet<Line> {
    r.causes.iter().map(|c| c.line).collect()
}
