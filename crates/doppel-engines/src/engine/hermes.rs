//! Hermes 0.12 (npm `hermes-engine-cli`, a 2022 static binary), one process
//! per script (no embedding API from the CLI). Runtime throws: exit 1 and
//! `Uncaught Name: message` on stderr; compile errors: exit 2. ES5-level with
//! gaps (no classes; `let a; let a;` runs, notes §5.11).

use super::hosted;
use crate::hosted::Launch;
use crate::oneshot::{Finished, OneShotCommand, exception_from_text};
use crate::registry::{EngineEntry, HostTraits};
use crate::{Engine, EngineError, EnginesConfig, Family, Outcome};
use doppel_core::process::Limits;

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: "hermes",
        family: Family::Hermes,
        about: "Hermes 0.12 via npm hermes-engine-cli (js/package.json), a process per script",
        traits: HostTraits::MESSAGE_ONLY,
        probe,
        create,
    }
}

fn probe(cfg: &EnginesConfig) -> Result<String, EngineError> {
    super::node()?;
    let v = cfg
        .npm_version("hermes-engine-cli")
        .map_err(|e| EngineError::NotInstalled(format!("{e}; {}", cfg.setup_hint())))?;
    Ok(v)
}

fn classify(f: &Finished) -> (Outcome, String) {
    let outcome = match f.code {
        Some(0) => Outcome::Normal,
        Some(2) => Outcome::Exception {
            constructor: Some("SyntaxError".into()),
            message: f.stderr.lines().next().map(|l| l.trim().to_string()),
        },
        _ => {
            let first = f.stderr.lines().next().unwrap_or("");
            match first.strip_prefix("Uncaught ") {
                Some(rest) if !rest.starts_with("exception thrown while") => exception_from_text(rest),
                _ => Outcome::Exception {
                    constructor: None,
                    message: Some(first.to_string()),
                },
            }
        }
    };
    (outcome, f.stdout.clone())
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    let version = probe(cfg)?;
    let program = cfg.npm_package("hermes-engine-cli").join("linux64-bin").join("hermes");
    let cmd = OneShotCommand {
        program,
        args: vec![],
        args_after: vec![],
        classify,
        // Hermes reserves its GC heap's address space up front: no RLIMIT_AS.
        limits: Some(Limits::default().without_memory_limit()),
    };
    Ok(hosted(
        cfg,
        "hermes",
        Family::Hermes,
        version,
        "a process per script",
        Launch::OneShot(cmd),
    ))
}
