//! Duktape 2.7 (`duk`, Debian `duktape`), ES5-level, one process per script:
//! exit 1 and the error's `Name: message` (or the thrown primitive) first on stderr.

use super::{hosted, on_path};
use crate::hosted::Launch;
use crate::oneshot::{Finished, OneShotCommand, exception_from_text};
use crate::registry::{EngineEntry, HostTraits};
use crate::{Engine, EngineError, EnginesConfig, Family, Outcome};
use doppel_core::process::Limits;

const DEBIAN: &str = "duktape";

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "duktape",
        family: Family::Duktape,
        about: "Duktape `duk`, Debian duktape (ES5), a process per script",
        traits: HostTraits::MESSAGE_ONLY,
        probe,
        create,
    }
}

fn probe(_cfg: &EnginesConfig) -> Result<String, EngineError> {
    on_path("duk", DEBIAN)?;
    Ok(crate::config::debian_version(DEBIAN).unwrap_or_else(|| "unknown".into()))
}

fn classify(f: &Finished) -> (Outcome, String) {
    let outcome = match f.code {
        Some(0) => Outcome::Normal,
        _ => exception_from_text(f.stderr.lines().next().unwrap_or("")),
    };
    (outcome, f.stdout.clone())
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let cmd = OneShotCommand {
        program: on_path("duk", DEBIAN)?,
        args: vec![],
        args_after: vec![],
        classify,
        limits: Some(Limits::default()),
    };
    Ok(hosted(
        cfg,
        "duktape",
        Family::Duktape,
        version,
        "a process per script",
        Launch::OneShot(cmd),
    ))
}
