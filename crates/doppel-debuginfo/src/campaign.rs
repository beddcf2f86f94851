//! A debug-information campaign: every seed program through preparation and
//! the compiler x level x debugger matrix, over a pool of jobs with their
//! own debuggers. Records go to the store the moment they exist (technique
//! `debuginfo`):
//! - one **session** record per (build, debugger): every pair's verdict in
//!   `config.verdicts`, the session's trace;
//! - one **finding** record per wrong value (or debugger failure), classed by
//!   its signature ([`crate::triage::signature`]); its `config` holds
//!   everything `doppel replay` and `doppel repro` need (program text,
//!   augmented lines, compiler, level, debugger, reference, culprit);
//! - one **program** record, written last: the preparation and the verdict
//!   counts. `--resume` skips programs whose program record is stored.
//!
//! Keys: `debuginfo|<campaign>|<config fingerprint>|<tools fingerprint>|<program
//! hash>|program`, `...|<compiler tag>|<level>|<plain or augmented>|<debugger>`
//! and `...|L<line>|<variable>` for findings.

use crate::bisect;
use crate::check::PairVerdict;
use crate::config::DebuginfoConfig;
use crate::program::{self, Build, Cell, Preparation, Program};
use crate::record::FindingRecord;
use crate::toolchain::Compiler;
use crate::triage::{self, Suspect};
use crate::{CheckVerdict, Reference, rust};
use doppel_core::campaign::{self, CampaignStats, Item, ItemError, Job, Options, Sink, Technique};
use doppel_core::store::Store;
use doppel_core::{Finding, Language, RunRecord, Subject, Verdict};
use doppel_debuggers::{Debugger, DebuggerConfig, registry};
use doppel_lang::c::{BuildCache, CSyntax};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::Mutex;

/// The technique name in the store.
pub const TECHNIQUE: &str = "debuginfo";

/// Everything a campaign needs besides its programs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DebuginfoSpec {
    /// Free-text campaign name stored with every record.
    pub name: String,
    /// The technique's settings (`[debuginfo]` in `doppel.toml`, and flags).
    pub config: DebuginfoConfig,
    /// Backend settings (timeouts, limits, executables).
    pub debugger_config: DebuggerConfig,
    /// Parallel jobs, each with its own debuggers.
    pub jobs: usize,
    /// Skip programs whose program record is stored.
    pub resume: bool,
    /// Build cache (optimized builds, augmented programs).
    pub cache_dir: PathBuf,
    /// Executable per debugger name (`lldb = "/usr/bin/lldb-dap-22"`).
    #[serde(default)]
    pub executables: BTreeMap<String, String>,
    /// The compiler of Rust programs (`.rs` seeds, [`crate::rust`]).
    #[serde(default = "default_rustc")]
    pub rustc: String,
    /// Fingerprint of the tools under test (debuggers' and compilers'
    /// executables and versions), set by [`run_campaign`]: part of every key.
    #[serde(default)]
    pub tools: String,
}

fn default_rustc() -> String {
    "rustc".into()
}

/// Progress reports, for the progress bar.
#[derive(Debug, Clone)]
pub enum Progress {
    /// The compilers under test that were not found, with the reason (the
    /// campaign goes on without them).
    Missing(Vec<String>),
    /// A program is done: `outcome` is `checked` or `rejected at <stage>`.
    ProgramDone {
        /// The program's name.
        name: String,
        /// `checked`, or `rejected at <stage>`.
        outcome: String,
        /// Findings stored for it.
        findings: usize,
    },
    /// A finding was stored.
    Finding {
        /// The program's name.
        name: String,
        /// The finding's class key.
        class: String,
    },
}

/// What a campaign did.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Programs checked or rejected.
    pub programs: usize,
    /// Programs skipped because they are stored (`--resume`).
    pub skipped: usize,
    /// Rejected programs per stage.
    pub rejected: BTreeMap<String, usize>,
    /// References found (pairs with a validated -O0 value).
    pub references: usize,
    /// Debugger sessions run (one per build and debugger).
    pub sessions: usize,
    /// Pair checks per verdict name.
    pub verdicts: BTreeMap<String, usize>,
    /// Findings stored.
    pub findings: usize,
    /// Culprit bisections run.
    pub bisections: usize,
    /// Debuggers re-run alone on one pair before a wrong value was left
    /// unconfirmed ([`crate::accuracy::rerun_unconfirmed`]).
    pub reruns: usize,
    /// Records the store did not commit.
    pub store_errors: usize,
    /// Compilers that were not found, with the reason.
    pub missing_compilers: Vec<String>,
    /// Wall time in seconds spent in debugger sessions.
    pub session_seconds: f64,
}

