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

use super::page::{file_url, page_html};
use super::v8::{self, Naming};
use super::{Fail, StderrTail};
use crate::protocol::rdp::{RdpClient, RdpError};
use crate::registry::BackendEntry;
use crate::{BackendError, Capabilities, Debugger, DebuggerConfig};
use async_trait::async_trait;
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

/// The event breakpoint that pauses at the first statement of every script.
const FIRST_STATEMENT: &str = "script.source.firstStatement";

/// The shortest bound for starting the browser (it takes 1-3 s to list its
/// tab on a busy 2-core machine), whatever the action timeout.
const MIN_STARTUP: Duration = Duration::from_secs(30);

/// The profile's preferences: the debugger server without a prompt, and
/// nothing that phones home or opens first-run pages.
const PREFS: &[(&str, &str)] = &[
    ("devtools.debugger.remote-enabled", "true"),
    ("devtools.chrome.enabled", "true"),
    ("devtools.debugger.prompt-connection", "false"),
    ("browser.shell.checkDefaultBrowser", "false"),
    ("browser.startup.homepage_override.mstone", "\"ignore\""),
    ("browser.startup.page", "0"),
    ("startup.homepage_welcome_url", "\"\""),
    ("startup.homepage_welcome_url.additional", "\"\""),
    ("browser.aboutwelcome.enabled", "false"),
    ("browser.startup.firstrunSkipsHomepage", "true"),
    ("trailhead.firstrun.didSeeAboutWelcome", "true"),
    ("datareporting.policy.dataSubmissionEnabled", "false"),
    ("datareporting.healthreport.uploadEnabled", "false"),
    ("datareporting.policy.firstRunURL", "\"\""),
    ("toolkit.telemetry.enabled", "false"),
    ("toolkit.telemetry.unified", "false"),
    ("toolkit.telemetry.server", "\"\""),
    ("toolkit.telemetry.archive.enabled", "false"),
    ("app.update.enabled", "false"),
    ("app.update.auto", "false"),
    ("app.update.checkInstallTime", "false"),
    ("app.normandy.enabled", "false"),
    ("app.shield.optoutstudies.enabled", "false"),
    ("extensions.update.enabled", "false"),
    ("extensions.blocklist.enabled", "false"),
    ("extensions.getAddons.cache.enabled", "false"),
    ("network.captive-portal-service.enabled", "false"),
    ("network.connectivity-service.enabled", "false"),
    ("network.dns.disablePrefetch", "true"),
    ("network.prefetch-next", "false"),
    ("browser.safebrowsing.malware.enabled", "false"),
    ("browser.safebrowsing.phishing.enabled", "false"),
    ("browser.safebrowsing.downloads.enabled", "false"),
    ("browser.safebrowsing.update.enabled", "false"),
    ("browser.newtabpage.enabled", "false"),
    ("browser.newtabpage.activity-stream.feeds.telemetry", "false"),
    ("browser.newtabpage.activity-stream.telemetry", "false"),
    ("browser.ping-centre.telemetry", "false"),
    ("browser.search.update", "false"),
    ("browser.region.update.enabled", "false"),
    ("browser.sessionstore.resume_from_crash", "false"),
    ("browser.tabs.warnOnClose", "false"),
    ("media.gmp-manager.updateEnabled", "false"),
    ("security.remote_settings.crlite_filters.enabled", "false"),
    ("services.settings.server", "\"\""),
    ("geo.enabled", "false"),
    ("dom.disable_open_during_load", "false"),
    ("devtools.console.stdout.content", "false"),
];

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
    let version = super::version_line(&exe, &["--version"])
        .filter(|v| v.contains("Firefox"))
        .ok_or_else(|| BackendError::Other(format!("{} --version printed no Firefox version", exe.display())))?;
    Ok(ToolInfo {
        name: "firefox".into(),
        version,
        protocol: "RDP".into(),
        executable: exe.display().to_string(),
    })
}

/// The `user.js` of a fresh profile.
fn user_js() -> String {
    PREFS
        .iter()
        .map(|(k, v)| format!("user_pref(\"{k}\", {v});\n"))
        .collect()
}

