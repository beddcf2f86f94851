//! One module per subcommand, plus the helpers they share.

pub mod backends;
pub mod bench;
pub mod classes;
pub mod diff;
pub mod meta;
pub mod reclassify;
pub mod replay;
pub mod report;
pub mod repro;
pub mod show;
pub mod subjects;

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
