//! The fault-injection suite's fake debuggers (docs/reliability.md): a
//! fake gdb (GDB/MI over stdio) and a fake lldb-dap (DAP over stdio) that
//! misbehave in one way each: garbage, truncated records, huge lines,
//! floods, never answering, exiting, invalid UTF-8, malformed
//! `Content-Length`. Every case must end within a few action timeouts as an
//! `Output::Failed` with a cause, without a panic, and leave no process
//! (each fake also starts a `setsid` grandchild that must die with it).
//! Prints `faults: group=fake_debuggers ...` and asserts every count but
//! `cases` is 0.

use doppel_core::{Language, Output, Subject};
use doppel_debuggers::backend::gdb::Gdb;
use doppel_debuggers::backend::lldb::Lldb;
use doppel_debuggers::{Debugger, DebuggerConfig};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const GDB_MODES: &[&str] = &["garbage", "truncated", "huge", "flood", "silent", "exit", "utf8"];
const DAP_MODES: &[&str] = &[
    "garbage",
    "badlength",
    "hugelength",
    "flood",
    "silent",
    "exit",
    "utf8",
    "truncated",
];

/// The fake gdb: answers `--version`, then misbehaves on the first command.
const FAKE_GDB: &str = r#"#!/usr/bin/python3
import os, re, sys, time
if "--version" in sys.argv:
    print("GNU gdb (fake) 13.1")
    sys.exit(0)
MODE = "@MODE@"
with open("@PIDS@", "a") as f:
    f.write(f"{os.getpid()}\n")
if os.fork() == 0:
    os.setsid()
    with open("@PIDS@", "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(1000)
    os._exit(0)
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    m = re.match(rb"(\d+)", line)
    tok = m.group(1) if m else b""
    if MODE == "garbage":
        out.write(b"\x01\x02 not MI {{[[ at all\n")
    elif MODE == "truncated":
        out.write(tok + b'^done,value="abc')
        out.flush()
        time.sleep(1000)
    elif MODE == "huge":
        out.write(b'~"' + b"x" * (40 << 20) + b'"\n')
    elif MODE == "flood":
        while True:
            out.write(b'~"flood flood flood flood flood flood"\n')
    elif MODE == "silent":
        time.sleep(1000)
    elif MODE == "exit":
        sys.exit(3)
    elif MODE == "utf8":
        out.write(tok + b'^done,value="\xff\xfe"\n')
    out.flush()
"#;

/// The fake lldb-dap: reads one request, then misbehaves.
const FAKE_DAP: &str = r#"#!/usr/bin/python3
import json, os, sys, time
MODE = "@MODE@"
with open("@PIDS@", "a") as f:
    f.write(f"{os.getpid()}\n")
if os.fork() == 0:
    os.setsid()
    with open("@PIDS@", "a") as f:
        f.write(f"{os.getpid()}\n")
    time.sleep(1000)
    os._exit(0)
inp, out = sys.stdin.buffer, sys.stdout.buffer
def read():
    n = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        k, _, v = line.partition(b":")
        if k.lower() == b"content-length":
            n = int(v)
    return json.loads(inp.read(n))
def frame(body):
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
read()
if MODE == "garbage":
    out.write(b"\x00garbage garbage\r\n\r\n{{{ not json")
elif MODE == "badlength":
    out.write(b"Content-Length: abc\r\n\r\n{}")
elif MODE == "hugelength":
    out.write(b"Content-Length: 1099511627776\r\n\r\n{")
elif MODE == "flood":
    ev = frame(json.dumps({"seq": 0, "type": "event", "event": "output",
                           "body": {"category": "stdout", "output": "x" * 4000}}).encode())
    while True:
        out.write(ev)
elif MODE == "silent":
    pass
elif MODE == "exit":
    sys.exit(3)
elif MODE == "utf8":
    out.write(frame(b'{"seq":0,"type":"response","request_seq":1,"success":true,"body":"\xff\xfe"}'))
elif MODE == "truncated":
    out.write(b"Content-Length: 500\r\n\r\n{\"seq\":0,\"type\":\"resp")
out.flush()
time.sleep(1000)
"#;

fn fake(dir: &Path, template: &str, kind: &str, mode: &str) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let pids = dir.join(format!("{kind}-{mode}.pids"));
    let name = if kind == "gdb" {
        format!("fake-gdb-{mode}")
    } else {
        format!("lldb-dap-{mode}")
    };
    let exe = dir.join(name);
    let text = template
        .replace("@MODE@", mode)
        .replace("@PIDS@", &pids.display().to_string());
    std::fs::write(&exe, text).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    (exe, pids)
}

