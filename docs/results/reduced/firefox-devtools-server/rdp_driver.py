#!/usr/bin/env python3
"""Minimal Firefox RDP driver, independent of doppel.

Starts `firefox-esr --headless --start-debugger-server PORT` with a fresh
profile, sets breakpoints through the watcher's breakpoint-list actor
(session data, applied before any script runs), navigates the tab to a page
that loads SCRIPT with <script src>, then issues a list of actions
(`resume`, `next`, `step`, `finish`) and prints every pause (why, location,
frame display name) and the page's console output.

usage: rdp_driver.py SCRIPT LINE:COL[,LINE:COL...] ACTION[,ACTION...]
  LINE is 1-based, COL 0-based (RDP's convention).
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time

EVENTS = {"paused", "resumed", "target-available-form", "target-destroyed-form",
          "resources-available-array", "resources-updated-array",
          "resources-destroyed-array", "tabNavigated", "frameUpdate",
          "descriptor-destroyed", "tabListChanged"}


class Rdp:
    def __init__(self, port):
        for _ in range(300):
            try:
                self.s = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise SystemExit("no debugger server")
        self.s.settimeout(20)
        self.buf = b""
        self.inbox = []

    def read(self):
        while b":" not in self.buf:
            self.buf += self.s.recv(65536)
        n, rest = self.buf.split(b":", 1)
        n = int(n)
        while len(rest) < n:
            rest += self.s.recv(65536)
        self.buf = rest[n:]
        return json.loads(rest[:n])

    def send(self, to, typ, **kw):
        p = dict(to=to, type=typ, **kw)
        b = json.dumps(p).encode()
        self.s.sendall(str(len(b)).encode() + b":" + b)

    def request(self, to, typ, **kw):
        self.send(to, typ, **kw)
        while True:
            p = self.read()
            if p.get("from") == to and p.get("type") not in EVENTS:
                if "error" in p:
                    raise RuntimeError(f"{typ} -> {p}")
                return p
            self.inbox.append(p)

    def wait(self, pred, timeout=10):
        end = time.time() + timeout
        while True:
            for i, p in enumerate(self.inbox):
                if pred(p):
                    return self.inbox.pop(i)
            if time.time() > end:
                return None
            self.s.settimeout(max(0.05, end - time.time()))
            try:
                self.inbox.append(self.read())
            except socket.timeout:
                return None


def main():
    script = os.path.abspath(sys.argv[1])
    bps = [tuple(int(x) for x in b.split(":")) for b in sys.argv[2].split(",") if b]
    actions = [a for a in sys.argv[3].split(",") if a]
    tmp = tempfile.mkdtemp(prefix="ffread-")
    prof = os.path.join(tmp, "profile")
    os.makedirs(prof)
    with open(os.path.join(prof, "user.js"), "w") as f:
        for k, v in [("devtools.debugger.remote-enabled", "true"),
                     ("devtools.chrome.enabled", "true"),
                     ("devtools.debugger.prompt-connection", "false"),
                     ("browser.shell.checkDefaultBrowser", "false"),
                     ("datareporting.policy.dataSubmissionEnabled", "false"),
                     ("toolkit.telemetry.enabled", "false"),
                     ("app.update.enabled", "false")]:
            f.write(f'user_pref("{k}", {v});\n')
    page = os.path.join(tmp, "page.html")
    with open(page, "w") as f:
        f.write(f'<!doctype html><script src="file://{script}"></script>'
                '<script>console.log("__end__")</script>')
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    env = dict(os.environ, HOME=tmp, MOZ_HEADLESS="1", MOZ_CRASHREPORTER_DISABLE="1")
    ff = subprocess.Popen(["firefox-esr", "--headless", "--no-remote", "--profile", prof,
                           "--start-debugger-server", str(port), "about:blank"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                          start_new_session=True)
    try:
        r = Rdp(port)
        r.read()  # greeting
        tab = None
        while not tab:
            tabs = r.request("root", "listTabs")["tabs"]
            tab = tabs[0]["actor"] if tabs else None
            time.sleep(0.1)
        watcher = r.request(tab, "getWatcher", isServerTargetSwitchingEnabled=True)["actor"]
        r.request(watcher, "watchTargets", targetType="frame")
        r.request(watcher, "watchResources", resourceTypes=["console-message", "error-message"])
        bl = r.request(watcher, "getBreakpointListActor")["breakpointList"]["actor"]
        url = "file://" + script
        for line, col in bps:
            r.request(bl, "setBreakpoint", location=dict(sourceUrl=url, line=line, column=col), options={})
        print("breakpoints", bps)
        r.inbox.clear()
        r.request(tab, "navigateTo", url="file://" + page, waitForLoad=False)

        def stop():
            def pred(p):
                if p.get("type") == "paused":
                    return True
                if p.get("type") == "resources-available-array":
                    for kind, items in p["array"]:
                        for it in items:
                            if kind == "console-message":
                                a = it["arguments"]
                                print("   console:", *a)
                                if a and a[0] == "__end__":
                                    return True
                            if kind == "error-message" and not it.get("pageError", {}).get("warning"):
                                print("   error:", it.get("pageError", {}).get("errorMessage"))
                return False
            p = r.wait(pred)
            if p is None or p.get("type") != "paused":
                return None
            return p

        def show(p):
            if p is None:
                print("   -> ended (no pause)")
                return
            w = p["frame"]["where"]
            env = r.request(p["frame"]["actor"], "getEnvironment")
            vs = {}
            while env:
                b = env.get("bindings") or {}
                for a in b.get("arguments", []):
                    for k, v in a.items():
                        vs.setdefault(k, v.get("value"))
                for k, v in (b.get("variables") or {}).items():
                    vs.setdefault(k, v.get("value"))
                if env.get("type") == "function":
                    break
                env = env.get("parent")
            vs = {k: v for k, v in vs.items() if not isinstance(v, dict)}
            print(f"   -> paused why={p['why']['type']} at {w['line']}:{w['column']} "
                  f"in {p['frame'].get('displayName')} {vs}")

        p = stop()
        print("navigate")
        show(p)
        for a in actions:
            if p is None:
                break
            limit = None if a == "resume" else {"type": a}
            r.request(p["from"], "resume", resumeLimit=limit)
            print(a)
            p = stop()
            show(p)
    finally:
        os.killpg(ff.pid, 9)
        ff.wait()
        shutil.rmtree(tmp, ignore_errors=True)  # the throw-away profile


if __name__ == "__main__":
    main()
