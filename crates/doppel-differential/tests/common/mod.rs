//! What the real-debugger tests of this crate share: the campaign spec of a
//! GDB against LLDB (lldb-dap-22) run, sequential, with or without going on
//! past known policies.

use doppel_debuggers::DebuggerConfig;
use doppel_differential::DiffConfig;
use doppel_differential::campaign::CampaignSpec;

/// A one-job campaign `name` of GDB against lldb-dap-22 with the default
/// settings apart from `continue_past_policies` (issue 17 item 1), whose
/// sub-switches (realignment, no step out of main) follow their defaults.
pub fn gdb_lldb_spec(name: &str, continue_past_policies: bool) -> CampaignSpec {
    CampaignSpec {
        name: name.into(),
        debuggers: vec!["gdb".into(), "lldb".into()],
        debugger: DebuggerConfig::default(),
        diff: DiffConfig {
            continue_past_policies,
            ..DiffConfig::default()
        },
        jobs: 1,
        resume: false,
        executables: [("lldb".to_string(), "/usr/bin/lldb-dap-22".to_string())].into(),
        tools: Vec::new(),
    }
}
