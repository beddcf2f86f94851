//! The store on SQLite (a temporary file) and on a real, throwaway PostgreSQL server.

mod support;

use doppel_core::store::{RunFilter, Store};
use doppel_core::{ActionKind, DivergenceKind};
use std::process::{Child, Command};
use std::time::{Duration, Instant};
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
    assert_eq!(s.verdicts[0], ("divergence".to_string(), 6));
    assert!(s.median_duration_ms >= 10.0);
    let none = store
        .summary(&RunFilter {
            technique: None,
            campaign: Some("other".into()),
        })
        .await
        .unwrap();
    assert_eq!(none.runs, 0);

    assert_eq!(store.runs_in_class(&b, 10).await.unwrap().len(), 2);
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
    assert_eq!(store.finished_keys("differential").await.unwrap().len(), 7);
}

#[tokio::test]
async fn sqlite_takes_concurrent_writers() {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().join("c.db").to_string_lossy().into_owned();
    let store = Store::open(&url).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let s = store.clone();
            tokio::spawn(async move {
                for j in 0..5 {
                    s.insert_run(&run(&format!("w{i}-{j}"), "p.c", j, None)).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(store.finished_keys("differential").await.unwrap().len(), 40);
    // A second process-like handle on the same file sees the rows too.
    let other = Store::open(&url).await.unwrap();
    assert_eq!(other.summary(&RunFilter::default()).await.unwrap().runs, 40);
}

/// A throwaway PostgreSQL cluster in a temporary directory, run as the
/// `postgres` user (the server refuses to run as root), killed on drop.
struct Postgres {
    child: Child,
    _dir: tempfile::TempDir,
    port: u16,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_postgres() -> Postgres {
    let bin = std::path::Path::new("/usr/lib/postgresql/15/bin");
    assert!(
        bin.join("postgres").is_file(),
        "PostgreSQL 15 server binaries are missing: apt-get install postgresql (the store's PostgreSQL path is tested against a real server)"
    );
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let own = |p: &std::path::Path| {
        assert!(
            Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(p)
                .status()
                .unwrap()
                .success()
        );
    };
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    own(&data);
    let as_pg = |args: &[&str]| {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).args(args);
        c
    };
    let init = as_pg(&[
        bin.join("initdb").to_str().unwrap(),
        "-D",
        data.to_str().unwrap(),
        "--auth=trust",
        "-U",
        "postgres",
    ])
    .output()
    .unwrap();
    assert!(
        init.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = as_pg(&[
        bin.join("postgres").to_str().unwrap(),
        "-D",
        data.to_str().unwrap(),
        "-p",
        &port.to_string(),
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        &format!("unix_socket_directories={}", data.display()),
    ])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let pg = Postgres { child, _dir: dir, port };
    let t = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "PostgreSQL did not start within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    pg
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
}
