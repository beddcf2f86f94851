//! The browser of the Firefox backend (step 1 of `mod.rs`): a fresh
//! profile, `firefox-esr --headless` with its debugger server, the
//! watcher and resources of its one tab; and killing it.

use super::*;

/// The profile's preferences: the debugger server without a prompt, and
/// nothing that phones home or opens first-run pages.
pub(super) const PREFS: &[(&str, &str)] = &[
    ("devtools.debugger.remote-enabled", "true"),
    ("devtools.chrome.enabled", "true"),
    ("devtools.debugger.prompt-connection", "false"),
    ("browser.shell.checkDefaultBrowser", "false"),
    ("browser.startup.homepage_override.mstone", "\"ignore\""),
    ("browser.startup.page", "0"),
    ("startup.homepage_welcome_url", "\"\""),
    ("startup.homepage_welcome_url.additional", "\"\""),
    ("browser.aboutwelcome.enabled", "false"),
    ("browser.startup.firstrunSkipsHomepage", "true"),
    ("trailhead.firstrun.didSeeAboutWelcome", "true"),
    ("datareporting.policy.dataSubmissionEnabled", "false"),
    ("datareporting.healthreport.uploadEnabled", "false"),
    ("datareporting.policy.firstRunURL", "\"\""),
    ("toolkit.telemetry.enabled", "false"),
    ("toolkit.telemetry.unified", "false"),
    ("toolkit.telemetry.server", "\"\""),
    ("toolkit.telemetry.archive.enabled", "false"),
    ("app.update.enabled", "false"),
    ("app.update.auto", "false"),
    ("app.update.checkInstallTime", "false"),
    ("app.normandy.enabled", "false"),
    ("app.shield.optoutstudies.enabled", "false"),
    ("extensions.update.enabled", "false"),
    ("extensions.blocklist.enabled", "false"),
    ("extensions.getAddons.cache.enabled", "false"),
    ("network.captive-portal-service.enabled", "false"),
    ("network.connectivity-service.enabled", "false"),
    ("network.dns.disablePrefetch", "true"),
    ("network.prefetch-next", "false"),
    ("browser.safebrowsing.malware.enabled", "false"),
    ("browser.safebrowsing.phishing.enabled", "false"),
    ("browser.safebrowsing.downloads.enabled", "false"),
    ("browser.safebrowsing.update.enabled", "false"),
    ("browser.newtabpage.enabled", "false"),
    ("browser.newtabpage.activity-stream.feeds.telemetry", "false"),
    ("browser.newtabpage.activity-stream.telemetry", "false"),
    ("browser.ping-centre.telemetry", "false"),
    ("browser.search.update", "false"),
    ("browser.region.update.enabled", "false"),
    ("browser.sessionstore.resume_from_crash", "false"),
    ("browser.tabs.warnOnClose", "false"),
    ("media.gmp-manager.updateEnabled", "false"),
    ("security.remote_settings.crlite_filters.enabled", "false"),
    ("services.settings.server", "\"\""),
    ("geo.enabled", "false"),
    ("dom.disable_open_during_load", "false"),
    ("devtools.console.stdout.content", "false"),
];

/// The `user.js` of a fresh profile.
pub(super) fn user_js() -> String {
    PREFS
        .iter()
        .map(|(k, v)| format!("user_pref(\"{k}\", {v});\n"))
        .collect()
}

/// A free TCP port on the loopback (inside a fresh network namespace every
/// port is free; outside, this one was a moment ago).
pub(super) fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("finding a free port: {e}"))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("finding a free port: {e}"))
}

/// Kills the crash helpers of browser `pid`: Firefox starts
/// `crashhelper <browser pid> ...` detached from its process tree (parent
/// 1, a session of its own), so killing the tree leaves it behind for a
/// while. Found through `/proc` by that first argument.
pub(super) fn kill_crash_helpers(pid: u32) {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in dir.flatten() {
        let Some(other) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{other}/cmdline")) else {
            continue;
        };
        let mut args = cmd.split(|&b| b == 0);
        let exe = args.next().unwrap_or_default();
        let first = args.next().unwrap_or_default();
        if exe.ends_with(b"crashhelper") && first == pid.to_string().as_bytes() {
            // SAFETY: kill with a pid read from /proc; at worst ESRCH.
            unsafe { libc::kill(other, libc::SIGKILL) };
        }
    }
}

/// One running browser and its connection.
pub(super) struct Browser {
    pub(super) guard: ProcessGuard,
    pub(super) rdp: RdpClient,
    pub(super) _profile: tempfile::TempDir,
    pub(super) stderr: StderrTail,
    pub(super) tab: String,
    pub(super) breakpoint_list: String,
    /// Thread and target actors announced so far (of this and earlier pages).
    pub(super) threads: HashSet<String>,
    pub(super) targets: HashSet<String>,
}

