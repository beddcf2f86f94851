//! The compilers under test: discovery (name, path, version, family) and the
//! build recipes of the optimized and reference binaries.

use doppel_core::process::{self, Sandbox};
use doppel_lang::c::BuildRecipe;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;
use tokio::process::Command;

/// GCC, Clang or rustc: decides the culprit-bisection method and the flag
/// spelling. rustc builds Rust seeds only ([`crate::rust`]), and its wrong
/// values are not bisected (no culprit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// GCC (flag bisection with `-fno-*`).
    Gcc,
    /// Clang (pass bisection with `-opt-bisect-limit`).
    Clang,
    /// rustc (Rust seeds only; not bisected).
    Rustc,
}

/// An installed compiler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compiler {
    /// Name as given on the command line (`gcc`, `clang-19`).
    pub name: String,
    /// Resolved executable.
    pub path: String,
    /// Its family.
    pub family: Family,
    /// The first line of `--version` (`gcc (Debian 12.2.0-14) 12.2.0`).
    pub version: String,
    /// The version number alone (`12.2.0`, `19.1.7`).
    pub version_number: String,
}

/// Flags every build gets: debug information, no warnings (Csmith programs
/// warn a lot), Csmith's headers.
pub const COMMON_FLAGS: [&str; 3] = ["-g", "-w", "-I/usr/include/csmith"];

impl Compiler {
    /// Finds `name` on `PATH` and asks it for its version.
    ///
    /// Errors: a reason when it is not installed or does not answer
    /// `--version` (the campaign records it and goes on without it).
    pub async fn discover(name: &str) -> Result<Compiler, String> {
        let path = process::which(name).ok_or_else(|| format!("compiler '{name}' is not installed"))?;
        let mut cmd = Command::new(&path);
        cmd.arg("--version");
        let done = process::run(cmd, Duration::from_secs(20), Sandbox::NONE)
            .await
            .map_err(|e| format!("cannot run {name} --version: {e}"))?;
        let version = done.stdout.lines().next().unwrap_or("").trim().to_string();
        if done.code != Some(0) || version.is_empty() {
            return Err(format!("{name} --version failed: {}", done.stderr.trim()));
        }
        let family = family_of(&version);
        let version_number = version_number(&version);
        Ok(Compiler {
            name: name.to_string(),
            path: path.to_string_lossy().into_owned(),
            family,
            version,
            version_number,
        })
    }

    /// The recipe of a build at `level` (`O0`, `O2`, ...), with `extra` flags
    /// (bisection switches) and extra translation units (the barrier).
    pub fn recipe(&self, level: &str, extra: &[String], units: &[&Path]) -> BuildRecipe {
        let mut flags: Vec<String> = vec![format!("-{level}")];
        flags.extend(COMMON_FLAGS.iter().map(|s| s.to_string()));
        flags.extend(extra.iter().cloned());
        flags.extend(units.iter().map(|p| p.to_string_lossy().into_owned()));
        BuildRecipe {
            compiler: self.path.clone(),
            flags,
        }
    }

    /// `gcc-12.2.0`, `clang-19.1.7`: the compiler part of a signature.
    pub fn tag(&self) -> String {
        let fam = match self.family {
            Family::Gcc => "gcc",
            Family::Clang => "clang",
            Family::Rustc => "rustc",
        };
        format!("{fam}-{}", self.version_number)
    }
}

/// The family a `--version` line names (`rustc 1.95.0 (59807616e
/// 2026-04-14)`, `Debian clang version 19.1.7`, `gcc (Debian ...) 12.2.0`).
fn family_of(version: &str) -> Family {
    if version.starts_with("rustc ") {
        Family::Rustc
    } else if version.contains("clang") {
        Family::Clang
    } else {
        Family::Gcc
    }
}

/// The first dotted number in a `--version` line.
fn version_number(line: &str) -> String {
    // `1.97.0-nightly`, `12.2.0-14+deb12u1`: the part before the first dash.
    line.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .map(|w| w.split('-').next().unwrap_or(w))
        .filter(|w| w.contains('.') && w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .find(|w| {
            w.split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_numbers_of_debian_compilers() {
        assert_eq!(version_number("gcc (Debian 12.2.0-14+deb12u1) 12.2.0"), "12.2.0");
        assert_eq!(version_number("Debian clang version 14.0.6"), "14.0.6");
        assert_eq!(version_number("Debian clang version 19.1.7 (3~deb12u1)"), "19.1.7");
    }

    #[test]
    fn rustc_version_and_family() {
        let line = "rustc 1.95.0 (59807616e 2026-04-14)";
        assert_eq!(version_number(line), "1.95.0");
        assert_eq!(family_of(line), Family::Rustc);
        assert_eq!(version_number("rustc 1.97.0-nightly (abcdef012 2026-05-01)"), "1.97.0");
        assert_eq!(family_of("Debian clang version 14.0.6"), Family::Clang);
        assert_eq!(family_of("gcc (Debian 12.2.0-14+deb12u1) 12.2.0"), Family::Gcc);
    }

    #[tokio::test]
    async fn a_missing_compiler_is_a_reason_not_a_panic() {
        let e = Compiler::discover("no-such-cc-4711").await.unwrap_err();
        assert!(e.contains("not installed"), "{e}");
    }

    #[tokio::test]
    async fn gcc_is_found_with_its_family() {
        let c = Compiler::discover("gcc").await.unwrap();
        assert_eq!(c.family, Family::Gcc);
        assert!(c.tag().starts_with("gcc-1"), "{}", c.tag());
    }
}
