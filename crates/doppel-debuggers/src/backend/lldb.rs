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

use super::Fail;
use super::lldb_host::HostShim;
use crate::protocol::dap::{DapClient, DapError};
use crate::registry::BackendEntry;
use crate::{BackendError, Capabilities, Debugger, DebuggerConfig};
use async_trait::async_trait;
use doppel_core::process::{self, ProcessGuard};
use doppel_core::{
    ExecAction, FailureKind, Frame, Language, Location, Output, PauseReason, ProgramState, RawMessage, Subject,
    ToolInfo, Value, Variable, VariableKind,
};
use serde_json::{Value as Json, json};
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
    let version = super::version_line(&cli, &["--version"]).unwrap_or_else(|| name.clone());
    Ok(ToolInfo {
        name: "lldb".into(),
        version,
        protocol: "DAP".into(),
        executable: exe.display().to_string(),
    })
}

/// A run launched ahead of its `load` (see the module documentation).
struct Preloaded {
    /// The binary it launched.
    binary: PathBuf,
    /// The pid of the server it runs on.
    server_pid: u32,
    /// The session and the `launch` request's seq, once `initialized` came.
    task: JoinHandle<Result<(Session, i64), String>>,
}

struct Session {
    /// The adapter process of a stdio session; `None` for a connection to the server.
    guard: Option<ProcessGuard>,
    dap: DapClient,
    stderr: super::StderrTail,
}

/// An adapter in server mode (`lldb-dap --connection listen://127.0.0.1:0`).
struct Server {
    guard: ProcessGuard,
    port: u16,
    stderr: super::StderrTail,
    /// Sessions served so far.
    sessions: u32,
    /// Cleared when a session's connection was not closed by the adapter
    /// after `disconnect`: the server is then replaced before the next run.
    healthy: Arc<AtomicBool>,
    /// Set while no session is connected or tearing down.
    idle: Arc<AtomicBool>,
}

impl Server {
    fn usable(&mut self) -> bool {
        !self.guard.has_exited() && self.sessions < SERVER_RECYCLE_SESSIONS && self.healthy.load(Ordering::SeqCst)
    }
}

/// Whether the adapter has a server mode (`--connection`, lldb-dap 20+).
fn has_server_mode(exe: &Path) -> bool {
    std::process::Command::new(exe)
        .arg("--help")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--connection"))
}

/// The commands every launch starts with.
fn init_commands(cfg: &DebuggerConfig) -> Vec<String> {
    // The on-disk DWARF index cache spares each fresh adapter re-indexing
    // debug info (libc's, with libc6-dbg: ~630 → ~470 ms to a breakpoint).
    let mut c = vec!["settings set symbols.enable-lldb-index-cache true".to_string()];
    if !cfg.system_debug_info {
        c.push("settings set symbols.enable-external-lookup false".into());
    }
    c
}

async fn initialize(dap: &mut DapClient) -> Result<(), String> {
    dap.request(
        "initialize",
        json!({"clientID": "doppel", "clientName": "doppel", "adapterID": "lldb", "linesStartAt1": true,
               "columnsStartAt1": true, "pathFormat": "path", "supportsRunInTerminalRequest": false,
               "supportsVariableType": true}),
    )
    .await
    .map(|_| ())
    .map_err(|e| format!("initialize: {e}"))
}

/// A fresh adapter over stdio, initialized.
async fn start_stdio_session(exe: PathBuf, cfg: DebuggerConfig) -> Result<Session, String> {
    let mut cmd = process::piped(&exe.to_string_lossy());
    super::fixed_environment(&mut cmd);
    if let Ok(shim) = HostShim::get() {
        shim.install(&mut cmd);
    }
    let mut guard = process::spawn(cmd, cfg.sandbox).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let child = guard.child_mut();
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("adapter pipes missing".into());
    };
    let stderr = super::StderrTail::collect(child.stderr.take());
    let mut dap = DapClient::new(stdin, stdout, cfg.action_timeout);
    initialize(&mut dap).await?;
    Ok(Session {
        guard: Some(guard),
        dap,
        stderr,
    })
}

