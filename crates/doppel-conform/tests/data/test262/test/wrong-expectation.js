/*---
description: a test whose expectation is wrong, so every family fails it (a specification-candidate stand-in)
---*/
assert.sameValue([1, 2, 3].length, 4);
