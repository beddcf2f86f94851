//! V8 in headless Chromium over the Chrome DevTools Protocol.
//!
//! One browser serves many runs (warm); each run is a fresh page (target).
//!
//! 1. Browser: `chromium --headless --remote-debugging-port=0
//!    --user-data-dir=<tmp> --no-first-run ...` (`--no-sandbox` as root), in
//!    its own process group (and network namespace, connected from inside
//!    it); the browser websocket from the `DevTools listening on ws://...`
//!    line of stderr. A browser that died or stopped answering is killed
//!    with its whole tree and replaced on the next `load`.
//! 2. `load`: `Target.createTarget{url: "about:blank"}` and
//!    `Target.attachToTarget{targetId, flatten: true}`; on that session
//!    `Runtime.enable`, `Debugger.enable`, `Page.enable`,
//!    `Runtime.addBinding{name: "__doppel_done"}`, blackboxing of the page
//!    itself, and `Debugger.setInstrumentationBreakpoint{beforeScriptExecution}`.
//!    Then `Page.navigate` to a generated `page.html` (in a temporary
//!    directory) that loads the prelude, the source and the epilogue as
//!    `<script src="file://...">` (classic scripts, one global scope, each
//!    keeps its own line numbers) and ends with an inline script calling
//!    `__doppel_done()`. Resumed until the instrumentation pause *before
//!    the source* runs: the source is parsed (breakpoints resolve at once)
//!    and the prelude has run. The instrumentation breakpoint is removed.
//! 3. Breakpoints, start and exec as in [`super::node`]
//!    (`setBreakpointByUrl` with the source's `scriptParsed` URL;
//!    `resume`/`stepInto`/`stepOver`/`stepOut`; state as in [`super::v8`]).
//! 4. End: `Runtime.bindingCalled` of `__doppel_done`, i.e. every script
//!    has run (timers still pending then are not waited for). There is no
//!    process exit: the exit code is 1 when a script threw an uncaught
//!    exception (`Runtime.exceptionThrown`, including a syntax error; later
//!    scripts still run, as in a browser), else 0.
//! 5. `reset`: `Target.closeTarget`. `warm = false` shuts the browser down
//!    after every run (and `load` starts a fresh one).
//!
//! Program output: `console.*` calls (`Runtime.consoleAPICalled`, arguments
//! joined by spaces: strings as they are, other values by description) and
//! uncaught exceptions (`Uncaught <description>`), one line each.
//! Resource limits are not applied: the program runs in a renderer process
//! whose pid CDP does not tell; the action timeout bounds every run.

use super::Fail;
use super::page::{file_url, page_html};
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
use tokio::io::AsyncBufReadExt;

/// The binding the generated page calls when every script has run.
const DONE_BINDING: &str = "__doppel_done";

/// The registry entry.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: "chromium",
        languages: &[Language::JavaScript],
        probe,
        create: |cfg| Ok(Box::new(Chromium::new(cfg)?)),
    }
}

fn executable(cfg: &DebuggerConfig) -> Result<PathBuf, BackendError> {
    let not_found = |what: String| BackendError::NotInstalled {
        name: "chromium".into(),
        hint: format!("{what}; apt-get install chromium"),
    };
    match &cfg.executable {
        Some(exe) => super::which(exe).ok_or_else(|| not_found(format!("'{exe}' not found"))),
        None => ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .find_map(|n| super::which(n))
            .ok_or_else(|| not_found("no chromium, chromium-browser or google-chrome on PATH".into())),
    }
}

fn probe(cfg: &DebuggerConfig) -> Result<ToolInfo, BackendError> {
    let exe = executable(cfg)?;
    // Debian's wrapper script prints a shell warning first; the version line
    // is the one naming the browser.
    let version = super::version_line_where(&exe, &["--version"], |l| l.contains("Chromium") || l.contains("Chrome"))?
        .ok_or_else(|| BackendError::Other(format!("{} --version could not be started", exe.display())))?;
    Ok(ToolInfo {
        name: "chromium".into(),
        version,
        protocol: "CDP".into(),
        executable: exe.display().to_string(),
    })
}