/// Starts the adapter in server mode and waits (within the action timeout)
/// until it listens.
async fn start_server(exe: &Path, cfg: &DebuggerConfig) -> Result<Server, String> {
    let mut cmd = process::piped(&exe.to_string_lossy());
    cmd.args(["--connection", "listen://127.0.0.1:0"]);
    super::fixed_environment(&mut cmd);
    if let Ok(shim) = HostShim::get() {
        shim.install(&mut cmd);
    }
    let mut guard =
        process::spawn(cmd, cfg.sandbox).map_err(|e| format!("cannot start {} as a server: {e}", exe.display()))?;
    let child = guard.child_mut();
    let stderr = super::StderrTail::collect(child.stderr.take());
    let Some(stdout) = child.stdout.take() else {
        return Err("adapter stdout missing".into());
    };
    // The first line says where it listens (`Listening for:
    // connection://[127.0.0.1]:PORT`); the rest is drained so that a full
    // pipe can never block the server.
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let first = tokio::time::timeout(cfg.action_timeout, lines.next_line()).await;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let line = match first {
        Ok(Ok(Some(l))) => l,
        Ok(Ok(None)) => {
            return Err(format!(
                "adapter server exited before listening (stderr: {})",
                stderr.last_lines(5)
            ));
        }
        Ok(Err(e)) => return Err(format!("adapter server stdout: {e}")),
        Err(_) => return Err(format!("adapter server not listening within {:?}", cfg.action_timeout)),
    };
    let port = listening_port(&line).ok_or_else(|| format!("adapter server said {line:?}, not where it listens"))?;
    Ok(Server {
        guard,
        port,
        stderr,
        sessions: 0,
        healthy: Arc::new(AtomicBool::new(true)),
        idle: Arc::new(AtomicBool::new(true)),
    })
}

/// `Listening for: connection://[127.0.0.1]:38905` → 38905.
fn listening_port(line: &str) -> Option<u16> {
    line.contains("Listening")
        .then(|| line.trim().rsplit(':').next()?.parse().ok())
        .flatten()
}

/// A new session on the server: connect and initialize.
async fn connect(server: &Server, cfg: &DebuggerConfig) -> Result<Session, String> {
    let stream = open_stream(server, cfg)?;
    session_on(stream, server, cfg).await
}

/// A connection to `server` (inside its network namespace).
fn open_stream(server: &Server, cfg: &DebuggerConfig) -> Result<std::net::TcpStream, String> {
    server
        .guard
        .connect_loopback(server.port, cfg.action_timeout)
        .and_then(|s| {
            s.set_nodelay(true)?;
            s.set_nonblocking(true)?;
            Ok(s)
        })
        .map_err(|e| format!("connecting to the adapter server on port {}: {e}", server.port))
}

/// A DAP session over `stream`, initialized.
async fn session_on(stream: std::net::TcpStream, server: &Server, cfg: &DebuggerConfig) -> Result<Session, String> {
    session_over(stream, server.stderr.clone(), cfg.action_timeout).await
}

async fn session_over(
    stream: std::net::TcpStream,
    stderr: super::StderrTail,
    timeout: Duration,
) -> Result<Session, String> {
    let stream =
        tokio::net::TcpStream::from_std(stream).map_err(|e| format!("connecting to the adapter server: {e}"))?;
    let (reader, writer) = stream.into_split();
    let mut dap = DapClient::new(writer, reader, timeout);
    initialize(&mut dap).await?;
    Ok(Session {
        guard: None,
        dap,
        stderr,
    })
}

/// The `launch` request's arguments for `subject`.
fn launch_args(subject: &Subject, cfg: &DebuggerConfig) -> Result<Json, String> {
    let bin = subject
        .binary
        .as_ref()
        .ok_or_else(|| format!("{} has no binary", subject.name))?;
    let cwd = bin.parent().unwrap_or(Path::new("/")).to_string_lossy().into_owned();
    Ok(json!({
        "program": bin, "args": [], "cwd": cwd, "stopOnEntry": false, "env": [format!("PWD={cwd}")],
        "initCommands": init_commands(cfg),
    }))
}

