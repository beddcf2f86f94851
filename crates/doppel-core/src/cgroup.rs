//! Control groups: nothing doppel starts outlives it, and a program under
//! test cannot fork without bound.
//!
//! Two mechanisms, both optional (each reports why it is unavailable):
//!
//! - **The campaign group** ([`contain_self`]): at start, doppel creates a
//!   cgroup v2 group `doppel-<pid>` below its own (in the `cgroup2` mount:
//!   `/sys/fs/cgroup` or `/sys/fs/cgroup/unified` on hybrid hosts), forks a
//!   *keeper* process that stays outside it, and moves itself in. Everything
//!   doppel starts, at any depth and whatever `setsid` or double fork it
//!   does (debuggers, lldb-dap servers, Chromium's zygotes and crashpad
//!   handlers, programs under test and their daemons), is in the group. The
//!   keeper holds the read end of a pipe whose only write end is doppel's:
//!   when doppel exits, however it dies (`SIGKILL` included), the keeper
//!   reads end-of-file, writes `1` to the group's `cgroup.kill` (Linux 5.14)
//!   and removes the group with every group below it, and the v1 campaign
//!   directories (below).
//! - **Program groups** ([`ProgramGroup`]): each program under test is put,
//!   as soon as its pid is known, into a group of its own with a process
//!   count limit (`pids.max` = [`PROGRAM_PIDS_MAX`]) and, where the memory
//!   controller is available, a memory limit for the group as a whole; the
//!   group is killed at the end of the run. cgroup v2 controllers are used
//!   when the v2 hierarchy has them, else the v1 `pids` and `memory`
//!   hierarchies (hybrid hosts); in v1 each group is created in a
//!   directory `doppel-<pid>` below doppel's own group in that hierarchy
//!   (so any limit set above, a container's, still binds), which the keeper
//!   removes when doppel exits.
//!
//! Every directory doppel makes is removed when what it holds ends: a
//! program group when its run ends (or, for the last run of a job, when the
//! campaign ends), a tool group when the tool is killed, the campaign group
//! and the v1 directories by the keeper. Groups of doppel processes that
//! died without clean-up (a doppel started by a tool of another doppel has
//! its keeper killed with that tool) are swept, when empty, by the next
//! doppel that starts beside them. [`groups_left_by`] lists what a doppel
//! left. Without cgroups, the rlimits of [`crate::process::Limits`] are
//!   all there is (`RLIMIT_NPROC` does not bind root, so a fork bomb is then
//!   bounded only by the CPU limit and the run's timeout).

use std::io;
use std::path::{Path, PathBuf};

/// Most processes (and threads) a program under test may have at once.
pub const PROGRAM_PIDS_MAX: u64 = 64;

/// Most processes and threads a tool doppel starts (a debugger, a browser,
/// a compiler) may have at once, with everything it starts. A program under
/// test is moved into its own group ([`PROGRAM_PIDS_MAX`]) only once its
/// debugger has reported its pid: a fork bomb's children forked before that
/// stay in the tool's group, and without this limit they took every pid of
/// the machine (32,768) within seconds of the fault suite's `fork_bomb.c`
/// under gdb, killing every other process's forks. Browsers use a few
/// hundred threads (Firefox's content processes included).
pub const TOOL_PIDS_MAX: u64 = 2048;

/// The leaf of the campaign group that doppel itself is in.
const MAIN_LEAF: &str = "main";

/// The cgroup mount points of this process's mount namespace: the `cgroup2`
/// mount, and the v1 mount of each controller. From `/proc/self/mounts`.
struct Mounts {
    v2: Option<PathBuf>,
    v1: Vec<(PathBuf, Vec<String>)>,
}

fn mounts() -> Mounts {
    let text = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut m = Mounts {
        v2: None,
        v1: Vec::new(),
    };
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        match f[2] {
            "cgroup2" if m.v2.is_none() => m.v2 = Some(PathBuf::from(f[1])),
            "cgroup" => {
                m.v1.push((PathBuf::from(f[1]), f[3].split(',').map(str::to_string).collect()))
            }
            _ => {}
        }
    }
    m
}

