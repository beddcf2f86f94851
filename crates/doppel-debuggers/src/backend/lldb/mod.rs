//! LLDB over the Debug Adapter Protocol (`lldb-dap-N`, formerly `lldb-vscode-N`).
//!
//! One run, as DAP requests:
//!
//! 1. `load`: an adapter that has already answered `initialize`; `launch`
//!    {program, cwd, stopOnEntry: false}; wait for the `initialized` event.
//!    The `process` event gives the inferior's pid, which gets the resource
//!    limits (lldb-dap 19 sends it here, 22 after `configurationDone`).
//! 2. `set_breakpoint` / `remove_breakpoint`: `setBreakpoints` replaces the
//!    whole set for a source, so the backend keeps the requested lines and
//!    sends them all; the entry for the requested line gives the resolved
//!    `line`/`column` (`verified: false` = rejected, with the adapter's message).
//! 3. `start`: `configurationDone`; the `launch` response is awaited from the
//!    backlog (it comes early in lldb-dap 19, after `configurationDone` in 22);
//!    then `stopped` or `exited`.
//! 4. exec: `continue` / `stepIn` / `next` / `stepOut` with the stopped
//!    thread, then `stopped` or `exited`.
//! 5. Paused state: `stackTrace` (at most 64 frames, as GDB's backend), `scopes`
//!    of frame 0, `variables` of its `Locals` scope (expanded through
//!    `variablesReference` to `value_depth` levels, at most 64 members per
//!    level; strings are not expanded into characters), and the arguments'
//!    names from the REPL command `` `frame variable --no-locals ``.
//! 6. `reset`: the adapter and everything below it (lldb-server, the
//!    inferior) are killed at once; waiting for a clean exit after
//!    `disconnect` costs 300-500 ms.
//!
//! Warm reuse, two ways, chosen by what the adapter can do:
//! - *Server mode* (lldb-dap 20 and later, `--connection`): lldb-dap
//!   processes listen on a loopback TCP port (inside the sandbox's network
//!   namespace; lldb-dap 22 stops accepting on a Unix socket after two or
//!   three connections) and serve every run over a connection of its own (a
//!   fresh DAP session and `SBDebugger` each). LLDB's module cache is per
//!   process, so parsed debug info is reused. `reset` sends `disconnect
//!   {terminateDebuggee}` and kills the program at once; the adapter then
//!   spends ~170 ms tearing the session down, serving no other meanwhile, so
//!   the backend keeps a pool of up to [`MAX_SERVERS`] servers and gives the
//!   next run an idle one, while the connection of the last run is read to
//!   its end in the background (closing it early kills lldb-dap 22 with
//!   SIGPIPE). A hang or crash kills that server and the next `load` takes
//!   or starts another; a server is also replaced every
//!   [`SERVER_RECYCLE_SESSIONS`] runs, so a slow leak in the adapter cannot
//!   grow over a long campaign.
//! - *Spare adapter* (lldb-dap 19 and older): the protocol allows one launch
//!   per adapter, and a second `launch` in the same lldb-dap 19 process after
//!   `disconnect` crashes it (`free(): invalid pointer`). Warm mode then keeps
//!   one spare adapter, started and initialized in the background while the
//!   current run executes; `load` takes it (the ~250 ms start of lldb-dap,
//!   mostly its embedded Python, is off the critical path), but every run
//!   re-reads the C library's debug info.
//!
//! *Preloading* (server mode): after a `load`, the subject named by the last
//! [`Debugger::preload`] hint is launched in the background on another idle
//! server of the pool (connect, `initialize`, `launch`, up to the
//! `initialized` event, which lldb-dap 22 sends once it has created the
//! target and started the program, stopped before `main`, under
//! lldb-server: ~46 ms of a ~85 ms run). The next `load` of that binary
//! adopts the session; a `load` of another binary disconnects it
//! (`terminateDebuggee`) in the background. The program waits, stopped,
//! until `configurationDone`, so a preloaded run behaves as a plain one;
//! its resource limits are applied when it is adopted.
//!
//! `warm = false` starts a fresh adapter over stdio on every `load`, as
//! DBDB's implementation does.
//!
//! System debug info: unless [`DebuggerConfig::system_debug_info`] is set,
//! `symbols.enable-external-lookup` is off, so LLDB does not load separate
//! debug files (libc6-dbg) for the system libraries, as the GDB backend does.
//!
//! Host probe: every launch starts an `lldb-server` that runs `lsb_release`
//! twice (~30 ms); as root the adapter runs in a mount namespace where a
//! script gives the same answer at once (`lldb_host.rs`), warm and fresh alike.
//!
//! Re-stop at a breakpoint a step ended on (LLDB 20 and later): LLDB counts
//! a breakpoint as hit only when it executes the breakpoint's trap, so a
//! step that ends on an enabled breakpoint's address stops with reason
//! `step`, and the next `continue`, `stepIn`, `next` or `stepOut` stops at
//! once at the same address with reason `breakpoint` (the pc does not move).
//! A breakpoint set at the pc while stopped does not do this: LLDB steps
//! past it silently. With [`DebuggerConfig::absorb_breakpoint_restop`] the
//! backend notes, at every stop that is not a breakpoint hit, whether the
//! pc is the address (`instructionReference` of the `setBreakpoints`
//! answer) of a breakpoint set before that stop; if so, and the next
//! action's stop is a breakpoint hit with the same pc in every frame, the
//! action is sent once more and its stop is the answer. The transcript
//! keeps both stops and a `[doppel]` line between them. Only a
//! breakpoint's first location is known (DAP gives one address per
//! breakpoint): a re-stop at another location of a line breakpoint with
//! several is not absorbed.
//!
//! Quirks: every message has `seq: 0`; the call stack continues below `main`
//! into libc when libc6-dbg is installed (`__libc_start_call_main`, ...;
//! normalization drops those frames); program output arrives as `output`
//! events with `\r\n`.

