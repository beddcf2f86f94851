//! Checking (PLDI'20 Algorithm 1), batched: one debugger session per
//! (binary, debugger) checks every reference pair of that binary.
//!
//! The paper launches the debugger once per (s, v): break at s, run, print
//! v, quit. Here one session sets a breakpoint on every line s that has
//! pairs, starts the program, and at each pause on a pending line s reads
//! the top frame's variables once for all pairs of s, removes the breakpoint
//! (first hit only, as the paper's reference is the first hit) and resumes,
//! until the program ends. Each pair gets a [`CheckVerdict`]:
//! - a breakpoint the debugger rejected, or put on another line than s
//!   (no `is_stmt` row for s: line augmentation's job), is `NotHit` with the
//!   reason, and the breakpoint is removed again so it cannot pause elsewhere;
//! - a pause at s prints v ([`Debugger::evaluate`], the paper's "print v";
//!   the frame's variable list where a backend cannot print) and compares
//!   its normalized value ([`crate::value`]) with the reference: `Match`,
//!   `WrongValue`, `OptimizedOut`, or `NotAvailable` (no such variable in
//!   scope, or unreadable);
//! - the wrong values of a pause where every variable read shows its value
//!   at one later execution k of s (at least two of them differ from their
//!   first-hit values) are `LaterHit` ([`later_hit`]): the debugger paused
//!   first at the k-th execution, because the optimizer duplicated s and
//!   only a later copy has an `is_stmt` row;
//! - a line never paused at before the program ended is `NotHit`;
//! - a debugger failure (crash, hang, protocol error) makes every pair
//!   still pending `DebuggerFailure`, with the failure's detail.

use crate::value::{self, Shown};
use crate::{CheckVerdict, Reference};
use doppel_core::{Action, Event, EventKind, ExecAction, Location, Output, Subject, Trace};
use doppel_debuggers::{Debugger, Evaluation};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// The verdict of one pair in one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairVerdict {
    /// Line s (1-based).
    pub line: u32,
    /// Variable v.
    pub variable: String,
    /// The check's outcome.
    pub verdict: CheckVerdict,
    /// The debugger's own rendering of v at s, when it showed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<String>,
    /// The program counter where the debugger paused at s (debuggers may
    /// pick different addresses among the line's `is_stmt` rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pc: Option<u64>,
    /// What the DWARF says at `pc`, for a wrong value of a C build (filled
    /// after the session by [`crate::accuracy::review`]; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dwarf: Option<crate::record::DwarfSituation>,
    /// This verdict comes from a re-run of the debugger with only this
    /// pair's breakpoint ([`crate::accuracy::rerun_unconfirmed`]), not from
    /// the session it is stored with.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rerun: bool,
}

/// What one session produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    /// One verdict per reference, in the order of the references.
    pub verdicts: Vec<PairVerdict>,
    /// The actions and outputs of the session (protocol messages dropped:
    /// a Csmith frame's variables at hundreds of pauses are megabytes).
    pub trace: Trace,
    /// How the program ended under the debugger (`exit 0`, `signal
    /// SIGSEGV`), or the debugger's failure.
    pub ending: String,
    /// Pauses taken.
    pub pauses: u32,
    /// Wall time of the session in milliseconds.
    pub duration_ms: f64,
}

/// Most pauses one session takes before it gives up (every pending line is
/// paused at once at most, so only pauses elsewhere, such as signals, count
/// against this beyond the number of lines).
const EXTRA_PAUSES: usize = 50;

