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
//!   left out of the comparison;
//! - C: the value of a local that may not have been assigned yet at the
//!   pause, in the initial program at the initial pause location or in
//!   the follow-up program at the follow-up pause location, is not
//!   compared ([`Relation::indeterminate`]; its name and type still are).
//!   Before its first assignment a local holds whatever the stack held,
//!   and that depends on the code around it: a transformed program
//!   legitimately shows other garbage (ISSTA'19 section 5.2 counts such
//!   differences as false positives; seen on c-testsuite 00143.c,
//!   00164.c, 00199.c and 00219.c with GDB and LLDB). Which locals may be
//!   unassigned is `doppel_lang::c::assignment`'s definite-assignment
//!   analysis. Parameters are always compared, so a debugger that shows a
//!   parameter before the prologue stored it is still caught.
//! - C, program transformations: a non-null pointer's address is not
//!   compared ([`Relation::layout_may_change`]; both outputs show
//!   [`ADDRESS`] in its place, null stays null and GDB's `<symbol+offset>`
//!   decoration stays). Inserting or removing code moves the data and
//!   stack after it: on a 2,028-line Csmith program (seed 108), removing a
//!   dead block moved every global by 0x2000, and every pointer to one was
//!   a "divergence" at the first pause (LLDB 22, issue 17 part 6's check).
//!
//! The comparison itself is the differential oracle's, with the same
//! normalization rules, between `initial` and `follow-up`.

use doppel_core::{Action, DivergenceKind, Location, Output, ProgramState, Value, VariableKind};
use doppel_debuggers::compare::{self, Difference};
use doppel_debuggers::normalize::NormalizationConfig;
use doppel_lang::c::assignment::DefiniteAssignment;
use doppel_lang::edit::{LocationMap, Pos};
use doppel_lang::transform::ExpectedVariable;
use std::collections::BTreeSet;
use std::sync::Arc;

/// What a masked value reads in both outputs (and in a warning's detail).
pub const INDETERMINATE: &str = "<indeterminate>";

/// What a non-null pointer's address reads in both outputs when the
/// program's layout may change ([`Relation::layout_may_change`]).
pub const ADDRESS: &str = "<address>";

/// The definite-assignment facts of a C test's two programs
/// (`doppel_lang::c::assignment`): which locals may hold an indeterminate
/// value at a pause.
#[derive(Debug)]
pub struct Indeterminate {
    /// The initial program's.
    pub initial: DefiniteAssignment,
    /// The program transformation's map, initial to follow-up positions
    /// (the identity for action transformations).
    pub map: LocationMap,
    /// The follow-up program's.
    pub follow_up: DefiniteAssignment,
}

impl Indeterminate {
    /// The facts of the initial program text `initial`, transformed by
    /// `map` into `follow_up` (the same text and the identity map for an
    /// action transformation).
    pub fn new(initial: &str, map: LocationMap, follow_up: &str) -> Self {
        let follow = DefiniteAssignment::analyze(follow_up);
        let initial = if map.is_identity() && initial == follow_up {
            follow.clone()
        } else {
            DefiniteAssignment::analyze(initial)
        };
        Self {
            initial,
            map,
            follow_up: follow,
        }
    }

    /// Names of the locals of the top frame that may be unassigned at the
    /// expected pause (the initial program, at the initial location: the
    /// expected location mapped back; and the follow-up program at the
    /// expected location) or at the actual pause (the follow-up program).
    /// Pauses outside `file` have none.
    pub fn names(&self, file: &str, expected: &ProgramState, actual: &ProgramState) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        for (s, is_expected) in [(expected, true), (actual, false)] {
            let Some(function) = s.call_stack.first().map(|f| f.function.as_str()) else {
                continue;
            };
            let l = &s.location;
            if l.file != file {
                continue;
            }
            names.extend(self.follow_up.maybe_unassigned(function, l.line, l.column));
            if is_expected && let Some(p) = self.map.unmap(Pos::new(l.line, l.column.unwrap_or(1))) {
                names.extend(
                    self.initial
                        .maybe_unassigned(function, p.line, l.column.map(|_| p.column)),
                );
            }
        }
        names
    }
}

