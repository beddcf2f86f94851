//! Program reduction with an external, syntax-aware reducer, shared by the
//! techniques that reduce a finding's program: C with C-Vise (Regehr et
//! al., "Test-Case Reduction for C Compiler Bugs", PLDI 2012),
//! JavaScript with treereduce 0.4 (delta debugging over tree-sitter 0.25
//! syntax trees with tree-sitter-javascript: `treereduce-javascript`).
//!
//! What is generic lives here: which reducer a language has
//! ([`reducer_for`], [`Reducer::find`]), the command line of each reducer
//! with an interestingness command ([`treereduce_command`],
//! [`cvise_command`]), running it under a wall-time budget in its own
//! process group, its log written beside the work ([`Reducer::run`]), and
//! the clean-up of what reducers leave ([`drop_blank_lines`]). What is
//! interesting is each technique's: its probe command decides.

use doppel_core::Language;
use doppel_core::process::{self, Sandbox};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

/// The program reducer of a language: C-Vise (`cvise`) for C, treereduce
/// 0.4 with tree-sitter-javascript (`treereduce-javascript`) for
/// JavaScript; `None` for languages without one (Rust).
pub fn reducer_for(language: Language) -> Option<&'static str> {
    match language {
        Language::C => Some("cvise"),
        Language::JavaScript => Some("treereduce-javascript"),
        Language::Rust => None,
    }
}

/// `text` without its blank (whitespace-only) lines: reducers leave the
/// lines of what they delete.
pub fn drop_blank_lines(text: &str) -> String {
    text.split_inclusive('\n').filter(|l| !l.trim().is_empty()).collect()
}

/// A located reducer executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reducer {
    /// Its name ([`reducer_for`]).
    pub tool: &'static str,
    /// Its executable (found on `PATH`).
    pub exe: PathBuf,
}

/// How a reducer's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReducerEnd {
    /// It exited 0.
    Finished,
    /// It was stopped (its process group killed) at the budget; C-Vise
    /// keeps its best variant in place as it goes, treereduce writes its
    /// output only at the end.
    Budget,
    /// It exited otherwise: the status and the last non-blank stderr line
    /// (e.g. treereduce's "the initial test case is not interesting").
    Failed(String),
}

impl Reducer {
    /// The reducer of `language`.
    ///
    /// Errors: the language has none, or its executable is not on `PATH`
    /// (installed by scripts/deps: apt.txt for C-Vise,
    /// setup-02-treereduce.sh for treereduce).
    pub fn find(language: Language) -> anyhow::Result<Reducer> {
        let tool = reducer_for(language).ok_or_else(|| anyhow::anyhow!("no program reducer for {language:?}"))?;
        let exe = process::which(tool).ok_or_else(|| anyhow::anyhow!("{tool} is not installed"))?;
        Ok(Reducer { tool, exe })
    }

    /// Runs `cmd` (from [`treereduce_command`] or [`cvise_command`]) for at
    /// most `budget` wall time, in its own process group (killed whole at
    /// the budget), and writes its exit, stdout and stderr to `log`.
    ///
    /// Errors: it cannot be spawned, `log` cannot be written.
    pub async fn run(&self, cmd: Command, budget: Duration, log: &Path) -> anyhow::Result<ReducerEnd> {
        let done = process::run(cmd, budget, Sandbox::NONE).await?;
        std::fs::write(
            log,
            format!(
                "{}: exit {:?}, timed out: {}\n--- stdout\n{}\n--- stderr\n{}\n",
                self.tool, done.code, done.timed_out, done.stdout, done.stderr
            ),
        )?;
        Ok(if done.timed_out {
            ReducerEnd::Budget
        } else if done.code == Some(0) {
            ReducerEnd::Finished
        } else {
            let why = failure_reason(&done.stderr);
            ReducerEnd::Failed(format!("{} failed (status {:?}): {why}", self.tool, done.code))
        })
    }
}

