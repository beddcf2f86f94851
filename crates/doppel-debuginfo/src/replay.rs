//! Replaying a stored finding: the program rebuilt from the stored text
//! with the stored compiler, level and augmentation, the pair checked again
//! in the stored debugger.

use crate::check::{self, PairVerdict};
use crate::program::Program;
use crate::toolchain::Compiler;
use crate::{CheckVerdict, Reference};
use doppel_core::RunRecord;
use doppel_debuggers::{DebuggerConfig, registry};
use doppel_lang::c::BuildCache;
use std::path::Path;

/// What a replay found.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The check of the stored pair in the rebuilt binary.
    pub verdict: PairVerdict,
    /// The compiler's version now, when it differs from the stored one.
    pub version_changed: Option<String>,
}

impl Replayed {
    /// Whether the replay shows the stored finding again: the same verdict
    /// kind and, for a wrong value, the same wrong value.
    pub fn reproduces(&self, stored: &CheckVerdict) -> bool {
        match (stored, &self.verdict.verdict) {
            (CheckVerdict::WrongValue { actual: a, .. }, CheckVerdict::WrongValue { actual: b, .. }) => a == b,
            (a, b) => a.name() == b.name(),
        }
    }
}

/// The stored verdict of a finding record.
///
/// Errors: the record is not a debug-information finding.
pub fn stored_verdict(r: &RunRecord) -> Result<CheckVerdict, String> {
    let v: PairVerdict = serde_json::from_value(r.config["verdict"].clone())
        .map_err(|e| format!("run {:?} is not a debuginfo finding: {e}", r.id))?;
    Ok(v.verdict)
}

/// Replays finding `r` once, building under `cache_dir`.
///
/// Errors: the record lacks a field, the compiler is gone, the program does
/// not build any more.
pub async fn replay(r: &RunRecord, cache_dir: &Path, debugger_config: &DebuggerConfig) -> Result<Replayed, String> {
    let c = &r.config;
    if c["kind"].as_str() != Some("finding") {
        return Err("only debuginfo findings can be replayed (this is a session or program record)".into());
    }
    let program = restore_program(r, cache_dir)?;
    let reference: Reference =
        serde_json::from_value(c["reference"].clone()).map_err(|e| format!("no reference: {e}"))?;
    let was: Compiler = serde_json::from_value(c["compiler"].clone()).map_err(|e| format!("no compiler: {e}"))?;
    let level = c["level"].as_str().ok_or("no level")?;
    let debugger = c["debugger_name"].as_str().ok_or("no debugger")?;
    let compiler = Compiler::discover(&was.name).await?;
    let version_changed = (compiler.version != was.version).then(|| compiler.version.clone());
    let cache = BuildCache::new(cache_dir.to_path_buf());
    let augmented: std::collections::BTreeSet<u32> =
        serde_json::from_value(c["augmented"].clone()).map_err(|e| format!("no augmented lines: {e}"))?;
    let rust_cache = crate::rust::RustBuilder::new(cache_dir.join("rust"));
    let builder = crate::builder::for_program(&program, &compiler, level, &cache, &rust_cache);
    let (subject, _) = builder.build(&[], &augmented).await?;
    let mut dbg = registry::create(debugger, debugger_config).map_err(|e| e.to_string())?;
    let session = check::check_binary(dbg.as_mut(), &subject, std::slice::from_ref(&reference)).await;
    dbg.shutdown().await;
    let verdict = session.verdicts.into_iter().next().ok_or("no verdict")?;
    Ok(Replayed {
        verdict,
        version_changed,
    })
}

/// The program of a finding record, written back from its stored text to
/// `<cache_dir>/replay/<hash>/<file name>` (same name, so breakpoints and
/// line tables name it alike).
///
/// Errors: the record lacks the program or its text; the file cannot be written.
pub fn restore_program(r: &RunRecord, cache_dir: &Path) -> Result<Program, String> {
    let c = &r.config;
    let stored: Program = serde_json::from_value(c["program"].clone()).map_err(|e| format!("no program: {e}"))?;
    let text = c["source_text"].as_str().ok_or("no source text")?;
    let dir = cache_dir.join("replay").join(&stored.hash[..16]);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot write {}: {e}", dir.display()))?;
    let path = dir.join(stored.file_name());
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut program = Program::from_file(&stored.name, &path)?;
    program.csmith = stored.csmith;
    Ok(program)
}
