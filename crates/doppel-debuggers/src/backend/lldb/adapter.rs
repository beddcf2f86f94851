//! The adapters of the LLDB backend: lldb-dap processes over stdio or in
//! server mode, DAP sessions on them, `initialize` and `launch`.

use super::*;

/// A run launched ahead of its `load` (see the module documentation).
pub(super) struct Preloaded {
    /// The binary it launched.
    pub(super) binary: PathBuf,
    /// The pid of the server it runs on.
    pub(super) server_pid: u32,
    /// The session and the `launch` request's seq, once `initialized` came.
    pub(super) task: JoinHandle<Result<(Session, i64), String>>,
}

pub(super) struct Session {
    /// The adapter process of a stdio session; `None` for a connection to the server.
    pub(super) guard: Option<ProcessGuard>,
    pub(super) dap: DapClient,
    pub(super) stderr: crate::backend::StderrTail,
}

/// An adapter in server mode (`lldb-dap --connection listen://127.0.0.1:0`).
pub(super) struct Server {
    pub(super) guard: ProcessGuard,
    pub(super) port: u16,
    pub(super) stderr: crate::backend::StderrTail,
    /// Sessions served so far.
    pub(super) sessions: u32,
    /// Cleared when a session's connection was not closed by the adapter
    /// after `disconnect`: the server is then replaced before the next run.
    pub(super) healthy: Arc<AtomicBool>,
    /// Set while no session is connected or tearing down.
    pub(super) idle: Arc<AtomicBool>,
}

impl Server {
    pub(super) fn usable(&mut self) -> bool {
        !self.guard.has_exited() && self.sessions < SERVER_RECYCLE_SESSIONS && self.healthy.load(Ordering::SeqCst)
    }
}

/// Whether the adapter has a server mode (`--connection`, lldb-dap 20+).
pub(super) fn has_server_mode(exe: &Path) -> bool {
    doppel_core::process::output_within(
        std::process::Command::new(exe).arg("--help"),
        std::time::Duration::from_secs(60),
    )
    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--connection"))
}

/// The commands every launch starts with.
pub(super) fn init_commands(cfg: &DebuggerConfig) -> Vec<String> {
    // The on-disk DWARF index cache spares each fresh adapter re-indexing
    // debug info (libc's, with libc6-dbg: ~630 → ~470 ms to a breakpoint).
    let mut c = vec!["settings set symbols.enable-lldb-index-cache true".to_string()];
    if !cfg.system_debug_info {
        c.push("settings set symbols.enable-external-lookup false".into());
    }
    c
}

pub(super) async fn initialize(dap: &mut DapClient) -> Result<(), String> {
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
pub(super) async fn start_stdio_session(exe: PathBuf, cfg: DebuggerConfig) -> Result<Session, String> {
    let mut cmd = process::piped(&exe.to_string_lossy());
    crate::backend::fixed_environment(&mut cmd);
    if let Ok(shim) = HostShim::get() {
        shim.install(&mut cmd);
    }
    let mut guard = process::spawn(cmd, cfg.sandbox).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let child = guard.child_mut();
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("adapter pipes missing".into());
    };
    let stderr = crate::backend::StderrTail::collect(child.stderr.take());
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
pub(super) async fn start_server(exe: &Path, cfg: &DebuggerConfig) -> Result<Server, String> {
    let mut cmd = process::piped(&exe.to_string_lossy());
    cmd.args(["--connection", "listen://127.0.0.1:0"]);
    crate::backend::fixed_environment(&mut cmd);
    if let Ok(shim) = HostShim::get() {
        shim.install(&mut cmd);
    }
    let mut guard =
        process::spawn(cmd, cfg.sandbox).map_err(|e| format!("cannot start {} as a server: {e}", exe.display()))?;
    let child = guard.child_mut();
    let stderr = crate::backend::StderrTail::collect(child.stderr.take());
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
pub(super) fn listening_port(line: &str) -> Option<u16> {
    line.contains("Listening")
        .then(|| line.trim().rsplit(':').next()?.parse().ok())
        .flatten()
}

/// A new session on the server: connect and initialize.
pub(super) async fn connect(server: &Server, cfg: &DebuggerConfig) -> Result<Session, String> {
    let stream = open_stream(server, cfg)?;
    session_on(stream, server, cfg).await
}

/// A connection to `server` (inside its network namespace).
pub(super) fn open_stream(server: &Server, cfg: &DebuggerConfig) -> Result<std::net::TcpStream, String> {
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
pub(super) async fn session_on(
    stream: std::net::TcpStream,
    server: &Server,
    cfg: &DebuggerConfig,
) -> Result<Session, String> {
    session_over(stream, server.stderr.clone(), cfg.action_timeout).await
}

pub(super) async fn session_over(
    stream: std::net::TcpStream,
    stderr: crate::backend::StderrTail,
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
pub(super) fn launch_args(subject: &Subject, cfg: &DebuggerConfig) -> Result<Json, String> {
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
pub(super) async fn send_launch(dap: &mut DapClient, args: Json) -> Result<i64, Result<String, DapError>> {
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
pub(super) async fn preload_session(
    stream: std::net::TcpStream,
    stderr: crate::backend::StderrTail,
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
