//! `doppel reduce RUN`: reduces one stored finding through its technique
//! (issue 17, item 5: differential findings by delta debugging of the
//! actions, then C-Vise on the C program) and stores the reduced case on
//! the run; `doppel replay` and `doppel repro` then use it. Also the
//! campaigns' `--reduce` (each class's representative) and the hidden
//! `doppel reduce-probe`, the test C-Vise's interestingness script runs.

use clap::Args;
use doppel_core::store::{RunFilter, Store};
use doppel_core::technique::{ReduceOptions, Reduction};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Flags a campaign shares for reducing its findings (`Default`: no
/// reduction, for programmatic campaigns such as benchmarks).
#[derive(Args, Debug, Clone, Default)]
pub struct ReduceFlags {
    /// Reduce each class's representative (its first finding) when the
    /// campaign ends: actions by delta debugging, then the C program with
    /// C-Vise or treereduce-javascript (on by default; `--reduce=false` or
    /// `DOPPEL_REDUCE=false`: off). Policy classes are not reduced.
    #[arg(
        long,
        env = "DOPPEL_REDUCE",
        num_args = 0..=1,
        default_missing_value = "true",
        default_value_t = true,
        value_name = "BOOL"
    )]
    pub reduce: bool,
    /// Wall-time budget of each reduction step per finding, seconds.
    #[arg(long, default_value_t = 120)]
    pub reduce_budget: u64,
    /// Reduce only the action sequence, not the program.
    #[arg(long)]
    pub reduce_actions_only: bool,
}

#[derive(Args, Debug)]
pub struct ReduceArgs {
    /// Run id.
    pub run: i64,
    /// Wall-time budget of each step (actions, then program), seconds.
    #[arg(long, default_value_t = 120)]
    pub reduce_budget: u64,
    /// Reduce only the action sequence, not the program.
    #[arg(long)]
    pub actions_only: bool,
}

#[derive(Args, Debug)]
pub struct ReduceProbeArgs {
    /// The case written by program reduction (`case.json`).
    #[arg(long)]
    pub case: PathBuf,
    /// The variant (C-Vise's `a.c`).
    pub source: PathBuf,
}

/// The options of a reduction with `budget` seconds per step.
pub fn options(db: &str, budget: u64, program: bool) -> anyhow::Result<ReduceOptions> {
    let work_dir = doppel_lang::prepare::cache_dir(db).join("reduce");
    std::fs::create_dir_all(&work_dir)?;
    Ok(ReduceOptions {
        budget: Duration::from_secs(budget.max(1)),
        program,
        doppel_exe: crate::cmd::doppel_exe()?,
        work_dir,
    })
}

/// Reduces run `id` through its technique and stores the result.
/// `Ok(None)`: its technique does not reduce.
pub async fn reduce_one(
    store: &Store,
    db: &str,
    id: i64,
    options: &ReduceOptions,
) -> anyhow::Result<Option<Reduction>> {
    let r = super::load_run(store, id).await?;
    let technique = crate::techniques::get(&r.technique)?;
    let ctx = super::technique_context(store, db);
    let Some(red) = technique.reduce(&r, &ctx, options).await? else {
        return Ok(None);
    };
    store.insert_run(&red.run).await?;
    Ok(Some(red))
}

pub async fn run(a: ReduceArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let options = options(db, a.reduce_budget, !a.actions_only)?;
    match reduce_one(&store, db, a.run, &options).await? {
        Some(red) => {
            println!("run {}: {}", a.run, red.summary);
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let r = super::load_run(&store, a.run).await?;
            anyhow::bail!(
                "run {}: technique '{}' has no reduction here (debug-info findings: `doppel debuginfo reduce`)",
                a.run,
                r.technique
            )
        }
    }
}

/// Reduces the representative of every root cause of `filter`'s runs
/// that is no policy difference and holds no reduced case yet
/// ([`doppel_core::rootcause::group`]), storing each; prints one line per
/// root cause (`again`: those with one too). Returns the reductions (failures are printed and
/// skipped).
pub async fn reduce_representatives(
    store: &Store,
    db: &str,
    filter: &RunFilter,
    options: &ReduceOptions,
    again: bool,
) -> anyhow::Result<Vec<Reduction>> {
    // One reduction per root cause (issue 17 item 5): its representative,
    // the first run of the cause (or the one already reduced). Policy
    // differences are not reduced: they are not reported as bugs.
    let groups = doppel_core::rootcause::group(store, filter, crate::techniques::all()).await?;
    let mut done = Vec::new();
    for g in groups.iter().filter(|g| g.cause.policy.is_none()) {
        // Already reduced (an earlier invocation, `--resume`, another
        // `--claim` worker that finished first): kept as it is.
        if !again && g.reduced.is_some() {
            continue;
        }
        let key = g.cause.key();
        match reduce_one(store, db, g.representative, options).await {
            Ok(Some(red)) => {
                eprintln!("reduced run {} (root cause {key}): {}", g.representative, red.summary);
                done.push(red);
            }
            Ok(None) => {}
            Err(e) => eprintln!("run {} (root cause {key}) not reduced: {e:#}", g.representative),
        }
    }
    Ok(done)
}

/// A campaign's `--reduce` at its end.
pub async fn after_campaign(store: &Store, db: &str, filter: &RunFilter, f: &ReduceFlags) -> anyhow::Result<()> {
    if !f.reduce {
        return Ok(());
    }
    let options = options(db, f.reduce_budget, !f.reduce_actions_only)?;
    let done = reduce_representatives(store, db, filter, &options, false).await?;
    eprintln!(
        "reduced {} root cause representative(s) (`doppel repro RUN` writes the reduced case)",
        done.len()
    );
    Ok(())
}

/// `doppel reduce-probe`: exit 0 iff the variant is the same finding.
pub async fn probe(a: ReduceProbeArgs) -> anyhow::Result<ExitCode> {
    let case_json = std::fs::read_to_string(&a.case)?;
    let text = std::fs::read_to_string(&a.source)?;
    // The case's technique decides what the finding is again (a divergence
    // of the differential run, the metamorphic round re-applied to the
    // variant breaking the relation): found by the run's tag in the registry.
    #[derive(serde::Deserialize)]
    struct Tagged {
        run: RunTag,
    }
    #[derive(serde::Deserialize)]
    struct RunTag {
        technique: String,
    }
    let tag = serde_json::from_str::<Tagged>(&case_json)?.run.technique;
    let verdict = crate::techniques::get(&tag)?.probe_variant(&case_json, &text).await?;
    match verdict {
        Ok(()) => {
            // The reducer may be stopped at its budget at any time: what it
            // leaves may be unverified, this is not.
            doppel_differential::reduce_program::record_interesting(&a.case, &text)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            eprintln!("doppel reduce-probe: not the same finding: {why}");
            Ok(ExitCode::from(1))
        }
    }
}
