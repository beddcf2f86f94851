// doppel-engines worker for engine262, the executable specification ("+1"):
// one node process, a fresh Agent and ManagedRealm (with test262's print and
// $262) per program, a deterministic node-count budget as the timeout (plus
// the wall clock), node's own stack overflow reported as `stack-overflow`.
//
// With --coverage CATALOGUE.json: V8 precise coverage (node:inspector, started
// before engine262 is imported so its functions get block counters) of
// engine262's own bundle, per program, mapped to the catalogue of spec
// algorithms and steps (engine262-catalogue.mjs; built once and cached in
// CATALOGUE.json). The response then has
// "coverage": {"algorithms": [index...], "steps": [index...]}.
//
// A request may carry "inspect" (see prepareInspector): the response then has
// "inspected" (the inspector's string) or "inspect_error".
//
// Environment: DOPPEL_ENGINES_DIR (npm/node_modules holds engine262 and acorn).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import inspector from 'node:inspector';

const require = createRequire(import.meta.url);
const { serve, printer } = require('./node-lines.js');

const modules = path.join(process.env.DOPPEL_ENGINES_DIR || '.engines', 'npm', 'node_modules');
const pkgDir = path.join(modules, '@engine262', 'engine262');
const covIndex = process.argv.indexOf('--coverage');
const cataloguePath = covIndex >= 0 ? process.argv[covIndex + 1] : null;
// Evaluate() calls per program before it counts as a timeout (about 1.4 s at
// 2e6 on this machine kind; deterministic, unlike the wall clock).
const budgetIndex = process.argv.indexOf('--budget');
const BUDGET = budgetIndex >= 0 ? Number(process.argv[budgetIndex + 1]) : 2e6;

// node:inspector's callback API (node:inspector/promises needs node 19+;
// Debian 12's nodejs is 18).
let session = null;
if (cataloguePath) {
  const raw = new inspector.Session();
  raw.connect();
  session = {
    post: (method, params) => new Promise((resolve, reject) => {
      raw.post(method, params || {}, (err, result) => (err ? reject(err) : resolve(result)));
    }),
  };
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
}
const bundle = path.join(pkgDir, 'lib', 'engine262.mjs');
const e262 = await import(pathToFileURL(bundle).href);
const { Agent, ManagedRealm, setSurroundingAgent, createTest262Intrinsics, ThrowCompletion, Value,
  CreateNonEnumerableDataPropertyOrThrow } = e262;
const version = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).version;

