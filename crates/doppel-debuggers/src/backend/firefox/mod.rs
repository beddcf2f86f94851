//! SpiderMonkey in headless Firefox (ESR) over the Firefox Remote Debugging
//! Protocol ([`crate::protocol::rdp`]).
//!
//! One browser serves many runs (warm); each run navigates the browser's one
//! tab to a fresh page.
//!
//! 1. Browser: `firefox-esr --headless --no-remote --profile <tmp>
//!    --start-debugger-server <port> about:blank` in its own process group
//!    (and network namespace; the port is connected from inside it), with a
//!    fresh profile whose `user.js` enables the debugger server without a
//!    prompt and turns off first-run pages, updates, telemetry and other
//!    network traffic. `HOME` and the XDG directories point into the
//!    profile directory; the crash reporter is off (it would outlive the
//!    browser). Then `listTabs` (polled: empty for the first second),
//!    `getWatcher{isServerTargetSwitchingEnabled}` (the watcher then
//!    announces each new page's target, thread actor included),
//!    `watchTargets{frame}`, `watchResources{source, thread-state,
//!    console-message, error-message}`, `getBreakpointListActor`.
//!    A browser that died or stopped answering is killed with its whole
//!    tree and replaced on the next `load`.
//! 2. `load`: a generated `page.html` (in a temporary directory) loads the
//!    prelude, the source and the epilogue as `<script src="file://...">`
//!    (classic scripts, one global, each keeps its own line numbers) and
//!    ends with an inline script logging a marker unique to the run. The
//!    event breakpoint `script.source.firstStatement` is switched on (on the
//!    breakpoint-list actor: session data, so the new page's thread has it
//!    before any script runs) and the tab navigates to the page. The thread
//!    pauses at the first statement of each script: resumed in the prelude,
//!    kept at the source's (the source is parsed, its source actor exists,
//!    nothing of it has run), where the event breakpoint is switched off.
//!    Why one reused tab and not a tab per run: RDP has no request to open a
//!    tab, and navigation replaces the page's target and thread actor
//!    (server-side target switching) even when the old page is paused.
//!    Packets of earlier pages are told apart by their actors: every thread
//!    and target actor known before the navigation is stale.
//! 3. Breakpoints: SpiderMonkey does not slide breakpoints, and the
//!    breakpoint-list actor needs a column; the DevTools front end's rule is
//!    emulated (see [`choose_position`] and `docs/normalization.md`).
//!    `setBreakpoint{location: {sourceUrl, line, column}}` (0-based column),
//!    `removeBreakpoint` with the same location.
//! 4. `start`: when a breakpoint is on the very position the source is
//!    paused at (its first statement), that pause is reported as the
//!    breakpoint's (SpiderMonkey would not pause there again after
//!    resuming: it skips a breakpoint at the location of the previous
//!    pause); otherwise `resume`. `exec`: `resume` with `resumeLimit`
//!    `step` / `next` / `finish` (step in / over / out), none to continue.
//!    Only `paused` packets of the thread are waited for (each pause is also
//!    reported as a throttled `thread-state` resource, which is ignored).
//!    A step that stops in the page's own inline script (after the last
//!    user script) goes on as in Chromium, where the page is blackboxed:
//!    `finish` while user frames are below, else run to the end.
//! 5. End: the marker's `console-message`, i.e. every script has run. No
//!    process exit: exit code 1 after an uncaught exception or syntax error
//!    (`error-message` resources that are not warnings; later scripts still
//!    run), else 0.
//! 6. Pause state: `thread.frames` (innermost first, without frames of the
//!    page itself, at most [`v8::MAX_FRAMES`]); RDP lines are 1-based and
//!    columns 0-based, the model's columns 1-based. A frame of top-level
//!    code (`(global)`) or an anonymous function is `(anonymous)`, as V8
//!    renders them. Variables of the top frame: its environment chain from
//!    `frame.getEnvironment`, innermost first: block scopes (variables
//!    [`VariableKind::Local`], like V8's `block` scope), a function's
//!    top-level lexical scope and the function scope (parameters and `var`s;
//!    [`VariableKind::Unknown`], like V8's `local` scope), stopping after the
//!    function scope or at the script's global lexical scope (V8 shows
//!    neither closures nor script and global scopes). The function scope's
//!    `arguments` object is left out (V8 lists it only when the function
//!    uses it), and so are bindings in their temporal dead zone (Chromium
//!    omits them). Values are rendered as [`v8::render`] renders V8's (see
//!    [`grip_text`]; a function by V8's header taken from its source text,
//!    [`function_head`], in the script whose text has the function's
//!    parameters at the grip's position, [`checked_function_head`]: Firefox
//!    sometimes names the page's first script); plain objects and arrays
//!    are expanded with `prototypeAndProperties` to `value_depth` levels, at
//!    most [`v8::MAX_CHILDREN`] members each, accessors and `__proto__` left
//!    out.
//!
//! Program output: `console.*` calls (arguments joined by spaces: strings as
//! they are, other values rendered) and uncaught exceptions (`Uncaught ...`).
//! Resource limits are not applied: the program runs in a content process
//! RDP does not name; the action timeout bounds every run.