/// The command-line flags of the browser (besides the profile directory).
fn flags() -> Vec<&'static str> {
    let mut f = vec![
        "--headless",
        "--remote-debugging-port=0",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-gpu",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
        "--disable-background-timer-throttling",
        "--disable-renderer-backgrounding",
        "--disable-backgrounding-occluded-windows",
        "--mute-audio",
        "--password-store=basic",
    ];
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        f.push("--no-sandbox"); // Chromium refuses to run as root with its sandbox
    }
    f
}

/// One running browser and its connection.
struct Browser {
    guard: ProcessGuard,
    cdp: CdpClient,
    _profile: tempfile::TempDir,
    stderr: Arc<Mutex<String>>,
}

impl Browser {
    fn stderr_tail(&self) -> String {
        let t = self.stderr.lock().map(|t| t.clone()).unwrap_or_default();
        let lines: Vec<&str> = t.lines().collect();
        lines[lines.len().saturating_sub(5)..].join("\n")
    }
}

async fn start_browser(exe: &std::path::Path, cfg: &DebuggerConfig) -> Result<Browser, String> {
    let profile = tempfile::Builder::new()
        .prefix("doppel-chromium-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"))?;
    let mut cmd = process::piped(&exe.to_string_lossy());
    cmd.args(flags())
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    super::fixed_environment(&mut cmd);
    let mut guard = process::spawn(cmd, cfg.sandbox).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let pid = guard.pid();
    let Some(stderr) = guard.child_mut().stderr.take() else {
        return Err("chromium's stderr pipe is missing".into());
    };
    let tail = Arc::new(Mutex::new(String::new()));
    let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
    let buf = tail.clone();
    tokio::spawn(async move {
        let mut url_tx = Some(url_tx);
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            if let Some(u) = l.strip_prefix("DevTools listening on ")
                && let Some(tx) = url_tx.take()
            {
                let _ = tx.send(u.trim().to_string());
            }
            if let Ok(mut t) = buf.lock() {
                t.push_str(&l);
                t.push('\n');
                if t.len() > 4096 {
                    let cut = t.len() - 4096;
                    let cut = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(t.len());
                    t.drain(..cut);
                }
            }
        }
    });
    let url = match tokio::time::timeout(cfg.action_timeout, url_rx).await {
        Ok(Ok(u)) => u,
        Ok(Err(_)) => {
            let said = tail.lock().map(|t| t.clone()).unwrap_or_default();
            return Err(format!("chromium exited before listening: {}", said.trim()));
        }
        Err(_) => {
            return Err(format!(
                "chromium printed no DevTools URL within {:?}",
                cfg.action_timeout
            ));
        }
    };
    let netns = guard.network_isolated.then_some(pid);
    let mut cdp = CdpClient::connect(&url, cfg.action_timeout, netns)
        .await
        .map_err(|e| format!("connecting to chromium: {e}"))?;
    cdp.set_discard_filter(|m| m["method"] == "Debugger.resumed");
    Ok(Browser {
        guard,
        cdp,
        _profile: profile,
        stderr: tail,
    })
}

/// The page of the current run.
struct Page {
    target: String,
    session: String,
    dir: tempfile::TempDir,
    scripts: Scripts,
    instrumentation: Option<String>,
    /// An uncaught exception was reported (exit code 1).
    threw: bool,
}

/// One line of program output for a `Runtime.consoleAPICalled` event.
fn console_line(params: &Json) -> String {
    let args = params["args"].as_array().cloned().unwrap_or_default();
    let parts: Vec<String> = args
        .iter()
        .map(|a| match a["type"].as_str() {
            Some("string") => a["value"].as_str().unwrap_or("").to_string(),
            _ => v8::render(a).0,
        })
        .collect();
    format!("{}\n", parts.join(" "))
}

/// One line of program output for a `Runtime.exceptionThrown` event:
/// Chromium's own `text` (`Uncaught Error: boom`) when it says more than
/// `Uncaught`, else `Uncaught` and the first line of the exception's description.
fn exception_line(params: &Json) -> String {
    let d = &params["exceptionDetails"];
    let text = d["text"].as_str().unwrap_or("").trim();
    let desc = d["exception"]["description"]
        .as_str()
        .and_then(|s| s.lines().next())
        .or(d["exception"]["value"].as_str());
    let line = match desc {
        Some(desc) if text.is_empty() || text == "Uncaught" => format!("Uncaught {desc}"),
        _ if !text.is_empty() => text.to_string(),
        _ => "Uncaught exception".to_string(),
    };
    format!("{line}\n")
}