/// A free TCP port on the loopback (inside a fresh network namespace every
/// port is free; outside, this one was a moment ago).
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("finding a free port: {e}"))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("finding a free port: {e}"))
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

/// A number as JavaScript's `String(x)` writes it.
pub fn js_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    // Shortest round-trip digits and exponent: "d.ddde-7".
    let e_form = format!("{:e}", x.abs());
    let (mantissa, exp) = e_form.split_once('e').unwrap_or((&e_form, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    let n = exp.parse::<i32>().unwrap_or(0) + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let es = if e >= 0 { format!("+{e}") } else { e.to_string() };
        if k == 1 {
            format!("{digits}e{es}")
        } else {
            format!("{}.{}e{es}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

/// The text and type of a value grip, as [`v8::render`] renders the same
/// value from V8: strings JSON-quoted, numbers as JavaScript writes them,
/// `undefined`, `null`, `5n`, `Symbol(s)`; objects by V8's description
/// (`Object`, `Array(3)`, `Map(2)`), functions by their header
/// (`function square(x)`, rebuilt from the grip's name and parameter names).
pub fn grip_text(grip: &Json) -> (String, Option<String>) {
    let (text, ty): (String, &str) = match grip {
        Json::String(s) => (serde_json::to_string(s).unwrap_or_default(), "string"),
        Json::Number(n) => (js_number(n.as_f64().unwrap_or(f64::NAN)), "number"),
        Json::Bool(b) => (b.to_string(), "boolean"),
        Json::Null => ("null".into(), "null"),
        Json::Array(_) => (grip.to_string(), "?"),
        Json::Object(_) => match grip["type"].as_str().unwrap_or("?") {
            "undefined" => ("undefined".into(), "undefined"),
            "null" if grip["optimizedOut"] == true || grip["missingArguments"] == true => {
                ("<optimized out>".into(), "undefined")
            }
            "null" if grip["uninitialized"] == true => ("<uninitialized>".into(), "undefined"),
            "null" => ("null".into(), "null"),
            t @ ("NaN" | "Infinity" | "-Infinity" | "-0") => (t.to_string(), "number"),
            "BigInt" => (format!("{}n", grip["text"].as_str().unwrap_or("?")), "bigint"),
            "symbol" => (format!("Symbol({})", grip["name"].as_str().unwrap_or("")), "symbol"),
            "longString" => (
                serde_json::to_string(grip["initial"].as_str().unwrap_or("")).unwrap_or_default(),
                "string",
            ),
            "optimizedOut" => ("<optimized out>".into(), "undefined"),
            "uninitialized" => ("<uninitialized>".into(), "undefined"),
            "object" => return object_text(grip),
            other => (other.to_string(), "?"),
        },
    };
    (text, Some(ty.to_string()))
}

/// The text and type of an object grip (see [`grip_text`]).
fn object_text(grip: &Json) -> (String, Option<String>) {
    let class = grip["class"].as_str().unwrap_or("Object");
    let preview = &grip["preview"];
    if class == "Function" {
        let name = grip["name"].as_str().or(grip["displayName"].as_str()).unwrap_or("");
        let params: Vec<&str> = grip["parameterNames"]
            .as_array()
            .map(|a| a.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        let text = if grip["isClassConstructor"] == true {
            format!("class {name}")
        } else if grip["isArrow"] == true {
            format!("({}) =>", params.join(", "))
        } else {
            let star = if grip["isGenerator"] == true { "*" } else { "" };
            let asyn = if grip["isAsync"] == true { "async " } else { "" };
            format!("{asyn}function{star} {name}({})", params.join(", "))
        };
        return (text, Some("function".into()));
    }
    let text = match class {
        "Array" => format!("Array({})", preview["length"].as_u64().unwrap_or(0)),
        "Map" | "Set" | "WeakMap" | "WeakSet" if preview["size"].is_u64() => {
            format!("{class}({})", preview["size"])
        }
        "RegExp" => grip["displayString"].as_str().unwrap_or("RegExp").to_string(),
        _ if grip["isError"] == true || preview["kind"] == "Error" => {
            let name = preview["name"].as_str().unwrap_or(class);
            match preview["message"].as_str() {
                Some(m) if !m.is_empty() => format!("{name}: {m}"),
                _ => name.to_string(),
            }
        }
        _ => class.to_string(),
    };
    (text, Some(class.to_string()))
}

/// V8's header of a function (its description up to the body: the first
/// line of the source text before the first `{`, at most 100 characters).
fn v8_head(text: &str) -> String {
    let head = text.split('{').next().unwrap_or(text);
    let head = head.lines().next().unwrap_or(head).trim();
    head.chars().take(100).collect()
}

/// The end (byte offset) of a concise arrow body starting at `text`: the
/// first `,`, `;` or line end outside brackets and strings, or an unopened
/// closing bracket.
fn arrow_end(text: &str) -> usize {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return i;
                }
            }
            ',' | ';' | '\n' if depth == 0 => return i,
            _ => {}
        }
    }
    text.len()
}

/// The header V8 shows for a function, from its source text: `lines` are
/// the lines of its file, `line` (1-based) and `column` (0-based, where
/// SpiderMonkey starts the function: its parameters) from the grip's
/// `location`. `function square(x)`, `async function* gen(u)`,
/// `function (q)`, `m(a, b)` for a method, `(x) => x + 1` for an arrow.
/// `None` when the location is not in the text.
pub fn function_head(lines: &[&str], line: usize, column: usize, is_async: bool) -> Option<String> {
    let text = lines.get(line.checked_sub(1)?)?;
    let split = text.char_indices().nth(column).map_or(text.len(), |(i, _)| i);
    let (before, _) = text.split_at(split);
    let after: String = std::iter::once(&text[split..])
        .chain(lines[line..].iter().copied())
        .collect::<Vec<&str>>()
        .join("\n");
    // The parameters: balanced parentheses, or one identifier (`x => ...`).
    let params_end = if after.starts_with('(') {
        let mut depth = 0;
        after
            .char_indices()
            .find_map(|(i, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i + 1)
            })
            .unwrap_or(after.len())
    } else {
        after
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(after.len())
    };
    if after[params_end..].trim_start().starts_with("=>") {
        let end = arrow_end(&after);
        let prefix = if is_async { "async " } else { "" };
        return Some(v8_head(&format!("{prefix}{}", after[..end].trim_end())));
    }
    let start = match before.rfind("function") {
        Some(i) => {
            let pre = before[..i].trim_end();
            if pre.ends_with("async") {
                pre.len() - "async".len()
            } else {
                i
            }
        }
        None => {
            // A method: its name right before the parameters.
            let name_end = before.trim_end().len();
            before[..name_end]
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '*' || c == '#'))
                .map_or(0, |i| i + 1)
        }
    };
    Some(v8_head(&format!("{}{after}", &before[start..])))
}

