//! `doppel.toml`: campaign defaults that CLI flags override.
//!
//! ```toml
//! [campaign]
//! debuggers = ["gdb", "lldb"]
//! runs_per_program = 5
//! seed = 0
//! jobs = 2
//! compiler = "gcc -O0 -g"
//! db = "doppel-out/doppel.db"
//! system_debug_info = false   # true: load libc6-dbg's debug info too (slower)
//! executables = { lldb = "/usr/bin/lldb-dap-22" }
//!
//! [diff]            # DBDB Algorithm 1 knobs (doppel_differential::DiffConfig)
//! breakpoints_per_line = 0.1
//! max_breakpoints = 10
//! removal_probability = 0.2
//! breakpoint_lines = "all"   # or "code": no blank or comment lines
//! max_actions = 20
//! action_timeout_ms = 10000
//! compare_columns = false
//! continue_past_policies = true   # false: end every run at its first divergence (DBDB)
//! realign_steps = true   # false: return_lands_mid_line and resume_completes_interrupted_step end the run
//! avoid_step_out_of_main = true   # false: step out is drawn in main itself too (it ends the run)
//! control_run = true   # false: no run without breakpoints first (programs that end differently are run too)
//! findings_per_run = 5   # 1: end every run at its first finding (DBDB); see doppel_differential::going_on
//! weights = { resume = 1.0, step_in = 1.0, step_over = 1.0, step_out = 1.0 }
//! normalization = { pointer_format = true }   # every rule, see docs/normalization.md
//!
//! [meta]            # doppel meta (ISSTA'19); initial runs use [diff]
//! rounds = 5
//! transformations = ["all"]   # or names: add_breakpoint, insert_no_op, ...
//! control_run = true   # false: no runs without breakpoints first (a follow-up that ends differently is tested too)
//!
//! [debuginfo]       # doppel debuginfo (PLDI'20), see doppel_debuginfo::config
//! compilers = ["gcc", "clang"]
//! levels = ["O1", "O2", "O3", "Og", "Os"]
//! debuggers = ["gdb", "lldb"]
//! kinds = ["int", "pointer", "array", "struct"]
//! max_pairs = 300
//! bisect = true
//!
//! [limits]          # for the programs under test
//! cpu_seconds = 10
//! memory_mb = 1024
//! file_size_mb = 16
//! ```

use anyhow::Context;
use doppel_differential::DiffConfig;
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub campaign: CampaignSettings,
    pub diff: DiffConfig,
    pub meta: MetaSettings,
    pub debuginfo: doppel_debuginfo::config::DebuginfoConfig,
    pub limits: LimitSettings,
}

/// `[meta]`: metamorphic testing (`doppel meta`); the initial runs use `[diff]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetaSettings {
    /// Metamorphic tests per sequence (ISSTA'19: 5).
    pub rounds: usize,
    /// Transformation names, or `["all"]`.
    #[serde(rename = "transformations")]
    pub transformation_names: Vec<String>,
    /// Control runs before the tests (`doppel_metamorphic::control`); on by default.
    pub control_run: bool,
}

impl Default for MetaSettings {
    fn default() -> Self {
        Self {
            rounds: 5,
            transformation_names: vec!["all".into()],
            control_run: true,
        }
    }
}