/// The configuration fingerprint in keys: a campaign with other compilers,
/// levels, debuggers or pair budget is another campaign.
pub fn fingerprint(config: &DebuginfoConfig) -> String {
    let j = serde_json::to_string(config).unwrap_or_default();
    hex::encode(Sha256::digest(j.as_bytes()))[..12].to_string()
}

/// The start of every key of a campaign: technique, campaign name,
/// configuration fingerprint, and the tools' fingerprint (debuggers' and
/// compilers' executables and versions, [`DebuginfoSpec::tools`]): one
/// campaign never replaces another's records.
pub fn key_base(spec: &DebuginfoSpec) -> String {
    format!("{TECHNIQUE}|{}|{}|{}", spec.name, fingerprint(&spec.config), spec.tools)
}

/// The key of a program's record.
pub fn program_key(spec: &DebuginfoSpec, program_hash: &str) -> String {
    format!("{}|{program_hash}|program", key_base(spec))
}

/// Runs the campaign over `programs`.
///
/// Runs on the core runner (`doppel_core::campaign`): `options` give jobs,
/// resume, deadline and partition; `on_runner` gets the runner's events,
/// `on_progress` this technique's. Returns this technique's counts and the
/// runner's (runs not stored; environment failures: a program whose
/// preparation hit an error of the machine, [`Preparation::Failed`], is
/// not stored and `--resume` takes it up again).
///
/// Errors: when no compiler is installed, the sanitizer clang's
/// `llvm-symbolizer` is missing (C programs), a debugger cannot be probed
/// or created, or the store cannot be read; a problem of a single program
/// never fails it.
pub async fn run_campaign(
    spec: &DebuginfoSpec,
    programs: Vec<Program>,
    store: &Store,
    options: &Options,
    on_progress: &(dyn Fn(Progress) + Sync),
    on_runner: &(dyn Fn(campaign::Progress<'_>) + Sync),
) -> anyhow::Result<(Stats, CampaignStats)> {
    spec.config.validate().map_err(anyhow::Error::msg)?;
    let mut compilers = Vec::new();
    let mut missing = Vec::new();
    for name in &spec.config.compilers {
        match Compiler::discover(name).await {
            Ok(c) => compilers.push(c),
            Err(e) => missing.push(e),
        }
    }
    let any_c = programs.iter().any(|p| !rust::is_rust_source(&p.source));
    let rustc = if programs.iter().any(|p| rust::is_rust_source(&p.source)) {
        let found = Compiler::discover(&spec.rustc).await;
        if let Err(e) = &found {
            missing.push(e.clone());
        }
        Some(found)
    } else {
        None
    };
    if compilers.is_empty() && any_c {
        anyhow::bail!("no compiler under test is installed: {}", missing.join("; "));
    }
    if any_c {
        // Shadow validation attributes MSan reports to lines; without the
        // matching symbolizer it could not (issue 13, part 4a).
        let clang = crate::wellformed::sanitizer_clang();
        crate::wellformed::symbolizer_for(&clang)
            .map_err(|e| anyhow::anyhow!("shadow validation with {clang} needs its symbolizer: {e}"))?;
    }
    let mut spec = spec.clone();
    spec.tools = tools_fingerprint(&spec, &compilers, rustc.as_ref())?;
    let spec = &spec;
    on_progress(Progress::Missing(missing.clone()));
    let items: Vec<Item<Program>> = programs
        .into_iter()
        .map(|p| Item {
            key: program_key(spec, &p.hash),
            subject: p.name.clone(),
            seed: p.csmith.as_ref().map(|(s, _)| *s).unwrap_or(spec.config.seed),
            input: p,
        })
        .collect();
    let shared = Shared {
        stats: Mutex::new(Stats {
            missing_compilers: missing,
            ..Default::default()
        }),
        bisected: Mutex::new(HashMap::new()),
        compilers: Arc::new(compilers),
        cache: BuildCache::new(spec.cache_dir.clone()),
        rustc,
        rust_builds: rust::RustBuilder::new(spec.cache_dir.join("rust")),
    };
    let technique = Debuginfo {
        spec,
        shared: &shared,
        on_progress,
    };
    let run = campaign::run(&technique, &items, store, options, on_runner).await?;
    let mut stats = shared.stats.into_inner();
    stats.skipped = run.skipped;
    stats.store_errors = run.store_errors;
    Ok((stats, run))
}

/// The tools' fingerprint: every debugger probed (executable and version)
/// and every compiler found.
///
/// Errors: a debugger cannot be probed.
fn tools_fingerprint(
    spec: &DebuginfoSpec,
    compilers: &[Compiler],
    rustc: Option<&Result<Compiler, String>>,
) -> anyhow::Result<String> {
    let entries = registry::all();
    let mut tools = Vec::new();
    for d in &spec.config.debuggers {
        let e = entries
            .iter()
            .find(|e| e.name == d)
            .ok_or_else(|| anyhow::anyhow!("unknown debugger '{d}' (see `doppel backends`)"))?;
        let mut config = spec.debugger_config.clone();
        config.executable = spec.executables.get(d).cloned();
        tools.push((e.probe)(&config)?);
    }
    let compilers: Vec<String> = compilers
        .iter()
        .chain(rustc.and_then(|r| r.as_ref().ok()))
        .map(|c| format!("{}\0{}\0{}", c.name, c.path, c.version))
        .collect();
    Ok(campaign::tools_fingerprint(&tools, &compilers.join("\0")))
}

/// Debug-information validation as the core runner sees it: a program per
/// item, each job with its own debuggers.
#[derive(Clone, Copy)]
struct Debuginfo<'a> {
    spec: &'a DebuginfoSpec,
    shared: &'a Shared,
    on_progress: &'a (dyn Fn(Progress) + Sync),
}

/// One job: its debuggers by name.
struct DebuginfoJob<'a> {
    technique: Debuginfo<'a>,
    debuggers: Vec<(String, Box<dyn Debugger>)>,
}

