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

/// `text` written as `dir/name` and prepared as a C subject built with
/// `gcc -O0 -g` (its build must succeed).
#[allow(dead_code)]
pub async fn prepared_c(dir: &std::path::Path, name: &str, text: &str) -> doppel_differential::campaign::Prepared {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let cache = doppel_lang::c::BuildCache::new(dir.join("cache"));
    let recipe = doppel_lang::c::BuildRecipe::parse("gcc -O0 -g").unwrap();
    let p = doppel_lang::prepare::prepare_one(&cache, &path, name, &recipe)
        .await
        .unwrap();
    assert!(p.error.is_none(), "{:?}", p.error);
    p
}

/// A `step over` action.
#[allow(dead_code)]
pub fn over() -> doppel_core::Action {
    doppel_core::Action::Exec {
        exec: doppel_core::ExecAction::StepOver,
    }
}
