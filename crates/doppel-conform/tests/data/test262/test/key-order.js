/*---
description: own keys list integer indices first, then strings in insertion order (ECMA-262 OrdinaryOwnPropertyKeys); njs lists b,a,1
---*/
assert.sameValue(Object.keys({ b: 1, a: 2, 1: 3 }).join(), "1,b,a");
