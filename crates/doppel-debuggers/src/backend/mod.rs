//! Backends: one file per debugger, plus the helpers they share.

pub mod chromium;
pub mod firefox;
pub mod gdb;
pub mod lldb;
mod lldb_host;
pub mod node;
mod page;
pub mod v8;

use doppel_core::{FailureKind, Output};
use std::path::Path;
use std::sync::{Arc, Mutex};

pub(crate) use doppel_core::process::which;

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

/// The first line a program prints for `args` (its version): `Ok(None)`
/// only when it cannot be started at all.
///
/// Errors: the program does not end within 60 s (it is then killed with
/// its process group), or it printed nothing on three tries. Never a
/// fallback version: the version goes into run keys, and a probe that timed
/// out or printed nothing on a loaded machine used to change them (gdb's
/// version read as "unknown"), so `--resume` ran stored runs again (found by
/// `doppel bench soak`: 12 duplicated runs in 10,120).
pub(crate) fn version_line(exe: &Path, args: &[&str]) -> Result<Option<String>, crate::BackendError> {
    version_line_where(exe, args, |_| true)
}

/// [`version_line`] for a program that prints other lines first (Debian's
/// Chromium wrapper prints a shell warning): the first non-empty line of
/// stdout, then stderr, that `pick` accepts. Same tries and errors.
pub(crate) fn version_line_where(
    exe: &Path,
    args: &[&str],
    pick: impl Fn(&str) -> bool,
) -> Result<Option<String>, crate::BackendError> {
    const TRIES: usize = 3;
    let mut last = String::new();
    for _ in 0..TRIES {
        match version_try(exe, args, &pick)? {
            VersionTry::NotStarted => return Ok(None),
            VersionTry::Line(l) => return Ok(Some(l)),
            VersionTry::Nothing(why) => last = why,
        }
    }
    Err(crate::BackendError::Other(format!(
        "{} {} printed no version on {TRIES} tries ({last}; its version goes into the run keys)",
        exe.display(),
        args.join(" "),
    )))
}

/// One try of [`version_line`].
enum VersionTry {
    NotStarted,
    Line(String),
    /// Printed nothing; how it ended.
    Nothing(String),
}

fn version_try(exe: &Path, args: &[&str], pick: &dyn Fn(&str) -> bool) -> Result<VersionTry, crate::BackendError> {
    use std::os::unix::process::ExitStatusExt;
    // `lldb-22 --version` takes well under a second, and over 10 s under
    // `nice -n 19` on a machine busy with builds.
    const VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
    let out = match doppel_core::process::output_within(std::process::Command::new(exe).args(args), VERSION_TIMEOUT) {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            return Err(crate::BackendError::Other(format!(
                "{} {} did not answer within {} s (its version goes into the run keys)",
                exe.display(),
                args.join(" "),
                VERSION_TIMEOUT.as_secs()
            )));
        }
        Err(_) => return Ok(VersionTry::NotStarted),
    };
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let line = stdout
        .lines()
        .chain(stderr.lines())
        .map(str::trim)
        .find(|l| !l.is_empty() && pick(l))
        .map(str::to_string);
    Ok(match line {
        Some(l) => VersionTry::Line(l),
        None => VersionTry::Nothing(match (out.status.code(), out.status.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (_, Some(s)) => format!("killed by {}", signal_name(s)),
            _ => "unknown end".into(),
        }),
    })
}

/// The name of signal `n` (`SIGSEGV`), or `SIG<n>` for an unusual one.
pub(crate) fn signal_name(n: i32) -> String {
    let name = match n {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return format!("SIG{n}"),
    };
    name.to_string()
}

/// How an exchange with a debugger failed; becomes an [`Output::Failed`].
pub(crate) enum Fail {
    Timeout(String),
    Crash(String),
    Protocol(String),
}

impl From<crate::protocol::ClientError> for Fail {
    fn from(e: crate::protocol::ClientError) -> Self {
        use crate::protocol::ClientError;
        match e {
            ClientError::Timeout(s) => Fail::Timeout(s),
            ClientError::Closed(s) => Fail::Crash(s),
            ClientError::Protocol(s) | ClientError::Failed(s) => Fail::Protocol(s),
        }
    }
}

impl Fail {
    /// The failure as the output of an action.
    pub(crate) fn output(self) -> Output {
        match self {
            Fail::Timeout(d) => Output::failed(FailureKind::Timeout, d),
            Fail::Crash(d) => Output::failed(FailureKind::Crash, d),
            Fail::Protocol(d) => Output::failed(FailureKind::Protocol, d),
        }
    }

    /// The failure as the output of `load`: anything but a timeout is a launch failure.
    pub(crate) fn launch(self) -> Output {
        match self {
            Fail::Timeout(d) => Output::failed(FailureKind::Timeout, d),
            Fail::Crash(d) | Fail::Protocol(d) => Output::failed(FailureKind::Launch, d),
        }
    }
}

/// Appends program output to `out`, keeping at most
/// [`crate::protocol::dap::MAX_PROGRAM_OUTPUT_BYTES`]: a program that writes
/// forever cannot fill doppel's memory under any debugger; the cut is
/// marked once.
pub(crate) fn push_output(out: &mut String, text: &str) {
    use crate::protocol::dap::MAX_PROGRAM_OUTPUT_BYTES;
    if out.len() > MAX_PROGRAM_OUTPUT_BYTES {
        return;
    }
    out.push_str(text);
    if out.len() > MAX_PROGRAM_OUTPUT_BYTES {
        crate::protocol::cut(out, MAX_PROGRAM_OUTPUT_BYTES);
        out.push_str(" (more output dropped)");
    }
}