/// The Chromium backend. See the module documentation.
pub struct Chromium {
    info: ToolInfo,
    cfg: DebuggerConfig,
    exe: PathBuf,
    browser: Option<Browser>,
    page: Option<Page>,
    transcript: crate::protocol::Transcript,
    naming: Option<Naming>,
    source_url: Option<String>,
    /// Requested (line, column) → CDP breakpoint id and resolved location.
    breakpoints: v8::Breakpoints,
    ended: Option<Output>,
    output: String,
}

impl Chromium {
    /// Creates the backend; the browser starts on the first `load`.
    ///
    /// Errors: [`BackendError::NotInstalled`] when no browser is found.
    pub fn new(cfg: &DebuggerConfig) -> Result<Self, BackendError> {
        let info = probe(cfg)?;
        let exe = executable(cfg)?;
        Ok(Self {
            info,
            cfg: cfg.clone(),
            exe,
            browser: None,
            page: None,
            transcript: crate::protocol::Transcript::default(),
            naming: None,
            source_url: None,
            breakpoints: HashMap::new(),
            ended: None,
            output: String::new(),
        })
    }

    /// The pid of the browser process (the wrapper script's), if running (for tests).
    pub fn debugger_pid(&self) -> Option<u32> {
        self.browser.as_ref().map(|b| b.guard.pid())
    }

    /// Kills the browser and everything it started.
    fn kill_browser(&mut self) {
        self.page = None;
        if let Some(mut b) = self.browser.take() {
            self.transcript.extend(b.cdp.take_transcript());
            b.guard.kill_tree();
        }
    }

    fn cdp(&mut self) -> Result<&mut CdpClient, Fail> {
        self.browser
            .as_mut()
            .map(|b| &mut b.cdp)
            .ok_or_else(|| Fail::Crash("chromium is not running".into()))
    }

    fn session(&self) -> Option<String> {
        self.page.as_ref().map(|p| p.session.clone())
    }

    /// Turns a CDP error into a failure; a dead or hung browser is killed.
    fn fail(&mut self, e: CdpError) -> Fail {
        match Fail::from(e) {
            Fail::Timeout(d) => {
                self.kill_browser();
                Fail::Timeout(format!("chromium: {d}"))
            }
            Fail::Crash(d) => {
                let tail = self.browser.as_ref().map(Browser::stderr_tail).unwrap_or_default();
                self.kill_browser();
                Fail::Crash(if tail.is_empty() {
                    format!("chromium: {d}")
                } else {
                    format!("chromium: {d}; stderr: {tail}")
                })
            }
            f => f,
        }
    }

    /// A command on the page's session.
    async fn call(&mut self, method: &str, params: Json) -> Result<Json, Fail> {
        let session = self.session();
        let r = self.cdp()?.call(method, params, session.as_deref()).await;
        r.map_err(|e| self.fail(e))
    }

    /// A command on the browser's own session.
    async fn call_browser(&mut self, method: &str, params: Json) -> Result<Json, Fail> {
        let r = self.cdp()?.call(method, params, None).await;
        r.map_err(|e| self.fail(e))
    }

    /// Moves queued console calls and uncaught exceptions of the page into
    /// the program output.
    fn absorb_output(&mut self) {
        let (Some(b), Some(p)) = (self.browser.as_mut(), self.page.as_mut()) else {
            return;
        };
        let sid = p.session.clone();
        let events = b
            .cdp
            .take_events_of(&["Runtime.consoleAPICalled", "Runtime.exceptionThrown"], Some(&sid));
        for e in events {
            if e["method"] == "Runtime.exceptionThrown" {
                p.threw = true;
                super::push_output(&mut self.output, &exception_line(&e["params"]));
            } else {
                super::push_output(&mut self.output, &console_line(&e["params"]));
            }
        }
        p.scripts.absorb(&mut b.cdp, Some(&sid));
    }

