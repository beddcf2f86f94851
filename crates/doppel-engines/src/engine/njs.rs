//! njs 0.7 (NGINX JavaScript, Debian `njs`), ES5-level with some later
//! syntax, one process per script: exit 1, `Thrown:` then the error text on
//! stderr. Own keys are not in insertion order (notes §5.11).

use super::{hosted, on_path};
use crate::hosted::Launch;
use crate::oneshot::{Finished, OneShotCommand, exception_from_text};
use crate::registry::{EngineEntry, HostTraits};
use crate::{Engine, EngineError, EnginesConfig, Family, Outcome};
use doppel_core::process::Limits;

const DEBIAN: &str = "njs";

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "njs",
        family: Family::Njs,
        about: "njs, Debian njs (ES5+), a process per script",
        traits: HostTraits::MESSAGE_ONLY,
        probe,
        create,
    }
}

fn probe(_cfg: &EnginesConfig) -> Result<String, EngineError> {
    on_path("njs", DEBIAN)?;
    Ok(crate::config::debian_version(DEBIAN).unwrap_or_else(|| "unknown".into()))
}

fn classify(f: &Finished) -> (Outcome, String) {
    let outcome = match f.code {
        Some(0) => Outcome::Normal,
        _ => {
            let mut lines = f.stderr.lines().skip_while(|l| l.trim() == "Thrown:");
            exception_from_text(lines.next().unwrap_or(""))
        }
    };
    (outcome, f.stdout.clone())
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let cmd = OneShotCommand {
        program: on_path("njs", DEBIAN)?,
        args: vec![],
        args_after: vec![],
        classify,
        limits: Some(Limits::default()),
    };
    Ok(hosted(
        cfg,
        "njs",
        Family::Njs,
        version,
        "a process per script",
        Launch::OneShot(cmd),
    ))
}
