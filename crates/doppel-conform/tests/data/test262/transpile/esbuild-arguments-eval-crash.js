/*---
description: >
  A parameter named `arguments` with a direct eval in a parameter default of
  an async function is valid sloppy-mode code (ECMA-262 15.8 async function
  definitions; the eval sees the parameter scope). esbuild 0.28.2 lowering
  async functions to ES2015 crashes on it ("panic: runtime error: index out
  of range [4294967295] with length 2", in ast.FollowSymbols while printing);
  found by `doppel conform run` on test262's eval-code/direct/
  async-gen-func-decl-a-preceding-parameter-is-named-arguments-declare-arguments.js.
---*/
async function f(arguments, p = eval("1")) {}
var r = f(0);
assert.sameValue(typeof r.then, "function");
