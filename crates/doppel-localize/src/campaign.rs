//! Localization cases as work items of the core campaign runner
//! (`doppel_core::campaign`): one item per case, keyed by campaign,
//! configuration and case hash (so `--resume` skips stored cases), one
//! stored [`LocalizeRecord`] per item. Jobs share nothing but the wasm
//! build cache.

use crate::case::{Case, run_case};
use crate::record::{CaseInput, LocalizeConfig, LocalizeRecord, StoredTruth, TECHNIQUE, now_ms};
use doppel_core::campaign::{Item, ItemError, Job, Sink, Technique};
use doppel_lang::c::codeflaws;
use std::path::{Path, PathBuf};

/// A case ready to run: the files and their stored form.
#[derive(Debug, Clone)]
pub struct CaseItem {
    /// The case over its files.
    pub case: Case,
    /// What will be stored (texts and tests).
    pub input: CaseInput,
}

impl CaseItem {
    /// Reads the case's files; a file that cannot be read is stored empty
    /// (the case then ends as `no_usable_test`, naming the file).
    pub fn new(case: Case) -> Self {
        let input = CaseInput::of(&case).unwrap_or_else(|_| CaseInput {
            name: case.name.clone(),
            class: case.class.clone(),
            reference: (case.reference.display().to_string(), String::new()),
            modified: (case.modified.display().to_string(), String::new()),
            truth: StoredTruth::Unknown,
            tests: Vec::new(),
            dropped: case.dropped.clone(),
            args: case.args.clone(),
        });
        Self { case, input }
    }
}

/// The cases of a Codeflaws-layout directory (`<problem>-bug-<a>-<b>`
/// directories, `defects.tsv` classes), in name order; with `cross`, the
/// cross-author pairs built from them (one reference per modified program,
/// as docs/results/localize.md counts them). Directories that cannot be
/// read are returned with the reason.
pub fn corpus_cases(dir: &Path, cross: bool) -> (Vec<Case>, Vec<String>) {
    let mut errors = Vec::new();
    let mut pairs = Vec::new();
    for p in codeflaws::discover_pairs(dir) {
        match p {
            Ok(p) => pairs.push(p),
            Err(e) => errors.push(e),
        }
    }
    if cross {
        let mut seen = std::collections::BTreeSet::new();
        pairs = codeflaws::cross_pairs(&pairs)
            .into_iter()
            .filter(|p| seen.insert(p.modified.clone()))
            .collect();
    }
    (pairs.iter().map(Case::from_pair).collect(), errors)
}

/// The items of campaign `campaign` over `cases`.
pub fn items(campaign: &str, config: &LocalizeConfig, cases: Vec<Case>) -> Vec<Item<CaseItem>> {
    cases
        .into_iter()
        .map(|c| {
            let it = CaseItem::new(c);
            let key = format!("{TECHNIQUE}|{campaign}|{}|{}", config.fingerprint(), it.input.hash());
            Item {
                key,
                subject: it.case.name.clone(),
                seed: config.seed,
                input: it,
            }
        })
        .collect()
}

/// A localization campaign as the runner sees it.
#[derive(Debug, Clone)]
pub struct LocalizeCampaign {
    /// Campaign name (part of run keys).
    pub campaign: String,
    /// The cases' configuration.
    pub config: LocalizeConfig,
    /// The wasm build cache.
    pub wasm_cache: PathBuf,
}

/// One job: runs cases one after the other.
pub struct LocalizeJob {
    spec: LocalizeCampaign,
}

impl Technique for LocalizeCampaign {
    type Input = CaseItem;
    type Job = LocalizeJob;

    fn name(&self) -> &str {
        TECHNIQUE
    }

    async fn setup(&self, _index: usize) -> anyhow::Result<LocalizeJob> {
        std::fs::create_dir_all(&self.wasm_cache)
            .map_err(|e| anyhow::anyhow!("cannot create the wasm cache {}: {e}", self.wasm_cache.display()))?;
        Ok(LocalizeJob { spec: self.clone() })
    }
}

impl LocalizeJob {
    /// Runs one case to its record (never fails: every problem is an outcome).
    pub async fn case(&self, item: &CaseItem) -> LocalizeRecord {
        let result = run_case(&item.case, &self.spec.config.case_config(&self.spec.wasm_cache)).await;
        LocalizeRecord::new(self.spec.config.clone(), item.input.clone(), result)
    }
}

impl Job for LocalizeJob {
    type Input = CaseItem;

    async fn run(&mut self, item: &Item<CaseItem>, sink: &Sink<'_>) -> Result<(), ItemError> {
        let started = now_ms();
        let rec = self.case(&item.input).await;
        let mut run = rec.to_run(&self.spec.campaign, started);
        // The item's key (computed before the run) is the run's key.
        run.key = item.key.clone();
        sink.store(run).await;
        Ok(())
    }

    async fn shutdown(self) {}
}
