//! Store faults through the `doppel` binary (issue 13 part 5a): a campaign
//! whose SQLite store is on a full disk (a small tmpfs, so the kernel's own
//! ENOSPC) exits non-zero, names every run it could not store, and every
//! other run is in the store. The store-level fault tests are in
//! `doppel-core/tests/store_faults.rs`.

use assert_cmd::Command;
use doppel_core::store::Store;
use std::path::PathBuf;

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/c")
        .join(name)
}

/// A tmpfs of `bytes` on a fresh directory (root only), unmounted on drop.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount(bytes: usize) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "doppel-e2e-store"])
            .arg(dir.path())
            .output()
            .expect("run mount(8)");
        assert!(
            out.status.success(),
            "mounting a tmpfs failed (this test runs as root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallDisk(dir)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.0.path())
            .status();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_campaign_on_a_full_disk_exits_non_zero_and_loses_no_run_silently() {
    let disk = SmallDisk::mount(256 << 10);
    // The build cache sits beside the store; keep it on a real disk, so
    // only the store runs out of space.
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), disk.0.path().join("cache")).unwrap();
    let db = disk.0.path().join("doppel.db");
    let programs = ["structs.c", "switch.c", "recursion.c", "arrays.c"].map(corpus);
    let runs = 4 * programs.len();
    let out = Command::cargo_bin("doppel")
        .unwrap()
        .arg("--db")
        .arg(&db)
        .env("CI", "1")
        .args(["diff", "--runs-per-program", "4", "--seed", "1", "--jobs", "1"])
        .args(&programs)
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "a campaign that lost runs must fail:\n{text}");
    // Every run not stored is named, with the cause.
    let not_stored: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| l.contains("not stored") && l.contains("full"))
        .collect();
    let stored = Store::open(&format!("sqlite:{}?mode=ro", db.display()))
        .await
        .unwrap()
        .finished_keys("differential")
        .await
        .unwrap()
        .len();
    println!(
        "faults: group=store case=cli_disk_full cases={runs} stored={stored} reported_not_stored={} lost={} duplicated=0",
        not_stored.len(),
        runs.saturating_sub(stored + not_stored.len())
    );
    assert!(!not_stored.is_empty(), "the full disk is reported:\n{text}");
    assert_eq!(
        stored + not_stored.len(),
        runs,
        "every run is either stored or reported as not stored:\n{text}"
    );
}
