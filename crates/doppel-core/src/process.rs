//! Child processes of tools under test: own process group, whole-tree kill on
//! timeout or drop, resource limits for untrusted programs, network isolation.
//!
//! Every tool doppel starts (a debugger, a compiler, an engine) is spawned
//! through [`spawn`], which
//! - puts the child in a new process group (`setpgid(0, 0)`), and
//! - optionally moves it into a fresh network namespace with only a loopback
//!   interface ([`Sandbox::isolate_network`]; needs root, otherwise the spawn
//!   records that isolation is unavailable and goes on without it).
//!
//! [`ProcessGuard`] kills the child's whole process tree when dropped: every
//! descendant found through `/proc` (a debugger puts its inferior in a group of
//! its own, so killing the group alone is not enough) and every process group
//! among them, with `SIGKILL`.
//!
//! Programs under test are limited by [`Limits::apply_to`], called by a backend
//! with the inferior's pid as soon as the debugger reports it: the limits bind
//! the inferior only, not the long-lived debugger that serves many runs. A
//! program run directly (a compiled test program, a sanitizer build) goes
//! through [`run_limited`], which sets the limits in the child before `exec`,
//! so no instruction of the program runs unlimited.

mod network;
mod probe;

pub use network::Sandbox;
use network::{can_isolate_network, loopback_up, shared_namespace};
pub use probe::{PROBE_OUTPUT_CAP, ProbeOutput, output_within};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// Resource limits for a program under test (`setrlimit` semantics, applied
/// with `prlimit(2)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// CPU time in seconds (`RLIMIT_CPU`); the program gets `SIGXCPU`, then `SIGKILL`.
    pub cpu_seconds: u64,
    /// Address space in bytes (`RLIMIT_AS`). [`UNLIMITED`] (`u64::MAX`)
    /// leaves the address space unlimited: needed for ASan, MSan and TSan
    /// builds, which reserve terabytes of virtual shadow memory at start-up
    /// and abort under any realistic `RLIMIT_AS`.
    pub memory_bytes: u64,
    /// Largest file the program may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            cpu_seconds: 10,
            memory_bytes: 1 << 30,
            file_size_bytes: 16 << 20,
        }
    }
}

/// The value of a [`Limits`] field that means "no limit" (only honoured for
/// [`Limits::memory_bytes`]; see there).
pub const UNLIMITED: u64 = u64::MAX;

impl Limits {
    /// These limits with an unlimited address space: for sanitizer builds
    /// (see [`Limits::memory_bytes`]).
    pub fn without_memory_limit(self) -> Self {
        Self {
            memory_bytes: UNLIMITED,
            ..self
        }
    }

    /// Applies the limits to a running process (the inferior). An
    /// [`UNLIMITED`] memory limit leaves `RLIMIT_AS` as it is. The process
    /// is also put into a program group of its own
    /// ([`crate::cgroup::ProgramGroup`]: at most
    /// [`crate::cgroup::PROGRAM_PIDS_MAX`] processes, `memory_bytes` for the
    /// whole group), killed with everything in it by [`kill_tree`] of `pid`
    /// or once `pid` is gone (at the next `apply_to`), so that a fork bomb
    /// or a daemon does not outlive its run. Where cgroups are unavailable,
    /// the rlimits are all there is (the reason is logged once, and given by
    /// [`crate::cgroup::program_groups_unavailable`]).
    ///
    /// Errors: the `prlimit(2)` error (for example `ESRCH` when the process is gone).
    pub fn apply_to(&self, pid: u32) -> io::Result<()> {
        self.set_rlimits(pid)?;
        confine(pid, self.memory_bytes);
        Ok(())
    }

