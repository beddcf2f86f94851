//! V8 in Node.js over the Chrome DevTools Protocol (`node --inspect-brk`).
//!
//! Node is the debugger *and* the inferior: one process runs one program
//! (it cannot load a second), so every run gets a fresh `node`, and warm mode
//! keeps one *spare* node started and connected in the background while the
//! current run executes (the ~100 ms start of node is off the critical path).
//! Resource limits apply to the node process (CPU and file size as given;
//! address space as given *on top of* what node has mapped when the limit is
//! applied, since V8 alone maps ~700 MB and aborts under a 1 GiB `RLIMIT_AS`).
//!
//! One run, as CDP messages:
//!
//! 1. Start (spare): `node --inspect-brk=127.0.0.1:0 <dir>/loader.js`, in its
//!    own process group (and network namespace, connected from inside it),
//!    working directory `/`, the fixed environment; the websocket URL from
//!    the `Debugger listening on ws://...` line of stderr. `Runtime.enable`,
//!    `Debugger.enable`, `Runtime.runIfWaitingForDebugger`, then the
//!    "Break on start" pause in the loader; `Debugger.setBlackboxPatterns`
//!    for `node:` internals and the loader (V8 of node 20 ignores it for the
//!    internals; step 4 copes), and
//!    `Debugger.setInstrumentationBreakpoint{beforeScriptExecution}`.
//! 2. `load`: the prelude, source and epilogue paths go to `<dir>/files.json`;
//!    the loader runs each with `vm.runInThisContext(text, {filename})`, a
//!    classic script in the global scope (declarations are globals, as in a
//!    browser). Resumed until the instrumentation pause *before the source*
//!    runs: the source is parsed (so breakpoints resolve at once) and the
//!    prelude has run. The instrumentation breakpoint is then removed.
//! 3. `set_breakpoint`: `Debugger.setBreakpointByUrl{url, lineNumber,
//!    columnNumber?}` with the source's URL from `Debugger.scriptParsed`
//!    (`file:///...`); the resolved location is `locations[0]` (empty: no
//!    code at or after the line, `resolved: None`). Only the source file
//!    takes breakpoints. `remove_breakpoint`: `Debugger.removeBreakpoint`
//!    with the id from set time.
//! 4. `start`/`exec`: `Debugger.resume` / `stepInto` / `stepOver` /
//!    `stepOut`, then `Debugger.paused` (state: see [`super::v8`]) or the end.
//!    A step that stops in node's own JavaScript (`console.log`, the loader)
//!    goes on until it is back in the user's scripts, as in a browser
//!    (see `Node::skip_hidden`): blackboxing does not cover node's internals.
//! 5. End: `Runtime.executionContextDestroyed` (the program and its event
//!    loop are done; node then waits for the client to disconnect), or the
//!    websocket closing (`process.exit`). doppel disconnects and waits for
//!    the exit: `Finished` with node's exit code (1 after an uncaught
//!    exception, including a syntax error in any script; the error is in
//!    the program output), or with the signal that killed it.
//!
//! A program that ends during `load` (a syntax error in the source, an
//! uncaught exception or `process.exit` in the prelude) is not a failure:
//! breakpoints then answer `resolved: None` ("the program ended before the
//! source ran") and `start` answers the `Finished` it ended with.
//!
//! Program output is node's stdout and stderr as they arrived (without
//! node's own inspector lines). Node's ~80 `scriptParsed` events for its
//! `node:` internals are left out of the transcript.