/// Checks every reference of `subject` (an optimized build of the program
/// the references were taken from) in one session of `debugger`.
///
/// `subject.source_name` names the file in breakpoint locations. Never
/// fails: debugger failures are verdicts. The debugger is `reset` at the
/// end (kept warm where the backend can).
pub async fn check_binary(debugger: &mut dyn Debugger, subject: &Subject, references: &[Reference]) -> Session {
    let started = Instant::now();
    let mut rec = Recorder::new(debugger.info().clone(), started);
    let mut verdicts: Vec<Option<PairVerdict>> = vec![None; references.len()];
    let mut by_line: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, r) in references.iter().enumerate() {
        by_line.entry(r.pair.line).or_default().push(i);
    }
    let mut pauses = 0u32;
    let ending;

    let loaded = doppel_debuggers::load_confirmed(&mut *debugger, subject).await;
    let _ = debugger.take_transcript();
    if let Output::Failed { detail, .. } = &loaded {
        rec.output(loaded.clone());
        ending = format!("debugger failure: {detail}");
        fill(&mut verdicts, references, |_| CheckVerdict::DebuggerFailure {
            detail: detail.clone(),
        });
        debugger.reset().await;
        return finish(verdicts, rec, ending, pauses, started);
    }

    // Breakpoint phase: one breakpoint per line s.
    let mut pending: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut failure: Option<String> = None;
    for (&line, idx) in &by_line {
        let at = Location::line(subject.source_name.clone(), line);
        rec.action(Action::SetBreakpoint { at: at.clone() });
        let out = debugger.set_breakpoint(&at).await;
        let _ = debugger.take_transcript();
        rec.output(out.clone());
        match out {
            Output::BreakpointSet { resolved: Some(r), .. } if r.line == line => {
                pending.insert(line, idx.clone());
            }
            Output::BreakpointSet { resolved, message, .. } => {
                let detail = match &resolved {
                    Some(r) => format!("the breakpoint at line {line} went to line {}", r.line),
                    None => format!(
                        "the debugger rejected a breakpoint at line {line}{}",
                        message.map(|m| format!(": {m}")).unwrap_or_default()
                    ),
                };
                for &i in idx {
                    verdicts[i] = Some(verdict(
                        &references[i],
                        CheckVerdict::NotHit { detail: detail.clone() },
                        None,
                    ));
                }
                if resolved.is_some() {
                    rec.action(Action::RemoveBreakpoint { at: at.clone() });
                    let out = debugger.remove_breakpoint(&at).await;
                    let _ = debugger.take_transcript();
                    rec.output(out);
                }
            }
            Output::Failed { detail, .. } => {
                failure = Some(detail);
                break;
            }
            other => {
                failure = Some(format!("unexpected answer to a breakpoint: {other:?}"));
                break;
            }
        }
    }

    if failure.is_none() && !pending.is_empty() {
        rec.action(Action::Start);
        let mut out = debugger.start().await;
        let _ = debugger.take_transcript();
        let budget = by_line.len() + EXTRA_PAUSES;
        loop {
            rec.output(out.clone());
            match out {
                Output::Paused(state) => {
                    pauses += 1;
                    let line = state.location.line;
                    let here = same_file(&state.location.file, &subject.source_name);
                    if here && let Some(idx) = pending.remove(&line) {
                        let pc = match debugger.evaluate("$pc").await {
                            Evaluation::Value(v) => parse_address(&v.text),
                            _ => None,
                        };
                        for &i in &idx {
                            let r = &references[i];
                            let printed = debugger.evaluate(&r.pair.variable.name).await;
                            let _ = debugger.take_transcript();
                            if let Evaluation::Failed(Output::Failed { detail, .. }) = &printed {
                                failure = Some(detail.clone());
                                break;
                            }
                            let (v, shown) = judge(r, printed, &state.variables);
                            let mut pv = verdict(r, v, shown);
                            pv.pc = pc;
                            verdicts[i] = Some(pv);
                        }
                        if failure.is_some() {
                            ending = String::new();
                            break;
                        }
                        later_hit(references, &idx, &mut verdicts);
                        let at = Location::line(subject.source_name.clone(), line);
                        rec.action(Action::RemoveBreakpoint { at: at.clone() });
                        let removed = debugger.remove_breakpoint(&at).await;
                        let _ = debugger.take_transcript();
                        rec.output(removed);
                    }
                    if pending.is_empty() {
                        ending = "every line was reached".to_string();
                        break;
                    }
                    if pauses as usize > budget {
                        ending = format!("gave up after {pauses} pauses");
                        break;
                    }
                    rec.action(Action::Exec {
                        exec: ExecAction::Resume,
                    });
                    out = debugger.exec(ExecAction::Resume).await;
                    let _ = debugger.take_transcript();
                }
                Output::Finished { exit_code, signal } => {
                    ending = match (exit_code, signal) {
                        (_, Some(s)) => format!("the program was killed by {s}"),
                        (Some(c), None) => format!("the program exited with {c}"),
                        (None, None) => "the program ended".to_string(),
                    };
                    break;
                }
                Output::Failed { detail, .. } => {
                    failure = Some(detail);
                    ending = String::new();
                    break;
                }
                other => {
                    failure = Some(format!("unexpected answer to resume: {other:?}"));
                    ending = String::new();
                    break;
                }
            }
        }
    } else {
        ending = if failure.is_some() {
            String::new()
        } else {
            "no breakpoint was placed at its line".to_string()
        };
    }
    let ending = match &failure {
        Some(f) => format!("debugger failure: {f}"),
        None => ending,
    };
    let not_reached = ending.clone();
    fill(&mut verdicts, references, |_| match &failure {
        Some(f) => CheckVerdict::DebuggerFailure { detail: f.clone() },
        None => CheckVerdict::NotHit {
            detail: format!("line not reached ({not_reached})"),
        },
    });
    debugger.reset().await;
    let _ = debugger.take_transcript();
    finish(verdicts, rec, ending, pauses, started)
}

