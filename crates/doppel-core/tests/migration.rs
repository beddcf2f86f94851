//! Stores written by older doppel releases open, migrated, with the same
//! runs in the same classes: a real schema-1 store (`tests/data/`, written
//! by the release before the technique seam) on SQLite and, copied row for
//! row, on a real PostgreSQL server.

mod support;

use doppel_core::store::{RunFilter, SCHEMA_VERSION, Store};
use sqlx::Row;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use support::postgres::start_postgres;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// The schema-1 fixture, unpacked into `dir`; returns its path.
fn schema1_store(dir: &Path) -> PathBuf {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data("schema1-store.db.gz")).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    let path = dir.join("schema1.db");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// key -> (verdict, class) as the schema-1 release wrote them.
fn expected_runs() -> BTreeMap<String, (String, String)> {
    std::fs::read_to_string(data("schema1-runs.tsv"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut f = l.split('\t');
            let key = f.next().unwrap().to_string();
            (key, (f.next().unwrap().to_string(), f.next().unwrap_or("").to_string()))
        })
        .collect()
}

/// Checks a migrated store against the fixture's runs: every record parses
/// with today's types, keeps its verdict and its class's `Display` form, and
/// carries its technique's tag; classes group as before.
async fn check_migrated(store: &Store, raw_rows: Vec<(i64, String)>) {
    let expected = expected_runs();
    assert_eq!(raw_rows.len(), expected.len());
    let mut classes_seen = BTreeMap::<String, u64>::new();
    for (id, key) in raw_rows {
        let run = store
            .run(id)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("run {id} is gone"));
        let (verdict, class) = &expected[&key];
        // Debug-information records got their own verdict in schema 3.
        let verdict = match (run.technique.as_str(), verdict.as_str()) {
            ("debuginfo", "program_finished") => "checked",
            (_, v) => v,
        };
        assert_eq!(run.verdict.name(), verdict, "run {id}");
        if run.technique == "debuginfo" {
            match &run.verdict {
                doppel_core::Verdict::Checked { checks } if run.config["kind"] == "session" => {
                    assert_eq!(
                        Some(*checks),
                        run.config["verdicts"].as_array().map(Vec::len),
                        "run {id}"
                    )
                }
                doppel_core::Verdict::Checked { checks } => assert!(*checks > 0, "run {id}"),
                doppel_core::Verdict::Divergence(f) => {
                    assert_eq!((f.action_index, &f.last_action), (None, &None), "run {id}")
                }
                other => panic!("run {id}: {other:?}"),
            }
        }
        let now = run.verdict.finding().map(|f| f.class.to_string()).unwrap_or_default();
        assert_eq!(&now, class, "run {id}: the class changed");
        if let Some(f) = run.verdict.finding() {
            assert_eq!(
                f.class.technique, run.technique,
                "run {id}: the class carries its technique"
            );
            *classes_seen.entry(now).or_default() += 1;
        }
    }
    assert_eq!(classes_seen.len(), 4, "{classes_seen:?}");
    let classes = store.classes(&RunFilter::default()).await.unwrap();
    let grouped: BTreeMap<String, u64> = classes.iter().map(|c| (c.key.to_string(), c.size)).collect();
    assert_eq!(grouped, classes_seen);
    let debuginfo = classes.iter().find(|c| c.key.technique == "debuginfo").unwrap();
    assert_eq!(
        debuginfo.key.part("signature"),
        Some("gcc-12.2.0,Os,different_stop,-fschedule-insns2,int,gdb")
    );
    assert_eq!(debuginfo.key.part("finding"), Some("wrong_value"));
    let meta = store.finished_keys("metamorphic").await.unwrap();
    assert_eq!(meta.len(), 12);
    let sample = store.sample_round_robin(&RunFilter::default(), 1).await.unwrap();
    assert_eq!(sample.len(), 4);
    assert!(sample.iter().all(|s| s.class_key.is_some()));
}

async fn version_of_sqlite(path: &Path) -> i64 {
    let raw = sqlx::SqlitePool::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let v: i64 = sqlx::query_scalar("SELECT MAX(version) FROM doppel_schema")
        .fetch_one(&raw)
        .await
        .unwrap();
    raw.close().await;
    v
}

async fn sqlite_ids(path: &Path) -> Vec<(i64, String)> {
    let raw = sqlx::SqlitePool::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let rows = sqlx::query("SELECT id, key FROM runs ORDER BY id")
        .fetch_all(&raw)
        .await
        .unwrap();
    raw.close().await;
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

#[tokio::test]
async fn a_schema_1_sqlite_store_is_migrated_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = schema1_store(dir.path());
    assert_eq!(version_of_sqlite(&path).await, 1);
    let url = path.to_string_lossy().into_owned();
    let store = Store::open(&url).await.unwrap();
    check_migrated(&store, sqlite_ids(&path).await).await;
    // Schema 4's triage table exists, empty.
    assert_eq!(store.triages().await.unwrap(), vec![]);
    drop(store);
    assert_eq!(version_of_sqlite(&path).await, SCHEMA_VERSION);
    // Opening again is a no-op, and the store still reads the same.
    let again = Store::open(&url).await.unwrap();
    check_migrated(&again, sqlite_ids(&path).await).await;
}

