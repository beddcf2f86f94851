//! quickjs-ng 0.17 through PyPI `quickjs-ng` (`workers/quickjs_ng_worker.py`,
//! in a venv of its own: its module is `quickjs`, like PyPI's older QuickJS):
//! a new `Context` per script, its time limit as the timeout, a 1 MiB stack
//! limit, promise jobs drained. The thrown value is only text (constructor =
//! the error's name; unknown for primitive throws).

use super::{hosted, python_worker};
use crate::hosted::Launch;
use crate::registry::{EngineEntry, HostTraits};
use crate::{Engine, EngineError, EnginesConfig, Family};

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "quickjs-ng",
        family: Family::QuickJs,
        about: "quickjs-ng via PyPI quickjs-ng (python/requirements-quickjs-ng.txt)",
        traits: HostTraits::MESSAGE_ONLY,
        probe,
        create,
    }
}

fn probe(cfg: &EnginesConfig) -> Result<String, EngineError> {
    super::pypi_version(cfg, "venv-quickjs-ng", "quickjs-ng")
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let cmd = python_worker(cfg, "venv-quickjs-ng", "quickjs_ng_worker.py", true);
    let mode = "worker: new Context per script";
    Ok(hosted(
        cfg,
        "quickjs-ng",
        Family::QuickJs,
        version,
        mode,
        Launch::Worker(cmd),
    ))
}