/// How much of a debugger's stderr [`StderrTail`] keeps (bytes).
pub(crate) const STDERR_TAIL_BYTES: usize = 4096;

/// The last 4 KiB of a debugger's stderr, collected in the background, for
/// the detail of a crash. Read as bytes: a debugger's stderr may hold
/// invalid UTF-8 or one endless line, and neither may stop the collection
/// or grow it beyond the cap; the text is decoded lossily when asked for.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<Vec<u8>>>);

impl StderrTail {
    /// Starts collecting from `stderr` (nothing if `None`).
    pub(crate) fn collect(stderr: Option<tokio::process::ChildStderr>) -> Self {
        let tail = Self::default();
        if let Some(mut err) = stderr {
            let buf = tail.0.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncReadExt;
                let mut chunk = vec![0u8; 8192];
                while let Ok(n @ 1..) = err.read(&mut chunk).await {
                    if let Ok(mut t) = buf.lock() {
                        push_tail(&mut t, &chunk[..n], STDERR_TAIL_BYTES);
                    }
                }
            });
        }
        tail
    }

    /// The last `n` lines collected so far (invalid UTF-8 replaced by U+FFFD).
    pub(crate) fn last_lines(&self, n: usize) -> String {
        let t = self.0.lock().map(|t| t.clone()).unwrap_or_default();
        last_lines(&t, n)
    }
}

/// Appends `bytes` to `tail` and drops its oldest bytes beyond `cap`.
fn push_tail(tail: &mut Vec<u8>, bytes: &[u8], cap: usize) {
    tail.extend_from_slice(bytes);
    let excess = tail.len().saturating_sub(cap);
    tail.drain(..excess);
}

/// The last `n` lines of `bytes`, decoded lossily. A multi-byte character
/// cut by the cap at the start becomes U+FFFD, never a panic.
fn last_lines(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn a_version_probe_that_prints_nothing_is_an_error_not_a_version() {
        let dir = tempfile::tempdir().unwrap();
        let silent = script(dir.path(), "silent", "exit 0");
        let err = version_line(&silent, &["--version"]).unwrap_err().to_string();
        assert!(err.contains("printed no version on 3 tries"), "{err}");
        assert!(err.contains("exit 0"), "{err}");
    }

    #[test]
    fn a_version_probe_that_prints_nothing_once_is_tried_again() {
        // Under load gdb --version once printed nothing; the next try answers.
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("count");
        let flaky = script(
            dir.path(),
            "flaky",
            &format!(
                "if [ -e {c} ]; then echo 'GNU gdb 13.1'; else touch {c}; fi",
                c = count.display()
            ),
        );
        assert_eq!(
            version_line(&flaky, &["--version"]).unwrap().as_deref(),
            Some("GNU gdb 13.1")
        );
    }

    #[test]
    fn a_version_line_is_picked_past_a_wrapper_warning_and_tried_again_when_killed() {
        // Debian's chromium wrapper warns first; a browser killed during the
        // probe (fault suite) prints nothing that once.
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("count");
        let browser = script(
            dir.path(),
            "chromium",
            &format!(
                "echo 'warning: no config' >&2; if [ -e {c} ]; then echo 'Chromium 142.0 built on Debian'; else touch {c}; kill -9 $$; fi",
                c = count.display()
            ),
        );
        assert_eq!(
            version_line_where(&browser, &["--version"], |l| l.contains("Chromium"))
                .unwrap()
                .as_deref(),
            Some("Chromium 142.0 built on Debian")
        );
        let err = version_line_where(&browser, &["--version"], |l| l.contains("Firefox"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("printed no version on 3 tries"), "{err}");
    }

    #[test]
    fn a_missing_program_has_no_version() {
        assert_eq!(
            version_line(Path::new("/nonexistent/gdb"), &["--version"]).unwrap(),
            None
        );
    }

    #[test]
    fn a_tail_cut_inside_a_multi_byte_character_is_kept_lossily() {
        // "é" is two bytes; a cap that cuts between them once panicked
        // (`is_char_boundary`) and lost the tail.
        let mut t = Vec::new();
        for _ in 0..3000 {
            push_tail(&mut t, "é".as_bytes(), 4096);
        }
        push_tail(&mut t, b"\nlldb-dap: fatal error\n", 4096);
        assert_eq!(t.len(), 4096);
        assert_eq!(last_lines(&t, 1), "lldb-dap: fatal error");
        assert!(last_lines(&t, 2).starts_with('\u{FFFD}'));
        // Invalid UTF-8 and an endless line stay within the cap.
        let mut t = Vec::new();
        for _ in 0..2000 {
            push_tail(&mut t, &[0xff, b'x', 0xfe], 4096);
        }
        assert_eq!(t.len(), 4096);
        assert!(last_lines(&t, 1).contains("x\u{FFFD}"));
    }

    #[tokio::test]
    async fn the_tail_of_a_real_process_with_invalid_utf8_and_multibyte_stderr() {
        let mut child = tokio::process::Command::new("/bin/sh")
            .args([
                "-c",
                "printf 'caf\\303\\251 %.0s' $(seq 3000) >&2; printf '\\377\\nlast line \\303\\251\\n' >&2",
            ])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let tail = StderrTail::collect(child.stderr.take());
        child.wait().await.unwrap();
        // The collecting task reads until end of file.
        for _ in 0..200 {
            if tail.last_lines(1) == "last line é" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(tail.last_lines(1), "last line é");
        assert!(tail.0.lock().unwrap().len() <= STDERR_TAIL_BYTES);
    }
}
