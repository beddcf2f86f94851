//! Warm reuse in the LLDB backend (see `mod.rs`): the spare adapter, the
//! pool of servers, ending and starting sessions, preloading.

use super::*;

impl Lldb {
    pub(super) fn spawn_spare(&mut self) {
        if self.cfg.warm && !self.server_mode && self.spare.is_none() {
            self.spare = Some(tokio::spawn(start_stdio_session(self.exe.clone(), self.cfg.clone())));
        }
    }

    /// Keeps what the session said for the transcript and the program output.
    pub(super) fn drain(&mut self, s: &mut Session) {
        self.transcript.extend(s.dap.take_transcript());
        crate::backend::push_output(&mut self.output, &s.dap.program_output);
        s.dap.program_output.clear();
    }

    /// Ends the current run at once: kills its adapter, and in server mode the
    /// server with everything below it (a hung or crashed adapter).
    pub(super) fn kill(&mut self) {
        if let Some(mut s) = self.session.take() {
            self.drain(&mut s);
            if let Some(mut g) = s.guard.take() {
                g.kill_tree();
            }
        }
        if let Some(i) = self.current.take()
            && i < self.servers.len()
        {
            self.servers.remove(i).guard.kill_tree();
        }
        self.thread = None;
        self.launch_seq = None;
        self.inferior_pid = None;
    }

    /// Ends the current run cleanly: a stdio adapter is killed with its tree
    /// (waiting for its exit costs 300-500 ms); a server session is
    /// disconnected with `terminateDebuggee`, and the server is killed if it
    /// does not answer or the program survives.
    pub(super) async fn end_session(&mut self) {
        let Some(mut s) = self.session.take() else {
            return;
        };
        if s.guard.is_some() {
            self.session = Some(s);
            self.kill();
            return;
        }
        let bye = tokio::time::timeout(
            DISCONNECT_TIMEOUT,
            s.dap.request("disconnect", json!({"terminateDebuggee": true})),
        )
        .await;
        self.drain(&mut s);
        // The program (and its lldb-server) die now, not when the adapter's
        // session teardown gets to them.
        let server_pid = self.current_server().map(|v| v.guard.pid());
        if let Some((pid, server)) = self.inferior_pid.zip(server_pid)
            && process::descendants(server).contains(&pid)
        {
            process::kill_tree(pid);
        }
        match (bye, self.current_server()) {
            (Ok(Ok(_)), Some(server)) => {
                // The adapter tears the session down for another ~150 ms and
                // writes events meanwhile; closing the connection under it
                // kills lldb-dap 22 with SIGPIPE (see
                // DapClient::drain_until_closed). So the connection is read
                // to its end in the background while the next run starts; an
                // adapter that never closes it marks the server for
                // replacement.
                let (healthy, idle) = (server.healthy.clone(), server.idle.clone());
                tokio::spawn(async move {
                    if s.dap.drain_until_closed(DISCONNECT_TIMEOUT).await {
                        idle.store(true, Ordering::SeqCst);
                    } else {
                        healthy.store(false, Ordering::SeqCst);
                    }
                });
                self.current = None;
            }
            (bye, _) => {
                self.transcript.push(RawMessage::received(format!(
                    "[doppel] adapter server replaced: disconnect {}",
                    match bye {
                        Ok(Ok(_)) => "answered, but the server is gone".to_string(),
                        Ok(Err(e)) => e.to_string(),
                        Err(_) => format!("not answered within {DISCONNECT_TIMEOUT:?}"),
                    }
                )));
                self.kill();
            }
        }
        self.thread = None;
        self.launch_seq = None;
        self.inferior_pid = None;
    }

