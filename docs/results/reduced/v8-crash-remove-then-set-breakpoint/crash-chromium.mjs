// Stand-alone reproducer for the same V8 crash in Chromium's renderer (see crash-node.mjs):
//   a page runs script.js as a classic <script src>; the page is paused at a breakpoint on
//   `var a = true;` in g, that breakpoint is removed, one is set on `return a;`, and the page resumed.
//   The renderer dies ("## V8 sandbox violation detected!" on stderr, Inspector.targetCrashed).
// Usage: node --experimental-websocket crash-chromium.mjs [chromium-binary]
// Knobs (environment): MODE, SOURCE, FIRST_LINE, AT=line:col, KEEP=1, NOBP=1 as in crash-node.mjs;
// WAIT_MS (how long to wait for a pause), CHROMIUM_FLAGS (extra flags), SHOWLOG=1 (Chromium's stderr).
import { spawn } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const CHROMIUM = process.argv[2] || 'chromium';
const dir = mkdtempSync(path.join(tmpdir(), 'v8-bp-'));
const script = path.join(dir, 'script.js');
const MODE = process.env.MODE ?? 'breakpoint';
const DEFAULT_SOURCE = 'function g() {\n  var a = true;\n  return a;\n}\ng();\n';
const SOURCE = process.env.SOURCE ?? (MODE === 'instrumentation' ? 'true;\n' : DEFAULT_SOURCE);
writeFileSync(script, SOURCE);
const lines = SOURCE.split('\n');
const [atLine, atCol] = process.env.AT
  ? process.env.AT.split(':').map((n) => Number(n) - 1)
  : MODE === 'instrumentation'
    ? [lines.length - 1, lines[lines.length - 1].length]   // the end of the script (0-based)
    : [2, 2];
const page = path.join(dir, 'page.html');
writeFileSync(page, `<!DOCTYPE html>\n<script src="${pathToFileURL(script).href}"></script>\n<script>document.title = 'done'</script>\n`);

const args = [...(process.env.CHROMIUM_FLAGS || '').split(' ').filter(Boolean), '--headless', '--remote-debugging-port=0', '--no-first-run', '--disable-gpu',
  `--user-data-dir=${path.join(dir, 'profile')}`, 'about:blank'];
if (process.getuid?.() === 0) args.unshift('--no-sandbox');   // Chromium refuses to run as root with its sandbox
const browser = spawn(CHROMIUM, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
// The browser and everything it starts (renderers, zygotes, crashpad) are in
// a process group of their own and die with this script, however it ends.
const killTree = () => { try { process.kill(-browser.pid, 'SIGKILL'); } catch {} };
process.on('exit', killTree);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { killTree(); process.exit(1); });
process.on('uncaughtException', (e) => { console.error(e); killTree(); process.exit(1); });
let log = '';
const t0 = Date.now();
browser.stderr.on('data', (d) => { for (const l of String(d).split('\n')) if (/sandbox violation|Check failed|Fatal|Invalid bytecode|Received signal|SEGV|TRAP/.test(l)) console.log(`[chromium stderr +${Date.now() - t0} ms] ${l}`); });
const wsUrl = await new Promise((r) => browser.stderr.on('data', (d) => { log += d; const m = log.match(/ws:\/\/\S+/); if (m) r(m[0]); }));
const ws = new WebSocket(wsUrl);
await new Promise((r) => ws.addEventListener('open', r));
let id = 0;
const replies = new Map();
let stopped = () => {};
let sessionId;
ws.addEventListener('message', (e) => {
  const m = JSON.parse(e.data);
  if (m.id) return replies.get(m.id)?.(m);
  if (m.method === 'Debugger.paused') stopped(m.params);
  if (m.method === 'Inspector.targetCrashed') stopped('renderer crashed (Inspector.targetCrashed)');
  if (m.method === 'Inspector.detached') stopped(`renderer gone (Inspector.detached: ${m.params.reason})`);
  if (m.method === 'Page.loadEventFired') stopped('finished (page loaded)');
});
const send = (method, params = {}, session = sessionId) => new Promise((r) => {
  const i = ++id; replies.set(i, r);
  console.log('->', method, JSON.stringify(params));
  ws.send(JSON.stringify({ id: i, method, params, ...(session ? { sessionId: session } : {}) }));
});
const stop = () => new Promise((r) => { stopped = r; });
const show = (p) => console.log('<-', typeof p === 'string' ? p
  : `paused (${p.reason}) @ ${p.callFrames[0].location.lineNumber + 1}:${p.callFrames[0].location.columnNumber + 1}`);
const timeout = (ms) => new Promise((r) => setTimeout(() => r('no answer within ' + ms + ' ms'), ms));

const { result: { targetId } } = await send('Target.createTarget', { url: 'about:blank' });
sessionId = (await send('Target.attachToTarget', { targetId, flatten: true })).result.sessionId;
await send('Page.enable');
await send('Runtime.enable');
await send('Debugger.enable');
// MODE=breakpoint (default): the first pause is an ordinary breakpoint at line FIRST_LINE (default 2).
// MODE=instrumentation: script.js's beforeScriptExecution instrumentation breakpoint (doppel's way).
const first = MODE === 'breakpoint'
  ? await send('Debugger.setBreakpointByUrl', { url: pathToFileURL(script).href, lineNumber: Number(process.env.FIRST_LINE ?? 2) - 1, columnNumber: 0 })
  : await send('Debugger.setInstrumentationBreakpoint', { instrumentation: 'beforeScriptExecution' });
let s = stop();
await send('Page.navigate', { url: pathToFileURL(page).href });
show(await s);                                   // the first pause in script.js
if (!process.env.KEEP) await send('Debugger.removeBreakpoint', { breakpointId: first.result.breakpointId });
if (!process.env.NOBP) {
  const r = await send('Debugger.setBreakpointByUrl', { url: pathToFileURL(script).href, lineNumber: atLine, columnNumber: atCol });
  console.log('<-', JSON.stringify(r.result ?? r.error));
}
let outcome;
for (let k = 0; k < 3; k++) {                    // expected: a pause at the breakpoint, then the page loads
  s = stop();
  console.log(`(+${Date.now() - t0} ms)`);
  send('Debugger.resume');                       // not awaited: the renderer may die before it answers
  outcome = await Promise.race([s, timeout(Number(process.env.WAIT_MS ?? 10000))]);
  show(outcome);
  if (typeof outcome === 'string') break;
}
if (outcome.startsWith('no answer')) {
  const r = await Promise.race([send('Runtime.evaluate', { expression: 'document.title' }), timeout(3000)]);
  console.log('<- Runtime.evaluate(document.title):', JSON.stringify(r.result ?? r));
  outcome += typeof r === 'string' ? ' (renderer unresponsive: evaluate got ' + r + ')' : '';
}
const version = (await send('Browser.getVersion', {}, null)).result?.product;
console.log(`${version}: ${outcome}`);
ws.close();
killTree();
if (browser.exitCode === null && browser.signalCode === null) await new Promise((r) => browser.once('exit', r));
rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }); // the page and the profile
if (process.env.SHOWLOG) console.log(log.split('\n').filter((l) => !/DevTools listening/.test(l)).join('\n'));
process.exit(0);