/// [`function_head`], only when the text at `line`:`column` is the start
/// of the parameters of a function with `params` (the grip's
/// `parameterNames`; `None` for a destructuring parameter): the position
/// is inside the line, a `(` starts there (or the only parameter's name:
/// an arrow without parentheses), and the named parameters appear, in
/// order, among the identifiers of the parameter list. `None` otherwise: the text is not the
/// function's. Firefox ESR 153 sometimes gives a function of a large
/// script the URL of the page's first script (the pause at each script's
/// first statement seems to be needed; campaign run 6972), with the right
/// line and column.
pub fn checked_function_head(
    lines: &[&str],
    line: usize,
    column: usize,
    is_async: bool,
    params: &[Option<&str>],
) -> Option<String> {
    let text = lines.get(line.checked_sub(1)?)?;
    let rest: String = text.chars().skip(column).collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    if rest.starts_with('(') {
        // The parameter list: up to the balancing `)`, across lines.
        let mut list = String::new();
        let mut depth = 0i32;
        'lines: for l in std::iter::once(rest.as_str()).chain(lines[line..].iter().copied()) {
            for c in l.chars() {
                list.push(c);
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break 'lines;
                        }
                    }
                    _ => {}
                }
            }
            list.push('\n');
        }
        let mut words = list.split(|c: char| !ident(c)).filter(|w| !w.is_empty());
        if !params.iter().flatten().all(|p| words.any(|w| w == *p)) {
            return None;
        }
    } else {
        // Only a single arrow parameter stands without parentheses.
        let word: String = rest.chars().take_while(|c| ident(*c)).collect();
        if word.is_empty() || params != [Some(word.as_str())] {
            return None;
        }
    }
    function_head(lines, line, column, is_async)
}