/// This process's group in the hierarchy whose `/proc/self/cgroup` entry
/// matches `pick` (`""` for v2, a controller name for v1).
fn own_group(controller: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (id, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        let hit = if controller.is_empty() {
            id == "0" && ctrls.is_empty()
        } else {
            ctrls.split(',').any(|c| c == controller)
        };
        hit.then(|| path.trim_start_matches('/').to_string())
    })
}

/// The directory of this process's own group in the cgroup v2 hierarchy.
fn own_v2_dir() -> Result<PathBuf, String> {
    let root = mounts().v2.ok_or("no cgroup2 file system is mounted")?;
    let own = own_group("").ok_or("no cgroup v2 entry in /proc/self/cgroup")?;
    Ok(root.join(own))
}

/// What [`contain_self`] achieved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// doppel runs in this campaign group, watched by a keeper process.
    Group(PathBuf),
    /// Not contained: the reason (no cgroup v2, no permission, ...). Every
    /// direct child still gets `PR_SET_PDEATHSIG` ([`crate::process::spawn`]).
    Unavailable(String),
}

/// Puts this process into a fresh campaign group watched by a keeper (see
/// the module documentation). Call it first thing in `main`, while the
/// process has one thread (it forks).
pub fn contain_self() -> Containment {
    match try_contain_self() {
        Ok(dir) => Containment::Group(dir),
        Err(reason) => Containment::Unavailable(reason),
    }
}

fn try_contain_self() -> Result<PathBuf, String> {
    let own = own_v2_dir()?;
    // Groups of earlier doppel processes that died without their clean-up
    // (a nested doppel whose keeper was killed with its parent's group).
    sweep_stale(&own);
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let dir = own.join(format!("doppel-{pid}"));
    // The v1 campaign directories program groups will be made in (hybrid
    // hosts), known now so that the keeper removes them too.
    let v1_dirs: Vec<PathBuf> = v1_campaign_dirs(pid as u32);
    std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    if !dir.join("cgroup.kill").exists() {
        let _ = std::fs::remove_dir(&dir);
        return Err("the kernel has no cgroup.kill (Linux 5.14 or newer is needed)".into());
    }
    let kill_file = std::ffi::CString::new(dir.join("cgroup.kill").into_os_string().into_encoded_bytes())
        .map_err(|e| e.to_string())?;
    let dir_c = std::ffi::CString::new(dir.clone().into_os_string().into_encoded_bytes()).map_err(|e| e.to_string())?;
    let mut fds = [0; 2];
    // SAFETY: pipe2 with a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        let _ = std::fs::remove_dir(&dir);
        return Err(format!("pipe: {}", io::Error::last_os_error()));
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    // SAFETY: the process is single-threaded here (documented precondition);
    // the child only makes system calls and exits.
    match unsafe { libc::fork() } {
        -1 => {
            let _ = std::fs::remove_dir(&dir);
            Err(format!("fork: {}", io::Error::last_os_error()))
        }
        0 => {
            // Forked twice, so the keeper is no descendant of doppel (it
            // outlives doppel by the few milliseconds its clean-up takes).
            // SAFETY: plain system calls on descriptors and C strings we own.
            unsafe {
                if libc::fork() != 0 {
                    libc::_exit(0);
                }
                keeper(read_end, write_end, &kill_file, &dir_c, &v1_dirs);
            }
        }
        child => {
            // SAFETY: reaping the intermediate child; closing our copy of the read end.
            unsafe {
                libc::waitpid(child, std::ptr::null_mut(), 0);
                libc::close(read_end);
            }
            // doppel in a leaf of its own: the group itself holds no
            // process, so controllers can be enabled for program groups
            // beside the leaf (cgroup v2's "no internal processes" rule).
            let leaf = dir.join(MAIN_LEAF);
            std::fs::create_dir(&leaf).map_err(|e| format!("creating {}: {e}", leaf.display()))?;
            std::fs::write(leaf.join("cgroup.procs"), pid.to_string())
                .map_err(|e| format!("moving doppel into {}: {e}", leaf.display()))?;
            // The write end stays open (close-on-exec) until doppel exits.
            Ok(dir)
        }
    }
}