//!
//! Files: this one (the backend: launches, breakpoints, steps, stops),
//! `adapter.rs` (adapter processes, servers and DAP sessions), `warm.rs`
//! (warm reuse: the spare adapter, the server pool, preloading) and
//! `state.rs` (step 5: the paused state; re-stop and signal helpers).

mod adapter;
mod state;
mod warm;

use super::Fail;
use super::lldb_host::HostShim;
use crate::protocol::dap::{DapClient, DapError};
use crate::registry::BackendEntry;
use crate::{BackendError, Capabilities, Debugger, DebuggerConfig};
use adapter::*;
use async_trait::async_trait;
use doppel_core::process::{self, ProcessGuard};
use doppel_core::{
    ExecAction, FailureKind, Frame, Language, Location, Output, PauseReason, ProgramState, RawMessage, Subject,
    ToolInfo, Value, Variable, VariableKind,
};
use serde_json::{Value as Json, json};
use state::*;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio::task::JoinHandle;

/// The start of the transcript line that marks an absorbed re-stop (see
/// the module docs): the action before it was sent twice.
pub const RESTOP_ABSORBED: &str =
    "[doppel] LLDB stopped again, without moving, at the breakpoint the last step ended on";

/// Frames read per pause.
pub const MAX_FRAMES: usize = 64;
/// Members read per aggregate level.
pub const MAX_CHILDREN: usize = 64;
/// Runs one adapter server serves before it is replaced.
pub const SERVER_RECYCLE_SESSIONS: u32 = 500;
/// Adapter servers kept warm at most. After `disconnect`, lldb-dap 22 spends
/// ~170 ms tearing the session down and serves no other session meanwhile
/// (measured: the next session's launch waits for it), so the next run goes
/// to an idle server of the pool. With runs of ~50 ms, two or three servers
/// are tearing down at any time, one serves the run and one holds the
/// preloaded next run: with three, preloads found no idle server in three
/// runs out of four (measured on the bundled corpus); six leave room.
pub const MAX_SERVERS: usize = 6;
/// Longest wait for a clean `disconnect` at the end of a run in server mode;
/// after it the server is killed.
const DISCONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The registry entry.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: "lldb",
        languages: &[Language::C],
        probe,
        create: |cfg| Ok(Box::new(Lldb::new(cfg)?)),
    }
}