    fn set_rlimits(&self, pid: u32) -> io::Result<()> {
        let set = |resource, value: u64| -> io::Result<()> {
            let lim = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            // SAFETY: plain syscall with a valid pointer to a local rlimit.
            let rc = unsafe { libc::prlimit(pid as libc::pid_t, resource, &lim, std::ptr::null_mut()) };
            if rc == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        };
        for (resource, value) in self.rlimits() {
            if let Some(value) = value {
                set(resource, value)?;
            }
        }
        Ok(())
    }

    /// The limits as `(resource, value)` pairs, `None` for a limit not set
    /// (`RLIMIT_AS` when the memory limit is [`UNLIMITED`]). An array, not a
    /// `Vec`: it is used between fork and exec, where nothing may allocate.
    fn rlimits(&self) -> [(libc::__rlimit_resource_t, Option<u64>); 3] {
        [
            (libc::RLIMIT_CPU, Some(self.cpu_seconds)),
            (
                libc::RLIMIT_AS,
                (self.memory_bytes != UNLIMITED).then_some(self.memory_bytes),
            ),
            (libc::RLIMIT_FSIZE, Some(self.file_size_bytes)),
        ]
    }

    /// Sets the limits on the calling process: for a `pre_exec` closure, so
    /// only async-signal-safe calls (`setrlimit`). Also disables core dumps
    /// (`RLIMIT_CORE` 0): a crashing test program must not fill the disk.
    fn apply_to_self(&self) -> io::Result<()> {
        let set = |resource, value: u64| -> io::Result<()> {
            let lim = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            // SAFETY: setrlimit with a valid pointer to a local rlimit.
            if unsafe { libc::setrlimit(resource, &lim) } == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        };
        for (resource, value) in self.rlimits() {
            if let Some(value) = value {
                set(resource, value)?;
            }
        }
        set(libc::RLIMIT_CORE, 0)?;
        Ok(())
    }
}

/// A spawned child that is killed, with its whole process tree, when dropped.
#[derive(Debug)]
pub struct ProcessGuard {
    child: Option<Child>,
    pid: u32,
    /// Whether the child runs in its own network namespace.
    pub network_isolated: bool,
    /// The child's own cgroup (`crate::cgroup::new_tool_group`), if any.
    group: Option<std::path::PathBuf>,
    /// Its v1 pids group (`crate::cgroup::new_tool_pids_group`), if any.
    limit: Option<std::path::PathBuf>,
    /// Whether [`ProcessGuard::kill_tree`] has run: the child is reaped and
    /// its tree gone, so a second call (the drop after an explicit kill)
    /// does not scan `/proc` again.
    killed: bool,
}

