//! A throwaway PostgreSQL cluster for tests: a real server in a temporary
//! directory, run as the `postgres` user (the server refuses to run as root).
#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const BIN: &str = "/usr/lib/postgresql/15/bin";

/// The cluster. The postmaster is our direct child, in its own process
/// group; [`Postgres::stop`] (and drop) gives it a fast shutdown (SIGINT),
/// and SIGKILL for the group after 10 s. It can be started again on the
/// same data directory and port ([`Postgres::start`]), as an administrator
/// restarting a database server mid-campaign would.
pub struct Postgres {
    child: Option<Child>,
    dir: tempfile::TempDir,
    /// The TCP port it listens on (the same across restarts).
    pub port: u16,
    listen: String,
    uid: u32,
    gid: u32,
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

impl Postgres {
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn as_pg(&self, program: &str) -> Command {
        let mut c = Command::new(Path::new(BIN).join(program));
        c.uid(self.uid)
            .gid(self.gid)
            .current_dir(self.dir.path())
            .env_remove("HOME");
        c
    }

    /// `postgres://postgres@127.0.0.1:PORT/db`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Starts the server (again) and waits until it accepts TCP connections.
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "PostgreSQL is already running");
        let data = self.data();
        let child = self
            .as_pg("postgres")
            .arg("-D")
            .arg(&data)
            .args(["-p", &self.port.to_string(), "-c"])
            .arg(format!("listen_addresses={}", self.listen))
            .arg("-c")
            .arg(format!("unix_socket_directories={}", data.display()))
            .process_group(0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let t = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "PostgreSQL did not start within 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Fast shutdown (SIGINT: clients are disconnected), SIGKILL for the
    /// group after 10 s. Waits until the server is gone.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        let pid = child.id() as i32;
        // SAFETY: plain kill(2) on our own child and its process group.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; the negative pid names the process group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = child.wait();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A fresh cluster listening on 127.0.0.1, trusting every local user.
pub fn start_postgres() -> Postgres {
    start_postgres_on(&[], None)
}

/// A fresh cluster listening on 127.0.0.1 and on `extra` addresses, also
/// trusting clients from `trusted` (a CIDR like `10.231.0.0/16`).
pub fn start_postgres_on(extra: &[String], trusted: Option<&str>) -> Postgres {
    let bin = Path::new(BIN);
    assert!(
        bin.join("postgres").is_file() && bin.join("initdb").is_file(),
        "PostgreSQL 15 server binaries are missing from {}: apt-get install postgresql \
         (the store's PostgreSQL path is tested against a real server)",
        bin.display()
    );
    let (uid, gid) = ids_of("postgres");
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut listen = vec!["127.0.0.1".to_string()];
    listen.extend(extra.iter().cloned());
    let mut pg = Postgres {
        child: None,
        dir,
        port,
        listen: listen.join(","),
        uid,
        gid,
    };
    let data = pg.data();
    std::fs::create_dir(&data).unwrap();
    std::os::unix::fs::chown(&data, Some(uid), Some(gid)).unwrap();
    let init = pg
        .as_pg("initdb")
        .args(["--auth=trust", "-U", "postgres", "-D"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        init.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    if let Some(cidr) = trusted {
        use std::io::Write;
        let mut hba = std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("pg_hba.conf"))
            .unwrap();
        writeln!(hba, "host all all {cidr} trust").unwrap();
    }
    pg.start();
    pg
}