/// The keeper: waits for end-of-file on `read_end` (doppel gone), kills the
/// campaign group, waits for it to empty (at most ~10 s) and removes it with
/// every group below it, then the v1 campaign directories `v1_dirs` (their
/// members are in the campaign group too, so already killed).
unsafe fn keeper(
    read_end: i32,
    write_end: i32,
    kill_file: &std::ffi::CStr,
    dir: &std::ffi::CStr,
    v1_dirs: &[PathBuf],
) -> ! {
    unsafe {
        libc::close(write_end);
        // Outlive doppel's own interruption (Ctrl-C reaches the whole
        // foreground process group) and keep no terminal or pipe of its open.
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        let max = libc::sysconf(libc::_SC_OPEN_MAX).clamp(0, 65536) as i32;
        for fd in 3..max {
            if fd != read_end {
                libc::close(fd);
            }
        }
        libc::prctl(libc::PR_SET_NAME, c"doppel-keeper".as_ptr() as libc::c_ulong, 0, 0, 0);
        let mut b = [0u8; 1];
        loop {
            let n = libc::read(read_end, b.as_mut_ptr().cast(), 1);
            if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        let fd = libc::open(kill_file.as_ptr(), libc::O_WRONLY);
        if fd >= 0 {
            libc::write(fd, b"1".as_ptr().cast(), 1);
            libc::close(fd);
        }
        // Forked from a single-threaded process: the standard library may
        // be used here.
        let dir = PathBuf::from(std::ffi::OsStr::from_encoded_bytes_unchecked(dir.to_bytes()));
        remove_tree(&dir, std::time::Duration::from_secs(10));
        for d in v1_dirs {
            kill_members_v1(d);
            remove_tree(d, std::time::Duration::from_secs(10));
        }
        libc::_exit(0);
    }
}

/// A new, empty cgroup v2 group for one tool doppel starts (a debugger, a
/// browser, a compiler), so that killing the tool kills everything it ever
/// started, `setsid` orphans included ([`kill_group`]). Beside doppel's leaf
/// in its campaign group, else below doppel's own group. `None` where no
/// group can be made (not root, no cgroup v2, no `cgroup.kill`).
pub fn new_tool_group() -> Option<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static PARENT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let parent = PARENT.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let own = own_v2_dir().ok()?;
        let parent = match own.file_name() {
            Some(n) if n == MAIN_LEAF => own.parent()?.to_path_buf(),
            _ => own,
        };
        sweep_stale(&parent);
        parent.join("cgroup.procs").exists().then_some(parent)
    });
    let parent = parent.as_ref()?;
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = parent.join(format!("doppel-{pid}-tool-{n}"));
    std::fs::create_dir(&dir).ok()?;
    if dir.join("cgroup.kill").exists() {
        // The pids limit where the v2 hierarchy has the controller (the
        // parent must hold no process itself: true of a campaign group, else
        // the write fails and the v1 group of [`new_tool_pids_group`] holds).
        let ctrls = std::fs::read_to_string(parent.join("cgroup.controllers")).unwrap_or_default();
        if ctrls.split_whitespace().any(|c| c == "pids") {
            let _ = std::fs::write(parent.join("cgroup.subtree_control"), "+pids");
            let _ = std::fs::write(dir.join("pids.max"), TOOL_PIDS_MAX.to_string());
        }
        Some(dir)
    } else {
        let _ = std::fs::remove_dir(&dir);
        None
    }
}

