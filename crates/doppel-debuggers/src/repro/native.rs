//! The native reproducer: the C program, a build
//! script, a GDB command file, an LLDB command file, and `run.sh` that shows
//! the divergence with the plain command-line debuggers (no doppel needed).
//!
//! The command files replay the run's actions in order. After every pause
//! they print the call stack and the frame's variables, and each action is
//! preceded by a marker line `=== [N] action ===`; the action after which the
//! debuggers diverged is marked `<-- divergence`.

use super::{Reproducer, verdict_summary};
use crate::backend::lldb::RESTOP_ABSORBED;
use doppel_core::{Action, EventKind, ExecAction, RunRecord};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Builds the reproducer of a run.
///
/// Errors: the run has no traces (a subject error), or no source text was
/// stored with it.
pub(super) fn build(run: &RunRecord) -> Result<Reproducer, String> {
    let trace = run
        .traces
        .first()
        .ok_or("the run has no traces (the subject did not build)")?;
    let input = crate::record::DebuggerInput::of(run)?;
    let source = input.source_text.as_str();
    let name = &run.subject.source_name;
    let divergent = run.verdict.finding().and_then(|f| f.action_index);
    let actions: Vec<&Action> = trace.actions().collect();
    let absorbed = absorbed_restops(trace);
    let gdb_trace = run.traces.iter().find(|t| t.debugger.name == "gdb").unwrap_or(trace);
    let outermost = outermost_before(gdb_trace);
    let realigned_in = |name: &str| {
        run.traces
            .iter()
            .find(|t| t.debugger.name == name)
            .map(realignments)
            .unwrap_or_default()
    };
    let (gdb_realigned, lldb_realigned) = (realigned_in("gdb"), realigned_in("lldb"));
    let build = build_command(&run.subject.build, name);

    let mut gdb = String::from(
        "# GDB command file written by `doppel repro`.\n# Run: gdb -q -batch -nx -x repro.gdb\nset pagination off\nset confirm off\nset debuginfod enabled off\nset breakpoint pending on\nfile ./prog\n",
    );
    let mut lldb = String::from(
        "# LLDB command file written by `doppel repro`.\n# Run: lldb -b -s repro.lldb\ntarget create ./prog\n",
    );
    // The run's view of the system libraries: without their separate debug
    // info unless the campaign asked for it (DebuggerConfig::system_debug_info).
    if !input.debugger.system_debug_info {
        gdb.insert_str(
            gdb.find("file ./prog").unwrap_or(gdb.len()),
            "set debug-file-directory /nonexistent\n",
        );
        lldb.insert_str(
            lldb.find("target create").unwrap_or(lldb.len()),
            "settings set symbols.enable-external-lookup false\n",
        );
    }
    let mut numbers: HashMap<u32, usize> = HashMap::new();
    let mut next_number = 1;
    for (i, a) in actions.iter().enumerate() {
        let marker = format!(
            "=== [{i}] {a}{} ===",
            if Some(i) == divergent { "   <-- divergence" } else { "" }
        );
        writeln!(gdb, "echo \\n{}\\n", marker.replace('\\', "\\\\")).ok();
        writeln!(lldb, "script print({marker:?})").ok();
        match a {
            Action::SetBreakpoint { at } => {
                numbers.insert(at.line, next_number);
                next_number += 1;
                writeln!(gdb, "break {}:{}", name, at.line).ok();
                writeln!(lldb, "breakpoint set --file {} --line {}", name, at.line).ok();
            }
            Action::RemoveBreakpoint { at } => {
                let n = numbers.get(&at.line).copied().unwrap_or(0);
                writeln!(gdb, "delete {n}").ok();
                writeln!(lldb, "breakpoint delete {n}").ok();
            }
            Action::Start => {
                writeln!(gdb, "run").ok();
                writeln!(lldb, "process launch").ok();
                show_state(&mut gdb, &mut lldb);
            }
            Action::Exec { exec } => {
                let (g, l) = exec_commands(*exec);
                if *exec == ExecAction::StepOut && outermost.contains(&i) {
                    // GDB refuses `finish` in the outermost frame with an
                    // error, and an error ends a command file run with -batch
                    // (the run goes on past it: `step_out_of_main`).
                    writeln!(
                        gdb,
                        "# GDB refuses \"finish\" in the outermost frame; caught so that the file goes on\npython\ntry:\n    gdb.execute(\"finish\")\nexcept gdb.error as e:\n    print(e)\nend"
                    )
                    .ok();
                } else {
                    writeln!(gdb, "{g}").ok();
                }
                writeln!(lldb, "{l}").ok();
                show_state(&mut gdb, &mut lldb);
                if absorbed.contains(&i) {
                    // doppel's LLDB backend absorbed the re-stop here
                    // (DebuggerConfig::absorb_breakpoint_restop): the
                    // command file issues the action once more, as it did.
                    writeln!(
                        lldb,
                        "# LLDB 20+ stopped again, without moving, at the breakpoint the previous step\n\
                         # ended on (a step onto a breakpoint does not count as hitting it). doppel\n\
                         # absorbed that stop and issued the action once more:\n{l}"
                    )
                    .ok();
                    lldb.push_str(LLDB_STATE);
                }
                // Realignments after a policy divergence the run went on past
                // (`return_lands_mid_line`, `resume_completes_interrupted_step`):
                // the same action once more, in the debugger that stopped short only.
                for (e, _) in gdb_realigned.get(&i).into_iter().flatten() {
                    writeln!(
                        gdb,
                        "# doppel realigned GDB with the others (policy continued): once more\n{}",
                        exec_commands(*e).0
                    )
                    .ok();
                    gdb.push_str("backtrace\ninfo args\ninfo locals\n");
                }
                for (e, absorbed) in lldb_realigned.get(&i).into_iter().flatten() {
                    let l = exec_commands(*e).1;
                    writeln!(
                        lldb,
                        "# doppel realigned LLDB with the others (policy continued): once more\n{l}"
                    )
                    .ok();
                    lldb.push_str(LLDB_STATE);
                    if *absorbed {
                        writeln!(
                            lldb,
                            "# LLDB stopped again without moving; doppel issued it once more:\n{l}"
                        )
                        .ok();
                        lldb.push_str(LLDB_STATE);
                    }
                }
            }
        }
    }
    if actions.iter().any(|a| matches!(a, Action::Start)) {
        gdb.push_str("kill\n");
        lldb.push_str("process kill\n");
    }
    gdb.push_str("quit\n");
    lldb.push_str("quit\n");

    let lldb_cli = lldb_cli(run);
    let run_sh = format!(
        "#!/bin/sh\n# Reproduces doppel run {id}: builds the program and replays the actions in gdb and lldb.\nset -u\ncd \"$(dirname \"$0\")\"\n{build}\necho '##### gdb'\ngdb -q -batch -nx -x repro.gdb 2>&1 | tee gdb.out\necho '##### lldb'\n{lldb_cli} -b -s repro.lldb 2>&1 | tee lldb.out\n",
        id = run.id.map(|i| i.to_string()).unwrap_or_default(),
    );
    let readme = readme(run, &build, &lldb_cli);
    Ok(Reproducer {
        files: vec![
            (name.clone(), source.to_string()),
            (
                "build.sh".into(),
                format!("#!/bin/sh\ncd \"$(dirname \"$0\")\"\n{build}\n"),
            ),
            ("repro.gdb".into(), gdb),
            ("repro.lldb".into(), lldb),
            ("run.sh".into(), run_sh),
            ("README.md".into(), readme),
        ],
    })
}