//!
//! Files: this one (the backend: runs, pages, steps, the end of a run),
//! `browser.rs` (step 1: the profile, starting and killing the browser),
//! `state.rs` (step 6: the pause state read from frames and environments)
//! and `values.rs` (values, functions and console lines rendered as V8's).

mod browser;
mod state;
mod values;

use super::page::{file_url, page_html};
use super::v8::{self, Naming};
use super::{Fail, StderrTail};
use crate::protocol::rdp::{RdpClient, RdpError};
use crate::registry::BackendEntry;
use crate::{BackendError, Capabilities, Debugger, DebuggerConfig};
use async_trait::async_trait;
use browser::*;
use doppel_core::process::{self, ProcessGuard};
use doppel_core::{
    ExecAction, FailureKind, Frame, Language, Location, Output, PauseReason, ProgramState, RawMessage, Subject,
    ToolInfo, Value, Variable, VariableKind,
};
use serde_json::{Value as Json, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;
use values::*;
pub use values::{checked_function_head, function_head, grip_text, js_number};

/// The event breakpoint that pauses at the first statement of every script.
const FIRST_STATEMENT: &str = "script.source.firstStatement";

/// The shortest bound for starting the browser (it takes 1-3 s to list its
/// tab on a busy 2-core machine), whatever the action timeout.
const MIN_STARTUP: Duration = Duration::from_secs(30);

/// The registry entry.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: "firefox",
        languages: &[Language::JavaScript],
        probe,
        create: |cfg| Ok(Box::new(Firefox::new(cfg)?)),
    }
}

fn executable(cfg: &DebuggerConfig) -> Result<PathBuf, BackendError> {
    let not_found = |what: String| BackendError::NotInstalled {
        name: "firefox".into(),
        hint: format!("{what}; apt-get install firefox-esr"),
    };
    match &cfg.executable {
        Some(exe) => super::which(exe).ok_or_else(|| not_found(format!("'{exe}' not found"))),
        None => ["firefox-esr", "firefox"]
            .iter()
            .find_map(|n| super::which(n))
            .ok_or_else(|| not_found("no firefox-esr or firefox on PATH".into())),
    }
}

fn probe(cfg: &DebuggerConfig) -> Result<ToolInfo, BackendError> {
    let exe = executable(cfg)?;
    let version = super::version_line(&exe, &["--version"])?
        .filter(|v| v.contains("Firefox"))
        .ok_or_else(|| BackendError::Other(format!("{} --version printed no Firefox version", exe.display())))?;
    Ok(ToolInfo {
        name: "firefox".into(),
        version,
        protocol: "RDP".into(),
        executable: exe.display().to_string(),
    })
}

