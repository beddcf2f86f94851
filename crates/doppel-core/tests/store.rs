//! The store on SQLite (a temporary file) and on a real, throwaway PostgreSQL server.

mod support;

use support::postgres::start_postgres;

use doppel_core::store::{RunFilter, Store};
use doppel_core::{ActionKind, DivergenceKind};
use std::time::Duration;
use support::*;

async fn exercise(store: &Store) {
    let a = class(DivergenceKind::PauseLocation, ActionKind::StepOver, "for_statement");
    let b = class(DivergenceKind::Variables, ActionKind::StepIn, "declaration");
    let c = class(DivergenceKind::CallStack, ActionKind::StepOut, "return_statement");
    let mut ids = Vec::new();
    for (i, k) in [&a, &a, &a, &b, &b, &c].iter().enumerate() {
        ids.push(
            store
                .insert_run(&run(&format!("k{i}"), "p.c", i as u64, Some((*k).clone())))
                .await
                .unwrap(),
        );
    }
    store.insert_run(&run("agree", "q.c", 99, None)).await.unwrap();

    // Round trip: the whole record, with its id.
    let back = store.run(ids[0]).await.unwrap().unwrap();
    let mut expected = run("k0", "p.c", 0, Some(a.clone()));
    expected.id = Some(ids[0]);
    assert_eq!(back, expected);
    assert!(store.run(999_999).await.unwrap().is_none());

    // Same key again: replaced, same id.
    let again = store.insert_run(&run("k0", "p.c", 0, Some(b.clone()))).await.unwrap();
    assert_eq!(again, ids[0]);
    assert_eq!(
        store
            .run(ids[0])
            .await
            .unwrap()
            .unwrap()
            .verdict
            .finding()
            .unwrap()
            .class,
        b
    );
    store.insert_run(&run("k0", "p.c", 0, Some(a.clone()))).await.unwrap();

    let keys = store.finished_keys("differential").await.unwrap();
    assert_eq!(keys.len(), 7);
    assert!(keys.contains("agree"));
    assert!(store.finished_keys("metamorphic").await.unwrap().is_empty());

    let classes = store.classes(&RunFilter::default()).await.unwrap();
    let sizes: Vec<(String, u64)> = classes.iter().map(|c| (c.key.to_string(), c.size)).collect();
    assert_eq!(sizes, vec![(a.to_string(), 3), (b.to_string(), 2), (c.to_string(), 1)]);
    assert_eq!(classes[0].first_run, ids[0]);

    let sample = store.sample_round_robin(&RunFilter::default(), 2).await.unwrap();
    let order: Vec<i64> = sample.iter().map(|r| r.id).collect();
    assert_eq!(order, vec![ids[0], ids[3], ids[5], ids[1], ids[4]], "A1 B1 C1 A2 B2");

    let s = store
        .summary(&RunFilter {
            technique: Some("differential".into()),
            campaign: Some("test".into()),
        })
        .await
        .unwrap();
    assert_eq!((s.runs, s.divergences, s.classes), (7, 6, 3));
    assert_eq!(
        s.verdicts,
        vec![("divergence".to_string(), 6), ("program_finished".to_string(), 1)]
    );
    // Durations are 10 + seed: 10..=15 and 109.
    assert_eq!(s.median_duration_ms, 13.0);
    assert_eq!(s.total_duration_ms, 184.0);
    let none = store
        .summary(&RunFilter {
            technique: None,
            campaign: Some("other".into()),
        })
        .await
        .unwrap();
    assert_eq!(none, Default::default());
    let other_campaign = RunFilter {
        technique: None,
        campaign: Some("other".into()),
    };
    assert!(store.classes(&other_campaign).await.unwrap().is_empty());
    assert!(store.sample_round_robin(&other_campaign, 3).await.unwrap().is_empty());

    let in_b = store.runs_in_class(&b, &RunFilter::default(), 10).await.unwrap();
    let other = RunFilter {
        technique: None,
        campaign: Some("other".into()),
    };
    assert!(
        store.runs_in_class(&b, &other, 10).await.unwrap().is_empty(),
        "the filter applies"
    );
    assert_eq!(in_b.iter().map(|r| r.id).collect::<Vec<_>>(), vec![ids[3], ids[4]]);
    assert_eq!(in_b[0].class_key.as_ref(), Some(&b));
    assert_eq!((in_b[0].verdict.as_str(), in_b[0].seed), ("divergence", 3));
    assert_eq!(in_b[0].duration_ms, 13.0);
    assert_eq!(
        store.runs_in_class(&a, &RunFilter::default(), 1).await.unwrap().len(),
        1
    );

    // A seed above i64::MAX survives the BIGINT column and the JSON.
    let mut big = run("big", "p.c", u64::MAX - 1, Some(c.clone()));
    big.campaign = "big seeds".into();
    let id = store.insert_run(&big).await.unwrap();
    assert_eq!(store.run(id).await.unwrap().unwrap().seed, u64::MAX - 1);
    let listed = store.runs_in_class(&c, &RunFilter::default(), 10).await.unwrap();
    assert_eq!(listed.last().map(|r| r.seed), Some(u64::MAX - 1));

    // DBDB Figure 7's input: verdict, divergence type and execution actions
    // (start, step in, step over: 3) of every run the filter selects.
    let counts = store.action_counts(&RunFilter::default()).await.unwrap();
    assert_eq!(
        counts.len() as u64,
        store.summary(&RunFilter::default()).await.unwrap().runs
    );
    assert!(counts.iter().all(|r| r.execution_actions == 3));
    let agreeing: Vec<_> = counts.iter().filter(|r| r.verdict == "program_finished").collect();
    assert_eq!(agreeing.len(), 1);
    assert_eq!(agreeing[0].divergence, None);
    assert!(
        counts
            .iter()
            .filter(|r| r.verdict == "divergence")
            .all(|r| r.divergence.is_some())
    );
    let big_only = RunFilter {
        technique: None,
        campaign: Some("big seeds".into()),
    };
    let only = store.action_counts(&big_only).await.unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].divergence.as_deref(), Some("call_stack"));

    triage_is_kept_by_root_cause(store).await;
}