    /// Waits for a pause, the end of the page's scripts, or the loss of the page.
    async fn next_stop(&mut self, what: &str) -> Result<Json, Fail> {
        let sid = self.session().ok_or_else(|| Fail::Crash("no page is open".into()))?;
        let r = self
            .cdp()?
            .wait_for(what, |m| {
                is_event(
                    m,
                    &[
                        "Debugger.paused",
                        "Runtime.bindingCalled",
                        "Inspector.targetCrashed",
                        "Inspector.detached",
                    ],
                    Some(&sid),
                ) || (is_event(m, &["Target.detachedFromTarget"], None) && m["params"]["sessionId"] == *sid)
            })
            .await;
        let m = r.map_err(|e| self.fail(e))?;
        self.absorb_output();
        match m["method"].as_str() {
            Some("Inspector.targetCrashed") => Err(Fail::Crash("chromium: the page's renderer crashed".into())),
            Some("Inspector.detached") | Some("Target.detachedFromTarget") => Err(Fail::Crash(format!(
                "chromium: detached from the page: {}",
                m["params"]
            ))),
            _ => Ok(m),
        }
    }

    /// The page's scripts have all run.
    fn finished(&mut self) -> Output {
        let threw = self.page.as_ref().is_some_and(|p| p.threw);
        let out = Output::Finished {
            exit_code: Some(i32::from(threw)),
            signal: None,
        };
        self.ended = Some(out.clone());
        out
    }

    async fn open_page(&mut self, subject: &Subject) -> Result<(), Fail> {
        let alive = self
            .browser
            .as_mut()
            .is_some_and(|b| !b.cdp.is_closed() && !b.guard.has_exited());
        if !alive {
            self.kill_browser();
            let b = start_browser(&self.exe, &self.cfg).await.map_err(Fail::Crash)?;
            self.browser = Some(b);
        }
        let dir = tempfile::Builder::new()
            .prefix("doppel-page-")
            .tempdir()
            .map_err(|e| Fail::Crash(format!("temporary directory: {e}")))?;
        let files: Vec<&PathBuf> = subject
            .prelude
            .iter()
            .chain(std::iter::once(&subject.source))
            .chain(subject.epilogue.iter())
            .collect();
        let page = dir.path().join("page.html");
        std::fs::write(&page, page_html(&files, &format!("{DONE_BINDING}(\"done\");")))
            .map_err(|e| Fail::Crash(format!("writing {}: {e}", page.display())))?;
        let page_url = file_url(&page);
        let t = self
            .call_browser("Target.createTarget", json!({"url": "about:blank"}))
            .await?;
        let target = t["targetId"]
            .as_str()
            .ok_or_else(|| Fail::Protocol(format!("createTarget answered {t}")))?
            .to_string();
        let a = self
            .call_browser("Target.attachToTarget", json!({"targetId": target, "flatten": true}))
            .await?;
        let session = a["sessionId"]
            .as_str()
            .ok_or_else(|| Fail::Protocol(format!("attachToTarget answered {a}")))?
            .to_string();
        self.page = Some(Page {
            target,
            session,
            dir,
            scripts: Scripts::default(),
            instrumentation: None,
            threw: false,
        });
        self.naming = Some(Naming {
            source: subject.source.clone(),
            source_name: subject.source_name.clone(),
            hidden: vec![page_url.clone()],
        });
        self.call("Runtime.enable", json!({})).await?;
        self.call("Debugger.enable", json!({})).await?;
        self.call("Page.enable", json!({})).await?;
        self.call("Runtime.addBinding", json!({"name": DONE_BINDING})).await?;
        self.call(
            "Debugger.setBlackboxPatterns",
            json!({"patterns": [format!("^{}$", super::node::regex_escape(&page_url))]}),
        )
        .await?;
        let r = self
            .call(
                "Debugger.setInstrumentationBreakpoint",
                json!({"instrumentation": "beforeScriptExecution"}),
            )
            .await?;
        if let Some(p) = self.page.as_mut() {
            p.instrumentation = r["breakpointId"].as_str().map(str::to_string);
        }
        let nav = self.call("Page.navigate", json!({"url": page_url})).await?;
        if let Some(err) = nav["errorText"].as_str() {
            return Err(Fail::Protocol(format!("navigating to {page_url}: {err}")));
        }
        self.run_to_source().await
    }

