//! Boa 0.22 through PyPI `boabem` (`workers/boa_worker.py`): a forked child
//! with a new `Context` per script, the timeout an interval timer in the child
//! (boabem has no interrupt API). Caveats: boabem does not run promise jobs
//! after `eval` (async results are not seen), and the thrown value is only
//! text (constructor = the error's name; unknown for primitive throws).

use super::{hosted, python_worker};
use crate::hosted::Launch;
use crate::registry::{EngineEntry, HostTraits};
use crate::{Engine, EngineError, EnginesConfig, Family};

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "boa",
        family: Family::Boa,
        about: "Boa 0.22 via PyPI boabem (python/requirements.txt)",
        traits: HostTraits {
            runs_promise_jobs: false,
            ..HostTraits::MESSAGE_ONLY
        },
        probe,
        create,
    }
}

fn probe(cfg: &EnginesConfig) -> Result<String, EngineError> {
    super::pypi_version(cfg, "venv", "boabem")
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let cmd = python_worker(cfg, "venv", "boa_worker.py", true);
    let mode = "worker: fork + new Context per script";
    Ok(hosted(cfg, "boa", Family::Boa, version, mode, Launch::Worker(cmd)))
}