/// Indices (as of [`doppel_core::Trace::actions`]) of the actions issued
/// while the program was paused in its outermost frame (a call stack of one
/// frame, `main`).
fn outermost_before(trace: &doppel_core::Trace) -> Vec<usize> {
    let mut depth = None::<usize>;
    let mut index = None::<usize>;
    let mut out = Vec::new();
    for e in &trace.events {
        match &e.kind {
            EventKind::Action(_) => {
                index = Some(index.map_or(0, |i| i + 1));
                if depth == Some(1)
                    && let Some(i) = index
                {
                    out.push(i);
                }
            }
            EventKind::Output(o) => depth = o.paused().map(|s| s.call_stack.len()),
            EventKind::PolicyNote(_) | EventKind::Realignment(_) | EventKind::FindingNote { .. } => {}
        }
    }
    out
}

/// Indices (as of [`doppel_core::Trace::actions`]) of the actions whose
/// answer came after an absorbed LLDB re-stop: the backend sent them twice.
fn absorbed_restops(trace: &doppel_core::Trace) -> Vec<usize> {
    let mut index = None::<usize>;
    let mut realigned = false;
    let mut out = Vec::new();
    for e in &trace.events {
        match &e.kind {
            EventKind::Action(_) => {
                index = Some(index.map_or(0, |i| i + 1));
                realigned = false;
            }
            EventKind::Output(_) => {
                if let Some(i) = index
                    && !realigned
                    && e.raw.iter().any(|m| m.text.starts_with(RESTOP_ABSORBED))
                {
                    out.push(i);
                }
            }
            EventKind::Realignment(_) => realigned = true,
            EventKind::PolicyNote(_) | EventKind::FindingNote { .. } => {}
        }
    }
    out
}