/// Plain objects and arrays are expanded; other objects are shown by their
/// description only (as in [`v8`]).
fn expandable(grip: &Json) -> bool {
    grip["type"] == "object" && matches!(grip["class"].as_str(), Some("Object" | "Array"))
}

/// One line of program output for a `console-message` resource.
fn console_line(msg: &Json) -> String {
    let args = msg["arguments"].as_array().cloned().unwrap_or_default();
    let parts: Vec<String> = args
        .iter()
        .map(|a| match a {
            Json::String(s) => s.clone(),
            Json::Object(_) if a["type"] == "longString" => a["initial"].as_str().unwrap_or("").to_string(),
            _ => grip_text(a).0,
        })
        .collect();
    format!("{}\n", parts.join(" "))
}

/// One line of program output for an `error-message` resource that is an
/// error (`None` for warnings).
fn error_line(msg: &Json) -> Option<String> {
    let e = &msg["pageError"];
    if e["warning"] == true || e["info"] == true {
        return None;
    }
    let text = e["errorMessage"].as_str().unwrap_or("uncaught exception");
    let text = text.lines().next().unwrap_or(text);
    if text.starts_with("Uncaught ") || text.starts_with("uncaught ") {
        Some(format!("{text}\n"))
    } else {
        Some(format!("Uncaught {text}\n"))
    }
}

/// Kills the crash helpers of browser `pid`: Firefox starts
/// `crashhelper <browser pid> ...` detached from its process tree (parent
/// 1, a session of its own), so killing the tree leaves it behind for a
/// while. Found through `/proc` by that first argument.
fn kill_crash_helpers(pid: u32) {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in dir.flatten() {
        let Some(other) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{other}/cmdline")) else {
            continue;
        };
        let mut args = cmd.split(|&b| b == 0);
        let exe = args.next().unwrap_or_default();
        let first = args.next().unwrap_or_default();
        if exe.ends_with(b"crashhelper") && first == pid.to_string().as_bytes() {
            // SAFETY: kill with a pid read from /proc; at worst ESRCH.
            unsafe { libc::kill(other, libc::SIGKILL) };
        }
    }
}

/// One running browser and its connection.
struct Browser {
    guard: ProcessGuard,
    rdp: RdpClient,
    _profile: tempfile::TempDir,
    stderr: StderrTail,
    tab: String,
    breakpoint_list: String,
    /// Thread and target actors announced so far (of this and earlier pages).
    threads: HashSet<String>,
    targets: HashSet<String>,
}

