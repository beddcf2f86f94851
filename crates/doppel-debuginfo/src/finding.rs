//! A stored finding read back (the `config` of a finding record, see
//! [`crate::campaign::finding_record`]), and what maintainers need from it:
//! a C-Vise reduction, the compiler x level reproduction matrix, and the
//! bug-report bundle.

use crate::bisect::Culprit;
use crate::bundle::{self, BundleInput, MatrixEntry};
use crate::check::PairVerdict;
use crate::program::Program;
use crate::record::FindingRecord;
use crate::reduce::{self, BARRIER_SOURCE, ReduceSpec, Reduced, WrongClass};
use crate::toolchain::Compiler;
use crate::{CheckVerdict, Reference, augment, probe};
use doppel_core::RunRecord;
use doppel_debuggers::{DebuggerConfig, registry};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// A finding as stored.
#[derive(Debug, Clone)]
pub struct StoredFinding {
    /// The program checked.
    pub program: Program,
    /// Its source text.
    pub source_text: String,
    /// The line-augmented text that was checked (config `augmented_text`),
    /// when the build was augmented; `None` for a plain build.
    pub augmented_text: Option<String>,
    /// The pair and its -O0 reference value.
    pub reference: Reference,
    /// The compiler of the build.
    pub compiler: Compiler,
    /// The optimization level without the dash (`O2`).
    pub level: String,
    /// The debugger that showed the wrong value.
    pub debugger: String,
    /// Lines augmented with the barrier call (empty: the plain build).
    pub augmented: BTreeSet<u32>,
    /// This debugger's check of the pair.
    pub verdict: PairVerdict,
    /// The other debuggers' checks of the same pair on the same binary.
    pub others: Vec<OtherCheck>,
    /// Who the wrong value points at (`compiler`, `debugger`, ...; empty when
    /// the record lacks it).
    pub suspect: String,
    /// The bisected culprit, when bisected.
    pub culprit: Option<Culprit>,
    /// The class key.
    pub class: String,
    /// The C-Vise reduction, once `doppel debuginfo reduce` ran.
    pub reduced: Option<ReducedText>,
}

/// Another debugger's check of a finding's pair on the same binary.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OtherCheck {
    /// The debugger.
    pub debugger: String,
    /// Its check.
    pub verdict: PairVerdict,
}

/// A kept reduction: the reduced `a.c` (with its single marker comment
/// [`reduce::MARKER`] at s) and how it was made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReducedText {
    /// The reduced `a.c`.
    pub text: String,
    /// s in the reduced program (1-based; the marker's line).
    pub line: u32,
    /// How the reduction went (sizes, time, whether it was verified).
    pub summary: Reduced,
}

impl StoredFinding {
    /// Reads a finding record.
    ///
    /// Errors: the record is not a debuginfo finding, or lacks a field.
    pub fn from_record(r: &RunRecord) -> Result<StoredFinding, String> {
        if r.technique != crate::campaign::TECHNIQUE || r.config["kind"].as_str() != Some("finding") {
            return Err(format!(
                "run {} is not a debug-information finding (technique {}, kind {})",
                r.id.unwrap_or(0),
                r.technique,
                r.config["kind"]
            ));
        }
        let f = FindingRecord::from_value(&r.config).map_err(|e| format!("run {}: {e}", r.id.unwrap_or(0)))?;
        Ok(StoredFinding::new(r, f))
    }

    /// A finding from its stored record `f` and its run `r` (for the class
    /// key).
    pub fn new(r: &RunRecord, f: FindingRecord) -> StoredFinding {
        StoredFinding {
            program: f.program,
            source_text: f.source_text,
            augmented_text: f.augmented_text,
            reference: f.reference,
            compiler: f.compiler,
            level: f.level,
            debugger: f.debugger_name,
            augmented: f.augmented.into_iter().collect(),
            verdict: f.verdict,
            others: f.others,
            suspect: f.suspect.map(|s| s.as_str().to_string()).unwrap_or_default(),
            culprit: f.culprit,
            class: r.verdict.finding().map(|f| f.class.to_string()).unwrap_or_default(),
            reduced: f.reduced,
        }
    }

    /// The wrong value shown.
    pub fn actual(&self) -> String {
        match &self.verdict.verdict {
            CheckVerdict::WrongValue { actual, .. } => actual.clone(),
            other => other.to_string(),
        }
    }

