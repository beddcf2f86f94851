//! Culprit bisection of one wrong value (ARCHITECTURE.md's triage (b)):
//! the program rebuilt with bisection switches and the pair re-checked in
//! the debugger that showed it, through [`crate::bisect`].

use crate::bisect::{self, Culprit, Oracle};
use crate::builder::LevelBuilder;
use crate::record::FindingRecord;
use crate::toolchain::{Compiler, Family};
use crate::{CheckVerdict, Reference};
use doppel_debuggers::Debugger;
use doppel_lang::c::BuildCache;
use std::collections::BTreeSet;
use std::path::Path;

/// Most oracle calls of one GCC flag bisection (each a build and a check).
pub const GCC_MAX_CHECKS: u32 = 60;

/// Bisects the culprit of `reference`'s wrong value in the build of
/// `builder` (its program augmented at `augmented`, its compiler and
/// level): Clang and rustc by `-opt-bisect-limit` (the pass log from
/// [`LevelBuilder::pass_log`]), GCC by turning off the level's `-f` flags
/// (halving, at most [`GCC_MAX_CHECKS`] checks).
///
/// Errors: the wrong value does not reproduce, a build fails, or the pass
/// log cannot be read.
pub async fn bisect_pair(
    builder: &dyn LevelBuilder,
    augmented: &BTreeSet<u32>,
    reference: &Reference,
    debugger: &mut dyn Debugger,
) -> Result<Culprit, String> {
    let compiler = builder.compiler();
    let level = builder.level();
    let mut oracle = RebuildOracle {
        builder,
        augmented,
        reference,
        debugger,
    };
    match compiler.family {
        Family::Clang | Family::Rustc => {
            let log = builder.pass_log(augmented).await?;
            bisect::bisect_llvm(&mut oracle, compiler.family, &log).await
        }
        Family::Gcc => {
            let flags = bisect::gcc_enabled_flags(compiler, level).await?;
            bisect::bisect_gcc(
                &mut oracle,
                &flags,
                bisect::GccStrategy::Halving { max: GCC_MAX_CHECKS },
            )
            .await
        }
    }
}

/// Rebuilds the program with extra flags and re-checks one pair.
struct RebuildOracle<'a> {
    builder: &'a dyn LevelBuilder,
    augmented: &'a BTreeSet<u32>,
    reference: &'a Reference,
    debugger: &'a mut dyn Debugger,
}

#[async_trait::async_trait]
impl Oracle for RebuildOracle<'_> {
    async fn wrong(&mut self, extra_flags: &[String]) -> Result<bool, String> {
        let built = self.builder.build(extra_flags, self.augmented).await;
        let subject = match built {
            Ok((subject, _)) => subject,
            // A bisection switch can crash the compiler (clang 19 segfaults
            // at some -opt-bisect-limit values on Csmith programs): that build
            // shows no wrong value, and the search goes on around it.
            Err(e) if !extra_flags.is_empty() => {
                tracing::warn!(
                    "bisection build with {extra_flags:?} failed: {}",
                    e.lines().last().unwrap_or("")
                );
                return Ok(false);
            }
            Err(e) => return Err(e),
        };
        let session = crate::check::check_binary(self.debugger, &subject, std::slice::from_ref(self.reference)).await;
        Ok(session
            .verdicts
            .first()
            .is_some_and(|v| matches!(v.verdict, CheckVerdict::WrongValue { .. })))
    }
}

/// Bisects the culprit of a stored finding `r` again (or for the first time,
/// for a campaign run with `--no-bisect`) and updates the record: its
/// `config.culprit` and the culprit part of its class signature.
///
/// Errors: `r` is not a wrong-value finding, or its suspect is not the
/// compiler while its campaign bisects compiler suspects only
/// ([`crate::accuracy::wants_culprit`]); the bisection fails.
pub async fn bisect_record(
    r: &mut doppel_core::RunRecord,
    cache_dir: &Path,
    debugger_config: &doppel_debuggers::DebuggerConfig,
) -> Result<Culprit, String> {
    let mut stored = FindingRecord::from_value(&r.config).map_err(|e| format!("run {:?}: {e}", r.id))?;
    if !matches!(stored.verdict.verdict, CheckVerdict::WrongValue { .. }) {
        return Err("only wrong values are bisected".into());
    }
    if let Some(suspect) = stored.suspect
        && !crate::accuracy::wants_culprit(&stored.debuginfo, suspect)
    {
        return Err(format!(
            "the suspect is {suspect}: culprits are bisected for compiler suspects only (a campaign run with \
             --culprits-for-every-suspect bisects them all)"
        ));
    }
    let program = crate::replay::restore_program(r, cache_dir)?;
    let reference = stored.reference.clone();
    let compiler = Compiler::discover(&stored.compiler.name).await?;
    let level = stored.level.clone();
    let debugger = stored.debugger_name.clone();
    let augmented: BTreeSet<u32> = stored.augmented.iter().copied().collect();
    let cache = BuildCache::new(cache_dir.to_path_buf());
    let rust_cache = crate::rust::RustBuilder::new(cache_dir.join("rust"));
    let builder = crate::builder::for_program(&program, &compiler, &level, &cache, &rust_cache);
    let mut dbg = doppel_debuggers::registry::create(&debugger, debugger_config).map_err(|e| e.to_string())?;
    let result = bisect_pair(builder.as_ref(), &augmented, &reference, dbg.as_mut()).await;
    dbg.shutdown().await;
    drop(builder);
    let culprit = result?;
    stored.culprit = Some(culprit.clone());
    r.config = stored.to_value();
    if let doppel_core::Verdict::Divergence(f) = &mut r.verdict
        && let Some(sig) = f.class.part("signature").map(str::to_string)
    {
        // compiler,level,suspect,culprit,kind,debugger
        let mut parts: Vec<String> = sig.split(',').map(str::to_string).collect();
        if parts.len() == 6 {
            parts[3] = culprit.signature().replace([',', '|'], ";");
            f.class.set_part("signature", parts.join(","));
        }
    }
    Ok(culprit)
}