/// Per action index (as of [`doppel_core::Trace::actions`]), the execution
/// actions issued to this debugger alone after it
/// ([`EventKind::Realignment`]), each with whether the backend absorbed an
/// LLDB re-stop in its answer (and so issued it twice).
fn realignments(trace: &doppel_core::Trace) -> HashMap<usize, Vec<(ExecAction, bool)>> {
    let mut index = None::<usize>;
    let mut out: HashMap<usize, Vec<(ExecAction, bool)>> = HashMap::new();
    let mut pending = false;
    for e in &trace.events {
        match &e.kind {
            EventKind::Action(_) => {
                index = Some(index.map_or(0, |i| i + 1));
                pending = false;
            }
            EventKind::Realignment(Action::Exec { exec }) => {
                if let Some(i) = index {
                    out.entry(i).or_default().push((*exec, false));
                    pending = true;
                }
            }
            EventKind::Output(_) => {
                if pending && let Some(last) = index.and_then(|i| out.get_mut(&i)).and_then(|v| v.last_mut()) {
                    last.1 = e.raw.iter().any(|m| m.text.starts_with(RESTOP_ABSORBED));
                    pending = false;
                }
            }
            EventKind::Realignment(_) | EventKind::PolicyNote(_) | EventKind::FindingNote { .. } => {}
        }
    }
    out
}

/// GDB's and LLDB's commands for an execution action.
fn exec_commands(exec: ExecAction) -> (&'static str, &'static str) {
    match exec {
        ExecAction::Resume => ("continue", "process continue"),
        ExecAction::StepIn => ("step", "thread step-in"),
        ExecAction::StepOver => ("next", "thread step-over"),
        ExecAction::StepOut => ("finish", "thread step-out"),
    }
}

/// LLDB's commands that show the state after a pause.
const LLDB_STATE: &str = "thread backtrace\nframe variable\n";

fn show_state(gdb: &mut String, lldb: &mut String) {
    gdb.push_str("backtrace\ninfo args\ninfo locals\n");
    lldb.push_str(LLDB_STATE);
}

/// `gcc -O0 -g` + file → `gcc -O0 -g -o prog prog.c -lm`.
fn build_command(recipe: &str, name: &str) -> String {
    let recipe = if recipe.trim().is_empty() {
        "gcc -O0 -g"
    } else {
        recipe.trim()
    };
    format!("{recipe} -o prog {name} -lm")
}

/// The CLI that belongs to the LLDB adapter that ran (`lldb-dap-22` → `lldb-22`).
fn lldb_cli(run: &RunRecord) -> String {
    run.debuggers
        .iter()
        .find(|d| d.name == "lldb")
        .and_then(|d| {
            Path::new(&d.executable)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
        })
        .map(|exe| exe.replace("lldb-dap", "lldb").replace("lldb-vscode", "lldb"))
        .unwrap_or_else(|| "lldb".into())
}

fn readme(run: &RunRecord, build: &str, lldb_cli: &str) -> String {
    let mut s = String::from("# doppel reproducer\n\n");
    s.push_str(&verdict_summary(run));
    writeln!(
        s,
        "Subject `{}`, seed {}, built with `{}`.\n",
        run.subject.name, run.seed, run.subject.build
    )
    .ok();
    s.push_str("Debuggers:\n\n");
    for d in &run.debuggers {
        writeln!(s, "- {}: {} ({}, `{}`)", d.name, d.version, d.protocol, d.executable).ok();
    }
    writeln!(
        s,
        "\nSteps:\n\n1. `{build}`\n2. `gdb -q -batch -nx -x repro.gdb`\n3. `{lldb_cli} -b -s repro.lldb`\n\nor simply `sh run.sh`. Compare the output after the marker `<-- divergence`.\ndoppel drove GDB through GDB/MI and LLDB through its DAP adapter; the command files use the\nequivalent CLI commands (break/delete/run/step/next/finish/continue and their LLDB forms)."
    )
    .ok();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::{Event, Output, RawMessage, ToolInfo, Trace};

    fn event(kind: EventKind, raw: Vec<RawMessage>) -> Event {
        Event { t_ms: 0.0, kind, raw }
    }

    #[test]
    fn absorbed_restops_are_found_by_the_action_they_answer() {
        let resume = || {
            EventKind::Action(Action::Exec {
                exec: ExecAction::Resume,
            })
        };
        let done = || {
            EventKind::Output(Output::Finished {
                exit_code: Some(0),
                signal: None,
            })
        };
        let mark = RawMessage::received(format!("{RESTOP_ABSORBED}; 'continue' sent once more"));
        let trace = Trace {
            debugger: ToolInfo {
                name: "lldb".into(),
                version: "22".into(),
                protocol: "DAP".into(),
                executable: "lldb-dap-22".into(),
            },
            events: vec![
                event(EventKind::Action(Action::Start), vec![]),
                event(done(), vec![RawMessage::received("[doppel] something else")]),
                event(resume(), vec![]),
                event(done(), vec![RawMessage::sent("{}"), mark.clone()]),
                event(resume(), vec![]),
                event(done(), vec![]),
            ],
        };
        assert_eq!(absorbed_restops(&trace), vec![1]);
        // A marker that arrived with an action (never written so) counts for nothing.
        let mut odd = trace.clone();
        odd.events[4].raw.push(mark);
        assert_eq!(absorbed_restops(&odd), vec![1]);
    }
}
