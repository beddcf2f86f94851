//! Output relations (ISSTA'19 section 3.2, Table 1): what the follow-up
//! run must answer to one action, given what the initial run answered.
//!
//! Every transformation's relation is identity modulo these adjustments,
//! which the follow-up runner and this checker apply:
//! - locations are compared after the program transformation's location
//!   map (the runner maps the initial script before the run);
//! - a location of the follow-up run inside text that replaced old text
//!   (`(1+1)` for the literal `2`) is the same as the start of that text,
//!   where the map puts the replaced text's first position
//!   ([`Relation::replacements`]);
//! - the resolution of a breakpoint requested on a line whose code a
//!   removal changed is not compared ([`Relation::breakability_may_change`]);
//!   the runner ignores pauses where the follow-up run resolved it when
//!   the initial run did not (see `follow_up`);
//! - pauses at an added breakpoint, and pauses of a step at code the
//!   program transformation inserted, are ignored (the runner resynchronizes
//!   and compares what comes after; see `follow_up`);
//! - an added parameter must appear, with its expected value, in the top
//!   frame of its function ([`Relation::expect_variable`]), and is then
//!   left out of the comparison.
//!
//! The comparison itself is the differential oracle's, with the same
//! normalization rules, between `initial` and `follow-up`.

use doppel_core::{Action, DivergenceKind, Location, Output, ProgramState};
use doppel_differential::normalize::NormalizationConfig;
use doppel_differential::oracle::{self, Difference};
use doppel_lang::edit::Pos;
use doppel_lang::transform::ExpectedVariable;

/// The relation of one metamorphic test.
#[derive(Debug, Clone, Default)]
pub struct Relation {
    /// Normalization applied to both outputs (the differential rules).
    pub normalization: NormalizationConfig,
    /// Compare columns when both outputs have them.
    pub columns: bool,
    /// The source file of the program under test (locations elsewhere, in a
    /// prelude or harness, are not affected by program transformations).
    pub file: String,
    /// A parameter the follow-up must show (add unused parameter).
    pub expect_variable: Option<ExpectedVariable>,
    /// Text of the follow-up program that replaced text of the initial one,
    /// as spans `[start, end)` of new positions (1-based lines and
    /// character columns; `LocationMap::replacements` of the program
    /// transformation). The location map keeps a replacement's first
    /// position, so an expected location at a span's start stands for the
    /// replaced text, and a follow-up location anywhere inside the span
    /// (the debugger resolved a breakpoint or paused within the expression
    /// that stands for the old literal: SpiderMonkey puts `(1+1)` at the
    /// `1` after the parenthesis) is taken as that start. A location
    /// outside the span, or a span that does not start at the expected
    /// location, is compared as usual. Applies to resolved breakpoint
    /// locations and pause locations; call-stack frames are compared by
    /// function name only.
    pub replacements: Vec<(Pos, Pos)>,
    /// Lines of the follow-up program whose breakability may change
    /// (`Transformed::breakability_may_change`: code on them, or in the
    /// statement they head, was removed). The answer to setting or removing
    /// a breakpoint requested on such a line is not compared
    /// ([`Relation::check_answer`]): removing code may change breakability
    /// on its own lines (docs/metamorphic.md).
    pub breakability_may_change: Vec<u32>,
}

/// The names the oracle uses for the two runs.
fn names() -> [String; 2] {
    ["initial".to_string(), "follow-up".to_string()]
}

impl Relation {
    /// [`Relation::check`] for the answer to `action`, except that setting
    /// or removing a breakpoint requested on a line whose breakability may
    /// change ([`Relation::breakability_may_change`]) holds whatever the
    /// breakpoint resolved to (or whether it was accepted and so could be
    /// removed), as long as the answer is of the same kind. A failure of the
    /// debugger is still compared.
    pub fn check_answer(&self, action: &Action, expected: &Output, actual: &Output) -> Option<Difference> {
        let same_kind = matches!(
            (expected, actual),
            (Output::BreakpointSet { .. }, Output::BreakpointSet { .. })
                | (Output::BreakpointRemoved { .. }, Output::BreakpointRemoved { .. })
        );
        match action {
            Action::SetBreakpoint { at } | Action::RemoveBreakpoint { at }
                if same_kind && self.breakability_may_change(at) =>
            {
                None
            }
            _ => self.check(expected, actual),
        }
    }

    /// Whether `at` lies on a line of the program whose breakability may
    /// change ([`Relation::breakability_may_change`]).
    pub fn breakability_may_change(&self, at: &Location) -> bool {
        at.file == self.file && self.breakability_may_change.contains(&at.line)
    }

