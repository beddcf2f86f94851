"""doppel-engines worker for Boa 0.22 through PyPI boabem: a forked child per
script with a new Context (the fork gives crash isolation, and the timeout is
an ITIMER_REAL: boabem has no interrupt API). The source runs as
`src + "\\n;void 0;"`: boabem segfaults when a script's completion value is a
function and fakes a TypeError for a Symbol or globalThis (notes §5.7).
boabem does not run promise jobs after eval, and shows the thrown value only
as text (constructor = the error's name, or an object's constructor name with
its `message` property read from the text; unknown for primitives)."""
import json
import os
import re
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


_MESSAGE = re.compile(r'^\s*message: "(.*)",?\s*$')


def thrown(text):
    """(ctor, message) of boabem's text of an uncaught exception. An Error
    shows as `Name: message`; any other object (test262's Test262Error) as
    `Name {` and one `key: value` line per own property, whose `message`
    line is read so the failed assertion can be named."""
    lines = text.split("\n")
    first = lines[0].split(" (unknown at ", 1)[0].split(" (native at ", 1)[0]
    if first.endswith(" {") and re.match(r"^[A-Za-z_$][\w$]* \{$", first):
        for line in lines[1:]:
            if line.strip() == "}":
                break
            m = _MESSAGE.match(line)
            if m:
                try:
                    msg = json.loads('"%s"' % m.group(1))
                except ValueError:
                    msg = m.group(1)
                return first[:-2], msg
    return py_lines.split_error(first)


def child(req):
    ctx = boabem.Context()
    ctx.eval(SETUP % req["output_cap"])
    try:
        ctx.eval(req["src"] + "\n;void 0;")
        res = {"status": "normal"}
    except Exception as e:  # boabem raises RuntimeError with the engine's text
        ctor, msg = thrown(str(e))
        res = {"status": "throw", "ctor": ctor, "message": msg}
    got = json.loads(ctx.eval("__doppelOutput()"))
    res["stdout"], res["stdout_cut"] = got["out"], got["cut"]
    return res


if __name__ == "__main__":
    py_lines.serve("boabem (Boa 0.22)", lambda req: py_lines.forked(lambda: child(req), req["timeout_ms"]))
