//! GDB over GDB/MI 3 (`gdb --interpreter=mi3 -nx -q`). GDB 13 has no DAP.
//!
//! One run maps to MI commands as follows:
//!
//! | doppel            | MI                                                         |
//! |-------------------|------------------------------------------------------------|
//! | `load`            | `-file-exec-and-symbols BIN`, `-break-delete`, `-exec-arguments < /dev/null > OUT 2>&1` |
//! | `set_breakpoint`  | `-break-insert -f FILE:LINE` → `bkpt.line` (or pending)   |
//! | `remove_breakpoint` | `-break-delete N`                                        |
//! | `start`           | `-exec-run`, then wait for `*stopped`                      |
//! | resume / step in / step over / step out | `-exec-continue` / `-exec-step` / `-exec-next` / `-exec-finish` |
//! | paused state      | `-stack-list-frames 0 63`, `-stack-list-variables --all-values` and `--simple-values` (types) |
//! | `reset`           | `kill` (the inferior), GDB stays warm                      |
//!
//! Warm reuse: one GDB process serves any number of runs; only the inferior
//! is killed between runs. The program's stdout and stderr go to a file
//! (GDB starts the inferior through a shell, so `-exec-arguments` can
//! redirect), never into the MI stream.
//!
//! Quirks handled here:
//! - `-exec-finish` in the outermost frame answers `^error` ("not meaningful
//!   in the outermost frame"); the program stays paused, so the output is the
//!   unchanged paused state (the error stays in the transcript).
//! - A breakpoint on a line without code slides forward: `bkpt.line` differs
//!   from `original-location`. On a line past the end, GDB makes it pending
//!   (`pending=...`, no `line`): reported as rejected with GDB's message.
//! - `exit-code` is octal (`"01"`).
//! - `debuginfod enabled` is `ask` by default; it is switched off so GDB never prompts.
//! - Call stacks are read to at most 64 frames (deep recursion would
//!   otherwise produce megabytes per pause); LLDB's backend uses the same bound.