impl<'a> Technique for Debuginfo<'a> {
    type Input = Program;
    type Job = DebuginfoJob<'a>;

    fn name(&self) -> &str {
        TECHNIQUE
    }

    async fn setup(&self, _index: usize) -> anyhow::Result<DebuginfoJob<'a>> {
        let mut debuggers: Vec<(String, Box<dyn Debugger>)> = Vec::new();
        for d in &self.spec.config.debuggers {
            let mut config = self.spec.debugger_config.clone();
            config.executable = self.spec.executables.get(d).cloned();
            debuggers.push((d.clone(), registry::create(d, &config)?));
        }
        Ok(DebuginfoJob {
            technique: *self,
            debuggers,
        })
    }
}

impl Job for DebuginfoJob<'_> {
    type Input = Program;

    async fn run(&mut self, item: &Item<Program>, sink: &Sink<'_>) -> Result<(), ItemError> {
        let t = self.technique;
        run_program(t.spec, &item.input, &mut self.debuggers, sink, t.shared, t.on_progress).await
    }

    async fn shutdown(mut self) {
        for (_, d) in self.debuggers.iter_mut() {
            d.shutdown().await;
        }
    }
}

struct Shared {
    stats: Mutex<Stats>,
    /// Culprits found so far per program hash and signature without
    /// culprit (`culprit_for`).
    bisected: Mutex<HashMap<String, Option<bisect::Culprit>>>,
    compilers: Arc<Vec<Compiler>>,
    cache: BuildCache,
    /// rustc, when some program is Rust (the reason when it is missing).
    rustc: Option<Result<Compiler, String>>,
    rust_builds: rust::RustBuilder,
}

