"""doppel-engines worker for V8 14 through PyPI mini-racer: a new MiniRacer
(a fresh isolate and context, real V8 global object) per script, mini-racer's
own timeout. The thrown value is only seen as V8's message text, so the
constructor is the error's `name` (`Error` for `class MyErr extends Error`)
and unknown for primitive throws."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_lines  # noqa: E402
from py_mini_racer import MiniRacer, JSEvalException, JSParseException, JSTimeoutException  # noqa: E402

_LOCATION = re.compile(r"^(?:<anonymous>|undefined):\d+: ")

SETUP = """(function () {
  var out = [], cap = %d, size = 0, cut = false;
  Object.defineProperty(globalThis, 'print', { writable: true, configurable: true, enumerable: false,
    value: function print() {
      var line = Array.prototype.map.call(arguments, String).join(' ') + '\\n';
      if (cut) return;
      if (size + line.length > cap) { out.push(line.slice(0, Math.max(0, cap - size))); cut = true; }
      else { out.push(line); size += line.length; }
    } });
  return function () { return JSON.stringify({ out: out.join(''), cut: cut }); };
})()"""


def describe(e):
    text = str(e)
    # "<anonymous>:1: TypeError: msg\nsource\n   ^\n\nTypeError: msg\n    at ..."
    first = text.split("\n", 1)[0]
    # The location is "<anonymous>:1" for the script, "undefined:1" for code
    # V8 compiled apart (eval, JSON.parse): both are dropped.
    m = _LOCATION.match(first)
    head = first[m.end():] if m else first
    ctor, msg = py_lines.split_error(head)
    return {"status": "throw", "ctor": ctor, "message": msg}


def run(req):
    mr = MiniRacer()
    output = mr.eval(SETUP % req["output_cap"])
    try:
        mr.eval(req["src"], timeout_sec=max(req["timeout_ms"], 1) / 1000.0)
        res = {"status": "normal"}
    except JSTimeoutException:
        res = {"status": "timeout"}
    except (JSEvalException, JSParseException) as e:
        res = describe(e)
    import json

    got = json.loads(output())
    res["stdout"], res["stdout_cut"] = got["out"], got["cut"]
    return res


py_lines.serve("V8 " + MiniRacer().v8_version, run)