use super::Fail;
use crate::protocol::gdbmi::{self, Line, Value as Mi};
use crate::protocol::{CUT_MARKER, MAX_MESSAGE_BYTES, Transcript, read_line_capped};
use crate::registry::BackendEntry;
use crate::{BackendError, Capabilities, Debugger, DebuggerConfig, Evaluation};
use async_trait::async_trait;
use doppel_core::process::{self, ProcessGuard};
use doppel_core::{
    ExecAction, FailureKind, Frame, Language, Location, Output, PauseReason, ProgramState, RawMessage, Subject,
    ToolInfo, Value, Variable, VariableKind,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Frames read per pause.
pub const MAX_FRAMES: usize = 64;

/// The registry entry.
pub fn entry() -> BackendEntry {
    BackendEntry {
        name: "gdb",
        languages: &[Language::C],
        probe,
        create: |cfg| Ok(Box::new(Gdb::new(cfg)?)),
    }
}

fn executable(cfg: &DebuggerConfig) -> Result<PathBuf, BackendError> {
    let exe = cfg.executable.clone().unwrap_or_else(|| "gdb".into());
    super::which(&exe).ok_or(BackendError::NotInstalled {
        name: "gdb".into(),
        hint: format!("'{exe}' not found; apt-get install gdb"),
    })
}

fn probe(cfg: &DebuggerConfig) -> Result<ToolInfo, BackendError> {
    let exe = executable(cfg)?;
    let version = super::version_line(&exe, &["--version"])?
        .ok_or_else(|| BackendError::Other(format!("{} could not be started for --version", exe.display())))?;
    Ok(ToolInfo {
        name: "gdb".into(),
        version,
        protocol: "GDB/MI 3".into(),
        executable: exe.display().to_string(),
    })
}

struct Session {
    guard: ProcessGuard,
    stdin: ChildStdin,
    /// gdb's output lines; `Err` holds a line that was not UTF-8 (lossily).
    lines: mpsc::Receiver<Result<String, String>>,
    stderr: super::StderrTail,
    next_token: u64,
}

/// The GDB backend. See the module documentation.
pub struct Gdb {
    info: ToolInfo,
    cfg: DebuggerConfig,
    exe: PathBuf,
    session: Option<Session>,
    transcript: Transcript,
    subject: Option<Subject>,
    /// Requested line → GDB breakpoint number.
    breakpoints: HashMap<u32, String>,
    tmp: tempfile::TempDir,
    pending_stop: Option<Mi>,
    inferior_pid: Option<u32>,
}

impl Gdb {
    /// Creates the backend; GDB starts on the first `load`.
    ///
    /// Errors: [`BackendError::NotInstalled`] when the executable is missing.
    pub fn new(cfg: &DebuggerConfig) -> Result<Self, BackendError> {
        let info = probe(cfg)?;
        let exe = executable(cfg)?;
        let tmp = tempfile::Builder::new()
            .prefix("doppel-gdb-")
            .tempdir()
            .map_err(|e| BackendError::Other(e.to_string()))?;
        Ok(Self {
            info,
            cfg: cfg.clone(),
            exe,
            session: None,
            transcript: Transcript::default(),
            subject: None,
            breakpoints: HashMap::new(),
            tmp,
            pending_stop: None,
            inferior_pid: None,
        })
    }

    /// The pid of the running GDB process, if any (for tests).
    pub fn debugger_pid(&self) -> Option<u32> {
        self.session.as_ref().map(|s| s.guard.pid())
    }

    fn output_file(&self) -> PathBuf {
        self.tmp.path().join("program-output.txt")
    }

    async fn spawn(&mut self) -> Result<(), Fail> {
        let mut cmd = process::piped(&self.exe.to_string_lossy());
        cmd.args(["--interpreter=mi3", "-nx", "-q"]);
        super::fixed_environment(&mut cmd);
        let mut guard = process::spawn(cmd, self.cfg.sandbox)
            .map_err(|e| Fail::Crash(format!("cannot start {}: {e}", self.exe.display())))?;
        let child = guard.child_mut();
        let stdin = child.stdin.take().ok_or_else(|| Fail::Crash("no stdin".into()))?;
        let stdout = child.stdout.take().ok_or_else(|| Fail::Crash("no stdout".into()))?;
        let stderr = child.stderr.take();
        // Bounded: a flooding gdb blocks on its pipe instead of filling
        // doppel's memory; each line is cut at MAX_MESSAGE_BYTES.
        let (tx, rx) = mpsc::channel(1024);
        tokio::spawn(async move {
            let mut r = BufReader::new(stdout);
            while let Ok(Some((bytes, cut))) = read_line_capped(&mut r, MAX_MESSAGE_BYTES).await {
                let line = match String::from_utf8(bytes) {
                    Ok(mut l) => {
                        if cut {
                            l.push_str(&format!(" {CUT_MARKER}"));
                        }
                        Ok(l)
                    }
                    Err(e) => Err(String::from_utf8_lossy(e.as_bytes()).into_owned()),
                };
                if tx.send(line).await.is_err() {
                    break;
                }
            }
        });
        let tail = super::StderrTail::collect(stderr);
        self.session = Some(Session {
            guard,
            stdin,
            lines: rx,
            stderr: tail,
            next_token: 1,
        });
        for c in [
            "-gdb-set debuginfod enabled off",
            "-gdb-set confirm off",
            "-gdb-set pagination off",
            "-gdb-set width 0",
            "-gdb-set height 0",
            "-gdb-set print pretty off",
            "-gdb-set print elements 200",
            "-gdb-set startup-with-shell on",
            // Caches the DWARF index of libc's separate debug info across runs
            // and processes: run-to-breakpoint drops from ~370 to ~170 ms.
            "-gdb-set index-cache enabled on",
            // GDB adds LINES and COLUMNS to the inferior's environment; LLDB does not.
            "-interpreter-exec console \"unset environment LINES\"",
            "-interpreter-exec console \"unset environment COLUMNS\"",
        ] {
            self.command(c).await?;
        }
        if !self.cfg.system_debug_info {
            // No separate debug files (libc6-dbg): GDB would re-read them on
            // every run. The binary's own DWARF is in the binary.
            let dir = self.tmp.path().join("no-debug-files");
            let _ = std::fs::create_dir_all(&dir);
            self.command(&format!(
                "-gdb-set debug-file-directory {}",
                mi_quote(&dir.to_string_lossy())
            ))
            .await?;
        }
        Ok(())
    }

    fn kill(&mut self) {
        if let Some(mut s) = self.session.take() {
            s.guard.kill_tree();
        }
        self.inferior_pid = None;
        self.pending_stop = None;
    }

    fn crash_detail(&mut self, what: &str) -> String {
        let tail = self
            .session
            .as_ref()
            .map(|s| s.stderr.last_lines(5))
            .unwrap_or_default();
        format!(
            "gdb exited {what}{}",
            if tail.is_empty() {
                String::new()
            } else {
                format!("; stderr: {tail}")
            }
        )
    }

    /// Reads one line before `deadline`, handling out-of-band records.
    async fn next_line(&mut self, deadline: Instant, waiting_for: &str) -> Result<Line, Fail> {
        let timeout = self.cfg.action_timeout;
        let Some(s) = self.session.as_mut() else {
            return Err(Fail::Crash("gdb is not running".into()));
        };
        // The deadline is checked before every read: a gdb that floods
        // output always has a line ready, and `timeout_at` looks at its
        // deadline only when the read is not ready.
        let read = if Instant::now() >= deadline {
            Err(())
        } else {
            tokio::time::timeout_at(deadline, s.lines.recv()).await.map_err(|_| ())
        };
        match read {
            Err(()) => {
                let msg = format!("gdb did not answer {waiting_for} within {timeout:?}");
                self.kill();
                Err(Fail::Timeout(msg))
            }
            Ok(None) => {
                // Give the stderr reader a moment to collect GDB's last words.
                tokio::time::sleep(Duration::from_millis(20)).await;
                let d = self.crash_detail(&format!("while {waiting_for}"));
                self.kill();
                Err(Fail::Crash(d))
            }
            Ok(Some(Err(lossy))) => {
                self.transcript.push(RawMessage::received(lossy.clone()));
                Err(Fail::Protocol(format!(
                    "gdb sent a line that is not UTF-8 while {waiting_for}: {}",
                    lossy.chars().take(200).collect::<String>()
                )))
            }
            Ok(Some(Ok(text))) => {
                self.transcript.push(RawMessage::received(text.clone()));
                let line = gdbmi::parse_line(&text).map_err(|e| Fail::Protocol(format!("{e}: {text}")))?;
                if let Line::Async { class, results, .. } = &line
                    && class == "thread-group-started"
                    && let Some(pid) = results.str("pid").and_then(|p| p.parse::<u32>().ok())
                {
                    self.inferior_pid = Some(pid);
                    if let Err(e) = self.cfg.limits.apply_to(pid) {
                        self.transcript.push(RawMessage::received(format!(
                            "[doppel] resource limits not applied to {pid}: {e}"
                        )));
                    }
                }
                Ok(line)
            }
        }
    }

    /// Sends an MI command and waits for its result record. `^error` is
    /// returned as `Err(Fail::Protocol(msg))`.
    async fn command(&mut self, cmd: &str) -> Result<Mi, Fail> {
        let Some(s) = self.session.as_mut() else {
            return Err(Fail::Crash("gdb is not running".into()));
        };
        let token = s.next_token;
        s.next_token += 1;
        let text = format!("{token}{cmd}");
        self.transcript.push(RawMessage::sent(text.clone()));
        let write = async {
            s.stdin.write_all(text.as_bytes()).await?;
            s.stdin.write_all(b"\n").await?;
            s.stdin.flush().await
        };
        if let Err(e) = write.await {
            let d = self.crash_detail(&format!("before '{cmd}' ({e})"));
            self.kill();
            return Err(Fail::Crash(d));
        }
        let deadline = Instant::now() + self.cfg.action_timeout;
        loop {
            match self.next_line(deadline, &format!("'{cmd}'")).await? {
                Line::Result {
                    token: Some(t),
                    class,
                    results,
                } if t == token => {
                    return match class.as_str() {
                        "error" => Err(Fail::Protocol(results.str("msg").unwrap_or("error").to_string())),
                        _ => Ok(results),
                    };
                }
                Line::Async { class, results, .. } if class == "stopped" => self.pending_stop = Some(results),
                _ => {}
            }
        }
    }

    /// Waits for the next `*stopped` record.
    async fn wait_stopped(&mut self, what: &str) -> Result<Mi, Fail> {
        if let Some(s) = self.pending_stop.take() {
            return Ok(s);
        }
        let deadline = Instant::now() + self.cfg.action_timeout;
        loop {
            if let Line::Async { class, results, .. } =
                self.next_line(deadline, &format!("'{what}' with a stop")).await?
                && class == "stopped"
            {
                return Ok(results);
            }
        }
    }

    async fn run_and_wait(&mut self, cmd: &str) -> Output {
        self.pending_stop = None;
        match self.command(cmd).await {
            Ok(_) => {}
            Err(Fail::Protocol(msg)) if cmd == "-exec-finish" && msg.contains("outermost frame") => {
                return match self.state(PauseReason::Step, None).await {
                    Ok(s) => Output::Paused(s),
                    Err(f) => f.output(),
                };
            }
            Err(f) => return f.output(),
        }
        let stop = match self.wait_stopped(cmd).await {
            Ok(s) => s,
            Err(f) => return f.output(),
        };
        self.stop_output(&stop).await
    }

    async fn stop_output(&mut self, stop: &Mi) -> Output {
        let reason = stop.str("reason").unwrap_or("");
        match reason {
            "exited-normally" => Output::Finished {
                exit_code: Some(0),
                signal: None,
            },
            "exited" => Output::Finished {
                exit_code: stop.str("exit-code").and_then(|c| i32::from_str_radix(c, 8).ok()),
                signal: None,
            },
            "exited-signalled" => Output::Finished {
                exit_code: None,
                signal: stop.str("signal-name").map(str::to_string),
            },
            _ => {
                let (why, signal) = match reason {
                    "breakpoint-hit" => (PauseReason::Breakpoint, None),
                    "end-stepping-range" | "function-finished" => (PauseReason::Step, None),
                    "signal-received" => (PauseReason::Signal, stop.str("signal-name").map(str::to_string)),
                    _ => (PauseReason::Other, None),
                };
                match self.state(why, signal).await {
                    Ok(mut s) => {
                        s.return_value = stop.str("return-value").map(|text| Variable {
                            name: "(return)".into(),
                            type_name: None,
                            value: Value {
                                text: text.to_string(),
                                children: Vec::new(),
                            },
                            kind: VariableKind::Unknown,
                        });
                        Output::Paused(s)
                    }
                    Err(f) => f.output(),
                }
            }
        }
    }

    fn location_of(&self, frame: &Mi) -> Option<Location> {
        let line = frame.str("line")?.parse().ok()?;
        let file = match (frame.str("fullname"), &self.subject) {
            (Some(full), Some(s)) if same_file(Path::new(full), &s.source) => s.source_name.clone(),
            _ => frame.str("file").map(|f| {
                Path::new(f)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| f.to_string())
            })?,
        };
        Some(Location {
            file,
            line,
            column: None,
        })
    }

    async fn state(&mut self, reason: PauseReason, signal: Option<String>) -> Result<ProgramState, Fail> {
        let frames = self
            .command(&format!("-stack-list-frames 0 {}", MAX_FRAMES - 1))
            .await?;
        let call_stack: Vec<Frame> = frames
            .get("stack")
            .map(|s| s.items())
            .unwrap_or_default()
            .into_iter()
            .map(|f| Frame {
                function: f.str("func").unwrap_or("??").to_string(),
                location: self.location_of(f),
            })
            .collect();
        let top = call_stack.first();
        let location = top.and_then(|f| f.location.clone()).unwrap_or_else(|| {
            Location::line(
                frames
                    .get("stack")
                    .and_then(|s| s.items().first().and_then(|f| f.str("from").map(str::to_string)))
                    .unwrap_or_else(|| "??".into()),
                0,
            )
        });
        let values = self.command("-stack-list-variables --all-values").await?;
        let types = self.command("-stack-list-variables --simple-values").await?;
        let type_list = types.get("variables").map(|v| v.items()).unwrap_or_default();
        let variables = values
            .get("variables")
            .map(|v| v.items())
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let text = v.str("value").unwrap_or("").to_string();
                let type_name = type_list.get(i).and_then(|t| t.str("type")).map(str::to_string);
                Variable {
                    name: v.str("name").unwrap_or("?").to_string(),
                    type_name,
                    value: Value {
                        children: gdb_value_children(&text, self.cfg.value_depth),
                        text,
                    },
                    kind: if v.str("arg") == Some("1") {
                        VariableKind::Argument
                    } else {
                        VariableKind::Local
                    },
                }
            })
            .collect();
        Ok(ProgramState {
            location,
            reason,
            call_stack,
            variables,
            signal,
            return_value: None,
        })
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || std::fs::canonicalize(a)
            .ok()
            .zip(std::fs::canonicalize(b).ok())
            .is_some_and(|(x, y)| x == y)
}

