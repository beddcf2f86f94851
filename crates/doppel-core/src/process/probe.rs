//! Short blocking probes of installed tools (`gdb --version`, `node -p
//! process.versions.v8`, `dpkg-query -W`): a command in its own process
//! group, stdin closed, its output captured up to a cap and the group
//! killed at a deadline. Synchronous on purpose: probes run while a
//! backend or engine is configured, before any runtime work starts.

use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Bytes kept of each of a probe's stdout and stderr; the rest is read and
/// dropped, so a flooding tool never blocks on a full pipe nor grows
/// doppel's memory.
pub const PROBE_OUTPUT_CAP: usize = 64 * 1024;

/// What a probe printed and how it ended.
#[derive(Debug, Clone)]
pub struct ProbeOutput {
    /// How it ended.
    pub status: ExitStatus,
    /// Its standard output, at most [`PROBE_OUTPUT_CAP`] bytes.
    pub stdout: Vec<u8>,
    /// Its standard error, at most [`PROBE_OUTPUT_CAP`] bytes.
    pub stderr: Vec<u8>,
}

/// Runs `cmd` (stdin closed, stdout and stderr captured, each up to
/// [`PROBE_OUTPUT_CAP`] bytes) like [`Command::output`], but in a process
/// group of its own that is killed (`SIGKILL`) at `timeout`.
///
/// Errors: it cannot be started (the spawn error, e.g. `NotFound`), or it
/// did not end within `timeout` (`ErrorKind::TimedOut`, the group killed).
pub fn output_within(cmd: &mut Command, timeout: Duration) -> io::Result<ProbeOutput> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let readers = [
        child.stdout.take().map(|p| capped_reader(Box::new(p))),
        child.stderr.take().map(|p| capped_reader(Box::new(p))),
    ];
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                break Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("did not end within {} s", timeout.as_secs_f64()),
                ));
            }
            Err(e) => break Err(e),
        }
    };
    if status.is_err() {
        // SAFETY: signals the child's own process group.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
    }
    let status = status?;
    // The pipes reach their end when the child and whatever it started are
    // gone. Something it left behind in its group that still holds a pipe
    // keeps the group (and so its id) alive: it is killed at the deadline
    // (at least a second after the child ended), and the output kept so far
    // is the answer.
    let drain_deadline = deadline.max(Instant::now() + Duration::from_secs(1));
    while readers.iter().flatten().any(|h| !h.is_finished()) && Instant::now() < drain_deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    if readers.iter().flatten().any(|h| !h.is_finished()) {
        // SAFETY: signals the child's own process group.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        std::thread::sleep(Duration::from_millis(50));
    }
    let [out, err] = readers.map(|r| match r {
        Some(h) if h.is_finished() => h.join().unwrap_or_default(),
        _ => Vec::new(),
    });
    Ok(ProbeOutput {
        status,
        stdout: out,
        stderr: err,
    })
}

/// A thread reading `pipe` to its end, keeping the first
/// [`PROBE_OUTPUT_CAP`] bytes.
fn capped_reader(mut pipe: Box<dyn Read + Send>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => return kept,
                Ok(n) => {
                    let room = PROBE_OUTPUT_CAP.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_that_hangs_is_killed_at_its_deadline() {
        let start = Instant::now();
        let err = output_within(Command::new("sh").args(["-c", "sleep 30"]), Duration::from_millis(200)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
    }

    #[test]
    fn a_probe_that_answers_gives_its_output_and_status() {
        let out = output_within(
            Command::new("sh").args(["-c", "echo v1; echo warn >&2; exit 3"]),
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "v1");
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim(), "warn");
        assert_eq!(out.status.code(), Some(3));
    }

    #[test]
    fn a_flooding_probe_is_capped_and_does_not_block() {
        let out = output_within(
            Command::new("sh").args(["-c", "head -c 10000000 /dev/zero"]),
            Duration::from_secs(60),
        )
        .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout.len(), PROBE_OUTPUT_CAP);
    }

    #[test]
    fn a_probe_whose_background_child_keeps_the_pipe_returns() {
        let start = Instant::now();
        let out = output_within(
            Command::new("sh").args(["-c", "echo v2; sleep 30 &"]),
            Duration::from_secs(2),
        )
        .unwrap();
        assert!(out.status.success());
        assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
    }

    #[test]
    fn a_missing_tool_is_a_spawn_error() {
        let err = output_within(&mut Command::new("/nonexistent/tool"), Duration::from_secs(5)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
