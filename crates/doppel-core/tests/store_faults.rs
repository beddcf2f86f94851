//! Store faults (issue 13 part 5): a full disk, a corrupt file, a
//! PostgreSQL server that is down or goes away. Each case prints one line
//! `faults: group=store case=<name> ...` with what was stored, lost and
//! duplicated.
//!
//! The full-disk cases mount a small tmpfs (root only, like the PostgreSQL
//! tests, which switch to the `postgres` user): a real `ENOSPC` from the
//! kernel, so SQLite's own error path runs, not an imitation of it.

mod support;

use doppel_core::store::Store;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use support::*;

/// A tmpfs of `bytes` mounted on a fresh temporary directory; unmounted
/// (lazily, so an open file cannot keep it) on drop.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(bytes: usize) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "doppel-store-test"])
            .arg(dir.path())
            .output()
            .expect("run mount(8)");
        assert!(
            out.status.success(),
            "mounting a {bytes}-byte tmpfs failed (the full-disk tests run as root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallDisk { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// A run whose record is about `size` bytes (padding in its configuration).
fn padded_run(key: &str, seed: u64, size: usize) -> doppel_core::RunRecord {
    let mut r = run(key, "p.c", seed, None);
    // Not compressible and not repetitive, so no layer can shrink it.
    let pad: String = (0..size)
        .map(|i| {
            let x = (i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 59;
            char::from(b'a' + x as u8)
        })
        .collect();
    r.config = serde_json::json!({ "pad": pad });
    r
}

/// Inserts `n` runs of `size` bytes into the SQLite store at `db`, then
/// reopens it and compares: every insert that reported success must be
/// stored, and at least one must have failed (the disk is full).
/// Returns (reported ok, reported error, lost).
async fn fill(db: &Path, n: usize, size: usize) -> (usize, usize, usize) {
    let url = db.to_string_lossy().into_owned();
    let mut ok = HashSet::new();
    let mut failed = 0;
    {
        let store = Store::open(&url).await.expect("open the store while the disk has room");
        for i in 0..n {
            let key = format!("full-{i}");
            match store.insert_run(&padded_run(&key, i as u64, size)).await {
                Ok(_) => {
                    ok.insert(key);
                }
                Err(e) => {
                    let msg = format!("{e:#}");
                    assert!(
                        msg.contains("full") || msg.contains("disk") || msg.contains("space"),
                        "a full disk is named as the cause: {msg}"
                    );
                    failed += 1;
                }
            }
        }
        drop(store);
    }
    // Read back through a fresh connection (what `--resume` and `show` see).
    let stored = Store::open(&format!("sqlite:{url}?mode=ro"))
        .await
        .expect("reopen the full store read-only")
        .finished_keys("differential")
        .await
        .unwrap();
    let lost = ok.iter().filter(|k| !stored.contains(*k)).count();
    assert!(
        stored.iter().all(|k| ok.contains(k)),
        "a run reported as not stored is nevertheless in the store"
    );
    (ok.len(), failed, lost)
}

#[tokio::test]
async fn sqlite_on_a_full_disk_reports_every_run_it_did_not_store() {
    let disk = SmallDisk::mount(1 << 20);
    let n = 120;
    let (ok, failed, lost) = fill(&disk.path("doppel.db"), n, 20_000).await;
    println!(
        "faults: group=store case=sqlite_disk_full cases={n} stored={ok} reported_errors={failed} lost={lost} duplicated=0"
    );
    assert!(failed > 0, "1 MB cannot hold {n} runs of 20 kB: some insert must fail");
    assert_eq!(lost, 0, "runs reported as stored but missing after reopening");
}
