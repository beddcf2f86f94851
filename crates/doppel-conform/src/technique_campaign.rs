//! Conformance tests as work items of the core campaign runner
//! (`doppel_core::campaign`): each job owns a warm [`Panel`]; each test's
//! run is stored as a [`TestRecord`] the moment it finishes and added to
//! the campaign's shared [`Tally`] (for the summary, groups and the
//! test262 matrix cache).
//!
//! Run keys: `conform|<campaign>|<tools fingerprint>|<test name>|<12 hex of
//! the script and expectation>`, so `--resume` skips exactly the tests
//! whose run with these engines is stored.

use crate::matrix::Tally;
use crate::technique_record::{self as rec, ConformConfig, ConformRecord, TAG, TestRecord};
use crate::verdict::panel::{ConformTest, Member, Missing, Panel};
use doppel_core::RunRecord;
use doppel_core::campaign::{Item, ItemError, Job, Sink, Technique};
use doppel_engines::{EngineInfo, EnginesConfig};
use std::sync::{Arc, Mutex};

/// A conformance campaign as the runner sees it.
pub struct Campaign {
    /// The campaign's name.
    pub name: String,
    /// Its configuration.
    pub config: ConformConfig,
    /// Where the engines are.
    pub engines: EnginesConfig,
    /// Totals shared by the jobs.
    pub tally: Arc<Mutex<Tally>>,
}

/// The panel's identity, made once before the campaign (no process starts).
#[derive(Debug, Clone)]
pub struct PanelIdentity {
    /// engine262's info.
    pub spec: EngineInfo,
    /// The engines.
    pub members: Vec<Member>,
    /// The engines left out.
    pub missing: Vec<Missing>,
    /// The tools fingerprint of run keys.
    pub fingerprint: String,
}

impl Campaign {
    /// The panel's identity. Errors: as [`Panel::new`].
    pub fn identity(&self) -> anyhow::Result<PanelIdentity> {
        let panel = Panel::new(&self.config.panel, &self.engines)?;
        let spec = panel.spec_info();
        let members = panel.members();
        let tools = rec::tools(&spec, &members);
        let extra = serde_json::to_string(&self.config.panel).unwrap_or_default();
        Ok(PanelIdentity {
            fingerprint: doppel_core::campaign::tools_fingerprint(&tools, &extra),
            spec,
            members,
            missing: panel.missing().to_vec(),
        })
    }

    /// The work item of `test`.
    pub fn item(&self, id: &PanelIdentity, test: ConformTest) -> Item<ConformTest> {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(test.script.source.as_bytes());
        h.update(serde_json::to_string(&test.expected).unwrap_or_default().as_bytes());
        h.update(test.script.features.join(",").as_bytes());
        let hash = &hex::encode(h.finalize())[..12];
        Item {
            key: format!("{TAG}|{}|{}|{}|{hash}", self.name, id.fingerprint, test.name),
            subject: test.name.clone(),
            seed: self.config.seed,
            input: test,
        }
    }
}

/// One job: a warm panel.
pub struct ConformJob {
    panel: Panel,
    campaign: String,
    config: ConformConfig,
    tally: Arc<Mutex<Tally>>,
}

impl Technique for Campaign {
    type Input = ConformTest;
    type Job = ConformJob;

    fn name(&self) -> &str {
        TAG
    }

    async fn setup(&self, _index: usize) -> anyhow::Result<ConformJob> {
        Ok(ConformJob {
            panel: Panel::new(&self.config.panel, &self.engines)?,
            campaign: self.name.clone(),
            config: self.config.clone(),
            tally: self.tally.clone(),
        })
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Job for ConformJob {
    type Input = ConformTest;

    async fn run(&mut self, item: &Item<ConformTest>, sink: &Sink<'_>) -> Result<(), ItemError> {
        let started = now_ms();
        let t0 = std::time::Instant::now();
        let test = &item.input;
        let run = self.panel.run(test).await;
        let verdict = rec::verdict(&run, &test.script.features);
        self.tally
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(test, &run, None);
        let finding = verdict.finding().is_some();
        // Only findings keep the prepared script (harness included) and
        // the coverage: a test262 suite is tens of thousands of tests.
        let mut stored_test = test.clone();
        let mut stored_run = run;
        if !finding {
            stored_test.script.source.clear();
            stored_run.coverage = None;
            stored_run.own_coverage = None;
        }
        let members = self.panel.members();
        let record = TestRecord {
            config: self.config.clone(),
            test: stored_test,
            members: members.clone(),
            missing: self.panel.missing().to_vec(),
            run: stored_run,
            reduction: None,
        };
        let config = serde_json::to_value(ConformRecord::Test(Box::new(record)))
            .map_err(|e| ItemError::Environment(format!("cannot serialize the record: {e}")))?;
        let rr = RunRecord {
            id: None,
            key: item.key.clone(),
            technique: TAG.into(),
            campaign: self.campaign.clone(),
            subject: rec::subject(test, None),
            seed: item.seed,
            config,
            debuggers: rec::tools(&self.panel.spec_info(), &members),
            verdict,
            traces: Vec::new(),
            duration_ms: t0.elapsed().as_secs_f64() * 1000.0,
            started_at_ms: started,
        };
        sink.store(rr).await;
        Ok(())
    }

    async fn shutdown(mut self) {
        self.panel.shutdown().await;
    }
}

/// The summary run record of a campaign.
pub fn summary_run(
    campaign: &str,
    summary: crate::technique_record::SummaryRecord,
    id: &PanelIdentity,
) -> anyhow::Result<RunRecord> {
    let tests = summary.tests;
    let seed = summary.config.seed;
    let started = now_ms();
    let subject = rec::subject(
        &ConformTest {
            name: format!("{campaign} summary"),
            text: String::new(),
            script: doppel_engines::Script::default(),
            expected: None,
        },
        None,
    );
    Ok(RunRecord {
        id: None,
        key: format!("{TAG}|{campaign}|{}|summary|{started}", id.fingerprint),
        technique: TAG.into(),
        campaign: campaign.to_string(),
        subject,
        seed,
        config: serde_json::to_value(ConformRecord::Summary(Box::new(summary)))?,
        debuggers: rec::tools(&id.spec, &id.members),
        verdict: doppel_core::Verdict::Checked { checks: tests },
        traces: Vec::new(),
        duration_ms: 0.0,
        started_at_ms: started,
    })
}