/// A triage decision is stored by root cause, replaced by a new decision,
/// and untouched when runs are rewritten (what `doppel reclassify` does).
async fn triage_is_kept_by_root_cause(store: &Store) {
    use doppel_core::rootcause::{self, RootCause};
    use doppel_core::store::triage::{Triage, TriageVerdict};
    use doppel_core::technique::{ReplayReport, Reproducer, RunView, Technique, TechniqueContext};
    struct Plain;
    #[async_trait::async_trait]
    impl Technique for Plain {
        fn tag(&self) -> &'static str {
            "differential"
        }
        fn title(&self) -> &'static str {
            "plain"
        }
        fn class_parts(&self) -> &'static [doppel_core::ClassPartSpec] {
            &[]
        }
        fn class_legend(&self) -> &'static str {
            ""
        }
        fn view(&self, _: &doppel_core::RunRecord) -> anyhow::Result<RunView> {
            Ok(RunView::default())
        }
        async fn replay(
            &self,
            _: &doppel_core::RunRecord,
            _: &TechniqueContext,
            _: usize,
        ) -> anyhow::Result<ReplayReport> {
            anyhow::bail!("no replay")
        }
        async fn repro(
            &self,
            _: &doppel_core::RunRecord,
            _: &TechniqueContext,
            _: &std::path::Path,
        ) -> anyhow::Result<Reproducer> {
            anyhow::bail!("no repro")
        }
    }
    // The default root cause is the class key: as many causes as classes.
    let groups = rootcause::group(store, &RunFilter::default(), &[&Plain]).await.unwrap();
    let classes = store.classes(&RunFilter::default()).await.unwrap();
    assert_eq!(groups.len(), classes.len());
    assert_eq!(
        groups.iter().map(|g| g.size).sum::<u64>(),
        classes.iter().map(|c| c.size).sum::<u64>()
    );
    let cause: &RootCause = &groups[0].cause;
    let mut t = Triage {
        root_cause: cause.key(),
        root_id: cause.id(),
        technique: cause.technique.clone(),
        verdict: TriageVerdict::Bug,
        note: "first look".into(),
        at_ms: 1,
    };
    store.set_triage(&t).await.unwrap();
    t.verdict = TriageVerdict::FalsePositive;
    t.note = "loop rotation".into();
    store.set_triage(&t).await.unwrap();
    // Rewriting every divergent run (as reclassify does) keeps the decision.
    for id in store.divergent_run_ids(&RunFilter::default()).await.unwrap() {
        let r = store.run(id).await.unwrap().unwrap();
        store.insert_run(&r).await.unwrap();
    }
    assert_eq!(store.triages().await.unwrap(), vec![t]);
}