/// What a failed reducer's stderr says went wrong, in one line: its
/// `Error:` line with what `Caused by:` names (treereduce reports through
/// anyhow, then prints a backtrace), else its last line that is not a
/// backtrace frame.
pub fn failure_reason(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    if let Some(i) = lines.iter().position(|l| l.starts_with("Error:")) {
        let mut why = lines[i].to_string();
        if lines.get(i + 1) == Some(&"Caused by:")
            && let Some(cause) = lines.get(i + 2)
        {
            why = format!("{why}: {cause}");
        }
        return why;
    }
    let frame = |l: &str| {
        l.starts_with("at ")
            || l.split_once(": ")
                .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
            || l.chars().all(|c| c.is_ascii_digit() || c == ':')
    };
    lines
        .iter()
        .rev()
        .find(|l| !frame(l) && *l != &"Stack backtrace:")
        .map(|l| l.to_string())
        .unwrap_or_default()
}

/// treereduce on `input` (a file name in `dir`, the working directory),
/// one thread, each check under `per_check`, writing the result to
/// `output`; `check` is the interestingness command, `@@` standing for the
/// variant's file (treereduce's convention), interesting iff it exits 0.
pub fn treereduce_command(
    exe: &Path,
    dir: &Path,
    input: &str,
    output: &Path,
    per_check: Duration,
    check: &[OsString],
) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("-s").arg(input).arg("-o").arg(output).arg("-j").arg("1");
    cmd.arg("--timeout").arg(per_check.as_secs().to_string()).arg("--");
    cmd.args(check);
    cmd.current_dir(dir);
    cmd
}

/// C-Vise on `file` (in `dir`, reduced in place) with the interestingness
/// script `script` (run in a copy of `dir`, exit 0 = interesting), one
/// process, each check under `per_check`, `--tidy` (no backup files).
pub fn cvise_command(exe: &Path, dir: &Path, script: &Path, file: &str, per_check: Duration) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("--n")
        .arg("1")
        .arg("--timeout")
        .arg(per_check.as_secs().to_string());
    cmd.arg("--tidy").arg(script).arg(file);
    cmd.current_dir(dir);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_go_and_reducers_are_per_language() {
        assert_eq!(drop_blank_lines("a\n\n  \n/*M*/b\n\n"), "a\n/*M*/b\n");
        assert_eq!(reducer_for(Language::C), Some("cvise"));
        assert_eq!(reducer_for(Language::JavaScript), Some("treereduce-javascript"));
        assert_eq!(reducer_for(Language::Rust), None);
        assert!(Reducer::find(Language::Rust).is_err());
    }

    #[test]
    fn a_failure_is_told_by_its_error_not_its_backtrace() {
        // treereduce 0.4 whose interestingness command does not exist.
        let stderr = "Error: Failed to check that initial input was interesting\n\nCaused by:\n    \
                      No such file or directory (os error 2)\n\nStack backtrace:\n   0: <E as anyhow::context::ext::StdError>::ext_context\n   \
                      1: treereduce::cli::main\n   8: __libc_start_main_impl\n             at ./csu/../csu/libc-start.c:360:3\n   9: _start\n";
        assert_eq!(
            failure_reason(stderr),
            "Error: Failed to check that initial input was interesting: No such file or directory (os error 2)"
        );
        assert_eq!(failure_reason("Traceback\nRuntimeError: boom\n"), "RuntimeError: boom");
        assert_eq!(failure_reason("x\n   9: _start\n"), "x");
        assert_eq!(failure_reason(""), "");
    }

    #[test]
    fn commands_name_the_check_and_the_variant() {
        let t = treereduce_command(
            Path::new("/bin/treereduce-javascript"),
            Path::new("/w"),
            "original.js",
            Path::new("/w/reduced.js"),
            Duration::from_secs(40),
            &["doppel".into(), "probe".into(), "@@".into()],
        );
        let args: Vec<String> = t
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args.join(" "),
            "-s original.js -o /w/reduced.js -j 1 --timeout 40 -- doppel probe @@"
        );
        let c = cvise_command(
            Path::new("/bin/cvise"),
            Path::new("/w"),
            Path::new("/w/i.sh"),
            "a.c",
            Duration::from_secs(9),
        );
        let args: Vec<String> = c
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args.join(" "), "--n 1 --timeout 9 --tidy /w/i.sh a.c");
    }
}
