#!/usr/bin/env python3
"""Which URL does Firefox give a function grip's `location`?

usage: [TARGET=i] [FIRST_STATEMENT=1] fnurl.py N BP_LINE:BP_COL VAR SCRIPT [SCRIPT...]
Starts one headless firefox-esr, then N times: navigates the tab to a page
that loads the SCRIPTs in order (<script src>), waits for the breakpoint
(set in SCRIPT number TARGET, default the last, through the breakpoint-list actor), reads the
variable VAR of the paused frame's environment chain, and prints the
function grip's `location` and `displayName`; resumes to the end.
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time
from rdp_driver import Rdp


def main():
    n = int(sys.argv[1])
    line, col = (int(x) for x in sys.argv[2].split(":"))
    var = sys.argv[3]
    scripts = [os.path.abspath(s) for s in sys.argv[4:]]
    target = scripts[int(os.environ.get("TARGET", "-1"))]  # the script with the breakpoint
    tmp = tempfile.mkdtemp(prefix="ffread-")
    prof = os.path.join(tmp, "profile"); os.makedirs(prof)
    with open(os.path.join(prof, "user.js"), "w") as f:
        for k, v in [("devtools.debugger.remote-enabled", "true"), ("devtools.chrome.enabled", "true"),
                     ("devtools.debugger.prompt-connection", "false")]:
            f.write(f'user_pref("{k}", {v});\n')
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    env = dict(os.environ, HOME=tmp, MOZ_HEADLESS="1", MOZ_CRASHREPORTER_DISABLE="1")
    ff = subprocess.Popen(["firefox-esr", "--headless", "--no-remote", "--profile", prof,
                           "--start-debugger-server", str(port), "about:blank"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        r = Rdp(port); r.read()
        tab = None
        while not tab:
            tabs = r.request("root", "listTabs")["tabs"]; tab = tabs[0]["actor"] if tabs else None
            time.sleep(0.1)
        watcher = r.request(tab, "getWatcher", isServerTargetSwitchingEnabled=True)["actor"]
        r.request(watcher, "watchTargets", targetType="frame")
        r.request(watcher, "watchResources", resourceTypes=["console-message"])
        bl = r.request(watcher, "getBreakpointListActor")["breakpointList"]["actor"]
        r.request(bl, "setBreakpoint", location=dict(sourceUrl="file://" + target, line=line, column=col), options={})
        if os.environ.get("FIRST_STATEMENT"):
            # doppel's loader: pause at the first statement of every script
            r.request(bl, "setActiveEventBreakpoints", ids=["script.source.firstStatement"])
        for k in range(n):
            page = os.path.join(tmp, f"page{k}.html")
            marker = f"__end{k}__"
            with open(page, "w") as f:
                f.write("<!doctype html>" + "".join(f'<script src="file://{s}"></script>' for s in scripts)
                        + f'<script>console.log("{marker}")</script>')
            r.inbox.clear()
            r.request(tab, "navigateTo", url="file://" + page, waitForLoad=False)
            while True:
                p = r.wait(lambda p: p.get("type") == "paused", 10)
                if p is None or p["why"]["type"] != "eventBreakpoint":
                    break
                r.request(p["from"], "resume", resumeLimit=None)
            if p is None:
                print(k, "no pause"); continue
            env_ = r.request(p["frame"]["actor"], "getEnvironment")
            grip = None
            while env_ and grip is None:
                vs = (env_.get("bindings") or {}).get("variables") or {}
                if var in vs:
                    grip = vs[var].get("value")
                env_ = env_.get("parent")
            loc = grip.get("location") if isinstance(grip, dict) else None
            ok = loc and loc["url"] == "file://" + target
            print(k, "OK " if ok else "BAD", grip.get("displayName") if isinstance(grip, dict) else grip, loc)
            r.request(p["from"], "resume", resumeLimit=None)
            def end(p):
                if p.get("type") == "paused":
                    r.send(p["from"], "resume", resumeLimit=None)
                    return False
                return p.get("type") == "resources-available-array" and marker in json.dumps(p)
            r.wait(end, 30)
    finally:
        os.killpg(ff.pid, 9); ff.wait()


if __name__ == "__main__":
    main()
