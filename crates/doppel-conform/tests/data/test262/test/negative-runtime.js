/*---
description: reading a property of null throws a TypeError
negative:
  phase: runtime
  type: TypeError
---*/
null.x;
