//! mujs 1.3 (Artifex, Debian `mujs`), ES5, one process per script: exit 1 and
//! the error's `Name: message` (or the thrown primitive) first on stderr.

use super::{hosted, on_path};
use crate::hosted::Launch;
use crate::oneshot::{Finished, OneShotCommand, exception_from_text};
use crate::registry::{EngineEntry, HostTraits};
use crate::{Engine, EngineError, EnginesConfig, Family, Outcome};
use doppel_core::process::Limits;

const DEBIAN: &str = "mujs";

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "mujs",
        family: Family::Mujs,
        about: "mujs, Debian mujs (ES5), a process per script",
        traits: HostTraits::MESSAGE_ONLY,
        probe,
        create,
    }
}

fn probe(_cfg: &EnginesConfig) -> Result<String, EngineError> {
    on_path("mujs", DEBIAN)?;
    Ok(crate::config::debian_version(DEBIAN).unwrap_or_else(|| "unknown".into()))
}

fn classify(f: &Finished) -> (Outcome, String) {
    let outcome = match f.code {
        Some(0) => Outcome::Normal,
        _ => {
            let first = f.stderr.lines().next().unwrap_or("");
            // "SyntaxError: /tmp/x/test.js:1: message": drop the location.
            match first.split_once(": ") {
                Some((name, rest)) if name == "SyntaxError" => Outcome::Exception {
                    constructor: Some(name.into()),
                    message: Some(rest.rsplit_once(": ").map_or(rest, |(_, m)| m).to_string()),
                },
                _ => exception_from_text(first),
            }
        }
    };
    (outcome, f.stdout.clone())
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let cmd = OneShotCommand {
        program: on_path("mujs", DEBIAN)?,
        args: vec![],
        args_after: vec![],
        classify,
        limits: Some(Limits::default()),
    };
    Ok(hosted(
        cfg,
        "mujs",
        Family::Mujs,
        version,
        "a process per script",
        Launch::OneShot(cmd),
    ))
}
