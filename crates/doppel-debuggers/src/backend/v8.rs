//! What the V8 backends (`node`, `chromium`) share: the script table,
//! file URLs, and reading a `Debugger.paused` event into the core model.
//!
//! - Locations: CDP lines and columns are 0-based; the model's are 1-based.
//!   A script is named by the source's `source_name` when its URL is the
//!   subject's source file, else by the last segment of its URL
//!   (`prelude.js`, `loader.js`), else by the URL itself (`node:vm`).
//! - Call stack: `callFrames`, innermost first, at most [`MAX_FRAMES`],
//!   without frames of doppel's loader and of `node:` internals;
//!   an empty `functionName` (top-level code, anonymous functions) is
//!   shown as `(anonymous)`.
//! - Variables of the top frame: the `block` and `local` scopes of its
//!   `scopeChain`, innermost first (not `closure`, `script`, `global`), read
//!   with `Runtime.getProperties{ownProperties: true}`. V8 does not tell
//!   parameters from locals: `local` scope variables are
//!   [`VariableKind::Unknown`], `block` scope ones [`VariableKind::Local`].
//! - Values: strings JSON-quoted (`"probe"`), other primitives by their
//!   `description` (`0`, `-0`, `NaN`, `5n`, `true`), `undefined`, `null`;
//!   objects by `description` (`Object`, `Array(3)`, `Map(2)`), functions by
//!   their header (the description up to the body: `function square(x)`).
//!   Plain objects and arrays are expanded to `value_depth` levels, at most
//!   [`MAX_CHILDREN`] members each (`__proto__` and accessors left out:
//!   reading an accessor would run program code).

use crate::protocol::cdp::{CdpClient, CdpError};
use doppel_core::{Frame, Location, PauseReason, ProgramState, Value, Variable, VariableKind};
use serde_json::{Value as Json, json};
use std::collections::HashMap;
use std::path::Path;

/// Frames read per pause.
pub const MAX_FRAMES: usize = 64;
/// Members read per aggregate level.
pub const MAX_CHILDREN: usize = 64;

/// `scriptId` → URL, from `Debugger.scriptParsed` events.
#[derive(Debug, Default, Clone)]
pub(crate) struct Scripts {
    urls: HashMap<String, String>,
}

impl Scripts {
    /// Records a `Debugger.scriptParsed` (or `scriptFailedToParse`) event.
    pub(crate) fn note(&mut self, event: &Json) {
        let p = &event["params"];
        if let (Some(id), Some(url)) = (p["scriptId"].as_str(), p["url"].as_str()) {
            self.urls.insert(id.to_string(), url.to_string());
        }
    }

    /// Records every `Debugger.scriptParsed` queued in `cdp` for `session`.
    pub(crate) fn absorb(&mut self, cdp: &mut CdpClient, session: Option<&str>) {
        for e in cdp.take_events("Debugger.scriptParsed", session) {
            self.note(&e);
        }
    }

    /// The URL of script `id`, if it was announced.
    pub(crate) fn url(&self, id: &str) -> Option<&str> {
        self.urls.get(id).map(String::as_str)
    }
}

