// Minimal CDP client: node --experimental-websocket cdp.mjs PROGRAM.js 'ACTIONS'
// ACTIONS: space-separated: b:LINE[:COL] (setBreakpointByUrl, 1-based), start, in, over, out, resume.
// Prints every pause (all frames, 1-based line:col, function names). No pause is skipped.
import { spawn } from 'node:child_process';
import path from 'node:path';
const [prog, actions] = [path.resolve(process.argv[2]), process.argv[3].split(/\s+/)];
const child = spawn(process.execPath, ['--inspect-brk=127.0.0.1:0', prog], { stdio: ['ignore', 'inherit', 'pipe'], detached: true });
// The node and everything it starts (renderers, zygotes, crashpad) are in
// a process group of their own and die with this script, however it ends.
const killTree = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} };
process.on('exit', killTree);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { killTree(); process.exit(1); });
process.on('uncaughtException', (e) => { console.error(e); killTree(); process.exit(1); });
const wsUrl = await new Promise((res) => { let b = ''; child.stderr.on('data', (d) => { b += d; const m = b.match(/ws:\/\/\S+/); if (m) res(m[0]); }); });
const ws = new WebSocket(wsUrl);
await new Promise((r) => ws.addEventListener('open', r));
let id = 0; const pending = new Map(); const events = []; let wake = () => {};
ws.addEventListener('message', (e) => { const m = JSON.parse(e.data); if (m.id && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); } else { events.push(m); wake(); } });
const send = (method, params = {}) => new Promise((r) => { const i = ++id; pending.set(i, r); ws.send(JSON.stringify({ id: i, method, params })); });
async function next() {
  for (const end = Date.now() + 5000; Date.now() < end;) {
    const i = events.findIndex((e) => e.method === 'Debugger.paused' || e.method === 'Runtime.executionContextDestroyed');
    if (i >= 0) return events.splice(i, 1)[0];
    await new Promise((r) => { wake = r; setTimeout(r, 50); });
  }
  return null;
}
const urls = new Map();
const loc = (l) => { for (const e of events) if (e.method === 'Debugger.scriptParsed') urls.set(e.params.scriptId, e.params.url); return `${path.basename(urls.get(l.scriptId) || '?')}:${l.lineNumber + 1}:${l.columnNumber + 1}`; };
const show = (e) => !e ? 'timeout' : e.method !== 'Debugger.paused' ? 'finished' :
  `paused ${loc(e.params.callFrames[0].location)} (${e.params.reason}${e.params.hitBreakpoints?.length ? ', bp' : ''}) stack: ` +
  e.params.callFrames.filter((f) => !(urls.get(f.location.scriptId) || '').startsWith('node:')).map((f) => `${f.functionName || '(anon)'}@${loc(f.location).split(':').slice(1).join(':')}`).join(' <- ');
await send('Runtime.enable'); await send('Debugger.enable');
await send('Runtime.runIfWaitingForDebugger');
await next(); // Break on start (first line of the program)
// BP_FILE: the script breakpoints go to (default: PROGRAM), matched by its path whatever the URL scheme.
const bpPath = path.resolve(process.env.BP_FILE || prog);
const urlRegex = '(^|file://)' + bpPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$';
for (const a of actions) {
  let out;
  if (a.startsWith('b:')) {
    const [, l, c] = a.split(':');
    const r = await send('Debugger.setBreakpointByUrl', { urlRegex, lineNumber: +l - 1, ...(c ? { columnNumber: +c - 1 } : {}) });
    out = r.result.locations.length ? 'breakpoint at ' + loc(r.result.locations[0]) : 'breakpoint unresolved';
  } else {
    await send({ start: 'Debugger.resume', resume: 'Debugger.resume', in: 'Debugger.stepInto', over: 'Debugger.stepOver', out: 'Debugger.stepOut' }[a]);
    out = show(await next());
  }
  console.log(`${a.padEnd(8)} -> ${out}`);
}
ws.close(); killTree();