use super::Fail;
use super::v8::{self, Motion, Naming, Scripts};
use crate::protocol::cdp::{CdpClient, CdpError, is_event};
use crate::registry::BackendEntry;
use crate::{BackendError, Capabilities, Debugger, DebuggerConfig};
use async_trait::async_trait;
use doppel_core::process::{self, ProcessGuard};
use doppel_core::{ExecAction, FailureKind, Language, Location, Output, PauseReason, RawMessage, Subject, ToolInfo};
use serde_json::{Value as Json, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::task::JoinHandle;

/// The loader node runs: every file of `files.json` (next to it), in order,
/// as a classic script in the global scope.
pub const LOADER: &str = r#"'use strict';
// doppel: runs the prelude, the source and the epilogue in the global scope.
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const files = JSON.parse(fs.readFileSync(path.join(__dirname, 'files.json'), 'utf8'));
for (const f of files) vm.runInThisContext(fs.readFileSync(f, 'utf8'), { filename: f });
"#;

/// Lines node itself writes to stderr for the inspector (not program output).
const INSPECTOR_LINES: [&str; 5] = [
    "Debugger listening on ",
    "For help, see: https://nodejs.org/",
    "Debugger attached.",
    "Waiting for the debugger to disconnect...",
    "Debugger ending on ",
];

/// The registry entry.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: "node",
        languages: &[Language::JavaScript],
        probe,
        create: |cfg| Ok(Box::new(Node::new(cfg)?)),
    }
}

fn executable(cfg: &DebuggerConfig) -> Result<PathBuf, BackendError> {
    let exe = cfg.executable.as_deref().unwrap_or("node");
    super::which(exe).ok_or_else(|| BackendError::NotInstalled {
        name: "node".into(),
        hint: format!("'{exe}' not found; scripts/deps/setup-00-node.sh installs Node 20"),
    })
}

fn probe(cfg: &DebuggerConfig) -> Result<ToolInfo, BackendError> {
    let exe = executable(cfg)?;
    let version = super::version_line(&exe, &["--version"])?
        .map(|v| format!("node {v}"))
        .ok_or_else(|| BackendError::Other(format!("{} --version printed nothing", exe.display())))?;
    Ok(ToolInfo {
        name: "node".into(),
        version,
        protocol: "CDP".into(),
        executable: exe.display().to_string(),
    })
}

/// One node process, connected and paused at the start of the loader.
struct Session {
    guard: ProcessGuard,
    cdp: CdpClient,
    dir: tempfile::TempDir,
    output: Arc<Mutex<String>>,
    scripts: Scripts,
    instrumentation: Option<String>,
    loader_url: String,
}

fn append(buf: &Arc<Mutex<String>>, text: &str) {
    if let Ok(mut b) = buf.lock() {
        super::push_output(&mut b, text);
    }
}

async fn start_session(exe: PathBuf, cfg: DebuggerConfig) -> Result<Session, String> {
    let dir = tempfile::Builder::new()
        .prefix("doppel-node-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"))?;
    let loader = dir.path().join("loader.js");
    std::fs::write(&loader, LOADER).map_err(|e| format!("writing {}: {e}", loader.display()))?;
    let mut cmd = process::piped(&exe.to_string_lossy());
    cmd.arg("--inspect-brk=127.0.0.1:0").arg(&loader).current_dir("/");
    cmd.stdin(std::process::Stdio::null());
    super::fixed_environment(&mut cmd);
    let mut guard = process::spawn(cmd, cfg.sandbox).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let pid = guard.pid();
    let child = guard.child_mut();
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err("node's pipes are missing".into());
    };
    let output = Arc::new(Mutex::new(String::new()));
    let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
    let buf = output.clone();
    tokio::spawn(async move {
        let mut url_tx = Some(url_tx);
        // Lines are capped and decoded lossily: a program writing endless
        // or invalid UTF-8 to stderr must not stop or bloat the reader.
        let mut r = tokio::io::BufReader::new(stderr);
        while let Ok(Some((bytes, _))) =
            crate::protocol::read_line_capped(&mut r, crate::protocol::MAX_MESSAGE_BYTES).await
        {
            let l = String::from_utf8_lossy(&bytes);
            if let Some(u) = l.strip_prefix("Debugger listening on ") {
                if let Some(tx) = url_tx.take() {
                    let _ = tx.send(u.trim().to_string());
                }
                continue;
            }
            if !INSPECTOR_LINES.iter().any(|p| l.starts_with(p)) {
                append(&buf, &format!("{l}\n"));
            }
        }
    });
    let buf = output.clone();
    tokio::spawn(async move {
        let mut out = stdout;
        let mut chunk = vec![0u8; 16 * 1024];
        while let Ok(n) = out.read(&mut chunk).await {
            if n == 0 {
                break;
            }
            append(&buf, &String::from_utf8_lossy(&chunk[..n]));
        }
    });
    let url = match tokio::time::timeout(cfg.action_timeout, url_rx).await {
        Ok(Ok(u)) => u,
        Ok(Err(_)) => {
            let said = output.lock().map(|o| o.clone()).unwrap_or_default();
            return Err(format!("node exited before listening: {}", said.trim()));
        }
        Err(_) => return Err(format!("node printed no inspector URL within {:?}", cfg.action_timeout)),
    };
    let netns = guard.network_isolated.then_some(pid);
    let mut cdp = CdpClient::connect(&url, cfg.action_timeout, netns)
        .await
        .map_err(|e| format!("connecting to node: {e}"))?;
    // Program output comes from node's stdout and stderr.
    cdp.set_discard_filter(|m| {
        is_event(
            m,
            &[
                "Runtime.consoleAPICalled",
                "Runtime.exceptionThrown",
                "Debugger.resumed",
            ],
            None,
        )
    });
    cdp.set_record_filter(|m| {
        !(m["method"] == "Debugger.scriptParsed" && m["params"]["url"].as_str().is_some_and(|u| u.starts_with("node:")))
    });
    let mut session = Session {
        guard,
        cdp,
        dir,
        output,
        scripts: Scripts::default(),
        instrumentation: None,
        loader_url: String::new(),
    };
    session
        .prepare(&cfg)
        .await
        .map_err(|e| format!("preparing node: {e}"))?;
    Ok(session)
}