    /// A session for the next run: a connection to the (possibly new) server,
    /// the spare adapter, or a fresh one.
    pub(super) async fn new_session(&mut self) -> Result<Session, String> {
        if !self.server_mode {
            return match self.spare.take() {
                Some(h) => match h.await {
                    Ok(r) => r,
                    Err(e) => Err(format!("spare adapter task failed: {e}")),
                },
                None => start_stdio_session(self.exe.clone(), self.cfg.clone()).await,
            };
        }
        // An idle server of the pool, or a new one while the pool is not
        // full, or the first to become idle.
        let deadline = tokio::time::Instant::now() + self.cfg.action_timeout;
        let i = loop {
            self.servers.retain_mut(|s| {
                let keep = s.usable();
                if !keep {
                    s.guard.kill_tree();
                }
                keep
            });
            if let Some(i) = self.servers.iter().position(|s| s.idle.load(Ordering::SeqCst)) {
                break i;
            }
            if self.servers.len() < MAX_SERVERS {
                self.servers.push(start_server(&self.exe, &self.cfg).await?);
                break self.servers.len() - 1;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!(
                    "no adapter server finished its previous session within {:?}",
                    self.cfg.action_timeout
                ));
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let server = &mut self.servers[i];
        server.sessions += 1;
        server.idle.store(false, Ordering::SeqCst);
        match connect(server, &self.cfg).await {
            Ok(s) => {
                self.current = Some(i);
                Ok(s)
            }
            Err(e) => {
                // A server that cannot take a session is replaced once.
                self.servers.remove(i).guard.kill_tree();
                let server = start_server(&self.exe, &self.cfg).await?;
                let s = connect(&server, &self.cfg)
                    .await
                    .map_err(|e2| format!("{e}; with a new server: {e2}"))?;
                server.idle.store(false, Ordering::SeqCst);
                self.servers.push(server);
                self.current = Some(self.servers.len() - 1);
                Ok(s)
            }
        }
    }

    /// The preloaded run of `subject`, if one was launched for its binary:
    /// its session becomes the current one. A preload of another binary is
    /// discarded (disconnected in the background). `None` when there is
    /// nothing to adopt, or the preload failed (the next steps launch as
    /// usual).
    pub(super) async fn adopt_preloaded(&mut self, subject: &Subject) -> Option<()> {
        let p = self.preloaded.take()?;
        let same = subject.binary.as_ref() == Some(&p.binary);
        let index = self.servers.iter().position(|s| s.guard.pid() == p.server_pid);
        if !same {
            let idle = index.map(|i| (self.servers[i].idle.clone(), self.servers[i].healthy.clone()));
            tokio::spawn(async move {
                if let Ok(Ok((mut s, _))) = p.task.await {
                    let _ = tokio::time::timeout(
                        DISCONNECT_TIMEOUT,
                        s.dap.request("disconnect", json!({"terminateDebuggee": true})),
                    )
                    .await;
                    let closed = s.dap.drain_until_closed(DISCONNECT_TIMEOUT).await;
                    if let Some((idle, healthy)) = idle {
                        if closed {
                            idle.store(true, Ordering::SeqCst);
                        } else {
                            healthy.store(false, Ordering::SeqCst);
                        }
                    }
                } else if let Some((_, healthy)) = idle {
                    healthy.store(false, Ordering::SeqCst);
                }
            });
            return None;
        }
        let Some(i) = index else {
            p.task.abort();
            return None;
        };
        match p.task.await {
            Ok(Ok((session, seq))) => {
                self.session = Some(session);
                self.current = Some(i);
                self.launch_seq = Some(seq);
                self.transcript.push(RawMessage::received(
                    "[doppel] adopted the run launched ahead of this load (preload)",
                ));
                self.limit_inferior(false).await;
                Some(())
            }
            Ok(Err(e)) => {
                self.transcript.push(RawMessage::received(format!(
                    "[doppel] preload failed, launching again: {e}"
                )));
                self.servers[i].healthy.store(false, Ordering::SeqCst);
                None
            }
            Err(e) => {
                self.transcript
                    .push(RawMessage::received(format!("[doppel] preload task failed: {e}")));
                self.servers[i].healthy.store(false, Ordering::SeqCst);
                None
            }
        }
    }

    /// Launches the hinted next subject on another idle server of the pool
    /// (starting one while the pool is not full), in the background.
    pub(super) async fn start_preload(&mut self) {
        if !self.server_mode || self.preloaded.is_some() {
            return;
        }
        let Some(next) = self.next.clone() else { return };
        let Some(binary) = next.binary.clone() else { return };
        let Ok(args) = launch_args(&next, &self.cfg) else {
            return;
        };
        let current_pid = self.current_server().map(|s| s.guard.pid());
        let mut pick = self
            .servers
            .iter_mut()
            .position(|s| Some(s.guard.pid()) != current_pid && s.idle.load(Ordering::SeqCst) && s.usable());
        if pick.is_none() && self.servers.len() < MAX_SERVERS {
            match start_server(&self.exe, &self.cfg).await {
                Ok(server) => {
                    self.servers.push(server);
                    pick = Some(self.servers.len() - 1);
                }
                Err(_) => return,
            }
        }
        let Some(i) = pick else { return };
        let server = &mut self.servers[i];
        let Ok(stream) = open_stream(server, &self.cfg) else {
            server.healthy.store(false, Ordering::SeqCst);
            return;
        };
        server.sessions += 1;
        server.idle.store(false, Ordering::SeqCst);
        let task = tokio::spawn(preload_session(
            stream,
            server.stderr.clone(),
            args,
            self.cfg.action_timeout,
        ));
        self.preloaded = Some(Preloaded {
            binary,
            server_pid: server.guard.pid(),
            task,
        });
    }
}
