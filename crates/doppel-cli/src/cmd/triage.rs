//! `doppel triage ROOT --as bug|policy|false-positive --note TEXT`: a
//! person's decision about a root cause (issue 17 item 7), stored in the
//! store's triage table and shown by `classes`, `show` and the report; and
//! the root causes of a store with where each stands, which those commands
//! share.

use clap::Args;
use doppel_core::rootcause::{self, RootGroup, Standing, known::KnownBugs};
use doppel_core::store::triage::{Triage, TriageVerdict};
use doppel_core::store::{RunFilter, Store};
use std::collections::HashMap;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct TriageArgs {
    /// The root cause: its id (`rc-...`, from `doppel classes` or the report) or its whole key.
    pub root: String,
    /// The decision.
    #[arg(long = "as", value_parser = ["bug", "policy", "false-positive"])]
    pub verdict: String,
    /// Why (shown next to the decision).
    #[arg(long, default_value = "")]
    pub note: String,
}

/// A root cause of the store with where it stands.
pub struct RootRow {
    /// Its runs.
    pub group: RootGroup,
    /// Known, new, policy, triaged.
    pub standing: Standing,
}

/// The root causes of the divergent runs matching `filter` (largest first),
/// each with its standing from the bundled known-bugs list and the store's
/// triage decisions.
pub async fn root_causes(store: &Store, filter: &RunFilter) -> anyhow::Result<Vec<RootRow>> {
    let known = KnownBugs::bundled()?;
    let triages: HashMap<String, Triage> = store
        .triages()
        .await?
        .into_iter()
        .map(|t| (t.root_cause.clone(), t))
        .collect();
    let groups = rootcause::group(store, filter, crate::techniques::all()).await?;
    Ok(groups
        .into_iter()
        .map(|group| {
            let standing = Standing::of(&group.cause, &known, triages.get(&group.cause.key()));
            RootRow { group, standing }
        })
        .collect())
}

/// Where the root cause of `run` stands, for `doppel show`: `root cause
/// rc-...: new` and its key; nothing for a run without a finding.
pub async fn describe_run(store: &Store, run: &doppel_core::RunRecord) -> anyhow::Result<Vec<String>> {
    let technique = crate::techniques::get(&run.technique)?;
    let Some(cause) = technique.root_cause(run) else {
        return Ok(Vec::new());
    };
    let triage = store.triages().await?.into_iter().find(|t| t.root_cause == cause.key());
    let standing = Standing::of(&cause, &KnownBugs::bundled()?, triage.as_ref());
    Ok(vec![
        format!("root cause {}: {}", cause.id(), standing.describe()),
        format!("  {}", cause.key()),
    ])
}

pub async fn run(a: TriageArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let verdict = TriageVerdict::parse(&a.verdict)
        .ok_or_else(|| anyhow::anyhow!("--as takes bug, policy or false-positive, not {:?}", a.verdict))?;
    let rows = root_causes(&store, &RunFilter::default()).await?;
    let Some(row) = rows
        .iter()
        .find(|r| r.group.cause.id() == a.root || r.group.cause.key() == a.root)
    else {
        anyhow::bail!(
            "no root cause {:?} among the {} of the store (ids and keys: doppel classes)",
            a.root,
            rows.len()
        );
    };
    let cause = &row.group.cause;
    let at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)?;
    let t = Triage {
        root_cause: cause.key(),
        root_id: cause.id(),
        technique: cause.technique.clone(),
        verdict,
        note: a.note,
        at_ms,
    };
    store.set_triage(&t).await?;
    let known = KnownBugs::bundled()?;
    println!(
        "{} ({} runs in {} classes): {}",
        cause.id(),
        row.group.size,
        row.group.classes.len(),
        Standing::of(cause, &known, Some(&t)).describe()
    );
    Ok(ExitCode::SUCCESS)
}
