//! Engines without a usable fresh-realm API run one process per script
//! (Hermes, Duktape, njs, mujs, Rhino): the script is written to a temporary
//! file, the shell runs it, and the engine's host file reads the exit status
//! and output into an [`Outcome`].

use crate::outcome::{Outcome, RunOptions, RunResult, cap_output};
use doppel_core::process::{Limits, ProcessGuard, Sandbox, piped, spawn};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::time::Instant;
use tokio::io::AsyncReadExt;

/// What a finished shell left behind.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Exit code, if it exited normally.
    pub code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// Its stdout (cut at the output cap).
    pub stdout: String,
    /// Its stderr (cut at the output cap).
    pub stderr: String,
}

/// Turns a finished shell run into an outcome and the script's printed
/// output (the engine's own error report removed).
pub type Classify = fn(&Finished) -> (Outcome, String);

/// How to run one script in a fresh process.
#[derive(Debug, Clone)]
pub struct OneShotCommand {
    /// The shell executable.
    pub program: PathBuf,
    /// Arguments before the script path.
    pub args: Vec<String>,
    /// Arguments after the script path.
    pub args_after: Vec<String>,
    /// Reads the result.
    pub classify: Classify,
    /// Resource limits for the shell (`doppel_core::process::Limits`: address
    /// space, CPU time = the script's timeout + 5 s, file size; plus its
    /// program group where cgroups are available). `None` for none; a JVM
    /// shell takes them without the address-space limit (it reserves gigabytes).
    pub limits: Option<Limits>,
}

/// Runs `source` once with `cmd`, killing the process tree at the timeout.
pub async fn run(cmd: &OneShotCommand, source: &str, opts: &RunOptions) -> RunResult {
    let started = Instant::now();
    let done = |outcome: Outcome, output: String, cut: bool| {
        let (output, output_cut) = cap_output(output, opts.output_cap, cut);
        RunResult {
            outcome,
            output,
            output_cut,
            millis: started.elapsed().as_millis() as u64,
        }
    };
    // Started on this task, not the blocking pool: the child's parent-death
    // signal follows the spawning thread, and the pool's threads end when idle.
    let (_dir, mut guard) = match start(cmd, source, opts.timeout) {
        Ok(started) => started,
        Err(reason) => return done(Outcome::HostError { reason }, String::new(), false),
    };
    let child = guard.child_mut();
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return done(
            Outcome::HostError {
                reason: "no pipes".into(),
            },
            String::new(),
            false,
        );
    };
    let cap = opts.output_cap;
    let read_out = tokio::spawn(read_capped(out, cap));
    let read_err = tokio::spawn(read_capped(err, cap));
    let status = guard.wait_timeout(opts.timeout).await;
    // The shell is gone (or timed out); its tree goes too, off this task (a
    // `/proc` scan and short waits). Its pipes close unless a grandchild held them.
    let _guard = match tokio::task::spawn_blocking(move || {
        guard.kill_tree();
        guard
    })
    .await
    {
        Ok(g) => Some(g),
        Err(e) => {
            tracing::warn!("killing the shell's tree: {e}");
            None
        }
    };
    let Some(status) = status else {
        read_out.abort();
        read_err.abort();
        return done(Outcome::Timeout, String::new(), false);
    };
    // Bounded: a descendant that escaped the kill could hold the pipes open.
    let drain = std::time::Duration::from_secs(2);
    let (stdout, out_cut) = tokio::time::timeout(drain, read_out)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let (stderr, _) = tokio::time::timeout(drain, read_err)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let fin = Finished {
        code: status.code(),
        signal: status.signal(),
        stdout,
        stderr,
    };
    if let Some(signal) = fin.signal {
        return done(Outcome::Crash { signal }, fin.stdout, out_cut);
    }
    let (outcome, output) = (cmd.classify)(&fin);
    done(outcome, output, out_cut)
}

/// Reads a pipe to its end, keeping at most `cap` bytes (the rest is drained
/// and dropped, so a flooding shell never blocks). Returns the text and whether it was cut.
async fn read_capped<R: tokio::io::AsyncRead + Unpin>(mut r: R, cap: usize) -> (String, bool) {
    let mut kept = Vec::new();
    let mut cut = false;
    let mut buf = [0u8; 8192];
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let room = cap.saturating_sub(kept.len());
        if n > room {
            cut = true;
        }
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
    (String::from_utf8_lossy(&kept).into_owned(), cut)
}

/// Reads an engine's report of an uncaught throw (`TypeError: msg`, `42`,
/// `null`) into an exception outcome: a leading identifier before `:` is the
/// constructor (the error's name, as the shells print it); a bare primitive
/// gives its type; anything else keeps only the message.
pub fn exception_from_text(text: &str) -> Outcome {
    let text = text.trim();
    let is_ident = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
            && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    let primitive = match text {
        "null" | "undefined" => Some(text),
        "true" | "false" => Some("boolean"),
        _ if text.parse::<f64>().is_ok() || matches!(text, "NaN" | "Infinity" | "-Infinity") => Some("number"),
        _ => None,
    };
    if let Some(kind) = primitive {
        return Outcome::Exception {
            constructor: Some(kind.to_string()),
            message: Some(text.to_string()),
        };
    }
    match text.split_once(':') {
        Some((name, msg)) if is_ident(name) => Outcome::Exception {
            constructor: Some(name.to_string()),
            message: Some(msg.trim().to_string()),
        },
        _ => Outcome::Exception {
            constructor: None,
            message: Some(text.to_string()),
        },
    }
}

/// Writes `source` into a fresh temporary directory and starts `cmd` on it,
/// confined (`doppel_core::process::spawn`, `cmd.limits` with a CPU limit of
/// `timeout` + 5 s). Returns the directory (removed on drop) and
/// the running shell, or why it could not start.
fn start(
    cmd: &OneShotCommand,
    source: &str,
    timeout: std::time::Duration,
) -> Result<(tempfile::TempDir, ProcessGuard), String> {
    let dir = tempfile::Builder::new()
        .prefix("doppel-engine-")
        .tempdir()
        .map_err(|e| format!("temp dir: {e}"))?;
    let file = dir.path().join("test.js");
    std::fs::write(&file, source).map_err(|e| format!("writing the script: {e}"))?;
    let mut command = piped(&cmd.program.to_string_lossy());
    command.args(&cmd.args).arg(&file).args(&cmd.args_after);
    command.stdin(std::process::Stdio::null());
    let guard = spawn(command, Sandbox::shared_loopback())
        .map_err(|e| format!("cannot start {}: {e}", cmd.program.display()))?;
    if let Some(limits) = cmd.limits {
        let limits = Limits {
            cpu_seconds: timeout.as_secs() + 5,
            ..limits
        };
        if let Err(e) = limits.apply_to(guard.pid()) {
            // Gone already (it ran in microseconds) or not permitted: the timeout still holds.
            tracing::debug!("limits on {}: {e}", cmd.program.display());
        }
    }
    Ok((dir, guard))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctor(t: &str) -> Option<String> {
        match exception_from_text(t) {
            Outcome::Exception { constructor, .. } => constructor,
            _ => unreachable!(),
        }
    }

    #[test]
    fn shell_error_texts() {
        assert_eq!(
            ctor("TypeError: cannot read property 'x' of null").as_deref(),
            Some("TypeError")
        );
        assert_eq!(ctor("42").as_deref(), Some("number"));
        assert_eq!(ctor("null").as_deref(), Some("null"));
        assert_eq!(ctor("[object Object]"), None);
        assert_eq!(ctor("/tmp/t.js:1:9: error: invalid expression"), None);
    }
}