/// A new group in the v1 `pids` hierarchy limited to [`TOOL_PIDS_MAX`],
/// for one tool doppel starts on a hybrid or v1 host (where the v2 tool
/// group of [`new_tool_group`] has no pids controller): below doppel's v1
/// campaign directory `doppel-<pid>`, which the keeper removes when doppel
/// exits. `None` where program groups are v2's (the v2 tool group is
/// limited itself) or no v1 pids hierarchy is usable. The caller moves the
/// tool in before exec and removes the group with [`remove_tool_pids_group`]
/// when the tool ends.
pub fn new_tool_pids_group() -> Option<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let parents = program_parents().as_ref().ok()?;
    let (parent, _) = parents.iter().find(|(_, c)| c.contains(&"pids"))?;
    if parent.join("cgroup.kill").exists() || parent.join("cgroup.type").exists() {
        return None;
    }
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = parent.join(format!("tool-{n}"));
    std::fs::create_dir(&dir).ok()?;
    if std::fs::write(dir.join("pids.max"), TOOL_PIDS_MAX.to_string()).is_err() {
        let _ = std::fs::remove_dir(&dir);
        return None;
    }
    Some(dir)
}

/// Kills what is left in the v1 tool group `dir` ([`new_tool_pids_group`])
/// and removes it (within 100 ms, else from a background thread).
pub fn remove_tool_pids_group(dir: &Path) {
    kill_members_v1(dir);
    if remove_tree(dir, std::time::Duration::from_millis(100)) {
        return;
    }
    let dir = dir.to_path_buf();
    std::thread::spawn(move || remove_tree(&dir, std::time::Duration::from_secs(10)));
}

/// Kills every process in the cgroup v2 group `dir` (`cgroup.kill`) and
/// removes the group, with any group below it, once it is empty (in the
/// background if that takes longer than a moment; the campaign's keeper
/// removes what is left when doppel exits).
pub fn kill_group(dir: &Path) {
    let _ = std::fs::write(dir.join("cgroup.kill"), "1");
    // Below a tool's group there may be groups of its own (a doppel started
    // by a tool made its campaign group there, and its keeper died with
    // the tool): they go too.
    if remove_tree(dir, std::time::Duration::from_millis(100)) {
        return;
    }
    let dir = dir.to_path_buf();
    std::thread::spawn(move || remove_tree(&dir, std::time::Duration::from_secs(10)));
}

