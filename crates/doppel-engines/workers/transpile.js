// doppel-engines worker for a transpiler as a tool under test (issue 15 part
// 7c, after JEST-FS, PLDI 2023): the transpiler is loaded once; each request's
// script is transpiled to an older target and the result runs in V8 (this
// node) in a new `vm` context, with the same print binding, microtask
// draining and timeout as node-vm.js, so the untranspiled `v8-node` host is
// the same V8 without the transpiler.
//
// Usage: node transpile.js <babel|swc|esbuild|typescript> <node_modules dir>
// The whole script is transpiled (test262's harness files included: they are
// ES5-level code every transpiler passes through, and a test's harness calls
// must see the same functions the test body does). A transpiler that throws
// or reports a syntax diagnostic answers status "transpile-error" with its
// message; a transpiler that hangs is killed by the driver at the script's
// timeout plus the grace period (outcome: timeout).
// `node transpile.js <name> <node_modules dir> --emit FILE` prints FILE
// transpiled and exits (1 with the message on stderr when the transpiler
// refuses): what `doppel repro` saves and its run.sh replays.
'use strict';
const vm = require('node:vm');
const path = require('node:path');
const { createRequire } = require('node:module');
const { pathToFileURL } = require('node:url');
const { serve, printer, text, describe } = require('./node-lines.js');

const [name, modules, flag, file] = process.argv.slice(2);
const req = createRequire(path.join(path.resolve(modules), 'noop.js'));
const version = (pkg) => req(pkg + '/package.json').version;

// Each transpiler: its version line and a function source -> transpiled source
// (throws an Error whose message says why it refused).
async function load() {
  switch (name) {
    case 'babel': {
      // Babel 8 is ESM-only.
      const babel = await import(pathToFileURL(req.resolve('@babel/core')).href);
      const presetEnv = req.resolve('@babel/preset-env');
      const opts = {
        presets: [[presetEnv, { targets: 'ie 11' }]],
        sourceType: 'script', configFile: false, babelrc: false, compact: false, comments: true,
      };
      return {
        version: `@babel/core ${version('@babel/core')} + @babel/preset-env ${version('@babel/preset-env')}, targets ie 11`,
        transpile: (src) => babel.transformSync(src, opts).code,
      };
    }
    case 'swc': {
      const swc = req('@swc/core');
      const opts = { jsc: { target: 'es5', parser: { syntax: 'ecmascript' } }, isModule: false, swcrc: false, configFile: false };
      return {
        version: `@swc/core ${version('@swc/core')}, target es5`,
        transpile: (src) => swc.transformSync(src, opts).code,
      };
    }
    case 'esbuild': {
      const esbuild = req('esbuild');
      return {
        version: `esbuild ${version('esbuild')}, target es2015`,
        transpile: (src) => esbuild.transformSync(src, { target: 'es2015', loader: 'js', logLevel: 'silent' }).code,
      };
    }
    case 'typescript': {
      const ts = req('typescript');
      const compilerOptions = {
        target: ts.ScriptTarget.ES5, module: ts.ModuleKind.CommonJS, alwaysStrict: false,
        ignoreDeprecations: '6.0', allowJs: true,
      };
      return {
        version: `typescript ${ts.version} transpileModule, target ES5`,
        transpile: (src) => {
          const r = ts.transpileModule(src, { compilerOptions, reportDiagnostics: true, fileName: 'test.js' });
          const errors = (r.diagnostics || []).filter((d) => d.category === ts.DiagnosticCategory.Error);
          if (errors.length) {
            throw new Error(errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; '));
          }
          return r.outputText;
        },
      };
    }
    default:
      throw new Error(`unknown transpiler ${name}`);
  }
}

load().then((t) => {
  if (flag === '--emit') {
    try {
      process.stdout.write(t.transpile(require('node:fs').readFileSync(file, 'utf8')));
      return;
    } catch (e) {
      process.stderr.write(`transpile error: ${text(e && e.message !== undefined ? e.message : e)}\n`);
      process.exit(1);
    }
  }
  serve(`${t.version}; node ${process.version} V8 ${process.versions.v8}`, (r) => {
    const start = Date.now();
    let out;
    try {
      out = t.transpile(r.src);
    } catch (e) {
      // SWC appends a native stack trace: not part of the reason.
      const message = text(e && e.message !== undefined ? e.message : e).split('\n\nStack backtrace')[0].slice(0, 4000);
      return { status: 'transpile-error', message, stdout: '', stdout_cut: false };
    }
    const left = Math.max(1, r.timeout_ms - (Date.now() - start));
    const p = printer(r.output_cap, text);
    const ctx = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
    Object.defineProperty(vm.runInContext('globalThis', ctx), 'print', {
      value: p.print, writable: true, configurable: true, enumerable: false,
    });
    let res;
    const ran = Date.now();
    try {
      new vm.Script(out, { filename: 'transpiled.js' }).runInContext(ctx, { timeout: left });
      res = { status: 'normal' };
    } catch (e) {
      let code; try { code = e && e.code; } catch (x) {}
      if (code === 'ERR_SCRIPT_EXECUTION_TIMEOUT' && Date.now() - ran >= left) res = { status: 'timeout' };
      else res = { status: 'throw', ...describe(e) };
    }
    return { ...res, stdout: p.out, stdout_cut: p.cut };
  });
}, (e) => {
  process.stderr.write(`cannot load transpiler ${name} from ${modules}: ${e && e.stack || e}\n`);
  process.exit(2);
});