async fn run_program(
    spec: &DebuginfoSpec,
    p: &Program,
    dbgs: &mut [(String, Box<dyn Debugger>)],
    store: &Sink<'_>,
    shared: &Shared,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<(), ItemError> {
    if rust::is_rust_source(&p.source) {
        run_rust_program(spec, p, dbgs, store, shared, on_progress).await;
        return Ok(());
    }
    let started = Instant::now();
    let limits = spec.debugger_config.limits;
    let prep = match program::barrier_unit(shared.cache.dir()) {
        Ok(barrier) => program::prepare(p, &spec.config, limits, &barrier).await,
        Err(e) => Preparation::Rejected {
            stage: "seed".into(),
            reason: e,
            seconds: 0.0,
        },
    };
    let text = std::fs::read_to_string(&p.source).unwrap_or_default();
    let subject = program_subject(p, &text);
    let ready = match &prep {
        Preparation::Failed { stage, error } => {
            return Err(ItemError::Environment(format!(
                "{}: preparation ({stage}) failed: {error}",
                p.name
            )));
        }
        Preparation::Rejected { stage, reason, .. } => {
            let prep = serde_json::to_value(&prep).unwrap_or_default();
            let program = ProgramRun {
                spec,
                p,
                subject: &subject,
                text: &text,
                started,
            };
            reject_program(program, prep, stage, reason, store, shared, on_progress).await;
            return Ok(());
        }
        Preparation::Ready(r) => r,
    };
    shared.stats.lock().await.references += ready.references.len();
    let syntax = CSyntax::parse(&text);
    let mut matrix: Vec<serde_json::Value> = Vec::new();
    let mut findings = 0usize;
    let mut checks = 0usize;
    for compiler in shared.compilers.iter() {
        for level in &spec.config.levels {
            let checked = match program::check_level(p, &ready.references, compiler, level, &shared.cache, dbgs).await {
                Ok(c) => c,
                Err(e) => {
                    matrix.push(serde_json::json!({"compiler": compiler.tag(), "level": level, "error": e}));
                    continue;
                }
            };
            let (builds, mut cells) = (checked.builds, checked.cells);
            shared.stats.lock().await.reruns +=
                crate::accuracy::rerun_unconfirmed(&spec.config, &builds, &mut cells, dbgs).await;
            crate::accuracy::review(&spec.config, &builds, &mut cells);
            let (row, n_checks, n_findings) = store_level(
                spec,
                p,
                &text,
                (compiler, level),
                &builds,
                &cells,
                &|line| syntax.ast_node_type(line),
                dbgs,
                store,
                shared,
                on_progress,
            )
            .await;
            matrix.push(row);
            checks += n_checks;
            findings += n_findings;
        }
    }
    let program = ProgramRun {
        spec,
        p,
        subject: &subject,
        text: &text,
        started,
    };
    let prep = serde_json::to_value(&prep).unwrap_or_default();
    let done = Verdict::Checked { checks };
    close_program(
        program,
        prep,
        &matrix,
        done,
        "checked",
        findings,
        store,
        shared,
        on_progress,
    )
    .await;
    Ok(())
}

/// Stores the session and finding records of one (compiler, level) and
/// counts them: returns the matrix row, the checks and the findings stored.
/// Wrong values are bisected (with `spec.config.bisect`).
#[allow(clippy::too_many_arguments)]
async fn store_level(
    spec: &DebuginfoSpec,
    p: &Program,
    text: &str,
    (compiler, level): (&Compiler, &str),
    builds: &[Build],
    cells: &[Cell],
    ast_node: &(dyn Fn(u32) -> String + Sync),
    dbgs: &mut [(String, Box<dyn Debugger>)],
    store: &Sink<'_>,
    shared: &Shared,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> (serde_json::Value, usize, usize) {
    let counts = program::verdict_counts(cells);
    let mut checks = 0;
    let mut findings = 0;
    {
        let mut s = shared.stats.lock().await;
        s.sessions += cells.len();
        for (k, n) in &counts {
            *s.verdicts.entry(k.clone()).or_insert(0) += n;
            checks += n;
        }
        s.session_seconds += cells.iter().map(|c| c.session.duration_ms / 1e3).sum::<f64>();
    }
    let row = serde_json::json!({"compiler": compiler.tag(), "level": level, "verdicts": counts});
    for cell in cells {
        let b = &builds[cell.build];
        let record = session_record(spec, p, b, cell);
        put(store, &record).await;
    }
    for (ci, cell) in cells.iter().enumerate() {
        let b = &builds[cell.build];
        for (ri, v) in cell.session.verdicts.iter().enumerate() {
            if !v.verdict.is_finding() {
                continue;
            }
            let others: Vec<(&str, &PairVerdict)> = cells
                .iter()
                .enumerate()
                .filter(|(cj, c)| *cj != ci && c.build == cell.build)
                .map(|(_, c)| (c.debugger.as_str(), &c.session.verdicts[ri]))
                .collect();
            let reference = &b.references[ri];
            let f = FindingInput {
                program: p,
                text,
                build: b,
                debugger: &cell.debugger,
                reference,
                verdict: v,
                others: &others,
                ast_node: ast_node(reference.pair.line),
            };
            let culprit = if spec.config.bisect
                && matches!(v.verdict, CheckVerdict::WrongValue { .. })
                && crate::accuracy::wants_culprit(&spec.config, f.suspect())
            {
                culprit_for(&f, dbgs, shared).await
            } else {
                None
            };
            let record = finding_record(spec, &f, culprit.as_ref());
            let class = record
                .verdict
                .finding()
                .map(|f| f.class.to_string())
                .unwrap_or_default();
            if put(store, &record).await {
                findings += 1;
                shared.stats.lock().await.findings += 1;
                on_progress(Progress::Finding {
                    name: p.name.clone(),
                    class,
                });
            }
        }
    }
    (row, checks, findings)
}

/// A Rust program ([`crate::rust`]): references from the -O0 build in GDB
/// instead of the C preparation (seed check, coverage, scopes, shadow),
/// then the level x debugger matrix without line augmentation, stored like C.
async fn run_rust_program(
    spec: &DebuginfoSpec,
    p: &Program,
    dbgs: &mut [(String, Box<dyn Debugger>)],
    store: &Sink<'_>,
    shared: &Shared,
    on_progress: &(dyn Fn(Progress) + Sync),
) {
    let started = Instant::now();
    let text = std::fs::read_to_string(&p.source).unwrap_or_default();
    let subject = program_subject(p, &text);
    let prepared = match &shared.rustc {
        Some(Ok(rustc)) => rust::prepare(
            p,
            rustc,
            &shared.rust_builds,
            dbgs,
            spec.config.max_pairs,
            spec.config.seed,
        )
        .await
        .map(|r| (rustc.clone(), r))
        .and_then(|(c, r)| {
            if r.references.is_empty() {
                Err(format!(
                    "no integer variable with a value at -O0 ({} statement lines, {} reached)",
                    r.statement_lines, r.covered_lines
                ))
            } else {
                Ok((c, r))
            }
        }),
        Some(Err(e)) => Err(e.clone()),
        None => Err("rustc was not looked for".into()),
    };
    let (rustc, refs) = match prepared {
        Ok(x) => x,
        Err(reason) => {
            let stage = "references";
            let prep =
                serde_json::json!({"prepared": "rejected", "stage": stage, "reason": reason, "language": "rust"});
            let program = ProgramRun {
                spec,
                p,
                subject: &subject,
                text: &text,
                started,
            };
            reject_program(program, prep, stage, &reason, store, shared, on_progress).await;
            return;
        }
    };
    shared.stats.lock().await.references += refs.references.len();
    let ast_node = |line: u32| {
        let kind = doppel_lang::rust::statements::statement_kind(&text, line);
        format!("rust:{}", kind.as_deref().unwrap_or("expression"))
    };
    let mut matrix = Vec::new();
    let (mut checks, mut findings) = (0, 0);
    for level in &spec.config.levels {
        match rust::check_level(p, &refs.references, &rustc, level, &shared.rust_builds, dbgs).await {
            Ok(program::LevelCheck { builds, cells }) => {
                let (row, c, f) = store_level(
                    spec,
                    p,
                    &text,
                    (&rustc, level),
                    &builds,
                    &cells,
                    &ast_node,
                    dbgs,
                    store,
                    shared,
                    on_progress,
                )
                .await;
                matrix.push(row);
                checks += c;
                findings += f;
            }
            Err(e) => matrix.push(serde_json::json!({"compiler": rustc.tag(), "level": level, "error": e})),
        }
    }
    let mut prep = serde_json::to_value(&refs).unwrap_or_default();
    prep["prepared"] = "ready".into();
    prep["language"] = "rust".into();
    let program = ProgramRun {
        spec,
        p,
        subject: &subject,
        text: &text,
        started,
    };
    let done = Verdict::Checked { checks };
    close_program(
        program,
        prep,
        &matrix,
        done,
        "checked",
        findings,
        store,
        shared,
        on_progress,
    )
    .await;
}

/// The program being checked, for its records.
struct ProgramRun<'a> {
    spec: &'a DebuginfoSpec,
    p: &'a Program,
    subject: &'a Subject,
    text: &'a str,
    started: Instant,
}

/// Stores the record of a program rejected at `stage` (its preparation
/// `prep` as JSON) and reports it.
async fn reject_program(
    run: ProgramRun<'_>,
    prep: serde_json::Value,
    stage: &str,
    reason: &str,
    store: &Sink<'_>,
    shared: &Shared,
    on_progress: &(dyn Fn(Progress) + Sync),
) {
    *shared.stats.lock().await.rejected.entry(stage.to_string()).or_insert(0) += 1;
    let verdict = Verdict::SubjectError {
        reason: format!("rejected at {stage}: {reason}"),
    };
    let outcome = format!("rejected at {stage}");
    close_program(run, prep, &[], verdict, &outcome, 0, store, shared, on_progress).await;
}

/// Stores a program's record (written last: `--resume` skips programs
/// that have one) and reports the program done.
#[allow(clippy::too_many_arguments)]
async fn close_program(
    run: ProgramRun<'_>,
    prep: serde_json::Value,
    matrix: &[serde_json::Value],
    verdict: Verdict,
    outcome: &str,
    findings: usize,
    store: &Sink<'_>,
    shared: &Shared,
    on_progress: &(dyn Fn(Progress) + Sync),
) {
    let record = program_record(
        run.spec,
        run.p,
        run.subject,
        run.text,
        prep,
        matrix,
        verdict,
        run.started,
    );
    put(store, &record).await;
    shared.stats.lock().await.programs += 1;
    on_progress(Progress::ProgramDone {
        name: run.p.name.clone(),
        outcome: outcome.to_string(),
        findings,
    });
}

/// Everything about one finding.
pub struct FindingInput<'a> {
    /// The program.
    pub program: &'a Program,
    /// Its source text.
    pub text: &'a str,
    /// The build that showed the wrong value.
    pub build: &'a Build,
    /// The debugger that showed it.
    pub debugger: &'a str,
    /// The pair and its -O0 reference.
    pub reference: &'a Reference,
    /// This debugger's check of the pair.
    pub verdict: &'a PairVerdict,
    /// The other debuggers' verdicts on the same build and pair.
    pub others: &'a [(&'a str, &'a PairVerdict)],
    /// The AST node type of line s (a class key part).
    pub ast_node: String,
}