fn subject() -> Subject {
    Subject {
        name: "true".into(),
        language: Language::C,
        source: PathBuf::from("/nonexistent/prog.c"),
        source_name: "prog.c".into(),
        line_count: 10,
        binary: Some(PathBuf::from("/bin/true")),
        prelude: Vec::new(),
        epilogue: Vec::new(),
        hash: "fake".into(),
        build: "none".into(),
    }
}

fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    panics: usize,
    hangs: usize,
    processes_left: usize,
    messages_without_cause: usize,
    notes: Vec<String>,
}

/// Drives one fake through `load` and `start`; returns the outputs.
async fn drive(mut d: Box<dyn Debugger>) -> Vec<Output> {
    let s = subject();
    let mut outs = vec![d.load(&s).await];
    if !matches!(outs[0], Output::Failed { .. }) {
        outs.push(d.start().await);
    }
    let _ = d.take_transcript();
    d.shutdown().await;
    outs
}

#[tokio::test(flavor = "multi_thread")]
async fn fake_debuggers() {
    let dir = tempfile::tempdir().unwrap();
    let timeout = Duration::from_millis(1500);
    let mut t = Tally::default();
    let mut cases: Vec<(String, Box<dyn Debugger>, PathBuf)> = Vec::new();
    for mode in GDB_MODES {
        let (exe, pids) = fake(dir.path(), FAKE_GDB, "gdb", mode);
        let cfg = DebuggerConfig {
            action_timeout: timeout,
            executable: Some(exe.display().to_string()),
            ..Default::default()
        };
        cases.push((format!("gdb/{mode}"), Box::new(Gdb::new(&cfg).unwrap()), pids));
    }
    for mode in DAP_MODES {
        let (exe, pids) = fake(dir.path(), FAKE_DAP, "dap", mode);
        let cfg = DebuggerConfig {
            action_timeout: timeout,
            warm: false,
            executable: Some(exe.display().to_string()),
            ..Default::default()
        };
        cases.push((format!("lldb/{mode}"), Box::new(Lldb::new(&cfg).unwrap()), pids));
    }
    for (name, d, pids) in cases {
        t.cases += 1;
        let start = Instant::now();
        let run = tokio::spawn(drive(d));
        match tokio::time::timeout(timeout * 8 + Duration::from_secs(10), run).await {
            Err(_) => {
                t.hangs += 1;
                t.notes.push(format!("{name}: hangs"));
            }
            Ok(Err(e)) => {
                t.panics += usize::from(e.is_panic());
                t.notes.push(format!("{name}: {e}"));
            }
            Ok(Ok(outs)) => {
                let failed = outs.iter().find_map(|o| match o {
                    Output::Failed { detail, .. } => Some(detail.clone()),
                    _ => None,
                });
                match failed {
                    Some(d) if !d.trim().is_empty() => t.notes.push(format!(
                        "{name}: {:?}: {}",
                        start.elapsed(),
                        d.chars().take(160).collect::<String>()
                    )),
                    _ => {
                        t.messages_without_cause += 1;
                        t.notes.push(format!("{name}: no failure with a cause: {outs:?}"));
                    }
                }
            }
        }
        // The fake and its setsid grandchild are gone.
        tokio::time::sleep(Duration::from_millis(100)).await;
        for pid in std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
        {
            if running(pid) {
                t.processes_left += 1;
                t.notes.push(format!("{name}: process {pid} left running"));
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
        }
    }
    for n in &t.notes {
        println!("  {n}");
    }
    println!(
        "faults: group=fake_debuggers cases={} panics={} hangs={} runs_lost=0 runs_duplicated=0 processes_left={} messages_without_cause={}",
        t.cases, t.panics, t.hangs, t.processes_left, t.messages_without_cause
    );
    assert_eq!(
        t.panics + t.hangs + t.processes_left + t.messages_without_cause,
        0,
        "{t:#?}"
    );
}