/// Spawns `cmd` in its own process group (and network namespace, if asked and
/// possible), with stdin, stdout and stderr piped unless the caller set them.
///
/// Errors: the spawn error (missing executable: `io::ErrorKind::NotFound`).
pub fn spawn(mut cmd: Command, sandbox: Sandbox) -> io::Result<ProcessGuard> {
    cmd.process_group(0);
    cmd.kill_on_drop(true);
    // The child dies with doppel, however doppel dies. The signal follows
    // the death of the spawning *thread*: spawns happen on the runtime's
    // worker threads, which live as long as doppel does. The check of the
    // parent closes the race with a parent that died before the prctl.
    // SAFETY: prctl and getppid are async-signal-safe.
    let parent = unsafe { libc::getpid() };
    // A cgroup of its own, entered before exec: killing the tool kills
    // everything it ever started, `setsid` orphans included.
    let group = crate::cgroup::new_tool_group();
    // And a process count limit for it and all it starts
    // (`crate::cgroup::TOOL_PIDS_MAX`): in the v2 group itself where that
    // has the pids controller, else in a v1 pids group entered the same way.
    let limit = crate::cgroup::new_tool_pids_group();
    let procs_file =
        |g: &std::path::Path| std::ffi::CString::new(g.join("cgroup.procs").into_os_string().into_encoded_bytes()).ok();
    let procs: Vec<std::ffi::CString> = group.iter().chain(limit.iter()).filter_map(|g| procs_file(g)).collect();
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            for p in &procs {
                // "0" moves the writing process (open/write/close are
                // async-signal-safe); a failure leaves the tool where it is.
                let fd = libc::open(p.as_ptr(), libc::O_WRONLY);
                if fd >= 0 {
                    libc::write(fd, b"0".as_ptr().cast(), 1);
                    libc::close(fd);
                }
            }
            Ok(())
        });
    }
    let shared = if sandbox.isolate_network && sandbox.shared_namespace {
        shared_namespace()
    } else {
        None
    };
    let isolate = sandbox.isolate_network && can_isolate_network();
    if let Some(ns) = shared {
        // SAFETY: setns on a descriptor kept open for doppel's life.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setns(ns, libc::CLONE_NEWNET) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else if isolate {
        // SAFETY: the closure only calls async-signal-safe syscalls.
        unsafe {
            cmd.pre_exec(|| {
                if libc::unshare(libc::CLONE_NEWNET) != 0 {
                    return Err(io::Error::last_os_error());
                }
                loopback_up();
                Ok(())
            });
        }
    }
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            if let Some(g) = &group {
                crate::cgroup::kill_group(g);
            }
            if let Some(l) = &limit {
                crate::cgroup::remove_tool_pids_group(l);
            }
            return Err(e);
        }
    };
    let pid = child.id().unwrap_or(0);
    if let Ok(mut live) = LIVE.lock() {
        live.insert(pid, group.clone());
    }
    Ok(ProcessGuard {
        child: Some(child),
        pid,
        network_isolated: isolate,
        group,
        limit,
        killed: false,
    })
}

impl ProcessGuard {
    /// Opens a TCP connection to `127.0.0.1:port` *as seen by the child*:
    /// inside its network namespace when it is isolated (the connecting
    /// thread enters the namespace with `setns`, which needs the same
    /// privilege that created it), else on the host's loopback. For tools
    /// that serve clients over TCP from inside the sandbox (an LLDB adapter
    /// in server mode).
    ///
    /// Errors: the namespace cannot be entered, or the connection fails
    /// within `timeout`.
    pub fn connect_loopback(&self, port: u16, timeout: std::time::Duration) -> io::Result<std::net::TcpStream> {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        if !self.network_isolated {
            return std::net::TcpStream::connect_timeout(&addr, timeout);
        }
        let ns = std::fs::File::open(format!("/proc/{}/ns/net", self.pid))?;
        // A thread of its own: the namespace switch applies to the calling
        // thread only, and that thread ends right after connecting.
        std::thread::spawn(move || {
            use std::os::fd::AsRawFd;
            // SAFETY: setns on a namespace file descriptor we hold open.
            if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                return Err(io::Error::last_os_error());
            }
            std::net::TcpStream::connect_timeout(&addr, timeout)
        })
        .join()
        .map_err(|_| io::Error::other("the connecting thread panicked"))?
    }
}

/// The program groups of the programs under test, by the program's pid.
static PROGRAMS: std::sync::Mutex<BTreeMap<u32, crate::cgroup::ProgramGroup>> = std::sync::Mutex::new(BTreeMap::new());

/// Puts `pid` into a program group (best effort), after killing the groups
/// of programs that are gone (what is left in them escaped its run: a
/// daemon, a fork bomb's survivors).
fn confine(pid: u32, memory_bytes: u64) {
    static REASON_LOGGED: std::sync::Once = std::sync::Once::new();
    let ended: Vec<crate::cgroup::ProgramGroup> = match PROGRAMS.lock() {
        Ok(mut p) => {
            let gone: Vec<u32> = p.keys().copied().filter(|&k| !alive(k)).collect();
            gone.iter().filter_map(|k| p.remove(k)).collect()
        }
        Err(_) => Vec::new(),
    };
    drop(ended);
    match crate::cgroup::ProgramGroup::confine(pid, memory_bytes) {
        Ok(g) => {
            if let Ok(mut p) = PROGRAMS.lock() {
                p.insert(pid, g);
            }
        }
        // The program ended (or is a zombie) before it could be moved: there
        // is nothing left to confine, and cgroups still work. Warning here
        // said "programs run without a cgroup" for a whole campaign after
        // one short program (seen on Csmith programs with LLDB).
        Err(e) if !alive(pid) => {
            tracing::debug!("program {pid} ended before it was put into its cgroup: {e}");
        }
        Err(e) => REASON_LOGGED.call_once(|| {
            tracing::warn!("programs under test run without a cgroup (rlimits only): {e}");
        }),
    }
}

