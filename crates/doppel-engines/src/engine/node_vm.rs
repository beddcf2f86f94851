//! V8 11 in node 20 (`vm` contexts): a long-lived node worker, a new context
//! per script, the timeout enforced by `vm`. Its global object is not
//! spec-conformant (a global `var` is configurable, global key order differs;
//! notes §5.2), so global-state assertions on this engine are not verdicts.

use super::{hosted, worker_file};
use crate::hosted::Launch;
use crate::registry::{EngineEntry, HostTraits};
use crate::worker::WorkerCommand;
use crate::{Engine, EngineError, EnginesConfig, Family};

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "v8-node",
        family: Family::V8,
        about: "V8 11 in node 20 `vm` contexts (global object not conformant), scripts/deps/setup-00-node.sh",
        traits: HostTraits {
            conformant_global: false,
            ..HostTraits::EXACT
        },
        probe,
        create,
    }
}

fn probe(_cfg: &EnginesConfig) -> Result<String, EngineError> {
    let node = super::node()?;
    let out = crate::config::output_within(
        std::process::Command::new(node).args(["-p", "`node ${process.version} V8 ${process.versions.v8}`"]),
        crate::config::PROBE_TIMEOUT,
    )
    .map_err(|e| EngineError::NotInstalled(format!("node does not run: {e}")))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let node = super::node()?;
    let mut cmd = WorkerCommand::new(node, &[&worker_file(cfg, "node-vm.js")]);
    cmd.own_timeout = true;
    let mode = "worker: vm.createContext() per script";
    Ok(hosted(cfg, "v8-node", Family::V8, version, mode, Launch::Worker(cmd)))
}
