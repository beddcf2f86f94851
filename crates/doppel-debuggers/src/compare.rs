//! Output comparison: are the normalized outputs of N debuggers (or of one
//! debugger and an expected output) for the same action equal? If not, which
//! type of divergence is it (DBDB section 3.4)? Whether a difference is a
//! known policy is the differential oracle's question
//! (`doppel_differential::oracle::policy`).

use crate::normalize::{self, NormalizationConfig};
use doppel_core::{DivergenceKind, Output, ProgramState, Variable};

/// A difference between the debuggers' outputs for one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The divergence type (DBDB section 3.4).
    pub kind: DivergenceKind,
    /// One clause per debugger, naming what differs (`gdb: line 13; lldb: line 14`).
    pub detail: String,
    /// A known intended policy difference, if one is recognised (see [`policy`]).
    pub policy: Option<String>,
}

/// Compares the outputs (one per debugger, `names` in the same order) after
/// normalization. `None` when they agree.
pub fn compare(names: &[String], outputs: &[Output], cfg: &NormalizationConfig, columns: bool) -> Option<Difference> {
    let norm: Vec<Output> = outputs.iter().map(|o| normalize::output(o, cfg)).collect();
    // Tool failures first: a crashed debugger's other outputs mean nothing.
    if norm.iter().any(|o| matches!(o, Output::Failed { .. })) {
        return Some(diff(DivergenceKind::ToolFailure, names, &norm, describe_failure));
    }
    for i in 1..norm.len() {
        if let Some(kind) = pair(&norm[0], &norm[i], columns) {
            let detail = match kind {
                DivergenceKind::PauseLocation => describe(names, &norm, |o| match o {
                    Output::Paused(s) => format!("paused at {}", s.location),
                    other => short(other),
                }),
                DivergenceKind::CallStack => describe(names, &norm, |o| match o {
                    Output::Paused(s) => format!("stack [{}]", stack(s)),
                    other => short(other),
                }),
                DivergenceKind::Variables => variables_detail(names, &norm),
                _ => describe(names, &norm, short),
            };
            return Some(Difference {
                kind,
                detail,
                policy: None,
            });
        }
    }
    None
}

fn diff(kind: DivergenceKind, names: &[String], norm: &[Output], f: fn(&Output) -> String) -> Difference {
    Difference {
        kind,
        detail: describe(names, norm, f),
        policy: None,
    }
}

fn describe(names: &[String], outputs: &[Output], f: impl Fn(&Output) -> String) -> String {
    names
        .iter()
        .zip(outputs)
        .map(|(n, o)| format!("{n}: {}", f(o)))
        .collect::<Vec<_>>()
        .join("; ")
}