impl Session {
    /// Enables the domains, lets node start and waits for "Break on start";
    /// then blackboxes node's internals and the loader (only the loader is
    /// honoured) and asks for a pause before every script.
    async fn prepare(&mut self, cfg: &DebuggerConfig) -> Result<(), CdpError> {
        let c = &mut self.cdp;
        c.call("Runtime.enable", json!({}), None).await?;
        c.call("Debugger.enable", json!({}), None).await?;
        c.call("Runtime.runIfWaitingForDebugger", json!({}), None).await?;
        let p = c.event(&["Debugger.paused"], None).await?;
        self.scripts.absorb(c, None);
        let loader = p["params"]["callFrames"][0]["location"]["scriptId"]
            .as_str()
            .and_then(|id| self.scripts.url(id))
            .ok_or_else(|| CdpError::Protocol(format!("the first pause is not in a known script: {p}")))?
            .to_string();
        self.loader_url = loader.clone();
        c.call(
            "Debugger.setBlackboxPatterns",
            json!({"patterns": ["^node:", format!("^{}$", regex_escape(&loader))]}),
            None,
        )
        .await?;
        let r = c
            .call(
                "Debugger.setInstrumentationBreakpoint",
                json!({"instrumentation": "beforeScriptExecution"}),
                None,
            )
            .await?;
        self.instrumentation = r["breakpointId"].as_str().map(str::to_string);
        let mut limits = cfg.limits;
        match vm_size(self.guard.pid()) {
            Some(mapped) => limits.memory_bytes = limits.memory_bytes.saturating_add(mapped),
            None => {
                // Without node's own size a bare RLIMIT_AS would abort node itself.
                c.note("node's address space is unknown: no address-space limit");
                limits.memory_bytes = libc::RLIM_INFINITY;
            }
        }
        if let Err(e) = limits.apply_to(self.guard.pid()) {
            c.note(format!("resource limits not applied to node {}: {e}", self.guard.pid()));
        }
        Ok(())
    }
}

