//! A throwaway PostgreSQL server for the store's tests.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A throwaway PostgreSQL cluster in a temporary directory, run as the
/// `postgres` user (the server refuses to run as root). The postmaster is our
/// direct child, in its own process group; on drop it gets a fast shutdown
/// (SIGINT), and SIGKILL for the group after 10 s.
pub struct Postgres {
    child: Child,
    _dir: tempfile::TempDir,
    pub port: u16,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let pid = self.child.id() as i32;
        // SAFETY: plain kill(2) on our own child and its process group.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; the negative pid names the process group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// Numeric user and group id of `user` (`id -u`, `id -g`).
fn ids_of(user: &str) -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let out = Command::new("id").args([flag, user]).output().unwrap();
        assert!(
            out.status.success(),
            "no user {user}: apt-get install postgresql creates it"
        );
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    (id("-u"), id("-g"))
}

pub fn start_postgres() -> Postgres {
    use std::os::unix::process::CommandExt;
    let bin = std::path::Path::new("/usr/lib/postgresql/15/bin");
    assert!(
        bin.join("postgres").is_file() && bin.join("initdb").is_file(),
        "PostgreSQL 15 server binaries are missing from {}: apt-get install postgresql \
         (the store's PostgreSQL path is tested against a real server)",
        bin.display()
    );
    let (uid, gid) = ids_of("postgres");
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::os::unix::fs::chown(&data, Some(uid), Some(gid)).unwrap();
    let as_pg = |program: &str| {
        let mut c = Command::new(bin.join(program));
        c.uid(uid).gid(gid).current_dir(dir.path()).env_remove("HOME");
        c
    };
    let init = as_pg("initdb")
        .args(["--auth=trust", "-U", "postgres", "-D"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        init.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = as_pg("postgres")
        .arg("-D")
        .arg(&data)
        .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1", "-c"])
        .arg(format!("unix_socket_directories={}", data.display()))
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pg = Postgres { child, _dir: dir, port };
    let t = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "PostgreSQL did not start within 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    pg
}
