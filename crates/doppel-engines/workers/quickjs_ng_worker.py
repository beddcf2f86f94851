"""doppel-engines worker for quickjs-ng through PyPI quickjs-ng: a new
quickjs.Context per script (fresh runtime and global), its time limit as the
timeout (a timeout shows as `InternalError: interrupted`), a bounded stack,
promise jobs drained after the script. The thrown value is only seen as text
(constructor = the error's name; unknown for primitive throws)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_lines  # noqa: E402
import quickjs  # noqa: E402


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


def run(req):
    ctx = quickjs.Context()
    ctx.set_max_stack_size(1024 * 1024)
    # print is JavaScript: with a time limit set, quickjs cannot call into Python.
    ctx.eval(SETUP % req["output_cap"])
    ctx.set_time_limit(max(req["timeout_ms"], 1) / 1000.0)
    try:
        ctx.eval(req["src"])
        while ctx.execute_pending_job():
            pass
        res = {"status": "normal"}
    except quickjs.JSException as e:
        first = str(e).split("\n", 1)[0]
        if first == "InternalError: interrupted":
            res = {"status": "timeout"}
        else:
            ctor, msg = py_lines.split_error(first)
            res = {"status": "throw", "ctor": ctor, "message": msg}
    except quickjs.StackOverflow as e:
        res = {"status": "throw", "ctor": "InternalError", "message": str(e)}
    ctx.set_time_limit(-1)
    got = json.loads(ctx.eval("__doppelOutput()"))
    res["stdout"], res["stdout_cut"] = got["out"], got["cut"]
    return res


py_lines.serve("quickjs-ng", run)