    /// `None` when `actual` (follow-up) is what `expected` (the mapped initial
    /// output) allows; else the difference, named as the differential oracle
    /// names divergences.
    pub fn check(&self, expected: &Output, actual: &Output) -> Option<Difference> {
        let actual = &self.at_replacement_start(expected, actual);
        let actual = match (actual, &self.expect_variable) {
            (Output::Paused(s), Some(ev)) if self.applies(ev, s) => {
                match s.variables.iter().position(|v| v.name == ev.name) {
                    None => {
                        return Some(Difference {
                            kind: DivergenceKind::Variables,
                            detail: format!(
                                "follow-up: the added parameter `{}` is not among the variables of {} at {} (expected {})",
                                ev.name,
                                display_function(&ev.function),
                                s.location,
                                ev.value
                            ),
                            policy: None,
                        });
                    }
                    Some(i) if s.variables[i].value.text != ev.value => {
                        return Some(Difference {
                            kind: DivergenceKind::Variables,
                            detail: format!(
                                "follow-up: the added parameter `{}` is {} at {} (expected {})",
                                ev.name, s.variables[i].value.text, s.location, ev.value
                            ),
                            policy: None,
                        });
                    }
                    Some(i) => {
                        let mut s = s.clone();
                        s.variables.remove(i);
                        Output::Paused(s)
                    }
                }
            }
            _ => actual.clone(),
        };
        let actual = match (&self.expect_variable, actual) {
            (Some(ev), Output::Paused(mut s)) => {
                for v in &mut s.variables {
                    without_parameter(v, &ev.name);
                }
                Output::Paused(s)
            }
            (_, other) => other,
        };
        oracle::compare(&names(), &[expected.clone(), actual], &self.normalization, self.columns)
    }

    /// `actual` with its resolved breakpoint or pause location replaced by
    /// the expected one when it lies inside replacement text that starts at
    /// the expected location ([`Relation::replacements`]).
    fn at_replacement_start(&self, expected: &Output, actual: &Output) -> Output {
        match (expected, actual) {
            (
                Output::BreakpointSet { resolved: Some(e), .. },
                Output::BreakpointSet {
                    requested,
                    resolved: Some(a),
                    message,
                },
            ) if self.within_replacement(e, a) => Output::BreakpointSet {
                requested: requested.clone(),
                resolved: Some(e.clone()),
                message: message.clone(),
            },
            (Output::Paused(e), Output::Paused(s)) if self.within_replacement(&e.location, &s.location) => {
                Output::Paused(ProgramState {
                    location: e.location.clone(),
                    ..s.clone()
                })
            }
            _ => actual.clone(),
        }
    }

    /// Whether the follow-up location `actual` lies inside a replacement
    /// span that starts at the expected location `expected` (both in the
    /// program's file, with columns).
    fn within_replacement(&self, expected: &Location, actual: &Location) -> bool {
        let (Some(ec), Some(ac)) = (expected.column, actual.column) else {
            return false;
        };
        let (e, a) = (Pos::new(expected.line, ec), Pos::new(actual.line, ac));
        expected.file == self.file
            && actual.file == self.file
            && e != a
            && self.replacements.iter().any(|&(s, t)| s == e && s <= a && a < t)
    }

    /// Whether `ev` must be visible at the pause `s`: the top frame is the
    /// function and the pause lies within its lines.
    fn applies(&self, ev: &ExpectedVariable, s: &ProgramState) -> bool {
        s.location.file == self.file
            && (ev.lines.0..=ev.lines.1).contains(&s.location.line)
            && (ev.function.is_empty() || s.call_stack.first().is_some_and(|f| f.function == ev.function))
    }
}

/// A function's rendering shows its parameters (`function f(p1)`): the added
/// parameter is taken out of every value that names it, recursively.
fn without_parameter(v: &mut doppel_core::Variable, name: &str) {
    let t = &mut v.value.text;
    if t.contains(name) {
        *t = t
            .replace(&format!("({name})"), "()")
            .replace(&format!(", {name})"), ")");
    }
    for c in &mut v.value.children {
        without_parameter(c, name);
    }
}

