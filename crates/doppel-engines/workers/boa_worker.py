"""doppel-engines worker for Boa 0.22 through PyPI boabem: a forked child per
script with a new Context (the fork gives crash isolation, and the timeout is
an ITIMER_REAL: boabem has no interrupt API). The source runs as
`src + "\\n;void 0;"`: boabem segfaults when a script's completion value is a
function and fakes a TypeError for a Symbol or globalThis (notes §5.7).
boabem does not run promise jobs after eval, and shows the thrown value only
as text (constructor = the error's name; unknown for primitives)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_lines  # noqa: E402
import boabem  # noqa: E402

SETUP = """(function () {
  var out = [], cap = %d, size = 0, cut = false;
  Object.defineProperty(globalThis, 'print', { writable: true, configurable: true, enumerable: false,
    value: function print() {
      var line = Array.prototype.map.call(arguments, String).join(' ') + '\\n';
      if (cut) return;
      if (size + line.length > cap) { out.push(line.slice(0, Math.max(0, cap - size))); cut = true; }
      else { out.push(line); size += line.length; }
    } });
  Object.defineProperty(globalThis, '__doppelOutput', { configurable: true, enumerable: false,
    value: function () { return JSON.stringify({ out: out.join(''), cut: cut }); } });
})(); void 0;"""


def child(req):
    ctx = boabem.Context()
    ctx.eval(SETUP % req["output_cap"])
    try:
        ctx.eval(req["src"] + "\n;void 0;")
        res = {"status": "normal"}
    except Exception as e:  # boabem raises RuntimeError with the engine's text
        first = str(e).split("\n", 1)[0]
        first = first.split(" (unknown at ", 1)[0].split(" (native at ", 1)[0]
        ctor, msg = py_lines.split_error(first)
        res = {"status": "throw", "ctor": ctor, "message": msg}
    got = json.loads(ctx.eval("__doppelOutput()"))
    res["stdout"], res["stdout_cut"] = got["out"], got["cut"]
    return res


py_lines.serve("boabem (Boa 0.22)", lambda req: py_lines.forked(lambda: child(req), req["timeout_ms"]))