const { buildCatalogue, CATALOGUE_RULES } = await import('./engine262-catalogue.mjs');
let catalogue = null;
if (cataloguePath) {
  try {
    catalogue = JSON.parse(fs.readFileSync(cataloguePath, 'utf8'));
    if (catalogue.engine262 !== version || catalogue.rules !== CATALOGUE_RULES) catalogue = null;
  } catch (e) { catalogue = null; }
  if (!catalogue) {
    catalogue = { engine262: version, edition: 'ES2025', rules: CATALOGUE_RULES,
      ...buildCatalogue(pkgDir, path.join(modules, 'acorn')) };
    fs.mkdirSync(path.dirname(cataloguePath), { recursive: true });
    const tmp = `${cataloguePath}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(catalogue));
    fs.renameSync(tmp, cataloguePath);
  }
}
const fnIndex = catalogue ? new Map(catalogue.fnEnds.map(([end, idx]) => [end, idx])) : null;

class Budget extends Error {}

// The covered algorithms and steps of one precise-coverage take.
function covered(result) {
  const script = result.result.find((s) => s.url.endsWith('/lib/engine262.mjs'));
  const algorithms = new Set();
  const steps = [];
  if (!script) return { algorithms: [], steps: [] };
  const ranges = [];
  for (const f of script.functions) {
    const r0 = f.ranges[0];
    if (r0.count > 0) {
      const a = fnIndex.get(r0.endOffset);
      if (a !== undefined) algorithms.add(a);
    }
    for (const r of f.ranges) ranges.push(r);
  }
  ranges.sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
  // Sweep: the innermost range around each anchor gives its count (V8 omits a
  // nested range whose count equals its parent's).
  const stack = [];
  let j = 0;
  for (const [offset, step, fnStart] of catalogue.anchors) {
    while (j < ranges.length && ranges[j].startOffset <= offset) {
      const r = ranges[j++];
      while (stack.length && stack[stack.length - 1].endOffset <= r.startOffset) stack.pop();
      stack.push(r);
    }
    while (stack.length && stack[stack.length - 1].endOffset <= offset) stack.pop();
    const top = stack[stack.length - 1];
    if (top && top.count > 0 && top.startOffset >= fnStart) steps.push(step);
  }
  return { algorithms: [...algorithms].sort((a, b) => a - b), steps };
}

const EXTRACT = `(function (e) {
  var t = e === null ? "null" : typeof e;
  if (t !== "object" && t !== "function") return JSON.stringify({ ctor: t, message: t === "symbol" ? "" : String(e) });
  var c = null, m = null;
  try { var k = e.constructor; if (k !== undefined && k !== null && typeof k.name === "string") c = k.name; } catch (x) {}
  try { if (e.message !== undefined) m = String(e.message); } catch (x) {}
  return JSON.stringify({ ctor: c, message: m });
})(globalThis.__doppelThrown)`;

// The optional inspector (request field "inspect"): a script evaluated in the
// program's realm before the program, whose completion value is a function;
// after the program's script completes or throws (before its promise jobs
// run) the worker calls it with one argument, whether the program threw, and
// returns its string result as "inspected" (or why not as "inspect_error").
// The worker knows nothing of what it inspects.
function prepareInspector(realm, src) {
  const c = realm.evaluateScriptSkipDebugger(src);
  if (c instanceof ThrowCompletion || (c && c.Type === 'throw')) return { error: 'the inspect script threw' };
  const f = c && c.Value !== undefined ? c.Value : c;
  if (!f || typeof f.Call !== 'function') return { error: 'the inspect script did not give a function' };
  return { f };
}

function runInspector(realm, inspector, threw) {
  if (inspector.error) return { inspect_error: inspector.error };
  // Handed over through a global property that the call script deletes
  // before calling (like __doppelThrown below).
  const pop = realm.pushTopContext();
  try {
    CreateNonEnumerableDataPropertyOrThrow(realm.GlobalObject, Value('__doppelInspect'), inspector.f);
  } finally {
    pop?.();
  }
  const c = realm.evaluateScriptSkipDebugger(
    `(function (g) { var f = g.__doppelInspect; delete g.__doppelInspect; return f(${threw}); })(this)`);
  if (c instanceof ThrowCompletion || (c && c.Type === 'throw')) return { inspect_error: 'the inspector threw' };
  const v = c && c.Value !== undefined ? c.Value : c;
  if (!v || typeof v.stringValue !== 'function') return { inspect_error: 'the inspector did not return a string' };
  return { inspected: v.stringValue() };
}

function isHostStackOverflow(e) {
  return e instanceof RangeError && /call stack/i.test(String(e.message));
}

serve(`engine262 ${version}`, async (req) => {
  const p = printer(req.output_cap, String);
  let nodes = 0;
  let deadline = Date.now() + req.timeout_ms;
  let checking = true;
  // A shifted host clock (request field clock_skew_ms): tells a program
  // whose result depends on the time from one that does not.
  const skew = Number.isInteger(req.clock_skew_ms) ? BigInt(req.clock_skew_ms) : null;
  const agent = new Agent({
    ...(skew === null ? {} : {
      hostHooks: { HostSystemUTCEpochNanoseconds: () => (BigInt(Date.now()) + skew) * 1000000n },
    }),
    onNodeEvaluation() {
      nodes += 1;
      if (checking && (nodes > BUDGET || ((nodes & 0xfff) === 0 && Date.now() > deadline))) throw new Budget();
    },
  });
  setSurroundingAgent(agent);
  const realm = new ManagedRealm({});
  createTest262Intrinsics(realm, true, (...args) => p.print(...args));
  // engine262 also defines `$` as an alias of `$262`: no other host has
  // it, so a program naming an undeclared `$` completed here and threw a
  // ReferenceError everywhere else (false specification candidates). The
  // realm keeps test262's `print` and `$262` only.
  realm.evaluateScriptSkipDebugger('delete globalThis.$;');
  nodes = 0;
  let inspector = null;
  let inspection = {};
  if (req.inspect) {
    try {
      inspector = prepareInspector(realm, req.inspect);
    } catch (e) {
      inspector = { error: `the inspect script failed: ${String(e && e.stack || e).slice(0, 1500)}` };
    }
    nodes = 0;
    deadline = Date.now() + req.timeout_ms;
  }
  if (session) await session.post('Profiler.takePreciseCoverage');
  let res;
  let completion = null;
  let syncCoverage = null;
  try {
    completion = realm.evaluateScriptSkipDebugger(req.src);
    if (inspector) {
      // The inspector's own evaluation is left out of the program's coverage.
      if (session) syncCoverage = covered(await session.post('Profiler.takePreciseCoverage'));
      const threw = completion instanceof ThrowCompletion || (completion && completion.Type === 'throw');
      // The inspector gets a budget and a clock of its own.
      const programNodes = nodes;
      const programDeadline = deadline;
      nodes = 0;
      deadline = Date.now() + req.timeout_ms;
      try {
        inspection = runInspector(realm, inspector, threw);
      } catch (e) {
        inspection = { inspect_error: e instanceof Budget ? 'the inspector ran past the budget'
          : `the inspector failed: ${String(e && e.stack || e).slice(0, 1500)}` };
      }
      nodes = programNodes;
      deadline = programDeadline;
      if (session) await session.post('Profiler.takePreciseCoverage');
    }
    agent.eventLoop.runOnce();
  } catch (e) {
    if (e instanceof Budget) res = { status: 'timeout' };
    else if (isHostStackOverflow(e)) res = { status: 'stack-overflow' };
    else res = { status: 'host-error', reason: `engine262 failed: ${String(e && e.stack || e).slice(0, 2000)}` };
  }
  let coverage;
  if (session) {
    coverage = covered(await session.post('Profiler.takePreciseCoverage'));
    if (syncCoverage) {
      coverage = {
        algorithms: [...new Set([...syncCoverage.algorithms, ...coverage.algorithms])].sort((a, b) => a - b),
        steps: [...new Set([...syncCoverage.steps, ...coverage.steps])].sort((a, b) => a - b),
      };
    }
  }
  if (!res) {
    if (completion instanceof ThrowCompletion || (completion && completion.Type === 'throw')) {
      res = { status: 'throw', ctor: null, message: null };
      try {
        nodes = 0;
        const pop = realm.pushTopContext();
        CreateNonEnumerableDataPropertyOrThrow(realm.GlobalObject, Value('__doppelThrown'), completion.Value);
        pop?.();
        const d = realm.evaluateScriptSkipDebugger(EXTRACT);
        if (!(d instanceof ThrowCompletion)) Object.assign(res, JSON.parse(d.Value.stringValue()));
      } catch (e) {
        // The thrown value could not be described (a getter looping past the budget): kept as unknown.
      }
    } else {
      res = { status: 'normal' };
    }
  }
  checking = false;
  return { ...res, ...inspection, stdout: p.out, stdout_cut: p.cut, ...(coverage ? { coverage } : {}) };
});
