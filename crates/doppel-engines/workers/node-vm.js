// doppel-engines worker for V8 in node (`vm`): a new context per script,
// microtasks drained after evaluation, the timeout enforced by vm itself.
// Caveat (notes §5.2): a vm context's global object is not spec-conformant
// (global var descriptors, key order), so global-state assertions on this
// engine are not verdicts.
'use strict';
const vm = require('node:vm');
const { serve, printer, text, describe } = require('./node-lines.js');

serve(`node ${process.version} V8 ${process.versions.v8}`, (req) => {
  const p = printer(req.output_cap, text);
  const ctx = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
  Object.defineProperty(vm.runInContext('globalThis', ctx), 'print', {
    value: p.print, writable: true, configurable: true, enumerable: false,
  });
  let res;
  const start = Date.now();
  try {
    new vm.Script(req.src, { filename: 'test.js' }).runInContext(ctx, { timeout: Math.max(1, req.timeout_ms) });
    res = { status: 'normal' };
  } catch (e) {
    // vm's timeout error (checked by code and elapsed time: the script could throw a look-alike).
    let code; try { code = e && e.code; } catch (x) {}
    if (code === 'ERR_SCRIPT_EXECUTION_TIMEOUT' && Date.now() - start >= req.timeout_ms) res = { status: 'timeout' };
    else res = { status: 'throw', ...describe(e) };
  }
  return { ...res, stdout: p.out, stdout_cut: p.cut };
});
