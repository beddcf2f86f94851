//! The JavaScript reproducer: the program and its prelude and epilogue
//! scripts exactly as doppel ran them, plus
//! - `page.html`: loads them as classic scripts, in order, as the browser
//!   backends do;
//! - `loader.js`: runs them as classic scripts in one global in Node, as the
//!   Node backend does (`vm.runInThisContext`);
//! - `repro-cdp.mjs`: replays the run's actions against Node's inspector (V8)
//!   over the Chrome DevTools Protocol and prints every resolved breakpoint
//!   and pause (location, call stack, locals) and how node ended (exit code
//!   or signal), no doppel needed. It drives node as doppel's Node backend
//!   does (see [`CDP_SCRIPT`]), in what it sends (breakpoints set at the
//!   instrumentation pause before the source, by URL and with the run's
//!   column; `start` steps onto the first statement) and in how it answers
//!   (a pause in a prelude or epilogue script, such as test262's harness, is
//!   an answer; a step that stops in Node's own JavaScript or the loader
//!   goes on out of it, or to the next script);
//! - `run.sh` and a README with the same actions as DevTools steps for
//!   Chromium and Firefox, and what each debugger answered.

use super::{Reproducer, verdict_summary};
use crate::record::DebuggerInput;
use doppel_core::report::describe_output;
use doppel_core::{Action, EventKind, ExecAction, Output, RunRecord};
use std::fmt::Write as _;

/// The keys of the DevTools of both browsers for each step.
fn devtools_key(e: ExecAction) -> &'static str {
    match e {
        ExecAction::Resume => "F8 (Resume)",
        ExecAction::StepIn => "F11 (Step into)",
        ExecAction::StepOver => "F10 (Step over)",
        ExecAction::StepOut => "Shift+F11 (Step out)",
    }
}

/// One action's answers in one trace: its own output, and the realignments
/// after it with theirs.
type Answers<'a> = (Option<&'a Output>, Vec<(ExecAction, &'a Output)>);

/// Per action of `trace` (as of [`doppel_core::Trace::actions`]): its
/// output, and the realignments issued to this debugger alone after it
/// ([`EventKind::Realignment`]) with their outputs.
fn answers(trace: &doppel_core::Trace) -> Vec<Answers<'_>> {
    let mut out: Vec<Answers<'_>> = Vec::new();
    let mut realigning: Option<ExecAction> = None;
    for e in &trace.events {
        match &e.kind {
            EventKind::Action(_) => {
                out.push((None, vec![]));
                realigning = None;
            }
            EventKind::Realignment(Action::Exec { exec }) => realigning = Some(*exec),
            EventKind::Output(o) => {
                if let Some(last) = out.last_mut() {
                    match realigning.take() {
                        Some(e) => last.1.push((e, o)),
                        None if last.0.is_none() => last.0 = Some(o),
                        None => {}
                    }
                }
            }
            EventKind::Realignment(_) | EventKind::PolicyNote(_) | EventKind::FindingNote { .. } => {}
        }
    }
    out
}

/// The CDP script's actions: [`cdp_kind`] of each, with `again: n` where
/// doppel realigned node after it (`n` more of the same action, issued to
/// node alone).
fn cdp_actions(run: &RunRecord, actions: &[&Action]) -> Vec<serde_json::Value> {
    let node = run.traces.iter().find(|t| t.debugger.name == "node").map(answers);
    actions
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let mut v = cdp_kind(a);
            let again = node.as_ref().and_then(|n| n.get(i)).map_or(0, |(_, r)| r.len());
            if again > 0 {
                v["again"] = serde_json::json!(again);
            }
            v
        })
        .collect()
}

/// One action for the CDP script: `{kind, line?, column?}` (1-based; the
/// column only when the run requested one, as doppel's V8 backends send
/// `columnNumber` only then).
fn cdp_kind(a: &Action) -> serde_json::Value {
    let at_json = |kind: &str, at: &doppel_core::Location| {
        let mut v = serde_json::json!({"kind": kind, "line": at.line});
        if let Some(c) = at.column {
            v["column"] = serde_json::json!(c);
        }
        v
    };
    match a {
        Action::SetBreakpoint { at } => at_json("set_breakpoint", at),
        Action::RemoveBreakpoint { at } => at_json("remove_breakpoint", at),
        Action::Start => serde_json::json!({"kind": "start"}),
        Action::Exec { exec } => serde_json::json!({"kind": match exec {
            ExecAction::Resume => "resume",
            ExecAction::StepIn => "step_in",
            ExecAction::StepOver => "step_over",
            ExecAction::StepOut => "step_out",
        }}),
    }
}