/// Finds the adapter: the configured executable, else the highest
/// `lldb-dap-N` / `lldb-vscode-N` on `PATH`, else `lldb-dap` / `lldb-vscode`.
fn executable(cfg: &DebuggerConfig) -> Result<PathBuf, BackendError> {
    let not_found = |what: String| BackendError::NotInstalled {
        name: "lldb".into(),
        hint: format!("{what}; apt-get install lldb-22 (or lldb-19)"),
    };
    if let Some(exe) = &cfg.executable {
        return super::which(exe).ok_or_else(|| not_found(format!("'{exe}' not found")));
    }
    let mut best: Option<(u32, PathBuf)> = None;
    for dir in std::env::var("PATH").unwrap_or_default().split(':') {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let v = name
                .strip_prefix("lldb-dap-")
                .or_else(|| name.strip_prefix("lldb-vscode-"))
                .and_then(|v| v.parse::<u32>().ok());
            if let Some(v) = v
                && best.as_ref().is_none_or(|(b, _)| v > *b)
            {
                best = Some((v, e.path()));
            }
        }
    }
    best.map(|(_, p)| p)
        .or_else(|| super::which("lldb-dap"))
        .or_else(|| super::which("lldb-vscode"))
        .ok_or_else(|| not_found("no lldb-dap-N or lldb-vscode-N on PATH".into()))
}

fn probe(cfg: &DebuggerConfig) -> Result<ToolInfo, BackendError> {
    let exe = executable(cfg)?;
    // The matching CLI (lldb-22 for lldb-dap-22) gives the version.
    let name = exe
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let cli = exe.with_file_name(name.replace("lldb-dap", "lldb").replace("lldb-vscode", "lldb"));
    let version = super::version_line(&cli, &["--version"])?.unwrap_or_else(|| name.clone());
    Ok(ToolInfo {
        name: "lldb".into(),
        version,
        protocol: "DAP".into(),
        executable: exe.display().to_string(),
    })
}

/// The LLDB backend. See the module documentation.
pub struct Lldb {
    info: ToolInfo,
    cfg: DebuggerConfig,
    exe: PathBuf,
    /// Warm reuse through the adapter's server mode (see the module docs).
    server_mode: bool,
    /// The pool of adapter servers (server mode), and the one serving the current run.
    servers: Vec<Server>,
    current: Option<usize>,
    session: Option<Session>,
    spare: Option<JoinHandle<Result<Session, String>>>,
    /// The subject of the last preload hint, and the run launched for it.
    next: Option<Subject>,
    preloaded: Option<Preloaded>,
    inferior_pid: Option<u32>,
    transcript: crate::protocol::Transcript,
    subject: Option<Subject>,
    lines: BTreeSet<u32>,
    launch_seq: Option<i64>,
    thread: Option<i64>,
    /// The DAP id of the top frame of the last pause (for `evaluate`).
    top_frame: Option<i64>,
    /// The top frame's `instructionPointerReference` at the last pause
    /// (`evaluate("$pc")`).
    top_pc: Option<String>,
    output: String,
    /// Requested line → the address its breakpoint resolved to (the
    /// `instructionReference` of the last `setBreakpoints` answer).
    breakpoint_addresses: std::collections::BTreeMap<u32, u64>,
    /// The pc of every frame at the last pause, innermost first.
    stack_pcs: Vec<u64>,
    /// Set (to the pause's frame pcs) when the last pause was not a
    /// breakpoint hit but its pc is the address of a breakpoint set before
    /// it: the next action will stop there again (see the module docs).
    armed: Option<Vec<u64>>,
}