/// The path a `file://` URL names (percent-decoded), `None` for other URLs.
pub(crate) fn url_path(url: &str) -> Option<String> {
    let rest = url.strip_prefix("file://")?;
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// How script URLs become file names of [`Location`]s.
#[derive(Debug, Clone)]
pub(crate) struct Naming {
    /// Absolute path of the subject's source.
    pub source: std::path::PathBuf,
    /// The subject's `source_name`.
    pub source_name: String,
    /// Scripts whose frames are left out of call stacks (the node loader);
    /// URLs starting with `node:` are always left out.
    pub hidden: Vec<String>,
}

impl Naming {
    /// Whether `url` is the source file.
    pub(crate) fn is_source(&self, url: &str) -> bool {
        url_path(url).is_some_and(|p| Path::new(&p) == self.source)
    }

    /// Whether frames in the script at `url` are left out of call stacks.
    pub(crate) fn is_hidden(&self, url: &str) -> bool {
        url.starts_with("node:") || self.hidden.iter().any(|h| h == url)
    }

    /// The file name of a location in the script at `url`.
    pub(crate) fn file(&self, url: &str) -> String {
        if self.is_source(url) {
            return self.source_name.clone();
        }
        match url_path(url) {
            Some(p) => Path::new(&p)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or(p),
            None if url.is_empty() => "(no url)".into(),
            None => url.to_string(),
        }
    }

    /// A CDP location (`{scriptId, lineNumber, columnNumber}`, 0-based) as a
    /// 1-based [`Location`].
    pub(crate) fn location(&self, loc: &Json, scripts: &Scripts) -> Location {
        let url = loc["scriptId"].as_str().and_then(|id| scripts.url(id)).unwrap_or("");
        Location {
            file: self.file(url),
            line: loc["lineNumber"].as_u64().map_or(0, |l| l as u32 + 1),
            column: loc["columnNumber"].as_u64().map(|c| c as u32 + 1),
        }
    }
}

/// What the program was last told to do, for the pause reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Motion {
    Run,
    Step,
}

/// The pause reason of a `Debugger.paused` event.
pub(crate) fn pause_reason(paused: &Json, motion: Motion) -> PauseReason {
    let p = &paused["params"];
    if p["hitBreakpoints"].as_array().is_some_and(|h| !h.is_empty()) {
        return PauseReason::Breakpoint;
    }
    match (p["reason"].as_str().unwrap_or(""), motion) {
        ("step", _) | ("other", Motion::Step) => PauseReason::Step,
        _ => PauseReason::Other,
    }
}

/// Reads the state of the paused program from a `Debugger.paused` event.
///
/// Errors: those of `Runtime.getProperties`.
pub(crate) async fn read_state(
    cdp: &mut CdpClient,
    session: Option<&str>,
    paused: &Json,
    scripts: &Scripts,
    naming: &Naming,
    reason: PauseReason,
    depth: u32,
) -> Result<ProgramState, CdpError> {
    let frames = paused["params"]["callFrames"].as_array().cloned().unwrap_or_default();
    let call_stack: Vec<Frame> = frames
        .iter()
        .filter(|f| {
            let id = f["location"]["scriptId"].as_str().unwrap_or("");
            !naming.is_hidden(scripts.url(id).unwrap_or(""))
        })
        .take(MAX_FRAMES)
        .map(|f| Frame {
            function: match f["functionName"].as_str() {
                Some(n) if !n.is_empty() => n.to_string(),
                _ => "(anonymous)".to_string(),
            },
            location: Some(naming.location(&f["location"], scripts)),
        })
        .collect();
    let location = call_stack
        .first()
        .and_then(|f| f.location.clone())
        .unwrap_or_else(|| Location::line("??", 0));
    let mut variables = Vec::new();
    if let Some(top) = frames.first() {
        for scope in top["scopeChain"].as_array().cloned().unwrap_or_default() {
            let kind = match scope["type"].as_str() {
                Some("block") => VariableKind::Local,
                Some("local") => VariableKind::Unknown,
                _ => continue,
            };
            let Some(id) = scope["object"]["objectId"].as_str() else {
                continue;
            };
            for mut v in properties(cdp, session, id, depth).await? {
                v.kind = kind;
                variables.push(v);
            }
        }
    }
    Ok(ProgramState {
        location,
        reason,
        call_stack,
        variables,
        signal: None,
        // V8 reports a return value only while paused at the return itself
        // (`callFrames[0].returnValue`), not after a step out.
        return_value: None,
    })
}

