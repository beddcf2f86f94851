//! The JavaScript reproducer: the program and its prelude and epilogue
//! scripts exactly as doppel ran them, plus
//! - `page.html`: loads them as classic scripts, in order, as the browser
//!   backends do;
//! - `loader.js`: runs them as classic scripts in one global in Node, as the
//!   Node backend does (`vm.runInThisContext`);
//! - `repro-cdp.mjs`: replays the run's actions against Node's inspector (V8)
//!   over the Chrome DevTools Protocol and prints every resolved breakpoint
//!   and pause (location, call stack, locals), no doppel needed;
//! - `run.sh` and a README with the same actions as DevTools steps for
//!   Chromium and Firefox, and what each debugger answered.

use super::{Reproducer, verdict_summary};
use doppel_core::report::describe_output;
use doppel_core::{Action, ExecAction, RunRecord};
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

fn cdp_kind(a: &Action) -> serde_json::Value {
    match a {
        Action::SetBreakpoint { at } => serde_json::json!({"kind": "set_breakpoint", "line": at.line}),
        Action::RemoveBreakpoint { at } => serde_json::json!({"kind": "remove_breakpoint", "line": at.line}),
        Action::Start => serde_json::json!({"kind": "start"}),
        Action::Exec { exec } => serde_json::json!({"kind": match exec {
            ExecAction::Resume => "resume",
            ExecAction::StepIn => "step_in",
            ExecAction::StepOver => "step_over",
            ExecAction::StepOut => "step_out",
        }}),
    }
}

