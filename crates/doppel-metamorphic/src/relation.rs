//! Output relations (ISSTA'19 section 3.2, Table 1): what the follow-up
//! run must answer to one action, given what the initial run answered.
//!
//! Every transformation's relation is identity modulo three adjustments,
//! which the follow-up runner and this checker apply:
//! - locations are compared after the program transformation's location
//!   map (the runner maps the initial script before the run);
//! - pauses at an added breakpoint, and pauses of a step at code the
//!   program transformation inserted, are ignored (the runner resynchronizes
//!   and compares what comes after; see `follow_up`);
//! - an added parameter must appear, with its expected value, in the top
//!   frame of its function ([`Relation::expect_variable`]), and is then
//!   left out of the comparison.
//!
//! The comparison itself is the differential oracle's, with the same
//! normalization rules, between `initial` and `follow-up`.

use doppel_core::{DivergenceKind, Output, ProgramState};
use doppel_differential::normalize::NormalizationConfig;
use doppel_differential::oracle::{self, Difference};
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
}

/// The names the oracle uses for the two runs.
fn names() -> [String; 2] {
    ["initial".to_string(), "follow-up".to_string()]
}

impl Relation {
    /// `None` when `actual` (follow-up) is what `expected` (the mapped initial
    /// output) allows; else the difference, named as the differential oracle
    /// names divergences.
    pub fn check(&self, expected: &Output, actual: &Output) -> Option<Difference> {
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
        }
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