    /// The program exactly as it was checked (the augmented text for an
    /// augmented build, else the source) with the comment [`reduce::MARKER`]
    /// at column 1 of s: the starting point of a reduction and the line every
    /// reproducer breaks at. The comment changes no code and no line number
    /// (a barrier call at s would change code generation and can make the
    /// finding vanish).
    ///
    /// Errors: the text has no line s, or holds a marker already.
    pub fn marked_source(&self) -> Result<String, String> {
        let text = self.checked_text();
        reduce::mark_line(&text, self.reference.pair.line).ok_or_else(|| {
            format!(
                "cannot mark line {} of the program: no such line, or {} already in it",
                self.reference.pair.line,
                reduce::MARKER
            )
        })
    }

    /// The text the finding was checked on: `augmented_text` when the build
    /// was augmented (rebuilt from `source_text` and the augmented lines for
    /// a record without it), else `source_text`.
    pub fn checked_text(&self) -> Cow<'_, str> {
        if self.augmented.is_empty() {
            return Cow::Borrowed(&self.source_text);
        }
        match &self.augmented_text {
            Some(t) => Cow::Borrowed(t),
            None if self.is_rust() => Cow::Owned(augment::augment_rust(&self.source_text, &self.augmented)),
            None => Cow::Owned(augment::augment(&self.source_text, &self.augmented)),
        }
    }

    /// Whether the program is Rust (built by rustc).
    pub fn is_rust(&self) -> bool {
        self.compiler.family == crate::toolchain::Family::Rustc
    }

    /// The reduction spec: the same wrong value in the same compiler, level
    /// and debugger, and the same culprit when one was bisected.
    pub fn reduce_spec(&self) -> ReduceSpec {
        let mut spec = ReduceSpec::new(
            &self.reference.pair.variable.name,
            self.reference.pair.variable.kind.clone(),
            &self.reference.value,
            WrongClass::Same { actual: self.actual() },
            &self.compiler.name,
            &self.level,
            &self.debugger,
        );
        if let Some(c) = &self.culprit {
            spec.culprit = c.pass.clone().filter(|p| p != crate::bisect::NOT_BISECTABLE);
            spec.culprit_flags = c.flags.clone();
        }
        spec
    }
}

/// Reduces finding `f` with C-Vise into `out_dir` within `budget`,
/// starting from [`StoredFinding::marked_source`].
///
/// Errors: as [`StoredFinding::marked_source`] and [`reduce::reduce`],
/// notably when the marked program no longer shows the wrong value.
pub async fn reduce_finding(
    f: &StoredFinding,
    out_dir: &Path,
    budget: Duration,
    doppel_exe: &Path,
) -> Result<ReducedText, String> {
    if f.is_rust() {
        return Err(
            "reduction is for C programs (its interestingness test builds with gcc or clang and runs the C \
             sanitizers); Rust findings are reported with the whole program"
                .into(),
        );
    }
    std::fs::create_dir_all(out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let start = out_dir.join("original");
    std::fs::create_dir_all(&start).map_err(|e| e.to_string())?;
    let source = start.join("a.c");
    let barrier = start.join("opt_me_not.c");
    std::fs::write(&source, f.marked_source()?).map_err(|e| e.to_string())?;
    std::fs::write(&barrier, BARRIER_SOURCE).map_err(|e| e.to_string())?;
    let summary = reduce::reduce(&f.reduce_spec(), &source, &barrier, doppel_exe, out_dir, budget).await?;
    let text = std::fs::read_to_string(&summary.path).map_err(|e| e.to_string())?;
    Ok(ReducedText {
        line: summary.marker_line,
        text,
        summary,
    })
}

/// The reproduction matrix of a marked program (one [`reduce::MARKER`] at
/// the pair's line; the barrier unit linked as its own translation unit):
/// the pair checked with `debugger` in every compiler of `compilers` at
/// every level of `levels`; a compiler that is not installed has `not_hit`
/// cells that say so.
pub async fn matrix(
    marked: &str,
    reference: &Reference,
    debugger: &str,
    compilers: &[&str],
    levels: &[&str],
    debugger_config: &DebuggerConfig,
) -> Result<Vec<MatrixEntry>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let source = dir.path().join("a.c");
    let barrier = dir.path().join("opt_me_not.c");
    std::fs::write(&source, marked).map_err(|e| e.to_string())?;
    std::fs::write(&barrier, BARRIER_SOURCE).map_err(|e| e.to_string())?;
    let line = reduce::marker_line(marked).ok_or(format!("the program has no single marker {}", reduce::MARKER))?;
    let mut reference = reference.clone();
    reference.pair.line = line;
    let mut dbg = registry::create(debugger, debugger_config).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for name in compilers {
        let compiler = match Compiler::discover(name).await {
            Ok(c) => c,
            Err(e) => {
                // Shown in the matrix as a cell nobody could check, not left out.
                for level in levels {
                    out.push(MatrixEntry {
                        compiler: name.to_string(),
                        level: level.to_string(),
                        verdict: CheckVerdict::NotHit {
                            detail: format!("{name} is not available: {e}"),
                        },
                    });
                }
                continue;
            }
        };
        for level in levels {
            let bin = format!("{}-{level}", compiler.tag());
            let verdict = match probe::build(&compiler, level, &[], (&source, &barrier), dir.path(), &bin).await {
                Ok(subject) => probe::first_verdict(dbg.as_mut(), &subject, &reference).await,
                Err(e) => CheckVerdict::NotHit { detail: e },
            };
            out.push(MatrixEntry {
                compiler: compiler.tag(),
                level: level.to_string(),
                verdict,
            });
        }
    }
    dbg.shutdown().await;
    Ok(out)
}