/// The stored prelude or epilogue scripts as (relative path, text): script
/// `i` is `<which>/<i>/<stored name>`, as `doppel replay` writes them. The
/// stored name is the file name the run saw (a campaign's `1-assert.js`), so
/// the reproducer's pauses name the scripts as the stored trace does,
/// whatever the name; the index directory keeps them apart and in order.
fn scripts(input: &DebuggerInput, which: &str) -> Vec<(String, String)> {
    let list = match (&input.scripts, which) {
        (Some(s), "prelude") => &s.prelude[..],
        (Some(s), _) => &s.epilogue[..],
        (None, _) => &[],
    };
    list.iter()
        .enumerate()
        .map(|(i, s)| (format!("{which}/{i}/{}", s.name), s.text.clone()))
        .collect()
}

pub(super) fn build(run: &RunRecord) -> Result<Reproducer, String> {
    let trace = run
        .traces
        .first()
        .ok_or("the run has no traces (the subject could not run)")?;
    let input = DebuggerInput::of(run)?;
    let source = input.source_text.as_str();
    let name = &run.subject.source_name;
    let divergent = run.verdict.finding().and_then(|f| f.action_index);
    let actions: Vec<&Action> = trace.actions().collect();
    let prelude = scripts(&input, "prelude");
    let epilogue = scripts(&input, "epilogue");
    let order: Vec<String> = prelude
        .iter()
        .map(|(p, _)| p.clone())
        .chain(std::iter::once(name.clone()))
        .chain(epilogue.iter().map(|(p, _)| p.clone()))
        .collect();

    let mut page = String::from("<!doctype html>\n<meta charset=\"utf-8\">\n<title>doppel reproducer</title>\n");
    for f in &order {
        writeln!(page, "<script src=\"{f}\"></script>").ok();
    }
    let loader = format!(
        "// Runs the scripts as classic scripts in one global, in order, as doppel's Node backend does.\n\
         const fs = require('fs');\nconst path = require('path');\nconst vm = require('vm');\n\
         for (const f of {files}) {{\n  const file = path.join(__dirname, f);\n  \
         vm.runInThisContext(fs.readFileSync(file, 'utf8'), {{ filename: file }});\n}}\n",
        files = serde_json::to_string(&order).unwrap_or_default()
    );
    let cdp = CDP_SCRIPT
        .replace("__SOURCE__", &serde_json::to_string(name).unwrap_or_default())
        .replace(
            "__ACTIONS__",
            &serde_json::to_string(&cdp_actions(run, &actions)).unwrap_or_default(),
        )
        .replace(
            "__DIVERGENCE__",
            &divergent.map(|d| d.to_string()).unwrap_or_else(|| "-1".into()),
        );
    let id = run.id.map(|i| i.to_string()).unwrap_or_default();
    let run_sh = format!(
        "#!/bin/sh\n# Reproduces doppel run {id} against Node's inspector (V8) over CDP.\nset -u\ncd \"$(dirname \"$0\")\"\n\
         node repro-cdp.mjs 2>&1 | tee node.out\n"
    );

    let mut readme = String::from("# doppel reproducer (JavaScript)\n\n");
    readme.push_str(&verdict_summary(run));
    writeln!(
        readme,
        "Subject `{}`, seed {}.\n\nDebuggers:\n",
        run.subject.name, run.seed
    )
    .ok();
    for d in &run.debuggers {
        writeln!(
            readme,
            "- {}: {} ({}, `{}`)",
            d.name, d.version, d.protocol, d.executable
        )
        .ok();
    }
    writeln!(
        readme,
        "\nScripts, run in this order as classic scripts in one global: {}.\n\n\
         ## Node (V8)\n\n`sh run.sh` (any Node from 18 on; `websocket.mjs` is the WebSocket client) replays the\n\
         actions over the Chrome DevTools Protocol and prints each answer; `<-- divergence` marks the\n\
         action after which the debuggers disagreed.\n\n\
         ## Chromium and Firefox DevTools\n\n\
         1. Open `page.html` (`chromium page.html` or `firefox-esr page.html`), then the DevTools\n   \
         (F12): *Sources* in Chromium, *Debugger* in Firefox, and the file `{name}`.\n\
         2. Stop before `{name}` runs, where doppel's backends set the breakpoints: under *Event\n   \
         Listener Breakpoints* check *Script* > *Script First Statement*, reload the page (F5),\n   \
         press F8 until the pause is at the first statement of `{name}` (the scripts before it\n   \
         run first), then uncheck it (Firefox's entry is the event `script.source.firstStatement`).\n   \
         Breakpoints set before the reload instead can get other answers.\n\
         3. Do the steps below in order. Breakpoints are set by clicking the line number; *start*\n   \
         is F8 (Resume); doppel first steps onto the first statement, so a breakpoint there is hit.\n",
        order.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
    )
    .ok();
    for (i, a) in actions.iter().enumerate() {
        let step = match a {
            Action::SetBreakpoint { at } => format!("click line {} to set a breakpoint", at.line),
            Action::RemoveBreakpoint { at } => format!("click line {} again to remove its breakpoint", at.line),
            Action::Start => "press F8 (Resume) to start".to_string(),
            Action::Exec { exec } => format!("press {}", devtools_key(*exec)),
        };
        let mark = if divergent == Some(i) {
            "  **<-- divergence**"
        } else {
            ""
        };
        writeln!(readme, "\n{}. {step}{mark}", i + 1).ok();
        for t in &run.traces {
            let answers = answers(t);
            if let Some((own, again)) = answers.get(i) {
                if let Some(o) = own {
                    writeln!(readme, "   - {}: {}", t.debugger.name, describe_output(o)).ok();
                }
                for (e, o) in again {
                    writeln!(
                        readme,
                        "   - then in {} only (doppel realigned it with the others, policy continued): press {}: {}",
                        t.debugger.name,
                        devtools_key(*e),
                        describe_output(o)
                    )
                    .ok();
                }
            }
        }
    }

    let mut files = vec![(name.clone(), source.to_string())];
    files.extend(prelude);
    files.extend(epilogue);
    files.extend([
        ("page.html".into(), page),
        ("loader.js".into(), loader),
        ("repro-cdp.mjs".into(), cdp),
        ("websocket.mjs".into(), WEBSOCKET_CLIENT.to_string()),
        ("run.sh".into(), run_sh),
        ("README.md".into(), readme),
    ]);
    Ok(Reproducer { files })
}