/// Members of an aggregate as GDB prints it (`{x = 1, y = {a = 2}}`, `{1, 2, 3}`),
/// to `depth` levels. Empty for scalars, strings, `<repeats ...>` and anything
/// it does not understand.
pub fn gdb_value_children(text: &str, depth: u32) -> Vec<Variable> {
    if depth == 0 || !(text.starts_with('{') && text.ends_with('}')) {
        return Vec::new();
    }
    let inner = &text[1..text.len() - 1];
    let Some(parts) = split_top_level(inner) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in &parts {
        if let Some(k) = top_level_assign(p) {
            out.push(member(p[..k].trim().to_string(), p[k + 3..].trim(), depth));
            continue;
        }
        // Array elements; `0 <repeats 16 times>` stands for 16 elements.
        let (value, times) = match p
            .trim()
            .strip_suffix(" times>")
            .and_then(|r| r.rsplit_once(" <repeats "))
        {
            Some((v, n)) => match n.parse::<usize>() {
                Ok(n) => (v.trim(), n),
                Err(_) => return Vec::new(),
            },
            None => (p.trim(), 1),
        };
        for _ in 0..times.min(MAX_ELEMENTS) {
            out.push(member(format!("[{}]", out.len()), value, depth));
        }
        if out.len() >= MAX_ELEMENTS {
            break;
        }
    }
    out
}

