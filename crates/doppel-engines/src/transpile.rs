//! What the transpiler hosts share (issue 15 part 7c, after JEST-FS, PLDI
//! 2023, which found 101 of its 143 bugs in transpilers): Babel, SWC,
//! esbuild and TypeScript from npm (pinned in `js-transpilers/`, installed
//! by `scripts/deps/setup-transpilers.sh` into
//! `<DOPPEL_ENGINES_DIR>/transpilers/node_modules`) as tools under test.
//!
//! Each runs as a long-lived node worker (`workers/transpile.js`) that loads
//! its transpiler once, transpiles each script whole (test262's harness
//! files included: they are ES5-level code, and the test's calls must reach
//! the same harness functions) and runs the output in a fresh `vm` context of
//! the same node, with `print` bound as in the `v8-node` host. A transpiler
//! that refuses a script gives [`crate::Outcome::TranspileError`]; one that
//! hangs is killed by the driver at the timeout plus the grace period
//! ([`crate::Outcome::Timeout`]).

use crate::hosted::Launch;
use crate::worker::WorkerCommand;
use crate::{Engine, EngineError, EnginesConfig, Family};
use std::path::PathBuf;
use std::time::Duration;

/// The worker script every transpiler host runs.
pub const WORKER: &str = "transpile.js";

/// Extra wait beyond a script's timeout for a transpiler worker: the
/// transpile itself runs before the script's own `vm` timeout starts (Babel
/// takes about 0.4 s on its first script, a few ms after).
pub const GRACE: Duration = Duration::from_secs(10);

/// `<DOPPEL_ENGINES_DIR>/transpilers/node_modules`.
pub fn modules(cfg: &EnginesConfig) -> PathBuf {
    cfg.dir.join("transpilers").join("node_modules")
}

/// The version of transpiler package `package` (`@babel/core`), or
/// [`EngineError::NotInstalled`] naming the set-up step.
pub fn package_version(cfg: &EnginesConfig, package: &str) -> Result<String, EngineError> {
    let p = modules(cfg).join(package).join("package.json");
    let text = std::fs::read_to_string(&p).map_err(|_| {
        EngineError::NotInstalled(format!(
            "{package} is missing ({}); run scripts/deps/setup-transpilers.sh (installs into DOPPEL_ENGINES_DIR={})",
            p.display(),
            cfg.dir.display()
        ))
    })?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| EngineError::NotInstalled(format!("{}: {e}", p.display())))?;
    v["version"]
        .as_str()
        .map(String::from)
        .ok_or_else(|| EngineError::NotInstalled(format!("{}: no version", p.display())))
}

/// What a transpiler host file gives [`host`].
pub struct Transpiler {
    /// Registry name and the worker's first argument (`babel`).
    pub name: &'static str,
    /// Its family.
    pub family: Family,
    /// The npm package whose version is the transpiler's (`@babel/core`).
    pub package: &'static str,
    /// The target it lowers to (`ES5 (ie 11)`), for `doppel engines`.
    pub target: &'static str,
}

/// The transpiler's version line: `<version>, target <target>; node <version>`.
///
/// Errors: the package or node is missing ([`EngineError::NotInstalled`]).
pub fn probe(cfg: &EnginesConfig, t: &Transpiler) -> Result<String, EngineError> {
    let version = package_version(cfg, t.package)?;
    super::engine::node()?;
    Ok(format!("{} {version}, target {}", t.package, t.target))
}

/// Creates the transpiler host: a node worker running [`WORKER`].
///
/// Errors: as [`probe`].
pub fn host(cfg: &EnginesConfig, t: &Transpiler) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg, t)?;
    let node = super::engine::node()?;
    let modules = modules(cfg).to_string_lossy().into_owned();
    let mut cmd = WorkerCommand::new(node, &[&super::engine::worker_file(cfg, WORKER), t.name, &modules]);
    cmd.own_timeout = true;
    cmd.grace = GRACE;
    let mode = format!(
        "worker: transpile to {}, then vm.createContext() per script in node's V8",
        t.target
    );
    Ok(super::engine::hosted(
        cfg,
        t.name,
        t.family,
        version,
        &mode,
        Launch::Worker(cmd),
    ))
}

/// The shell words that print file `input` transpiled by transpiler `name`
/// (`node <workers>/transpile.js <name> <modules> --emit <input>`), for reproducers.
pub fn emit_command(cfg: &EnginesConfig, name: &str, input: &str) -> Vec<String> {
    vec![
        "node".into(),
        super::engine::worker_file(cfg, WORKER),
        name.into(),
        modules(cfg).to_string_lossy().into_owned(),
        "--emit".into(),
        input.into(),
    ]
}

/// Transpiles file `input` with transpiler `name` once (a node process
/// killed at `timeout`): the transpiled text (at most 64 KiB, the probe
/// cap), or why not (the transpiler's message, a timeout, node missing).
pub fn transpile_file(
    cfg: &EnginesConfig,
    name: &str,
    input: &std::path::Path,
    timeout: Duration,
) -> Result<String, String> {
    let node = super::engine::node().map_err(|e| e.to_string())?;
    let words = emit_command(cfg, name, &input.to_string_lossy());
    let out = crate::config::output_within(std::process::Command::new(node).args(&words[1..]), timeout)
        .map_err(|e| format!("transpiling with {name}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}
