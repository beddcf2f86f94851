/*---
description: a module test, which a classic-script host cannot run
flags: [module]
---*/
export var x = 1;
