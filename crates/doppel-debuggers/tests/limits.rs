//! The program under test runs with its resource limits under every native
//! backend: a CPU-bound loop is stopped by its CPU-time limit (SIGXCPU),
//! well before the action timeout, instead of running until doppel gives up.

mod common;

use common::*;
use doppel_core::Output;
use doppel_core::process::Limits;
use doppel_debuggers::{DebuggerConfig, registry};
use std::time::{Duration, Instant};

#[tokio::test]
async fn the_cpu_limit_stops_a_spinning_program_under_gdb_and_lldb() {
    for name in ["gdb", "lldb"] {
        let dir = tempfile::tempdir().unwrap();
        let s = compile(dir.path(), "spin.c", LOOP);
        let cfg = DebuggerConfig {
            action_timeout: Duration::from_secs(20),
            limits: Limits {
                cpu_seconds: 1,
                ..Limits::default()
            },
            ..Default::default()
        };
        let mut d = registry::create(name, &cfg).unwrap();
        assert!(matches!(d.load(&s).await, Output::Finished { .. }), "{name}");
        let t = Instant::now();
        let out = d.start().await;
        let stopped_by_limit = match &out {
            Output::Paused(st) => matches!(st.signal.as_deref(), Some("SIGXCPU" | "SIGKILL")),
            Output::Finished { signal: Some(s), .. } => s == "SIGXCPU" || s == "SIGKILL",
            // LLDB 22 reports a death by SIGKILL as "exited with status = 9".
            Output::Finished {
                exit_code: Some(9),
                signal: None,
            } => name == "lldb",
            _ => false,
        };
        assert!(stopped_by_limit, "{name}: {out:?}");
        assert!(t.elapsed() < Duration::from_secs(10), "{name}: took {:?}", t.elapsed());
        d.shutdown().await;
    }
}