impl FindingInput<'_> {
    fn suspect(&self) -> Suspect {
        let others: Vec<(&CheckVerdict, Option<u64>)> = self.others.iter().map(|(_, v)| (&v.verdict, v.pc)).collect();
        triage::suspect((&self.verdict.verdict, self.verdict.pc), &others)
    }
}

/// The culprit of a wrong value: bisected once per program and signature
/// (without culprit) in this campaign, reused for that program's later
/// findings of the signature.
///
/// Per program, not per signature alone: a program is checked by one job
/// in a fixed order, so its culprit does not depend on which job reached
/// the signature first. Keyed by signature alone, two programs of one GCC
/// -Os signature (corpus/debuginfo's fig9c and fig9f) got `-fschedule-insns2`
/// or `-fivopts+-ftree-loop-optimize` depending on the jobs' timing.
async fn culprit_for(
    f: &FindingInput<'_>,
    dbgs: &mut [(String, Box<dyn Debugger>)],
    shared: &Shared,
) -> Option<bisect::Culprit> {
    let signature = triage::signature(
        &f.build.compiler.tag(),
        &f.build.level,
        f.suspect(),
        None,
        f.reference.pair.variable.kind.name(),
    );
    let key = format!("{} {signature}", f.program.hash);
    if let Some(c) = shared.bisected.lock().await.get(&key) {
        return c.clone();
    }
    let dbg = dbgs.iter_mut().find(|(n, _)| n == f.debugger).map(|(_, d)| d)?;
    let builder = crate::builder::for_program(
        f.program,
        &f.build.compiler,
        &f.build.level,
        &shared.cache,
        &shared.rust_builds,
    );
    let result = crate::culprit::bisect_pair(
        builder.as_ref(),
        &f.build.augmented.iter().copied().collect(),
        f.reference,
        dbg.as_mut(),
    )
    .await;
    if let Err(e) = &result {
        tracing::warn!("bisection of {signature} in {} failed: {e}", f.program.name);
    }
    shared.stats.lock().await.bisections += 1;
    let culprit = result.ok();
    shared.bisected.lock().await.insert(key, culprit.clone());
    culprit
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn program_subject(p: &Program, text: &str) -> Subject {
    Subject {
        name: p.name.clone(),
        language: if rust::is_rust_source(&p.source) {
            Language::Rust
        } else {
            Language::C
        },
        source: p.source.clone(),
        source_name: p.file_name(),
        line_count: text.lines().count() as u32,
        binary: None,
        prelude: Vec::new(),
        epilogue: Vec::new(),
        hash: p.hash.clone(),
        build: "-".into(),
    }
}

fn build_tag(b: &Build) -> &'static str {
    if b.augmented.is_empty() { "plain" } else { "augmented" }
}

