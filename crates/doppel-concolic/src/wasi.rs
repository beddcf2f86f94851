//! The WASI preview1 layer (`wasi_snapshot_preview1`, witx of the
//! WebAssembly/WASI repository, snapshot 01): stdio, argv, environ, a fixed
//! clock and random source, `proc_exit`, and a small in-memory file system
//! behind one preopened directory (fd 3, `.`). Bytes read from stdin, argv
//! and files get input-variable shadows when those inputs are symbolic.
//! Any other import ends the run with `Outcome::UnsupportedImport` when
//! called.

use crate::exec::Machine;
use crate::expr::{InputSource, InputVar};
use crate::{Outcome, RunConfig};

const ESUCCESS: u64 = 0;
const EBADF: u64 = 8;
const EFAULT: u64 = 21;
const EINVAL: u64 = 28;
const EISDIR: u64 = 31;
const ENOENT: u64 = 44;
const ENOTDIR: u64 = 54;
const ESPIPE: u64 = 70;
const EEXIST: u64 = 20;

const FILETYPE_CHARACTER_DEVICE: u8 = 2;
const FILETYPE_DIRECTORY: u8 = 3;
const FILETYPE_REGULAR_FILE: u8 = 4;

/// The fixed wall-clock time every run sees (2024-01-01T00:00:00Z, in ns).
pub(crate) const FIXED_TIME_NS: u64 = 1_704_067_200_000_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Host {
    ArgsGet,
    ArgsSizesGet,
    EnvironGet,
    EnvironSizesGet,
    ClockResGet,
    ClockTimeGet,
    RandomGet,
    ProcExit,
    FdRead,
    FdWrite,
    FdClose,
    FdSeek,
    FdTell,
    FdFdstatGet,
    FdFdstatSetFlags,
    FdFilestatGet,
    FdPrestatGet,
    FdPrestatDirName,
    FdSync,
    PathOpen,
    PathFilestatGet,
    SchedYield,
    Unknown { module: String, name: String },
}

impl Host {
    pub fn resolve(module: &str, name: &str) -> Host {
        if module != "wasi_snapshot_preview1" && module != "wasi_unstable" {
            return Host::Unknown {
                module: module.into(),
                name: name.into(),
            };
        }
        match name {
            "args_get" => Host::ArgsGet,
            "args_sizes_get" => Host::ArgsSizesGet,
            "environ_get" => Host::EnvironGet,
            "environ_sizes_get" => Host::EnvironSizesGet,
            "clock_res_get" => Host::ClockResGet,
            "clock_time_get" => Host::ClockTimeGet,
            "random_get" => Host::RandomGet,
            "proc_exit" => Host::ProcExit,
            "fd_read" => Host::FdRead,
            "fd_write" => Host::FdWrite,
            "fd_close" => Host::FdClose,
            "fd_seek" => Host::FdSeek,
            "fd_tell" => Host::FdTell,
            "fd_fdstat_get" => Host::FdFdstatGet,
            "fd_fdstat_set_flags" => Host::FdFdstatSetFlags,
            "fd_filestat_get" => Host::FdFilestatGet,
            "fd_prestat_get" => Host::FdPrestatGet,
            "fd_prestat_dir_name" => Host::FdPrestatDirName,
            "fd_sync" | "fd_datasync" => Host::FdSync,
            "path_open" => Host::PathOpen,
            "path_filestat_get" => Host::PathFilestatGet,
            "sched_yield" => Host::SchedYield,
            _ => Host::Unknown {
                module: module.into(),
                name: name.into(),
            },
        }
    }
}

/// An open file: index into `files` and a cursor.
#[derive(Debug, Clone)]
struct Open {
    file: usize,
    pos: u64,
    append: bool,
}

/// Guest-visible state of the WASI layer.
pub(crate) struct Wasi {
    stdin: Vec<u8>,
    stdin_pos: usize,
    stdin_symbolic: bool,
    args: Vec<Vec<u8>>,
    args_symbolic: bool,
    env: Vec<Vec<u8>>,
    /// (path, contents, index in the inputs when it came from them).
    files: Vec<(String, Vec<u8>, Option<u32>)>,
    files_symbolic: bool,
    fds: Vec<Option<Open>>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    cap: usize,
    pub truncated: bool,
    random: u64,
}