/// The DevTools front end's choice of a breakpoint position for a click on
/// `line` (1-based), optionally at `column` (1-based), among `positions`
/// (line → 0-based columns, from `getBreakpointPositionsCompressed`) and
/// `breakable` lines (from `getBreakableLines`). `Ok((line, column))` with
/// the 0-based column, or `Err(why)` when the front end sets nothing.
///
/// Followed: `devtools/client/debugger/src/components/Editor/index.js`
/// (a gutter click on a line not in `breakableLines` is ignored) and
/// `actions/breakpoints/modify.js` `addBreakpoint` →
/// `selectors/visibleColumnBreakpoints.js` `getFirstBreakpointPosition`
/// (the positions of that line sorted by column, the first one), or with a
/// column `utils/breakpoint/breakpointPositions.js` `findPosition` (the
/// position at exactly that column). No position: "Unable to add
/// breakpoint at non-breakable location" and nothing is set; the front end
/// never moves a breakpoint to another line.
pub fn choose_position(
    positions: &BTreeMap<u32, Vec<u32>>,
    breakable: &[u32],
    line: u32,
    column: Option<u32>,
) -> Result<(u32, u32), String> {
    if !breakable.contains(&line) {
        return Err(format!(
            "line {line} is not breakable (the Firefox debugger ignores a click on it)"
        ));
    }
    let cols = positions.get(&line).filter(|c| !c.is_empty()).ok_or_else(|| {
        format!("line {line} has no breakpoint positions (the Firefox debugger sets no breakpoint there)")
    })?;
    match column {
        None => Ok((line, *cols.iter().min().expect("not empty"))),
        Some(c) => {
            let want = c.saturating_sub(1);
            cols.iter()
                .find(|&&x| x == want)
                .map(|&x| (line, x))
                .ok_or_else(|| format!("no breakpoint position at {line}:{c}"))
        }
    }
}

/// Parses `getBreakpointPositionsCompressed`'s `positions` (`{"11": [8, 17]}`).
fn parse_positions(reply: &Json) -> BTreeMap<u32, Vec<u32>> {
    let mut out = BTreeMap::new();
    if let Some(map) = reply["positions"].as_object() {
        for (line, cols) in map {
            if let Ok(l) = line.parse::<u32>() {
                let mut cols: Vec<u32> = cols
                    .as_array()
                    .map(|a| a.iter().filter_map(|c| c.as_u64()).map(|c| c as u32).collect())
                    .unwrap_or_default();
                cols.sort_unstable();
                out.insert(l, cols);
            }
        }
    }
    out
}

/// A source's breakable lines and breakpoint positions (line → 0-based columns).
type Breakable = (Vec<u32>, BTreeMap<u32, Vec<u32>>);

/// The page of the current run.
struct Run {
    _dir: tempfile::TempDir,
    marker: String,
    /// Thread and target actors of earlier pages: their packets are stale.
    stale_threads: HashSet<String>,
    stale_targets: HashSet<String>,
    /// The thread actor of this run's page, once it paused.
    thread: Option<String>,
    /// Source actor → URL.
    sources: HashMap<String, String>,
    /// The subject's source: actor and URL, once it is paused before it runs.
    source: Option<(String, String)>,
    /// The pause at the source's first statement, until `start`.
    first_pause: Option<Json>,
    /// `getBreakableLines` and `getBreakpointPositionsCompressed` of the source.
    breakable: Option<Breakable>,
    /// An uncaught exception was reported (exit code 1).
    threw: bool,
    /// Script URL → its text (for function headers), `None` if unreadable.
    texts: HashMap<String, Option<String>>,
    /// The marker was logged: every script has run.
    done: bool,
}

/// What a wait for the program ended with.
enum Stop {
    Paused(Json),
    End,
}

/// The Firefox backend. See the module documentation.
pub struct Firefox {
    info: ToolInfo,
    cfg: DebuggerConfig,
    exe: PathBuf,
    browser: Option<Browser>,
    run: Option<Run>,
    runs: u64,
    transcript: crate::protocol::Transcript,
    naming: Option<Naming>,
    /// Requested (line, column) → the emulated location (1-based column).
    breakpoints: HashMap<(u32, Option<u32>), Location>,
    /// Emulated location → how many requests share it (set once on the server).
    installed: HashMap<(u32, u32), usize>,
    ended: Option<Output>,
    output: String,
}

impl Firefox {
    /// Creates the backend; the browser starts on the first `load`.
    ///
    /// Errors: [`BackendError::NotInstalled`] when no firefox is found.
    pub fn new(cfg: &DebuggerConfig) -> Result<Self, BackendError> {
        let info = probe(cfg)?;
        let exe = executable(cfg)?;
        Ok(Self {
            info,
            cfg: cfg.clone(),
            exe,
            browser: None,
            run: None,
            runs: 0,
            transcript: crate::protocol::Transcript::default(),
            naming: None,
            breakpoints: HashMap::new(),
            installed: HashMap::new(),
            ended: None,
            output: String::new(),
        })
    }

    /// The pid of the browser process, if running (for tests).
    pub fn debugger_pid(&self) -> Option<u32> {
        self.browser.as_ref().map(|b| b.guard.pid())
    }

