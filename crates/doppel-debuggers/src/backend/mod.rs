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

/// Gives a debugger (and so the program it starts) a fixed, minimal
/// environment, the same for every backend: the program's stack layout (and
/// so every stack address it shows) depends on its environment, and a run must
/// not depend on the shell doppel was started from. `SHELL=/bin/sh` because
/// GDB starts the inferior through `$SHELL`, and bash would add `_`.
pub(crate) fn fixed_environment(cmd: &mut tokio::process::Command) {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("SHELL", "/bin/sh")
        .env("TERM", "dumb");
}

/// The first line a program prints for `args` (its version), if it runs.
pub(crate) fn version_line(exe: &Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = if out.stdout.is_empty() { out.stderr } else { out.stdout };
    String::from_utf8_lossy(&text)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}
