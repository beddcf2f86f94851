"""doppel-engines: what the Python-hosted workers share (protocol: src/wire.rs).

serve(version, run): run(req) returns a response dict without id. The
protocol goes to a private copy of stdout; fd 1 itself is pointed at stderr
so an engine printing on its own (console.log) cannot corrupt the protocol.
forked(fn, timeout_ms): runs fn in a forked child (a fresh engine state per
script for engines without a fresh-realm API), with an ITIMER_REAL timeout;
a child killed by a signal is a timeout (SIGALRM) or a crash.
"""
import json
import os
import re
import signal
import sys

_proto = os.fdopen(os.dup(1), "w", encoding="ascii")
os.dup2(2, 1)


def send(obj):
    # ensure_ascii: every char >= U+007F as \\uXXXX, astral ones as surrogate pairs.
    _proto.write(json.dumps(obj, ensure_ascii=True) + "\n")
    _proto.flush()


class Printer:
    """Collects print output up to `cap` characters, one line per call."""

    def __init__(self, cap):
        self.cap, self.out, self.cut = cap, "", False

    def __call__(self, *parts):
        if self.cut:
            return
        line = " ".join(str(p) for p in parts) + "\n"
        if len(self.out) + len(line) > self.cap:
            self.out += line[: max(0, self.cap - len(self.out))]
            self.cut = True
        else:
            self.out += line


_NAMED = re.compile(r"^([A-Za-z_$][\w$]*): ?(.*)$", re.S)


def split_error(first_line):
    """An engine's 'Name: message' text as (ctor, message); (None, text) otherwise."""
    m = _NAMED.match(first_line)
    if m:
        return m.group(1), m.group(2)
    return None, first_line


def forked(fn, timeout_ms):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            signal.setitimer(signal.ITIMER_REAL, max(timeout_ms, 1) / 1000.0)
            res = fn()
        except BaseException as e:  # the child must always answer
            res = {"status": "host-error", "reason": "worker child: %r" % (e,)}
        signal.setitimer(signal.ITIMER_REAL, 0)
        with os.fdopen(w, "wb") as f:
            f.write(json.dumps(res, ensure_ascii=True).encode("ascii"))
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGALRM:
            return {"status": "timeout"}
        return {"status": "crash", "signal": sig}
    if not data:
        return {"status": "host-error", "reason": "worker child exited with status %d without an answer" % status}
    return json.loads(data)


def serve(version, run):
    send({"hello": "doppel-engines/1", "version": version})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            break
        req = json.loads(line)
        try:
            res = run(req)
        except BaseException as e:
            res = {"status": "host-error", "reason": "worker: %r" % (e,)}
        res["id"] = req["id"]
        send(res)
    sys.stdout.flush()
    os._exit(0)
