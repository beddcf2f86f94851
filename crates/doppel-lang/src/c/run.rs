//! One concrete run of a program under test with bytes on stdin: the
//! native reference builds and the wasm builds (under node's WASI) of
//! regression pairs are run this way to compare their outputs.

use doppel_core::process::{self, Limits, Sandbox};
use serde::{Deserialize, Serialize};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum RunEnd {
    /// Exited with this code.
    Exited(i32),
    /// Killed by this signal (`SIGSEGV`, `SIGXCPU` past the CPU limit, ...).
    Signal(i32),
    /// Still running after the wall-clock timeout; killed with its tree.
    TimedOut,
}

/// What one run produced; stdout and stderr are each capped at the
/// limits' file size (the rest is read and dropped).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramRun {
    /// The standard output, raw bytes.
    pub stdout: Vec<u8>,
    /// The standard error, raw bytes.
    pub stderr: Vec<u8>,
    /// How it ended.
    pub end: RunEnd,
}

/// Runs `cmd` in its own process group with `stdin` as its standard input
/// (then closed), under `limits` (applied right after the start; a program
/// that already exited is fine) and a wall-clock `timeout`, after which the
/// whole process tree is killed.
///
/// Errors: the program cannot be started or limited.
pub async fn run_with_stdin(
    mut cmd: Command,
    stdin: &[u8],
    timeout: Duration,
    limits: Limits,
) -> std::io::Result<ProgramRun> {
    use std::os::unix::process::ExitStatusExt;
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut guard = process::spawn(cmd, Sandbox::default())?;
    if let Err(e) = limits.apply_to(guard.pid())
        && e.raw_os_error() != Some(libc_esrch())
    {
        guard.kill_tree();
        return Err(e);
    }
    let cap = usize::try_from(limits.file_size_bytes).unwrap_or(usize::MAX);
    let mut input = guard.child_mut().stdin.take();
    let mut out = guard.child_mut().stdout.take();
    let mut err = guard.child_mut().stderr.take();
    let data = stdin.to_vec();
    let work = async {
        let feed = async {
            if let Some(w) = input.as_mut() {
                // A program that stops reading early closes the pipe: fine.
                let _ = w.write_all(&data).await;
                let _ = w.shutdown().await;
            }
            drop(input.take());
        };
        let (_, o, e) = tokio::join!(feed, read_capped(out.as_mut(), cap), read_capped(err.as_mut(), cap));
        (o, e)
    };
    let res = tokio::time::timeout(timeout, async {
        let (o, e) = work.await;
        let status = guard.child_mut().wait().await;
        (o, e, status)
    })
    .await;
    match res {
        Ok((stdout, stderr, status)) => {
            let status = status?;
            let end = match (status.code(), status.signal()) {
                (Some(c), _) => RunEnd::Exited(c),
                (None, Some(s)) => RunEnd::Signal(s),
                (None, None) => RunEnd::Signal(0),
            };
            Ok(ProgramRun { stdout, stderr, end })
        }
        Err(_) => {
            guard.kill_tree();
            Ok(ProgramRun {
                stdout: Vec::new(),
                stderr: Vec::new(),
                end: RunEnd::TimedOut,
            })
        }
    }
}

fn libc_esrch() -> i32 {
    3
}

async fn read_capped<R: tokio::io::AsyncRead + Unpin>(stream: Option<&mut R>, cap: usize) -> Vec<u8> {
    let mut kept = Vec::new();
    let Some(s) = stream else { return kept };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stdin_reaches_the_program_and_hangs_are_killed() {
        let r = run_with_stdin(
            Command::new("cat"),
            b"abc\n",
            Duration::from_secs(10),
            Limits::default(),
        )
        .await
        .unwrap();
        assert_eq!(r.stdout, b"abc\n");
        assert_eq!(r.end, RunEnd::Exited(0));
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let r = run_with_stdin(sleep, b"", Duration::from_millis(300), Limits::default())
            .await
            .unwrap();
        assert_eq!(r.end, RunEnd::TimedOut);
        let mut sh = Command::new("sh");
        sh.args(["-c", "kill -SEGV $$"]);
        let r = run_with_stdin(sh, b"", Duration::from_secs(10), Limits::default())
            .await
            .unwrap();
        assert_eq!(r.end, RunEnd::Signal(11));
    }
}