/// The reproduction matrix of a marked Rust program: the pair checked with
/// `debugger` in the builds of `rustc` at every level of `levels` (rustc
/// is the only Rust compiler; its builds as in [`crate::rust::RustBuilder`]).
///
/// Errors: no marker, or the debugger cannot be created.
pub async fn rust_matrix(
    marked: &str,
    reference: &Reference,
    debugger: &str,
    rustc: &Compiler,
    levels: &[&str],
    debugger_config: &DebuggerConfig,
) -> Result<Vec<MatrixEntry>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let source = dir.path().join("main.rs");
    std::fs::write(&source, marked).map_err(|e| e.to_string())?;
    let program = Program::from_file("main.rs", &source)?;
    let line = reduce::marker_line(marked).ok_or(format!("the program has no single marker {}", reduce::MARKER))?;
    let mut reference = reference.clone();
    reference.pair.line = line;
    let builder = crate::rust::RustBuilder::new(dir.path().join("builds"));
    let compiler = Compiler::discover(&rustc.name).await.unwrap_or_else(|_| rustc.clone());
    let mut dbg = registry::create(debugger, debugger_config).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for level in levels {
        let verdict = match builder.build(&program, &compiler, level, &[], &BTreeSet::new()).await {
            Ok((subject, _)) => probe::first_verdict(dbg.as_mut(), &subject, &reference).await,
            Err(e) => CheckVerdict::NotHit { detail: e },
        };
        out.push(MatrixEntry {
            compiler: compiler.tag(),
            level: level.to_string(),
            verdict,
        });
    }
    dbg.shutdown().await;
    Ok(out)
}

/// Compilers tried for the matrix (those installed are used).
pub const MATRIX_COMPILERS: [&str; 5] = ["gcc", "clang", "clang-15", "clang-16", "clang-19"];

/// Writes the bug-report bundle of `f` into `dir`: the reduced program when
/// there is one (else [`StoredFinding::marked_source`]), with its
/// matrix over [`MATRIX_COMPILERS`] x the five levels.
///
/// Errors: the matrix or the bundle cannot be written.
pub async fn write_bundle(
    f: &StoredFinding,
    findings_in_class: u32,
    dir: &Path,
    debugger_config: &DebuggerConfig,
) -> Result<(), String> {
    let (source, reduced) = match &f.reduced {
        Some(r) => (r.text.clone(), true),
        None => (f.marked_source()?, false),
    };
    let line = reduce::marker_line(&source).unwrap_or(f.reference.pair.line);
    let levels: Vec<&str> = crate::LEVELS.to_vec();
    let matrix = if f.is_rust() {
        rust_matrix(
            &source,
            &f.reference,
            &f.debugger,
            &f.compiler,
            &levels,
            debugger_config,
        )
        .await?
    } else {
        matrix(
            &source,
            &f.reference,
            &f.debugger,
            &MATRIX_COMPILERS,
            &levels,
            debugger_config,
        )
        .await?
    };
    let input = BundleInput {
        class: f.class.clone(),
        findings: findings_in_class,
        source,
        reduced,
        barrier_source: if f.is_rust() {
            crate::rust::BARRIER_SOURCE.to_string()
        } else {
            BARRIER_SOURCE.to_string()
        },
        line,
        variable: f.reference.pair.variable.name.clone(),
        expected: f.reference.value.clone(),
        actual: f.actual(),
        compiler: f.compiler.clone(),
        level: f.level.clone(),
        debugger: f.debugger.clone(),
        gdb: "gdb".into(),
        lldb: bundle::default_lldb(),
        culprit: f.culprit.clone(),
        matrix,
        timeout_secs: 60,
    };
    bundle::write_bundle(&input, dir).await
}
