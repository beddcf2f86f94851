//! JavaScript engine drivers: one [`Engine`] trait, long-lived JSON-lines
//! worker processes with a fresh realm per script, one-process-per-script
//! shells for engines without one, feature probes, and engine262 as the
//! executable specification with semantics coverage (JEST, ICSE 2021, §III).
//!
//! Layout (an engine is one file in `engine/` plus one line in [`registry`]):
//! - `outcome.rs`: [`Outcome`], [`RunResult`], [`Script`], [`RunOptions`];
//! - `wire.rs`: the JSON-lines protocol (ASCII-only lines);
//! - `worker.rs`: a long-lived worker: timeouts, kill and respawn, crash and garbage detection;
//! - `oneshot.rs`: one shell process per script;
//! - `features.rs`: the ES2015..ES2025 feature probe and its cache;
//! - `hosted.rs`: the [`Engine`] implementation every registry engine shares;
//! - `config.rs`: where the installed engines are (`DOPPEL_ENGINES_DIR`);
//! - `engine/*.rs`: one host per engine build; `engine/engine262.rs` adds coverage;
//!   `engine/{babel,swc,esbuild,typescript}.rs`: transpilers as tools under test;
//! - `transpile.rs`: what the transpiler hosts share (worker command, one-off transpile for reproducers);
//! - `coverage.rs`: engine262 semantics coverage: catalogue and per-program sets;
//! - `workers/` (beside `src/`): the worker scripts the engines run.
//!
//! No technique-level logic lives here: voting, assertion injection and
//! localization use these plain serde results.
#![deny(missing_docs)]

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub mod config;
pub mod coverage;
pub mod engine;
pub mod features;
pub mod hosted;
pub mod oneshot;
pub mod outcome;
pub mod registry;
pub mod transpile;
pub mod wire;
pub mod worker;

pub use config::EnginesConfig;
pub use features::FeatureSet;
pub use outcome::{Outcome, RunOptions, RunResult, Script};

/// An engine family: builds of one family share code and bugs (V8 11 and 14
/// fail the same test262 tests), so they vote as one (JEST §III-E; notes §5.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Google's V8 (node, mini-racer).
    V8,
    /// Mozilla's SpiderMonkey (js102, PythonMonkey).
    SpiderMonkey,
    /// WebKit's JavaScriptCore.
    JavaScriptCore,
    /// Bellard's QuickJS and its quickjs-ng fork.
    QuickJs,
    /// Boa (Rust).
    Boa,
    /// Meta's Hermes.
    Hermes,
    /// Duktape.
    Duktape,
    /// NGINX JavaScript.
    Njs,
    /// Artifex mujs.
    Mujs,
    /// Mozilla Rhino (JVM).
    Rhino,
    /// engine262, the executable specification ("+1"); never votes as an engine.
    Engine262,
    /// Babel with `@babel/preset-env` (a transpiler: V8 runs its output; issue 15 part 7c).
    Babel,
    /// SWC (a transpiler, target ES5).
    Swc,
    /// esbuild (a transpiler, target ES2015: it refuses to lower classes,
    /// arrows, destructuring and more to ES5).
    Esbuild,
    /// TypeScript's `transpileModule` (a transpiler, target ES5).
    TypeScript,
}

impl Family {
    /// Whether this family is a transpiler (its builds transpile a script to
    /// an older target and run the result in node's V8, JEST-FS, PLDI 2023):
    /// transpilers never vote with the engines; each is judged against
    /// engine262 and against the untranspiled `v8-node` host.
    pub fn is_transpiler(self) -> bool {
        matches!(self, Family::Babel | Family::Swc | Family::Esbuild | Family::TypeScript)
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = serde_json::to_value(self).ok();
        f.write_str(s.as_ref().and_then(|v| v.as_str()).unwrap_or("?"))
    }
}

/// What an engine is: shown by `doppel engines`, stored with results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineInfo {
    /// Registry name (`jsc`, `v8-mini-racer`).
    pub name: String,
    /// Family it votes with.
    pub family: Family,
    /// Exact version of the engine build or the package pinning it.
    pub version: String,
    /// How it is run (`worker: $262.createRealm() per script`).
    pub mode: String,
}

/// Why an engine cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Not installed, with what is missing and how to install it.
    #[error("not installed: {0}")]
    NotInstalled(String),
    /// No engine of that name is registered.
    #[error("unknown engine {0:?} (known: {1})")]
    Unknown(String, String),
    /// The feature probe did not finish.
    #[error("feature probe failed: {0}")]
    Probe(String),
}

/// A JavaScript engine that runs one script at a time, each in a fresh realm.
/// Every call returns within the script's timeout plus a bounded grace period.
#[async_trait]
pub trait Engine: Send {
    /// Name, family, version and mode.
    fn info(&self) -> &EngineInfo;

    /// Runs `source` as a classic Script in a fresh realm with `print`
    /// bound, without the feature gate.
    async fn run_unchecked(&mut self, source: &str, opts: &RunOptions) -> RunResult;

    /// The engine's features, measured by [`features::probe_script`] and
    /// cached per engine version. Errors: the probe did not complete.
    async fn features(&mut self) -> Result<FeatureSet, EngineError>;

    /// Runs `script`: [`Outcome::Unsupported`] (without running) when it needs a
    /// feature this engine lacks, else [`Engine::run_unchecked`].
    async fn run(&mut self, script: &Script, opts: &RunOptions) -> RunResult {
        if !script.features.is_empty() {
            let lacking = match self.features().await {
                Ok(set) => set.lacking(&script.features),
                Err(e) => {
                    return RunResult {
                        outcome: Outcome::HostError { reason: e.to_string() },
                        output: String::new(),
                        output_cut: false,
                        millis: 0,
                    };
                }
            };
            if !lacking.is_empty() {
                return RunResult {
                    outcome: Outcome::Unsupported { features: lacking },
                    output: String::new(),
                    output_cut: false,
                    millis: 0,
                };
            }
        }
        self.run_unchecked(&script.source, opts).await
    }

    /// Ends the engine's processes (also done on drop).
    async fn shutdown(&mut self);
}