/// Kills every program group still registered and removes its directories:
/// at the end of a campaign (the last program of each job is still
/// registered; [`kill_all_spawned`] calls it too).
pub fn kill_all_programs() {
    let all = PROGRAMS.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default();
    drop(all);
}

/// [`kill_all_programs`] for an `atexit` handler: skipped when another
/// thread holds the registry (exit must not block).
pub(crate) fn kill_all_programs_at_exit() {
    if let Ok(mut p) = PROGRAMS.try_lock() {
        let all = std::mem::take(&mut *p);
        drop(p);
        drop(all);
    }
}

/// Kills the program group of `pid`, if it has one.
fn kill_program_group(pid: u32) {
    let group = PROGRAMS.lock().ok().and_then(|mut p| p.remove(&pid));
    drop(group);
}

/// Roots of the process trees spawned through [`spawn`] and not yet killed.
/// With each root, its cgroup if it has one.
static LIVE: std::sync::Mutex<BTreeMap<u32, Option<std::path::PathBuf>>> = std::sync::Mutex::new(BTreeMap::new());

/// Kills every process tree spawned through [`spawn`] that is still alive.
/// For a process that is about to exit on a signal (Ctrl-C, `SIGTERM`):
/// guards are not dropped then, and every tool runs in a process group of
/// its own, so nothing else would stop them.
pub fn kill_all_spawned() {
    let roots: Vec<(u32, Option<std::path::PathBuf>)> = LIVE
        .lock()
        .map(|mut l| std::mem::take(&mut *l).into_iter().collect())
        .unwrap_or_default();
    for (root, group) in roots {
        kill_tree(root);
        if let Some(g) = group {
            crate::cgroup::kill_group(&g);
        }
    }
    kill_all_programs();
}

/// A command with all three standard streams piped.
pub fn piped(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

impl ProcessGuard {
    /// The child's pid (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The child, for its pipes and exit status.
    pub fn child_mut(&mut self) -> &mut Child {
        self.child.as_mut().expect("child present until drop")
    }

    /// Whether the child has exited (without waiting).
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(Some(_))))
    }

    /// Waits for the child to exit, at most `timeout`. `None` on timeout.
    pub async fn wait_timeout(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let child = self.child.as_mut()?;
        tokio::time::timeout(timeout, child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// Kills the child and every descendant with `SIGKILL`, and reaps the
    /// child. Blocks (a `/proc` scan, waits of a few milliseconds for killed
    /// processes to finish exiting): async callers with other work on their
    /// task run it in `tokio::task::spawn_blocking`. A second call does nothing.
    pub fn kill_tree(&mut self) {
        if std::mem::replace(&mut self.killed, true) {
            return;
        }
        if self.has_exited() {
            // Exited and reaped: its descendants were reparented when it
            // exited, so a `/proc` scan by parent finds none of them (and its
            // pid may be reused). What is left of its tree is in its process
            // group (its pid: `process_group(0)`) and in its cgroup, killed
            // below. This is the common end of a tool that ran to completion,
            // and the scan was most of doppel's own CPU time on a panel of
            // process-per-script engines (`doppel bench conform`).
            kill_program_group(self.pid);
            if self.pid > 1 {
                // SAFETY: kill(2) with a negative process group id.
                unsafe { libc::kill(-(self.pid as libc::pid_t), libc::SIGKILL) };
            }
        } else {
            kill_tree(self.pid);
        }
        if let Some(g) = self.group.take() {
            crate::cgroup::kill_group(&g);
        }
        if let Some(l) = self.limit.take() {
            crate::cgroup::remove_tool_pids_group(&l);
        }
        if let Ok(mut live) = LIVE.lock() {
            live.remove(&self.pid);
        }
        if let Some(child) = self.child.as_mut() {
            let _ = child.start_kill();
            let _ = child.try_wait();
        }
    }
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        self.kill_tree();
    }
}