pub(super) async fn start_browser(exe: &Path, cfg: &DebuggerConfig) -> Result<Browser, String> {
    let profile = tempfile::Builder::new()
        .prefix("doppel-firefox-")
        .tempdir()
        .map_err(|e| format!("temporary directory: {e}"))?;
    let p = profile.path();
    for d in ["home", "cache", "config", "data", "run"] {
        std::fs::create_dir_all(p.join(d)).map_err(|e| format!("profile directory: {e}"))?;
    }
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(p.join("run"), std::fs::Permissions::from_mode(0o700));
    }
    let port = free_port()?;
    let mut cmd = process::piped(&exe.to_string_lossy());
    cmd.args(["--headless", "--no-remote", "--profile"])
        .arg(p.join("profile"))
        .arg("--start-debugger-server")
        .arg(port.to_string())
        .arg("about:blank")
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    std::fs::create_dir_all(p.join("profile")).map_err(|e| format!("profile directory: {e}"))?;
    std::fs::write(p.join("profile").join("user.js"), user_js()).map_err(|e| format!("writing user.js: {e}"))?;
    crate::backend::fixed_environment(&mut cmd);
    cmd.env("HOME", p.join("home"))
        .env("XDG_CACHE_HOME", p.join("cache"))
        .env("XDG_CONFIG_HOME", p.join("config"))
        .env("XDG_DATA_HOME", p.join("data"))
        .env("XDG_RUNTIME_DIR", p.join("run"))
        .env("MOZ_HEADLESS", "1")
        .env("MOZ_CRASHREPORTER_DISABLE", "1")
        .env("MOZ_CRASHREPORTER", "0")
        .env("MOZ_DISABLE_AUTO_SAFE_MODE", "1");
    let mut guard = process::spawn(cmd, cfg.sandbox).map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let stderr = StderrTail::collect(guard.child_mut().stderr.take());
    let startup = cfg.action_timeout.max(MIN_STARTUP);
    let deadline = Instant::now() + startup;
    // The debugger server listens once the browser is up (~1 s).
    let stream = loop {
        if guard.has_exited() {
            return Err(format!("firefox exited before listening: {}", stderr.last_lines(5)));
        }
        match guard.connect_loopback(port, Duration::from_millis(500)) {
            Ok(s) => break s,
            Err(_) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(e) => {
                return Err(format!(
                    "firefox's debugger server on port {port} did not accept within {startup:?}: {e}"
                ));
            }
        }
    };
    stream.set_nonblocking(true).map_err(|e| format!("socket: {e}"))?;
    let stream = tokio::net::TcpStream::from_std(stream).map_err(|e| format!("socket: {e}"))?;
    let mut rdp = RdpClient::new(stream, startup);
    let setup = async {
        rdp.greeting().await?;
        // The tab list is empty for the first second or so.
        let tab = loop {
            let r = rdp.request("root", "listTabs", json!({})).await?;
            let tabs = r["tabs"].as_array().cloned().unwrap_or_default();
            let tab = tabs
                .iter()
                .find(|t| t["selected"] == true)
                .or(tabs.first())
                .and_then(|t| t["actor"].as_str())
                .map(str::to_string);
            if let Some(t) = tab {
                break t;
            }
            if Instant::now() > deadline {
                return Err(RdpError::Timeout(format!("firefox listed no tab within {startup:?}")));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let w = rdp
            .request(&tab, "getWatcher", json!({"isServerTargetSwitchingEnabled": true}))
            .await?;
        let watcher = w["actor"]
            .as_str()
            .ok_or_else(|| RdpError::Protocol(format!("getWatcher answered {w}")))?
            .to_string();
        rdp.request(&watcher, "watchTargets", json!({"targetType": "frame"}))
            .await?;
        rdp.request(
            &watcher,
            "watchResources",
            json!({"resourceTypes": ["source", "thread-state", "console-message", "error-message"]}),
        )
        .await?;
        let bl = rdp.request(&watcher, "getBreakpointListActor", json!({})).await?;
        let breakpoint_list = bl["breakpointList"]["actor"]
            .as_str()
            .ok_or_else(|| RdpError::Protocol(format!("getBreakpointListActor answered {bl}")))?
            .to_string();
        Ok::<_, RdpError>((tab, breakpoint_list))
    };
    let (tab, breakpoint_list) = match tokio::time::timeout_at(deadline, setup).await {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => return Err(format!("setting up firefox: {e}; stderr: {}", stderr.last_lines(5))),
        Err(_) => return Err(format!("setting up firefox took over {startup:?}")),
    };
    rdp.set_timeout(cfg.action_timeout);
    Ok(Browser {
        guard,
        rdp,
        _profile: profile,
        stderr,
        tab,
        breakpoint_list,
        threads: HashSet::new(),
        targets: HashSet::new(),
    })
}
