//! SpiderMonkey 136 through PyPI `pythonmonkey`
//! (`workers/pythonmonkey_worker.py`): imported once, a forked child per
//! script (no fresh-global API), the timeout an interval timer in the child,
//! promise jobs drained through asyncio. `throw null` is recognised from the
//! message before touching the thrown value (reading it segfaults, notes §5.6);
//! any crash of a child is an `Outcome::Crash` and the worker lives on.

use super::{hosted, python_worker};
use crate::hosted::Launch;
use crate::registry::{EngineEntry, HostTraits};
use crate::{Engine, EngineError, EnginesConfig, Family};

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "sm-pythonmonkey",
        family: Family::SpiderMonkey,
        about: "SpiderMonkey 136 via PyPI pythonmonkey (python/requirements.txt)",
        traits: HostTraits::EXACT,
        probe,
        create,
    }
}

fn probe(cfg: &EnginesConfig) -> Result<String, EngineError> {
    super::pypi_version(cfg, "venv", "pythonmonkey")
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let cmd = python_worker(cfg, "venv", "pythonmonkey_worker.py", true);
    let mode = "worker: fork per script";
    Ok(hosted(
        cfg,
        "sm-pythonmonkey",
        Family::SpiderMonkey,
        version,
        mode,
        Launch::Worker(cmd),
    ))
}
