/*---
description: >
  Spread of a Set in an array literal iterates the Set (ECMA-262 13.2.4.1
  ArrayAccumulation, SpreadElement). TypeScript's ES5 downlevel without
  downlevelIteration lowers it to __spreadArray, which reads only `length`
  and indices: a Set spreads to nothing. The engines and the untranspiled
  V8 agree with engine262; TypeScript's output does not.
---*/
var elements = [...new Set([1, 2])];
assert.sameValue(elements.length, 2);