/// Removes the group `dir` and every group below it, deepest first (a
/// group can only be removed once it has no child group and no process),
/// retrying while processes finish exiting, for at most `limit`. Returns
/// whether `dir` is gone. Never kills anything: a populated group stays.
pub fn remove_tree(dir: &Path, limit: std::time::Duration) -> bool {
    let start = std::time::Instant::now();
    loop {
        remove_tree_once(dir);
        if !dir.exists() {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn remove_tree_once(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            // Control files are files; only groups are directories.
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree_once(&e.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Kills (`SIGKILL`) every process in the v1 group `dir` and below, until
/// none is left (at most ~1 s).
fn kill_members_v1(dir: &Path) {
    for _ in 0..500 {
        let pids = members_below(dir);
        if pids.is_empty() {
            return;
        }
        for p in pids {
            // SAFETY: kill(2) with a positive pid.
            unsafe { libc::kill(p as libc::pid_t, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

fn members_below(dir: &Path) -> Vec<u32> {
    let mut out = members(dir);
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(members_below(&e.path()));
            }
        }
    }
    out
}

/// The v1 directories (one per `pids` or `memory` hierarchy mounted as v1)
/// in which the doppel process `pid` makes the program groups of its
/// programs under test: `doppel-<pid>` below the process's own group in
/// that hierarchy. Seen from the calling process's groups (doppel never
/// moves itself in v1 hierarchies, so its children see the same).
fn v1_campaign_dirs(pid: u32) -> Vec<PathBuf> {
    let m = mounts();
    let mut out = Vec::new();
    for ctrl in ["pids", "memory"] {
        if let Some((root, _)) = m.v1.iter().find(|(_, opts)| opts.iter().any(|o| o == ctrl))
            && let Some(own) = own_group(ctrl)
        {
            out.push(root.join(own).join(format!("doppel-{pid}")));
        }
    }
    out
}

/// Every cgroup directory that the doppel process `pid` (a child of the
/// calling process, or one that shared its groups) made and that still
/// exists: its campaign group with everything below it, tool groups made
/// outside a campaign group, and its v1 campaign directories. Empty once
/// doppel's run and its keeper's clean-up are over; the fault-injection
/// suite counts what is left as left behind.
pub fn groups_left_by(pid: u32) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let own = format!("doppel-{pid}");
    let tool = format!("doppel-{pid}-tool-");
    if let Ok(v2) = own_v2_dir()
        && let Ok(entries) = std::fs::read_dir(&v2)
    {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == own || name.starts_with(&tool) {
                collect_dirs(&e.path(), &mut out);
            }
        }
    }
    for d in v1_campaign_dirs(pid) {
        collect_dirs(&d, &mut out);
    }
    out
}

fn collect_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    if !dir.is_dir() {
        return;
    }
    out.push(dir.to_path_buf());
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                collect_dirs(&e.path(), out);
            }
        }
    }
}

/// The pid of the doppel process that made a group called `name`
/// (`doppel-<pid>` or `doppel-<pid>-tool-<n>`).
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("doppel-")?;
    let digits = rest.split('-').next()?;
    let pid: u32 = digits.parse().ok()?;
    (rest == digits || rest.strip_prefix(digits)?.starts_with("-tool-")).then_some(pid)
}

/// Removes, below `parent`, the empty groups of doppel processes that are
/// gone (no process with their pid: a reused pid keeps its groups), and
/// program groups of the naming before 2026-11-25 (`doppel-program-<pid>`)
/// that are empty and older than ten minutes. Populated groups stay (rmdir
/// refuses them); nothing is killed.
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let stale = match owner_pid(&name) {
            Some(pid) => !Path::new(&format!("/proc/{pid}")).exists(),
            None => {
                name.starts_with("doppel-program-")
                    && e.metadata()
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t.elapsed().is_ok_and(|a| a > std::time::Duration::from_secs(600)))
            }
        };
        if stale {
            remove_tree_once(&e.path());
        }
    }
}

/// The group of one program under test (see the module documentation):
/// killed with everything in it, and removed, when dropped.
#[derive(Debug)]
pub struct ProgramGroup {
    /// One directory per hierarchy the program was put in.
    dirs: Vec<PathBuf>,
}

type Parents = Result<Vec<(PathBuf, Vec<&'static str>)>, String>;

/// Where program groups can be made, found once: `(hierarchy directory of
/// doppel's own group, controllers to set)`, or why none can.
static PARENTS: std::sync::OnceLock<Parents> = std::sync::OnceLock::new();

/// [`program_parents`] if it was computed already.
fn program_parents_if_made() -> Option<&'static Parents> {
    PARENTS.get()
}

