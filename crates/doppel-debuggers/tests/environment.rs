//! The program under test sees the same environment, and so the same stack
//! addresses, under GDB and under LLDB.

mod common;

use common::*;
use doppel_core::{ExecAction, Output};
use doppel_debuggers::{DebuggerConfig, registry};

#[tokio::test]
async fn gdb_and_lldb_give_the_program_the_same_environment_and_stack() {
    let dir = tempfile::tempdir().unwrap();
    let s = compile(dir.path(), "env.c", ENV);
    let mut outputs = Vec::new();
    for name in ["gdb", "lldb"] {
        let mut d = registry::create(name, &DebuggerConfig::default()).unwrap();
        d.load(&s).await;
        let mut out = d.start().await;
        while let Output::Paused(_) = out {
            out = d.exec(ExecAction::Resume).await;
        }
        assert_eq!(
            out,
            Output::Finished {
                exit_code: Some(0),
                signal: None
            },
            "{name}"
        );
        outputs.push(d.program_output());
        d.shutdown().await;
    }
    assert!(
        outputs[0].contains("PATH=/usr/local/bin:/usr/bin:/bin"),
        "{}",
        outputs[0]
    );
    assert!(!outputs[0].contains("LINES="), "{}", outputs[0]);
    // Same stack address, same variables (LLDB keeps its environment in
    // another order, which does not change its size or the stack layout).
    let sorted = |s: &str| {
        let mut l: Vec<String> = s.lines().map(str::to_string).collect();
        l.sort();
        l
    };
    assert_eq!(outputs[0].lines().next(), outputs[1].lines().next(), "stack addresses");
    assert_eq!(sorted(&outputs[0]), sorted(&outputs[1]));
}