/// A WebSocket client (RFC 6455, over `node:net`) written beside the CDP
/// replay script, so the reproducer runs with any Node from 18 on (Debian
/// 12's) without flags or packages: Node 18 has no `WebSocket`, Node 20
/// only behind `--experimental-websocket`.
const WEBSOCKET_CLIENT: &str = include_str!("websocket.mjs");

/// The CDP replay script; `__SOURCE__`, `__ACTIONS__` and `__DIVERGENCE__`
/// are filled in. It drives node the way doppel's Node backend does
/// (`doppel-debuggers` `backend/node.rs`), because V8's answers depend on it.
///
/// What it sends (node.rs steps 1–4): the breakpoints are set while the
/// program is paused at the `beforeScriptExecution` instrumentation
/// breakpoint before the source (removed there), by the source's exact URL
/// and with the requested column, and `start` is `Debugger.pause` +
/// `Debugger.resume`. Setting them before the script is parsed instead gave
/// other answers: V8 crashed on doppel's sequence (runs 11276, 12126, 12594)
/// and not on the simpler one.
///
/// How it answers (`Node::wait_stop` and `skip_hidden`): only node's own
/// JavaScript (`node:` URLs) and the loader are hidden; the prelude and
/// epilogue scripts are the program's, so a pause there is an answer (a
/// step that ends in test262's `assert.js`, runs 10364 and 13529). A step
/// that stops in hidden code steps out while a script frame is below, else
/// runs to the next script's first statement (the instrumentation
/// breakpoint again, then `Debugger.pause`); a resume answers wherever it
/// stops. Node's end is `finished (exit N)` or `finished (SIGNAL)`.
const CDP_SCRIPT: &str = r#"// Replays a doppel run against Node's inspector (V8) over the Chrome DevTools Protocol,
// with the same CDP requests, and the same answers, as doppel's Node backend:
//  - node --inspect-brk=127.0.0.1:0 loader.js; Runtime.enable, Debugger.enable,
//    Runtime.runIfWaitingForDebugger, the "Break on start" pause; blackboxing of node's internals
//    and the loader; Debugger.setInstrumentationBreakpoint(beforeScriptExecution);
//  - resumed until the instrumentation pause before the source (the prelude has run, the source
//    is parsed), where the instrumentation breakpoint is removed;
//  - set_breakpoint: Debugger.setBreakpointByUrl with the source's URL, the line and, when the run
//    gave one, the column; remove_breakpoint: Debugger.removeBreakpoint;
//  - start: Debugger.pause + Debugger.resume (a step onto the first statement), then one more
//    Debugger.resume unless that pause is at a breakpoint; resume/step: Debugger.resume/stepInto/...
//  - answers: a pause in any of the run's scripts (the prelude and epilogue too, e.g. test262's
//    assert.js) is an answer. Only node's own JavaScript (node:...) and the loader are hidden: a
//    step that stops there steps out while a frame of the run's scripts is below, else runs to the
//    next script (the instrumentation breakpoint again) and stops at its first statement.
// A node that dies is reported with its exit code or signal, as doppel reports it.
// Usage: node repro-cdp.mjs   (Node 18 or later; websocket.mjs beside it is the WebSocket client)
import { spawn } from 'node:child_process';
import { WebSocket } from './websocket.mjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const SOURCE = __SOURCE__;
const ACTIONS = __ACTIONS__;
const DIVERGENCE = __DIVERGENCE__;
const TIMEOUT_MS = 10000;
const LOADER = path.join(here, 'loader.js');
const SOURCE_PATH = path.join(here, SOURCE);