/// Recognizes a pause at a later execution of s (see the module
/// documentation): among the pairs `idx` of one pause, with their
/// `verdicts` just given, finds the smallest k in 2..=[`crate::REFERENCE_HITS`]
/// such that every pair with a value shown (`Match` or `WrongValue`) shows
/// its value at the k-th execution, and at least two of them differ from
/// their value at the first. Its wrong values become
/// [`CheckVerdict::LaterHit`]. With fewer than two such witnesses the
/// pause cannot be told from a debugger showing a stale or advanced value
/// of v (a real wrong value), and nothing changes.
pub fn later_hit(references: &[Reference], idx: &[usize], verdicts: &mut [Option<PairVerdict>]) {
    let shown = |i: usize| -> Option<&str> {
        match &verdicts[i].as_ref()?.verdict {
            CheckVerdict::Match => Some(references[i].value.as_str()),
            CheckVerdict::WrongValue { actual, .. } => Some(actual.as_str()),
            _ => None,
        }
    };
    let with_value: Vec<usize> = idx.iter().copied().filter(|&i| shown(i).is_some()).collect();
    if !with_value.iter().any(|&i| {
        matches!(
            verdicts[i].as_ref().map(|v| &v.verdict),
            Some(CheckVerdict::WrongValue { .. })
        )
    }) {
        return;
    }
    let hit = (2..=crate::REFERENCE_HITS).find(|&k| {
        let consistent = with_value
            .iter()
            .all(|&i| references[i].at_hit(k).is_some() && references[i].at_hit(k) == shown(i));
        let witnesses = with_value
            .iter()
            .filter(|&&i| references[i].at_hit(k) != Some(references[i].value.as_str()))
            .count();
        consistent && witnesses >= 2
    });
    let Some(hit) = hit else { return };
    for &i in &with_value {
        if let Some(pv) = verdicts[i].as_mut()
            && let CheckVerdict::WrongValue { actual, .. } = &pv.verdict
        {
            pv.verdict = CheckVerdict::LaterHit {
                hit,
                actual: actual.clone(),
            };
        }
    }
}

/// The verdict of reference `r` at s: the debugger's print of v
/// (`printed`), or, where the backend cannot print, v in the top frame's
/// variable list.
fn judge(r: &Reference, printed: Evaluation, variables: &[doppel_core::Variable]) -> (CheckVerdict, Option<String>) {
    let name = &r.pair.variable.name;
    let listed = || variables.iter().find(|v| &v.name == name).map(|v| v.value.clone());
    let value = match printed {
        Evaluation::Value(v) => v,
        Evaluation::Refused(msg) => match listed() {
            Some(v) => v,
            None => {
                return (
                    CheckVerdict::NotAvailable {
                        detail: format!("print {name}: {msg}"),
                    },
                    None,
                );
            }
        },
        Evaluation::Unsupported | Evaluation::Failed(_) => match listed() {
            Some(v) => v,
            None => {
                return (
                    CheckVerdict::NotAvailable {
                        detail: format!("{name} is not among the frame's variables"),
                    },
                    None,
                );
            }
        },
    };
    let shown = Some(value.text.clone());
    let v = match value::normalize(&r.pair.variable.kind, &value) {
        Shown::Value(actual) if actual == r.value => CheckVerdict::Match,
        Shown::Value(actual) => CheckVerdict::WrongValue {
            expected: r.value.clone(),
            actual,
        },
        Shown::OptimizedOut => CheckVerdict::OptimizedOut,
        Shown::Unreadable(text) => CheckVerdict::NotAvailable {
            detail: format!("cannot read '{text}' as a value"),
        },
    };
    (v, shown)
}

fn verdict(r: &Reference, v: CheckVerdict, shown: Option<String>) -> PairVerdict {
    PairVerdict {
        line: r.pair.line,
        variable: r.pair.variable.name.clone(),
        verdict: v,
        shown,
        pc: None,
        dwarf: None,
        rerun: false,
    }
}

/// The first `0x...` number in a debugger's rendering of `$pc`
/// (GDB `(void (*)()) 0x555555555271 <main+545>`, lldb-dap `0x0000555555555271`).
pub fn parse_address(text: &str) -> Option<u64> {
    let start = text.find("0x")? + 2;
    let hex: String = text[start..].chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    u64::from_str_radix(&hex, 16).ok()
}

fn fill(verdicts: &mut [Option<PairVerdict>], refs: &[Reference], f: impl Fn(&Reference) -> CheckVerdict) {
    for (slot, r) in verdicts.iter_mut().zip(refs) {
        if slot.is_none() {
            *slot = Some(verdict(r, f(r), None));
        }
    }
}

