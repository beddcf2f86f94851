// Stand-alone reproducer: V8 crashes ("abort: Invalid bytecode" + SIGTRAP, or SIGSEGV) when, while a
// function is paused at a breakpoint on a statement whose first bytecode is one byte long
// (`var a = true;` -> LdaTrue), that breakpoint (the function's only one) is removed, another
// breakpoint is set later in the same function, and execution is resumed.
//
// Usage: node --experimental-websocket crash-node.mjs [path/to/node]     (Node 22+: flag not needed)
// It starts `<node> --inspect-brk=127.0.0.1:0 loader.js`; loader.js runs script.js with
// vm.runInThisContext (a classic script, as a browser's <script>).
//
// Knobs (environment):
//   MODE=breakpoint (default)  first pause: an ordinary breakpoint at FIRST_LINE (set by URL before
//                               the script is parsed), then removed. Default program: see DEFAULT_SOURCE.
//   MODE=instrumentation        first pause: the beforeScriptExecution instrumentation breakpoint
//                               (doppel's way), then removed. Default program: "true;\n".
//   SOURCE=<text>  FIRST_LINE=<n>  AT=<line:col> (1-based; default: 3:3, or the end of the script
//   in instrumentation mode)  KEEP=1 (do not remove the first breakpoint: no crash)  NOBP=1.
import { spawn } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const DEFAULT_SOURCE = 'function g() {\n  var a = true;\n  return a;\n}\ng();\n';
const MODE = process.env.MODE ?? 'breakpoint';
const NODE = process.argv[2] || process.execPath;
const dir = mkdtempSync(path.join(tmpdir(), 'v8-bp-'));
const script = path.join(dir, 'script.js');
const SOURCE = process.env.SOURCE ?? (MODE === 'instrumentation' ? 'true;\n' : DEFAULT_SOURCE);
writeFileSync(script, SOURCE);
const lines = SOURCE.split('\n');
const [atLine, atCol] = process.env.AT
  ? process.env.AT.split(':').map((n) => Number(n) - 1)
  : MODE === 'instrumentation'
    ? [lines.length - 1, lines[lines.length - 1].length]   // the end of the script (0-based)
    : [2, 2];
const loader = path.join(dir, 'loader.js');
writeFileSync(loader, `require('vm').runInThisContext(require('fs').readFileSync(${JSON.stringify(script)}, 'utf8'), { filename: ${JSON.stringify(script)} });\n`);

const child = spawn(NODE, ['--inspect-brk=127.0.0.1:0', loader], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
// The node and everything it starts (renderers, zygotes, crashpad) are in
// a process group of their own and die with this script, however it ends.
const killTree = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} };
process.on('exit', killTree);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { killTree(); process.exit(1); });
process.on('uncaughtException', (e) => { console.error(e); killTree(); process.exit(1); });
let output = '';
child.stdout.on('data', (d) => { output += d; });   // V8 prints its fatal-error stack trace to stdout
const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
const wsUrl = await new Promise((r) => child.stderr.on('data', (d) => { output += d; const m = output.match(/ws:\/\/\S+/); if (m) r(m[0]); }));
const ws = new WebSocket(wsUrl);
await new Promise((r) => ws.addEventListener('open', r));
let id = 0;
const replies = new Map();
let stopped = () => {};
ws.addEventListener('message', (e) => {
  const m = JSON.parse(e.data);
  if (m.id) return replies.get(m.id)?.(m);
  if (m.method === 'Debugger.paused') stopped(m.params);
  if (m.method === 'Runtime.executionContextDestroyed') stopped('finished');
});
ws.addEventListener('close', () => stopped('connection closed'));
const send = (method, params = {}) => new Promise((r) => {
  const i = ++id; replies.set(i, r);
  console.log('->', method, JSON.stringify(params));
  ws.send(JSON.stringify({ id: i, method, params }));
});
const stop = () => new Promise((r) => { stopped = r; });
const show = (p) => console.log('<-', typeof p === 'string' ? p
  : `paused (${p.reason}) @ ${p.callFrames[0].location.lineNumber + 1}:${p.callFrames[0].location.columnNumber + 1}`);
const url = pathToFileURL(script).href;

let s = stop();
await send('Runtime.enable');
await send('Debugger.enable');
await send('Runtime.runIfWaitingForDebugger');
show(await s);                                   // "Break on start" in loader.js
const first = MODE === 'instrumentation'
  ? await send('Debugger.setInstrumentationBreakpoint', { instrumentation: 'beforeScriptExecution' })
  : await send('Debugger.setBreakpointByUrl', { url, lineNumber: Number(process.env.FIRST_LINE ?? 2) - 1, columnNumber: 0 });
s = stop();
await send('Debugger.resume');
show(await s);                                   // the first pause in script.js
if (!process.env.KEEP) await send('Debugger.removeBreakpoint', { breakpointId: first.result.breakpointId });
if (!process.env.NOBP) {
  const r = await send('Debugger.setBreakpointByUrl', { url, lineNumber: atLine, columnNumber: atCol });
  console.log('<-', JSON.stringify(r.result ?? r.error));
}
for (let k = 0; k < 3; k++) {                    // expected: a pause at the new breakpoint, then "finished"
  s = stop();
  send('Debugger.resume');                       // not awaited: node may die before it answers
  const p = await Promise.race([s, exited.then(() => 'connection closed')]);
  show(p);
  if (typeof p === 'string') break;
}
ws.close();
const t = setTimeout(killTree, 5000);
const { code, signal } = await exited;
clearTimeout(t);
rmSync(dir, { recursive: true, force: true }); // script.js and loader.js
const fatal = output.split('\n').filter((l) => /abort|Fatal|Check failed|Invalid|Segmentation/.test(l));
if (process.env.VERBOSE) console.log(output);
const version = NODE === process.execPath ? process.version : NODE;
console.log(`node ${version} exited: code=${code} signal=${signal}${fatal.length ? ' | ' + fatal.join(' | ') : ''}`);