/// The own properties of object `id` as variables, expanded `depth` more levels.
async fn properties(
    cdp: &mut CdpClient,
    session: Option<&str>,
    id: &str,
    depth: u32,
) -> Result<Vec<Variable>, CdpError> {
    let r = cdp
        .call(
            "Runtime.getProperties",
            json!({"objectId": id, "ownProperties": true}),
            session,
        )
        .await?;
    let mut out = Vec::new();
    for p in r["result"].as_array().cloned().unwrap_or_default() {
        if out.len() >= MAX_CHILDREN {
            break;
        }
        let name = p["name"].as_str().unwrap_or("?").to_string();
        let Some(obj) = p.get("value") else {
            continue; // an accessor (get/set): reading it would run program code
        };
        if name == "__proto__" {
            continue;
        }
        let (text, type_name) = render(obj);
        let children = match obj["objectId"].as_str() {
            Some(child) if depth > 0 && expandable(obj) => Box::pin(properties(cdp, session, child, depth - 1)).await?,
            _ => Vec::new(),
        };
        out.push(Variable {
            name,
            type_name,
            value: Value { text, children },
            kind: VariableKind::Local,
        });
    }
    Ok(out)
}

/// Plain objects and arrays are expanded; other objects (functions, maps,
/// dates, errors, proxies, ...) are shown by their description only.
fn expandable(obj: &Json) -> bool {
    obj["type"] == "object" && matches!(obj["subtype"].as_str(), None | Some("array"))
}

/// The text and type of a `Runtime.RemoteObject`.
pub(crate) fn render(obj: &Json) -> (String, Option<String>) {
    let ty = obj["type"].as_str().unwrap_or("?");
    let text = match ty {
        "undefined" => "undefined".to_string(),
        "string" => serde_json::to_string(obj["value"].as_str().unwrap_or("")).unwrap_or_default(),
        "object" if obj["subtype"] == "null" => "null".to_string(),
        "function" => {
            let d = obj["description"].as_str().unwrap_or("function");
            let head = d.split('{').next().unwrap_or(d);
            let head = head.lines().next().unwrap_or(head).trim();
            head.chars().take(100).collect()
        }
        _ => obj["description"]
            .as_str()
            .map(str::to_string)
            .or_else(|| obj["unserializableValue"].as_str().map(str::to_string))
            .or_else(|| obj.get("value").map(Json::to_string))
            .unwrap_or_else(|| ty.to_string()),
    };
    let type_name = match ty {
        "object" => obj["className"]
            .as_str()
            .or(obj["subtype"].as_str())
            .unwrap_or("object")
            .to_string(),
        t => t.to_string(),
    };
    (text, Some(type_name))
}

/// The breakpoints of a V8 run (node and Chromium alike): requested
/// location (line, column) to V8's breakpoint id and resolved location.
pub(crate) type Breakpoints = HashMap<(u32, Option<u32>), (String, Option<Location>)>;

/// The parameters of `Debugger.setBreakpointByUrl` for `at` (0-based line
/// and column), or the answer when none can be set: no subject loaded, a
/// file other than the source, or the program already ended (`ended`).
pub(crate) fn breakpoint_request(
    at: &Location,
    naming: Option<&Naming>,
    source_url: Option<&str>,
    ended: impl FnOnce() -> String,
) -> Result<Json, Box<doppel_core::Output>> {
    let unresolved = |message: String| {
        Box::new(doppel_core::Output::BreakpointSet {
            requested: at.clone(),
            resolved: None,
            message: Some(message),
        })
    };
    let Some(naming) = naming else {
        return Err(unresolved("no subject loaded".into()));
    };
    if at.file != naming.source_name {
        return Err(unresolved(format!(
            "breakpoints are set only in {}",
            naming.source_name
        )));
    }
    let Some(url) = source_url else {
        return Err(unresolved(ended()));
    };
    let mut params = json!({"url": url, "lineNumber": at.line.saturating_sub(1)});
    if let Some(c) = at.column {
        params["columnNumber"] = json!(c.saturating_sub(1));
    }
    Ok(params)
}