/// The address space of process `pid` in bytes (`VmSize`), if readable.
fn vm_size(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmSize:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Escapes the regular-expression metacharacters of `s`.
pub(crate) fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The Node backend. See the module documentation.
pub struct Node {
    info: ToolInfo,
    cfg: DebuggerConfig,
    exe: PathBuf,
    session: Option<Session>,
    spare: Option<JoinHandle<Result<Session, String>>>,
    transcript: crate::protocol::Transcript,
    naming: Option<Naming>,
    source_url: Option<String>,
    /// Requested (line, column) → CDP breakpoint id and resolved location.
    breakpoints: v8::Breakpoints,
    ended: Option<Output>,
    output: String,
}

impl Node {
    /// Creates the backend; node starts on the first `load`.
    ///
    /// Errors: [`BackendError::NotInstalled`] when node is not found.
    pub fn new(cfg: &DebuggerConfig) -> Result<Self, BackendError> {
        let info = probe(cfg)?;
        let exe = executable(cfg)?;
        Ok(Self {
            info,
            cfg: cfg.clone(),
            exe,
            session: None,
            spare: None,
            transcript: crate::protocol::Transcript::default(),
            naming: None,
            source_url: None,
            breakpoints: HashMap::new(),
            ended: None,
            output: String::new(),
        })
    }

    /// The pid of the current node process, if any (for tests).
    pub fn debugger_pid(&self) -> Option<u32> {
        self.session.as_ref().map(|s| s.guard.pid())
    }

    fn spawn_spare(&mut self) {
        if self.cfg.warm && self.spare.is_none() {
            self.spare = Some(tokio::spawn(start_session(self.exe.clone(), self.cfg.clone())));
        }
    }

    /// Ends the current node process (and everything it started).
    fn kill(&mut self) {
        if let Some(mut s) = self.session.take() {
            self.transcript.extend(s.cdp.take_transcript());
            s.guard.kill_tree();
            if let Ok(o) = s.output.lock() {
                super::push_output(&mut self.output, &o);
            }
        }
    }

    fn cdp(&mut self) -> Result<&mut CdpClient, Fail> {
        self.session
            .as_mut()
            .map(|s| &mut s.cdp)
            .ok_or_else(|| Fail::Crash("node is not running".into()))
    }

    /// Turns a CDP error into a failure; a dead or hung node is killed.
    fn fail(&mut self, e: CdpError) -> Fail {
        let f = Fail::from(e);
        match f {
            Fail::Timeout(d) => {
                self.kill();
                Fail::Timeout(format!("node: {d}"))
            }
            Fail::Crash(d) => {
                self.kill();
                Fail::Crash(format!("node: {d}"))
            }
            f => f,
        }
    }

    async fn call(&mut self, method: &str, params: Json) -> Result<Json, Fail> {
        let r = self.cdp()?.call(method, params, None).await;
        r.map_err(|e| self.fail(e))
    }

    /// Sends a command that resumes the program, and waits for its response.
    async fn send(&mut self, method: &str) -> Result<(), CdpError> {
        let c = self.cdp().map_err(|_| CdpError::Closed("node is not running".into()))?;
        c.call(method, json!({}), None).await.map(|_| ())
    }

    /// The output for an error of a command that runs the program: a closed
    /// connection is the end of node (and so of the program).
    async fn outcome(&mut self, e: CdpError) -> Output {
        match e {
            CdpError::Closed(_) if self.session.is_some() => self.finish().await,
            e => self.fail(e).output(),
        }
    }

    /// The program ended (its context is gone, or node closed the
    /// connection): disconnects, waits for node's exit and records it.
    async fn finish(&mut self) -> Output {
        let timeout = self.cfg.action_timeout;
        let Some(s) = self.session.as_mut() else {
            return Fail::Crash("node is not running".into()).output();
        };
        if let Err(e) = s.cdp.close().await {
            s.cdp.note(format!("closing the connection: {e}"));
        }
        let out = match s.guard.wait_timeout(timeout).await {
            Some(status) => {
                use std::os::unix::process::ExitStatusExt;
                Output::Finished {
                    exit_code: status.code(),
                    signal: status.signal().map(super::signal_name),
                }
            }
            None => Output::failed(
                FailureKind::Timeout,
                format!("node did not exit within {timeout:?} after the program ended"),
            ),
        };
        self.kill();
        self.ended = Some(out.clone());
        out
    }

    /// Runs the loader until the instrumentation pause before the source.
    async fn run_to_source(&mut self) -> Result<(), Fail> {
        let naming = self
            .naming
            .clone()
            .ok_or_else(|| Fail::Protocol("no subject loaded".into()))?;
        let what = "the pause before the source, or the end of the program";
        self.call("Debugger.resume", json!({})).await?;
        loop {
            let s = self
                .session
                .as_mut()
                .ok_or_else(|| Fail::Crash("node is not running".into()))?;
            let r = s
                .cdp
                .wait_for(what, |m| {
                    is_event(m, &["Debugger.paused", "Runtime.executionContextDestroyed"], None)
                })
                .await;
            let m = match r {
                Ok(m) => m,
                Err(CdpError::Closed(_)) => {
                    self.finish().await;
                    return Ok(());
                }
                Err(e) => return Err(self.fail(e)),
            };
            if m["method"] == "Runtime.executionContextDestroyed" {
                self.finish().await;
                return Ok(());
            }
            s.scripts.absorb(&mut s.cdp, None);
            let script = m["params"]["data"]["scriptId"]
                .as_str()
                .or(m["params"]["callFrames"][0]["location"]["scriptId"].as_str())
                .unwrap_or("");
            let url = s.scripts.url(script).unwrap_or("").to_string();
            if m["params"]["reason"] == "instrumentation" && naming.is_source(&url) {
                self.source_url = Some(url);
                if let Some(id) = s.instrumentation.take() {
                    self.call("Debugger.removeBreakpoint", json!({"breakpointId": id}))
                        .await?;
                }
                return Ok(());
            }
            if m["params"]["reason"] != "instrumentation" {
                s.cdp.note(format!(
                    "paused in {} before the source ran (reason {}); resumed",
                    naming.file(&url),
                    m["params"]["reason"]
                ));
            }
            self.call("Debugger.resume", json!({})).await?;
        }
    }

    /// Waits for the program to pause or end after a resume or step; the
    /// whole wait, including the steps that leave node's own code (see
    /// [`Node::skip_hidden`]), lasts at most the action timeout.
    async fn wait_stop(&mut self, motion: Motion) -> Output {
        let Some(naming) = self.naming.clone() else {
            return Fail::Protocol("no subject loaded".into()).output();
        };
        let deadline = tokio::time::Instant::now() + self.cfg.action_timeout;
        loop {
            let Some(s) = self.session.as_mut() else {
                return Fail::Crash("node is not running".into()).output();
            };
            let r = s
                .cdp
                .wait_until(deadline, "a pause or the end of the program", |m| {
                    is_event(m, &["Debugger.paused", "Runtime.executionContextDestroyed"], None)
                })
                .await;
            let m = match r {
                Ok(m) => m,
                Err(CdpError::Closed(_)) => return self.finish().await,
                Err(e) => return self.fail(e).output(),
            };
            if m["method"] == "Runtime.executionContextDestroyed" {
                return self.finish().await;
            }
            s.scripts.absorb(&mut s.cdp, None);
            match self.skip_hidden(&m, &naming, motion).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(f) => return f.output(),
            }
            let Some(s) = self.session.as_mut() else {
                return Fail::Crash("node is not running".into()).output();
            };
            let reason = v8::pause_reason(&m, motion);
            let depth = self.cfg.value_depth;
            let r = v8::read_state(&mut s.cdp, None, &m, &s.scripts, &naming, reason, depth).await;
            return match r {
                Ok(st) => Output::Paused(st),
                Err(e) => self.fail(e).output(),
            };
        }
    }

    /// Moves on from a pause that is not for the user: `Ok(true)` when the
    /// program was resumed or stepped again.
    ///
    /// V8's blackboxing does not cover node's internal modules (they have no
    /// context of their own), so a step can stop inside them (`console.log`
    /// is JavaScript in node, native in a browser) or in the loader. Such a
    /// step goes on the way a browser's would:
    /// - a user frame below: step out until it is on top (a step into
    ///   `console.log` steps over it);
    /// - no user frame (a script ended): run to the next script (the
    ///   instrumentation breakpoint again) and stop at its first statement,
    ///   as Chromium steps from the end of one `<script>` into the next.
    async fn skip_hidden(&mut self, m: &Json, naming: &Naming, motion: Motion) -> Result<bool, Fail> {
        let s = self
            .session
            .as_mut()
            .ok_or_else(|| Fail::Crash("node is not running".into()))?;
        let url_of = |loc: &Json| {
            s.scripts
                .url(loc["scriptId"].as_str().unwrap_or(""))
                .unwrap_or("")
                .to_string()
        };
        if m["params"]["reason"] == "instrumentation" {
            let url = m["params"]["data"]["scriptId"]
                .as_str()
                .and_then(|id| s.scripts.url(id))
                .unwrap_or("")
                .to_string();
            if naming.is_hidden(&url) {
                self.call("Debugger.resume", json!({})).await?;
                return Ok(true);
            }
            // A user script is about to run: stop at its first statement.
            if let Some(id) = s.instrumentation.take() {
                self.call("Debugger.removeBreakpoint", json!({"breakpointId": id}))
                    .await?;
            }
            self.call("Debugger.pause", json!({})).await?;
            self.call("Debugger.resume", json!({})).await?;
            return Ok(true);
        }
        let frames = m["params"]["callFrames"].as_array().cloned().unwrap_or_default();
        let hidden: Vec<bool> = frames
            .iter()
            .map(|f| naming.is_hidden(&url_of(&f["location"])))
            .collect();
        if motion != Motion::Step || !hidden.first().copied().unwrap_or(false) {
            return Ok(false);
        }
        if hidden.iter().any(|h| !h) {
            self.call("Debugger.stepOut", json!({})).await?;
            return Ok(true);
        }
        if s.instrumentation.is_none() {
            let r = self
                .call(
                    "Debugger.setInstrumentationBreakpoint",
                    json!({"instrumentation": "beforeScriptExecution"}),
                )
                .await?;
            if let Some(s) = self.session.as_mut() {
                s.instrumentation = r["breakpointId"].as_str().map(str::to_string);
            }
        }
        self.call("Debugger.resume", json!({})).await?;
        Ok(true)
    }

    fn ended_message(&self) -> String {
        match &self.ended {
            Some(Output::Finished { exit_code, signal }) => format!(
                "the program ended before the source ran (exit code {}, signal {})",
                exit_code.map_or("none".into(), |c| c.to_string()),
                signal.as_deref().unwrap_or("none")
            ),
            Some(Output::Failed { detail, .. }) => format!("node failed: {detail}"),
            _ => "the program is not running".into(),
        }
    }
}