/// How long [`kill_tree`] waits for killed processes to be gone. A process
/// killed with `SIGKILL` can take a while to finish exiting (tearing down a
/// large address space, or the last process of a mount namespace unmounting
/// it: tens of milliseconds on a busy machine).
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// Kills `root` and all its descendants (found through `/proc`), and the
/// process groups they lead, with `SIGKILL`. Repeats until no descendant is
/// left, so children forked during the kill are caught too, then waits (at
/// most [`EXIT_WAIT`]) until every killed process has finished exiting, so
/// that none outlives its caller.
pub fn kill_tree(root: u32) {
    if root == 0 {
        return;
    }
    kill_program_group(root);
    let mut killed: HashSet<u32> = HashSet::from([root]);
    for _ in 0..5 {
        let tree = descendants(root);
        killed.extend(tree.iter().copied());
        let mut groups = HashSet::new();
        for &pid in tree.iter().chain(std::iter::once(&root)) {
            if let Some(pgid) = proc_stat(pid).map(|s| s.pgid) {
                groups.insert(pgid);
            }
        }
        // SAFETY: kill(2) with a positive pid or a negative process group id.
        unsafe {
            for &pid in tree.iter().chain(std::iter::once(&root)) {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
            for g in groups {
                if g > 1 && g != own_pgid() {
                    libc::kill(-(g as libc::pid_t), libc::SIGKILL);
                }
            }
        }
        if tree.iter().all(|&p| !alive(p)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let start = std::time::Instant::now();
    while killed.iter().any(|&p| alive(p)) && start.elapsed() < EXIT_WAIT {
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn own_pgid() -> u32 {
    // SAFETY: getpgrp has no preconditions.
    unsafe { libc::getpgrp() as u32 }
}

fn alive(pid: u32) -> bool {
    // A zombie is dead for our purposes.
    proc_stat(pid).is_some_and(|s| s.state != 'Z')
}

struct ProcStat {
    ppid: u32,
    pgid: u32,
    state: char,
}

fn proc_stat(pid: u32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces.
    let rest = &text[text.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some(ProcStat { ppid, pgid, state })
}

/// All live descendants of `root` (children, grandchildren, ...), from `/proc`.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if let Some(st) = proc_stat(pid) {
                children.entry(st.ppid).or_default().push(pid);
            }
        }
    }
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        if let Some(kids) = children.get(&p) {
            for &k in kids {
                out.push(k);
                stack.push(k);
            }
        }
    }
    out
}

/// Resolves an executable name on `PATH`, or checks a given path (one with
/// a `/`). `None` when there is no such file.
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(program);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| std::path::Path::new(d).join(program))
        .find(|c| c.is_file())
}

/// What a finished command produced.
#[derive(Debug, Clone)]
pub struct Completed {
    /// Exit code, `None` if killed by a signal or timed out.
    pub code: Option<i32>,
    /// The signal that ended the process (`SIGXCPU`/`SIGKILL` past the CPU
    /// limit, `SIGXFSZ` past the file-size limit, `SIGSEGV`, ...); `None`
    /// when it exited or timed out.
    pub signal: Option<i32>,
    /// Standard output, decoded lossily as UTF-8 ([`run_limited`]: at most
    /// `limits.file_size_bytes` bytes of it).
    pub stdout: String,
    /// Standard error, decoded and truncated like `stdout`.
    pub stderr: String,
    /// Whether the wall-clock timeout ran out (the process tree was killed).
    pub timed_out: bool,
}