/// The answer to `Debugger.setBreakpointByUrl` for `at` as the model's
/// output; a set breakpoint is kept in `breakpoints` (for its removal).
pub(crate) fn breakpoint_answer(
    at: &Location,
    reply: Result<Json, super::Fail>,
    naming: &Naming,
    scripts: Option<&Scripts>,
    breakpoints: &mut Breakpoints,
) -> doppel_core::Output {
    let r = match reply {
        Ok(r) => r,
        Err(super::Fail::Protocol(m)) => {
            return doppel_core::Output::BreakpointSet {
                requested: at.clone(),
                resolved: None,
                message: Some(m),
            };
        }
        Err(f) => return f.output(),
    };
    let resolved = match (r["locations"].get(0), scripts) {
        (Some(l), Some(s)) => Some(naming.location(l, s)),
        _ => None,
    };
    if let Some(id) = r["breakpointId"].as_str() {
        breakpoints.insert((at.line, at.column), (id.to_string(), resolved.clone()));
    }
    let message = resolved
        .is_none()
        .then(|| format!("no code at or after line {}", at.line));
    doppel_core::Output::BreakpointSet {
        requested: at.clone(),
        resolved,
        message,
    }
}

/// The V8 breakpoint id set at `at`, taken out of `breakpoints`, or the
/// answer when none was set there.
pub(crate) fn breakpoint_to_remove(
    at: &Location,
    breakpoints: &mut Breakpoints,
) -> Result<String, Box<doppel_core::Output>> {
    breakpoints
        .remove(&(at.line, at.column))
        .map(|(id, _)| id)
        .ok_or_else(|| {
            Box::new(doppel_core::Output::BreakpointRemoved {
                ok: false,
                message: Some(format!("no breakpoint was set at {at}")),
            })
        })
}

/// The answer to `Debugger.removeBreakpoint` as the model's output.
pub(crate) fn removal_answer(reply: Result<Json, super::Fail>) -> doppel_core::Output {
    match reply {
        Ok(_) => doppel_core::Output::BreakpointRemoved {
            ok: true,
            message: None,
        },
        Err(super::Fail::Protocol(m)) => doppel_core::Output::BreakpointRemoved {
            ok: false,
            message: Some(m),
        },
        Err(f) => f.output(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_urls_round_trip() {
        let p = Path::new("/tmp/a b/prög#1.js");
        let u = "file:///tmp/a%20b/pr%C3%B6g%231.js".to_string();
        assert_eq!(url_path(&u).as_deref(), Some("/tmp/a b/prög#1.js"));
        assert_eq!(url_path("node:vm"), None);
        let n = Naming {
            source: p.into(),
            source_name: "prog.js".into(),
            hidden: vec!["file:///l/loader.js".into()],
        };
        assert!(n.is_hidden("file:///l/loader.js") && n.is_hidden("node:vm") && !n.is_hidden(&u));
        assert_eq!(n.file(&u), "prog.js");
        assert_eq!(n.file("file:///x/prelude.js"), "prelude.js");
        assert_eq!(n.file("node:internal/vm"), "node:internal/vm");
    }

    #[test]
    fn remote_objects_render_as_a_debugger_shows_them() {
        let r = |v: Json| render(&v).0;
        assert_eq!(r(json!({"type": "string", "value": "pr\"obe"})), "\"pr\\\"obe\"");
        assert_eq!(r(json!({"type": "number", "value": 0, "description": "0"})), "0");
        assert_eq!(
            r(json!({"type": "number", "unserializableValue": "-0", "description": "-0"})),
            "-0"
        );
        assert_eq!(r(json!({"type": "undefined"})), "undefined");
        assert_eq!(r(json!({"type": "object", "subtype": "null", "value": null})), "null");
        assert_eq!(r(json!({"type": "boolean", "value": true})), "true");
        assert_eq!(
            r(
                json!({"type": "function", "className": "Function", "description": "function square(x) {\n  return x;\n}"})
            ),
            "function square(x)"
        );
        assert_eq!(
            render(&json!({"type": "object", "subtype": "array", "className": "Array", "description": "Array(3)"})),
            ("Array(3)".into(), Some("Array".into()))
        );
    }
}