const child = spawn(process.execPath, ['--inspect-brk=127.0.0.1:0', LOADER], {
  stdio: ['ignore', 'inherit', 'pipe'],
});
let exit = null;
const exited = new Promise((r) => child.on('exit', (code, signal) => { exit = { code, signal }; r(exit); }));
const ended = () => (exit.signal ? `finished (${exit.signal})` : `finished (exit ${exit.code})`);
const wsUrl = await new Promise((resolve, reject) => {
  let buf = '';
  const t = setTimeout(() => reject(new Error('node printed no inspector URL')), TIMEOUT_MS);
  child.stderr.on('data', (d) => {
    buf += d;
    const m = buf.match(/ws:\/\/\S+/);
    if (m) { clearTimeout(t); resolve(m[0]); }
    // The program's own stderr (node's inspector lines left out).
    for (const l of String(d).split('\n')) {
      if (l && !/^(Debugger listening on|For help, see|Debugger attached|Waiting for the debugger|Debugger ending on)/.test(l)) process.stderr.write(l + '\n');
    }
  });
});
const ws = new WebSocket(wsUrl);
await new Promise((r) => ws.addEventListener('open', r));
let nextId = 0;
const pending = new Map();
const events = [];
let wake = () => {};
let closed = false;
ws.addEventListener('message', (e) => {
  const m = JSON.parse(e.data);
  if (m.id !== undefined && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); return; }
  events.push(m);
  wake();
});
ws.addEventListener('close', () => {
  closed = true;
  for (const r of pending.values()) r({ error: { message: 'node closed the connection' } });
  pending.clear();
  wake();
});
const send = (method, params = {}) => new Promise((resolve) => {
  if (closed) return resolve({ error: { message: 'node closed the connection' } });
  const id = ++nextId;
  pending.set(id, resolve);
  ws.send(JSON.stringify({ id, method, params }));
});
// The next event that satisfies pred; null when node closed the connection or at the deadline.
async function nextEvent(pred, deadline = Date.now() + TIMEOUT_MS) {
  for (;;) {
    const i = events.findIndex(pred);
    if (i >= 0) return events.splice(i, 1)[0];
    if (closed || Date.now() > deadline) return null;
    await new Promise((r) => { wake = r; setTimeout(r, 50); });
  }
}
// After the connection closed or the program ended: node's exit, as doppel reports it.
async function finish() {
  ws.close();
  const t = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  await exited;
  clearTimeout(t);
  return ended();
}
const urls = new Map();
function noteScripts() {
  for (const e of events) if (e.method === 'Debugger.scriptParsed') urls.set(e.params.scriptId, e.params.url);
}
const urlOf = (scriptId) => { noteScripts(); return urls.get(scriptId) || ''; };
const file = (u) => (u.startsWith('file://') ? fileURLToPath(u) : u);
const isSource = (url) => file(url) === SOURCE_PATH;
// Set from the "Break on start" pause: the loader's URL as node reports it.
let loaderUrl = null;
// Node's own JavaScript and the loader are not the program's (doppel's Node backend blackboxes
// them, and V8 of node 20 ignores that for node's internals); the prelude and epilogue are.
const isHidden = (url) => url.startsWith('node:') || url === loaderUrl;
const where = (loc) => {
  const url = urlOf(loc.scriptId) || '?';
  return `${path.basename(url)}:${loc.lineNumber + 1}:${loc.columnNumber + 1}`;
};
async function describePause(p) {
  const frames = p.params.callFrames;
  // The loader's frames (vm.runInThisContext, Node's module system) are not the program's.
  const ours = frames.filter((f) => !isHidden(urlOf(f.location.scriptId)));
  const stack = ours.map((f) => f.functionName || '(anonymous)').join(' <- ');
  const vars = [];
  for (const s of frames[0].scopeChain) {
    if (s.type !== 'local' && s.type !== 'block') continue;
    const r = await send('Runtime.getProperties', { objectId: s.object.objectId, ownProperties: true });
    for (const v of r.result?.result || []) vars.push(`${v.name}=${v.value ? (v.value.description ?? String(v.value.value)) : '?'}`);
  }
  return `paused @ ${where(frames[0].location)} [${stack}] ${vars.join(' ')}`;
}
const isPause = (e) => e.method === 'Debugger.paused';
const isEnd = (e) => e.method === 'Runtime.executionContextDestroyed';
const resolved = new Map();   // breakpoint id -> the location V8 resolved it to
const atBreakpoint = (e) => (e.params.hitBreakpoints || []).length > 0
  || [...resolved.values()].some((l) => {
    const top = e.params.callFrames[0].location;
    return l.scriptId === top.scriptId && l.lineNumber === top.lineNumber && l.columnNumber === top.columnNumber;
  });
