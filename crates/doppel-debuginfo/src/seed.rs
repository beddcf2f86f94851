//! Seed programs from Csmith, with swarm testing (PLDI 2020, section 5,
//! "test programs"; the public reimplementation's `generate` step).
//!
//! Every seed is generated with the options that keep Csmith programs
//! checkable by a debugger ([`ALWAYS`]); with [`CsmithConfig::swarm`] each
//! feature of [`SWARM_FEATURES`] is in addition switched off with
//! probability 1/2. The choice comes from a ChaCha8 generator seeded with the
//! seed number, so the same seed and configuration give the same options and
//! (Csmith being deterministic for a seed and options) the same file.
//!
//! Floating point is always off (`--no-float`, also Csmith's default, written
//! out so that it does not depend on the Csmith version): float values are not
//! compared ([`crate::VarKind::Other`]), and gcc's default
//! `-ffp-contract=fast` makes optimized floating-point results legitimately
//! differ from -O0, which would only feed false positives downstream.

use doppel_core::process::{self, Sandbox};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

/// Options every seed gets: no unions (their values alias), wrapped
/// arithmetic without undefined behaviour (`--safe-math`), a `main` without
/// `argc`, no `inline` hints, no bitfields, no struct returns (the public
/// PLDI'20 reimplementation's fixed set), and no floating point (see the
/// module documentation).
pub const ALWAYS: [&str; 7] = [
    "--no-unions",
    "--safe-math",
    "--no-argc",
    "--no-inline-function",
    "--no-bitfields",
    "--no-return-structs",
    "--no-float",
];

/// Features swarm testing switches off, each with probability 1/2: the
/// suffix of Csmith 2.3's `--no-<feature>` switches.
pub const SWARM_FEATURES: [&str; 20] = [
    "arrays",
    "pointers",
    "structs",
    "jumps",
    "comma-operators",
    "compound-assignment",
    "divs",
    "muls",
    "math64",
    "volatiles",
    "volatile-pointers",
    "const-pointers",
    "consts",
    "embedded-assigns",
    "pre-incr-operator",
    "pre-decr-operator",
    "post-incr-operator",
    "post-decr-operator",
    "longlong",
    "packed-struct",
];

/// How seeds are generated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsmithConfig {
    /// Csmith executable (name on `PATH` or path).
    pub csmith: String,
    /// Swarm testing: switch off each of [`SWARM_FEATURES`] with p = 0.5.
    pub swarm: bool,
    /// `--max-funcs` (Csmith's default is 10); `None` leaves Csmith's default.
    pub max_funcs: Option<u32>,
    /// `--max-block-depth` (Csmith's default is 5); `None` leaves the default.
    pub max_block_depth: Option<u32>,
    /// Programs smaller than this many bytes are rejected (the PLDI'20
    /// reimplementation uses 4000: tiny programs exercise little).
    pub min_size_bytes: u64,
    /// Wall-clock limit of one Csmith run (it occasionally loops).
    pub timeout: Duration,
}

impl Default for CsmithConfig {
    fn default() -> Self {
        Self {
            csmith: "csmith".into(),
            swarm: true,
            max_funcs: None,
            max_block_depth: None,
            min_size_bytes: 4000,
            timeout: Duration::from_secs(60),
        }
    }
}

/// A generated seed program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seed {
    /// The Csmith seed.
    pub seed: u64,
    /// `<out_dir>/csmith-<seed>.c`.
    pub path: PathBuf,
    /// Every option passed to Csmith after `--seed <seed>`, in order
    /// ([`ALWAYS`], then the swarm choices, then the size options).
    pub options: Vec<String>,
    /// Size of the file in bytes.
    pub size_bytes: u64,
}

/// Why no seed came out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum SeedError {
    /// Csmith is not installed: stop the campaign.
    #[error("csmith is not installed (apt-get install csmith libcsmith-dev)")]
    CsmithMissing,
    /// The program is below [`CsmithConfig::min_size_bytes`]: take the next
    /// seed. The file is removed.
    #[error("csmith seed {seed} gave {size_bytes} bytes, below the minimum of {min_bytes}")]
    TooSmall {
        /// The Csmith seed.
        seed: u64,
        /// The program's size.
        size_bytes: u64,
        /// The configured minimum.
        min_bytes: u64,
    },
    /// Csmith failed, timed out, or the output could not be written.
    #[error("csmith seed {seed}: {detail}")]
    Failed {
        /// The Csmith seed.
        seed: u64,
        /// The cause (exit status and stderr, the timeout, the I/O error).
        detail: String,
    },
}

/// The Csmith options for `seed` under `config` (everything after
/// `--seed <seed>` except `--output`). Deterministic: a function of the seed
/// and the configuration only.
pub fn options_for(seed: u64, config: &CsmithConfig) -> Vec<String> {
    let mut opts: Vec<String> = ALWAYS.iter().map(|s| s.to_string()).collect();
    if config.swarm {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for feature in SWARM_FEATURES {
            if rng.random_bool(0.5) {
                opts.push(format!("--no-{feature}"));
            }
        }
    }
    if let Some(n) = config.max_funcs {
        opts.extend(["--max-funcs".to_string(), n.to_string()]);
    }
    if let Some(n) = config.max_block_depth {
        opts.extend(["--max-block-depth".to_string(), n.to_string()]);
    }
    opts
}

