// doppel-engines: the static catalogue of engine262's spec algorithms and
// spec steps, from its pinned bundle (lib/engine262.mjs), its source map and
// acorn. Used by engine262.mjs to map V8 precise coverage of the bundle to
// spec algorithms (functions) and steps (numbered `// N.` comments).
//
// - Algorithm: a named function whose original source (through the source
//   map) is in a spec-semantics directory of engine262 (abstract-ops,
//   runtime-semantics, static-semantics, intrinsics, execution-context,
//   value/modules/parse/evaluator) and whose name starts with a capital
//   letter (spec style: IsLooselyEqual, Evaluate_IfStatement, ArrayProto_join).
//   Keyed by the function's end offset (V8 ranges agree with acorn on ends).
//   Post-ES2025 proposals are left out (POST_ES2025_*).
// - Step: a `// 1.` / `// a.` / `// i.` comment inside an algorithm, anchored
//   at the first code token after it; the label is made hierarchical
//   (1, 1.a, 1.a.i, 1.a.i.1) by the spec's numbering scheme.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import module from 'node:module';

const SPEC_DIRS = [
  'src/abstract-ops/', 'src/runtime-semantics/', 'src/static-semantics/', 'src/intrinsics/',
  'src/execution-context/', 'src/value.mts', 'src/modules.mts', 'src/parse.mts', 'src/evaluator.mts',
];

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function position(starts, offset) {
  let lo = 0, hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid; else hi = mid - 1;
  }
  return { line: lo, column: offset - starts[lo] };
}

function kindOf(name) {
  if (name.startsWith('Evaluate_') || name === 'Evaluate') return 'evaluation';
  if (/_/.test(name)) return 'builtin';
  return 'operation';
}

// ES2025 is pinned: engine262 also implements later proposals, whose
// algorithms are left out of the catalogue (by source file, and by name for
// those spread over shared files): Temporal, ShadowRealm, explicit resource
// management (using, DisposableStack, SuppressedError), decorators, Decimal,
// Iterator.zip.
const POST_ES2025_FILES = /temporal|shadow-?realm|DisposableStack|disposable-operations|SuppressedError|decimal/i;
const POST_ES2025_NAMES = /Temporal|ShadowRealm|Disposable|Dispose|Using|Decorator|Decimal|IteratorZip|Suppressed/;

// Bump when the rules above change: cached catalogues of another version are rebuilt.
export const CATALOGUE_RULES = 2;

const ROMAN = /^(i|ii|iii|iv|v|vi|vii|viii|ix|x|xi|xii|xiii|xiv|xv)$/;