// The instrumentation breakpoint's id while it is set.
let instrumentation = null;
// Waits for the next pause in the program, or its end, after a 'run' (resume, start) or a
// 'step': { pause } or { end: text }. As doppel's Node backend (wait_stop, skip_hidden), the whole
// wait lasts at most TIMEOUT_MS.
async function nextStop(motion) {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const e = await nextEvent((x) => isPause(x) || isEnd(x), deadline);
    if (!e) return { end: closed ? await finish() : 'no answer (timeout)' };
    if (isEnd(e)) return { end: await finish() };
    if (e.params.reason === 'instrumentation') {
      // Set again by a step that left the last script (below): a script of node's is resumed,
      // one of the run's is entered at its first statement.
      if (!isHidden(urlOf(e.params.data?.scriptId))) {
        if (instrumentation) await send('Debugger.removeBreakpoint', { breakpointId: instrumentation });
        instrumentation = null;
        await send('Debugger.pause');
      }
      await send('Debugger.resume');
      continue;
    }
    const hidden = e.params.callFrames.map((f) => isHidden(urlOf(f.location.scriptId)));
    if (motion !== 'step' || !hidden[0]) return { pause: e };
    // A step stopped in node's own JavaScript or the loader: out of it while one of the run's
    // frames is below (a step into console.log steps over it) ...
    if (hidden.some((h) => !h)) { await send('Debugger.stepOut'); continue; }
    // ... else (a script ended) on to the first statement of the next script.
    if (!instrumentation) {
      const r = await send('Debugger.setInstrumentationBreakpoint', { instrumentation: 'beforeScriptExecution' });
      instrumentation = r.result?.breakpointId ?? null;
    }
    await send('Debugger.resume');
  }
}
const answer = async (s) => (s.pause ? describePause(s.pause) : s.end);

