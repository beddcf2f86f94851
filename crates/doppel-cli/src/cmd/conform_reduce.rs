//! The reduction step at the end of `doppel conform` (issue 15 part 7b):
//! each failure group's representative reduced by treereduce
//! (`doppel_conform::reduce`), the reduction stored with the group (in the
//! summary) and with the representative's test record (stored again under
//! its key, so it keeps its id; `doppel repro` writes the reduced test),
//! and the hidden `doppel conform-probe` treereduce calls on each variant.

use clap::Args;
use doppel_conform::group::Observed;
use doppel_conform::reduce::{ReduceCase, Reduction, probe as probe_variant, reduce};
use doppel_conform::technique_record::{ConformRecord, GroupRecord, TAG, class_key_of};
use doppel_core::store::{RunFilter, Store};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `doppel conform-probe`.
#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// The case written by the reduction (`case.json`).
    #[arg(long)]
    pub case: PathBuf,
    /// The variant's test body (treereduce's `@@`).
    pub body: PathBuf,
}

/// `doppel conform-probe`: exit 0 iff the variant keeps the verdict pattern.
pub async fn probe(a: ProbeArgs) -> anyhow::Result<ExitCode> {
    let case: ReduceCase = serde_json::from_str(&std::fs::read_to_string(&a.case)?)?;
    // The warm panel of the reducing doppel first; its own panel if it cannot be asked.
    let warm = match &case.server {
        Some(socket) => {
            let wait = case.panel.spec_run.timeout + case.panel.run.timeout * 2 + Duration::from_secs(30);
            match doppel_conform::reduce_server::ask(socket, &a.body, wait).await {
                Ok(answer) => Some(answer),
                Err(e) => {
                    eprintln!("doppel conform-probe: the warm probe did not answer ({e:#}); running a panel");
                    None
                }
            }
        }
        None => None,
    };
    let verdict = match warm {
        Some(answer) => answer.map_or(Ok(()), Err),
        None => {
            let body = std::fs::read_to_string(&a.body)?;
            probe_variant(&case, &body).await?.map(|_| ())
        }
    };
    match verdict {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(why) => {
            eprintln!("doppel conform-probe: not the same verdicts: {why}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The stored run id of test `name` (a finding, so in its class), the latest if several.
async fn run_id_of(store: &Store, campaign: &str, o: &Observed) -> anyhow::Result<Option<i64>> {
    let Some(key) = class_key_of(&o.vote, o.spec_failure.as_ref(), &o.features) else {
        return Ok(None);
    };
    let filter = RunFilter {
        technique: Some(TAG.into()),
        campaign: Some(campaign.into()),
    };
    let runs = store.runs_in_class(&key, &filter, 1_000_000).await?;
    Ok(runs.iter().filter(|r| r.subject_name == o.name).map(|r| r.id).max())
}

/// Reduces the representative of each of `groups` (a test that is the
/// representative of several groups is reduced once) within `per_group`
/// each, the probes asking one warm panel when `warm_probe`; sets each group's reduction and representative run, and stores
/// the representative's test record again with its reduction. Problems are
/// printed and leave the group unreduced.
pub async fn reduce_groups(
    store: &Store,
    db: &str,
    campaign: &str,
    observed: &[Observed],
    groups: &mut [GroupRecord],
    per_group: Duration,
    warm_probe: bool,
) {
    let exe = match crate::cmd::doppel_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("reduction: no doppel executable for the probe: {e}");
            return;
        }
    };
    let root = doppel_lang::prepare::cache_dir(db).join("conform-reduce");
    let mut done: BTreeMap<String, (Option<i64>, Reduction)> = BTreeMap::new();
    for (i, g) in groups.iter_mut().enumerate() {
        let Some(name) = g.tests.first().cloned() else { continue };
        if let Some((id, r)) = done.get(&name) {
            g.representative_run = id.or(g.representative_run);
            g.reduction = Some(r.clone());
            continue;
        }
        let Some(o) = observed.iter().find(|o| o.name == name) else {
            continue;
        };
        let id = match run_id_of(store, campaign, o).await {
            Ok(Some(id)) => id,
            Ok(None) => {
                eprintln!("group {}: the representative {name} is not stored; not reduced", i + 1);
                continue;
            }
            Err(e) => {
                eprintln!("group {}: cannot find {name} in the store: {e:#}", i + 1);
                continue;
            }
        };
        let mut run = match store.run(id).await {
            Ok(Some(r)) => r,
            other => {
                eprintln!("group {}: run {id} cannot be read: {other:?}", i + 1);
                continue;
            }
        };
        let Ok(ConformRecord::Test(mut t)) = ConformRecord::of(&run) else {
            eprintln!("group {}: run {id} is not a conformance test record", i + 1);
            continue;
        };
        let work = root.join(format!("{}-{}", sanitize(campaign), i + 1));
        let r = reduce(&t, &exe, &work, per_group, warm_probe).await;
        eprintln!(
            "group {} ({} {} {}): {}",
            i + 1,
            g.candidate,
            g.family,
            g.failure,
            r.summary()
        );
        t.reduction = Some(r.clone());
        let stored = match serde_json::to_value(ConformRecord::Test(t)) {
            Ok(v) => {
                run.config = v;
                store.insert_run(&run).await.map_err(|e| format!("{e:#}"))
            }
            Err(e) => Err(e.to_string()),
        };
        let id = match stored {
            Ok(id) => Some(id),
            Err(e) => {
                eprintln!("error: the reduction of run {id} was NOT STORED with its test: {e}");
                Some(id)
            }
        };
        g.representative_run = id;
        g.reduction = Some(r.clone());
        done.insert(name, (id, r));
    }
}

/// `name` with only `[A-Za-z0-9_-]` kept (a directory name).
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