    /// Runs the page until the instrumentation pause before the source.
    async fn run_to_source(&mut self) -> Result<(), Fail> {
        let naming = self
            .naming
            .clone()
            .ok_or_else(|| Fail::Protocol("no subject loaded".into()))?;
        loop {
            let m = self
                .next_stop("the pause before the source, or the end of the page")
                .await?;
            if m["method"] == "Runtime.bindingCalled" {
                self.finished();
                return Ok(());
            }
            let p = self
                .page
                .as_mut()
                .ok_or_else(|| Fail::Crash("no page is open".into()))?;
            let script = m["params"]["data"]["scriptId"]
                .as_str()
                .or(m["params"]["callFrames"][0]["location"]["scriptId"].as_str())
                .unwrap_or("");
            let url = p.scripts.url(script).unwrap_or("").to_string();
            if m["params"]["reason"] == "instrumentation" && naming.is_source(&url) {
                self.source_url = Some(url);
                if let Some(id) = p.instrumentation.take() {
                    self.call("Debugger.removeBreakpoint", json!({"breakpointId": id}))
                        .await?;
                }
                return Ok(());
            }
            if m["params"]["reason"] != "instrumentation" {
                let note = format!(
                    "paused in {} before the source ran (reason {}); resumed",
                    naming.file(&url),
                    m["params"]["reason"]
                );
                self.cdp()?.note(note);
            }
            self.call("Debugger.resume", json!({})).await?;
        }
    }

    /// Waits for the program to pause or end after a resume or step.
    async fn wait_stop(&mut self, motion: Motion) -> Output {
        let Some(naming) = self.naming.clone() else {
            return Fail::Protocol("no subject loaded".into()).output();
        };
        loop {
            let m = match self.next_stop("a pause or the end of the page").await {
                Ok(m) => m,
                Err(f) => return f.output(),
            };
            if m["method"] == "Runtime.bindingCalled" {
                return self.finished();
            }
            if m["params"]["reason"] == "instrumentation" {
                if let Err(f) = self.call("Debugger.resume", json!({})).await {
                    return f.output();
                }
                continue;
            }
            let reason = v8::pause_reason(&m, motion);
            let depth = self.cfg.value_depth;
            let (Some(b), Some(p)) = (self.browser.as_mut(), self.page.as_ref()) else {
                return Fail::Crash("chromium is not running".into()).output();
            };
            let r = v8::read_state(&mut b.cdp, Some(&p.session), &m, &p.scripts, &naming, reason, depth).await;
            return match r {
                Ok(st) => Output::Paused(st),
                Err(e) => self.fail(e).output(),
            };
        }
    }

    fn ended_message(&self) -> String {
        match &self.ended {
            Some(Output::Finished { exit_code, .. }) => format!(
                "the program ended before the source ran (exit code {})",
                exit_code.map_or("none".into(), |c| c.to_string())
            ),
            _ => "the program is not running".into(),
        }
    }

    /// Closes the current page (bounded); a browser that does not answer is killed.
    async fn close_page(&mut self) {
        if let Some(p) = self.page.take() {
            if let Some(b) = self.browser.as_mut() {
                // Nothing is awaited between runs: what is queued is stale.
                b.cdp.forget_session(Some(&p.session));
                b.cdp.forget_session(None);
                let r = b
                    .cdp
                    .call("Target.closeTarget", json!({"targetId": p.target}), None)
                    .await;
                self.transcript.extend(b.cdp.take_transcript());
                if let Err(e) = r {
                    self.transcript
                        .push(RawMessage::received(format!("[doppel] closing the page: {e}")));
                    self.kill_browser();
                }
            }
            drop(p.dir);
        }
    }
}

