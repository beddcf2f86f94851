//! Network confinement of tools ([`Sandbox`]): a fresh network namespace
//! with only loopback per tool, or one such namespace shared by the
//! short-lived tools of this doppel process. Needs root; without it tools
//! run unconfined and [`super::ProcessGuard::network_isolated`] says so.

use serde::{Deserialize, Serialize};
use std::io;

/// How a tool process is confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sandbox {
    /// Run the tool (and so the program it debugs) in a new network namespace
    /// that has only a loopback interface. Needs `CAP_SYS_ADMIN`.
    pub isolate_network: bool,
    /// With `isolate_network`: enter the one loopback-only namespace this
    /// doppel process keeps for short-lived tools ([`Sandbox::shared_loopback`])
    /// instead of creating one. Creating and tearing down a namespace per
    /// process costs more than a small script's whole run (a one-shot
    /// JavaScript shell: about 2 ms of 4, plus the kernel's asynchronous
    /// cleanup); the tools sharing it see each other's loopback only.
    #[serde(default)]
    pub shared_namespace: bool,
}

impl Default for Sandbox {
    /// A network namespace of the tool's own.
    fn default() -> Self {
        Self {
            isolate_network: true,
            shared_namespace: false,
        }
    }
}

impl Sandbox {
    /// No network isolation.
    pub const NONE: Sandbox = Sandbox {
        isolate_network: false,
        shared_namespace: false,
    };

    /// The loopback-only network namespace shared by short-lived tools (a
    /// process per script): as isolated from the outside as
    /// [`Sandbox::default`], without a namespace per process.
    pub fn shared_loopback() -> Sandbox {
        Sandbox {
            isolate_network: true,
            shared_namespace: true,
        }
    }
}

/// The shared loopback-only network namespace, created on first use by a
/// thread of its own (namespaces are per task) and kept open for the life
/// of doppel; `None` when it cannot be created (not root).
pub(super) fn shared_namespace() -> Option<std::os::fd::RawFd> {
    use std::os::fd::{AsRawFd, OwnedFd};
    static NS: std::sync::OnceLock<Option<OwnedFd>> = std::sync::OnceLock::new();
    NS.get_or_init(|| {
        if !can_isolate_network() {
            return None;
        }
        std::thread::spawn(|| {
            // SAFETY: unshare affects the calling thread only, which ends here.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                tracing::warn!("shared network namespace: {}", io::Error::last_os_error());
                return None;
            }
            loopback_up();
            std::fs::File::open("/proc/thread-self/ns/net").ok().map(OwnedFd::from)
        })
        .join()
        .ok()
        .flatten()
    })
    .as_ref()
    .map(|f| f.as_raw_fd())
}

pub(super) fn can_isolate_network() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Brings up `lo` in the current (fresh) network namespace. Best effort: a
/// failure leaves the namespace without loopback, which still isolates.
pub(super) fn loopback_up() {
    // SAFETY: socket/ioctl/close with a zeroed, properly sized ifreq.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        if fd < 0 {
            return;
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo\0".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(fd, libc::SIOCSIFFLAGS, &mut req);
        }
        libc::close(fd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::run;
    use std::time::Duration;
    use tokio::process::Command;

    #[tokio::test]
    async fn isolated_network_has_only_loopback() {
        assert!(
            can_isolate_network(),
            "network isolation needs root; the tests run as root"
        );
        let mut cmd = Command::new("sh");
        // /proc/self/net/dev lists the interfaces of the reader's namespace.
        cmd.arg("-c").arg("tail -n +3 /proc/self/net/dev | cut -d: -f1");
        let done = run(cmd, Duration::from_secs(5), Sandbox::default()).await.unwrap();
        assert_eq!(done.stdout.split_whitespace().collect::<Vec<_>>(), vec!["lo"]);
    }

    /// The namespace (`/proc/self/ns/net`) and interfaces a tool sees.
    async fn network_of(sandbox: Sandbox) -> (String, Vec<String>) {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("readlink /proc/self/ns/net; tail -n +3 /proc/self/net/dev | cut -d: -f1");
        let done = run(cmd, Duration::from_secs(5), sandbox).await.unwrap();
        let mut words = done.stdout.split_whitespace().map(String::from);
        (words.next().unwrap(), words.collect())
    }

    #[tokio::test]
    async fn short_lived_tools_share_one_loopback_only_namespace() {
        assert!(
            can_isolate_network(),
            "network isolation needs root; the tests run as root"
        );
        let host = std::fs::read_link("/proc/self/ns/net")
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let (a, a_if) = network_of(Sandbox::shared_loopback()).await;
        let (b, b_if) = network_of(Sandbox::shared_loopback()).await;
        let (own, _) = network_of(Sandbox::default()).await;
        assert_eq!(a, b, "one shared namespace");
        assert_ne!(a, host);
        assert_ne!(own, a, "a tool of its own gets a namespace of its own");
        assert_eq!(a_if, ["lo"]);
        assert_eq!(b_if, ["lo"]);
        // Loopback is up in it: a listener in one tool is reached from another.
        let mut listen = Command::new("python3");
        listen.args([
            "-c",
            "import socket; s = socket.socket(); s.bind(('127.0.0.1', 47111)); s.listen(); print('up', flush=True); c, _ = s.accept(); print(c.recv(8).decode(), flush=True)",
        ]);
        let server = tokio::spawn(run(listen, Duration::from_secs(10), Sandbox::shared_loopback()));
        let mut connect = Command::new("python3");
        connect.args([
            "-c",
            "import socket, time\nfor _ in range(50):\n  try:\n    s = socket.create_connection(('127.0.0.1', 47111)); s.sendall(b'hello'); break\n  except OSError: time.sleep(0.1)",
        ]);
        run(connect, Duration::from_secs(10), Sandbox::shared_loopback())
            .await
            .unwrap();
        let served = server.await.unwrap().unwrap();
        assert_eq!(served.stdout, "up\nhello\n");
    }
}
