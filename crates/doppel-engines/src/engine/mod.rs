//! One host file per engine build; each gives the registry one
//! [`crate::registry::EngineEntry`] through its `entry()`.

pub mod babel;
pub mod boa;
pub mod duktape;
pub mod engine262;
pub mod esbuild;
pub mod hermes;
pub mod js102;
pub mod jsc;
pub mod mujs;
pub mod njs;
pub mod node_vm;
pub mod quickjs;
pub mod quickjs_ng;
pub mod rhino;
pub mod sm_pythonmonkey;
pub mod swc;
pub mod typescript;
pub mod v8_mini_racer;

use crate::hosted::{HostedEngine, Launch};
use crate::worker::WorkerCommand;
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

/// The `node` on PATH (Node 20: V8 11), which runs the engine262, QuickJS,
/// Hermes and V8-11 workers, or [`EngineError::NotInstalled`] with the set-up
/// hint (Debian 12's own nodejs is Node 18; `scripts/deps/setup-00-node.sh`
/// installs Node 20 where the machine's node is older).
pub(crate) fn node() -> Result<PathBuf, EngineError> {
    crate::config::which("node").ok_or_else(|| {
        EngineError::NotInstalled("node is not on PATH (Node 20: scripts/deps/setup-00-node.sh installs it)".into())
    })
}

/// The path of a worker script shipped in this crate, as a string argument.
pub(crate) fn worker_file(cfg: &EnginesConfig, file: &str) -> String {
    cfg.workers.join(file).to_string_lossy().into_owned()
}

/// The version of a PyPI engine in venv `venv`, or [`EngineError::NotInstalled`] with the set-up hint.
pub(crate) fn pypi_version(cfg: &EnginesConfig, venv: &str, dist: &str) -> Result<String, EngineError> {
    if !cfg.venv_python(venv).exists() {
        return Err(EngineError::NotInstalled(format!(
            "no venv {}; {}",
            cfg.dir.join(venv).display(),
            cfg.setup_hint()
        )));
    }
    cfg.pypi_version(venv, dist)
        .map_err(|e| EngineError::NotInstalled(format!("{e}; {}", cfg.setup_hint())))
}

/// A worker run by venv `venv`'s python from the worker script `file`.
pub(crate) fn python_worker(cfg: &EnginesConfig, venv: &str, file: &str, own_timeout: bool) -> WorkerCommand {
    let mut cmd = WorkerCommand::new(cfg.venv_python(venv), &["-u", &worker_file(cfg, file)]);
    cmd.own_timeout = own_timeout;
    cmd
}