#[async_trait]
impl Debugger for Chromium {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            columns: true,
            warm_reuse: true,
            argument_flags: false,
            notes: vec![
                "one headless browser serves many runs; each run is a fresh page".into(),
                "V8 does not tell parameters from locals (local-scope variables are `unknown`)".into(),
                "variables: the top frame's block and local scopes (not closure, script or global)".into(),
                "breakpoints only in the source file (not in the prelude or epilogue)".into(),
                "the end is the last script of the page; exit code 1 after an uncaught exception".into(),
                "no resource limits: the renderer's pid is unknown; the action timeout bounds a run".into(),
                format!("call stacks read to {} frames", v8::MAX_FRAMES),
            ],
        }
    }

    async fn load(&mut self, subject: &Subject) -> Output {
        self.close_page().await;
        if !self.cfg.warm {
            self.kill_browser();
        }
        self.breakpoints.clear();
        self.source_url = None;
        self.ended = None;
        self.output.clear();
        match self.open_page(subject).await {
            Ok(()) => Output::Finished {
                exit_code: None,
                signal: None,
            },
            Err(f) => {
                self.close_page().await;
                f.launch()
            }
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
        let scripts = self.page.as_ref().map(|h| &h.scripts);
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
        if self.source_url.is_none()
            && let Some(end) = &self.ended
        {
            return end.clone();
        }
        // As in the node backend: resuming from the pause before the source
        // would skip a breakpoint on its first statement.
        if let Err(f) = self.call("Debugger.pause", json!({})).await {
            return f.output();
        }
        if let Err(f) = self.call("Debugger.resume", json!({})).await {
            return f.output();
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
        if let Err(f) = self.call("Debugger.resume", json!({})).await {
            return f.output();
        }
        self.wait_stop(Motion::Run).await
    }

    async fn exec(&mut self, action: ExecAction) -> Output {
        if let Some(end) = &self.ended {
            return Output::failed(FailureKind::Protocol, format!("the program already ended ({end:?})"));
        }
        let (method, motion) = match action {
            ExecAction::Resume => ("Debugger.resume", Motion::Run),
            ExecAction::StepIn => ("Debugger.stepInto", Motion::Step),
            ExecAction::StepOver => ("Debugger.stepOver", Motion::Step),
            ExecAction::StepOut => ("Debugger.stepOut", Motion::Step),
        };
        if let Err(f) = self.call(method, json!({})).await {
            return f.output();
        }
        self.wait_stop(motion).await
    }

    async fn reset(&mut self) {
        self.close_page().await;
        if !self.cfg.warm {
            self.shutdown().await;
        }
    }

    async fn shutdown(&mut self) {
        self.page = None;
        self.kill_browser();
    }

    fn take_transcript(&mut self) -> Vec<RawMessage> {
        if let Some(b) = self.browser.as_mut() {
            self.transcript.extend(b.cdp.take_transcript());
        }
        self.transcript.take()
    }

    fn program_output(&self) -> String {
        self.output.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_every_file_in_order_then_signals_the_end() {
        let a = PathBuf::from("/t/pre lude.js");
        let b = PathBuf::from("/t/prog.js");
        let html = page_html(&[&a, &b], &format!("{DONE_BINDING}(\"done\");"));
        let pre = html.find("file:///t/pre%20lude.js").unwrap();
        let prog = html.find("file:///t/prog.js").unwrap();
        let done = html.find("__doppel_done(").unwrap();
        assert!(pre < prog && prog < done, "{html}");
    }

    #[test]
    fn console_calls_and_exceptions_render_as_lines() {
        let c = json!({"type": "log", "args": [
            {"type": "string", "value": "probe"},
            {"type": "number", "value": 5, "description": "5"},
            {"type": "object", "className": "Object", "description": "Object", "objectId": "1"}]});
        assert_eq!(console_line(&c), "probe 5 Object\n");
        let e = json!({"exceptionDetails": {"text": "Uncaught", "exception": {
            "type": "object", "subtype": "error", "description": "SyntaxError: Unexpected end of input\n    at x"}}});
        assert_eq!(exception_line(&e), "Uncaught SyntaxError: Unexpected end of input\n");
        let e =
            json!({"exceptionDetails": {"text": "Uncaught Error: boom", "exception": {"description": "Error: boom"}}});
        assert_eq!(exception_line(&e), "Uncaught Error: boom\n");
    }
}