impl Lldb {
    /// Creates the backend; the adapter starts on the first `load`.
    ///
    /// Errors: [`BackendError::NotInstalled`] when no adapter is found.
    pub fn new(cfg: &DebuggerConfig) -> Result<Self, BackendError> {
        let info = probe(cfg)?;
        let exe = executable(cfg)?;
        Ok(Self {
            info,
            cfg: cfg.clone(),
            server_mode: cfg.warm && has_server_mode(&exe),
            exe,
            servers: Vec::new(),
            current: None,
            session: None,
            spare: None,
            next: None,
            preloaded: None,
            inferior_pid: None,
            transcript: crate::protocol::Transcript::default(),
            subject: None,
            lines: BTreeSet::new(),
            launch_seq: None,
            thread: None,
            top_frame: None,
            top_pc: None,
            output: String::new(),
            breakpoint_addresses: std::collections::BTreeMap::new(),
            stack_pcs: Vec::new(),
            armed: None,
        })
    }

    /// The pid of the adapter process of the current run (the server in
    /// server mode), if any (for tests).
    pub fn debugger_pid(&self) -> Option<u32> {
        self.session
            .as_ref()
            .and_then(|s| s.guard.as_ref())
            .or(self.current_server().map(|s| &s.guard))
            .map(|g| g.pid())
    }

    /// The pids of the adapter servers kept warm (for tests).
    pub fn server_pids(&self) -> Vec<u32> {
        self.servers.iter().map(|s| s.guard.pid()).collect()
    }

    fn current_server(&self) -> Option<&Server> {
        self.current.and_then(|i| self.servers.get(i))
    }

    /// Whether runs are served by one adapter in server mode.
    pub fn uses_server_mode(&self) -> bool {
        self.server_mode
    }

    fn dap(&mut self) -> Result<&mut DapClient, Fail> {
        self.session
            .as_mut()
            .map(|s| &mut s.dap)
            .ok_or_else(|| Fail::Crash("lldb-dap is not running".into()))
    }

    /// Turns a DAP error into a failure; a dead or hung adapter is killed.
    fn fail(&mut self, e: DapError) -> Fail {
        let f = Fail::from(e);
        if let Fail::Crash(d) = &f {
            let tail = self
                .session
                .as_ref()
                .map(|s| s.stderr.last_lines(5))
                .unwrap_or_default();
            let d = if tail.is_empty() {
                d.clone()
            } else {
                format!("{d}; stderr: {tail}")
            };
            self.kill();
            return Fail::Crash(d);
        }
        if matches!(f, Fail::Timeout(_)) {
            self.kill();
        }
        f
    }

    async fn request(&mut self, command: &str, args: Json) -> Result<Json, Fail> {
        let r = self.dap()?.request(command, args).await;
        r.map_err(|e| self.fail(e))
    }

    async fn launch(&mut self, subject: &Subject) -> Result<(), Fail> {
        let args = launch_args(subject, &self.cfg).map_err(Fail::Protocol)?;
        let r = send_launch(self.dap()?, args).await;
        match r {
            Ok(seq) => self.launch_seq = Some(seq),
            Err(Ok(msg)) => return Err(Fail::Protocol(msg)),
            Err(Err(e)) => return Err(self.fail(e)),
        }
        // lldb-dap 19 has launched the program by now; 22 launches it at
        // configurationDone (see `start`).
        self.limit_inferior(false).await;
        Ok(())
    }

