//! The control run before a differential or metamorphic run (issue 17,
//! "What must exist" item 2): the program is run once in every tool under
//! test (or, for metamorphic testing, every program in the one tool) with no
//! breakpoint, through the [`Debugger`] trait (load, start, resume to the
//! end). If it ends differently (exit status, signal, captured output of a
//! native program), the
//! program itself behaves differently in the tools, for example node 20's
//! V8 lacking `Set.prototype.intersection` where Chromium 156 has it, and a
//! "finished vs paused" divergence would say nothing about the debuggers:
//! the pair is not comparable ([`Verdict::NotComparable`]).
//!
//! Only programs that end in every tool are judged. A tool that fails
//! (crash, timeout) or never ends in the control run is not a difference of
//! the program: the run goes ahead and shows it as usual. A campaign keeps
//! one control result per (program, tools) in a [`ControlCache`], so the
//! control runs once per program, not once per seed.

use crate::Debugger;
use doppel_core::{ControlRun, ExecAction, Language, Output, Subject, Verdict};
use futures::future::join_all;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Resumes issued after `start` before the control gives up on a program
/// that keeps pausing (a `debugger;` statement in a loop).
pub const MAX_RESUMES: usize = 100;

/// Runs the program once in every debugger with no breakpoint and returns
/// how it ended in each, in the debuggers' order. The debuggers are reset
/// afterwards, their transcripts dropped, and told that the program is
/// loaded next ([`Debugger::preload`]: the run that follows the control).
pub async fn run(debuggers: &mut [Box<dyn Debugger>], subject: &Subject) -> Vec<ControlRun> {
    let ends = join_all(debuggers.iter_mut().map(|d| one(d.as_mut(), subject))).await;
    join_all(debuggers.iter_mut().map(|d| d.reset())).await;
    for d in debuggers.iter_mut() {
        d.take_transcript();
        d.preload(subject);
    }
    ends
}

/// Runs the program once in the one debugger `d` with no breakpoint and
/// returns how it ended; the debugger is reset afterwards and its
/// transcript dropped (no preload: what runs next may be another program,
/// a metamorphic test's follow-up).
pub async fn run_in(d: &mut dyn Debugger, subject: &Subject) -> ControlRun {
    let end = one(d, subject).await;
    d.reset().await;
    d.take_transcript();
    end
}

async fn one(d: &mut dyn Debugger, subject: &Subject) -> ControlRun {
    let mut end = crate::load_confirmed(d, subject).await;
    if !matches!(end, Output::Failed { .. }) {
        end = d.start().await;
        let mut resumes = 0;
        while matches!(end, Output::Paused(_)) && resumes < MAX_RESUMES {
            end = d.exec(ExecAction::Resume).await;
            resumes += 1;
        }
    }
    ControlRun {
        debugger: d.info().name.clone(),
        program_output: d.program_output(),
        end,
    }
}

/// Whether the captured outputs of `language`'s programs are compared: a
/// native program's output is its own bytes in every debugger, but the
/// JavaScript backends render `console.*` calls each their own way (node's
/// `util.inspect`, `{ a: 1 }`; Chromium's descriptions, `Object`; node's
/// uncaught-exception stack vs Chromium's `Uncaught ...` line), so there
/// only the exit statuses are compared.
pub fn compares_output(language: Language) -> bool {
    language != Language::JavaScript
}

/// Why the control runs show the program behaving differently, or `None`
/// when they agree or cannot be judged (a tool failed or the program did
/// not end in it). Exit statuses and signals are compared; with
/// `compare_output` ([`compares_output`]) the captured outputs too, when
/// every tool captured some.
pub fn disagreement(controls: &[ControlRun], compare_output: bool) -> Option<String> {
    let ended: Vec<(&str, &Option<i32>, &Option<String>)> = controls
        .iter()
        .filter_map(|c| match &c.end {
            Output::Finished { exit_code, signal } => Some((c.debugger.as_str(), exit_code, signal)),
            _ => None,
        })
        .collect();
    if controls.len() < 2 || ended.len() != controls.len() {
        return None;
    }
    let status = |(_, code, signal): &(&str, &Option<i32>, &Option<String>)| match (code, signal) {
        (_, Some(s)) => format!("signal {s}"),
        (Some(c), None) => format!("exit code {c}"),
        (None, None) => "no exit status".to_string(),
    };
    if ended.iter().any(|e| status(e) != status(&ended[0])) {
        let each: Vec<String> = ended.iter().map(|e| format!("{} {}", e.0, status(e))).collect();
        return Some(format!(
            "the program ends differently without breakpoints: {}",
            each.join(", ")
        ));
    }
    if compare_output
        && controls.iter().all(|c| !c.program_output.trim().is_empty())
        && controls
            .iter()
            .any(|c| c.program_output.trim() != controls[0].program_output.trim())
    {
        let names: Vec<&str> = controls.iter().map(|c| c.debugger.as_str()).collect();
        return Some(format!(
            "the program prints differently without breakpoints in {}",
            names.join(" and ")
        ));
    }
    None
}

