//! QuickJS (Bellard's, 2025-09-13) compiled to WASM, npm `quickjs-emscripten`
//! (`workers/quickjs.js` in node): one WASM module, a new runtime and context
//! per script, an interrupt deadline as the timeout, a 256 KiB stack limit,
//! promise jobs drained, the thrown value described inside the VM.

use super::{hosted, worker_file};
use crate::hosted::Launch;
use crate::registry::{EngineEntry, HostTraits};
use crate::worker::WorkerCommand;
use crate::{Engine, EngineError, EnginesConfig, Family};

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "quickjs",
        family: Family::QuickJs,
        about: "QuickJS (WASM) via npm quickjs-emscripten (js/package.json)",
        traits: HostTraits::EXACT,
        probe,
        create,
    }
}

fn probe(cfg: &EnginesConfig) -> Result<String, EngineError> {
    super::node()?;
    cfg.npm_version("quickjs-emscripten")
        .map_err(|e| EngineError::NotInstalled(format!("{e}; {}", cfg.setup_hint())))
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let mut cmd = WorkerCommand::new(super::node()?, &[&worker_file(cfg, "quickjs.js")]);
    cmd.env
        .push(("DOPPEL_ENGINES_DIR".into(), cfg.dir.to_string_lossy().into_owned()));
    cmd.own_timeout = true;
    let mode = "worker: new runtime + context per script";
    Ok(hosted(
        cfg,
        "quickjs",
        Family::QuickJs,
        version,
        mode,
        Launch::Worker(cmd),
    ))
}