    /// Puts the resource limits on the program, once its pid is known from
    /// the `process` event. With `wait`, waits for that event (bounded by
    /// the action timeout). A failure is noted in the transcript.
    async fn limit_inferior(&mut self, wait: bool) {
        if self.inferior_pid.is_some() {
            return;
        }
        let Ok(dap) = self.dap() else {
            return;
        };
        let mut event = dap.take_events("process").into_iter().next();
        if event.is_none() && wait {
            event = dap
                .wait_for("the process event", |m| m["event"] == "process")
                .await
                .ok();
        }
        let Some(pid) = event.and_then(|p| p["body"]["systemProcessId"].as_u64()) else {
            if wait {
                self.transcript.push(RawMessage::received(
                    "[doppel] no process event: resource limits not applied",
                ));
            }
            return;
        };
        self.inferior_pid = Some(pid as u32);
        if let Err(e) = self.cfg.limits.apply_to(pid as u32) {
            self.transcript.push(RawMessage::received(format!(
                "[doppel] resource limits not applied to {pid}: {e}"
            )));
        }
    }

    async fn send_breakpoints(&mut self) -> Result<Json, Fail> {
        let source = self
            .subject
            .as_ref()
            .map(|s| s.source.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bps: Vec<Json> = self.lines.iter().map(|l| json!({"line": l})).collect();
        let body = self
            .request(
                "setBreakpoints",
                json!({"source": {"path": source}, "breakpoints": bps}),
            )
            .await?;
        // The answer lists the breakpoints in the order of the request.
        self.breakpoint_addresses = self
            .lines
            .iter()
            .zip(body["breakpoints"].as_array().cloned().unwrap_or_default())
            .filter(|(_, bp)| bp["verified"] == true)
            .filter_map(|(l, bp)| Some((*l, address(bp["instructionReference"].as_str()?)?)))
            .collect();
        // A removed breakpoint no longer stops the next action.
        if let Some(pc) = self.armed.as_ref().and_then(|a| a.first())
            && !self.breakpoint_addresses.values().any(|a| a == pc)
        {
            self.armed = None;
        }
        Ok(body)
    }

    fn map_file(&self, path: Option<&str>, name: Option<&str>) -> String {
        match (path, &self.subject) {
            (Some(p), Some(s)) if same_file(Path::new(p), &s.source) => s.source_name.clone(),
            (Some(p), _) => Path::new(p)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.to_string()),
            (None, _) => name.unwrap_or("??").to_string(),
        }
    }

    /// Sends one run or step request and waits for its stop.
    async fn exec_once(&mut self, command: &str) -> Output {
        let thread = self.thread.unwrap_or(0);
        if let Err(f) = self.request(command, json!({"threadId": thread})).await {
            return f.output();
        }
        self.wait_stop().await
    }

    /// Waits for the program to stop or end after a run or step request.
    async fn wait_stop(&mut self) -> Output {
        let ev = match self.dap() {
            Ok(d) => d.event(&["stopped", "exited", "terminated"]).await,
            Err(f) => return f.output(),
        };
        self.armed = None;
        let ev = match ev {
            Ok(e) => e,
            Err(e) => return self.fail(e).output(),
        };
        match ev["event"].as_str() {
            Some("stopped") => {
                self.thread = ev["body"]["threadId"].as_i64().or(self.thread);
                let desc = ev["body"]["description"]
                    .as_str()
                    .or(ev["body"]["text"].as_str())
                    .unwrap_or("");
                let (reason, signal) = match ev["body"]["reason"].as_str().unwrap_or("") {
                    "breakpoint" => (PauseReason::Breakpoint, None),
                    "step" => (PauseReason::Step, None),
                    "entry" => (PauseReason::Entry, None),
                    "exception" | "signal" => (PauseReason::Signal, signal_name(desc)),
                    _ => (PauseReason::Other, None),
                };
                let out = match self.state(reason, signal).await {
                    Ok(s) => Output::Paused(s),
                    Err(f) => f.output(),
                };
                self.armed = if self.cfg.absorb_breakpoint_restop && matches!(out, Output::Paused(_)) {
                    arms(reason, &self.stack_pcs, self.breakpoint_addresses.values())
                } else {
                    None
                };
                out
            }
            Some("exited") => {
                let code = ev["body"]["exitCode"].as_i64().map(|c| c as i32);
                // lldb reports a death by signal as an exit; its console line says which.
                let console = self.console_text();
                let signal = console_signal(&console);
                Output::Finished {
                    exit_code: if signal.is_some() { None } else { code },
                    signal,
                }
            }
            _ => Output::Finished {
                exit_code: None,
                signal: None,
            },
        }
    }

