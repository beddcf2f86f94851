//! A long-lived worker process speaking the [`crate::wire`] protocol: one
//! request line in, one response line out, a fresh realm per script inside.
//!
//! The driver owns every wait: start-up (hello line), writing the request and
//! reading the response each have a deadline. On a timeout the worker's whole
//! process tree is killed (`doppel_core::process`) and the next script starts
//! a new one. A worker that exits on a signal is a [`Outcome::Crash`]; one
//! that exits otherwise, prints a line that is not a response (garbage), or
//! floods stdout past the line cap is an [`Outcome::HostError`] with the
//! reason, and is replaced.

use crate::coverage::ProgramCoverage;
use crate::outcome::{Outcome, RunOptions, RunResult, cap_output};
use crate::wire::{self, HELLO, Hello, Request, Response};
use doppel_core::process::{ProcessGuard, Sandbox, piped, spawn};
use std::collections::VecDeque;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

/// How to start a worker.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    /// The executable (`jsc`, a venv's `python`, `node`).
    pub program: PathBuf,
    /// Its arguments (the worker script first).
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Whether the worker stops a script at its timeout itself (an interrupt
    /// handler, `alarm` in a forked child, a node budget) and stays usable;
    /// the driver then waits [`WorkerCommand::grace`] longer before killing it.
    pub own_timeout: bool,
    /// Extra wait beyond the script's timeout before the driver kills the worker.
    pub grace: Duration,
    /// How long the worker may take to print its hello line.
    pub startup: Duration,
}

impl WorkerCommand {
    /// A worker started as `program args...`, without its own timeout.
    pub fn new(program: impl Into<PathBuf>, args: &[&str]) -> Self {
        Self {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Vec::new(),
            own_timeout: false,
            grace: Duration::from_millis(1500),
            startup: Duration::from_secs(60),
        }
    }
}

/// Outcome, output, whether the worker cut it, coverage, inspection.
type Exchanged = (Outcome, String, bool, Option<ProgramCoverage>, Option<Inspection>);

/// An inspector's result (its string) or why there is none.
pub type Inspection = Result<String, String>;

/// Bytes of stderr kept for error reasons.
const STDERR_TAIL: usize = 4096;

struct Live {
    guard: ProcessGuard,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_task: tokio::task::JoinHandle<()>,
}

impl Live {
    /// After the process exited: waits (briefly) until its stderr is drained, then gives the tail.
    async fn stderr_after_exit(&mut self) -> String {
        let _ = tokio::time::timeout(Duration::from_millis(500), &mut self.stderr_task).await;
        stderr_tail(&self.stderr)
    }
}

/// A worker process, started on first use and restarted after a kill.
pub struct Worker {
    cmd: WorkerCommand,
    live: Option<Live>,
    next_id: u64,
    /// Sent with every request ([`Request::clock_skew_ms`]).
    clock_skew_ms: Option<i64>,
    version: Option<String>,
    /// Processes started so far (1 + respawns).
    pub starts: u64,
}

enum LineError {
    Timeout,
    Eof,
    Flood(usize),
    Io(String),
}

impl Worker {
    /// A worker for `cmd` (not started yet).
    pub fn new(cmd: WorkerCommand) -> Self {
        Self {
            cmd,
            live: None,
            next_id: 1,
            clock_skew_ms: None,
            version: None,
            starts: 0,
        }
    }

    /// The version the worker announced in its hello line (after a start).
    pub fn announced_version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// Kills the worker (if running); the next run starts a new one.
    pub fn stop(&mut self) {
        if let Some(mut live) = self.live.take() {
            live.guard.kill_tree();
        }
    }

