//! `doppel backends`: what is installed, versions, protocols, capabilities.

use crate::settings::Settings;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use doppel_debuggers::{DebuggerConfig, registry};
use std::process::ExitCode;

pub fn run(_s: &Settings) -> anyhow::Result<ExitCode> {
    let cfg = DebuggerConfig::default();
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(["backend", "status", "version", "protocol", "executable", "capabilities"]);
    for e in registry::all() {
        match (e.probe)(&cfg) {
            Ok(info) => {
                let caps = (e.create)(&cfg)
                    .map(|d| {
                        let c = d.capabilities();
                        let mut v = vec![
                            format!("columns: {}", c.columns),
                            format!("warm reuse: {}", c.warm_reuse),
                            format!("argument flags: {}", c.argument_flags),
                        ];
                        v.extend(c.notes);
                        v.join("\n")
                    })
                    .unwrap_or_else(|e| e.to_string());
                t.add_row([
                    e.name.to_string(),
                    "installed".into(),
                    info.version,
                    info.protocol,
                    info.executable,
                    caps,
                ]);
            }
            Err(err) => {
                t.add_row([
                    e.name.to_string(),
                    "missing".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                    err.to_string(),
                ]);
            }
        }
    }
    println!("{t}");
    // How processes are contained (docs/reliability.md).
    match crate::CONTAINMENT.get() {
        Some(doppel_core::cgroup::Containment::Group(dir)) => {
            println!("processes: campaign group {} (killed when doppel exits)", dir.display())
        }
        Some(doppel_core::cgroup::Containment::Unavailable(why)) => {
            println!("processes: no campaign group ({why}); direct children have PR_SET_PDEATHSIG")
        }
        None => {}
    }
    match doppel_core::cgroup::program_groups_unavailable() {
        None => println!(
            "programs under test: a cgroup each (pids.max {}), killed at the end of the run",
            doppel_core::cgroup::PROGRAM_PIDS_MAX
        ),
        Some(why) => println!("programs under test: rlimits only ({why})"),
    }
    Ok(ExitCode::SUCCESS)
}