/// Runs `cmd` to completion with a timeout, killing its process tree on
/// timeout. Output is captured (lossily decoded as UTF-8).
///
/// Errors: only the spawn error; a timeout is `Completed { timed_out: true }`.
pub async fn run(cmd: Command, timeout: Duration, sandbox: Sandbox) -> io::Result<Completed> {
    run_inner(cmd, timeout, sandbox, usize::MAX).await
}

/// Like [`run`], for an untrusted program: the child gets `limits` (CPU
/// seconds, address space unless [`UNLIMITED`], file size, and no core
/// dumps) with `setrlimit` between `fork` and `exec`, so they bind from its
/// first instruction and are inherited by everything it starts.
///
/// - Past the CPU limit the child is killed (`SIGXCPU`, then `SIGKILL`):
///   `Completed { code: None, signal: Some(..) }`.
/// - Writing past the file-size limit raises `SIGXFSZ` (or fails with
///   `EFBIG` when the signal is ignored).
/// - Pipes are not subject to `RLIMIT_FSIZE`, so the captured stdout and
///   stderr are each truncated to `limits.file_size_bytes` bytes (the rest is
///   read and dropped, so the child never blocks on a full pipe).
/// - The wall-clock `timeout` still applies: a child that sleeps uses no CPU.
///
/// Pass `limits.memory_bytes = UNLIMITED` for ASan/MSan builds (see
/// [`Limits::memory_bytes`]).
///
/// Errors: the spawn error, including a failing `setrlimit` in the child
/// (reported by the spawn as the child's `errno`); a timeout is
/// `Completed { timed_out: true }`.
pub async fn run_limited(
    mut cmd: Command,
    timeout: Duration,
    sandbox: Sandbox,
    limits: Limits,
) -> io::Result<Completed> {
    // SAFETY: the closure only calls setrlimit, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || limits.apply_to_self());
    }
    let cap = usize::try_from(limits.file_size_bytes).unwrap_or(usize::MAX);
    run_inner(cmd, timeout, sandbox, cap).await
}

/// Reads `stream` to its end, keeping at most `cap` bytes.
async fn read_capped<R: tokio::io::AsyncRead + Unpin>(stream: Option<&mut R>, cap: usize) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut kept = Vec::new();
    let Some(s) = stream else { return kept };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    kept
}

