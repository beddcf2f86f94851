//! JavaScriptCore (WebKitGTK's `jsc` shell, Debian `libjavascriptcoregtk-4.0-bin`):
//! a long-lived worker, a fresh realm per script from `$262.createRealm()`;
//! the driver kills and respawns it on timeout.

use super::{hosted, on_path, worker_file};
use crate::hosted::Launch;
use crate::registry::{EngineEntry, HostTraits};
use crate::worker::WorkerCommand;
use crate::{Engine, EngineError, EnginesConfig, Family};

const DEBIAN: &str = "libjavascriptcoregtk-4.0-bin";

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "jsc",
        family: Family::JavaScriptCore,
        about: "JavaScriptCore (WebKitGTK) `jsc` shell, Debian libjavascriptcoregtk-4.0-bin",
        traits: HostTraits {
            dollar_removed: true,
            ..HostTraits::EXACT
        },
        probe,
        create,
    }
}

fn probe(_cfg: &EnginesConfig) -> Result<String, EngineError> {
    on_path("jsc", DEBIAN)?;
    Ok(crate::config::debian_version(DEBIAN).unwrap_or_else(|| "unknown".into()))
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let jsc = on_path("jsc", DEBIAN)?;
    let cmd = WorkerCommand::new(
        jsc,
        &[&worker_file(cfg, "shell-common.js"), &worker_file(cfg, "jsc.js")],
    );
    let mode = "worker: $262.createRealm() per script";
    Ok(hosted(
        cfg,
        "jsc",
        Family::JavaScriptCore,
        version,
        mode,
        Launch::Worker(cmd),
    ))
}