/// Why control runs of programs in one and the same tool show them ending
/// differently, or `None` when they agree or cannot be judged (the tool
/// failed or a program did not end). Metamorphic testing (ISSTA'19
/// section 3: the follow-up program must behave as the initial one) runs
/// the initial and the follow-up program, or one program twice, in the
/// debugger under test: exit statuses and signals are compared as in
/// [`disagreement`], and so are the captured outputs, always, even for
/// JavaScript and even when only one is empty: one tool renders both runs'
/// output alike, so any difference is the programs'.
pub fn same_tool_disagreement(controls: &[ControlRun]) -> Option<String> {
    if let Some(reason) = disagreement(controls, false) {
        return Some(reason);
    }
    if controls.len() < 2 || !controls.iter().all(|c| matches!(c.end, Output::Finished { .. })) {
        return None;
    }
    let first = controls[0].program_output.trim();
    controls.iter().any(|c| c.program_output.trim() != first).then(|| {
        let names: Vec<&str> = controls.iter().map(|c| c.debugger.as_str()).collect();
        format!(
            "the program prints differently without breakpoints in {}",
            names.join(" and ")
        )
    })
}

/// The verdict of a run of `subject` whose control runs disagree, `None`
/// when the run can go ahead.
pub fn verdict(controls: &[ControlRun], subject: &Subject) -> Option<Verdict> {
    disagreement(controls, compares_output(subject.language)).map(|reason| Verdict::NotComparable {
        reason,
        controls: controls.to_vec(),
    })
}

/// Control results of a campaign, one per key (program hash and tools):
/// the first job to need one runs it, the others wait for it.
#[derive(Default)]
pub struct ControlCache {
    cells: Mutex<HashMap<String, Arc<OnceCell<Vec<ControlRun>>>>>,
}

impl ControlCache {
    /// The control runs for `key`, running them on `debuggers` if no job
    /// has yet.
    pub async fn get(&self, key: &str, debuggers: &mut [Box<dyn Debugger>], subject: &Subject) -> Vec<ControlRun> {
        let cell = {
            // A poisoned lock only means another job panicked while holding
            // it; the map itself is still whole.
            let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
            cells.entry(key.to_string()).or_default().clone()
        };
        cell.get_or_init(|| run(debuggers, subject)).await.clone()
    }

    /// The control run of `key` in the one debugger `d` ([`run_in`]),
    /// running it if no job has yet.
    pub async fn get_in(&self, key: &str, d: &mut dyn Debugger, subject: &Subject) -> ControlRun {
        let cell = {
            let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
            cells.entry(key.to_string()).or_default().clone()
        };
        let runs = cell.get_or_init(|| async { vec![run_in(d, subject).await] }).await;
        runs.first().cloned().unwrap_or_else(|| ControlRun {
            debugger: d.info().name.clone(),
            end: Output::Failed {
                kind: doppel_core::FailureKind::Protocol,
                detail: format!("no control run held for {key}"),
            },
            program_output: String::new(),
        })
    }

    /// How many control results are held (one per program and tools).
    pub fn len(&self) -> usize {
        self.cells.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no control has run yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(name: &str, code: i32, out: &str) -> ControlRun {
        ControlRun {
            debugger: name.into(),
            end: Output::Finished {
                exit_code: Some(code),
                signal: None,
            },
            program_output: out.into(),
        }
    }

    #[test]
    fn exit_statuses_and_captured_output_decide() {
        assert_eq!(
            disagreement(&[ended("gdb", 0, "hi\n"), ended("lldb", 0, "hi")], true),
            None
        );
        let r = disagreement(&[ended("node", 1, ""), ended("chromium", 0, "")], false).unwrap();
        assert!(
            r.contains("node exit code 1") && r.contains("chromium exit code 0"),
            "{r}"
        );
        assert!(disagreement(&[ended("gdb", 0, "a"), ended("lldb", 0, "b")], true).is_some());
        // One tool captures no output: only the statuses are compared.
        assert_eq!(disagreement(&[ended("gdb", 0, "a"), ended("x", 0, "")], true), None);
        // JavaScript: each engine renders console.log its own way.
        assert!(!compares_output(Language::JavaScript) && compares_output(Language::C));
        let logged = [ended("node", 0, "{ a: 1 }"), ended("chromium", 0, "Object")];
        assert_eq!(disagreement(&logged, false), None);
        assert!(disagreement(&logged, true).is_some());
    }

    #[test]
    fn one_tool_compares_every_output_even_an_empty_one() {
        let (a, b) = (ended("gdb: initial", 0, "7\n"), ended("gdb: follow-up", 0, "7"));
        assert_eq!(same_tool_disagreement(&[a.clone(), b]), None);
        let empty = ended("gdb: follow-up", 0, "");
        let r = same_tool_disagreement(&[a.clone(), empty]).unwrap();
        assert!(r.contains("gdb: initial and gdb: follow-up"), "{r}");
        let r = same_tool_disagreement(&[a, ended("gdb: follow-up", 3, "7")]).unwrap();
        assert!(r.contains("exit code 3"), "{r}");
        let logged = [
            ended("node: initial", 0, "{ a: 1 }"),
            ended("node: follow-up", 0, "{ a: 2 }"),
        ];
        assert!(same_tool_disagreement(&logged).is_some());
    }

    #[test]
    fn a_tool_failure_is_not_a_difference_of_the_program() {
        let failed = ControlRun {
            debugger: "lldb".into(),
            end: Output::Failed {
                kind: doppel_core::FailureKind::Timeout,
                detail: "timeout".into(),
            },
            program_output: String::new(),
        };
        assert_eq!(disagreement(&[ended("gdb", 0, ""), failed], true), None);
    }
}