await send('Runtime.enable');
await send('Debugger.enable');
await send('Runtime.runIfWaitingForDebugger');
const brk = await nextEvent(isPause);                        // "Break on start" in loader.js
loaderUrl = brk ? urlOf(brk.params.callFrames[0].location.scriptId) : null;
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const patterns = ['^node:'].concat(loaderUrl ? ['^' + esc(loaderUrl) + '$'] : []);
await send('Debugger.setBlackboxPatterns', { patterns });
instrumentation = (await send('Debugger.setInstrumentationBreakpoint', { instrumentation: 'beforeScriptExecution' })).result?.breakpointId ?? null;
// Run the prelude; stop before the source runs (it is parsed, so breakpoints resolve at once).
// Any other pause before it (a `debugger;` in the prelude) is resumed, as doppel does.
let sourceUrl = null;
for (;;) {
  await send('Debugger.resume');
  const e = await nextEvent((x) => isPause(x) || isEnd(x));
  if (!e || isEnd(e)) { await finish(); break; }
  const url = urlOf(e.params.data?.scriptId ?? e.params.callFrames[0].location.scriptId);
  if (e.params.reason === 'instrumentation' && isSource(url)) {
    sourceUrl = url;
    if (instrumentation) await send('Debugger.removeBreakpoint', { breakpointId: instrumentation });
    instrumentation = null;
    break;
  }
}

const ids = new Map();
for (const [i, a] of ACTIONS.entries()) {
  const mark = i === DIVERGENCE ? '  <-- divergence' : '';
  const at = a.line ? ` @ ${SOURCE}:${a.line}${a.column ? ':' + a.column : ''}` : '';
  console.log(`=== [${i}] ${a.kind}${at} ===${mark}`);
  const key = `${a.line}:${a.column ?? ''}`;
  let text;
  if (exit) {
    text = sourceUrl ? ended() : `the program ended before the source ran (${ended()})`;
  } else if (a.kind === 'set_breakpoint') {
    const params = { url: sourceUrl, lineNumber: a.line - 1 };
    if (a.column) params.columnNumber = a.column - 1;
    const r = await send('Debugger.setBreakpointByUrl', params);
    if (r.error) { text = `rejected: ${r.error.message}`; }
    else {
      ids.set(key, r.result.breakpointId);
      const locs = r.result.locations;
      if (locs.length) resolved.set(r.result.breakpointId, locs[0]);
      text = locs.length ? `breakpoint @ ${where(locs[0])}` : `no code at or after line ${a.line}`;
    }
  } else if (a.kind === 'remove_breakpoint') {
    const id = ids.get(key);
    const r = id ? await send('Debugger.removeBreakpoint', { breakpointId: id }) : { error: { message: 'no breakpoint was set there' } };
    if (id) { ids.delete(key); resolved.delete(id); }
    text = r.error ? `not removed: ${r.error.message}` : 'removed';
  } else if (a.kind === 'start') {
    // As doppel: resuming from the pause before the source would skip a breakpoint on its first
    // statement, so step onto that statement first.
    await send('Debugger.pause');
    await send('Debugger.resume');
    let s = await nextStop('run');
    if (s.pause && !atBreakpoint(s.pause)) {
      await send('Debugger.resume');
      s = await nextStop('run');
    }
    text = await answer(s);
  } else {
    const [method, motion] = {
      resume: ['Debugger.resume', 'run'],
      step_in: ['Debugger.stepInto', 'step'],
      step_over: ['Debugger.stepOver', 'step'],
      step_out: ['Debugger.stepOut', 'step'],
    }[a.kind];
    await send(method);
    text = await answer(await nextStop(motion));
    // doppel realigned node with the other debugger here (a policy it went on past): the same
    // action once more, in node only.
    for (let k = 0; k < (a.again ?? 0) && !exit; k++) {
      console.log(text);
      console.log(`(realigned by doppel: ${a.kind} once more)`);
      await send(method);
      text = await answer(await nextStop(motion));
    }
  }
  console.log(text);
}
if (!exit) {
  ws.close();
  child.kill('SIGKILL');
}
"#;