fn finish(verdicts: Vec<Option<PairVerdict>>, rec: Recorder, ending: String, pauses: u32, started: Instant) -> Session {
    Session {
        verdicts: verdicts
            .into_iter()
            .map(|v| v.expect("every pair has a verdict"))
            .collect(),
        trace: rec.trace,
        ending,
        pauses,
        duration_ms: started.elapsed().as_secs_f64() * 1e3,
    }
}

/// Debuggers name the file by its path or its name.
pub(crate) fn same_file(reported: &str, source_name: &str) -> bool {
    reported == source_name || reported.rsplit('/').next() == Some(source_name)
}

struct Recorder {
    trace: Trace,
    started: Instant,
}

impl Recorder {
    fn new(debugger: doppel_core::ToolInfo, started: Instant) -> Self {
        Self {
            trace: Trace {
                debugger,
                events: Vec::new(),
            },
            started,
        }
    }
    fn push(&mut self, kind: EventKind) {
        self.trace.events.push(Event {
            t_ms: self.started.elapsed().as_secs_f64() * 1e3,
            kind,
            raw: Vec::new(),
        });
    }
    fn action(&mut self, a: Action) {
        self.push(EventKind::Action(a));
    }
    fn output(&mut self, o: Output) {
        self.push(EventKind::Output(o));
    }
}

#[cfg(test)]
mod later_hit_tests {
    use super::*;
    use crate::{Pair, ScopedVariable, VarKind};

    fn r(name: &str, values: &[&str]) -> Reference {
        let mut r = Reference::new(
            Pair {
                line: 7,
                variable: ScopedVariable {
                    name: name.into(),
                    type_name: "int".into(),
                    kind: VarKind::Integer { signed: true, bits: 32 },
                    parameter: false,
                    declared_at: 1,
                },
            },
            values[0].into(),
        );
        r.later = values[1..].iter().map(|v| v.to_string()).collect();
        r
    }

    fn shown(refs: &[Reference], values: &[&str]) -> Vec<Option<PairVerdict>> {
        refs.iter()
            .zip(values)
            .map(|(r, v)| {
                let verdict = if *v == r.value {
                    CheckVerdict::Match
                } else {
                    CheckVerdict::WrongValue {
                        expected: r.value.clone(),
                        actual: v.to_string(),
                    }
                };
                Some(verdict_of(r, verdict))
            })
            .collect()
    }

    fn verdict_of(r: &Reference, v: CheckVerdict) -> PairVerdict {
        verdict(r, v, None)
    }

    fn names(v: &[Option<PairVerdict>]) -> Vec<&'static str> {
        v.iter().map(|p| p.as_ref().unwrap().verdict.name()).collect()
    }

    #[test]
    fn every_variable_at_the_second_execution_is_a_later_hit() {
        let refs = [
            r("i", &["0", "1", "2"]),
            r("acc", &["5", "9", "13"]),
            r("k", &["3", "3", "3"]),
        ];
        let mut v = shown(&refs, &["1", "9", "3"]);
        later_hit(&refs, &[0, 1, 2], &mut v);
        assert_eq!(names(&v), ["later_hit", "later_hit", "match"]);
        assert_eq!(
            v[1].as_ref().unwrap().verdict,
            CheckVerdict::LaterHit {
                hit: 2,
                actual: "9".into()
            }
        );
        let mut v = shown(&refs, &["2", "13", "3"]);
        later_hit(&refs, &[0, 1, 2], &mut v);
        assert!(matches!(
            v[0].as_ref().unwrap().verdict,
            CheckVerdict::LaterHit { hit: 3, .. }
        ));
    }

    #[test]
    fn an_advanced_value_beside_a_first_execution_value_stays_wrong() {
        // `i` is at the first execution: `acc` alone is ahead (a real bug).
        let refs = [r("i", &["0", "1"]), r("acc", &["5", "9"])];
        let mut v = shown(&refs, &["0", "9"]);
        later_hit(&refs, &[0, 1], &mut v);
        assert_eq!(names(&v), ["match", "wrong_value"]);
    }

    #[test]
    fn one_witness_is_not_enough_and_unrecorded_executions_do_not_count() {
        let refs = [r("acc", &["5", "9"]), r("k", &["3", "3"])];
        let mut v = shown(&refs, &["9", "3"]);
        later_hit(&refs, &[0, 1], &mut v);
        assert_eq!(names(&v), ["wrong_value", "match"]);
        let refs = [r("i", &["0"]), r("acc", &["5"])];
        let mut v = shown(&refs, &["1", "9"]);
        later_hit(&refs, &[0, 1], &mut v);
        assert_eq!(names(&v), ["wrong_value", "wrong_value"]);
    }
}
