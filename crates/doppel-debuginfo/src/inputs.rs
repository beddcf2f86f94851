//! A campaign's programs: Csmith seeds (the seed loop: PLDI'20 keeps
//! programs of at least 4,000 bytes, so a seed whose program is smaller is
//! skipped, up to 10 N seeds for N programs), then the C and Rust files
//! under the given paths (`corpus/debuginfo` when there are neither).

use crate::program::Program;
use crate::seed::{self, CsmithConfig};
use std::path::{Path, PathBuf};

/// `csmith` Csmith programs from seed `first_seed` on, generated into
/// `csmith_dir`, then the programs under `paths` (the bundled
/// `corpus/debuginfo` when `paths` is empty and `csmith` is `None`). A seed
/// Csmith fails on is reported through `warn` and skipped.
///
/// Errors: Csmith is not installed; a file cannot be read; no program at all.
pub async fn programs(
    csmith: Option<u64>,
    first_seed: u64,
    csmith_dir: &Path,
    paths: &[PathBuf],
    warn: &dyn Fn(String),
) -> anyhow::Result<Vec<Program>> {
    let mut out = Vec::new();
    if let Some(n) = csmith {
        let config = CsmithConfig::default();
        let mut s = first_seed;
        let mut made = 0;
        while made < n && s < first_seed.saturating_add(10 * n.max(1)) {
            match seed::generate(s, &config, csmith_dir).await {
                Ok(g) => {
                    let mut p = Program::from_file(&format!("csmith-{s}.c"), &g.path).map_err(anyhow::Error::msg)?;
                    p.csmith = Some((s, g.options.clone()));
                    out.push(p);
                    made += 1;
                }
                Err(seed::SeedError::TooSmall { .. }) => {}
                Err(seed::SeedError::CsmithMissing) => anyhow::bail!("{}", seed::SeedError::CsmithMissing),
                Err(e) => warn(format!("Csmith seed {s}: {e}")),
            }
            s += 1;
        }
    }
    let paths = if paths.is_empty() && csmith.is_none() {
        vec![PathBuf::from("corpus/debuginfo")]
    } else {
        paths.to_vec()
    };
    // A barrier unit next to programs written for line augmentation is not
    // a program (doppel links its own).
    let barrier = crate::augment::BARRIER_FILE;
    // Rust programs: every `.rs` but the barrier crate `opt_me_not.rs`.
    let mut files: Vec<PathBuf> = doppel_lang::c::discover(&paths)
        .into_iter()
        .filter(|f| f.file_name().is_none_or(|n| n != barrier))
        .collect();
    files.extend(crate::rust::discover(&paths));
    for file in files {
        let name = paths
            .iter()
            .find_map(|r| file.strip_prefix(r).ok().filter(|p| !p.as_os_str().is_empty()))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.file_name().unwrap_or_default().to_string_lossy().into_owned());
        out.push(Program::from_file(&name, &file).map_err(anyhow::Error::msg)?);
    }
    if out.is_empty() {
        anyhow::bail!("no C or Rust programs found under {paths:?}");
    }
    Ok(out)
}