/// Sends `launch` and waits for `initialized`; returns the launch's seq.
///
/// Errors: the launch failed (the adapter's message), or the DAP error.
async fn send_launch(dap: &mut DapClient, args: Json) -> Result<i64, Result<String, DapError>> {
    let seq = dap.send("launch", Some(args)).await.map_err(Err)?;
    let m = dap
        .wait_for("initialized or a failed launch", |m| {
            (m["type"] == "event" && m["event"] == "initialized")
                || (m["type"] == "response" && m["request_seq"] == seq && m["success"] == false)
        })
        .await
        .map_err(Err)?;
    if m["type"] == "response" {
        return Err(Ok(format!("launch failed: {}", m["message"].as_str().unwrap_or("?"))));
    }
    Ok(seq)
}

/// The background part of a preload: a session on the server behind
/// `stream`, with `subject` launched.
async fn preload_session(
    stream: std::net::TcpStream,
    stderr: super::StderrTail,
    args: Json,
    timeout: Duration,
) -> Result<(Session, i64), String> {
    let mut s = session_over(stream, stderr, timeout).await?;
    match send_launch(&mut s.dap, args).await {
        Ok(seq) => Ok((s, seq)),
        Err(Ok(msg)) => Err(msg),
        Err(Err(e)) => Err(e.to_string()),
    }
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

    fn spawn_spare(&mut self) {
        if self.cfg.warm && !self.server_mode && self.spare.is_none() {
            self.spare = Some(tokio::spawn(start_stdio_session(self.exe.clone(), self.cfg.clone())));
        }
    }

    /// Keeps what the session said for the transcript and the program output.
    fn drain(&mut self, s: &mut Session) {
        self.transcript.extend(s.dap.take_transcript());
        super::push_output(&mut self.output, &s.dap.program_output);
        s.dap.program_output.clear();
    }

    /// Ends the current run at once: kills its adapter, and in server mode the
    /// server with everything below it (a hung or crashed adapter).
    fn kill(&mut self) {
        if let Some(mut s) = self.session.take() {
            self.drain(&mut s);
            if let Some(mut g) = s.guard.take() {
                g.kill_tree();
            }
        }
        if let Some(i) = self.current.take()
            && i < self.servers.len()
        {
            self.servers.remove(i).guard.kill_tree();
        }
        self.thread = None;
        self.launch_seq = None;
        self.inferior_pid = None;
    }

    /// Ends the current run cleanly: a stdio adapter is killed with its tree
    /// (waiting for its exit costs 300-500 ms); a server session is
    /// disconnected with `terminateDebuggee`, and the server is killed if it
    /// does not answer or the program survives.
    async fn end_session(&mut self) {
        let Some(mut s) = self.session.take() else {
            return;
        };
        if s.guard.is_some() {
            self.session = Some(s);
            self.kill();
            return;
        }
        let bye = tokio::time::timeout(
            DISCONNECT_TIMEOUT,
            s.dap.request("disconnect", json!({"terminateDebuggee": true})),
        )
        .await;
        self.drain(&mut s);
        // The program (and its lldb-server) die now, not when the adapter's
        // session teardown gets to them.
        let server_pid = self.current_server().map(|v| v.guard.pid());
        if let Some((pid, server)) = self.inferior_pid.zip(server_pid)
            && process::descendants(server).contains(&pid)
        {
            process::kill_tree(pid);
        }
        match (bye, self.current_server()) {
            (Ok(Ok(_)), Some(server)) => {
                // The adapter tears the session down for another ~150 ms and
                // writes events meanwhile; closing the connection under it
                // kills lldb-dap 22 with SIGPIPE (see
                // DapClient::drain_until_closed). So the connection is read
                // to its end in the background while the next run starts; an
                // adapter that never closes it marks the server for
                // replacement.
                let (healthy, idle) = (server.healthy.clone(), server.idle.clone());
                tokio::spawn(async move {
                    if s.dap.drain_until_closed(DISCONNECT_TIMEOUT).await {
                        idle.store(true, Ordering::SeqCst);
                    } else {
                        healthy.store(false, Ordering::SeqCst);
                    }
                });
                self.current = None;
            }
            (bye, _) => {
                self.transcript.push(RawMessage::received(format!(
                    "[doppel] adapter server replaced: disconnect {}",
                    match bye {
                        Ok(Ok(_)) => "answered, but the server is gone".to_string(),
                        Ok(Err(e)) => e.to_string(),
                        Err(_) => format!("not answered within {DISCONNECT_TIMEOUT:?}"),
                    }
                )));
                self.kill();
            }
        }
        self.thread = None;
        self.launch_seq = None;
        self.inferior_pid = None;
    }

    /// A session for the next run: a connection to the (possibly new) server,
    /// the spare adapter, or a fresh one.
    async fn new_session(&mut self) -> Result<Session, String> {
        if !self.server_mode {
            return match self.spare.take() {
                Some(h) => match h.await {
                    Ok(r) => r,
                    Err(e) => Err(format!("spare adapter task failed: {e}")),
                },
                None => start_stdio_session(self.exe.clone(), self.cfg.clone()).await,
            };
        }
        // An idle server of the pool, or a new one while the pool is not
        // full, or the first to become idle.
        let deadline = tokio::time::Instant::now() + self.cfg.action_timeout;
        let i = loop {
            self.servers.retain_mut(|s| {
                let keep = s.usable();
                if !keep {
                    s.guard.kill_tree();
                }
                keep
            });
            if let Some(i) = self.servers.iter().position(|s| s.idle.load(Ordering::SeqCst)) {
                break i;
            }
            if self.servers.len() < MAX_SERVERS {
                self.servers.push(start_server(&self.exe, &self.cfg).await?);
                break self.servers.len() - 1;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!(
                    "no adapter server finished its previous session within {:?}",
                    self.cfg.action_timeout
                ));
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let server = &mut self.servers[i];
        server.sessions += 1;
        server.idle.store(false, Ordering::SeqCst);
        match connect(server, &self.cfg).await {
            Ok(s) => {
                self.current = Some(i);
                Ok(s)
            }
            Err(e) => {
                // A server that cannot take a session is replaced once.
                self.servers.remove(i).guard.kill_tree();
                let server = start_server(&self.exe, &self.cfg).await?;
                let s = connect(&server, &self.cfg)
                    .await
                    .map_err(|e2| format!("{e}; with a new server: {e2}"))?;
                server.idle.store(false, Ordering::SeqCst);
                self.servers.push(server);
                self.current = Some(self.servers.len() - 1);
                Ok(s)
            }
        }
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

    /// The preloaded run of `subject`, if one was launched for its binary:
    /// its session becomes the current one. A preload of another binary is
    /// discarded (disconnected in the background). `None` when there is
    /// nothing to adopt, or the preload failed (the next steps launch as
    /// usual).
    async fn adopt_preloaded(&mut self, subject: &Subject) -> Option<()> {
        let p = self.preloaded.take()?;
        let same = subject.binary.as_ref() == Some(&p.binary);
        let index = self.servers.iter().position(|s| s.guard.pid() == p.server_pid);
        if !same {
            let idle = index.map(|i| (self.servers[i].idle.clone(), self.servers[i].healthy.clone()));
            tokio::spawn(async move {
                if let Ok(Ok((mut s, _))) = p.task.await {
                    let _ = tokio::time::timeout(
                        DISCONNECT_TIMEOUT,
                        s.dap.request("disconnect", json!({"terminateDebuggee": true})),
                    )
                    .await;
                    let closed = s.dap.drain_until_closed(DISCONNECT_TIMEOUT).await;
                    if let Some((idle, healthy)) = idle {
                        if closed {
                            idle.store(true, Ordering::SeqCst);
                        } else {
                            healthy.store(false, Ordering::SeqCst);
                        }
                    }
                } else if let Some((_, healthy)) = idle {
                    healthy.store(false, Ordering::SeqCst);
                }
            });
            return None;
        }
        let Some(i) = index else {
            p.task.abort();
            return None;
        };
        match p.task.await {
            Ok(Ok((session, seq))) => {
                self.session = Some(session);
                self.current = Some(i);
                self.launch_seq = Some(seq);
                self.transcript.push(RawMessage::received(
                    "[doppel] adopted the run launched ahead of this load (preload)",
                ));
                self.limit_inferior(false).await;
                Some(())
            }
            Ok(Err(e)) => {
                self.transcript.push(RawMessage::received(format!(
                    "[doppel] preload failed, launching again: {e}"
                )));
                self.servers[i].healthy.store(false, Ordering::SeqCst);
                None
            }
            Err(e) => {
                self.transcript
                    .push(RawMessage::received(format!("[doppel] preload task failed: {e}")));
                self.servers[i].healthy.store(false, Ordering::SeqCst);
                None
            }
        }
    }

    /// Launches the hinted next subject on another idle server of the pool
    /// (starting one while the pool is not full), in the background.
    async fn start_preload(&mut self) {
        if !self.server_mode || self.preloaded.is_some() {
            return;
        }
        let Some(next) = self.next.clone() else { return };
        let Some(binary) = next.binary.clone() else { return };
        let Ok(args) = launch_args(&next, &self.cfg) else {
            return;
        };
        let current_pid = self.current_server().map(|s| s.guard.pid());
        let mut pick = self
            .servers
            .iter_mut()
            .position(|s| Some(s.guard.pid()) != current_pid && s.idle.load(Ordering::SeqCst) && s.usable());
        if pick.is_none() && self.servers.len() < MAX_SERVERS {
            match start_server(&self.exe, &self.cfg).await {
                Ok(server) => {
                    self.servers.push(server);
                    pick = Some(self.servers.len() - 1);
                }
                Err(_) => return,
            }
        }
        let Some(i) = pick else { return };
        let server = &mut self.servers[i];
        let Ok(stream) = open_stream(server, &self.cfg) else {
            server.healthy.store(false, Ordering::SeqCst);
            return;
        };
        server.sessions += 1;
        server.idle.store(false, Ordering::SeqCst);
        let task = tokio::spawn(preload_session(
            stream,
            server.stderr.clone(),
            args,
            self.cfg.action_timeout,
        ));
        self.preloaded = Some(Preloaded {
            binary,
            server_pid: server.guard.pid(),
            task,
        });
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

    async fn state(&mut self, reason: PauseReason, signal: Option<String>) -> Result<ProgramState, Fail> {
        let thread = self.thread.unwrap_or(0);
        let st = self
            .request(
                "stackTrace",
                json!({"threadId": thread, "startFrame": 0, "levels": MAX_FRAMES}),
            )
            .await?;
        let frames = st["stackFrames"].as_array().cloned().unwrap_or_default();
        let call_stack: Vec<Frame> = frames
            .iter()
            .take(MAX_FRAMES)
            .map(|f| Frame {
                function: f["name"].as_str().unwrap_or("??").to_string(),
                location: f["line"].as_u64().filter(|l| *l > 0).map(|line| Location {
                    file: self.map_file(f["source"]["path"].as_str(), f["source"]["name"].as_str()),
                    line: line as u32,
                    column: f["column"].as_u64().filter(|c| *c > 0).map(|c| c as u32),
                }),
            })
            .collect();
        let location = call_stack
            .first()
            .and_then(|f| f.location.clone())
            .unwrap_or_else(|| Location::line("??", 0));
        let mut variables = Vec::new();
        self.top_frame = frames.first().and_then(|f| f["id"].as_i64());
        self.top_pc = frames
            .first()
            .and_then(|f| f["instructionPointerReference"].as_str())
            .map(str::to_string);
        self.stack_pcs = frames
            .iter()
            .map(|f| f["instructionPointerReference"].as_str().and_then(address).unwrap_or(0))
            .collect();
        if let Some(frame_id) = self.top_frame {
            let scopes = self.request("scopes", json!({"frameId": frame_id})).await?;
            let locals = scopes["scopes"]
                .as_array()
                .and_then(|s| {
                    s.iter()
                        .find(|x| x["presentationHint"] == "locals" || x["name"] == "Locals")
                })
                .and_then(|s| s["variablesReference"].as_i64());
            if let Some(r) = locals {
                variables = self.variables(r, self.cfg.value_depth).await?;
            }
            let args = self.argument_names(frame_id).await?;
            for v in &mut variables {
                v.kind = if args.contains(&v.name) {
                    VariableKind::Argument
                } else {
                    VariableKind::Local
                };
            }
        }
        Ok(ProgramState {
            location,
            reason,
            call_stack,
            return_value: variables.iter().position(|v| v.name == "(Return Value)").map(|i| {
                let mut r = variables.remove(i);
                r.name = "(return)".into();
                r.kind = VariableKind::Unknown;
                r
            }),
            variables,
            signal,
        })
    }

    async fn variables(&mut self, reference: i64, depth: u32) -> Result<Vec<Variable>, Fail> {
        let body = self
            .request("variables", json!({"variablesReference": reference}))
            .await?;
        let mut out = Vec::new();
        for v in body["variables"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .take(MAX_CHILDREN)
        {
            let text = v["value"].as_str().unwrap_or("").to_string();
            let child_ref = v["variablesReference"].as_i64().unwrap_or(0);
            // A string's summary stands for its characters, and a pointer's
            // only child is its pointee (GDB/MI shows neither): expand only
            // aggregates (structs, unions, arrays).
            let is_string = text.contains('"');
            let is_pointer = v["type"]
                .as_str()
                .is_some_and(|t| t.trim_end().ends_with('*') || t.contains("(*)"));
            let children = if child_ref > 0 && depth > 0 && !is_string && !is_pointer {
                Box::pin(self.variables(child_ref, depth - 1)).await?
            } else {
                Vec::new()
            };
            out.push(Variable {
                name: v["name"].as_str().unwrap_or("?").to_string(),
                type_name: v["type"].as_str().map(str::to_string),
                value: Value { text, children },
                kind: VariableKind::Unknown,
            });
        }
        Ok(out)
    }

    /// Names of the frame's arguments, from the REPL command
    /// `frame variable --no-locals` (DAP itself does not flag arguments).
    async fn argument_names(&mut self, frame_id: i64) -> Result<HashSet<String>, Fail> {
        let r = self
            .request(
                "evaluate",
                json!({"expression": "`frame variable --no-locals", "context": "repl", "frameId": frame_id}),
            )
            .await;
        let text = match r {
            Ok(b) => b["result"].as_str().unwrap_or("").to_string(),
            Err(Fail::Protocol(_)) => String::new(),
            Err(f) => return Err(f),
        };
        Ok(text
            .lines()
            .filter_map(|l| {
                let rest = l.strip_prefix('(')?;
                let close = rest.find(") ")?;
                let name = rest[close + 2..].split(" = ").next()?;
                Some(name.trim().to_string())
            })
            .collect())
    }
}

/// An address as lldb-dap writes it (`0x555555555177`, `0x7FFFF7DFB24A`).
fn address(text: &str) -> Option<u64> {
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"))?;
    u64::from_str_radix(hex, 16).ok()
}

/// At a pause with `reason` and frame pcs `pcs` (innermost first): the pcs
/// to expect again when the next action will stop at once at the same
/// place (LLDB 20+: the pause is not a breakpoint hit, and the pc is the
/// address of a breakpoint already set), else `None`.
fn arms<'a>(reason: PauseReason, pcs: &[u64], breakpoints: impl IntoIterator<Item = &'a u64>) -> Option<Vec<u64>> {
    let pc = *pcs.first()?;
    (reason != PauseReason::Breakpoint && pc != 0 && breakpoints.into_iter().any(|a| *a == pc)).then(|| pcs.to_vec())
}

/// Whether a pause with `reason` and frame pcs `now` is LLDB's re-stop at
/// the breakpoint the pause with frame pcs `armed` (see [`arms`]) sat on:
/// a breakpoint hit that did not move in any frame.
fn is_restop(armed: &[u64], reason: PauseReason, now: &[u64]) -> bool {
    reason == PauseReason::Breakpoint && !armed.is_empty() && armed == now
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || std::fs::canonicalize(a)
            .ok()
            .zip(std::fs::canonicalize(b).ok())
            .is_some_and(|(x, y)| x == y)
}

/// `signal SIGSEGV: invalid address (fault address: 0x0)` → `SIGSEGV`.
fn signal_name(text: &str) -> Option<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| w.starts_with("SIG") && w.len() > 3)
        .map(str::to_string)
}

/// lldb's console line for a death by signal:
/// `Process N exited with status = -1 (0xffffffff) ... signal SIGSEGV` or
/// `Process N exited with status = 11 ... (signal ...)`.
fn console_signal(text: &str) -> Option<String> {
    text.lines()
        .find(|l| l.contains("exited") && l.contains("SIG"))
        .and_then(signal_name)
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