    async fn start(&mut self, cap: usize) -> Result<(), String> {
        let mut cmd = piped(&self.cmd.program.to_string_lossy());
        cmd.args(&self.cmd.args);
        for (k, v) in &self.cmd.env {
            cmd.env(k, v);
        }
        let mut guard =
            spawn(cmd, Sandbox::default()).map_err(|e| format!("cannot start {}: {e}", self.cmd.program.display()))?;
        self.starts += 1;
        let child = guard.child_mut();
        let stdin = child.stdin.take().ok_or("no stdin pipe")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout pipe")?);
        let mut stderr_pipe = child.stderr.take().ok_or("no stderr pipe")?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr.clone();
        // Drain stderr so the worker never blocks on it; keep the tail for reasons.
        let stderr_task = tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = tail.lock() {
                    t.extend(&buf[..n]);
                    while t.len() > STDERR_TAIL {
                        t.pop_front();
                    }
                }
            }
        });
        let mut live = Live {
            guard,
            stdin,
            stdout,
            stderr,
            stderr_task,
        };
        let deadline = Instant::now() + self.cmd.startup;
        let line = match read_line(&mut live.stdout, deadline, cap).await {
            Ok(l) => l,
            Err(e) => {
                let why = match e {
                    LineError::Timeout => format!("no hello within {:?}", self.cmd.startup),
                    LineError::Eof => "exited before its hello".into(),
                    LineError::Flood(n) => format!("hello line longer than {n} bytes"),
                    LineError::Io(e) => e,
                };
                let status = live.guard.wait_timeout(Duration::from_secs(2)).await;
                live.guard.kill_tree();
                let tail = live.stderr_after_exit().await;
                return Err(format!(
                    "worker {}: {why}{}{}",
                    self.cmd.program.display(),
                    exit_text(status),
                    tail
                ));
            }
        };
        match serde_json::from_str::<Hello>(&line) {
            Ok(h) if h.hello == HELLO => self.version = h.version,
            _ => {
                live.guard.kill_tree();
                return Err(format!(
                    "worker {}: bad hello line {:?}",
                    self.cmd.program.display(),
                    clip(&line)
                ));
            }
        }
        self.live = Some(live);
        Ok(())
    }

    /// Shifts the host clock of the following scripts by `ms` (`None`: the
    /// real clock). Only engine262's worker reads it ([`Request::clock_skew_ms`]).
    pub fn set_clock_skew(&mut self, ms: Option<i64>) {
        self.clock_skew_ms = ms;
    }

    /// Runs one script in a fresh realm of the worker.
    pub async fn run(&mut self, source: &str, opts: &RunOptions) -> RunResult {
        self.run_with_coverage(source, opts).await.0
    }

    /// Runs one script and also returns the semantics coverage the worker
    /// reported (engine262 in coverage mode; `None` from other workers).
    pub async fn run_with_coverage(&mut self, source: &str, opts: &RunOptions) -> (RunResult, Option<ProgramCoverage>) {
        let (result, coverage, _) = self.run_inspected(source, None, opts).await;
        (result, coverage)
    }

    /// Runs one script with an inspector (see [`Request::inspect`]; engine262's
    /// worker only): the run, its coverage (coverage mode), and the inspector's
    /// result (`None` when no inspector ran: no `inspect`, or the run ended
    /// before it, as on a timeout).
    pub async fn run_inspected(
        &mut self,
        source: &str,
        inspect: Option<&str>,
        opts: &RunOptions,
    ) -> (RunResult, Option<ProgramCoverage>, Option<Inspection>) {
        let started = Instant::now();
        // Coverage lists can be long (thousands of step indices): room for them.
        let line_cap = opts.output_cap.saturating_mul(8).saturating_add(1024 * 1024);
        let (outcome, output, cut, coverage, inspection) = self.exchange(source, inspect, opts, line_cap).await;
        let (output, output_cut) = cap_output(output, opts.output_cap, cut);
        let result = RunResult {
            outcome,
            output,
            output_cut,
            millis: started.elapsed().as_millis() as u64,
        };
        (result, coverage, inspection)
    }

    async fn exchange(&mut self, source: &str, inspect: Option<&str>, opts: &RunOptions, line_cap: usize) -> Exchanged {
        if self.live.is_none()
            && let Err(reason) = self.start(line_cap).await
        {
            return (Outcome::HostError { reason }, String::new(), false, None, None);
        }
        let id = self.next_id;
        self.next_id += 1;
        let line = wire::ascii_line(&Request {
            id,
            src: source,
            timeout_ms: opts.timeout.as_millis() as u64,
            output_cap: opts.output_cap,
            inspect,
            clock_skew_ms: self.clock_skew_ms,
        });
        let mut wait = if self.cmd.own_timeout {
            opts.timeout + self.cmd.grace
        } else {
            opts.timeout
        };
        if inspect.is_some() {
            // The inspector's two phases (before and after the program) each get the timeout.
            wait += opts.timeout * 2;
        }
        let deadline = Instant::now() + wait;
        let live = self.live.as_mut().expect("started above");
        let write = async {
            live.stdin.write_all(line.as_bytes()).await?;
            live.stdin.flush().await
        };
        let wrote = tokio::time::timeout_at(deadline.into(), write).await;
        let got = match wrote {
            Err(_) => Err(LineError::Timeout),
            // A closed pipe: the worker died; its exit status tells how.
            Ok(Err(_)) => Err(LineError::Eof),
            Ok(Ok(())) => read_line(&mut live.stdout, deadline, line_cap).await,
        };
        match got {
            Ok(text) => match serde_json::from_str::<Response>(&text) {
                Ok(r) if r.id == id => {
                    let outcome = r.outcome();
                    if matches!(outcome, Outcome::HostError { .. } | Outcome::Crash { .. }) && r.status != "crash" {
                        // The worker said its own state is unknown: start afresh.
                        self.stop();
                    }
                    {
                        let inspection = r.inspection();
                        (outcome, r.stdout, r.stdout_cut, r.coverage, inspection)
                    }
                }
                Ok(r) => {
                    self.stop();
                    let reason = format!("response for request {} while waiting for {id}", r.id);
                    (Outcome::HostError { reason }, String::new(), false, None, None)
                }
                Err(e) => {
                    self.stop();
                    let reason = format!("garbage from the worker ({e}): {:?}", clip(&text));
                    (Outcome::HostError { reason }, String::new(), false, None, None)
                }
            },
            Err(LineError::Timeout) => {
                self.stop();
                (Outcome::Timeout, String::new(), false, None, None)
            }
            Err(LineError::Flood(n)) => {
                self.stop();
                let reason = format!("the worker flooded stdout: more than {n} bytes without a line end");
                (Outcome::HostError { reason }, String::new(), false, None, None)
            }
            Err(LineError::Io(e)) => {
                self.stop();
                (Outcome::HostError { reason: e }, String::new(), false, None, None)
            }
            Err(LineError::Eof) => {
                let mut live = self.live.take().expect("present");
                let status = live.guard.wait_timeout(Duration::from_secs(2)).await;
                live.guard.kill_tree();
                let tail = live.stderr_after_exit().await;
                match status.and_then(|s| s.signal()) {
                    Some(signal) => (Outcome::Crash { signal }, String::new(), false, None, None),
                    None => {
                        let reason = format!("the worker exited{}{}", exit_text(status), tail);
                        (Outcome::HostError { reason }, String::new(), false, None, None)
                    }
                }
            }
        }
    }
}

