//! Rhino 1.7 (Mozilla, JVM; Debian `rhino`) with `-version 200` (ES6 mode):
//! a long-lived worker (`workers/rhino.js` after `shell-common.js`), a fresh
//! global per script from `Context.initStandardObjects()`, run by Rhino's
//! interpreter (optimization level -1: no JVM class compiled per script, and
//! deep recursion is Rhino's `InternalError` rather than a JVM
//! `StackOverflowError` that kills the worker). The driver kills and respawns
//! it on timeout. A JVM start (0.3–1 s) per worker instead of per script: the
//! one-process-per-script host it replaces made Rhino the slowest member of
//! the panel by 5x (docs/results/conformance.md, speed).

use super::{hosted, on_path, worker_file};
use crate::hosted::Launch;
use crate::registry::{EngineEntry, HostTraits};
use crate::worker::WorkerCommand;
use crate::{Engine, EngineError, EnginesConfig, Family};

const DEBIAN: &str = "rhino";

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "rhino",
        family: Family::Rhino,
        about: "Rhino `rhino -version 200`, Debian rhino (JVM, ES5+), a worker with a fresh global per script",
        traits: HostTraits::EXACT,
        probe,
        create,
    }
}

fn probe(_cfg: &EnginesConfig) -> Result<String, EngineError> {
    on_path("rhino", DEBIAN)?;
    Ok(crate::config::debian_version(DEBIAN).unwrap_or_else(|| "unknown".into()))
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let rhino = on_path("rhino", DEBIAN)?;
    let (common, own) = (worker_file(cfg, "shell-common.js"), worker_file(cfg, "rhino.js"));
    let cmd = WorkerCommand::new(rhino, &["-version", "200", "-f", &common, "-f", &own]);
    let mode = "worker: initStandardObjects() per script (interpreter)";
    Ok(hosted(cfg, "rhino", Family::Rhino, version, mode, Launch::Worker(cmd)))
}