#[async_trait]
impl Debugger for Node {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            columns: true,
            warm_reuse: false,
            argument_flags: false,
            notes: vec![
                "one program per node process: warm mode keeps a started, connected spare node".into(),
                "V8 does not tell parameters from locals (local-scope variables are `unknown`)".into(),
                "variables: the top frame's block and local scopes (not closure, script or global)".into(),
                "breakpoints only in the source file (not in the prelude or epilogue)".into(),
                "an uncaught exception or syntax error ends the program with node's exit code 1".into(),
                format!("call stacks read to {} frames", v8::MAX_FRAMES),
            ],
        }
    }

    async fn load(&mut self, subject: &Subject) -> Output {
        self.kill();
        self.breakpoints.clear();
        self.source_url = None;
        self.ended = None;
        self.output.clear();
        let session = match self.spare.take() {
            Some(h) => match h.await {
                Ok(Ok(s)) => Ok(s),
                Ok(Err(e)) => Err(e),
                Err(e) => Err(format!("spare node task failed: {e}")),
            },
            None => start_session(self.exe.clone(), self.cfg.clone()).await,
        };
        let session = match session {
            Ok(s) => s,
            Err(e) => return Output::failed(FailureKind::Launch, e),
        };
        self.naming = Some(Naming {
            source: subject.source.clone(),
            source_name: subject.source_name.clone(),
            hidden: vec![session.loader_url.clone()],
        });
        let files: Vec<&PathBuf> = subject
            .prelude
            .iter()
            .chain(std::iter::once(&subject.source))
            .chain(subject.epilogue.iter())
            .collect();
        let list = session.dir.path().join("files.json");
        let written = serde_json::to_string(&files)
            .map_err(|e| e.to_string())
            .and_then(|j| std::fs::write(&list, j).map_err(|e| e.to_string()));
        self.session = Some(session);
        if let Err(e) = written {
            self.kill();
            return Output::failed(FailureKind::Launch, format!("writing {}: {e}", list.display()));
        }
        if let Err(f) = self.run_to_source().await {
            self.kill();
            return f.launch();
        }
        self.spawn_spare();
        Output::Finished {
            exit_code: None,
            signal: None,
        }
    }

    async fn set_breakpoint(&mut self, at: &Location) -> Output {
        let params = match v8::breakpoint_request(at, self.naming.as_ref(), self.source_url.as_deref(), || {
            self.ended_message()
        }) {
            Ok(p) => p,
            Err(answer) => return *answer,
        };
        // Some: the request was made for it.
        let Some(naming) = self.naming.clone() else {
            return Fail::Protocol("no subject loaded".into()).output();
        };
        let reply = self.call("Debugger.setBreakpointByUrl", params).await;
        let scripts = self.session.as_ref().map(|h| &h.scripts);
        v8::breakpoint_answer(at, reply, &naming, scripts, &mut self.breakpoints)
    }

    async fn remove_breakpoint(&mut self, at: &Location) -> Output {
        let id = match v8::breakpoint_to_remove(at, &mut self.breakpoints) {
            Ok(id) => id,
            Err(answer) => return *answer,
        };
        let reply = self
            .call("Debugger.removeBreakpoint", json!({"breakpointId": id}))
            .await;
        v8::removal_answer(reply)
    }

    async fn start(&mut self) -> Output {
        if self.session.is_none()
            && let Some(end) = &self.ended
        {
            return end.clone();
        }
        // Resuming from the pause before the source skips a breakpoint on
        // the source's first statement (V8 does not break again where it
        // stands), so step onto that statement first.
        if let Err(e) = self.send("Debugger.pause").await {
            return self.outcome(e).await;
        }
        if let Err(e) = self.send("Debugger.resume").await {
            return self.outcome(e).await;
        }
        let first = self.wait_stop(Motion::Run).await;
        let Output::Paused(mut st) = first else {
            return first;
        };
        let on_breakpoint = st.reason == PauseReason::Breakpoint
            || self
                .breakpoints
                .values()
                .any(|(_, r)| r.as_ref().is_some_and(|r| *r == st.location));
        if on_breakpoint {
            st.reason = PauseReason::Breakpoint;
            return Output::Paused(st);
        }
        if let Err(e) = self.send("Debugger.resume").await {
            return self.outcome(e).await;
        }
        self.wait_stop(Motion::Run).await
    }

    async fn exec(&mut self, action: ExecAction) -> Output {
        let (method, motion) = match action {
            ExecAction::Resume => ("Debugger.resume", Motion::Run),
            ExecAction::StepIn => ("Debugger.stepInto", Motion::Step),
            ExecAction::StepOver => ("Debugger.stepOver", Motion::Step),
            ExecAction::StepOut => ("Debugger.stepOut", Motion::Step),
        };
        if let Err(e) = self.send(method).await {
            return self.outcome(e).await;
        }
        self.wait_stop(motion).await
    }

    async fn reset(&mut self) {
        self.kill();
        if !self.cfg.warm {
            self.shutdown().await;
        }
    }

    async fn shutdown(&mut self) {
        self.kill();
        if let Some(h) = self.spare.take() {
            h.abort();
            if let Ok(Ok(Ok(mut s))) = tokio::time::timeout(Duration::from_secs(5), h).await {
                s.guard.kill_tree();
            }
        }
    }

    fn take_transcript(&mut self) -> Vec<RawMessage> {
        if let Some(s) = self.session.as_mut() {
            self.transcript.extend(s.cdp.take_transcript());
        }
        self.transcript.take()
    }

    fn program_output(&self) -> String {
        let live = self
            .session
            .as_ref()
            .and_then(|s| s.output.lock().ok().map(|o| o.clone()))
            .unwrap_or_default();
        format!("{}{live}", self.output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_escaped_for_blackbox_patterns() {
        assert_eq!(
            regex_escape("file:///tmp/doppel-node-x.1/loader.js"),
            "file:\\/\\/\\/tmp\\/doppel-node-x\\.1\\/loader\\.js"
        );
    }
}