/// Reads one line (without its end) of at most `cap` bytes before `deadline`.
async fn read_line(r: &mut BufReader<ChildStdout>, deadline: Instant, cap: usize) -> Result<String, LineError> {
    let mut line: Vec<u8> = Vec::new();
    loop {
        let buf = match tokio::time::timeout_at(deadline.into(), r.fill_buf()).await {
            Err(_) => return Err(LineError::Timeout),
            Ok(Err(e)) => return Err(LineError::Io(format!("reading the worker's stdout: {e}"))),
            Ok(Ok(b)) => b,
        };
        if buf.is_empty() {
            return Err(LineError::Eof);
        }
        let (take, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        line.extend_from_slice(&buf[..take]);
        r.consume(take);
        if line.len() > cap {
            return Err(LineError::Flood(cap));
        }
        if done {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(String::from_utf8_lossy(&line).into_owned());
        }
    }
}

fn stderr_tail(t: &Arc<Mutex<VecDeque<u8>>>) -> String {
    let bytes: Vec<u8> = t.lock().map(|t| t.iter().copied().collect()).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        format!("; stderr: {}", clip(text))
    }
}

fn exit_text(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!(" with code {c}"),
            (_, Some(sig)) => format!(" on signal {sig}"),
            _ => String::new(),
        },
        None => String::new(),
    }
}

/// At most 300 chars of `s`, for error reasons.
pub(crate) fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(300).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}
