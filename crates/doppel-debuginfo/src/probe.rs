//! The debugger part of a reduction's interestingness test (`doppel
//! debuginfo probe`, called by the script of [`crate::reduce`]): does a
//! variant `a.c` still show the finding?
//!
//! The line s is the line of the variant's single marker comment
//! [`MARKER`] (C-Vise renumbers lines; see [`crate::reduce::marker_line`]);
//! the variable's kind comes from the scope oracle at s, which also checks
//! that v is in scope there. The variant may call the barrier
//! `opt_me_not()` or not: its unit is always linked. The variant is
//! interesting when, with the barrier as a translation unit of its own:
//! 1. both builds (-O0 and the level) succeed;
//! 2. the -O0 build pauses at s and v shows the reference value;
//! 3. the optimized build pauses at s and v shows a wrong value of the
//!    finding's class (the same value, or any value but the reference;
//!    optimized out and not available are not values);
//! 4. with a culprit pass (Clang), bisection still names it; with culprit
//!    flags (GCC), turning each off still cures the variant.

use crate::bisect::{self, Oracle};
use crate::check::check_binary;
use crate::reduce::{MARKER, WrongClass, marker_position};
use crate::toolchain::{COMMON_FLAGS, Compiler};
use crate::{CheckVerdict, Pair, Reference};
use doppel_core::process::{self, Sandbox};
use doppel_core::{Language, Subject};
use doppel_debuggers::{Debugger, DebuggerConfig, registry};
use doppel_lang::c::clang_scope;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

/// What the probe checks.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    /// The variant (contains exactly one [`MARKER`], at s).
    pub source: PathBuf,
    /// The barrier unit.
    pub barrier: PathBuf,
    /// Variable v.
    pub variable: String,
    /// Compiler name or path.
    pub compiler: String,
    /// Level without the dash.
    pub level: String,
    /// `gdb` or `lldb`.
    pub debugger: String,
    /// The -O0 reference value.
    pub reference: String,
    /// Which wrong values count as the bug.
    pub wrong: WrongClass,
    /// The culprit's signature, when the finding was bisected.
    pub culprit: Option<String>,
    /// The flags that turn the culprit off (added to the build to confirm it).
    pub culprit_flags: Vec<String>,
}

/// Longest compile of a variant.
const COMPILE_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs the probe: `Ok(None)` when the variant is interesting, `Ok(Some(why
/// not))` when it is not, `Err` when the probe itself cannot run (a tool is
/// missing).
pub async fn probe(spec: &ProbeSpec, debugger_config: &DebuggerConfig) -> Result<Option<String>, String> {
    let text =
        std::fs::read_to_string(&spec.source).map_err(|e| format!("cannot read {}: {e}", spec.source.display()))?;
    // The scope oracle numbers physical lines, the debuggers the lines of
    // `#line` directives.
    let Some((physical, line)) = marker_position(&text) else {
        return Ok(Some(format!("{} has no single marker {MARKER}", spec.source.display())));
    };
    let compiler = Compiler::discover(&spec.compiler).await?;
    let scopes = match clang_scope::scopes(
        &spec.source,
        &crate::wellformed::sanitizer_clang(),
        &[PathBuf::from("/usr/include/csmith")],
    )
    .await
    {
        Ok(s) => s,
        Err(e) => return Ok(Some(format!("no scopes: {e}"))),
    };
    let Some(variable) = scopes
        .visible_at(physical)
        .into_iter()
        .find(|v| v.name == spec.variable)
    else {
        return Ok(Some(format!("{} is not in scope at line {line}", spec.variable)));
    };
    let reference = Reference::new(Pair { line, variable }, spec.reference.clone());
    let dir = tempfile::tempdir().map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let mut dbg = registry::create(&spec.debugger, debugger_config).map_err(|e| e.to_string())?;
    let result = async {
        let o0 = match build(&compiler, "O0", &[], (&spec.source, &spec.barrier), dir.path(), "prog0").await {
            Ok(s) => s,
            Err(e) => return Some(e),
        };
        let v = first_verdict(dbg.as_mut(), &o0, &reference).await;
        if v != CheckVerdict::Match {
            return Some(format!("-O0: {v}"));
        }
        let mut oracle = VariantOracle {
            spec,
            compiler: &compiler,
            reference: &reference,
            debugger: dbg.as_mut(),
            dir: dir.path(),
            builds: 0,
        };
        match oracle.wrong(&[]).await {
            Ok(true) => {}
            Ok(false) => return Some(format!("-{}: no wrong value of the class", spec.level)),
            Err(e) => return Some(e),
        }
        if let Some(pass) = &spec.culprit {
            match bisect::bisect_clang(&mut oracle, &compiler, &spec.level, &spec.source, &[]).await {
                Ok(c) if c.pass.as_deref() == Some(pass.as_str()) => {}
                Ok(c) => return Some(format!("the culprit is now {}", c.signature())),
                Err(e) => return Some(format!("bisection: {e}")),
            }
        }
        for f in &spec.culprit_flags {
            match oracle.wrong(&[bisect::negate_flag(f)]).await {
                Ok(false) => {}
                Ok(true) => return Some(format!("{f} is no longer a culprit")),
                Err(e) => return Some(e),
            }
        }
        None
    }
    .await;
    dbg.shutdown().await;
    Ok(result)
}

/// Re-checks the variant at the spec's level with extra flags.
struct VariantOracle<'a> {
    spec: &'a ProbeSpec,
    compiler: &'a Compiler,
    reference: &'a Reference,
    debugger: &'a mut dyn Debugger,
    dir: &'a Path,
    builds: u32,
}