impl Wasi {
    pub fn new(c: &RunConfig) -> Wasi {
        let name = if c.inputs.program_name.is_empty() {
            "prog".to_string()
        } else {
            c.inputs.program_name.clone()
        };
        let mut args = vec![name.into_bytes()];
        args.extend(c.inputs.args.iter().cloned());
        Wasi {
            stdin: c.inputs.stdin.clone(),
            stdin_pos: 0,
            stdin_symbolic: c.symbolic.stdin,
            args,
            args_symbolic: c.symbolic.args,
            env: c.inputs.env.iter().map(|e| e.clone().into_bytes()).collect(),
            files: c
                .inputs
                .files
                .iter()
                .enumerate()
                .map(|(i, (p, d))| (normalize(p), d.clone(), Some(i as u32)))
                .collect(),
            files_symbolic: c.symbolic.files,
            fds: vec![None, None, None, None],
            stdout: Vec::new(),
            stderr: Vec::new(),
            cap: if c.output_cap == 0 { 16 << 20 } else { c.output_cap },
            truncated: false,
            random: 0x853c_49e6_748f_ea9b,
        }
    }
}

fn normalize(p: &str) -> String {
    p.trim_start_matches("./").trim_start_matches('/').to_string()
}

impl Machine<'_> {
    fn mem_range(&self, addr: u64, len: u64) -> Option<std::ops::Range<usize>> {
        let end = addr.checked_add(len)?;
        (end <= self.mem.len() as u64).then_some(addr as usize..end as usize)
    }

    fn get_u32(&self, addr: u64) -> Option<u32> {
        let r = self.mem_range(addr, 4)?;
        Some(u32::from_le_bytes(self.mem[r].try_into().ok()?))
    }

    /// Writes concrete bytes (clearing their shadow).
    fn put<const SYM: bool>(&mut self, addr: u64, bytes: &[u8]) -> bool {
        let Some(r) = self.mem_range(addr, bytes.len() as u64) else {
            return false;
        };
        self.mem[r].copy_from_slice(bytes);
        if SYM && !bytes.is_empty() {
            self.sym.store(addr as u32, bytes.len() as u32, 0);
        }
        true
    }

    /// Writes input bytes; when `source` is given they become input variables
    /// starting at index `first`.
    fn put_input<const SYM: bool>(&mut self, addr: u64, bytes: &[u8], source: Option<(InputSource, u32)>) -> bool {
        if !self.put::<SYM>(addr, bytes) {
            return false;
        }
        if SYM && let Some((src, first)) = source {
            for i in 0..bytes.len() as u32 {
                let v = self.sym.arena.var(InputVar {
                    source: src,
                    index: first + i,
                });
                self.sym.mem.set(addr as u32 + i, v.0);
            }
        }
        true
    }

    fn iovecs(&self, iovs: u64, n: u64) -> Option<Vec<(u64, u64)>> {
        (0..n.min(1024))
            .map(|i| {
                let p = iovs + 8 * i;
                Some((self.get_u32(p)? as u64, self.get_u32(p + 4)? as u64))
            })
            .collect()
    }

    /// Writes the strings of argv or environ (`ptrs` array plus NUL-terminated bytes).
    fn put_strings<const SYM: bool>(&mut self, ptrs: u64, buf: u64, args: bool) -> u64 {
        let items = if args {
            self.wasi.args.clone()
        } else {
            self.wasi.env.clone()
        };
        let mut at = buf;
        for (i, s) in items.iter().enumerate() {
            if !self.put::<SYM>(ptrs + 4 * i as u64, &(at as u32).to_le_bytes()) {
                return EFAULT;
            }
            let src = (args && i > 0 && self.wasi.args_symbolic).then(|| (InputSource::Arg(i as u32 - 1), 0));
            if !self.put_input::<SYM>(at, s, src) || !self.put::<SYM>(at + s.len() as u64, &[0]) {
                return EFAULT;
            }
            at += s.len() as u64 + 1;
        }
        ESUCCESS
    }

    fn sizes<const SYM: bool>(&mut self, count_ptr: u64, size_ptr: u64, args: bool) -> u64 {
        let items = if args { &self.wasi.args } else { &self.wasi.env };
        let count = items.len() as u32;
        let size: u32 = items.iter().map(|s| s.len() as u32 + 1).sum();
        if self.put::<SYM>(count_ptr, &count.to_le_bytes()) && self.put::<SYM>(size_ptr, &size.to_le_bytes()) {
            ESUCCESS
        } else {
            EFAULT
        }
    }

    pub(crate) fn wasi_call<const SYM: bool>(&mut self, host: &Host, a: &[u64]) -> Result<Vec<u64>, Outcome> {
        let arg = |i: usize| a.get(i).copied().unwrap_or(0);
        let errno = match host {
            Host::ArgsGet => self.put_strings::<SYM>(arg(0), arg(1), true),
            Host::ArgsSizesGet => self.sizes::<SYM>(arg(0), arg(1), true),
            Host::EnvironGet => self.put_strings::<SYM>(arg(0), arg(1), false),
            Host::EnvironSizesGet => self.sizes::<SYM>(arg(0), arg(1), false),
            Host::ClockResGet => {
                if self.put::<SYM>(arg(1), &1000u64.to_le_bytes()) {
                    ESUCCESS
                } else {
                    EFAULT
                }
            }
            Host::ClockTimeGet => {
                if self.put::<SYM>(arg(2), &FIXED_TIME_NS.to_le_bytes()) {
                    ESUCCESS
                } else {
                    EFAULT
                }
            }
            Host::RandomGet => {
                let mut bytes = vec![0u8; arg(1).min(1 << 20) as usize];
                for b in bytes.iter_mut() {
                    // xorshift64*: fixed seed, so runs are reproducible.
                    self.wasi.random ^= self.wasi.random >> 12;
                    self.wasi.random ^= self.wasi.random << 25;
                    self.wasi.random ^= self.wasi.random >> 27;
                    *b = (self.wasi.random.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8;
                }
                if self.put::<SYM>(arg(0), &bytes) {
                    ESUCCESS
                } else {
                    EFAULT
                }
            }
            Host::ProcExit => return Err(Outcome::Exited { code: arg(0) as u32 }),
            Host::FdRead => self.fd_read::<SYM>(arg(0), arg(1), arg(2), arg(3)),
            Host::FdWrite => self.fd_write::<SYM>(arg(0), arg(1), arg(2), arg(3)),
            Host::FdClose => {
                let fd = arg(0) as usize;
                if fd >= 4 && self.wasi.fds.get(fd).is_some_and(|f| f.is_some()) {
                    self.wasi.fds[fd] = None;
                    ESUCCESS
                } else if fd < 4 {
                    ESUCCESS
                } else {
                    EBADF
                }
            }
            Host::FdSeek => self.fd_seek::<SYM>(arg(0), arg(1) as i64, arg(2) as u8, arg(3)),
            Host::FdTell => self.fd_seek::<SYM>(arg(0), 0, 1, arg(1)),
            Host::FdFdstatGet => {
                let fd = arg(0) as usize;
                let ty = match fd {
                    0..=2 => FILETYPE_CHARACTER_DEVICE,
                    3 => FILETYPE_DIRECTORY,
                    _ if self.wasi.fds.get(fd).is_some_and(|f| f.is_some()) => FILETYPE_REGULAR_FILE,
                    _ => return Ok(vec![EBADF]),
                };
                let mut st = [0u8; 24];
                st[0] = ty;
                st[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
                st[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
                if self.put::<SYM>(arg(1), &st) { ESUCCESS } else { EFAULT }
            }
            Host::FdFdstatSetFlags | Host::FdSync | Host::SchedYield => ESUCCESS,
            Host::FdFilestatGet => {
                let fd = arg(0) as usize;
                let (ty, size) = match fd {
                    0..=2 => (FILETYPE_CHARACTER_DEVICE, 0),
                    3 => (FILETYPE_DIRECTORY, 0),
                    _ => match self.wasi.fds.get(fd).cloned().flatten() {
                        Some(o) => (FILETYPE_REGULAR_FILE, self.wasi.files[o.file].1.len() as u64),
                        None => return Ok(vec![EBADF]),
                    },
                };
                self.filestat::<SYM>(arg(1), ty, size)
            }
            Host::PathFilestatGet => {
                let Some(path) = self.path(arg(2), arg(3)) else {
                    return Ok(vec![EFAULT]);
                };
                if arg(0) != 3 {
                    EBADF
                } else if path.is_empty() || path == "." {
                    self.filestat::<SYM>(arg(4), FILETYPE_DIRECTORY, 0)
                } else {
                    match self.wasi.files.iter().position(|f| f.0 == path) {
                        Some(i) => {
                            let size = self.wasi.files[i].1.len() as u64;
                            self.filestat::<SYM>(arg(4), FILETYPE_REGULAR_FILE, size)
                        }
                        None => ENOENT,
                    }
                }
            }
            Host::FdPrestatGet => {
                if arg(0) != 3 {
                    EBADF
                } else {
                    let mut st = [0u8; 8];
                    st[4..8].copy_from_slice(&1u32.to_le_bytes());
                    if self.put::<SYM>(arg(1), &st) { ESUCCESS } else { EFAULT }
                }
            }
            Host::FdPrestatDirName => {
                if arg(0) != 3 {
                    EBADF
                } else if arg(2) < 1 {
                    EINVAL
                } else if self.put::<SYM>(arg(1), b".") {
                    ESUCCESS
                } else {
                    EFAULT
                }
            }
            Host::PathOpen => self.path_open::<SYM>(a),
            Host::Unknown { module, name } => {
                return Err(Outcome::UnsupportedImport {
                    module: module.clone(),
                    name: name.clone(),
                });
            }
        };
        Ok(vec![errno])
    }

    fn filestat<const SYM: bool>(&mut self, ptr: u64, ty: u8, size: u64) -> u64 {
        let mut st = [0u8; 64];
        st[16] = ty;
        st[24..32].copy_from_slice(&1u64.to_le_bytes());
        st[32..40].copy_from_slice(&size.to_le_bytes());
        for t in [40, 48, 56] {
            st[t..t + 8].copy_from_slice(&FIXED_TIME_NS.to_le_bytes());
        }
        if self.put::<SYM>(ptr, &st) { ESUCCESS } else { EFAULT }
    }

    fn path(&self, ptr: u64, len: u64) -> Option<String> {
        let r = self.mem_range(ptr, len)?;
        Some(normalize(&String::from_utf8_lossy(&self.mem[r])))
    }

    fn fd_read<const SYM: bool>(&mut self, fd: u64, iovs: u64, n: u64, nread_ptr: u64) -> u64 {
        let Some(iov) = self.iovecs(iovs, n) else { return EFAULT };
        let mut total = 0u64;
        for (buf, len) in iov {
            let (chunk, source) = match fd {
                0 => {
                    let p = self.wasi.stdin_pos;
                    let end = (p + len as usize).min(self.wasi.stdin.len());
                    let chunk = self.wasi.stdin[p..end].to_vec();
                    self.wasi.stdin_pos = end;
                    (
                        chunk,
                        self.wasi.stdin_symbolic.then_some((InputSource::Stdin, p as u32)),
                    )
                }
                1 | 2 => return EBADF,
                3 => return EISDIR,
                _ => {
                    let Some(Some(o)) = self.wasi.fds.get(fd as usize).cloned() else {
                        return EBADF;
                    };
                    let data = &self.wasi.files[o.file];
                    let p = (o.pos as usize).min(data.1.len());
                    let end = (p + len as usize).min(data.1.len());
                    let chunk = data.1[p..end].to_vec();
                    let src = data
                        .2
                        .filter(|_| self.wasi.files_symbolic)
                        .map(|i| (InputSource::File(i), p as u32));
                    if let Some(Some(o)) = self.wasi.fds.get_mut(fd as usize) {
                        o.pos = end as u64;
                    }
                    (chunk, src)
                }
            };
            if !self.put_input::<SYM>(buf, &chunk, source) {
                return EFAULT;
            }
            total += chunk.len() as u64;
            if (chunk.len() as u64) < len {
                break;
            }
        }
        if self.put::<SYM>(nread_ptr, &(total as u32).to_le_bytes()) {
            ESUCCESS
        } else {
            EFAULT
        }
    }

    fn fd_write<const SYM: bool>(&mut self, fd: u64, iovs: u64, n: u64, nwritten_ptr: u64) -> u64 {
        let Some(iov) = self.iovecs(iovs, n) else { return EFAULT };
        let mut total = 0u64;
        for (buf, len) in iov {
            let Some(r) = self.mem_range(buf, len) else {
                return EFAULT;
            };
            let bytes = self.mem[r].to_vec();
            total += len;
            match fd {
                1 | 2 => {
                    let cap = self.wasi.cap;
                    let out = if fd == 1 {
                        &mut self.wasi.stdout
                    } else {
                        &mut self.wasi.stderr
                    };
                    let room = cap.saturating_sub(out.len());
                    if bytes.len() > room {
                        self.wasi.truncated = true;
                    }
                    let at = out.len() as u32;
                    out.extend_from_slice(&bytes[..bytes.len().min(room)]);
                    if fd == 1 && self.obs.writes && room > 0 && !bytes.is_empty() {
                        let site = self.write_site();
                        if self.writes.last().is_none_or(|w| w.site != site) {
                            self.writes.push(crate::OutputWrite { at, site });
                        }
                    }
                }
                0 | 3 => return EBADF,
                _ => {
                    let Some(Some(o)) = self.wasi.fds.get(fd as usize).cloned() else {
                        return EBADF;
                    };
                    let data = &mut self.wasi.files[o.file].1;
                    let at = if o.append { data.len() } else { o.pos as usize };
                    if at + bytes.len() > 64 << 20 {
                        return EFAULT;
                    }
                    if data.len() < at + bytes.len() {
                        data.resize(at + bytes.len(), 0);
                    }
                    data[at..at + bytes.len()].copy_from_slice(&bytes);
                    if let Some(Some(o)) = self.wasi.fds.get_mut(fd as usize) {
                        o.pos = (at + bytes.len()) as u64;
                    }
                }
            }
        }
        if self.put::<SYM>(nwritten_ptr, &(total as u32).to_le_bytes()) {
            ESUCCESS
        } else {
            EFAULT
        }
    }

    fn fd_seek<const SYM: bool>(&mut self, fd: u64, offset: i64, whence: u8, out: u64) -> u64 {
        if fd < 4 {
            return if fd == 3 { EBADF } else { ESPIPE };
        }
        let Some(Some(o)) = self.wasi.fds.get(fd as usize).cloned() else {
            return EBADF;
        };
        let size = self.wasi.files[o.file].1.len() as i64;
        let base = match whence {
            0 => 0,
            1 => o.pos as i64,
            2 => size,
            _ => return EINVAL,
        };
        let Some(p) = base.checked_add(offset).filter(|p| *p >= 0) else {
            return EINVAL;
        };
        if let Some(Some(o)) = self.wasi.fds.get_mut(fd as usize) {
            o.pos = p as u64;
        }
        if self.put::<SYM>(out, &(p as u64).to_le_bytes()) {
            ESUCCESS
        } else {
            EFAULT
        }
    }

    fn path_open<const SYM: bool>(&mut self, a: &[u64]) -> u64 {
        let arg = |i: usize| a.get(i).copied().unwrap_or(0);
        let (dirfd, path_ptr, path_len, oflags, fdflags, out) = (arg(0), arg(2), arg(3), arg(4), arg(7), arg(8));
        if dirfd != 3 {
            return EBADF;
        }
        let Some(path) = self.path(path_ptr, path_len) else {
            return EFAULT;
        };
        let (creat, directory, excl, trunc) = (oflags & 1 != 0, oflags & 2 != 0, oflags & 4 != 0, oflags & 8 != 0);
        let file = match self.wasi.files.iter().position(|f| f.0 == path) {
            Some(_) if excl => return EEXIST,
            Some(_) if directory => return ENOTDIR,
            Some(i) => i,
            None if path.is_empty() || path == "." => return EISDIR,
            None if creat => {
                self.wasi.files.push((path, vec![], None));
                self.wasi.files.len() - 1
            }
            None => return ENOENT,
        };
        if trunc {
            self.wasi.files[file].1.clear();
            self.wasi.files[file].2 = None;
        }
        let fd = self.wasi.fds.len();
        if fd > 1024 {
            return EBADF;
        }
        self.wasi.fds.push(Some(Open {
            file,
            pos: 0,
            append: fdflags & 1 != 0,
        }));
        if self.put::<SYM>(out, &(fd as u32).to_le_bytes()) {
            ESUCCESS
        } else {
            EFAULT
        }
    }
}
