"""doppel-engines worker for SpiderMonkey 136 through PyPI pythonmonkey:
imported once, a forked child per script (pythonmonkey has no fresh-global
API), the timeout an ITIMER_REAL in the child. The thrown value is read in
the engine through the exception's jsError, except for `throw null` and
`throw undefined`, where touching jsError segfaults (notes §5.6)."""
import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_lines  # noqa: E402
import pythonmonkey as pm  # noqa: E402

DESCRIBE = """(function (e) {
  var t = e === null ? 'null' : typeof e;
  if (t !== 'object' && t !== 'function') return JSON.stringify({ ctor: t, message: t === 'symbol' ? '' : String(e) });
  var c = null, m = null;
  try { var k = e.constructor; if (k !== undefined && k !== null && typeof k.name === 'string') c = k.name; } catch (x) {}
  try { if (e.message !== undefined) m = String(e.message); } catch (x) {}
  return JSON.stringify({ ctor: c, message: m });
})"""

BOXED = {"Number": "number", "String": "string", "Boolean": "boolean", "BigInt": "bigint", "Symbol": "symbol"}


# pythonmonkey's host globals: `python` and `pmEval` would let a program under
# test run Python; all of them are enumerable and would show in global-state
# assertions. Removed before each script.
HOST_GLOBALS = ["python", "pmEval", "debuggerGlobal", "console", "atob", "btoa", "__core-js_shared__",
                "setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "setInterval", "clearInterval",
                "Event", "EventTarget", "XMLHttpRequestEventTarget", "XMLHttpRequestUpload", "XMLHttpRequest",
                "ProgressEvent"]


def child(req):
    p = py_lines.Printer(req["output_cap"])
    pm.eval("(function (names) { for (var i = 0; i < names.length; i++) {"
            " try { if (!delete globalThis[names[i]]) globalThis[names[i]] = undefined; } catch (e) {} } })")(HOST_GLOBALS)
    pm.eval("(function (p) { Object.defineProperty(globalThis, 'print', { writable: true, configurable: true,"
            " enumerable: false, value: function print() { p(Array.prototype.map.call(arguments, String).join(' ')); } }); })")(
        lambda line: p(line))
    async def evaluate():
        # Promise jobs and timers need a running asyncio loop; pm.wait() drains them.
        pm.eval(req["src"])
        await pm.wait()

    try:
        asyncio.run(evaluate())
        res = {"status": "normal"}
    except pm.SpiderMonkeyError as e:
        text = str(e)
        prim = text.startswith("uncaught exception: ")
        rest = text[len("uncaught exception: "):].rstrip("\n") if prim else ""
        if prim and rest in ("null", "undefined"):
            res = {"status": "throw", "ctor": rest, "message": rest}
        else:
            d = json.loads(pm.eval(DESCRIBE)(e.jsError))
            if prim and d["ctor"] in BOXED:
                # pythonmonkey boxes a thrown primitive (throw 42 -> Number)
                d = {"ctor": BOXED[d["ctor"]], "message": rest}
            res = {"status": "throw", "ctor": d["ctor"], "message": d["message"]}
    res["stdout"], res["stdout_cut"] = p.out, p.cut
    return res


py_lines.serve("SpiderMonkey 136 (pythonmonkey %s)" % getattr(pm, "__version__", "?"),
               lambda req: py_lines.forked(lambda: child(req), req["timeout_ms"]))
