// doppel-engines worker for QuickJS (Bellard's, 2025-09-13) compiled to WASM
// (npm quickjs-emscripten, release-sync variant): one WASM module, a new
// runtime and context per script with an interrupt deadline as the timeout
// and a 256 KiB stack limit (QuickJS in WASM otherwise overflows node's own
// stack first, notes §5.8); promise jobs drained; the thrown value described
// inside the VM.
'use strict';
const path = require('node:path');
const { serve, printer } = require('./node-lines.js');

const modules = path.join(process.env.DOPPEL_ENGINES_DIR || '.engines', 'npm', 'node_modules');
const qjs = require(path.join(modules, 'quickjs-emscripten'));
const version = require(path.join(modules, 'quickjs-emscripten', 'package.json')).version;

const DESCRIBE = `(function (e) {
  var t = e === null ? "null" : typeof e;
  if (t !== "object" && t !== "function") return JSON.stringify({ ctor: t, message: t === "symbol" ? "" : String(e) });
  var c = null, m = null;
  try { var k = e.constructor; if (k !== undefined && k !== null && typeof k.name === "string") c = k.name; } catch (x) {}
  try { if (e.message !== undefined) m = String(e.message); } catch (x) {}
  return JSON.stringify({ ctor: c, message: m });
})`;

const SETUP = `Object.defineProperty(globalThis, 'print', { writable: true, configurable: true, enumerable: false,
  value: (function (p) { return function print() { p(Array.prototype.map.call(arguments, String).join(' ')); }; })(__doppelPrint) });
delete globalThis.__doppelPrint;`;

(async () => {
  const QuickJS = await qjs.getQuickJS();
  serve(`quickjs-emscripten ${version}`, (req) => {
    const p = printer(req.output_cap, String);
    const rt = QuickJS.newRuntime();
    const deadline = Date.now() + req.timeout_ms;
    let timedOut = false;
    rt.setInterruptHandler(() => {
      if (Date.now() > deadline) { timedOut = true; return true; }
      return false;
    });
    rt.setMaxStackSize(256 * 1024);
    const vm = rt.newContext();
    try {
      // print is JavaScript in the VM around one host function taking a string
      // (argument handles passed to host functions are freed by the library).
      const host = vm.newFunction('__doppelPrint', (h) => { p.print(vm.getString(h)); });
      vm.setProp(vm.global, '__doppelPrint', host);
      host.dispose();
      const setup = vm.evalCode(SETUP);
      (setup.error || setup.value).dispose();
      let res;
      const r = vm.evalCode(req.src, 'test.js', { type: 'global' });
      if (r.error) {
        if (timedOut) {
          res = { status: 'timeout' };
        } else {
          const d = vm.evalCode(DESCRIBE);
          const s = d.error ? null : vm.callFunction(d.value, vm.undefined, r.error);
          res = { status: 'throw', ctor: null, message: null };
          if (s && !s.error) Object.assign(res, JSON.parse(vm.getString(s.value)));
          if (s) (s.error || s.value).dispose();
          (d.error || d.value).dispose();
        }
        r.error.dispose();
      } else {
        r.value.dispose();
        const jobs = rt.executePendingJobs();
        if (jobs.error) jobs.error.dispose();
        res = { status: timedOut ? 'timeout' : 'normal' };
      }
      return { ...res, stdout: p.out, stdout_cut: p.cut };
    } finally {
      try { vm.dispose(); rt.dispose(); } catch (e) { /* leaked handles: the runtime goes with the worker */ }
    }
  });
})();