    fn console_text(&mut self) -> String {
        let Ok(d) = self.dap() else {
            return String::new();
        };
        d.take_events("output")
            .iter()
            .filter_map(|o| o["body"]["output"].as_str().map(str::to_string))
            .collect()
    }
}
#[async_trait]
impl Debugger for Lldb {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            columns: true,
            warm_reuse: self.server_mode,
            argument_flags: true,
            notes: vec![
                if self.server_mode {
                    "one adapter in server mode serves every run (module cache shared)".into()
                } else {
                    "one launch per adapter (no server mode before lldb-dap 20): warm mode keeps an initialized spare adapter".into()
                },
                "arguments flagged through the REPL command `frame variable --no-locals`".into(),
                format!("call stacks read to {MAX_FRAMES} frames"),
                HostShim::describe(),
            ],
        }
    }

    async fn load(&mut self, subject: &Subject) -> Output {
        self.end_session().await;
        self.subject = Some(subject.clone());
        self.lines.clear();
        self.output.clear();
        self.breakpoint_addresses.clear();
        self.stack_pcs.clear();
        self.armed = None;
        if self.adopt_preloaded(subject).await.is_some() {
            self.start_preload().await;
            return Output::Finished {
                exit_code: None,
                signal: None,
            };
        }
        match self.new_session().await {
            Ok(s) => self.session = Some(s),
            Err(e) => {
                self.kill();
                return Output::failed(FailureKind::Launch, e);
            }
        }
        if let Err(f) = self.launch(subject).await {
            self.kill();
            // A server that died during the launch of a new session may have
            // been hurt by an earlier one: one retry on a fresh server, and
            // the transcript says so. A second failure is this run's.
            if !(self.server_mode && matches!(f, Fail::Crash(_))) {
                return f.launch();
            }
            self.transcript.push(RawMessage::received(
                "[doppel] the adapter server died during launch; retrying once on a new server",
            ));
            match self.new_session().await {
                Ok(s) => self.session = Some(s),
                Err(e) => return Output::failed(FailureKind::Launch, e),
            }
            if let Err(f) = self.launch(subject).await {
                self.kill();
                return f.launch();
            }
        }
        self.spawn_spare();
        self.start_preload().await;
        Output::Finished {
            exit_code: None,
            signal: None,
        }
    }

    fn preload(&mut self, subject: &Subject) {
        if self.server_mode {
            self.next = Some(subject.clone());
        }
    }

    async fn set_breakpoint(&mut self, at: &Location) -> Output {
        self.lines.insert(at.line);
        let body = match self.send_breakpoints().await {
            Ok(b) => b,
            Err(Fail::Protocol(m)) => {
                return Output::BreakpointSet {
                    requested: at.clone(),
                    resolved: None,
                    message: Some(m),
                };
            }
            Err(f) => return f.output(),
        };
        let idx = self.lines.iter().position(|l| *l == at.line).unwrap_or(0);
        let Some(bp) = body["breakpoints"].get(idx) else {
            return Output::failed(
                FailureKind::Protocol,
                format!("setBreakpoints answered without entry {idx}"),
            );
        };
        let resolved = (bp["verified"] == true)
            .then(|| bp["line"].as_u64())
            .flatten()
            .map(|line| Location {
                file: self.map_file(bp["source"]["path"].as_str(), bp["source"]["name"].as_str()),
                line: line as u32,
                column: bp["column"].as_u64().map(|c| c as u32),
            });
        let message = bp["message"]
            .as_str()
            .map(str::to_string)
            .or_else(|| resolved.is_none().then(|| "not verified".into()));
        Output::BreakpointSet {
            requested: at.clone(),
            resolved,
            message,
        }
    }

    async fn remove_breakpoint(&mut self, at: &Location) -> Output {
        if !self.lines.remove(&at.line) {
            return Output::BreakpointRemoved {
                ok: false,
                message: Some(format!("no breakpoint was set at line {}", at.line)),
            };
        }
        match self.send_breakpoints().await {
            Ok(_) => Output::BreakpointRemoved {
                ok: true,
                message: None,
            },
            Err(Fail::Protocol(m)) => Output::BreakpointRemoved {
                ok: false,
                message: Some(m),
            },
            Err(f) => f.output(),
        }
    }

    async fn start(&mut self) -> Output {
        if let Err(f) = self.request("configurationDone", json!({})).await {
            return f.output();
        }
        self.limit_inferior(true).await;
        if let Some(seq) = self.launch_seq.take() {
            let r = match self.dap() {
                Ok(d) => d.response(seq, "launch").await,
                Err(f) => return f.output(),
            };
            if let Err(e) = r {
                return self.fail(e).output();
            }
        }
        self.wait_stop().await
    }

    async fn exec(&mut self, action: ExecAction) -> Output {
        let command = match action {
            ExecAction::Resume => "continue",
            ExecAction::StepIn => "stepIn",
            ExecAction::StepOver => "next",
            ExecAction::StepOut => "stepOut",
        };
        let armed = self.armed.take();
        let out = self.exec_once(command).await;
        match (armed, &out) {
            (Some(before), Output::Paused(s)) if is_restop(&before, s.reason, &self.stack_pcs) => {
                if let Some(s) = self.session.as_mut() {
                    self.transcript.extend(s.dap.take_transcript());
                }
                self.transcript.push(RawMessage::received(format!(
                    "{RESTOP_ABSORBED}; '{command}' sent once more (absorb_breakpoint_restop)"
                )));
                self.exec_once(command).await
            }
            _ => out,
        }
    }

    async fn reset(&mut self) {
        self.end_session().await;
        if !self.cfg.warm {
            self.shutdown().await;
        }
    }

    async fn shutdown(&mut self) {
        self.end_session().await;
        self.kill();
        self.next = None;
        if let Some(p) = self.preloaded.take() {
            p.task.abort();
        }
        for mut server in self.servers.drain(..) {
            server.guard.kill_tree();
        }
        if let Some(h) = self.spare.take()
            && let Ok(Ok(s)) = tokio::time::timeout(Duration::from_secs(5), h)
                .await
                .unwrap_or(Ok(Err(String::new())))
            && let Some(mut g) = s.guard
        {
            g.kill_tree();
        }
    }

    fn take_transcript(&mut self) -> Vec<RawMessage> {
        if let Some(s) = self.session.as_mut() {
            self.transcript.extend(s.dap.take_transcript());
        }
        self.transcript.take()
    }

    /// DAP `evaluate` in the `hover` context: lldb-dap resolves the name as
    /// a variable path of the top frame (`frame variable v`), without
    /// compiling an expression (which can fail with "Couldn't materialize").
    async fn evaluate(&mut self, expression: &str) -> crate::Evaluation {
        use crate::Evaluation;
        let Some(frame_id) = self.top_frame else {
            return Evaluation::Refused("the program is not paused".into());
        };
        if expression == "$pc" {
            // lldb-dap resolves hover expressions as variable paths, which
            // registers are not; the stack trace gave the address.
            return match &self.top_pc {
                Some(pc) => Evaluation::Value(Value::scalar(pc.clone())),
                None => Evaluation::Refused("lldb-dap gave no instruction pointer".into()),
            };
        }
        let body = match self
            .request(
                "evaluate",
                json!({"expression": expression, "context": "hover", "frameId": frame_id}),
            )
            .await
        {
            Ok(b) => b,
            Err(Fail::Protocol(msg)) => return Evaluation::Refused(msg),
            Err(f) => return Evaluation::Failed(f.output()),
        };
        let text = body["result"].as_str().unwrap_or("").to_string();
        let reference = body["variablesReference"].as_i64().unwrap_or(0);
        let is_pointer = body["type"]
            .as_str()
            .is_some_and(|t| t.trim_end().ends_with('*') || t.contains("(*)"));
        let children = if reference > 0 && !is_pointer && !text.contains('"') {
            match self.variables(reference, self.cfg.value_depth.saturating_sub(1)).await {
                Ok(c) => c,
                Err(f) => return Evaluation::Failed(f.output()),
            }
        } else {
            Vec::new()
        };
        Evaluation::Value(Value { text, children })
    }

    fn program_output(&self) -> String {
        let live = self
            .session
            .as_ref()
            .map(|s| s.dap.program_output.as_str())
            .unwrap_or("");
        format!("{}{live}", self.output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_port_is_read_from_its_first_line() {
        assert_eq!(
            listening_port("Listening for: connection://[127.0.0.1]:38905"),
            Some(38905)
        );
        assert_eq!(
            listening_port("Listening for: connection://[127.0.0.1]:38905\r\n"),
            Some(38905)
        );
        assert_eq!(listening_port("error: address in use"), None);
    }

    #[test]
    fn addresses_are_read_in_either_case() {
        assert_eq!(address("0x555555555177"), Some(0x5555_5555_5177));
        assert_eq!(address("0x7FFFF7DFB24A"), Some(0x7fff_f7df_b24a));
        assert_eq!(address("555555555177"), None);
        assert_eq!(address("0xzz"), None);
    }

    #[test]
    fn only_a_step_onto_a_breakpoint_address_is_armed_and_only_a_standing_hit_absorbed() {
        let bps = [0x1177u64, 0x1194];
        let at = [0x1177u64, 0x7fff_0000];
        // A step that ended on a breakpoint's address arms; a hit or a pause
        // elsewhere does not.
        assert_eq!(arms(PauseReason::Step, &at, &bps), Some(at.to_vec()));
        assert_eq!(arms(PauseReason::Breakpoint, &at, &bps), None);
        assert_eq!(arms(PauseReason::Step, &[0x1173, 0x7fff_0000], &bps), None);
        assert_eq!(arms(PauseReason::Step, &[], &bps), None);
        // The re-stop: a breakpoint hit at the same pc in every frame.
        assert!(is_restop(&at, PauseReason::Breakpoint, &at));
        assert!(!is_restop(&at, PauseReason::Step, &at));
        // The same pc in a deeper or another frame (recursion) moved.
        assert!(!is_restop(&at, PauseReason::Breakpoint, &[0x1177, 0x1200, 0x7fff_0000]));
        assert!(!is_restop(&at, PauseReason::Breakpoint, &[0x1177, 0x7fff_0008]));
        assert!(!is_restop(&[], PauseReason::Breakpoint, &[]));
    }

    #[test]
    fn signal_names_are_found_in_lldb_prose() {
        assert_eq!(
            signal_name("signal SIGSEGV: invalid address (fault address: 0x0)").as_deref(),
            Some("SIGSEGV")
        );
        assert_eq!(signal_name("breakpoint 1.1"), None);
        assert_eq!(
            console_signal("Process 7 exited with status = -1 (0xffffffff) signal SIGSEGV\n").as_deref(),
            Some("SIGSEGV")
        );
        assert_eq!(console_signal("Process 7 exited with status = 0 (0x00000000) \n"), None);
    }
}
