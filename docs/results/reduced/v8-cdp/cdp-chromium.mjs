// The same as cdp.mjs, against Chromium's V8: node --experimental-websocket cdp-chromium.mjs PROGRAM.js 'ACTIONS'
// Loads PROGRAM.js as a classic <script> of a file:// page in headless Chromium; breakpoints go to PROGRAM.js.
// ACTIONS: b:LINE[:COL], start (load the page), in, over, out, resume. Prints every pause.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
const [prog, actions] = [path.resolve(process.argv[2]), process.argv[3].split(/\s+/)];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdp-chromium-'));
const page = path.join(dir, 'page.html');
fs.writeFileSync(page, `<!doctype html><script src="file://${prog}"></script>`);
const child = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-port=0', `--user-data-dir=${dir}/profile`, '--allow-file-access-from-files', 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
// The browser and everything it starts (renderers, zygotes, crashpad) are in
// a process group of their own and die with this script, however it ends.
const killTree = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} };
process.on('exit', killTree);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { killTree(); process.exit(1); });
process.on('uncaughtException', (e) => { console.error(e); killTree(); process.exit(1); });
const port = await new Promise((res) => { let b = ''; child.stderr.on('data', (d) => { b += d; const m = b.match(/DevTools listening on ws:\/\/[^:]+:(\d+)\//); if (m) res(m[1]); }); });
const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const ws = new WebSocket(list.find((t) => t.type === 'page').webSocketDebuggerUrl);
await new Promise((r) => ws.addEventListener('open', r));
let id = 0; const pending = new Map(); const events = []; let wake = () => {};
ws.addEventListener('message', (e) => { const m = JSON.parse(e.data); if (m.id && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); } else { events.push(m); wake(); } });
const send = (method, params = {}) => new Promise((r) => { const i = ++id; pending.set(i, r); ws.send(JSON.stringify({ id: i, method, params })); });
async function next() {
  for (const end = Date.now() + 5000; Date.now() < end;) {
    const i = events.findIndex((e) => e.method === 'Debugger.paused' || (e.method === 'Page.loadEventFired'));
    if (i >= 0) return events.splice(i, 1)[0];
    await new Promise((r) => { wake = r; setTimeout(r, 50); });
  }
  return null;
}
const urls = new Map();
const loc = (l) => { for (const e of events) if (e.method === 'Debugger.scriptParsed') urls.set(e.params.scriptId, e.params.url); return `${path.basename(urls.get(l.scriptId) || '?')}:${l.lineNumber + 1}:${l.columnNumber + 1}`; };
const show = (e) => !e ? 'timeout' : e.method !== 'Debugger.paused' ? 'finished (page loaded)' :
  `paused ${loc(e.params.callFrames[0].location)} (${e.params.reason}${e.params.hitBreakpoints?.length ? ', bp' : ''}) stack: ` +
  e.params.callFrames.map((f) => `${f.functionName || '(anon)'}@${loc(f.location).split(':').slice(1).join(':')}`).join(' <- ');
await send('Page.enable'); await send('Runtime.enable'); await send('Debugger.enable');
const urlRegex = '^file://' + prog.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$';
for (const a of actions) {
  let out;
  if (a.startsWith('b:')) {
    const [, l, c] = a.split(':');
    const r = await send('Debugger.setBreakpointByUrl', { urlRegex, lineNumber: +l - 1, ...(c ? { columnNumber: +c - 1 } : {}) });
    out = r.result.locations.length ? 'breakpoint at ' + loc(r.result.locations[0]) : 'breakpoint (resolved when the script loads)';
  } else if (a === 'start') {
    await send('Page.navigate', { url: 'file://' + page });
    out = show(await next());
  } else {
    await send({ resume: 'Debugger.resume', in: 'Debugger.stepInto', over: 'Debugger.stepOver', out: 'Debugger.stepOut' }[a]);
    out = show(await next());
  }
  console.log(`${a.padEnd(8)} -> ${out}`);
}
ws.close();
const exited = new Promise((r) => child.on('exit', r));
child.kill('SIGTERM');
await exited;
fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