fn describe_failure(o: &Output) -> String {
    match o {
        Output::Failed { kind, detail } => format!("FAILED ({kind:?}) {}", first_line(detail)),
        other => short(other),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn short(o: &Output) -> String {
    match o {
        Output::BreakpointSet { resolved: Some(l), .. } => format!("breakpoint at {l}"),
        Output::BreakpointSet { resolved: None, .. } => "breakpoint rejected".into(),
        Output::BreakpointRemoved { ok, .. } => format!("removed: {ok}"),
        Output::Paused(s) => format!("paused at {}", s.location),
        Output::Finished { exit_code, signal } => match (exit_code, signal) {
            (_, Some(sig)) => format!("finished by {sig}"),
            (Some(c), None) => format!("finished (exit {c})"),
            (None, None) => "finished".into(),
        },
        Output::Failed { kind, detail } => format!("FAILED ({kind:?}) {}", first_line(detail)),
    }
}

fn stack(s: &ProgramState) -> String {
    s.call_stack
        .iter()
        .map(|f| f.function.as_str())
        .collect::<Vec<_>>()
        .join(" <- ")
}

fn variables_detail(names: &[String], norm: &[Output]) -> String {
    // Only the bindings that are not the same in every debugger, per debugger.
    let states: Vec<Option<&ProgramState>> = norm.iter().map(Output::paused).collect();
    let returns: Vec<Option<&Variable>> = states.iter().map(|s| s.and_then(|s| s.return_value.as_ref())).collect();
    if returns.iter().any(|r| r != &returns[0]) {
        return names
            .iter()
            .zip(&returns)
            .map(|(n, r)| match r {
                Some(v) => format!("{n}: returned {}", v.value.text),
                None => format!("{n}: no return value"),
            })
            .collect::<Vec<_>>()
            .join("; ");
    }
    let differing = differing_variables(norm);
    names
        .iter()
        .zip(&states)
        .map(|(n, s)| {
            let shown: Vec<String> = differing
                .iter()
                .map(
                    |name| match s.and_then(|s| s.variables.iter().find(|v| v.name == *name)) {
                        Some(v) => format!("{}:{}={}", v.name, v.type_name.as_deref().unwrap_or("?"), v.value.text),
                        None => format!("{name} absent"),
                    },
                )
                .collect();
            format!("{n}: {}", shown.join(" "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The names of the top-frame variables whose binding (type, value) is not
/// the same in every paused output of `norm`, in the order they are first
/// seen; with `"<return value>"` first when the return values differ. Empty
/// when the variables agree (or no output is a pause).
pub fn differing_variables(norm: &[Output]) -> Vec<&str> {
    let states: Vec<&ProgramState> = norm.iter().filter_map(Output::paused).collect();
    let mut differing: Vec<&str> = Vec::new();
    if states.iter().any(|s| s.return_value != states[0].return_value) {
        differing.push("<return value>");
    }
    for s in &states {
        for v in &s.variables {
            let same_everywhere = states.iter().all(|o| o.variables.contains(v));
            if !same_everywhere && !differing.contains(&v.name.as_str()) {
                differing.push(&v.name);
            }
        }
    }
    differing
}

/// The divergence type between two normalized outputs, if any.
fn pair(a: &Output, b: &Output, columns: bool) -> Option<DivergenceKind> {
    use Output::*;
    match (a, b) {
        (BreakpointSet { resolved: ra, .. }, BreakpointSet { resolved: rb, .. }) => match (ra, rb) {
            (Some(x), Some(y)) if normalize::same_location(x, y, columns) => None,
            (None, None) => None,
            _ => Some(DivergenceKind::BreakpointLocation),
        },
        (BreakpointRemoved { ok: x, .. }, BreakpointRemoved { ok: y, .. }) => {
            (x != y).then_some(DivergenceKind::BreakpointRemoval)
        }
        (Paused(x), Paused(y)) => {
            if !normalize::same_location(&x.location, &y.location, columns) {
                Some(DivergenceKind::PauseLocation)
            } else if x
                .call_stack
                .iter()
                .map(|f| &f.function)
                .ne(y.call_stack.iter().map(|f| &f.function))
            {
                Some(DivergenceKind::CallStack)
            } else if x.variables != y.variables || x.return_value != y.return_value {
                Some(DivergenceKind::Variables)
            } else {
                None
            }
        }
        (
            Finished {
                exit_code: c1,
                signal: s1,
            },
            Finished {
                exit_code: c2,
                signal: s2,
            },
        ) => (c1 != c2 || s1 != s2).then_some(DivergenceKind::Termination),
        (Finished { .. }, _) | (_, Finished { .. }) => Some(DivergenceKind::Termination),
        // Mismatched output kinds (pause vs breakpoint answer) cannot happen for
        // the same action; treat them as a protocol-level disagreement.
        _ => Some(DivergenceKind::ToolFailure),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::{Frame, Location, PauseReason, Value, Variable, VariableKind};

    fn paused(line: u32, stack: &[&str], vars: &[(&str, &str)]) -> Output {
        Output::Paused(ProgramState {
            location: Location::line("p.c", line),
            reason: PauseReason::Step,
            call_stack: stack
                .iter()
                .map(|f| Frame {
                    function: f.to_string(),
                    location: None,
                })
                .collect(),
            variables: vars
                .iter()
                .map(|(n, v)| Variable {
                    name: n.to_string(),
                    type_name: Some("int".into()),
                    value: Value::scalar(*v),
                    kind: VariableKind::Local,
                })
                .collect(),
            signal: None,
            return_value: None,
        })
    }

    fn names() -> Vec<String> {
        vec!["gdb".into(), "lldb".into()]
    }

    #[test]
    fn return_values_are_compared_after_normalization() {
        let cfg = NormalizationConfig::default();
        let with = |text: &str, type_name: Option<&str>| {
            let mut o = paused(5, &["main"], &[("i", "0")]);
            if let Output::Paused(s) = &mut o {
                s.return_value = Some(Variable {
                    name: "(return)".into(),
                    type_name: type_name.map(str::to_string),
                    value: Value::scalar(text),
                    kind: VariableKind::Unknown,
                });
            }
            o
        };
        // GDB gives no type, LLDB does: the same value agrees.
        let same = [with("97 'a'", None), with("'a'", Some("char"))];
        assert_eq!(compare(&names(), &same, &cfg, false), None);
        let d = compare(&names(), &[with("6", None), with("7", Some("int"))], &cfg, false).unwrap();
        assert_eq!(d.kind, DivergenceKind::Variables);
        assert_eq!(d.detail, "gdb: returned 6; lldb: returned 7");
        let d = compare(
            &names(),
            &[with("6", None), paused(5, &["main"], &[("i", "0")])],
            &cfg,
            false,
        )
        .unwrap();
        assert_eq!(d.detail, "gdb: returned 6; lldb: no return value");
    }

    #[test]
    fn equal_states_agree_and_each_part_is_told_apart() {
        let cfg = NormalizationConfig::default();
        let a = paused(5, &["main"], &[("i", "0")]);
        assert_eq!(compare(&names(), &[a.clone(), a.clone()], &cfg, false), None);
        let k = |b: Output| compare(&names(), &[a.clone(), b], &cfg, false).unwrap().kind;
        assert_eq!(k(paused(6, &["main"], &[("i", "0")])), DivergenceKind::PauseLocation);
        assert_eq!(k(paused(5, &["f", "main"], &[("i", "0")])), DivergenceKind::CallStack);
        assert_eq!(k(paused(5, &["main"], &[("i", "1")])), DivergenceKind::Variables);
        assert_eq!(
            k(Output::Finished {
                exit_code: Some(0),
                signal: None
            }),
            DivergenceKind::Termination
        );
        assert_eq!(
            k(Output::failed(doppel_core::FailureKind::Timeout, "no answer")),
            DivergenceKind::ToolFailure
        );
    }

    #[test]
    fn breakpoints_compare_resolved_lines_and_columns_only_when_asked() {
        let cfg = NormalizationConfig::default();
        let bp = |line, col| Output::BreakpointSet {
            requested: Location::line("p.c", 3),
            resolved: Some(Location {
                file: "p.c".into(),
                line,
                column: col,
            }),
            message: Some("prose differs".into()),
        };
        assert_eq!(compare(&names(), &[bp(4, None), bp(4, Some(9))], &cfg, true), None);
        assert_eq!(compare(&names(), &[bp(4, Some(3)), bp(4, Some(9))], &cfg, false), None);
        assert!(compare(&names(), &[bp(4, Some(3)), bp(4, Some(9))], &cfg, true).is_some());
        let d = compare(&names(), &[bp(4, None), bp(5, None)], &cfg, false).unwrap();
        assert_eq!(d.kind, DivergenceKind::BreakpointLocation);
        assert!(
            d.detail.contains("gdb: breakpoint at p.c:4") && d.detail.contains("lldb: breakpoint at p.c:5"),
            "{}",
            d.detail
        );
    }

    #[test]
    fn variables_detail_names_the_differing_binding() {
        let cfg = NormalizationConfig::default();
        let d = compare(
            &names(),
            &[
                paused(5, &["main"], &[("i", "0"), ("j", "1")]),
                paused(5, &["main"], &[("i", "0"), ("j", "2")]),
            ],
            &cfg,
            false,
        )
        .unwrap();
        assert!(d.detail.contains("lldb: j:int=2"), "{}", d.detail);
        assert!(!d.detail.contains("lldb: i:int=0"), "{}", d.detail);
    }
}