/// The stored prelude or epilogue scripts as (relative path, text): the
/// `i`-th as `<which>/<i>-<name>`. A stored name that already starts with
/// its index (the corpus cache names them `0-doppel-determinism.js`, and the
/// traces name them so) is kept as it is, so pauses in the reproducer name
/// the same files as the run.
fn scripts(run: &RunRecord, which: &str) -> Vec<(String, String)> {
    run.config["scripts"][which]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, s)| {
            let name = s["name"].as_str().unwrap_or("script.js");
            let prefix = format!("{i}-");
            let file = if name.starts_with(&prefix) {
                name.to_string()
            } else {
                format!("{prefix}{name}")
            };
            (format!("{which}/{file}"), s["text"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

pub(super) fn build(run: &RunRecord) -> Result<Reproducer, String> {
    let trace = run
        .traces
        .first()
        .ok_or("the run has no traces (the subject could not run)")?;
    let source = run
        .config
        .get("source_text")
        .and_then(|s| s.as_str())
        .ok_or("the run stores no source text")?;
    let name = &run.subject.source_name;
    let divergent = run.verdict.finding().map(|f| f.action_index);
    let actions: Vec<&Action> = trace.actions().collect();
    let prelude = scripts(run, "prelude");
    let epilogue = scripts(run, "epilogue");
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
            &serde_json::to_string(&actions.iter().map(|a| cdp_kind(a)).collect::<Vec<_>>()).unwrap_or_default(),
        )
        .replace(
            "__DIVERGENCE__",
            &divergent.map(|d| d.to_string()).unwrap_or_else(|| "-1".into()),
        );
    let id = run.id.map(|i| i.to_string()).unwrap_or_default();
    let run_sh = format!(
        "#!/bin/sh\n# Reproduces doppel run {id} against Node's inspector (V8) over CDP.\nset -u\ncd \"$(dirname \"$0\")\"\n\
         node --experimental-websocket repro-cdp.mjs 2>&1 | tee node.out\n"
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
         ## Node (V8)\n\n`sh run.sh` (Node 20 needs `--experimental-websocket`, which run.sh passes) replays the\n\
         actions over the Chrome DevTools Protocol and prints each answer; `<-- divergence` marks the\n\
         action after which the debuggers disagreed.\n\n\
         ## Chromium and Firefox DevTools\n\n\
         1. Open `page.html` (`chromium page.html` or `firefox-esr page.html`), then the DevTools\n   \
         (F12): *Sources* in Chromium, *Debugger* in Firefox, and the file `{name}`.\n\
         2. Do the steps below in order. Breakpoints before the start are set by clicking the line\n   \
         number; *start* is a reload of the page (F5) with the breakpoints set.\n",
        order.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
    )
    .ok();
    for (i, a) in actions.iter().enumerate() {
        let step = match a {
            Action::SetBreakpoint { at } => format!("click line {} to set a breakpoint", at.line),
            Action::RemoveBreakpoint { at } => format!("click line {} again to remove its breakpoint", at.line),
            Action::Start => "reload the page (F5)".to_string(),
            Action::Exec { exec } => format!("press {}", devtools_key(*exec)),
        };
        let mark = if divergent == Some(i) {
            "  **<-- divergence**"
        } else {
            ""
        };
        writeln!(readme, "\n{}. {step}{mark}", i + 1).ok();
        for t in &run.traces {
            if let Some(o) = t.outputs().nth(i) {
                writeln!(readme, "   - {}: {}", t.debugger.name, describe_output(o)).ok();
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
        ("run.sh".into(), run_sh),
        ("README.md".into(), readme),
    ]);
    Ok(Reproducer { files })
}

/// The CDP replay script; `__SOURCE__`, `__ACTIONS__` and `__DIVERGENCE__`
/// are filled in.
const CDP_SCRIPT: &str = r#"// Replays a doppel run against Node's inspector (V8) over the Chrome DevTools Protocol.
// Usage: node --experimental-websocket repro-cdp.mjs   (Node 22+: the flag is not needed)
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const SOURCE = __SOURCE__;
const ACTIONS = __ACTIONS__;
const DIVERGENCE = __DIVERGENCE__;
const TIMEOUT_MS = 10000;

const child = spawn(process.execPath, ['--inspect-brk=127.0.0.1:0', path.join(here, 'loader.js')], {
  stdio: ['ignore', 'inherit', 'pipe'],
});
const wsUrl = await new Promise((resolve, reject) => {
  let buf = '';
  const t = setTimeout(() => reject(new Error('node printed no inspector URL')), TIMEOUT_MS);
  child.stderr.on('data', (d) => {
    buf += d;
    const m = buf.match(/ws:\/\/\S+/);
    if (m) { clearTimeout(t); resolve(m[0]); }
  });
});
const ws = new WebSocket(wsUrl);
await new Promise((r) => ws.addEventListener('open', r));
let nextId = 0;
const pending = new Map();
const events = [];
let wake = () => {};
ws.addEventListener('message', (e) => {
  const m = JSON.parse(e.data);
  if (m.id !== undefined && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); return; }
  events.push(m);
  wake();
});
const send = (method, params = {}) => new Promise((resolve) => {
  const id = ++nextId;
  pending.set(id, resolve);
  ws.send(JSON.stringify({ id, method, params }));
});
async function nextEvent(pred) {
  const end = Date.now() + TIMEOUT_MS;
  for (;;) {
    const i = events.findIndex(pred);
    if (i >= 0) return events.splice(i, 1)[0];
    if (Date.now() > end) return null;
    await new Promise((r) => { wake = r; setTimeout(r, 50); });
  }
}
const urls = new Map();
function noteScripts() {
  for (const e of events) if (e.method === 'Debugger.scriptParsed') urls.set(e.params.scriptId, e.params.url);
}
const isSource = (url) => url === SOURCE || url.endsWith('/' + SOURCE);
const where = (loc) => {
  noteScripts();
  const url = urls.get(loc.scriptId) || '?';
  return `${path.basename(url)}:${loc.lineNumber + 1}:${loc.columnNumber + 1}`;
};
async function describePause(p) {
  const frames = p.params.callFrames;
  // The loader's frames (vm.runInThisContext, Node's module system) are not the program's.
  noteScripts();
  const file = (u) => (u.startsWith('file://') ? fileURLToPath(u) : u);
  const ours = frames.filter((f) => {
    const u = file(urls.get(f.location.scriptId) || '');
    return u.startsWith(here) && u !== path.join(here, 'loader.js');
  });
  const stack = ours.map((f) => f.functionName || '(anonymous)').join(' <- ');
  const vars = [];
  for (const s of frames[0].scopeChain) {
    if (s.type !== 'local' && s.type !== 'block') continue;
    const r = await send('Runtime.getProperties', { objectId: s.object.objectId, ownProperties: true });
    for (const v of r.result.result || []) vars.push(`${v.name}=${v.value ? (v.value.description ?? String(v.value.value)) : '?'}`);
  }
  return `paused @ ${where(frames[0].location)} [${stack}] ${vars.join(' ')}`;
}
const isPause = (e) => e.method === 'Debugger.paused';
const isEnd = (e) => e.method === 'Runtime.executionContextDestroyed';
async function untilStop() {
  // The first pause is Node's break on start: run on to the program.
  for (;;) {
    const e = await nextEvent((x) => isPause(x) || isEnd(x));
    if (!e) return 'no answer (timeout)';
    if (isEnd(e)) return 'finished';
    noteScripts();
    const top = e.params.callFrames[0];
    if (e.params.reason === 'Break on start' || !isSource(urls.get(top.location.scriptId) || '')) {
      if (e.params.reason === 'Break on start' || (e.params.hitBreakpoints || []).length === 0) {
        await send('Debugger.resume');
        continue;
      }
    }
    return describePause(e);
  }
}

await send('Runtime.enable');
await send('Debugger.enable');
const ids = new Map();
let running = false;
for (const [i, a] of ACTIONS.entries()) {
  const mark = i === DIVERGENCE ? '  <-- divergence' : '';
  console.log(`=== [${i}] ${a.kind}${a.line ? ' @ ' + SOURCE + ':' + a.line : ''} ===${mark}`);
  let answer;
  if (a.kind === 'set_breakpoint') {
    const esc = SOURCE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const r = await send('Debugger.setBreakpointByUrl', { urlRegex: `(^|/)${esc}$`, lineNumber: a.line - 1, columnNumber: 0 });
    if (r.error) { answer = `rejected: ${r.error.message}`; }
    else {
      ids.set(a.line, r.result.breakpointId);
      const locs = r.result.locations;
      answer = locs.length ? `breakpoint @ ${where(locs[0])}` : 'breakpoint set; resolved when the script is parsed';
    }
  } else if (a.kind === 'remove_breakpoint') {
    const r = await send('Debugger.removeBreakpoint', { breakpointId: ids.get(a.line) });
    answer = r.error ? `not removed: ${r.error.message}` : 'removed';
  } else if (a.kind === 'start') {
    running = true;
    await send('Runtime.runIfWaitingForDebugger');
    answer = await untilStop();
  } else {
    const method = { resume: 'Debugger.resume', step_in: 'Debugger.stepInto', step_over: 'Debugger.stepOver', step_out: 'Debugger.stepOut' }[a.kind];
    await send(method);
    answer = await untilStop();
  }
  console.log(answer);
  for (const e of events.filter((x) => x.method === 'Debugger.breakpointResolved')) console.log(`  (breakpoint resolved @ ${where(e.params.location)})`);
  for (let k = events.length - 1; k >= 0; k--) if (events[k].method === 'Debugger.breakpointResolved') events.splice(k, 1);
}
if (!running) {
  // V8 resolves a breakpoint set by URL only when its script is parsed: start
  // the program so that it says where the breakpoints of the run went.
  console.log('(the run ended before the program started; starting it so that V8 resolves the breakpoints)');
  await send('Runtime.runIfWaitingForDebugger');
  await untilStop();
  const line = new Map([...ids].map(([l, id]) => [id, l]));
  for (const e of events.filter((x) => x.method === 'Debugger.breakpointResolved')) {
    console.log(`  breakpoint requested @ ${SOURCE}:${line.get(e.params.breakpointId) ?? '?'} resolved @ ${where(e.params.location)}`);
  }
}
ws.close();
child.kill('SIGKILL');
"#;
