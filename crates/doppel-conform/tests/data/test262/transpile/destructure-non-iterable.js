/*---
description: >
  Array destructuring of a non-iterable throws a TypeError (ECMA-262 8.6.2
  BindingInitialization of an ArrayBindingPattern: GetIterator on 0). Rhino
  1.7 binds nothing and throws nothing; TypeScript's ES5 output without
  downlevelIteration (`var _a = 0;`) does not call GetIterator either,
  while the untranspiled V8 agrees with engine262: an engine bug and a
  transpiler bug on one test (docs/results/conformance.md, runs 13-14).
---*/
assert.throws(TypeError, function() {
  var [] = 0;
});
