//! One module per subcommand, plus the helpers they share.

pub mod backends;
pub mod bench;
pub mod bench_engines;
pub mod bench_fake;
pub mod bench_localize;
pub mod bench_policies;
pub mod bench_reduce;
pub mod bench_runner;
pub mod bench_scale;
pub mod bench_soak;
pub mod bench_transform;
pub mod campaign;
pub mod classes;
pub mod conform;
pub mod conform_bench;
pub mod conform_print;
pub mod conform_reduce;
pub mod debuginfo;
pub mod diff;
pub mod engines;
pub mod localize;
pub mod meta;
pub mod reclassify;
pub mod reduce;
pub mod replay;
pub mod report;
pub mod repro;
pub mod show;
pub mod triage;

use doppel_core::store::Store;

/// Opens the store, saying which one on error.
pub async fn open_store(db: &str) -> anyhow::Result<Store> {
    use anyhow::Context;
    Store::open(db).await.with_context(|| format!("opening the store {db}"))
}

/// Loads a stored run by id, or a clear error.
pub async fn load_run(store: &Store, id: i64) -> anyhow::Result<doppel_core::RunRecord> {
    store
        .run(id)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no run with id {id} in the store"))
}

/// What techniques need from the command line: the store and its build cache.
pub fn technique_context(store: &Store, db: &str) -> doppel_core::technique::TechniqueContext {
    doppel_core::technique::TechniqueContext {
        store: store.clone(),
        cache_dir: doppel_lang::prepare::cache_dir(db),
    }
}

/// Prints evidence tables (`doppel show`), highlighted rows red.
pub fn print_tables(tables: &[doppel_core::technique::EvidenceTable]) {
    use comfy_table::{Cell, Color, Table, presets::UTF8_FULL_CONDENSED};
    for table in tables {
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED);
        t.set_header(table.header.clone());
        for row in &table.rows {
            let color = if row.highlight { Color::Red } else { Color::Reset };
            t.add_row(row.cells.iter().map(|c| Cell::new(c).fg(color)).collect::<Vec<_>>());
        }
        if let Some(c) = &table.caption {
            println!("{c}:");
        }
        println!("{t}");
    }
}

/// The campaign progress bar: hidden with `--quiet` or under CI; `unit`
/// names what is counted (`runs`, `sequences`).
pub fn progress_bar(quiet: bool, unit: &str) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let bar = ProgressBar::new(0);
    if quiet || std::env::var_os("CI").is_some() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {unit}  {{per_sec}}  eta {{eta}}  {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// This doppel's own executable, for the subprocesses that call it back (a
/// reducer's interestingness test, scale-out workers): its path while that
/// file is still the running binary, else `/proc/<pid>/exe`, which names
/// the running binary for as long as doppel lives even after a rebuild
/// replaced or removed the file (a campaign outlives a `cargo build`; its
/// probes must not fail to start, nor run another build than the one they
/// check).
///
/// Errors: the executable cannot be found (`std::env::current_exe`).
pub fn doppel_exe() -> std::io::Result<std::path::PathBuf> {
    exe_of(std::env::current_exe()?, std::process::id())
}

/// `path` if it is the file process `pid` runs, else `/proc/<pid>/exe`.
fn exe_of(path: std::path::PathBuf, pid: u32) -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let same = |a: &std::fs::Metadata, b: &std::fs::Metadata| a.dev() == b.dev() && a.ino() == b.ino();
    let running = std::path::PathBuf::from(format!("/proc/{pid}/exe"));
    match (std::fs::metadata(&path), std::fs::metadata(&running)) {
        (Ok(on_disk), Ok(live)) if same(&on_disk, &live) => Ok(path),
        (_, Ok(_)) => Ok(running),
        (Ok(_), Err(_)) => Ok(path),
        (Err(e), Err(_)) => Err(e),
    }
}

/// The end of a campaign's closing line: `, N NOT STORED` when runs were lost.
pub fn not_stored(n: usize) -> String {
    if n > 0 {
        format!(", {n} NOT STORED")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_replaced_executable_is_reached_through_proc() {
        let dir = tempfile::tempdir().unwrap();
        // Symbolic links, not copies: executing a file this test process
        // just wrote races with the forks of tests running beside it
        // ("Text file busy").
        let copy = dir.path().join("sleep");
        std::os::unix::fs::symlink("/bin/sleep", &copy).unwrap();
        let mut child = std::process::Command::new(&copy).arg("30").spawn().unwrap();
        let pid = child.id();
        assert_eq!(super::exe_of(copy.clone(), pid).unwrap(), copy);
        // A rebuild: the file is replaced by another one.
        std::fs::remove_file(&copy).unwrap();
        std::os::unix::fs::symlink("/bin/true", &copy).unwrap();
        let exe = super::exe_of(copy.clone(), pid).unwrap();
        assert_eq!(exe, std::path::PathBuf::from(format!("/proc/{pid}/exe")));
        // It still starts the binary that runs (sleep, not true).
        let out = std::process::Command::new(&exe).arg("--version").output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("sleep"), "{out:?}");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
