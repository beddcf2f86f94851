//! Rhino 1.7 (Mozilla, JVM; Debian `rhino`) with `-version 200` (ES6 mode),
//! one process per script (a JVM start each, 0.3–1 s): exit 3 and
//! `js: uncaught JavaScript runtime exception: Name: message`, or
//! `js: "file", line N: exception from uncaught JavaScript throw: value`, or
//! `js: "file", line N: syntax error` on stderr.

use super::{hosted, on_path};
use crate::hosted::Launch;
use crate::oneshot::{Finished, OneShotCommand, exception_from_text};
use crate::registry::{EngineEntry, HostTraits};
use crate::{Engine, EngineError, EnginesConfig, Family, Outcome};
use doppel_core::process::Limits;

const DEBIAN: &str = "rhino";

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "rhino",
        family: Family::Rhino,
        about: "Rhino `rhino -version 200`, Debian rhino (JVM, ES5+), a process per script",
        traits: HostTraits::MESSAGE_ONLY,
        probe,
        create,
    }
}

fn probe(_cfg: &EnginesConfig) -> Result<String, EngineError> {
    on_path("rhino", DEBIAN)?;
    Ok(crate::config::debian_version(DEBIAN).unwrap_or_else(|| "unknown".into()))
}

fn classify(f: &Finished) -> (Outcome, String) {
    let outcome = match f.code {
        Some(0) => Outcome::Normal,
        _ => {
            let first = f.stderr.lines().next().unwrap_or("");
            if let Some((_, rest)) = first.split_once("uncaught JavaScript runtime exception: ") {
                exception_from_text(rest)
            } else if let Some((_, rest)) = first.split_once("exception from uncaught JavaScript throw: ") {
                exception_from_text(rest)
            } else if first.contains(": syntax error") {
                Outcome::Exception {
                    constructor: Some("SyntaxError".into()),
                    message: Some(first.to_string()),
                }
            } else {
                // `js: "file", line N: Name: message`: drop the location.
                let rest = first.trim_start_matches("js: ");
                let rest = match rest.split_once(": ") {
                    Some((loc, msg)) if loc.starts_with('"') && loc.contains(", line ") => msg,
                    _ => rest,
                };
                exception_from_text(rest)
            }
        }
    };
    (outcome, f.stdout.clone())
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let cmd = OneShotCommand {
        program: on_path("rhino", DEBIAN)?,
        args: vec!["-version".into(), "200".into()],
        args_after: vec![],
        classify,
        limits: Some(Limits::default().without_memory_limit()),
    };
    Ok(hosted(
        cfg,
        "rhino",
        Family::Rhino,
        version,
        "a process per script (JVM)",
        Launch::OneShot(cmd),
    ))
}
