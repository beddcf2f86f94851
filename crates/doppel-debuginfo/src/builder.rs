//! How one program is built at one (compiler, level): the seam between the
//! language-independent steps of debug-information validation (checking
//! with line augmentation, [`crate::program::check_level_with`]; culprit
//! bisection, [`crate::culprit`]; replay) and the per-language builds: C
//! ([`CLevel`], gcc or clang into a [`BuildCache`]) and Rust
//! ([`crate::rust::RustLevel`], rustc with the barrier crate).

use crate::bisect::{self, PassRun};
use crate::program::{self, Program};
use crate::rust::{RustBuilder, RustLevel};
use crate::toolchain::{Compiler, Family};
use async_trait::async_trait;
use doppel_core::Subject;
use doppel_lang::c::BuildCache;
use std::collections::BTreeSet;

/// Builds one program with one compiler at one level.
#[async_trait]
pub trait LevelBuilder: Send + Sync {
    /// The compiler.
    fn compiler(&self) -> &Compiler;

    /// The level (`O2`, `Og`).
    fn level(&self) -> &str;

    /// Builds the program with `extra` flags after the level's (bisection
    /// switches) and the barrier call before each line of `augmented`
    /// (PLDI'20 section 4.3; empty: the program as it is). Returns the
    /// subject and the recipe a maintainer can rerun.
    ///
    /// Errors: the build fails (with the compiler's diagnostics).
    async fn build(&self, extra: &[String], augmented: &BTreeSet<u32>) -> Result<(Subject, String), String>;

    /// Whether line augmentation can put the barrier before 1-based `line`
    /// (C pairs are on statement starts already; Rust lines are checked).
    fn augmentable(&self, line: u32) -> bool;

    /// LLVM's pass log of the full pipeline on the (augmented) program, for
    /// [`bisect::bisect_llvm`].
    ///
    /// Errors: the compiler is not LLVM-based, or the build fails.
    async fn pass_log(&self, augmented: &BTreeSet<u32>) -> Result<Vec<PassRun>, String>;
}

/// A C program built by gcc or clang into a [`BuildCache`].
pub struct CLevel<'a> {
    /// The program to build.
    pub program: &'a Program,
    /// The compiler under test.
    pub compiler: &'a Compiler,
    /// The optimization level without the dash (`O2`).
    pub level: &'a str,
    /// Where builds are kept (keyed by source, compiler and flags).
    pub cache: &'a BuildCache,
}

#[async_trait]
impl LevelBuilder for CLevel<'_> {
    fn compiler(&self) -> &Compiler {
        self.compiler
    }

    fn level(&self) -> &str {
        self.level
    }

    async fn build(&self, extra: &[String], augmented: &BTreeSet<u32>) -> Result<(Subject, String), String> {
        program::build(self.program, self.compiler, self.level, extra, augmented, self.cache).await
    }

    fn augmentable(&self, _line: u32) -> bool {
        true
    }

    async fn pass_log(&self, augmented: &BTreeSet<u32>) -> Result<Vec<PassRun>, String> {
        if self.compiler.family != Family::Clang {
            return Err(format!("{} is not LLVM-based: no pass log", self.compiler.name));
        }
        // The source alone (see bisect::pass_log): the augmented file the
        // build compiled.
        let (subject, _) = self.build(&[], augmented).await?;
        bisect::pass_log(
            self.compiler,
            self.level,
            &subject.source,
            &program::include_flags(),
            -1,
        )
        .await
    }
}

/// The builder of `program` at (`compiler`, `level`): [`RustLevel`] for
/// rustc, else [`CLevel`].
pub fn for_program<'a>(
    program: &'a Program,
    compiler: &'a Compiler,
    level: &'a str,
    c_cache: &'a BuildCache,
    rust_cache: &'a RustBuilder,
) -> Box<dyn LevelBuilder + 'a> {
    match compiler.family {
        Family::Rustc => Box::new(RustLevel::new(program, compiler, level, rust_cache)),
        _ => Box::new(CLevel {
            program,
            compiler,
            level,
            cache: c_cache,
        }),
    }
}