    /// Kills the browser and everything it started.
    fn kill_browser(&mut self) {
        self.run = None;
        self.installed.clear();
        if let Some(mut b) = self.browser.take() {
            self.transcript.extend(b.rdp.take_transcript());
            let pid = b.guard.pid();
            b.guard.kill_tree();
            kill_crash_helpers(pid);
        }
    }

    fn browser(&mut self) -> Result<&mut Browser, Fail> {
        self.browser
            .as_mut()
            .ok_or_else(|| Fail::Crash("firefox is not running".into()))
    }

    /// Turns an RDP error into a failure; a dead or hung browser is killed.
    fn fail(&mut self, e: RdpError) -> Fail {
        match Fail::from(e) {
            Fail::Timeout(d) => {
                self.kill_browser();
                Fail::Timeout(format!("firefox: {d}"))
            }
            Fail::Crash(d) => {
                let tail = self
                    .browser
                    .as_ref()
                    .map(|b| b.stderr.last_lines(5))
                    .unwrap_or_default();
                self.kill_browser();
                Fail::Crash(if tail.is_empty() {
                    format!("firefox: {d}")
                } else {
                    format!("firefox: {d}; stderr: {tail}")
                })
            }
            f => {
                // A malformed packet leaves the stream unusable.
                if self.browser.as_ref().is_some_and(|b| b.rdp.is_closed()) {
                    self.kill_browser();
                }
                f
            }
        }
    }

    /// A request to `to`, bounded by the action timeout.
    async fn request(&mut self, to: &str, kind: &str, params: Json) -> Result<Json, Fail> {
        let r = self.browser()?.rdp.request(to, kind, params).await;
        r.map_err(|e| self.fail(e))
    }

    fn thread(&self) -> Result<String, Fail> {
        self.run
            .as_ref()
            .and_then(|r| r.thread.clone())
            .ok_or_else(|| Fail::Protocol("the page has no paused thread".into()))
    }

    /// Resumes the page's thread, with a step limit (`null`: run).
    async fn resume(&mut self, limit: Json) -> Result<(), Fail> {
        let thread = self.thread()?;
        self.request(&thread, "resume", json!({"resumeLimit": limit})).await?;
        Ok(())
    }

