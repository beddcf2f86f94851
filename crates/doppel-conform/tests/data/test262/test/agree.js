/*---
description: every engine computes 1 + 1
---*/
assert.sameValue(1 + 1, 2);