#[async_trait::async_trait]
impl Oracle for VariantOracle<'_> {
    async fn wrong(&mut self, extra_flags: &[String]) -> Result<bool, String> {
        self.builds += 1;
        let name = format!("prog{}", self.builds);
        let subject = build(
            self.compiler,
            &self.spec.level,
            extra_flags,
            (&self.spec.source, &self.spec.barrier),
            self.dir,
            &name,
        )
        .await?;
        Ok(match first_verdict(self.debugger, &subject, self.reference).await {
            CheckVerdict::WrongValue { actual, .. } => match &self.spec.wrong {
                WrongClass::Same { actual: want } => &actual == want,
                WrongClass::Any => true,
            },
            _ => false,
        })
    }
}

pub(crate) async fn first_verdict(dbg: &mut dyn Debugger, subject: &Subject, reference: &Reference) -> CheckVerdict {
    check_binary(dbg, subject, std::slice::from_ref(reference))
        .await
        .verdicts
        .into_iter()
        .next()
        .map(|v| v.verdict)
        .unwrap_or(CheckVerdict::NotHit {
            detail: "no verdict".into(),
        })
}

/// Builds the variant and the barrier into `dir/name`.
pub(crate) async fn build(
    compiler: &Compiler,
    level: &str,
    extra: &[String],
    (source, barrier): (&Path, &Path),
    dir: &Path,
    name: &str,
) -> Result<Subject, String> {
    let given = source;
    let source = std::path::absolute(source).map_err(|e| e.to_string())?;
    let barrier = std::path::absolute(barrier).map_err(|e| e.to_string())?;
    let out = dir.join(name);
    let mut cmd = Command::new(&compiler.path);
    cmd.arg(format!("-{level}"))
        .args(COMMON_FLAGS)
        .args(extra)
        .arg("-o")
        .arg(&out)
        .arg(&source)
        .arg(&barrier);
    let done = process::run(cmd, COMPILE_TIMEOUT, Sandbox::default())
        .await
        .map_err(|e| format!("cannot run {}: {e}", compiler.name))?;
    if done.timed_out || done.code != Some(0) {
        return Err(format!(
            "-{level} build failed: {}",
            done.stderr.lines().next().unwrap_or("timeout")
        ));
    }
    let text = std::fs::read_to_string(&source).unwrap_or_default();
    Ok(Subject {
        name: given.display().to_string(),
        language: Language::C,
        source_name: source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        source,
        line_count: text.lines().count() as u32,
        binary: Some(out),
        prelude: Vec::new(),
        epilogue: Vec::new(),
        hash: String::new(),
        build: format!("{} -{level}", compiler.name),
    })
}