#[allow(clippy::too_many_arguments)]
fn program_record(
    spec: &DebuginfoSpec,
    p: &Program,
    subject: &Subject,
    text: &str,
    prep: serde_json::Value,
    matrix: &[serde_json::Value],
    verdict: Verdict,
    started: Instant,
) -> RunRecord {
    RunRecord {
        id: None,
        key: program_key(spec, &p.hash),
        technique: TECHNIQUE.into(),
        campaign: spec.name.clone(),
        subject: subject.clone(),
        seed: p.csmith.as_ref().map(|(s, _)| *s).unwrap_or(spec.config.seed),
        config: crate::record::ProgramRecord {
            debuginfo: spec.config.clone(),
            program: p.clone(),
            source_text: text.to_string(),
            preparation: prep,
            matrix: matrix.to_vec(),
        }
        .to_value(),
        debuggers: Vec::new(),
        verdict,
        traces: Vec::new(),
        duration_ms: started.elapsed().as_secs_f64() * 1e3,
        started_at_ms: now_ms(),
    }
}

fn session_record(spec: &DebuginfoSpec, p: &Program, b: &Build, cell: &Cell) -> RunRecord {
    let s = &cell.session;
    let failed = s
        .verdicts
        .iter()
        .any(|v| matches!(v.verdict, CheckVerdict::DebuggerFailure { .. }));
    let verdict = if failed {
        Verdict::Inconclusive {
            actions: s.pauses as usize,
            reason: s.ending.clone(),
        }
    } else {
        Verdict::Checked {
            checks: s.verdicts.len(),
        }
    };
    RunRecord {
        id: None,
        key: format!(
            "{}|{}|{}|{}|{}|{}",
            key_base(spec),
            p.hash,
            b.compiler.tag(),
            b.level,
            build_tag(b),
            cell.debugger
        ),
        technique: TECHNIQUE.into(),
        campaign: spec.name.clone(),
        subject: b.subject.clone(),
        seed: p.csmith.as_ref().map(|(s, _)| *s).unwrap_or(spec.config.seed),
        config: crate::record::SessionRecord {
            debuginfo: spec.config.clone(),
            program: p.clone(),
            compiler: b.compiler.clone(),
            level: b.level.clone(),
            recipe: b.recipe.clone(),
            augmented: b.augmented.clone(),
            debugger_name: cell.debugger.to_string(),
            references: b.references.clone(),
            verdicts: s.verdicts.clone(),
            ending: s.ending.clone(),
        }
        .to_value(),
        debuggers: vec![s.trace.debugger.clone()],
        verdict,
        traces: vec![s.trace.clone()],
        duration_ms: s.duration_ms,
        started_at_ms: now_ms(),
    }
}

