//! Dynamic work claiming (`store::queue`) on a real, throwaway PostgreSQL.
//! The multi-process test with network namespaces and SIGKILL is
//! `tests/scale_out.rs`.

mod support;

use doppel_core::store::Store;
use doppel_core::store::queue::{Completion, QueueCounts, WorkItem, WorkQueue};
use std::collections::HashSet;
use std::time::Duration;
use support::postgres::start_postgres;
use support::*;

fn items(n: usize) -> Vec<WorkItem> {
    (0..n)
        .map(|i| WorkItem {
            key: format!("item-{i}"),
            payload: serde_json::json!({ "seed": i }),
        })
        .collect()
}

fn run_for(key: &str, seed: u64) -> doppel_core::RunRecord {
    run(key, "p.c", seed, None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_claim_disjoint_items_and_take_over_expired_leases() {
    let pg = start_postgres();
    let store = Store::open(&pg.url("postgres")).await.unwrap();
    let lease = Duration::from_secs(1);
    let a = WorkQueue::open(&store, "c1", "a", lease).await.unwrap();
    let b = WorkQueue::open(&store, "c1", "b", lease).await.unwrap();
    let other = WorkQueue::open(&store, "c2", "a", lease).await.unwrap();

    // Idempotent enqueue: every worker enqueues the whole campaign.
    assert_eq!(a.enqueue(&items(10)).await.unwrap(), 10);
    assert_eq!(b.enqueue(&items(10)).await.unwrap(), 0);
    assert_eq!(other.enqueue(&items(3)).await.unwrap(), 3, "campaigns are separate");
    assert_eq!(
        a.counts().await.unwrap(),
        QueueCounts {
            pending: 10,
            ..Default::default()
        }
    );

    // Lowest positions first, disjoint between workers.
    let ca = a.claim(3).await.unwrap();
    assert_eq!(ca.iter().map(|c| c.position).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(ca[1].payload, serde_json::json!({ "seed": 1 }));
    assert_eq!(ca[0].attempt, 1);
    let cb = b.claim(3).await.unwrap();
    assert_eq!(cb.iter().map(|c| c.position).collect::<Vec<_>>(), vec![3, 4, 5]);

    // Completing stores the run; a second completion stores nothing.
    let done = a.complete("item-0", &run_for("item-0", 0)).await.unwrap();
    let Completion::Stored(id) = done else {
        panic!("{done:?}")
    };
    assert_eq!(store.run(id).await.unwrap().unwrap().key, "item-0");
    assert_eq!(
        b.complete("item-0", &run_for("item-0", 0)).await.unwrap(),
        Completion::AlreadyDone
    );
    assert!(b.complete("nope", &run_for("nope", 0)).await.is_err(), "not enqueued");
    assert!(
        b.complete("item-3", &run_for("item-4", 0)).await.is_err(),
        "key mismatch"
    );

    // Renewal keeps a's leases; b stops renewing (it "died").
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(a.renew(&["item-1".into(), "item-2".into()]).await.unwrap().is_empty());
    tokio::time::sleep(Duration::from_millis(600)).await;
    let c = a.counts().await.unwrap();
    assert_eq!((c.done, c.claimed, c.expired, c.pending), (1, 2, 3, 4), "{c:?}");

    // b's expired items come first again (lowest positions), claimed by a.
    let taken = a.claim(3).await.unwrap();
    assert_eq!(taken.iter().map(|c| c.position).collect::<Vec<_>>(), vec![3, 4, 5]);
    assert!(taken.iter().all(|c| c.attempt == 2));
    // b comes back to life: its leases are gone, it is told so.
    assert_eq!(b.renew(&["item-3".into()]).await.unwrap(), vec!["item-3".to_string()]);
    // Both finish item-3: exactly one run stored.
    assert!(matches!(
        a.complete("item-3", &run_for("item-3", 3)).await.unwrap(),
        Completion::Stored(_)
    ));
    assert_eq!(
        b.complete("item-3", &run_for("item-3", 3)).await.unwrap(),
        Completion::AlreadyDone
    );

    // Release gives items back; b cannot release a's.
    b.release(&["item-4".into()]).await.unwrap();
    assert_eq!(a.counts().await.unwrap().pending, 4);
    a.release(&["item-4".into(), "item-5".into()]).await.unwrap();
    assert_eq!(a.counts().await.unwrap().pending, 6);

    // a finishes the items it kept renewing.
    for k in [1, 2] {
        let key = format!("item-{k}");
        assert!(matches!(
            a.complete(&key, &run_for(&key, k)).await.unwrap(),
            Completion::Stored(_)
        ));
    }

    // Concurrent claimers drain the rest with no item twice.
    let claimers: Vec<_> = (0..4)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                let q = WorkQueue::open(&store, "c1", &format!("w{w}"), Duration::from_secs(30))
                    .await
                    .unwrap();
                let mut mine = Vec::new();
                loop {
                    let got = q.claim(1).await.unwrap();
                    if got.is_empty() {
                        break;
                    }
                    for c in got {
                        let seed = c.position;
                        assert!(matches!(
                            q.complete(&c.key, &run_for(&c.key, seed)).await.unwrap(),
                            Completion::Stored(_)
                        ));
                        mine.push(c.key);
                    }
                }
                mine
            })
        })
        .collect();
    let mut all = Vec::new();
    for c in claimers {
        all.extend(c.await.unwrap());
    }
    let unique: HashSet<_> = all.iter().collect();
    assert_eq!(unique.len(), all.len(), "an item was claimed twice: {all:?}");
    println!(
        "faults: group=store case=lease_expiry_takeover cases=10 lost={} duplicated={} taken_over=3",
        10 - store.finished_keys("differential").await.unwrap().len(),
        all.len() - unique.len()
    );
    assert_eq!(all.len(), 6, "items 4 to 9");
    let c = a.counts().await.unwrap();
    assert_eq!((c.done, c.remaining()), (10, 0));
    assert_eq!(store.finished_keys("differential").await.unwrap().len() as u64, c.done);
}

#[tokio::test]
async fn claiming_on_sqlite_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("s.db").to_string_lossy()).await.unwrap();
    let err = WorkQueue::open(&store, "c", "w", Duration::from_secs(10))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("PostgreSQL") && err.contains("--partition"), "{err}");
}