fn program_parents() -> &'static Parents {
    PARENTS.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: cgroups cannot be created".into());
        }
        let m = mounts();
        let mut out = Vec::new();
        // cgroup v2 with the pids controller, for a doppel in its campaign
        // group: program groups go beside its leaf.
        if let Ok(own) = own_v2_dir()
            && own.file_name().is_some_and(|n| n == MAIN_LEAF)
            && let Some(campaign) = own.parent()
        {
            let own = campaign.to_path_buf();
            let ctrls = std::fs::read_to_string(own.join("cgroup.controllers")).unwrap_or_default();
            if ctrls.split_whitespace().any(|c| c == "pids") {
                let mut want = vec!["pids"];
                if ctrls.split_whitespace().any(|c| c == "memory") {
                    want.push("memory");
                }
                return Ok(vec![(own, want)]);
            }
        }
        // Hybrid or v1 host: the v1 pids and memory hierarchies, in a
        // directory `doppel-<pid>` of this process (the keeper removes it
        // when doppel exits, however it exits).
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        for ctrl in ["pids", "memory"] {
            if let Some((root, _)) = m.v1.iter().find(|(_, opts)| opts.iter().any(|o| o == ctrl))
                && let Some(own) = own_group(ctrl)
            {
                let own = root.join(own);
                sweep_stale(&own);
                let dir = own.join(format!("doppel-{pid}"));
                match std::fs::create_dir(&dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(format!("creating {}: {e}", dir.display())),
                }
                out.push((dir, vec![ctrl]));
            }
        }
        if !out.is_empty() {
            // A process with no keeper (a test binary, a doppel outside a
            // campaign group) removes them when it exits normally.
            // SAFETY: registers a plain extern "C" function.
            unsafe { libc::atexit(remove_v1_dirs_at_exit) };
        }
        if out.iter().any(|(_, c)| c.contains(&"pids")) {
            Ok(out)
        } else {
            Err("no pids controller (neither in cgroup v2 nor as a v1 hierarchy)".into())
        }
    })
}

/// At exit: kills the program groups still registered and removes this
/// process's v1 directories (never blocks on a lock another thread holds).
extern "C" fn remove_v1_dirs_at_exit() {
    crate::process::kill_all_programs_at_exit();
    if let Some(Ok(parents)) = program_parents_if_made() {
        for (dir, _) in parents {
            if dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("doppel-"))
            {
                remove_tree(dir, std::time::Duration::from_millis(500));
            }
        }
    }
}

/// Why program groups cannot be made on this host, if they cannot.
pub fn program_groups_unavailable() -> Option<String> {
    program_parents().as_ref().err().cloned()
}

impl ProgramGroup {
    /// Moves `pid` (a program under test, stopped by its debugger) into a new
    /// group limited to [`PROGRAM_PIDS_MAX`] processes and, where a memory
    /// controller is available, `memory_bytes` for the whole group
    /// ([`crate::process::UNLIMITED`]: no memory limit).
    ///
    /// Errors: why no group could be made ([`program_groups_unavailable`]),
    /// or the failing cgroup file write.
    pub fn confine(pid: u32, memory_bytes: u64) -> io::Result<Self> {
        let parents = program_parents().as_ref().map_err(|e| io::Error::other(e.clone()))?;
        let mut group = ProgramGroup { dirs: Vec::new() };
        for (parent, ctrls) in parents {
            let dir = parent.join(format!("program-{pid}"));
            let _ = remove_tree(&dir, std::time::Duration::ZERO);
            std::fs::create_dir(&dir).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
            group.dirs.push(dir.clone());
            let v1 = !dir.join("cgroup.kill").exists() && !dir.join("cgroup.type").exists();
            if !v1 {
                // v2: enable the controllers for the child (the parent must
                // then hold no process itself: doppel is in its own leaf).
                let _ = std::fs::write(
                    parent.join("cgroup.subtree_control"),
                    ctrls.iter().map(|c| format!("+{c}")).collect::<Vec<_>>().join(" "),
                );
            }
            for c in ctrls {
                match *c {
                    "pids" => std::fs::write(dir.join("pids.max"), PROGRAM_PIDS_MAX.to_string())?,
                    "memory" if memory_bytes != crate::process::UNLIMITED => {
                        let file = if v1 { "memory.limit_in_bytes" } else { "memory.max" };
                        std::fs::write(dir.join(file), memory_bytes.to_string())?
                    }
                    _ => {}
                }
            }
            std::fs::write(dir.join("cgroup.procs"), pid.to_string())
                .map_err(|e| io::Error::new(e.kind(), format!("moving {pid} into {}: {e}", dir.display())))?;
        }
        Ok(group)
    }