async fn run_inner(mut cmd: Command, timeout: Duration, sandbox: Sandbox, cap: usize) -> io::Result<Completed> {
    use std::os::unix::process::ExitStatusExt;
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut guard = spawn(cmd, sandbox)?;
    let mut out = guard.child_mut().stdout.take();
    let mut err = guard.child_mut().stderr.take();
    let read_all = async { tokio::join!(read_capped(out.as_mut(), cap), read_capped(err.as_mut(), cap)) };
    match tokio::time::timeout(timeout, async {
        let (o, e) = read_all.await;
        let status = guard.child_mut().wait().await;
        (o, e, status)
    })
    .await
    {
        Ok((o, e, status)) => Ok(Completed {
            code: status.as_ref().ok().and_then(|s| s.code()),
            signal: status.as_ref().ok().and_then(|s| s.signal()),
            stdout: String::from_utf8_lossy(&o).into_owned(),
            stderr: String::from_utf8_lossy(&e).into_owned(),
            timed_out: false,
        }),
        Err(_) => {
            guard.kill_tree();
            Ok(Completed {
                code: None,
                signal: None,
                stdout: String::new(),
                stderr: String::new(),
                timed_out: true,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pids.current` of the group that limits the tool of `g`.
    fn tool_pids(g: &ProcessGuard) -> u64 {
        let dir = g.limit.as_ref().or(g.group.as_ref()).expect("a tool group");
        std::fs::read_to_string(dir.join("pids.current"))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .trim()
            .parse()
            .unwrap()
    }

    #[tokio::test]
    async fn what_a_tool_forks_stays_under_the_tool_pids_limit_and_dies_with_it() {
        // Test hosts run as root with a pids controller; a host without one
        // fails here with the reason. A tool's children forked before a
        // program group exists (a fork bomb's first generations under gdb)
        // are bounded by the tool's own group.
        assert_eq!(crate::cgroup::program_groups_unavailable(), None);
        let mut cmd = Command::new("perl");
        cmd.args([
            "-e",
            "while (1) { my $p = fork(); if (defined $p && $p == 0) { sleep 60; exit 0 } }",
        ]);
        let mut guard = spawn(cmd, Sandbox::NONE).unwrap();
        let limit = crate::cgroup::TOOL_PIDS_MAX;
        let start = std::time::Instant::now();
        let mut n = 0;
        while start.elapsed() < Duration::from_secs(20) {
            n = tool_pids(&guard);
            if n >= limit {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(n, limit, "the tool's group holds {n} tasks");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(tool_pids(&guard) <= limit);
        let tree = descendants(guard.pid());
        assert!(tree.len() as u64 >= limit / 2, "{} descendants", tree.len());
        let dirs: Vec<std::path::PathBuf> = guard.group.iter().chain(guard.limit.iter()).cloned().collect();
        guard.kill_tree();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let left: Vec<u32> = tree
            .into_iter()
            .filter(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| !s.contains(") Z ")))
            .collect();
        assert!(left.is_empty(), "{} of the tool's processes survived", left.len());
        let wait = std::time::Instant::now();
        while dirs.iter().any(|d| d.exists()) && wait.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        for d in dirs {
            assert!(!d.exists(), "{} left", d.display());
        }
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_tree_including_other_groups() {
        // The shell starts a background sleep in a process group of its own
        // (setsid), as a debugger does with its inferior.
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("setsid sleep 60 & sleep 60 & wait");
        let mut guard = spawn(cmd, Sandbox::NONE).unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let tree = descendants(guard.pid());
        assert!(tree.len() >= 2, "expected two sleeps, found {tree:?}");
        guard.kill_tree();
        drop(guard);
        tokio::time::sleep(Duration::from_millis(50)).await;
        for p in tree {
            assert!(!alive(p), "descendant {p} survived");
        }
    }

    #[tokio::test]
    async fn a_tool_that_exited_leaves_no_orphan() {
        // The shell exits at once, leaving a sleep in its process group and
        // one in a session of its own: reparented, so no scan by parent finds
        // them; the process group and the cgroup do.
        let mut cmd = piped("sh");
        cmd.arg("-c").arg("setsid sleep 60 & echo $!; sleep 60 & echo $!");
        let mut guard = spawn(cmd, Sandbox::NONE).unwrap();
        use tokio::io::AsyncBufReadExt;
        // Line by line: the sleeps hold the pipe open, so it has no end yet.
        let mut lines = tokio::io::BufReader::new(guard.child_mut().stdout.take().unwrap()).lines();
        let mut pids = Vec::new();
        while pids.len() < 2 {
            let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
                .await
                .expect("the shell's output within 10 s")
                .unwrap()
                .expect("two pids");
            pids.push(line.trim().parse::<u32>().unwrap());
        }
        assert!(guard.wait_timeout(Duration::from_secs(10)).await.is_some());
        assert!(
            pids.iter().all(|&p| alive(p)),
            "the sleeps outlive the shell until the kill"
        );
        let in_cgroup = guard.group.is_some();
        guard.kill_tree();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!alive(pids[1]), "the orphan in the tool's process group survived");
        if in_cgroup {
            assert!(
                !alive(pids[0]),
                "the orphan in its own session survived its tool's cgroup"
            );
        } else {
            // Without a cgroup of its own (not root): only rlimits and process groups.
            unsafe { libc::kill(pids[0] as libc::pid_t, libc::SIGKILL) };
        }
    }

    #[tokio::test]
    async fn run_reports_a_timeout_and_leaves_no_orphan() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("sleep 30 & echo started; wait");
        let done = run(cmd, Duration::from_millis(300), Sandbox::default()).await.unwrap();
        assert!(done.timed_out);
        assert_eq!(done.code, None);
    }

    #[tokio::test]
    async fn run_captures_output_and_exit_code() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("echo out; echo err >&2; exit 3");
        let done = run(cmd, Duration::from_secs(5), Sandbox::default()).await.unwrap();
        assert_eq!(done.code, Some(3));
        assert_eq!(done.stdout, "out\n");
        assert_eq!(done.stderr, "err\n");
    }

    #[test]
    fn limits_apply_to_a_live_process_and_fail_for_a_dead_one() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let lim = Limits {
            cpu_seconds: 3,
            memory_bytes: 1 << 28,
            file_size_bytes: 1 << 20,
        };
        lim.apply_to(child.id()).unwrap();
        let limits = std::fs::read_to_string(format!("/proc/{}/limits", child.id())).unwrap();
        assert!(
            limits
                .lines()
                .any(|l| l.starts_with("Max cpu time") && l.contains(" 3 ")),
            "{limits}"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(lim.apply_to(child.id()).is_err());
    }

    fn small_limits() -> Limits {
        Limits {
            cpu_seconds: 1,
            memory_bytes: 1 << 30,
            file_size_bytes: 4096,
        }
    }

    #[tokio::test]
    async fn run_limited_kills_a_program_past_its_cpu_limit() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("while :; do :; done");
        let start = std::time::Instant::now();
        let done = run_limited(cmd, Duration::from_secs(30), Sandbox::default(), small_limits())
            .await
            .unwrap();
        assert!(!done.timed_out, "the CPU limit, not the timeout, must end it");
        assert_eq!(done.code, None);
        let sig = done.signal.expect("killed by a signal");
        assert!(sig == libc::SIGXCPU || sig == libc::SIGKILL, "signal {sig}");
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    }

    #[tokio::test]
    async fn run_limited_enforces_the_file_size_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big");
        let mut cmd = Command::new("sh");
        // dd writes 64 KiB to a file while the limit is 4 KiB: SIGXFSZ.
        cmd.arg("-c").arg(format!(
            "dd if=/dev/zero of={} bs=1024 count=64 2>/dev/null; echo after",
            file.display()
        ));
        let done = run_limited(cmd, Duration::from_secs(20), Sandbox::default(), small_limits())
            .await
            .unwrap();
        assert!(!done.timed_out);
        let len = std::fs::metadata(&file).unwrap().len();
        assert!(len <= 4096, "file grew to {len} bytes");
        assert_eq!(done.code, Some(0), "the shell goes on after dd dies: {done:?}");
        assert!(done.stdout.contains("after"));
    }

    #[tokio::test]
    async fn run_limited_truncates_captured_output_and_sets_the_limits() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("grep -E 'Max (cpu time|address space|core)' /proc/self/limits; head -c 100000 /dev/zero");
        let done = run_limited(cmd, Duration::from_secs(20), Sandbox::default(), small_limits())
            .await
            .unwrap();
        assert_eq!(done.code, Some(0));
        assert!(done.stdout.len() <= 4096, "{}", done.stdout.len());
        assert!(done.stdout.contains("Max cpu time"), "{}", done.stdout);
        let unlimited = small_limits().without_memory_limit();
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("grep 'Max address space' /proc/self/limits");
        let done = run_limited(cmd, Duration::from_secs(20), Sandbox::default(), unlimited)
            .await
            .unwrap();
        assert!(done.stdout.contains("unlimited"), "{}", done.stdout);
    }
}
