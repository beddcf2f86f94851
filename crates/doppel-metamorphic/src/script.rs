//! A test input's debugging actions with the outputs they produced: the
//! initial run's trace read as a script (ISSTA'19 Figure 3: actions and the
//! debugger's answers), and how a script moves with the program.
//!
//! - [`Script::from_trace`]: a recorded single-debugger trace as steps;
//! - [`Script::slide`]: the breakpoint-sliding transformation (section
//!   3.2.1): every breakpoint that slid from `l` to `l'` is requested at `l'`;
//! - [`Script::map`]: a program transformation's [`LocationMap`] applied to
//!   every location of the script (section 3.2.2), dropping breakpoints in
//!   removed code.

use doppel_core::{Action, EventKind, Frame, Location, Output, ProgramState, Trace};
use doppel_lang::edit::{LocationMap, Pos};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One action and the output the debugger answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The action issued.
    pub action: Action,
    /// The debugger's answer to it.
    pub output: Output,
}

/// The steps of one run, in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Script {
    /// Steps in the order they were issued.
    pub steps: Vec<Step>,
}

/// Why a script cannot be moved to a transformed program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    /// The run paused in code the transformation removed: the coverage was
    /// wrong or the transformation removed live code.
    #[error("the run paused at {0}, in code the transformation removed")]
    PausedInRemovedCode(Location),
}

impl Script {
    /// Reads a trace of one debugger as steps: each action with the output
    /// that followed it. An action without output (a run cut short) ends
    /// the script.
    pub fn from_trace(trace: &Trace) -> Self {
        let mut steps = Vec::new();
        let mut pending: Option<Action> = None;
        for e in &trace.events {
            match &e.kind {
                EventKind::Action(a) => pending = Some(a.clone()),
                EventKind::Output(o) => {
                    if let Some(action) = pending.take() {
                        steps.push(Step {
                            action,
                            output: o.clone(),
                        });
                    }
                }
                // Metamorphic runs do not go on past policies; a
                // realignment's output has no pending action to pair with.
                EventKind::PolicyNote(_) | EventKind::Realignment(_) | EventKind::FindingNote { .. } => {}
            }
        }
        Self { steps }
    }

    /// The script up to the first pause outside the program (C: a step out
    /// of `main` into the C library's start-up code, which has no source).
    /// Such pauses belong to the system, not to the program, and what a
    /// debugger shows there (LLDB: `libc.so.6`__libc_start_call_main`)
    /// differs between runs of a transformed program for reasons of no
    /// interest (DBDB's `step_out_of_main` policy). JavaScript pauses in
    /// prelude and harness scripts are the program's and stay.
    pub fn within_program(mut self, subject: &doppel_core::Subject) -> Self {
        if subject.language == doppel_core::Language::C
            && let Some(i) = self.steps.iter().position(|s| {
                s.output
                    .paused()
                    .is_some_and(|p| p.location.file != subject.source_name)
            })
        {
            self.steps.truncate(i);
        }
        self
    }