    /// The pids in the group now.
    pub fn members(&self) -> Vec<u32> {
        self.dirs.first().map(|d| members(d)).unwrap_or_default()
    }

    /// Kills every process in the group (`cgroup.kill` in v2; in v1, each
    /// member with `SIGKILL` until none is left, which `pids.max` bounds)
    /// and removes the group (within 1 s, else from a background thread
    /// for up to 10 s more).
    pub fn kill(&mut self) {
        for dir in &self.dirs {
            if std::fs::write(dir.join("cgroup.kill"), "1").is_err() {
                for _ in 0..100 {
                    let pids = members(dir);
                    if pids.is_empty() {
                        break;
                    }
                    for p in pids {
                        // SAFETY: kill(2) with a positive pid.
                        unsafe { libc::kill(p as libc::pid_t, libc::SIGKILL) };
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            }
        }
        let mut slow = Vec::new();
        for dir in self.dirs.drain(..) {
            if !remove_tree(&dir, std::time::Duration::from_secs(1)) {
                slow.push(dir);
            }
        }
        // Killed processes can take a while to finish exiting (a large
        // address space): keep trying in the background; the keeper removes
        // what is still there when doppel exits.
        if !slow.is_empty() {
            std::thread::spawn(move || {
                for d in slow {
                    remove_tree(&d, std::time::Duration::from_secs(10));
                }
            });
        }
    }
}

impl Drop for ProgramGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

fn members(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_reads_campaign_and_tool_groups_only() {
        assert_eq!(owner_pid("doppel-123"), Some(123));
        assert_eq!(owner_pid("doppel-123-tool-4"), Some(123));
        assert_eq!(owner_pid("doppel-program-5"), None);
        assert_eq!(owner_pid("doppel-12x"), None);
        assert_eq!(owner_pid("doppel-12-other"), None);
        assert_eq!(owner_pid("main"), None);
    }

    #[test]
    fn remove_tree_removes_nested_directories_deepest_first() {
        // On a plain file system the same order applies (a directory must
        // be empty); cgroup control files are not directories.
        let t = tempfile::tempdir().unwrap();
        let top = t.path().join("doppel-1");
        std::fs::create_dir_all(top.join("doppel-1-tool-0/doppel-2/main")).unwrap();
        std::fs::create_dir_all(top.join("main")).unwrap();
        assert!(remove_tree(&top, std::time::Duration::ZERO));
        assert!(!top.exists());
    }

    #[test]
    fn a_fork_bomb_in_a_program_group_stays_under_pids_max_and_dies_with_it() {
        // Test hosts run as root with a pids controller (v2, or v1 on hybrid
        // hosts); a host without one fails here with the reason.
        assert_eq!(program_groups_unavailable(), None);
        // Every process forks again forever (a failed fork is retried).
        let mut child = std::process::Command::new("perl")
            .args([
                "-e",
                "select(undef, undef, undef, 0.2); while (1) { fork(); select(undef, undef, undef, 0.01) }",
            ])
            .spawn()
            .unwrap();
        let mut group = ProgramGroup::confine(child.id(), 1 << 30).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let members = group.members();
        let n = members.len() as u64;
        assert!(n > PROGRAM_PIDS_MAX / 2 && n <= PROGRAM_PIDS_MAX, "{n} processes");
        let dirs = group.dirs.clone();
        // What the fault suite counts as left behind sees the group.
        let listed = groups_left_by(std::process::id());
        assert!(dirs.iter().all(|d| listed.contains(d)), "{dirs:?} not in {listed:?}");
        group.kill();
        let _ = child.wait();
        assert!(group.dirs.is_empty());
        for d in dirs {
            assert!(!d.exists(), "{} left", d.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        let left: Vec<u32> = members
            .into_iter()
            .filter(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| !s.contains(") Z ")))
            .collect();
        assert!(left.is_empty(), "{left:?} survived");
    }
}
