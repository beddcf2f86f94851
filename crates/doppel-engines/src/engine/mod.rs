//! One host file per engine build; each gives the registry one
//! [`crate::registry::EngineEntry`] through its `entry()`.

pub mod engine262;
pub mod js102;
pub mod jsc;
pub mod node_vm;

use crate::hosted::{HostedEngine, Launch};
use crate::{Engine, EngineError, EngineInfo, EnginesConfig, Family};
use std::path::PathBuf;

/// A boxed [`HostedEngine`] from its parts.
pub(crate) fn hosted(
    cfg: &EnginesConfig,
    name: &str,
    family: Family,
    version: String,
    mode: &str,
    launch: Launch,
) -> Box<dyn Engine> {
    let info = EngineInfo {
        name: name.into(),
        family,
        version,
        mode: mode.into(),
    };
    Box::new(HostedEngine::new(info, launch, cfg.cache.clone()))
}

/// A program on `PATH`, or [`EngineError::NotInstalled`] naming the Debian package.
pub(crate) fn on_path(program: &str, debian: &str) -> Result<PathBuf, EngineError> {
    crate::config::which(program).ok_or_else(|| {
        EngineError::NotInstalled(format!(
            "{program} is not on PATH (Debian package {debian}, listed in scripts/deps/apt.txt)"
        ))
    })
}

/// The path of a worker script shipped in this crate, as a string argument.
pub(crate) fn worker_file(cfg: &EnginesConfig, file: &str) -> String {
    cfg.workers.join(file).to_string_lossy().into_owned()
}
