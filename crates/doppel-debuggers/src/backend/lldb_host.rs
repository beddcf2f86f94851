//! A cheap, identical answer to LLDB's host probe, so that an LLDB launch
//! costs what debugging costs.
//!
//! On Linux every launch starts a new `lldb-server gdbserver`, which answers
//! the client's `qHostInfo` with the distribution id from
//! `HostInfoLinux::GetDistributionId`: it runs `/bin/lsb_release -i` and
//! `/usr/bin/lsb_release -i` through `sh`. On Debian `lsb_release` is a shell
//! script that starts about eight processes (`getopt`, `cut`, `tr`, ...), and
//! with merged `/usr` both paths exist, so each launch spends ~25-35 ms there
//! (measured: a warm lldb-dap 22 session from `launch` to `initialized`,
//! 80 → 58 ms), a third of a warm run.
//!
//! When doppel may create a mount namespace (root, as for the network
//! sandbox), the adapter starts in one where `/usr/bin/lsb_release` is
//! bind-mounted over by a one-line script that prints, for `-i`, exactly what
//! the real `lsb_release -i` printed when doppel started. LLDB sees the same
//! answer; nothing else in the namespace differs. Without root, or without
//! `lsb_release`, nothing is changed (LLDB then pays for the probe, or skips
//! it). [`HostShim::describe`] says which, for the backend's capabilities.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where LLDB looks for `lsb_release` (both, in this order).
const LSB_RELEASE: [&str; 2] = ["/bin/lsb_release", "/usr/bin/lsb_release"];

/// The prepared shim: the script and the real file it covers.
#[derive(Debug)]
pub(crate) struct HostShim {
    script: CString,
    target: CString,
}

/// Why there is no shim (shown in the capabilities), or the shim.
static SHIM: OnceLock<Result<HostShim, String>> = OnceLock::new();

impl HostShim {
    /// The shim for this process, prepared on first use: `Err` says why
    /// there is none (not root, no `lsb_release`, the script cannot be
    /// written).
    pub(crate) fn get() -> Result<&'static HostShim, &'static str> {
        SHIM.get_or_init(prepare).as_ref().map_err(String::as_str)
    }

    /// One line for [`crate::Capabilities::notes`].
    pub(crate) fn describe() -> String {
        match Self::get() {
            Ok(s) => format!(
                "lldb-server's host probe (`lsb_release -i`, ~30 ms per launch) answered by a script with the real answer, bind-mounted over {} in the adapter's mount namespace",
                s.target.to_string_lossy()
            ),
            Err(why) => format!("lldb-server's host probe runs `lsb_release` on every launch ({why})"),
        }
    }

    /// Makes `cmd` start in a private mount namespace with the shim over
    /// `lsb_release`. The child goes on without it when the namespace or
    /// the mount cannot be made (the probe is then only slower, not different).
    pub(crate) fn install(&'static self, cmd: &mut tokio::process::Command) {
        // SAFETY: the closure calls only async-signal-safe syscalls on
        // strings prepared before the fork.
        unsafe {
            cmd.pre_exec(move || {
                if libc::unshare(libc::CLONE_NEWNS) == 0 {
                    let root = c"/";
                    let none = std::ptr::null();
                    if libc::mount(
                        none,
                        root.as_ptr(),
                        none,
                        libc::MS_REC | libc::MS_PRIVATE,
                        std::ptr::null(),
                    ) == 0
                    {
                        libc::mount(
                            self.script.as_ptr(),
                            self.target.as_ptr(),
                            none,
                            libc::MS_BIND,
                            std::ptr::null(),
                        );
                    }
                }
                Ok(())
            });
        }
    }
}

fn prepare() -> Result<HostShim, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("a mount namespace needs root".into());
    }
    // The real file both paths lead to (with merged /usr, /bin is /usr/bin).
    let real = LSB_RELEASE
        .iter()
        .map(Path::new)
        .find(|p| p.exists())
        .ok_or("lsb_release is not installed, so LLDB skips the probe")?
        .canonicalize()
        .map_err(|e| format!("lsb_release: {e}"))?;
    let out = doppel_core::process::output_within(
        std::process::Command::new(&real).arg("-i"),
        std::time::Duration::from_secs(60),
    )
    .map_err(|e| format!("running {}: {e}", real.display()))?;
    if !out.status.success() {
        return Err(format!("{} -i failed ({})", real.display(), out.status));
    }
    let answer = String::from_utf8_lossy(&out.stdout).into_owned();
    let script = write_script(&answer).map_err(|e| format!("writing the lsb_release script: {e}"))?;
    let c = |p: &Path| CString::new(p.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string());
    Ok(HostShim {
        script: c(&script)?,
        target: c(&real)?,
    })
}

/// The script text: `-i` prints `answer` (with the shell's builtin
/// `printf`, so no process is started); anything else fails as an unknown
/// option would.
pub(crate) fn script_text(answer: &str) -> String {
    let quoted = answer.replace('\'', r"'\''");
    format!(
        "#!/bin/sh\n# doppel: the answer of lsb_release -i, for lldb-server's host probe\n\
         if [ \"$1\" = -i ]; then printf '%s' '{quoted}'; else exit 1; fi\n"
    )
}

/// Writes the script (atomically: a file per content, renamed into place)
/// and returns its path.
fn write_script(answer: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let text = script_text(answer);
    let dir = std::env::temp_dir().join("doppel-lldb-host");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("lsb_release");
    if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
        return Ok(path);
    }
    let tmp = dir.join(format!("lsb_release.{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_prints_the_answer_exactly_for_dash_i_only() {
        let answer = "Distributor ID:\tDeb'ian $HOME `x`\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lsb");
        std::fs::write(&path, script_text(answer)).unwrap();
        let run = |arg: &str| std::process::Command::new("sh").arg(&path).arg(arg).output().unwrap();
        let out = run("-i");
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), answer);
        assert!(!run("-r").status.success());
    }
}
