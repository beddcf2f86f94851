//! V8 14 through PyPI `mini-racer` (`workers/mini_racer_worker.py`): a new
//! `MiniRacer` (fresh isolate and context, a real V8 global object, unlike
//! node's `vm`) per script, mini-racer's own timeout. The thrown value is seen
//! only as V8's message: the constructor is the error's `name` (`Error` for a
//! subclass without its own name) and unknown for primitive throws.

use super::{hosted, python_worker};
use crate::hosted::Launch;
use crate::registry::{EngineEntry, HostTraits};
use crate::{Engine, EngineError, EnginesConfig, Family};

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "v8-mini-racer",
        family: Family::V8,
        about: "V8 14 via PyPI mini-racer (python/requirements.txt)",
        traits: HostTraits::MESSAGE_ONLY,
        probe,
        create,
    }
}

fn probe(cfg: &EnginesConfig) -> Result<String, EngineError> {
    super::pypi_version(cfg, "venv", "mini-racer")
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let cmd = python_worker(cfg, "venv", "mini_racer_worker.py", true);
    let mode = "worker: new MiniRacer per script";
    Ok(hosted(
        cfg,
        "v8-mini-racer",
        Family::V8,
        version,
        mode,
        Launch::Worker(cmd),
    ))
}