/// Eight tasks write five runs each through one handle, while a second
/// handle (another pool on the same database) writes too.
async fn concurrent_writers(url: &str) {
    let first = Store::open(url).await.unwrap();
    let second = Store::open(url).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let s = if i % 4 == 3 { second.clone() } else { first.clone() };
            tokio::spawn(async move {
                for j in 0..5 {
                    let mut r = run(&format!("w{i}-{j}"), "p.c", j, None);
                    r.campaign = "concurrent".into();
                    s.insert_run(&r).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(120), t)
            .await
            .expect("writers finish within 120 s")
            .unwrap();
    }
    let filter = RunFilter {
        technique: None,
        campaign: Some("concurrent".into()),
    };
    assert_eq!(first.summary(&filter).await.unwrap().runs, 40);
    // A fresh handle on the same database sees every row.
    let other = Store::open(url).await.unwrap();
    assert_eq!(other.summary(&filter).await.unwrap().runs, 40);
}

#[tokio::test]
async fn sqlite_round_trips_classes_samples_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/doppel.db");
    let url = path.to_string_lossy().into_owned();
    {
        let store = Store::open(&url).await.unwrap();
        exercise(&store).await;
    }
    // Reopen: nothing lost.
    let store = Store::open(&url).await.unwrap();
    assert_eq!(store.finished_keys("differential").await.unwrap().len(), 8);
    assert_eq!(store.summary(&RunFilter::default()).await.unwrap().classes, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_takes_concurrent_writers() {
    let dir = tempfile::tempdir().unwrap();
    concurrent_writers(&dir.path().join("c.db").to_string_lossy()).await;
}

#[tokio::test]
async fn sqlite_urls_get_mode_rwc_and_their_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/u.db");
    let store = Store::open(&format!("sqlite://{}", path.display())).await.unwrap();
    store.insert_run(&run("u", "p.c", 1, None)).await.unwrap();
    assert!(path.is_file(), "sqlite: URL without mode creates the file");
    assert!(!store.is_postgres());
    // An explicit mode is kept: read-only on a missing file fails.
    let missing = dir.path().join("missing.db");
    assert!(
        Store::open(&format!("sqlite:{}?mode=ro", missing.display()))
            .await
            .is_err()
    );
    assert!(!missing.exists());
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    let url = path.to_string_lossy().into_owned();
    Store::open(&url).await.unwrap();
    // Simulate a later doppel: bump the version in the file.
    let raw = sqlx::SqlitePool::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    sqlx::query("INSERT INTO doppel_schema (version) VALUES (99)")
        .execute(&raw)
        .await
        .unwrap();
    raw.close().await;
    let err = Store::open(&url).await.unwrap_err();
    assert!(format!("{err:#}").contains("schema version 99"), "{err:#}");
}

#[tokio::test]
async fn postgres_runs_the_same_code_path() {
    let pg = start_postgres();
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", pg.port);
    let mut store = None;
    for _ in 0..50 {
        match Store::open(&url).await {
            Ok(s) => {
                store = Some(s);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    let store = store.expect("connect to the throwaway PostgreSQL");
    assert!(store.is_postgres());
    exercise(&store).await;
    drop(store);
    // Reopening finds the schema and the data.
    let again = Store::open(&url).await.unwrap();
    assert_eq!(again.finished_keys("differential").await.unwrap().len(), 8);
    concurrent_writers(&url).await;

    // Several machines opening a fresh database at once: the schema is
    // created once, under the advisory lock, and nobody fails.
    let admin = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query("CREATE DATABASE fresh").execute(&admin).await.unwrap();
    let fresh = format!("postgres://postgres@127.0.0.1:{}/fresh", pg.port);
    let openers: Vec<_> = (0..4)
        .map(|_| {
            let u = fresh.clone();
            tokio::spawn(async move { Store::open(&u).await.map(|_| ()) })
        })
        .collect();
    for o in openers {
        o.await.unwrap().expect("concurrent open");
    }
    let versions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM doppel_schema")
        .fetch_one(&sqlx::PgPool::connect(&fresh).await.unwrap())
        .await
        .unwrap();
    assert_eq!(versions, 1);
}
