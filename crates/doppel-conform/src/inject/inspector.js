// doppel-conform's state inspector (JEST §III-D, assertion injection).
//
// Evaluated by engine262's worker in the program's realm *before* the program
// (see doppel-engines' wire::Request::inspect), with LEXICAL_NAMES and LIMITS
// substituted by src/inject/mod.rs. It captures the intrinsics it needs and
// the global object's own keys, and gives the function the worker calls after
// the program's script ends (before its promise jobs run). That function
// returns the final state as a JSON text whose strings are all ASCII: every
// program-derived string is given as JavaScript source (a string literal with
// \uXXXX escapes, a number literal, `Symbol.for(...)`, a path expression),
// never as a raw string, so lone surrogates survive.
//
// The walk is bounded (LIMITS.depth, .keys per object, .objects in all) and
// marks truncation; getters are never called.
(function (lexicalNames, limits) {
  'use strict';
  var R = Reflect;
  var ownKeys = R.ownKeys;
  var getProto = R.getPrototypeOf;
  var isExtensible = R.isExtensible;
  var gopd = R.getOwnPropertyDescriptor;
  var construct = R.construct;
  var apply = R.apply;
  var stringify = JSON.stringify;
  var indirectEval = eval;
  var keyFor = Symbol.keyFor;
  var symDescription = gopd(Symbol.prototype, 'description').get;
  var charCodeAt = String.prototype.charCodeAt;
  var toHex = Number.prototype.toString;
  var MapC = Map;
  var mapGet = Map.prototype.get;
  var mapSet = Map.prototype.set;
  // [[ErrorData]] without calling anything the program can override
  // (engine262 has the Error.isError proposal).
  var isErrorFn = typeof Error.isError === 'function' ? Error.isError : function () { return false; };
  var dummy = function () {};
  var globalObject = globalThis;
  var initialKeys = ownKeys(globalObject);

  var IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  var identTest = RegExp.prototype.test;
  var RESERVED = { __proto__: null, await: 1, break: 1, case: 1, catch: 1, class: 1, const: 1, continue: 1,
    debugger: 1, default: 1, delete: 1, do: 1, else: 1, enum: 1, export: 1, extends: 1, false: 1, finally: 1,
    for: 1, function: 1, if: 1, import: 1, in: 1, instanceof: 1, new: 1, null: 1, return: 1, super: 1,
    switch: 1, this: 1, throw: 1, true: 1, try: 1, typeof: 1, var: 1, void: 1, while: 1, with: 1, yield: 1,
    let: 1, static: 1, implements: 1, interface: 1, package: 1, private: 1, protected: 1, public: 1,
    arguments: 1, eval: 1, undefined: 1, NaN: 1, Infinity: 1 };

  function has(list, x) {
    for (var i = 0; i < list.length; i++) if (list[i] === x) return true;
    return false;
  }
  function push(list, x) { list[list.length] = x; }

  // A string as an ASCII JavaScript string literal.
  var PLAIN = /^[ !#-\[\]-~]*$/;
  function lit(s) {
    if (apply(identTest, PLAIN, [s])) return '"' + s + '"';
    var out = '"';
    for (var i = 0; i < s.length; i++) {
      var c = apply(charCodeAt, s, [i]);
      if (c === 34) out += '\\"';
      else if (c === 92) out += '\\\\';
      else if (c >= 32 && c < 127) out += s[i];
      else {
        var h = apply(toHex, c, [16]);
        while (h.length < 4) h = '0' + h;
        out += '\\u' + h;
      }
    }
    return out + '"';
  }
  function isIdentifier(s) {
    return apply(identTest, IDENT, [s]) && RESERVED[s] !== 1;
  }

  // Well-known symbols by identity (ECMA-262 §6.1.5.1).
  var WELL_KNOWN = ['asyncIterator', 'hasInstance', 'isConcatSpreadable', 'iterator', 'match', 'matchAll',
    'replace', 'search', 'species', 'split', 'toPrimitive', 'toStringTag', 'unscopables'];
  var wellKnown = [];
  for (var w = 0; w < WELL_KNOWN.length; w++) {
    var sym = Symbol[WELL_KNOWN[w]];
    if (typeof sym === 'symbol') push(wellKnown, [sym, 'Symbol.' + WELL_KNOWN[w]]);
  }
  // A symbol as source, or null when no expression gives it (a unique symbol).
  function symbolSource(s) {
    for (var i = 0; i < wellKnown.length; i++) if (wellKnown[i][0] === s) return wellKnown[i][1];
    var k = keyFor(s);
    return k === undefined ? null : 'Symbol.for(' + lit(k) + ')';
  }
  // A property key as source (a string literal or a symbol expression), or null.
  function keySource(k) {
    return typeof k === 'symbol' ? symbolSource(k) : lit(k);
  }
  function member(path, k) {
    return typeof k === 'string' && isIdentifier(k) ? path + '.' + k : path + '[' + keySource(k) + ']';
  }

  // Intrinsics by identity: every global binding present before the program
  // and its `prototype`, plus intrinsics no global names (ECMA-262 §6.1.7.4),
  // each with a path expression. Not their methods (`Math.abs`): engine262
  // evaluates about 10^5 nodes a second, and walking every built-in's
  // members before each program cost more than the program; a built-in
  // method in the final state is walked like any function.
  // Paths are built only when needed: the map holds [base, key, viaPrototype,
  // isExpression] (`base.key`, or `base.prototype.key`; key null for `base`
  // or `base.prototype`; an expression base is the whole path).
  var intrinsics = new MapC();
  function addIntrinsic(v, base, key, viaPrototype, isExpression) {
    if ((typeof v === 'object' && v !== null) || typeof v === 'function') {
      if (apply(mapGet, intrinsics, [v]) === undefined) {
        apply(mapSet, intrinsics, [v, [base, key, viaPrototype, isExpression === true]]);
      }
    }
  }
  function dataValue(o, k) {
    if ((typeof o !== 'object' || o === null) && typeof o !== 'function') return undefined;
    var d = gopd(o, k);
    return d && 'value' in d ? d.value : undefined;
  }
  // The global object is `this` at a Script's top level (where assertions
  // run), which no program can rebind, unlike `globalThis` (ES2020).
  addIntrinsic(globalObject, 'this', null, false, true);
  for (var g = 0; g < initialKeys.length; g++) {
    var gk = initialKeys[g];
    if (typeof gk !== 'string' || gk === 'globalThis') continue;
    var gv = dataValue(globalObject, gk);
    if ((typeof gv !== 'object' || gv === null) && typeof gv !== 'function') continue;
    addIntrinsic(gv, gk, null, false);
    addIntrinsic(dataValue(gv, 'prototype'), gk, null, true);
  }
  var HIDDEN = [
    'Object.getPrototypeOf(function* () {})',
    'Object.getPrototypeOf(function* () {}).prototype',
    'Object.getPrototypeOf(async function () {})',
    'Object.getPrototypeOf(async function* () {})',
    'Object.getPrototypeOf(async function* () {}).prototype',
    'Object.getPrototypeOf(Object.getPrototypeOf(async function* () {}.prototype))',
    'Object.getPrototypeOf([][Symbol.iterator]())',
    'Object.getPrototypeOf(new Map()[Symbol.iterator]())',
    'Object.getPrototypeOf(new Set()[Symbol.iterator]())',
    'Object.getPrototypeOf(""[Symbol.iterator]())',
    'Object.getPrototypeOf(/a/[Symbol.matchAll](""))',
    'Object.getPrototypeOf(Int8Array)',
    'Object.getPrototypeOf(Int8Array.prototype)',
    'Object.getPrototypeOf(Iterator.from({ next: function () {} }))',
    'Object.getPrototypeOf([].values().map(function (x) { return x; }))'
  ];
  for (var hIndex = 0; hIndex < HIDDEN.length; hIndex++) {
    try { addIntrinsic(indirectEval(HIDDEN[hIndex]), HIDDEN[hIndex], null, false, true); } catch (e) { /* not in this edition */ }
  }
  // An intrinsic's path, if evaluating that path now still gives it (the
  // program may have replaced a global).
  function intrinsicPath(v) {
    var entry = apply(mapGet, intrinsics, [v]);
    if (entry === undefined) return null;
    var base = entry[0];
    if (entry[3]) return checked(base, v);
    if (!isIdentifier(base)) return null;
    var p = entry[2] ? base + '.prototype' : base;
    if (entry[1] !== null) {
      if (typeof entry[1] === 'symbol' && symbolSource(entry[1]) === null) return null;
      p = member(p, entry[1]);
    }
    return checked(p, v);
  }
  function checked(p, v) {
    try { return indirectEval(p) === v ? p : null; } catch (e) { return null; }
  }

  function numberSource(n) {
    if (n !== n) return 'NaN';
    if (n === 1 / 0) return 'Infinity';
    if (n === -1 / 0) return '-Infinity';
    if (n === 0 && 1 / n < 0) return '-0';
    return '' + n;
  }

  return function inspect(threw) {
    var objects = [];
    var seen = new MapC();
    var truncated = false;

    function isConstructor(f) {
      try { construct(dummy, [], f); return true; } catch (e) { return false; }
    }

    // A value as {t, src?, ...}; objects are walked (up to depth) and get an id.
    function value(v, path, depth) {
      var t = v === null ? 'null' : typeof v;
      switch (t) {
        case 'undefined': return { t: t, src: 'undefined' };
        case 'null': return { t: t, src: 'null' };
        case 'boolean': return { t: t, src: v ? 'true' : 'false' };
        case 'number': return { t: t, src: numberSource(v) };
        case 'bigint': return { t: t, src: '' + v + 'n' };
        case 'string': return { t: t, src: lit(v) };
        case 'symbol': {
          var d = apply(symDescription, v, []);
          return { t: t, src: symbolSource(v), description: d === undefined ? null : lit(d) };
        }
        default: return object(v, path, depth);
      }
    }

    function object(o, path, depth) {
      var ip = intrinsicPath(o);
      if (ip !== null) return { t: 'intrinsic', src: ip };
      var id = apply(mapGet, seen, [o]);
      if (id !== undefined) return { t: 'object', id: id };
      if (path === null || depth > limits.depth || objects.length >= limits.objects) {
        truncated = true;
        return { t: 'object', id: null, callable: typeof o === 'function' };
      }
      id = objects.length;
      apply(mapSet, seen, [o, id]);
      var info = { path: path, callable: typeof o === 'function', constructor: false, extensible: isExtensible(o),
        proto: null, keys: [], props: [], truncated: false, error: apply(isErrorFn, Error, [o]) };
      push(objects, info);
      info.constructor = info.callable && isConstructor(o);
      var keys = ownKeys(o);
      var expressible = [];
      for (var i = 0; i < keys.length; i++) {
        var ks = keySource(keys[i]);
        if (ks === null) { info.truncated = true; truncated = true; }
        push(info.keys, ks);
        if (ks !== null) push(expressible, keys[i]);
      }
      var proto = getProto(o);
      info.proto = proto === null ? { t: 'null', src: 'null' }
        : object(proto, 'Object.getPrototypeOf(' + path + ')', depth + 1);
      for (var j = 0; j < expressible.length; j++) {
        if (j >= limits.keys) { info.truncated = true; truncated = true; break; }
        var k = expressible[j];
        var desc = gopd(o, k);
        if (desc === undefined) continue;
        push(info.props, property(k, desc, member(path, k), depth));
      }
      return { t: 'object', id: id };
    }

    function property(k, desc, path, depth) {
      var p = { key: keySource(k), path: path, enumerable: desc.enumerable, configurable: desc.configurable };
      if ('value' in desc) {
        p.writable = desc.writable;
        p.value = value(desc.value, path, depth + 1);
      } else {
        p.get = typeof desc.get === 'function' ? 'function' : 'undefined';
        p.set = typeof desc.set === 'function' ? 'function' : 'undefined';
      }
      return p;
    }

    var globals = [];
    var finalKeys = ownKeys(globalObject);
    for (var i = 0; i < finalKeys.length; i++) {
      var k = finalKeys[i];
      if (has(initialKeys, k)) continue;
      var ks = keySource(k);
      if (ks === null) { truncated = true; continue; }
      var desc = gopd(globalObject, k);
      if (desc === undefined) continue;
      // A bare name unless a lexical binding shadows the property.
      var path = typeof k === 'string' && isIdentifier(k) && !has(lexicalNames, k) ? k : member('this', k);
      push(globals, property(k, desc, path, 0));
    }
    var lexicals = [];
    for (var n = 0; n < lexicalNames.length; n++) {
      var name = lexicalNames[n];
      var v;
      try {
        v = indirectEval(name);
      } catch (e) {
        push(lexicals, { name: name, uninitialized: true });
        continue;
      }
      push(lexicals, { name: name, value: value(v, name, 0) });
    }
    return stringify({ threw: threw, globals: globals, lexicals: lexicals, objects: objects,
      truncated: truncated });
  };
})(LEXICAL_NAMES, LIMITS)