#[tokio::test]
async fn a_migration_that_fails_leaves_the_store_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = schema1_store(dir.path());
    // A divergent run whose stored class no longer matches its record.
    let raw = sqlx::SqlitePool::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    sqlx::query("UPDATE runs SET class_key = 'something|else' WHERE id = 3")
        .execute(&raw)
        .await
        .unwrap();
    raw.close().await;
    let err = Store::open(&path.to_string_lossy()).await.unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("migrating the store from schema version 1") && msg.contains("run 3"),
        "{msg}"
    );
    assert_eq!(version_of_sqlite(&path).await, 1, "rolled back");
    let raw = sqlx::SqlitePool::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let cols: Vec<String> = sqlx::query("SELECT name FROM pragma_table_info('runs')")
        .fetch_all(&raw)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(!cols.iter().any(|c| c == "class_json"), "{cols:?}");
}

/// Schema 1's PostgreSQL DDL, as that release created it (frozen here).
const V1_POSTGRES: [&str; 5] = [
    "CREATE TABLE doppel_schema (version BIGINT NOT NULL)",
    "CREATE TABLE runs (id BIGSERIAL PRIMARY KEY, key TEXT NOT NULL UNIQUE, technique TEXT NOT NULL, \
     campaign TEXT NOT NULL, subject_name TEXT NOT NULL, subject_hash TEXT NOT NULL, seed BIGINT NOT NULL, \
     verdict TEXT NOT NULL, class_key TEXT, divergence TEXT, last_action TEXT, ast_node TEXT, policy TEXT, \
     debuggers TEXT NOT NULL, duration_ms DOUBLE PRECISION NOT NULL, started_at_ms BIGINT NOT NULL, record_json TEXT NOT NULL)",
    "CREATE INDEX runs_class ON runs (class_key)",
    "CREATE INDEX runs_campaign ON runs (technique, campaign)",
    "CREATE INDEX runs_campaign_only ON runs (campaign)",
];

#[tokio::test]
async fn a_schema_1_postgres_store_is_migrated_on_open() {
    let pg = start_postgres();
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", pg.port);
    let mut admin = None;
    for _ in 0..50 {
        match sqlx::PgPool::connect(&url).await {
            Ok(p) => {
                admin = Some(p);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(200)).await,
        }
    }
    let pgpool = admin.expect("connect to the throwaway PostgreSQL");
    for stmt in V1_POSTGRES {
        sqlx::query(stmt).execute(&pgpool).await.unwrap();
    }
    sqlx::query("INSERT INTO doppel_schema (version) VALUES (1)")
        .execute(&pgpool)
        .await
        .unwrap();
    // The fixture's rows, column for column.
    let dir = tempfile::tempdir().unwrap();
    let path = schema1_store(dir.path());
    let lite = sqlx::SqlitePool::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let cols = "id, key, technique, campaign, subject_name, subject_hash, seed, verdict, class_key, divergence, \
                last_action, ast_node, policy, debuggers, duration_ms, started_at_ms, record_json";
    for r in sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {cols} FROM runs ORDER BY id")))
        .fetch_all(&lite)
        .await
        .unwrap()
    {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO runs ({cols}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)"
        )))
        .bind(r.get::<i64, _>(0));
        for i in 1..6 {
            q = q.bind(r.get::<String, _>(i));
        }
        q = q.bind(r.get::<i64, _>(6)).bind(r.get::<String, _>(7));
        for i in 8..13 {
            q = q.bind(r.get::<Option<String>, _>(i));
        }
        q = q
            .bind(r.get::<String, _>(13))
            .bind(r.get::<f64, _>(14))
            .bind(r.get::<i64, _>(15))
            .bind(r.get::<String, _>(16));
        q.execute(&pgpool).await.unwrap();
    }
    lite.close().await;
    let store = Store::open(&url).await.unwrap();
    assert!(store.is_postgres());
    let ids: Vec<(i64, String)> = sqlx::query("SELECT id, key FROM runs ORDER BY id")
        .fetch_all(&pgpool)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    check_migrated(&store, ids.clone()).await;
    let v: i64 = sqlx::query_scalar("SELECT MAX(version) FROM doppel_schema")
        .fetch_one(&pgpool)
        .await
        .unwrap();
    assert_eq!(v, SCHEMA_VERSION);
    // Reopening the migrated store changes nothing.
    drop(store);
    let again = Store::open(&url).await.unwrap();
    check_migrated(&again, ids).await;
}
