//! SpiderMonkey 102 (`js102` shell, Debian `libmozjs-102-dev`): a long-lived
//! worker, a fresh global per script from `newGlobal()`; the driver kills and
//! respawns it on timeout. ES2022-level (notes §5.11).

use super::{hosted, on_path, worker_file};
use crate::hosted::Launch;
use crate::registry::{EngineEntry, HostTraits};
use crate::worker::WorkerCommand;
use crate::{Engine, EngineError, EnginesConfig, Family};

const DEBIAN: &str = "libmozjs-102-dev";

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "sm102",
        family: Family::SpiderMonkey,
        about: "SpiderMonkey 102 `js102` shell, Debian libmozjs-102-dev",
        traits: HostTraits::EXACT,
        probe,
        create,
    }
}

fn probe(_cfg: &EnginesConfig) -> Result<String, EngineError> {
    on_path("js102", DEBIAN)?;
    Ok(crate::config::debian_version(DEBIAN).unwrap_or_else(|| "unknown".into()))
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let js = on_path("js102", DEBIAN)?;
    let (common, own) = (worker_file(cfg, "shell-common.js"), worker_file(cfg, "js102.js"));
    let cmd = WorkerCommand::new(js, &["-f", &common, "-f", &own]);
    let mode = "worker: newGlobal() per script";
    Ok(hosted(
        cfg,
        "sm102",
        Family::SpiderMonkey,
        version,
        mode,
        Launch::Worker(cmd),
    ))
}