/// Generates `<out_dir>/csmith-<seed>.c` with `csmith --seed <seed>` and the
/// options of [`options_for`]. `out_dir` must exist. Csmith's headers are in
/// `/usr/include/csmith` (package `libcsmith-dev`); compile with
/// `-I/usr/include/csmith` ([`crate::toolchain::COMMON_FLAGS`]).
///
/// Errors: [`SeedError::CsmithMissing`]; [`SeedError::TooSmall`] (the file
/// is removed); [`SeedError::Failed`] for a non-zero exit, a timeout (after
/// [`CsmithConfig::timeout`]) or a missing output file.
pub async fn generate(seed: u64, config: &CsmithConfig, out_dir: &Path) -> Result<Seed, SeedError> {
    let csmith = process::which(&config.csmith).ok_or(SeedError::CsmithMissing)?;
    let options = options_for(seed, config);
    let out_dir = std::path::absolute(out_dir).map_err(|e| SeedError::Failed {
        seed,
        detail: format!("output directory {}: {e}", out_dir.display()),
    })?;
    let out_dir = out_dir.as_path();
    let path = out_dir.join(format!("csmith-{seed}.c"));
    let failed = |detail: String| SeedError::Failed { seed, detail };
    std::fs::create_dir_all(out_dir).map_err(|e| failed(format!("cannot create {}: {e}", out_dir.display())))?;
    let mut cmd = Command::new(csmith);
    // Csmith writes `platform.info` into its working directory.
    cmd.current_dir(out_dir);
    cmd.arg("--seed")
        .arg(seed.to_string())
        .args(&options)
        .arg("--output")
        .arg(&path);
    let done = process::run(cmd, config.timeout, Sandbox::default())
        .await
        .map_err(|e| failed(format!("cannot run csmith: {e}")))?;
    if done.timed_out {
        let _ = std::fs::remove_file(&path);
        return Err(failed(format!("timed out after {:?}", config.timeout)));
    }
    if done.code != Some(0) {
        let _ = std::fs::remove_file(&path);
        let why = done
            .stderr
            .lines()
            .chain(done.stdout.lines())
            .next()
            .unwrap_or("")
            .trim();
        return Err(failed(format!("exit {:?}: {why}", done.code)));
    }
    let size_bytes = std::fs::metadata(&path)
        .map_err(|e| failed(format!("no output {}: {e}", path.display())))?
        .len();
    if size_bytes < config.min_size_bytes {
        let _ = std::fs::remove_file(&path);
        return Err(SeedError::TooSmall {
            seed,
            size_bytes,
            min_bytes: config.min_size_bytes,
        });
    }
    Ok(Seed {
        seed,
        path,
        options,
        size_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_deterministic_and_swarm_varies_with_the_seed() {
        let cfg = CsmithConfig::default();
        assert_eq!(options_for(7, &cfg), options_for(7, &cfg));
        let distinct: std::collections::BTreeSet<Vec<String>> = (0..20).map(|s| options_for(s, &cfg)).collect();
        assert!(distinct.len() > 10, "swarm choices barely vary: {}", distinct.len());
        for s in 0..20 {
            let o = options_for(s, &cfg);
            assert_eq!(&o[..ALWAYS.len()], ALWAYS.map(String::from).as_slice());
        }
        let plain = CsmithConfig {
            swarm: false,
            max_funcs: Some(3),
            ..cfg
        };
        let o = options_for(7, &plain);
        assert_eq!(o.len(), ALWAYS.len() + 2);
        assert_eq!(&o[ALWAYS.len()..], ["--max-funcs", "3"]);
    }

    #[tokio::test]
    async fn same_seed_gives_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = CsmithConfig {
            min_size_bytes: 0,
            ..CsmithConfig::default()
        };
        let a = generate(42, &cfg, dir.path()).await.unwrap();
        assert_eq!(a.path, dir.path().join("csmith-42.c"));
        let first = std::fs::read(&a.path).unwrap();
        let b = generate(42, &cfg, dir.path()).await.unwrap();
        assert_eq!(a.options, b.options);
        // Byte for byte, header comment (options, output path) included.
        assert_eq!(first, std::fs::read(&b.path).unwrap());
        let text = String::from_utf8(first).unwrap();
        assert!(
            text.contains("--no-unions") && text.contains("int main"),
            "{}",
            &text[..300]
        );
        for o in a.options.iter().filter(|o| o.starts_with("--no-")) {
            assert!(text.contains(o.as_str()), "option {o} not in the header");
        }
    }

    #[tokio::test]
    async fn a_too_small_program_is_rejected_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = CsmithConfig {
            min_size_bytes: 100_000_000,
            ..CsmithConfig::default()
        };
        let e = generate(1, &cfg, dir.path()).await.unwrap_err();
        assert!(matches!(e, SeedError::TooSmall { seed: 1, .. }), "{e}");
        assert!(!dir.path().join("csmith-1.c").exists());
    }

    #[tokio::test]
    async fn a_missing_csmith_says_how_to_install_it() {
        let cfg = CsmithConfig {
            csmith: "no-such-csmith-4711".into(),
            ..CsmithConfig::default()
        };
        let e = generate(1, &cfg, Path::new("/tmp")).await.unwrap_err();
        assert_eq!(e, SeedError::CsmithMissing);
        assert!(e.to_string().contains("apt-get install csmith libcsmith-dev"));
    }
}
