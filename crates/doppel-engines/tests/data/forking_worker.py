"""A fake engine on the real py_lines fork-per-script loop (argv[1] = the
workers directory): `crash` kills the child with SIGSEGV, `hang` spins past
the timeout, anything else is printed back."""
import os
import signal
import sys

sys.path.insert(0, sys.argv[1])
import py_lines  # noqa: E402


def child(req):
    if req["src"] == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if req["src"] == "hang":
        while True:
            pass
    return {"status": "normal", "stdout": req["src"] + "\n"}


py_lines.serve("fake", lambda req: py_lines.forked(lambda: child(req), req["timeout_ms"]))
