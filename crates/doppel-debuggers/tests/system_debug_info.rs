//! `DebuggerConfig::system_debug_info`: with it off (the default) neither
//! native backend loads libc6-dbg's separate debug info, so a step in on a
//! call of `puts` steps over it in both; with it on, both enter the C
//! library's sources. Needs libc6-dbg (installed by `.ci/run`).

mod common;

use common::*;
use doppel_core::{ExecAction, Location, Output};
use doppel_debuggers::{DebuggerConfig, registry};

/// `puts("before")` is on line 4 of SEGV.
const PUTS_LINE: u32 = 4;

async fn step_into_puts(name: &str, system_debug_info: bool) -> doppel_core::ProgramState {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "sysdbg.c", SEGV);
    let cfg = DebuggerConfig {
        system_debug_info,
        ..Default::default()
    };
    let mut d = registry::create(name, &cfg).unwrap();
    assert!(matches!(d.load(&s).await, Output::Finished { .. }));
    d.set_breakpoint(&Location::line("sysdbg.c", PUTS_LINE)).await;
    let at = d.start().await;
    assert_eq!(at.paused().map(|p| p.location.line), Some(PUTS_LINE), "{name}: {at:?}");
    let out = d.exec(ExecAction::StepIn).await;
    d.shutdown().await;
    out.paused()
        .unwrap_or_else(|| panic!("{name}: step in did not pause: {out:?}"))
        .clone()
}

#[tokio::test]
async fn without_system_debug_info_step_in_passes_over_libc() {
    for name in ["gdb", "lldb"] {
        let st = step_into_puts(name, false).await;
        assert_eq!(st.location.file, "sysdbg.c", "{name}: {st:?}");
        assert_eq!(st.location.line, PUTS_LINE + 1, "{name}: {st:?}");
    }
}

#[tokio::test]
async fn with_system_debug_info_step_in_enters_libc() {
    assert!(
        std::path::Path::new("/usr/lib/debug/.build-id").is_dir(),
        "libc6-dbg is not installed"
    );
    for name in ["gdb", "lldb"] {
        let st = step_into_puts(name, true).await;
        assert_ne!(st.location.file, "sysdbg.c", "{name}: {st:?}");
        assert!(
            st.call_stack.first().is_some_and(|f| f.function.contains("puts")),
            "{name}: {:?}",
            st.call_stack
        );
    }
}
