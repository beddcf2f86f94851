//! Backends: one file per debugger, plus the helpers they share.

pub mod gdb;
pub mod lldb;

use std::path::{Path, PathBuf};

/// Resolves an executable name on `PATH`, or checks a given path.
pub(crate) fn which(program: &str) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(program))
        .find(|c| c.is_file())
}

/// The first line a program prints for `args` (its version), if it runs.
pub(crate) fn version_line(exe: &Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}