fn display_function(name: &str) -> String {
    if name.is_empty() {
        "the anonymous function".into()
    } else {
        format!("`{name}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::{Frame, Location, PauseReason, Value, Variable, VariableKind};

    fn paused(line: u32, function: &str, vars: &[(&str, &str)]) -> Output {
        Output::Paused(ProgramState {
            location: Location::line("p.js", line),
            reason: PauseReason::Step,
            call_stack: vec![Frame {
                function: function.into(),
                location: Some(Location::line("p.js", line)),
            }],
            variables: vars
                .iter()
                .map(|(n, v)| Variable {
                    name: n.to_string(),
                    type_name: None,
                    value: Value::scalar(*v),
                    kind: VariableKind::Local,
                })
                .collect(),
            signal: None,
            return_value: None,
        })
    }

    fn rel(ev: Option<ExpectedVariable>) -> Relation {
        Relation {
            normalization: NormalizationConfig::none(),
            columns: false,
            file: "p.js".into(),
            expect_variable: ev,
            replacements: vec![],
            breakability_may_change: vec![],
        }
    }

    fn at(file: &str, line: u32, column: u32) -> Location {
        Location {
            file: file.into(),
            line,
            column: Some(column),
        }
    }

    fn set(resolved: Option<Location>) -> Output {
        Output::BreakpointSet {
            requested: Location::line("p.js", 15),
            resolved,
            message: None,
        }
    }

    fn paused_at(location: Location) -> Output {
        match paused(location.line, "f", &[("v", "2")]) {
            Output::Paused(s) => Output::Paused(ProgramState { location, ..s }),
            _ => unreachable!(),
        }
    }

    /// `let v = 2;` became `let v = (1+1);`: the literal at 15:13 is now the
    /// text 15:13-15:18 (docs/results/metamorphic.md, Firefox).
    fn literal_relation() -> Relation {
        Relation {
            columns: true,
            replacements: vec![(Pos::new(15, 13), Pos::new(15, 18))],
            ..rel(None)
        }
    }

    #[test]
    fn a_location_inside_a_replaced_literal_is_its_start() {
        let r = literal_relation();
        // SpiderMonkey resolves the breakpoint set at the literal to the
        // first breakable position inside the parentheses, and pauses there.
        let expected = set(Some(at("p.js", 15, 13)));
        assert_eq!(r.check(&expected, &set(Some(at("p.js", 15, 14)))), None);
        assert_eq!(r.check(&expected, &set(Some(at("p.js", 15, 17)))), None);
        assert_eq!(r.check(&expected, &set(Some(at("p.js", 15, 13)))), None);
        assert_eq!(
            r.check(&paused_at(at("p.js", 15, 13)), &paused_at(at("p.js", 15, 14))),
            None
        );
        // The rest of the pause is still compared.
        let d = r
            .check(
                &paused_at(at("p.js", 15, 13)),
                &match paused(15, "f", &[("v", "3")]) {
                    Output::Paused(s) => Output::Paused(ProgramState {
                        location: at("p.js", 15, 14),
                        ..s
                    }),
                    _ => unreachable!(),
                },
            )
            .unwrap();
        assert_eq!(d.kind, DivergenceKind::Variables);
    }

    #[test]
    fn a_location_outside_the_replacement_or_of_another_start_still_warns() {
        let r = literal_relation();
        let expected = set(Some(at("p.js", 15, 13)));
        for outside in [at("p.js", 15, 18), at("p.js", 15, 12), at("p.js", 16, 14)] {
            let d = r.check(&expected, &set(Some(outside.clone()))).unwrap();
            assert_eq!(d.kind, DivergenceKind::BreakpointLocation, "{outside}");
        }
        assert!(r.check(&expected, &set(None)).is_some(), "rejected");
        let d = r
            .check(&paused_at(at("p.js", 15, 13)), &paused_at(at("p.js", 15, 18)))
            .unwrap();
        assert_eq!(d.kind, DivergenceKind::PauseLocation);
        // Expected at the `v` before the literal: the span does not start there.
        assert!(
            r.check(&set(Some(at("p.js", 15, 9))), &set(Some(at("p.js", 15, 14))))
                .is_some()
        );
        // Another file (a harness) has no replacement.
        assert!(
            r.check(&set(Some(at("h.js", 15, 13))), &set(Some(at("h.js", 15, 14))))
                .is_some()
        );
        // Without the replacement (another transformation) it is a difference.
        let plain = Relation {
            replacements: vec![],
            ..literal_relation()
        };
        assert!(plain.check(&expected, &set(Some(at("p.js", 15, 14)))).is_some());
    }

    #[test]
    fn breakpoint_resolution_is_not_compared_on_lines_whose_code_was_removed() {
        // `if (5.e0 !== 5) {` ... `}` became `if (5.e0 !== 5) {}` on line 36;
        // the breakpoint requested at the old `}` line is now requested at 36.
        let r = Relation {
            columns: true,
            breakability_may_change: vec![36],
            ..rel(None)
        };
        let set_at = |line: u32| Action::SetBreakpoint {
            at: Location::line("p.js", line),
        };
        let remove_at = |line: u32| Action::RemoveBreakpoint {
            at: Location::line("p.js", line),
        };
        let rejected = set(None);
        let resolved = set(Some(at("p.js", 36, 5)));
        assert_eq!(r.check_answer(&set_at(36), &rejected, &resolved), None);
        assert_eq!(r.check_answer(&set_at(36), &resolved, &rejected), None);
        let removed = |ok| Output::BreakpointRemoved { ok, message: None };
        assert_eq!(r.check_answer(&remove_at(36), &removed(false), &removed(true)), None);
        // Every other line, and everything else on that line, is compared.
        let d = r.check_answer(&set_at(37), &rejected, &resolved).unwrap();
        assert_eq!(d.kind, DivergenceKind::BreakpointLocation);
        let d = r.check_answer(&remove_at(37), &removed(false), &removed(true)).unwrap();
        assert_eq!(d.kind, DivergenceKind::BreakpointRemoval);
        let failed = Output::Failed {
            kind: doppel_core::FailureKind::Crash,
            detail: "gone".into(),
        };
        assert!(r.check_answer(&set_at(36), &rejected, &failed).is_some());
        let resume = Action::Exec {
            exec: doppel_core::ExecAction::Resume,
        };
        let d = r
            .check_answer(&resume, &paused_at(at("p.js", 51, 5)), &paused_at(at("p.js", 36, 5)))
            .unwrap();
        assert_eq!(d.kind, DivergenceKind::PauseLocation);
        let other_file = Action::SetBreakpoint {
            at: Location::line("h.js", 36),
        };
        assert!(r.check_answer(&other_file, &rejected, &resolved).is_some());
    }

    #[test]
    fn identity_holds_for_equal_outputs_and_breaks_on_another_line() {
        let r = rel(None);
        assert_eq!(
            r.check(&paused(3, "f", &[("a", "1")]), &paused(3, "f", &[("a", "1")])),
            None
        );
        let d = r.check(&paused(3, "f", &[]), &paused(4, "f", &[])).unwrap();
        assert_eq!(d.kind, DivergenceKind::PauseLocation);
        assert!(
            d.detail.contains("initial") && d.detail.contains("follow-up"),
            "{}",
            d.detail
        );
        let d = r
            .check(&paused(3, "f", &[("a", "1")]), &paused(3, "f", &[("a", "2")]))
            .unwrap();
        assert_eq!(d.kind, DivergenceKind::Variables);
    }

    #[test]
    fn an_added_parameter_must_appear_with_its_value_in_its_function_only() {
        let ev = ExpectedVariable {
            function: "f".into(),
            lines: (2, 5),
            name: "p1".into(),
            value: "undefined".into(),
        };
        let r = rel(Some(ev));
        let initial = paused(3, "f", &[("a", "1")]);
        assert_eq!(
            r.check(&initial, &paused(3, "f", &[("a", "1"), ("p1", "undefined")])),
            None
        );
        assert_eq!(
            r.check(&initial, &paused(3, "f", &[("p1", "undefined"), ("a", "1")])),
            None
        );
        let missing = r.check(&initial, &paused(3, "f", &[("a", "1")])).unwrap();
        assert_eq!(missing.kind, DivergenceKind::Variables);
        assert!(missing.detail.contains("not among"), "{}", missing.detail);
        let wrong = r.check(&initial, &paused(3, "f", &[("a", "1"), ("p1", "3")])).unwrap();
        assert!(wrong.detail.contains("is 3"), "{}", wrong.detail);
        // A variable holding the function shows the new parameter in its rendering.
        let holder = |sig: &str| paused(7, "g", &[("f", sig)]);
        assert_eq!(r.check(&holder("function f()"), &holder("function f(p1)")), None);
        assert_eq!(r.check(&holder("function f(a)"), &holder("function f(a, p1)")), None);
        assert!(
            r.check(&holder("function f(a)"), &holder("function f(b, p1)"))
                .is_some()
        );
        // Outside the function the parameter must not appear.
        assert_eq!(r.check(&paused(7, "g", &[]), &paused(7, "g", &[])), None);
        assert!(
            r.check(&paused(7, "g", &[]), &paused(7, "g", &[("p1", "undefined")]))
                .is_some()
        );
    }
}