/// `s` with the value of every local (not a parameter or global) named in
/// `names` replaced by [`INDETERMINATE`].
fn mask(s: &ProgramState, names: &BTreeSet<String>) -> ProgramState {
    let mut s = s.clone();
    for v in &mut s.variables {
        if !matches!(v.kind, VariableKind::Argument | VariableKind::Global) && names.contains(&v.name) {
            v.value = Value::scalar(INDETERMINATE);
        }
    }
    s
}

/// `v` (and its members) with the address of a non-null pointer replaced
/// by [`ADDRESS`] ([`Relation::layout_may_change`]).
fn without_address(v: &mut doppel_core::Variable) {
    let is_pointer = v
        .type_name
        .as_deref()
        .is_some_and(|t| t.trim_end().ends_with('*') || t.contains("(*)"));
    if is_pointer {
        v.value.text = replace_address(&v.value.text);
    }
    v.value.children.iter_mut().for_each(without_address);
}

/// `text` with its first hexadecimal number (`0x...`) replaced by
/// [`ADDRESS`] unless it is zero.
fn replace_address(text: &str) -> String {
    let Some(start) = text.find("0x") else {
        return text.to_string();
    };
    let digits = text[start + 2..].chars().take_while(char::is_ascii_hexdigit).count();
    let number = &text[start + 2..start + 2 + digits];
    if digits == 0 || number.chars().all(|c| c == '0') {
        return text.to_string();
    }
    format!("{}{ADDRESS}{}", &text[..start], &text[start + 2 + digits..])
}

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
    /// C: the programs' definite-assignment facts. At a pause, the value of
    /// a local that may be unassigned in either program
    /// ([`Indeterminate::names`]) is not compared: both outputs show
    /// [`INDETERMINATE`] for it (its presence and type are compared).
    /// `None`: every value is compared (JavaScript).
    pub indeterminate: Option<Arc<Indeterminate>>,
    /// C, a program transformation: the follow-up binary's code and data
    /// may lie at other addresses, so the hexadecimal address in the value
    /// of every pointer-typed variable (type ending in `*` or holding
    /// `(*)`), members included, is replaced by [`ADDRESS`] in both outputs
    /// unless it is zero; the rest of the value (a `char *`'s string, GDB's
    /// `<g_9+4>`) is still compared.
    pub layout_may_change: bool,
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
        let (expected, actual) = match (&self.indeterminate, expected, &actual) {
            (Some(ind), Output::Paused(e), Output::Paused(a)) => {
                let names = ind.names(&self.file, e, a);
                (Output::Paused(mask(e, &names)), Output::Paused(mask(a, &names)))
            }
            _ => (expected.clone(), actual),
        };
        let (expected, actual) = match (self.layout_may_change, expected, actual) {
            (true, Output::Paused(mut e), Output::Paused(mut a)) => {
                e.variables.iter_mut().for_each(without_address);
                a.variables.iter_mut().for_each(without_address);
                (Output::Paused(e), Output::Paused(a))
            }
            (_, e, a) => (e, a),
        };
        compare::compare(&names(), &[expected, actual], &self.normalization, self.columns)
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
            indeterminate: None,
            layout_may_change: false,
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

    /// A pause in `function` of p.c at `line` with local variables `vars`.
    fn paused_c(line: u32, function: &str, vars: &[(&str, &str)]) -> Output {
        match paused(line, function, vars) {
            Output::Paused(s) => Output::Paused(ProgramState {
                location: Location::line("p.c", line),
                ..s
            }),
            _ => unreachable!(),
        }
    }

    /// c-testsuite 00143.c, reduced: `count` is assigned late; the no-op
    /// `n = n;` was inserted before line 4.
    fn no_op_relation() -> Relation {
        let initial = "int main(void) {\n    int count;\n    int n = 1;\n    n = n + 1;\n    count = 39;\n    return count + n;\n}\n";
        let (follow, map) = doppel_lang::edit::apply(
            initial,
            &[doppel_lang::edit::SourceEdit::insert(Pos::new(4, 1), "    n = n;\n")],
        )
        .unwrap();
        Relation {
            file: "p.c".into(),
            indeterminate: Some(Arc::new(Indeterminate::new(initial, map, &follow))),
            ..rel(None)
        }
    }

    /// A pause with pointer-typed locals `(name, type, value)`.
    fn paused_pointers(vars: &[(&str, &str, &str)]) -> Output {
        match paused_c(3, "main", &[]) {
            Output::Paused(mut s) => {
                s.variables = vars
                    .iter()
                    .map(|(n, t, v)| Variable {
                        name: n.to_string(),
                        type_name: Some(t.to_string()),
                        value: Value::scalar(*v),
                        kind: VariableKind::Local,
                    })
                    .collect();
                Output::Paused(s)
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn after_a_program_transformation_pointers_compare_by_nullness_and_the_rest_of_their_value() {
        // Csmith seed 108 with LLDB 22: removing a dead block moved l_1022's
        // target (a global) by 0x2000.
        let initial = paused_pointers(&[("l_1022", "S0 *", "0x0000555555573620"), ("l_1231", "int *", "0x0")]);
        let moved = paused_pointers(&[("l_1022", "S0 *", "0x0000555555571620"), ("l_1231", "int *", "0x0")]);
        let same_binary = Relation {
            file: "p.c".into(),
            ..rel(None)
        };
        let transformed = Relation {
            layout_may_change: true,
            ..same_binary.clone()
        };
        assert!(same_binary.check(&initial, &moved).is_some());
        assert_eq!(transformed.check(&initial, &moved), None);
        // Null against non-null, and another string behind a char *, still differ.
        let now_null = paused_pointers(&[("l_1022", "S0 *", "0x0000555555571620"), ("l_1231", "int *", "0x10")]);
        assert!(transformed.check(&initial, &now_null).is_some());
        let s1 = paused_pointers(&[("s", "char *", "0x5555555560a4 \"abc\"")]);
        let s2 = paused_pointers(&[("s", "char *", "0x5555555570a4 \"abd\"")]);
        let s3 = paused_pointers(&[("s", "char *", "0x5555555570a4 \"abc\"")]);
        assert!(transformed.check(&s1, &s2).is_some());
        assert_eq!(transformed.check(&s1, &s3), None);
        // Integers are not pointers.
        let i1 = paused_pointers(&[("x", "long", "0x10")]);
        let i2 = paused_pointers(&[("x", "long", "0x20")]);
        assert!(transformed.check(&i1, &i2).is_some());
    }

    #[test]
    fn a_local_that_may_be_unassigned_is_not_compared_but_assigned_ones_are() {
        let r = no_op_relation();
        // Line 6 (was 5), `count = 39;`: count holds garbage.
        let garbage = r.check(
            &paused_c(6, "main", &[("count", "0"), ("n", "2")]),
            &paused_c(6, "main", &[("count", "32767"), ("n", "2")]),
        );
        assert_eq!(garbage, None);
        // n is assigned there: a difference is a warning.
        let d = r
            .check(
                &paused_c(6, "main", &[("count", "0"), ("n", "2")]),
                &paused_c(6, "main", &[("count", "0"), ("n", "3")]),
            )
            .unwrap();
        assert_eq!(d.kind, DivergenceKind::Variables);
        assert!(
            d.detail.contains("n:") && !d.detail.contains("count:int"),
            "{}",
            d.detail
        );
        // After `count = 39;` count is compared.
        let d = r
            .check(
                &paused_c(7, "main", &[("count", "39"), ("n", "2")]),
                &paused_c(7, "main", &[("count", "40"), ("n", "2")]),
            )
            .unwrap();
        assert_eq!(d.kind, DivergenceKind::Variables);
        // The variable must still be there.
        assert!(
            r.check(
                &paused_c(6, "main", &[("count", "0"), ("n", "2")]),
                &paused_c(6, "main", &[("n", "2")]),
            )
            .is_some()
        );
        // Without the facts (JavaScript) every value is compared.
        let plain = Relation {
            indeterminate: None,
            ..no_op_relation()
        };
        assert!(
            plain
                .check(
                    &paused_c(6, "main", &[("count", "0")]),
                    &paused_c(6, "main", &[("count", "32767")]),
                )
                .is_some()
        );
        // Another file (a header) has no facts either.
        let other = |v: &str| match paused_c(6, "main", &[("count", v)]) {
            Output::Paused(s) => Output::Paused(ProgramState {
                location: Location::line("h.c", 6),
                ..s
            }),
            _ => unreachable!(),
        };
        assert!(r.check(&other("0"), &other("1")).is_some());
    }

    #[test]
    fn either_program_saying_maybe_unassigned_is_enough() {
        // Only the initial program leaves x unassigned before line 4.
        let initial = "int main(void) {\n    int x;\n    f();\n    x = 1;\n    return x;\n}\n";
        let (follow, map) = doppel_lang::edit::apply(
            initial,
            &[doppel_lang::edit::SourceEdit::replace(
                Pos::new(3, 5),
                Pos::new(3, 9),
                "x = 2;",
            )],
        )
        .unwrap();
        let ind = Indeterminate::new(initial, map, &follow);
        let state = |o: Output| match o {
            Output::Paused(s) => s,
            _ => unreachable!(),
        };
        let at4 = state(paused_c(4, "main", &[("x", "2")]));
        assert!(ind.names("p.c", &at4, &at4).contains("x"));
        assert!(ind.follow_up.maybe_unassigned("main", 4, None).is_empty());
        let at5 = state(paused_c(5, "main", &[("x", "1")]));
        assert!(ind.names("p.c", &at5, &at5).is_empty());
    }

    #[test]
    fn parameters_are_compared_and_the_added_one_still_checked() {
        // 00199.c's joe() with a parameter added: `b` is read at its own
        // declaration (step in), where it holds the old frame's garbage.
        let src = "void joe(int doppel_p1)\n{\n   int b = 5678;\n   b++;\n}\nint main() { joe(6); return 0; }\n";
        let ev = ExpectedVariable {
            function: "joe".into(),
            lines: (1, 5),
            name: "doppel_p1".into(),
            value: "6".into(),
        };
        let r = Relation {
            file: "p.c".into(),
            indeterminate: Some(Arc::new(Indeterminate::new(src, LocationMap::identity(), src))),
            ..rel(Some(ev))
        };
        let with_param = |b: &str, p: &str| match paused_c(3, "joe", &[("b", b)]) {
            Output::Paused(mut s) => {
                s.variables.push(doppel_core::Variable {
                    name: "doppel_p1".into(),
                    type_name: None,
                    value: Value::scalar(p),
                    kind: VariableKind::Argument,
                });
                Output::Paused(s)
            }
            _ => unreachable!(),
        };
        let initial = paused_c(3, "joe", &[("b", "21845")]);
        assert_eq!(r.check(&initial, &with_param("6", "6")), None);
        let d = r.check(&initial, &with_param("6", "0")).unwrap();
        assert!(d.detail.contains("doppel_p1"), "{}", d.detail);
        // A parameter that reads wrong is a warning (c/inline.c on LLDB).
        let arg = |v: &str| match paused_c(3, "joe", &[]) {
            Output::Paused(mut s) => {
                s.variables.push(doppel_core::Variable {
                    name: "b".into(),
                    type_name: None,
                    value: Value::scalar(v),
                    kind: VariableKind::Argument,
                });
                Output::Paused(s)
            }
            _ => unreachable!(),
        };
        let plain = Relation {
            expect_variable: None,
            ..r.clone()
        };
        assert!(plain.check(&arg("0"), &arg("-3")).is_some());
    }
}