/// Elements of an array read per level (LLDB's backend reads as many).
const MAX_ELEMENTS: usize = 64;

fn member(name: String, value: &str, depth: u32) -> Variable {
    Variable {
        name,
        type_name: None,
        value: Value {
            children: gdb_value_children(value, depth - 1),
            text: value.to_string(),
        },
        kind: VariableKind::Local,
    }
}

/// Splits on `, ` outside braces, brackets, parentheses and quotes.
fn split_top_level(s: &str) -> Option<Vec<String>> {
    let (mut depth, mut quote, mut esc) = (0i32, None::<char>, false);
    let (mut parts, mut cur) = (Vec::new(), String::new());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            cur.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' | '[' | '(' | '<' => depth += 1,
            '}' | ']' | ')' | '>' => depth -= 1,
            ',' if depth == 0 && chars.peek() == Some(&' ') => {
                chars.next();
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if depth != 0 || quote.is_some() {
        return None;
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    Some(parts)
}

/// Position of a top-level ` = ` (a named member), if any.
fn top_level_assign(s: &str) -> Option<usize> {
    let i = s.find(" = ")?;
    let head = &s[..i];
    head.chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '[' || c == ']' || c == '.')
        .then_some(i)
}

#[async_trait]
impl Debugger for Gdb {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            columns: false,
            warm_reuse: true,
            argument_flags: true,
            notes: vec![
                "GDB/MI reports no columns".into(),
                format!("call stacks read to {MAX_FRAMES} frames"),
            ],
        }
    }

    async fn load(&mut self, subject: &Subject) -> Output {
        if !self.cfg.warm || self.session.as_ref().is_none_or(|s| s.lines.is_closed()) {
            self.kill();
        }
        if self.session.is_none()
            && let Err(f) = self.spawn().await
        {
            self.kill();
            return f.launch();
        }
        self.subject = Some(subject.clone());
        self.breakpoints.clear();
        self.inferior_pid = None;
        let Some(bin) = &subject.binary else {
            return Output::failed(FailureKind::Launch, format!("{} has no binary", subject.name));
        };
        let dir = bin.parent().unwrap_or(Path::new("/")).to_path_buf();
        let out = self.output_file();
        let _ = std::fs::remove_file(&out);
        let cmds = [
            format!("-file-exec-and-symbols {}", mi_quote(&bin.to_string_lossy())),
            "-break-delete".to_string(),
            // The program runs in its binary's directory with PWD set to it,
            // as under LLDB (the shell would otherwise add its own PWD).
            format!(
                "-interpreter-exec console {}",
                mi_quote(&format!("set cwd {}", dir.display()))
            ),
            format!(
                "-interpreter-exec console {}",
                mi_quote(&format!("set environment PWD={}", dir.display()))
            ),
            format!(
                "-exec-arguments < /dev/null > {} 2>&1",
                shell_quote(&out.to_string_lossy())
            ),
        ];
        for c in cmds {
            if let Err(f) = self.command(&c).await {
                return f.launch();
            }
        }
        Output::Finished {
            exit_code: None,
            signal: None,
        }
    }

    async fn set_breakpoint(&mut self, at: &Location) -> Output {
        let file = self
            .subject
            .as_ref()
            .map(|s| s.source.to_string_lossy().into_owned())
            .unwrap_or_else(|| at.file.clone());
        match self
            .command(&format!(
                "-break-insert -f {}",
                mi_quote(&format!("{file}:{}", at.line))
            ))
            .await
        {
            Ok(r) => {
                let Some(bkpt) = r.get("bkpt") else {
                    return Output::failed(FailureKind::Protocol, "-break-insert answered without bkpt");
                };
                if let Some(n) = bkpt.str("number") {
                    self.breakpoints.insert(at.line, n.to_string());
                }
                // Several locations (inlined code): the first one with a line.
                let first = bkpt
                    .get("locations")
                    .and_then(|l| l.items().into_iter().find(|x| x.get("line").is_some()).cloned());
                let resolved = self
                    .location_of(bkpt)
                    .or_else(|| first.as_ref().and_then(|f| self.location_of(f)));
                let message = match (&resolved, bkpt.str("pending")) {
                    (None, Some(p)) => Some(format!("pending breakpoint {p}")),
                    _ => bkpt.get("locations").map(|l| format!("{} locations", l.items().len())),
                };
                Output::BreakpointSet {
                    requested: at.clone(),
                    resolved,
                    message,
                }
            }
            Err(Fail::Protocol(msg)) => Output::BreakpointSet {
                requested: at.clone(),
                resolved: None,
                message: Some(msg),
            },
            Err(f) => f.output(),
        }
    }

    async fn remove_breakpoint(&mut self, at: &Location) -> Output {
        let Some(n) = self.breakpoints.remove(&at.line) else {
            return Output::BreakpointRemoved {
                ok: false,
                message: Some(format!("no breakpoint was set at line {}", at.line)),
            };
        };
        match self.command(&format!("-break-delete {n}")).await {
            Ok(_) => Output::BreakpointRemoved {
                ok: true,
                message: None,
            },
            Err(Fail::Protocol(msg)) => Output::BreakpointRemoved {
                ok: false,
                message: Some(msg),
            },
            Err(f) => f.output(),
        }
    }

    async fn start(&mut self) -> Output {
        self.run_and_wait("-exec-run").await
    }

    async fn exec(&mut self, action: ExecAction) -> Output {
        let cmd = match action {
            ExecAction::Resume => "-exec-continue",
            ExecAction::StepIn => "-exec-step",
            ExecAction::StepOver => "-exec-next",
            ExecAction::StepOut => "-exec-finish",
        };
        self.run_and_wait(cmd).await
    }

    async fn reset(&mut self) {
        if !self.cfg.warm {
            self.shutdown().await;
            return;
        }
        if self.session.is_some() {
            // Kill the inferior if it is alive; GDB answers ^error when there is none.
            if self.inferior_pid.is_some() {
                let _ = self.command("-interpreter-exec console kill").await;
            }
            if let Some(pid) = self.inferior_pid.take() {
                process::kill_tree(pid);
            }
        }
        self.pending_stop = None;
    }

    async fn shutdown(&mut self) {
        if self.session.is_some() {
            let _ = tokio::time::timeout(Duration::from_millis(200), self.command("-gdb-exit")).await;
        }
        if let Some(pid) = self.inferior_pid.take() {
            process::kill_tree(pid);
        }
        self.kill();
    }

    fn take_transcript(&mut self) -> Vec<RawMessage> {
        self.transcript.take()
    }

    fn program_output(&self) -> String {
        // The inferior's file-size limit bounds the file; the text is capped
        // further and read lossily (a program may write any bytes).
        use std::io::Read;
        let mut bytes = Vec::new();
        if let Ok(f) = std::fs::File::open(self.output_file()) {
            let _ = f
                .take(crate::protocol::dap::MAX_PROGRAM_OUTPUT_BYTES as u64 + 1)
                .read_to_end(&mut bytes);
        }
        let mut out = String::new();
        super::push_output(&mut out, &String::from_utf8_lossy(&bytes));
        out
    }

    /// `-data-evaluate-expression`: what the CLI's `print` shows.
    async fn evaluate(&mut self, expression: &str) -> Evaluation {
        match self
            .command(&format!("-data-evaluate-expression {}", mi_quote(expression)))
            .await
        {
            Ok(r) => {
                let text = r.str("value").unwrap_or("").to_string();
                Evaluation::Value(Value {
                    children: gdb_value_children(&text, self.cfg.value_depth),
                    text,
                })
            }
            Err(Fail::Protocol(msg)) => Evaluation::Refused(msg),
            Err(f) => Evaluation::Failed(f.output()),
        }
    }
}

/// Quotes an MI command argument (C-string syntax).
fn mi_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Quotes a path for the shell that starts the inferior.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_values_split_into_members() {
        let c = gdb_value_children("{x = 1, y = {a = 2, b = \"x, y\"}}", 2);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].name, "y");
        assert_eq!(c[1].value.children[1].value.text, "\"x, y\"");
        let arr = gdb_value_children("{1, 2, 3}", 1);
        assert_eq!(
            arr.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            ["[0]", "[1]", "[2]"]
        );
        let zeros = gdb_value_children("{0 <repeats 16 times>}", 2);
        assert_eq!(zeros.len(), 16);
        assert_eq!((zeros[15].name.as_str(), zeros[15].value.text.as_str()), ("[15]", "0"));
        let mixed = gdb_value_children("{1, 0 <repeats 3 times>, 5}", 1);
        assert_eq!(
            mixed.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            ["[0]", "[1]", "[2]", "[3]", "[4]"]
        );
        assert_eq!(mixed[4].value.text, "5");
        assert!(gdb_value_children("42", 2).is_empty());
        assert!(gdb_value_children("{x = 1", 2).is_empty());
        // Depth 1: members, but no grandchildren.
        assert!(gdb_value_children("{x = {a = 1}}", 1)[0].value.children.is_empty());
    }

    #[test]
    fn quoting() {
        assert_eq!(mi_quote("a \"b\"\\c"), "\"a \\\"b\\\"\\\\c\"");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