// Builds {algorithms, steps, fnEnds, anchors} for the bundle at `pkgDir`.
export function buildCatalogue(pkgDir, acornPath) {
  const require = createRequire(import.meta.url);
  const acorn = require(acornPath);
  const file = pkgDir + '/lib/engine262.mjs';
  const text = fs.readFileSync(file, 'utf8');
  const map = new module.SourceMap(JSON.parse(fs.readFileSync(file + '.map', 'utf8')));
  const starts = lineStarts(text);
  const original = (offset) => {
    const p = position(starts, offset);
    const e = map.findEntry(p.line, p.column);
    if (!e || !e.originalSource) return null;
    return { file: e.originalSource.replace(/^(\.\.\/)+/, ''), line: e.originalLine + 1 };
  };

  // Every function node, with a name where one can be read.
  const ast = acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'module' });
  const fns = [];
  const walk = (node, nameHint) => {
    if (!node || typeof node.type !== 'string') return;
    if (/Function/.test(node.type)) {
      fns.push({ start: node.start, end: node.end, name: (node.id && node.id.name) || nameHint || null });
    }
    for (const key of Object.keys(node)) {
      if (key === 'loc') continue;
      const v = node[key];
      let hint = null;
      if (node.type === 'VariableDeclarator' && key === 'init' && node.id.type === 'Identifier') hint = node.id.name;
      if ((node.type === 'MethodDefinition' || node.type === 'Property') && key === 'value' && node.key) {
        hint = node.key.name || (typeof node.key.value === 'string' ? node.key.value : null);
      }
      if (Array.isArray(v)) v.forEach((c) => walk(c, null));
      else if (v && typeof v.type === 'string') walk(v, hint);
    }
  };
  walk(ast, null);
  fns.sort((a, b) => a.start - b.start || b.end - a.end);

  const algorithms = [];
  const fnEnds = [];
  const algoOfFn = new Map();
  const seenIds = new Map();
  for (const f of fns) {
    if (!f.name || !/^[A-Z]/.test(f.name)) continue;
    const src = original(f.start);
    if (!src || !SPEC_DIRS.some((d) => src.file.startsWith(d))) continue;
    if (POST_ES2025_FILES.test(src.file) || POST_ES2025_NAMES.test(f.name)) continue;
    let id = f.name;
    const n = (seenIds.get(id) || 0) + 1;
    seenIds.set(id, n);
    if (n > 1) id = `${f.name}#${n}`;
    const idx = algorithms.length;
    algorithms.push({ id, name: f.name, kind: kindOf(f.name), source: `${src.file}:${src.line}` });
    fnEnds.push([f.end, idx]);
    algoOfFn.set(f, idx);
  }

  // Step comments, in text order, each in its innermost enclosing function.
  const steps = [];
  const anchors = [];
  const re = /^[ \t]*\/\/ ([0-9]+|[a-z]+)\. /gm;
  let m;
  let stack = [];
  let fi = 0;
  let path = [], pathFn = null;
  const stepIds = new Map();
  while ((m = re.exec(text))) {
    const at = m.index;
    // The anchor: the first code token after this comment line (skipping
    // blank lines, more line comments and /* ... */ annotations).
    let p = text.indexOf('\n', at);
    if (p < 0) continue;
    for (;;) {
      while (p < text.length && /\s/.test(text[p])) p++;
      if (text.startsWith('//', p)) { const nl = text.indexOf('\n', p); p = nl < 0 ? text.length : nl; continue; }
      if (text.startsWith('/*', p)) { const c = text.indexOf('*/', p); p = c < 0 ? text.length : c + 2; continue; }
      break;
    }
    while (fi < fns.length && fns[fi].start <= at) {
      while (stack.length && stack[stack.length - 1].end <= fns[fi].start) stack.pop();
      stack.push(fns[fi++]);
    }
    while (stack.length && stack[stack.length - 1].end <= at) stack.pop();
    const fn = stack[stack.length - 1];
    if (!fn || !algoOfFn.has(fn)) continue;
    if (fn !== pathFn) { path = []; pathFn = fn; }
    const tok = m[1];
    let level;
    if (/^[0-9]+$/.test(tok)) level = path.length >= 3 && (tok === '1' || path.length > 3) ? 3 : 0;
    else if (ROMAN.test(tok) && !(path.length === 2 && path[1].charCodeAt(0) + 1 === tok.charCodeAt(0) && tok.length === 1)) level = path.length >= 5 ? 5 : 2;
    else level = path.length >= 4 ? 4 : 1;
    if (level > path.length) level = path.length;
    path = path.slice(0, level).concat([tok]);
    const algorithm = algoOfFn.get(fn);
    const label = path.join('.');
    let id = `${algorithms[algorithm].id}:${label}`;
    const n = (stepIds.get(id) || 0) + 1;
    stepIds.set(id, n);
    if (n > 1) id = `${id}#${n}`;
    const src = original(at);
    const idx = steps.length;
    steps.push({ id, algorithm, label, top: level === 0, source: src ? `${src.file}:${src.line}` : '' });
    anchors.push([p, idx, fn.start]);
  }
  anchors.sort((a, b) => a[0] - b[0]);
  fnEnds.sort((a, b) => a[0] - b[0]);
  return { algorithms, steps, fnEnds, anchors };
}