    /// Indices of the steps whose action is a resume (continue).
    pub fn resumes(&self) -> Vec<usize> {
        self.steps
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                matches!(
                    s.action,
                    Action::Exec {
                        exec: doppel_core::ExecAction::Resume
                    }
                )
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Index of the `start` step, if the run got that far.
    pub fn start_index(&self) -> Option<usize> {
        self.steps.iter().position(|s| s.action == Action::Start)
    }

    /// Breakpoints that slid: (step index, requested, resolved).
    pub fn slid_breakpoints(&self) -> Vec<(usize, Location, Location)> {
        self.steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match (&s.action, &s.output) {
                (Action::SetBreakpoint { at }, Output::BreakpointSet { resolved: Some(r), .. }) if slid(at, r) => {
                    Some((i, at.clone(), r.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// The breakpoint-sliding transformation (ISSTA'19 section 3.2.1,
    /// Figure 10): every breakpoint requested at `l` that the debugger set at
    /// `l' != l` is requested at `l'` instead (with `l'`'s column when the
    /// debugger reported one), and its removal names `l'` too. The expected
    /// outputs stay as they were: the breakpoint must resolve to `l'` and
    /// behave the same. A slide that would request a location another
    /// breakpoint already uses is left alone (backends name breakpoints by
    /// their requested location). Returns the script and how many slid.
    pub fn slide(&self) -> (Script, usize) {
        let mut renamed: BTreeMap<Location, Location> = BTreeMap::new();
        let mut requested: BTreeSet<Location> = self
            .steps
            .iter()
            .filter_map(|s| match &s.action {
                Action::SetBreakpoint { at } => Some(at.clone()),
                _ => None,
            })
            .collect();
        let mut steps = Vec::with_capacity(self.steps.len());
        let mut count = 0;
        for s in &self.steps {
            let mut s = s.clone();
            match (&mut s.action, &mut s.output) {
                (
                    Action::SetBreakpoint { at },
                    Output::BreakpointSet {
                        requested: req,
                        resolved,
                        ..
                    },
                ) => {
                    // A request on the same line without a column (or at the
                    // same column) names the same place for the debugger.
                    let taken = |r: &Location| {
                        requested.iter().any(|q| {
                            q.file == r.file
                                && q.line == r.line
                                && (q.column.is_none() || r.column.is_none() || q.column == r.column)
                        })
                    };
                    if let Some(r) = resolved.as_ref()
                        && slid(at, r)
                        && !taken(r)
                    {
                        requested.insert(r.clone());
                        renamed.insert(at.clone(), r.clone());
                        *at = r.clone();
                        *req = r.clone();
                        count += 1;
                    }
                }
                (Action::RemoveBreakpoint { at }, _) => {
                    if let Some(new) = renamed.get(at) {
                        *at = new.clone();
                    }
                }
                _ => {}
            }
            steps.push(s);
        }
        (Script { steps }, count)
    }

    /// Moves every location in `file` through `map` (a program
    /// transformation, ISSTA'19 section 3.2.2). A breakpoint requested in
    /// removed code is dropped with its removal; so is one that resolved into
    /// removed code.
    ///
    /// Errors: a pause (or a call-stack frame) in removed code.
    pub fn map(&self, map: &LocationMap, file: &str) -> Result<Script, MapError> {
        if map.is_identity() {
            return Ok(self.clone());
        }
        let mut dropped: BTreeSet<Location> = BTreeSet::new();
        let mut steps = Vec::with_capacity(self.steps.len());
        for s in &self.steps {
            let action = match &s.action {
                Action::SetBreakpoint { at } => match map_location(map, file, at) {
                    Some(new) => Action::SetBreakpoint { at: new },
                    None => {
                        dropped.insert(at.clone());
                        continue;
                    }
                },
                Action::RemoveBreakpoint { at } => {
                    if dropped.contains(at) {
                        continue;
                    }
                    match map_location(map, file, at) {
                        Some(new) => Action::RemoveBreakpoint { at: new },
                        None => continue,
                    }
                }
                other => other.clone(),
            };
            let output = match &s.output {
                Output::BreakpointSet {
                    requested,
                    resolved,
                    message,
                } => {
                    let resolved = match resolved {
                        Some(r) => match map_location(map, file, r) {
                            Some(new) => Some(new),
                            None => {
                                if let Action::SetBreakpoint { at } = &s.action {
                                    dropped.insert(at.clone());
                                }
                                continue;
                            }
                        },
                        None => None,
                    };
                    Output::BreakpointSet {
                        requested: map_location(map, file, requested).unwrap_or_else(|| requested.clone()),
                        resolved,
                        message: message.clone(),
                    }
                }
                Output::Paused(state) => Output::Paused(map_state(map, file, state)?),
                other => other.clone(),
            };
            steps.push(Step { action, output });
        }
        Ok(Script { steps })
    }
}

/// Whether a breakpoint requested at `at` and set at `r` slid.
fn slid(at: &Location, r: &Location) -> bool {
    at.file == r.file && (at.line != r.line || (at.column.is_some() && at.column != r.column))
}

/// `loc` moved through `map` if it is in `file`; `None` when its code was removed.
pub fn map_location(map: &LocationMap, file: &str, loc: &Location) -> Option<Location> {
    if loc.file != file {
        return Some(loc.clone());
    }
    match loc.column {
        Some(c) => map.map(Pos::new(loc.line, c)).map(|p| Location {
            file: loc.file.clone(),
            line: p.line,
            column: Some(p.column),
        }),
        None => map.map_line(loc.line).map(|l| Location::line(loc.file.clone(), l)),
    }
}

fn map_state(map: &LocationMap, file: &str, s: &ProgramState) -> Result<ProgramState, MapError> {
    let location =
        map_location(map, file, &s.location).ok_or_else(|| MapError::PausedInRemovedCode(s.location.clone()))?;
    let call_stack = s
        .call_stack
        .iter()
        .map(|f| {
            Ok(Frame {
                function: f.function.clone(),
                location: match &f.location {
                    Some(l) => {
                        Some(map_location(map, file, l).ok_or_else(|| MapError::PausedInRemovedCode(l.clone()))?)
                    }
                    None => None,
                },
            })
        })
        .collect::<Result<Vec<_>, MapError>>()?;
    Ok(ProgramState {
        location,
        call_stack,
        ..s.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::{ExecAction, PauseReason};
    use doppel_lang::edit::{SourceEdit, apply};

    fn bp(line: u32, resolved: u32) -> Step {
        Step {
            action: Action::SetBreakpoint {
                at: Location::line("p.c", line),
            },
            output: Output::BreakpointSet {
                requested: Location::line("p.c", line),
                resolved: Some(Location::line("p.c", resolved)),
                message: None,
            },
        }
    }

    fn pause(line: u32) -> Output {
        Output::Paused(crate::test_support::pause_in_main(line, PauseReason::Breakpoint))
    }

    #[test]
    fn sliding_requests_the_resolved_location_and_renames_the_removal() {
        let script = Script {
            steps: vec![
                bp(2, 3),
                Step {
                    action: Action::RemoveBreakpoint {
                        at: Location::line("p.c", 2),
                    },
                    output: Output::BreakpointRemoved {
                        ok: true,
                        message: None,
                    },
                },
                bp(5, 5),
                bp(6, 5),
            ],
        };
        let (slid, n) = script.slide();
        assert_eq!(n, 1, "6 -> 5 collides with the breakpoint requested at 5");
        // A column-resolved slide onto a line requested without a column collides too.
        let with_column = Script {
            steps: vec![
                bp(5, 5),
                Step {
                    action: Action::SetBreakpoint {
                        at: Location::line("p.c", 4),
                    },
                    output: Output::BreakpointSet {
                        requested: Location::line("p.c", 4),
                        resolved: Some(Location {
                            file: "p.c".into(),
                            line: 5,
                            column: Some(9),
                        }),
                        message: None,
                    },
                },
            ],
        };
        assert_eq!(with_column.slide().1, 0);
        assert_eq!(
            slid.steps[0].action,
            Action::SetBreakpoint {
                at: Location::line("p.c", 3)
            }
        );
        assert_eq!(
            slid.steps[1].action,
            Action::RemoveBreakpoint {
                at: Location::line("p.c", 3)
            }
        );
        assert_eq!(slid.steps[3], script.steps[3]);
    }

    #[test]
    fn mapping_moves_breakpoints_and_pauses_and_drops_removed_breakpoints() {
        let text = "a;\nb;\nc;\nd;\n";
        let (_, insert) = apply(text, &[SourceEdit::insert(Pos::new(2, 1), "x = x;\n")]).unwrap();
        let script = Script {
            steps: vec![
                bp(3, 3),
                Step {
                    action: Action::Start,
                    output: pause(3),
                },
            ],
        };
        let moved = script.map(&insert, "p.c").unwrap();
        assert_eq!(moved.steps[0], bp(4, 4));
        assert_eq!(moved.steps[1].output, pause(4));

        let (_, remove) = apply(text, &[SourceEdit::replace(Pos::new(3, 1), Pos::new(4, 1), "")]).unwrap();
        let script = Script {
            steps: vec![
                bp(3, 3),
                Step {
                    action: Action::RemoveBreakpoint {
                        at: Location::line("p.c", 3),
                    },
                    output: Output::BreakpointRemoved {
                        ok: true,
                        message: None,
                    },
                },
                bp(4, 4),
                Step {
                    action: Action::Exec {
                        exec: ExecAction::Resume,
                    },
                    output: pause(3),
                },
            ],
        };
        let err = script.map(&remove, "p.c").unwrap_err();
        assert!(matches!(err, MapError::PausedInRemovedCode(_)));
        let no_pause = Script {
            steps: script.steps[..3].to_vec(),
        };
        let moved = no_pause.map(&remove, "p.c").unwrap();
        assert_eq!(
            moved.steps,
            vec![bp(3, 3)],
            "line 4 moved up to 3; the removed breakpoint is gone"
        );
    }

    #[test]
    fn locations_in_other_files_do_not_move() {
        let (_, m) = apply("a;\n", &[SourceEdit::insert(Pos::new(1, 1), "x;\n")]).unwrap();
        let l = Location::line("harness.js", 1);
        assert_eq!(map_location(&m, "p.js", &l), Some(l));
    }
}
