//! Stand-alone reproducers in the debuggers' own terms, the first thing a
//! maintainer asks for:
//! - [`native`] (C): the program, `build.sh`, a GDB command file, an LLDB
//!   command file and `run.sh` that shows the divergence with the plain CLIs;
//! - [`js`] (JavaScript): the scripts, an HTML page that loads them, a Node
//!   script that replays the actions over the Chrome DevTools Protocol, and
//!   step-by-step instructions for the Chromium and Firefox DevTools.
//!
//! Every reproducer replays the run's actions in order and marks the action
//! after which the debuggers diverged with `<-- divergence`.

mod js;
mod native;

use doppel_core::{Language, RunRecord, Verdict};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The files of a reproducer, by name (relative paths; `/` separates folders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reproducer {
    /// (path, contents) per file, in the order they are written.
    pub files: Vec<(String, String)>,
}

/// Builds the reproducer of a run, in the terms of its language's debuggers.
///
/// Errors: the run has no traces (a subject error), or no source text was
/// stored with it.
pub fn build(run: &RunRecord) -> Result<Reproducer, String> {
    match run.subject.language {
        Language::C => native::build(run),
        Language::JavaScript => js::build(run),
        Language::Rust => Err("differential reproducers are for C and JavaScript runs, not Rust".into()),
    }
}

/// Writes the reproducer into `dir` (created if needed, with its
/// subfolders); shell scripts are made executable. Returns the paths written.
///
/// Errors: I/O errors, or [`build`]'s errors as text.
pub fn write(run: &RunRecord, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let r = build(run).map_err(anyhow::Error::msg)?;
    write_files(&r, dir)
}

/// Writes a built reproducer into `dir` (see [`write`]).
///
/// Errors: I/O errors.
pub fn write_files(r: &Reproducer, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = Vec::new();
    for (name, text) in &r.files {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&p, text)?;
        if name.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
        }
        out.push(p);
    }
    Ok(out)
}

/// The verdict paragraph of a reproducer's README (class, action, detail).
fn verdict_summary(run: &RunRecord) -> String {
    let mut s = String::new();
    match &run.verdict {
        Verdict::Divergence(f) => {
            let (index, action) = f.action_parts();
            writeln!(
                s,
                "Class: `{}`\n\nThe debuggers diverge after action {index} (`{action}`):\n\n    {}\n",
                f.class, f.detail
            )
            .ok();
        }
        other => {
            writeln!(s, "Verdict: {}\n", other.name()).ok();
        }
    }
    s
}