/// The stored form of a finding. `config` holds `kind: "finding"`, the
/// program (with its text and, when augmented, the augmented text), the
/// build (compiler, level, recipe, augmented lines), the debugger, the
/// reference, the verdict and the debugger's rendering, the other
/// debuggers' verdicts, the suspect and the culprit.
pub fn finding_record(spec: &DebuginfoSpec, f: &FindingInput<'_>, culprit: Option<&bisect::Culprit>) -> RunRecord {
    let b = f.build;
    let suspect = f.suspect();
    let kind = f.reference.pair.variable.kind.name();
    let culprit_name = culprit.map(|c| c.signature());
    let (divergence, detail) = match &f.verdict.verdict {
        CheckVerdict::WrongValue { expected, actual } => (
            triage::FindingKind::WrongValue,
            format!(
                "{} at line {} of {} built with {} -{}: {} shows {} = {} (rendered '{}'), the -O0 value is {}; {}",
                f.reference.pair.variable.name,
                f.reference.pair.line,
                f.program.name,
                b.compiler.name,
                b.level,
                f.debugger,
                f.reference.pair.variable.name,
                actual,
                f.verdict.shown.as_deref().unwrap_or(""),
                expected,
                match suspect {
                    Suspect::Compiler => "the other debugger shows the same wrong value: suspect the compiler",
                    Suspect::Debugger => "the other debugger shows the right value: suspect this debugger",
                    Suspect::Disagree => "the other debugger shows another wrong value",
                    Suspect::DifferentStop =>
                        "the other debugger paused at another address of the line: the debug information is wrong where this one paused",
                    Suspect::Unconfirmed => "no other debugger could confirm it",
                }
            ),
        ),
        other => (
            triage::FindingKind::ToolFailure,
            format!("{} failed: {other}", f.debugger),
        ),
    };
    let signature = triage::signature(&b.compiler.tag(), &b.level, suspect, culprit_name.as_deref(), kind);
    let class = triage::class_key(&format!("{signature},{}", f.debugger), divergence, &f.ast_node);
    let augmented_text =
        (!b.augmented.is_empty()).then(|| std::fs::read_to_string(&b.subject.source).unwrap_or_default());
    RunRecord {
        id: None,
        key: format!(
            "{}|{}|{}|{}|{}|L{}|{}",
            key_base(spec),
            f.program.hash,
            b.compiler.tag(),
            b.level,
            f.debugger,
            f.reference.pair.line,
            f.reference.pair.variable.name
        ),
        technique: TECHNIQUE.into(),
        campaign: spec.name.clone(),
        subject: b.subject.clone(),
        seed: f.program.csmith.as_ref().map(|(s, _)| *s).unwrap_or(spec.config.seed),
        config: FindingRecord {
            debuginfo: spec.config.clone(),
            program: f.program.clone(),
            source_text: f.text.to_string(),
            augmented_text,
            compiler: b.compiler.clone(),
            level: b.level.clone(),
            recipe: b.recipe.clone(),
            augmented: b.augmented.clone(),
            debugger_name: f.debugger.to_string(),
            reference: f.reference.clone(),
            verdict: f.verdict.clone(),
            others: f
                .others
                .iter()
                .map(|(n, v)| crate::finding::OtherCheck {
                    debugger: n.to_string(),
                    verdict: (*v).clone(),
                })
                .collect(),
            suspect: Some(suspect),
            culprit: culprit.cloned(),
            reduced: None,
            dwarf: f.verdict.dwarf.clone(),
        }
        .to_value(),
        debuggers: Vec::new(),
        verdict: Verdict::Divergence(Finding {
            class,
            action_index: None,
            last_action: None,
            line: Some(f.reference.pair.line),
            detail,
        }),
        traces: Vec::new(),
        duration_ms: 0.0,
        started_at_ms: now_ms(),
    }
}

/// Stores a record; false (and a progress report) when it could not.
async fn put(store: &Sink<'_>, record: &RunRecord) -> bool {
    store.store(record.clone()).await
}