    /// Takes the queued resources and announcements: program output,
    /// uncaught exceptions, sources, new targets, the end marker; drops
    /// the events nothing waits for.
    fn absorb(&mut self) {
        let (Some(b), Some(run)) = (self.browser.as_mut(), self.run.as_mut()) else {
            return;
        };
        let _ = b.rdp.pump();
        let events = b.rdp.take_events(|p| p["type"] != "paused");
        for e in events {
            match e["type"].as_str() {
                Some("target-available-form") => {
                    if let Some(t) = e["target"]["threadActor"].as_str() {
                        b.threads.insert(t.to_string());
                    }
                    if let Some(t) = e["target"]["actor"].as_str() {
                        b.targets.insert(t.to_string());
                    }
                }
                Some("resources-available-array") => {
                    let from = e["from"].as_str().unwrap_or("");
                    if run.stale_targets.contains(from) {
                        continue;
                    }
                    for entry in e["array"].as_array().cloned().unwrap_or_default() {
                        let kind = entry[0].as_str().unwrap_or("");
                        for item in entry[1].as_array().cloned().unwrap_or_default() {
                            match kind {
                                "console-message" => {
                                    if item["arguments"][0].as_str() == Some(run.marker.as_str()) {
                                        run.done = true;
                                    } else if !run.done {
                                        super::push_output(&mut self.output, &console_line(&item));
                                    }
                                }
                                "error-message" => {
                                    if let Some(l) = error_line(&item)
                                        && !run.done
                                    {
                                        run.threw = true;
                                        super::push_output(&mut self.output, &l);
                                    }
                                }
                                "source" => {
                                    if let (Some(a), Some(u)) = (item["actor"].as_str(), item["url"].as_str()) {
                                        run.sources.insert(a.to_string(), u.to_string());
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Waits until `deadline` for a pause of this run's page or the end of
    /// its scripts.
    async fn next_stop(&mut self, deadline: Instant, what: &str) -> Result<Stop, Fail> {
        loop {
            self.absorb();
            let run = self.run.as_ref().ok_or_else(|| Fail::Crash("no page is open".into()))?;
            if run.done {
                return Ok(Stop::End);
            }
            let stale = run.stale_threads.clone();
            let thread = run.thread.clone();
            let ours = move |p: &Json| {
                let from = p["from"].as_str().unwrap_or("");
                p["type"] == "paused" && !stale.contains(from) && thread.as_deref().is_none_or(|t| t == from)
            };
            let b = self.browser()?;
            if let Some(p) = b.rdp.take_first(&ours) {
                if let Some(run) = self.run.as_mut() {
                    run.thread = p["from"].as_str().map(str::to_string);
                }
                return Ok(Stop::Paused(p));
            }
            // Wake on a pause of this page, or on any resource batch (which
            // may carry the end marker).
            let r = b
                .rdp
                .wait_queued_until(deadline, what, |p| ours(p) || p["type"] == "resources-available-array")
                .await;
            r.map_err(|e| self.fail(e))?;
        }
    }

    /// The URL of source actor `actor` (empty when unknown).
    async fn source_url(&mut self, actor: &str) -> Result<String, Fail> {
        if let Some(u) = self.run.as_ref().and_then(|r| r.sources.get(actor)) {
            return Ok(u.clone());
        }
        self.absorb();
        if let Some(u) = self.run.as_ref().and_then(|r| r.sources.get(actor)) {
            return Ok(u.clone());
        }
        let thread = self.thread()?;
        let r = self.request(&thread, "sources", json!({})).await?;
        if let Some(run) = self.run.as_mut() {
            for s in r["sources"].as_array().cloned().unwrap_or_default() {
                if let (Some(a), Some(u)) = (s["actor"].as_str(), s["url"].as_str()) {
                    run.sources.insert(a.to_string(), u.to_string());
                }
            }
            return Ok(run.sources.get(actor).cloned().unwrap_or_default());
        }
        Ok(String::new())
    }

    /// The page's scripts have all run.
    fn finished(&mut self) -> Output {
        let threw = self.run.as_ref().is_some_and(|r| r.threw);
        let out = Output::Finished {
            exit_code: Some(i32::from(threw)),
            signal: None,
        };
        self.ended = Some(out.clone());
        out
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

    async fn open_page(&mut self, subject: &Subject) -> Result<(), Fail> {
        let alive = self
            .browser
            .as_mut()
            .is_some_and(|b| !b.rdp.is_closed() && !b.guard.has_exited());
        if !alive {
            self.kill_browser();
            let b = start_browser(&self.exe, &self.cfg).await.map_err(Fail::Crash)?;
            self.browser = Some(b);
        }
        self.runs += 1;
        let dir = tempfile::Builder::new()
            .prefix("doppel-page-")
            .tempdir()
            .map_err(|e| Fail::Crash(format!("temporary directory: {e}")))?;
        let marker = format!("__doppel_done_{}_{}", std::process::id(), self.runs);
        let files: Vec<&PathBuf> = subject
            .prelude
            .iter()
            .chain(std::iter::once(&subject.source))
            .chain(subject.epilogue.iter())
            .collect();
        let page = dir.path().join("page.html");
        std::fs::write(&page, page_html(&files, &format!("console.log(\"{marker}\");")))
            .map_err(|e| Fail::Crash(format!("writing {}: {e}", page.display())))?;
        let page_url = file_url(&page);
        self.naming = Some(Naming {
            source: subject.source.clone(),
            source_name: subject.source_name.clone(),
            hidden: vec![page_url.clone()],
        });
        // Everything announced so far belongs to earlier pages.
        let b = self.browser()?;
        let _ = b.rdp.pump();
        for e in b.rdp.clear_inbox() {
            if e["type"] == "target-available-form" {
                if let Some(t) = e["target"]["threadActor"].as_str() {
                    b.threads.insert(t.to_string());
                }
                if let Some(t) = e["target"]["actor"].as_str() {
                    b.targets.insert(t.to_string());
                }
            }
            if e["type"] == "paused"
                && let Some(t) = e["from"].as_str()
            {
                b.threads.insert(t.to_string());
            }
            if let Some(t) = e["from"].as_str()
                && e["type"] == "resources-available-array"
            {
                b.targets.insert(t.to_string());
            }
        }
        let (stale_threads, stale_targets) = (b.threads.clone(), b.targets.clone());
        let (tab, list) = (b.tab.clone(), b.breakpoint_list.clone());
        self.run = Some(Run {
            _dir: dir,
            marker,
            stale_threads,
            stale_targets,
            thread: None,
            sources: HashMap::new(),
            source: None,
            first_pause: None,
            breakable: None,
            threw: false,
            texts: HashMap::new(),
            done: false,
        });
        self.request(&list, "setActiveEventBreakpoints", json!({"ids": [FIRST_STATEMENT]}))
            .await?;
        self.request(&tab, "navigateTo", json!({"url": page_url, "waitForLoad": false}))
            .await?;
        self.run_to_source().await
    }

    /// Runs the page until the pause at the source's first statement (or
    /// the end of the page, when the source never runs).
    async fn run_to_source(&mut self) -> Result<(), Fail> {
        let naming = self
            .naming
            .clone()
            .ok_or_else(|| Fail::Protocol("no subject loaded".into()))?;
        let deadline = Instant::now() + self.cfg.action_timeout;
        loop {
            let p = match self
                .next_stop(deadline, "the pause before the source, or the end of the page")
                .await?
            {
                Stop::End => {
                    self.finished();
                    return Ok(());
                }
                Stop::Paused(p) => p,
            };
            let actor = p["frame"]["where"]["actor"].as_str().unwrap_or("").to_string();
            let url = self.source_url(&actor).await?;
            let first = p["why"]["type"] == "eventBreakpoint";
            if first && naming.is_source(&url) {
                let list = self.browser()?.breakpoint_list.clone();
                self.request(&list, "setActiveEventBreakpoints", json!({"ids": []}))
                    .await?;
                if let Some(run) = self.run.as_mut() {
                    run.source = Some((actor, url));
                    run.first_pause = Some(p);
                }
                return Ok(());
            }
            if !first {
                let note = format!(
                    "paused in {} before the source ran (why {}); resumed",
                    naming.file(&url),
                    p["why"]
                );
                self.browser()?.rdp.note(note);
            }
            self.resume(Json::Null).await?;
        }
    }

    /// Waits for the program to pause or end after a resume or step; the
    /// whole wait, including steps that leave the page's own script, lasts
    /// at most the action timeout.
    async fn wait_stop(&mut self, stepping: bool) -> Output {
        let Some(naming) = self.naming.clone() else {
            return Fail::Protocol("no subject loaded".into()).output();
        };
        let deadline = Instant::now() + self.cfg.action_timeout;
        loop {
            let p = match self.next_stop(deadline, "a pause or the end of the page").await {
                Ok(Stop::End) => return self.finished(),
                Ok(Stop::Paused(p)) => p,
                Err(f) => return f.output(),
            };
            let r = async {
                if p["why"]["type"] == "eventBreakpoint" {
                    self.resume(Json::Null).await?;
                    return Ok(None);
                }
                let actor = p["frame"]["where"]["actor"].as_str().unwrap_or("").to_string();
                let url = self.source_url(&actor).await?;
                if naming.is_hidden(&url) {
                    // The page's own script: go on as a blackboxed script would.
                    let frames = self.frames().await?;
                    let mut user_below = false;
                    for f in &frames {
                        let a = f["where"]["actor"].as_str().unwrap_or("");
                        if !naming.is_hidden(&self.source_url(a).await?) {
                            user_below = true;
                        }
                    }
                    let limit = if stepping && user_below {
                        json!({"type": "finish"})
                    } else {
                        Json::Null
                    };
                    self.resume(limit).await?;
                    return Ok(None);
                }
                let reason = match p["why"]["type"].as_str() {
                    Some("breakpoint") => PauseReason::Breakpoint,
                    Some("resumeLimit") => PauseReason::Step,
                    _ => PauseReason::Other,
                };
                self.read_state(&p, reason).await.map(Some)
            }
            .await;
            match r {
                Ok(Some(st)) => return Output::Paused(st),
                Ok(None) => continue,
                Err(f) => return f.output(),
            }
        }
    }

    /// Ends the current run: its breakpoints are removed from the browser
    /// (they are session data of the watcher and would apply to the next
    /// page), the event breakpoint is off. A browser that does not answer
    /// is killed.
    async fn end_run(&mut self) {
        let installed: Vec<(u32, u32)> = self.installed.drain().map(|(k, _)| k).collect();
        let url = self.run.as_ref().and_then(|r| r.source.as_ref().map(|s| s.1.clone()));
        if self.browser.is_some() && self.run.is_some() {
            let list = self
                .browser
                .as_ref()
                .map(|b| b.breakpoint_list.clone())
                .unwrap_or_default();
            let mut r = Ok(Json::Null);
            if let Some(url) = url {
                for (line, column) in installed {
                    r = self
                        .request(
                            &list,
                            "removeBreakpoint",
                            json!({"location": {"sourceUrl": url, "line": line, "column": column}}),
                        )
                        .await;
                    if r.is_err() {
                        break;
                    }
                }
            }
            if r.is_ok() {
                r = self
                    .request(&list, "setActiveEventBreakpoints", json!({"ids": []}))
                    .await;
            }
            if let Err(f) = r {
                let detail = match f {
                    Fail::Timeout(d) | Fail::Crash(d) | Fail::Protocol(d) => d,
                };
                self.transcript
                    .push(RawMessage::received(format!("[doppel] ending the run: {detail}")));
                self.kill_browser();
            }
        }
        if let Some(b) = self.browser.as_mut() {
            self.transcript.extend(b.rdp.take_transcript());
        }
        self.run = None;
    }
}

#[async_trait]
impl Debugger for Firefox {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            columns: true,
            warm_reuse: self.cfg.warm,
            argument_flags: false,
            notes: vec![
                "one headless browser serves many runs; each run navigates its tab to a fresh page".into(),
                "SpiderMonkey does not slide breakpoints: the DevTools front end's choice is emulated (first position on the line; a line without positions gets no breakpoint)".into(),
                "parameters are not told from locals (function-scope variables are `unknown`, as in V8)".into(),
                "variables: the top frame's block scopes and function scope (not closures, script or global); `arguments` left out".into(),
                "breakpoints only in the source file (not in the prelude or epilogue)".into(),
                "the end is the last script of the page; exit code 1 after an uncaught exception".into(),
                "no resource limits: the content process's pid is unknown; the action timeout bounds a run".into(),
                format!("call stacks read to {} frames", v8::MAX_FRAMES),
            ],
        }
    }

    async fn load(&mut self, subject: &Subject) -> Output {
        self.end_run().await;
        if !self.cfg.warm {
            self.kill_browser();
        }
        self.breakpoints.clear();
        self.installed.clear();
        self.ended = None;
        self.output.clear();
        match self.open_page(subject).await {
            Ok(()) => Output::Finished {
                exit_code: None,
                signal: None,
            },
            Err(f) => {
                self.end_run().await;
                f.launch()
            }
        }
    }

    async fn set_breakpoint(&mut self, at: &Location) -> Output {
        let unresolved = |message: String| Output::BreakpointSet {
            requested: at.clone(),
            resolved: None,
            message: Some(message),
        };
        let Some(naming) = self.naming.clone() else {
            return unresolved("no subject loaded".into());
        };
        if at.file != naming.source_name {
            return unresolved(format!("breakpoints are set only in {}", naming.source_name));
        }
        let Some((actor, url)) = self.run.as_ref().and_then(|r| r.source.clone()) else {
            return unresolved(self.ended_message());
        };
        if self.run.as_ref().is_some_and(|r| r.breakable.is_none()) {
            let lines = match self.request(&actor, "getBreakableLines", json!({})).await {
                Ok(r) => r["lines"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Json::as_u64).map(|l| l as u32).collect())
                    .unwrap_or_default(),
                Err(f) => return f.output(),
            };
            let positions = match self
                .request(&actor, "getBreakpointPositionsCompressed", json!({}))
                .await
            {
                Ok(r) => parse_positions(&r),
                Err(f) => return f.output(),
            };
            if let Some(run) = self.run.as_mut() {
                run.breakable = Some((lines, positions));
            }
        }
        let Some((lines, positions)) = self.run.as_ref().and_then(|r| r.breakable.clone()) else {
            return unresolved("no page is open".into());
        };
        let (line, column) = match choose_position(&positions, &lines, at.line, at.column) {
            Ok(p) => p,
            Err(m) => return unresolved(m),
        };
        let resolved = Location {
            file: naming.source_name.clone(),
            line,
            column: Some(column + 1),
        };
        if let Some(old) = self.breakpoints.get(&(at.line, at.column)) {
            // Already set by the same request: nothing changes.
            return Output::BreakpointSet {
                requested: at.clone(),
                resolved: Some(old.clone()),
                message: None,
            };
        }
        if !self.installed.contains_key(&(line, column)) {
            let list = match self.browser() {
                Ok(b) => b.breakpoint_list.clone(),
                Err(f) => return f.output(),
            };
            let r = self
                .request(
                    &list,
                    "setBreakpoint",
                    json!({"location": {"sourceUrl": url, "line": line, "column": column}, "options": {}}),
                )
                .await;
            match r {
                Ok(_) => {}
                Err(Fail::Protocol(m)) => return unresolved(m),
                Err(f) => return f.output(),
            }
        }
        *self.installed.entry((line, column)).or_default() += 1;
        self.breakpoints.insert((at.line, at.column), resolved.clone());
        Output::BreakpointSet {
            requested: at.clone(),
            resolved: Some(resolved),
            message: None,
        }
    }

    async fn remove_breakpoint(&mut self, at: &Location) -> Output {
        let Some(loc) = self.breakpoints.remove(&(at.line, at.column)) else {
            return Output::BreakpointRemoved {
                ok: false,
                message: Some(format!("no breakpoint was set at {at}")),
            };
        };
        let key = (loc.line, loc.column.unwrap_or(1) - 1);
        let left = match self.installed.get_mut(&key) {
            Some(n) => {
                *n -= 1;
                *n
            }
            None => 0,
        };
        if left > 0 {
            return Output::BreakpointRemoved {
                ok: true,
                message: None,
            };
        }
        self.installed.remove(&key);
        let Some(url) = self.run.as_ref().and_then(|r| r.source.as_ref().map(|s| s.1.clone())) else {
            return Output::BreakpointRemoved {
                ok: false,
                message: Some("no page is open".into()),
            };
        };
        let list = match self.browser() {
            Ok(b) => b.breakpoint_list.clone(),
            Err(f) => return f.output(),
        };
        let r = self
            .request(
                &list,
                "removeBreakpoint",
                json!({"location": {"sourceUrl": url, "line": key.0, "column": key.1}}),
            )
            .await;
        match r {
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
        if self.run.as_ref().is_none_or(|r| r.source.is_none())
            && let Some(end) = &self.ended
        {
            return end.clone();
        }
        let Some(first) = self.run.as_mut().and_then(|r| r.first_pause.take()) else {
            return Output::failed(FailureKind::Protocol, "the program was already started");
        };
        // A breakpoint on the very position the source is paused at: this
        // pause is the breakpoint's (SpiderMonkey would not stop there again).
        let w = &first["frame"]["where"];
        let here = (
            w["line"].as_u64().unwrap_or(0) as u32,
            w["column"].as_u64().unwrap_or(0) as u32,
        );
        if self.installed.contains_key(&here) {
            return match self.read_state(&first, PauseReason::Breakpoint).await {
                Ok(st) => Output::Paused(st),
                Err(f) => f.output(),
            };
        }
        if let Err(f) = self.resume(Json::Null).await {
            return f.output();
        }
        self.wait_stop(false).await
    }

    async fn exec(&mut self, action: ExecAction) -> Output {
        if let Some(end) = &self.ended {
            return Output::failed(FailureKind::Protocol, format!("the program already ended ({end:?})"));
        }
        let (limit, stepping) = match action {
            ExecAction::Resume => (Json::Null, false),
            ExecAction::StepIn => (json!({"type": "step"}), true),
            ExecAction::StepOver => (json!({"type": "next"}), true),
            ExecAction::StepOut => (json!({"type": "finish"}), true),
        };
        if let Err(f) = self.resume(limit).await {
            return f.output();
        }
        self.wait_stop(stepping).await
    }

    async fn reset(&mut self) {
        self.end_run().await;
        if !self.cfg.warm {
            self.shutdown().await;
        }
    }

    async fn shutdown(&mut self) {
        self.run = None;
        self.kill_browser();
    }

    fn take_transcript(&mut self) -> Vec<RawMessage> {
        if let Some(b) = self.browser.as_mut() {
            self.transcript.extend(b.rdp.take_transcript());
        }
        self.transcript.take()
    }

    fn program_output(&self) -> String {
        self.output.clone()
    }
}

#[cfg(test)]
mod tests;