async fn start_browser(exe: &Path, cfg: &DebuggerConfig) -> Result<Browser, String> {
    let profile = tempfile::Builder::new()
        .prefix("doppel-firefox-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"))?;
    let p = profile.path();
    for d in ["home", "cache", "config", "data", "run"] {
        std::fs::create_dir_all(p.join(d)).map_err(|e| format!("profile directory: {e}"))?;
    }
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(p.join("run"), std::fs::Permissions::from_mode(0o700));
    }
    let port = free_port()?;
    let mut cmd = process::piped(&exe.to_string_lossy());
    cmd.args(["--headless", "--no-remote", "--profile"])
        .arg(p.join("profile"))
        .arg("--start-debugger-server")
        .arg(port.to_string())
        .arg("about:blank")
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    std::fs::create_dir_all(p.join("profile")).map_err(|e| format!("profile directory: {e}"))?;
    std::fs::write(p.join("profile").join("user.js"), user_js()).map_err(|e| format!("writing user.js: {e}"))?;
    super::fixed_environment(&mut cmd);
    cmd.env("HOME", p.join("home"))
        .env("XDG_CACHE_HOME", p.join("cache"))
        .env("XDG_CONFIG_HOME", p.join("config"))
        .env("XDG_DATA_HOME", p.join("data"))
        .env("XDG_RUNTIME_DIR", p.join("run"))
        .env("MOZ_HEADLESS", "1")
        .env("MOZ_CRASHREPORTER_DISABLE", "1")
        .env("MOZ_CRASHREPORTER", "0")
        .env("MOZ_DISABLE_AUTO_SAFE_MODE", "1");
    let mut guard = process::spawn(cmd, cfg.sandbox).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let stderr = StderrTail::collect(guard.child_mut().stderr.take());
    let startup = cfg.action_timeout.max(MIN_STARTUP);
    let deadline = Instant::now() + startup;
    // The debugger server listens once the browser is up (~1 s).
    let stream = loop {
        if guard.has_exited() {
            return Err(format!("firefox exited before listening: {}", stderr.last_lines(5)));
        }
        match guard.connect_loopback(port, Duration::from_millis(500)) {
            Ok(s) => break s,
            Err(_) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(e) => {
                return Err(format!(
                    "firefox's debugger server on port {port} did not accept within {startup:?}: {e}"
                ));
            }
        }
    };
    stream.set_nonblocking(true).map_err(|e| format!("socket: {e}"))?;
    let stream = tokio::net::TcpStream::from_std(stream).map_err(|e| format!("socket: {e}"))?;
    let mut rdp = RdpClient::new(stream, startup);
    let setup = async {
        rdp.greeting().await?;
        // The tab list is empty for the first second or so.
        let tab = loop {
            let r = rdp.request("root", "listTabs", json!({})).await?;
            let tabs = r["tabs"].as_array().cloned().unwrap_or_default();
            let tab = tabs
                .iter()
                .find(|t| t["selected"] == true)
                .or(tabs.first())
                .and_then(|t| t["actor"].as_str())
                .map(str::to_string);
            if let Some(t) = tab {
                break t;
            }
            if Instant::now() > deadline {
                return Err(RdpError::Timeout(format!("firefox listed no tab within {startup:?}")));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let w = rdp
            .request(&tab, "getWatcher", json!({"isServerTargetSwitchingEnabled": true}))
            .await?;
        let watcher = w["actor"]
            .as_str()
            .ok_or_else(|| RdpError::Protocol(format!("getWatcher answered {w}")))?
            .to_string();
        rdp.request(&watcher, "watchTargets", json!({"targetType": "frame"}))
            .await?;
        rdp.request(
            &watcher,
            "watchResources",
            json!({"resourceTypes": ["source", "thread-state", "console-message", "error-message"]}),
        )
        .await?;
        let bl = rdp.request(&watcher, "getBreakpointListActor", json!({})).await?;
        let breakpoint_list = bl["breakpointList"]["actor"]
            .as_str()
            .ok_or_else(|| RdpError::Protocol(format!("getBreakpointListActor answered {bl}")))?
            .to_string();
        Ok::<_, RdpError>((tab, breakpoint_list))
    };
    let (tab, breakpoint_list) = match tokio::time::timeout_at(deadline, setup).await {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => return Err(format!("setting up firefox: {e}; stderr: {}", stderr.last_lines(5))),
        Err(_) => return Err(format!("setting up firefox took over {startup:?}")),
    };
    rdp.set_timeout(cfg.action_timeout);
    Ok(Browser {
        guard,
        rdp,
        _profile: profile,
        stderr,
        tab,
        breakpoint_list,
        threads: HashSet::new(),
        targets: HashSet::new(),
    })
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

    /// The frames of the paused thread, innermost first.
    async fn frames(&mut self) -> Result<Vec<Json>, Fail> {
        let thread = self.thread()?;
        let r = self
            .request(&thread, "frames", json!({"start": 0, "count": v8::MAX_FRAMES + 16}))
            .await?;
        Ok(r["frames"].as_array().cloned().unwrap_or_default())
    }

    /// Reads the state of the paused program (see the module documentation).
    async fn read_state(&mut self, paused: &Json, reason: PauseReason) -> Result<ProgramState, Fail> {
        let naming = self
            .naming
            .clone()
            .ok_or_else(|| Fail::Protocol("no subject loaded".into()))?;
        let mut call_stack = Vec::new();
        for f in self.frames().await? {
            let url = self.source_url(f["where"]["actor"].as_str().unwrap_or("")).await?;
            if naming.is_hidden(&url) {
                continue;
            }
            if call_stack.len() >= v8::MAX_FRAMES {
                break;
            }
            let function = match f["displayName"].as_str() {
                Some(n) if !n.is_empty() && f["type"] != "global" && n != "(global)" => n.to_string(),
                _ => "(anonymous)".to_string(),
            };
            call_stack.push(Frame {
                function,
                location: Some(Location {
                    file: naming.file(&url),
                    line: f["where"]["line"].as_u64().unwrap_or(0) as u32,
                    column: f["where"]["column"].as_u64().map(|c| c as u32 + 1),
                }),
            });
        }
        let location = call_stack
            .first()
            .and_then(|f| f.location.clone())
            .unwrap_or_else(|| Location::line("??", 0));
        let frame_actor = paused["frame"]["actor"].as_str().unwrap_or("").to_string();
        let env = self.request(&frame_actor, "getEnvironment", json!({})).await?;
        let variables = self.environment_variables(&env).await?;
        Ok(ProgramState {
            location,
            reason,
            call_stack,
            variables,
            signal: None,
            return_value: None,
        })
    }

    /// The variables of an environment chain (see the module documentation).
    async fn environment_variables(&mut self, env: &Json) -> Result<Vec<Variable>, Fail> {
        let depth = self.cfg.value_depth;
        let mut out = Vec::new();
        let mut env = env.clone();
        loop {
            let (kind, last) = match (env["type"].as_str(), env["scopeKind"].as_str()) {
                (Some("block"), Some("global")) => break,
                (Some("block"), Some("function lexical")) => (VariableKind::Unknown, false),
                (Some("block"), _) => (VariableKind::Local, false),
                (Some("function"), _) => (VariableKind::Unknown, true),
                // A `with` block: its object's properties are not variables
                // (V8's `with` scope is not read either); the function's
                // variables are further out.
                (Some("with"), _) => {
                    env = env["parent"].clone();
                    continue;
                }
                _ => break,
            };
            let mut bindings: Vec<(String, Json)> = Vec::new();
            for a in env["bindings"]["arguments"].as_array().cloned().unwrap_or_default() {
                if let Some(m) = a.as_object() {
                    for (k, v) in m {
                        bindings.push((k.clone(), v.clone()));
                    }
                }
            }
            if let Some(m) = env["bindings"]["variables"].as_object() {
                for (k, v) in m {
                    if !(last && k == "arguments") {
                        bindings.push((k.clone(), v.clone()));
                    }
                }
            }
            for (name, desc) in bindings {
                let Some(grip) = desc.get("value") else {
                    continue; // an accessor: reading it would run program code
                };
                if grip["uninitialized"] == true || grip["type"] == "uninitialized" {
                    continue; // in its temporal dead zone: Chromium omits it
                }
                let mut v = self.variable(name, grip, depth).await?;
                v.kind = kind;
                out.push(v);
            }
            if last {
                break;
            }
            env = env["parent"].clone();
        }
        Ok(out)
    }

    /// A variable for `grip`, expanded `depth` more levels.
    async fn variable(&mut self, name: String, grip: &Json, depth: u32) -> Result<Variable, Fail> {
        let (mut text, type_name) = grip_text(grip);
        if grip["class"] == "Function"
            && grip["isClassConstructor"] != true
            && let Some(head) = self.function_head(grip)
        {
            text = head;
        }
        let children = match grip["actor"].as_str() {
            Some(actor) if depth > 0 && expandable(grip) => {
                let actor = actor.to_string();
                Box::pin(self.members(&actor, grip["class"] == "Array", depth - 1)).await?
            }
            _ => Vec::new(),
        };
        Ok(Variable {
            name,
            type_name,
            value: Value { text, children },
            kind: VariableKind::Local,
        })
    }

    /// V8's header of the function `grip`, from the text of its file
    /// (read once per run; the scripts are local files). The grip's URL is
    /// tried first, then the page's other scripts: Firefox sometimes names
    /// the wrong script ([`checked_function_head`]). `None` when no script
    /// has the function's parameters at the grip's line and column.
    fn function_head(&mut self, grip: &Json) -> Option<String> {
        let url = grip["location"]["url"].as_str()?;
        let line = grip["location"]["line"].as_u64()? as usize;
        let column = grip["location"]["column"].as_u64()? as usize;
        let params: Vec<Option<&str>> = grip["parameterNames"]
            .as_array()
            .map(|a| a.iter().map(Json::as_str).collect())
            .unwrap_or_default();
        let run = self.run.as_mut()?;
        let mut urls = vec![url.to_string()];
        let mut others: Vec<String> = run.sources.values().filter(|u| *u != url).cloned().collect();
        others.sort();
        others.dedup();
        urls.extend(others);
        for u in urls {
            if !run.texts.contains_key(&u) {
                let text = v8::url_path(&u).and_then(|p| std::fs::read_to_string(p).ok());
                run.texts.insert(u.clone(), text);
            }
            let Some(Some(text)) = run.texts.get(&u) else { continue };
            let lines: Vec<&str> = text.lines().collect();
            if let Some(head) = checked_function_head(&lines, line, column, grip["isAsync"] == true, &params) {
                return Some(head);
            }
        }
        None
    }

    /// The own data properties of object `actor` as variables, each expanded
    /// `depth` more levels; array indices in numeric order first.
    async fn members(&mut self, actor: &str, array: bool, depth: u32) -> Result<Vec<Variable>, Fail> {
        let r = self.request(actor, "prototypeAndProperties", json!({})).await?;
        let mut props: Vec<(String, Json)> = r["ownProperties"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        if array {
            let index = |k: &str| k.parse::<u64>().ok();
            props.sort_by_key(|(k, _)| (index(k).is_none(), index(k).unwrap_or(0)));
        }
        let mut out = Vec::new();
        for (name, desc) in props {
            if out.len() >= v8::MAX_CHILDREN {
                break;
            }
            if name == "__proto__" {
                continue;
            }
            let Some(grip) = desc.get("value") else {
                continue; // an accessor
            };
            out.push(self.variable(name, grip, depth).await?);
        }
        Ok(out)
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
mod tests {
    use super::*;

    fn positions() -> BTreeMap<u32, Vec<u32>> {
        parse_positions(&json!({"positions": {"2": [12], "9": [27, 17, 20], "11": [8, 17], "16": [0]}}))
    }

    #[test]
    fn a_click_takes_the_first_position_of_a_breakable_line_only() {
        let p = positions();
        let lines = [2, 9, 11, 16];
        assert_eq!(choose_position(&p, &lines, 11, None), Ok((11, 8)));
        assert_eq!(choose_position(&p, &lines, 9, None), Ok((9, 17)));
        assert_eq!(choose_position(&p, &lines, 11, Some(18)), Ok((11, 17)));
        assert!(choose_position(&p, &lines, 11, Some(10)).is_err());
        let comment = choose_position(&p, &lines, 10, None).unwrap_err();
        assert!(comment.contains("not breakable"), "{comment}");
        assert!(choose_position(&p, &lines, 500, None).is_err());
    }

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        for (x, s) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (5.0, "5"),
            (-1.5, "-1.5"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(js_number(x), s, "{x}");
        }
    }

    #[test]
    fn grips_render_as_v8_renders_the_same_values() {
        let t = |g: Json| grip_text(&g).0;
        assert_eq!(t(json!("pr\"obé")), "\"pr\\\"obé\"");
        assert_eq!(t(json!(3)), "3");
        assert_eq!(t(json!({"type": "-0"})), "-0");
        assert_eq!(t(json!({"type": "undefined"})), "undefined");
        assert_eq!(t(json!({"type": "null"})), "null");
        assert_eq!(t(json!({"type": "null", "optimizedOut": true})), "<optimized out>");
        assert_eq!(t(json!(true)), "true");
        assert_eq!(t(json!({"type": "BigInt", "text": "5"})), "5n");
        assert_eq!(
            grip_text(
                &json!({"type": "object", "class": "Array", "actor": "a", "preview": {"kind": "ArrayLike", "length": 2}})
            ),
            ("Array(2)".into(), Some("Array".into()))
        );
        assert_eq!(
            grip_text(&json!({"type": "object", "class": "Object", "actor": "o"})),
            ("Object".into(), Some("Object".into()))
        );
        assert_eq!(
            t(json!({"type": "object", "class": "Function", "name": "square", "parameterNames": ["x"]})),
            "function square(x)"
        );
    }

    #[test]
    fn function_headers_come_from_the_source_text_as_in_v8() {
        let src = "function square(x) {\n    return x;\n}\nconst arrow = (x) => x + 1;\nconst obj = { m(a, b) { return a; }, n: function (q) {} };\nasync function* gen(u) {}\nxs.push((x) => x + i);\nconst one = y => [y, 1];";
        let lines: Vec<&str> = src.lines().collect();
        let h = |l, c, a| function_head(&lines, l, c, a).unwrap();
        assert_eq!(h(1, 15, false), "function square(x)");
        assert_eq!(h(4, 14, false), "(x) => x + 1");
        assert_eq!(h(5, 15, false), "m(a, b)");
        assert_eq!(h(5, 49, false), "function (q)");
        assert_eq!(h(6, 19, true), "async function* gen(u)");
        assert_eq!(h(7, 8, false), "(x) => x + i");
        assert_eq!(h(8, 12, false), "y => [y, 1]");
        assert_eq!(function_head(&lines, 99, 0, false), None);
    }

    #[test]
    fn a_header_is_taken_only_where_the_functions_parameters_start() {
        let src = "function square(x) {\n    return x;\n}\nvar f = function (tri, pos) {};\nconst one = y => [y, 1];\nfunction d({ a }, b) {}";
        let lines: Vec<&str> = src.lines().collect();
        let h = |l, c, p: &[Option<&str>]| checked_function_head(&lines, l, c, false, p);
        assert_eq!(h(1, 15, &[Some("x")]).as_deref(), Some("function square(x)"));
        assert_eq!(
            h(4, 17, &[Some("tri"), Some("pos")]).as_deref(),
            Some("function (tri, pos)")
        );
        assert_eq!(h(5, 12, &[Some("y")]).as_deref(), Some("y => [y, 1]"));
        // A destructuring parameter has no name.
        assert_eq!(h(6, 10, &[None, Some("b")]).as_deref(), Some("function d("));
        // Not this function's text: other parameters, order, a position
        // that is not a parameter list, past the line or the file.
        assert_eq!(h(1, 15, &[Some("tri")]), None);
        assert_eq!(h(4, 17, &[Some("pos"), Some("tri")]), None);
        assert_eq!(h(2, 4, &[]), None);
        assert_eq!(h(3, 1, &[]), None);
        assert_eq!(h(99, 0, &[]), None);
    }

    #[test]
    fn console_messages_and_errors_become_output_lines() {
        let m = json!({"arguments": ["probé", 5, {"type": "object", "class": "Object", "actor": "o"}]});
        assert_eq!(console_line(&m), "probé 5 Object\n");
        let e = json!({"pageError": {"errorMessage": "Error: boom", "warning": false}});
        assert_eq!(error_line(&e).as_deref(), Some("Uncaught Error: boom\n"));
        let w = json!({"pageError": {"errorMessage": "unreachable code", "warning": true}});
        assert_eq!(error_line(&w), None);
    }

    #[test]
    fn the_page_loads_every_file_in_order_then_logs_the_marker() {
        let a = PathBuf::from("/t/pre lude.js");
        let b = PathBuf::from("/t/prog.js");
        let html = page_html(&[&a, &b], "console.log(\"__doppel_done_1\");");
        let pre = html.find("file:///t/pre%20lude.js").unwrap();
        let prog = html.find("file:///t/prog.js").unwrap();
        let done = html.find("__doppel_done_1").unwrap();
        assert!(pre < prog && prog < done, "{html}");
    }
}