impl MetaSettings {
    /// The transformations named.
    ///
    /// Errors: an unknown name.
    pub fn transformations(&self) -> anyhow::Result<Vec<doppel_metamorphic::Transformation>> {
        doppel_metamorphic::Transformation::parse_list(&self.transformation_names.join(",")).map_err(anyhow::Error::msg)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CampaignSettings {
    pub debuggers: Vec<String>,
    pub runs_per_program: u64,
    pub seed: u64,
    pub jobs: usize,
    pub compiler: String,
    pub db: String,
    /// Keep debugger processes warm across runs.
    pub warm: bool,
    /// Run debuggers (and programs) in a fresh network namespace.
    pub isolate_network: bool,
    /// Let the debuggers load separate debug info of system libraries (libc6-dbg).
    pub system_debug_info: bool,
    /// Executable per debugger name (`lldb = "/usr/bin/lldb-dap-22"`).
    pub executables: std::collections::BTreeMap<String, String>,
}

impl Default for CampaignSettings {
    fn default() -> Self {
        Self {
            debuggers: vec!["gdb".into(), "lldb".into()],
            runs_per_program: 5,
            seed: 0,
            jobs: 2,
            compiler: "gcc -O0 -g".into(),
            db: "doppel-out/doppel.db".into(),
            warm: true,
            isolate_network: true,
            system_debug_info: false,
            executables: Default::default(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitSettings {
    pub cpu_seconds: u64,
    pub memory_mb: u64,
    pub file_size_mb: u64,
}

impl Default for LimitSettings {
    fn default() -> Self {
        let d = doppel_core::process::Limits::default();
        Self {
            cpu_seconds: d.cpu_seconds,
            memory_mb: d.memory_bytes >> 20,
            file_size_mb: d.file_size_bytes >> 20,
        }
    }
}

impl Settings {
    /// Reads `path` if given, else `./doppel.toml` if it exists, else defaults.
    ///
    /// Errors: an unreadable file or invalid TOML (unknown keys are errors).
    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        let default = Path::new("doppel.toml");
        let path = match path {
            Some(p) => p,
            None if default.exists() => default,
            None => return Ok(Self::default()),
        };
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let s: Self = toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        s.validate().with_context(|| format!("in {}", path.display()))?;
        Ok(s)
    }

    /// Rejects values that parse but mean nothing: `jobs = 0` (no job would
    /// run), a zero limit (`memory_mb = 0` would kill every program at its
    /// first allocation), an executable for a debugger that does not exist.
    ///
    /// Errors: the first such value, named with its section.
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.campaign.jobs == 0 {
            anyhow::bail!("[campaign] jobs = 0: at least one job is needed");
        }
        for (name, value) in [
            ("cpu_seconds", self.limits.cpu_seconds),
            ("memory_mb", self.limits.memory_mb),
            ("file_size_mb", self.limits.file_size_mb),
        ] {
            if value == 0 {
                anyhow::bail!("[limits] {name} = 0: a limit must be at least 1");
            }
        }
        for name in self.campaign.executables.keys() {
            known_debugger(name).context("[campaign] executables")?;
        }
        Ok(())
    }
}

/// Checks that `name` is a registered backend (`doppel backends`).
///
/// Errors: an unknown name, with the known ones.
pub fn known_debugger(name: &str) -> anyhow::Result<()> {
    let entries = doppel_debuggers::registry::all();
    if entries.iter().any(|e| e.name == name) {
        return Ok(());
    }
    let known: Vec<&str> = entries.iter().map(|e| e.name).collect();
    anyhow::bail!("unknown debugger '{name}' (known: {})", known.join(", "))
}

/// Parses a job count for `--jobs`.
///
/// Errors: not a number, or 0.
pub fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("at least one job is needed".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_files_keep_defaults_and_unknown_keys_are_errors() {
        let s: Settings = toml::from_str("[diff]\nmax_actions = 7\n[campaign]\njobs = 1\n").unwrap();
        assert_eq!(s.diff.max_actions, 7);
        assert_eq!(s.campaign.jobs, 1);
        assert_eq!(s.campaign.debuggers, ["gdb", "lldb"]);
        assert!(toml::from_str::<Settings>("[campaign]\njbos = 1\n").is_err());
    }

    #[test]
    fn values_that_mean_nothing_are_errors() {
        let err = |text: &str| {
            let s: Settings = toml::from_str(text).unwrap();
            s.validate().unwrap_err().to_string()
        };
        assert!(err("[campaign]\njobs = 0\n").contains("jobs = 0"));
        assert!(err("[limits]\nmemory_mb = 0\n").contains("[limits] memory_mb = 0"));
        assert!(err("[limits]\ncpu_seconds = 0\n").contains("cpu_seconds = 0"));
        let e = toml::from_str::<Settings>("[campaign]\nexecutables = { lldbb = \"/usr/bin/lldb-dap-22\" }\n")
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(format!("{e:#}").contains("unknown debugger 'lldbb'"), "{e:#}");
        Settings::default().validate().unwrap();
        assert!(parse_jobs("0").is_err());
        assert_eq!(parse_jobs("3"), Ok(3));
        // Through the file, as the binary reads it.
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("doppel.toml");
        std::fs::write(&f, "[limits]\nmemory_mb = 0\n").unwrap();
        let e = Settings::load(Some(&f)).unwrap_err();
        assert!(format!("{e:#}").contains("memory_mb = 0"), "{e:#}");
    }
}
