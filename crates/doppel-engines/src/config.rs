//! Where the installed engines live.
//!
//! One root, `DOPPEL_ENGINES_DIR` (default: `.engines` at the repository
//! root, ignored by git, or when that is missing the machine-wide
//! `/opt/doppel/engines`), filled by `scripts/deps/setup-engines.sh`:
//! - `npm/node_modules/`: engine262, quickjs-emscripten, hermes-engine-cli, acorn;
//! - `venv/`: mini-racer, pythonmonkey, boabem;
//! - `venv-quickjs-ng/`: quickjs-ng;
//! - `cache/`: feature probes and engine262's coverage catalogue, keyed by version.
//!
//! Debian engines (`jsc`, `js102`, `duk`, `njs`, `mujs`, `rhino`) are found on `PATH`.

use std::path::{Path, PathBuf};

/// Paths of the engine installation.
#[derive(Debug, Clone)]
pub struct EnginesConfig {
    /// The root (`DOPPEL_ENGINES_DIR`).
    pub dir: PathBuf,
    /// Caches (feature sets, coverage catalogue): `<dir>/cache`.
    pub cache: PathBuf,
    /// The worker scripts shipped in this crate (`crates/doppel-engines/workers`).
    pub workers: PathBuf,
}

/// The machine-wide installation, shared by all clones and worktrees
/// (`DOPPEL_ENGINES_DIR=/opt/doppel/engines scripts/deps/setup-engines.sh`).
pub const SHARED_DIR: &str = "/opt/doppel/engines";

impl Default for EnginesConfig {
    /// `DOPPEL_ENGINES_DIR` if set; else `<repo>/.engines` if it exists; else
    /// [`SHARED_DIR`] if it exists; else `<repo>/.engines` (where
    /// `scripts/deps/setup-engines.sh` installs by default).
    fn default() -> Self {
        let local = repo_root().join(".engines");
        let dir = match std::env::var_os("DOPPEL_ENGINES_DIR") {
            Some(d) => PathBuf::from(d),
            None if local.is_dir() => local,
            None if Path::new(SHARED_DIR).is_dir() => PathBuf::from(SHARED_DIR),
            None => local,
        };
        Self::at(dir)
    }
}

impl EnginesConfig {
    /// A configuration rooted at `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        Self {
            cache: dir.join("cache"),
            workers: Path::new(env!("CARGO_MANIFEST_DIR")).join("workers"),
            dir,
        }
    }

    /// `<dir>/npm/node_modules/<package>`.
    pub fn npm_package(&self, package: &str) -> PathBuf {
        self.dir.join("npm").join("node_modules").join(package)
    }

    /// The version of an installed npm package, or why it is missing.
    pub fn npm_version(&self, package: &str) -> Result<String, String> {
        let p = self.npm_package(package).join("package.json");
        let text = std::fs::read_to_string(&p).map_err(|_| format!("{} is missing ({})", package, p.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        v["version"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| format!("{}: no version", p.display()))
    }

    /// The python of venv `name` (`venv`, `venv-quickjs-ng`).
    pub fn venv_python(&self, name: &str) -> PathBuf {
        self.dir.join(name).join("bin").join("python")
    }

    /// The version of a PyPI distribution installed in venv `venv`, from its
    /// `.dist-info` directory name, or why it is missing.
    pub fn pypi_version(&self, venv: &str, dist: &str) -> Result<String, String> {
        let lib = self.dir.join(venv).join("lib");
        let want = dist.replace('-', "_").to_lowercase();
        let pythons = std::fs::read_dir(&lib).map_err(|_| format!("venv {} is missing", lib.display()))?;
        for py in pythons.flatten() {
            let site = py.path().join("site-packages");
            for e in std::fs::read_dir(&site).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().to_lowercase();
                if let Some(stem) = name.strip_suffix(".dist-info")
                    && let Some((n, v)) = stem.split_once('-')
                    && n == want
                {
                    return Ok(v.to_string());
                }
            }
        }
        Err(format!(
            "PyPI {dist} is not installed in {}",
            self.dir.join(venv).display()
        ))
    }

    /// The hint printed for a missing npm/PyPI engine.
    pub fn setup_hint(&self) -> String {
        format!(
            "run scripts/deps/setup-engines.sh (installs into DOPPEL_ENGINES_DIR={})",
            self.dir.display()
        )
    }
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Finds `program` on `PATH`.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// How long a version probe (`node -p`, `dpkg-query`) may take before it is
/// killed: well under a second on a quiet machine; one `node -p` hung for 17
/// minutes at load 110 before probes had a deadline.
pub(crate) const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

pub(crate) use doppel_core::process::output_within;

/// The version of an installed Debian package (`dpkg-query`), if any.
pub fn debian_version(package: &str) -> Option<String> {
    let out = output_within(
        std::process::Command::new("dpkg-query").args(["-W", "-f=${Version}", package]),
        PROBE_TIMEOUT,
    )
    .ok()?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !v.is_empty()).then_some(v)
}
