//! One metamorphic test (ISSTA'19 Figure 5): pick a transformation that
//! applies to the current input, build the follow-up program and plan, run
//! the follow-up live, check the relation.

use crate::action::{self, Plan};
use crate::config::MetaConfig;
use crate::follow_up::{self, FollowUp, FollowUpOutcome};
use crate::program::{self, Builder, Program};
use crate::relation::{Indeterminate, Relation};
use crate::script::Script;
use crate::transformation::Transformation;
use doppel_core::Language;
use doppel_debuggers::Debugger;
use doppel_debuggers::control::ControlCache;
use doppel_lang::edit::LocationMap;
use doppel_lang::transform::{ProgramInput, ProgramTransformationKind, Skip};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The transformation a test applied, for people and class keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Which transformation (a program or an action transformation).
    pub transformation: Transformation,
    /// What changed (`inserted `x = x;` before 12:5`, `replaced continue #3 by step over`).
    pub description: String,
    /// AST node type where it changed (the line of an added breakpoint, of
    /// a replaced continue, of the program change).
    pub node: String,
}

/// One metamorphic test's result.
#[derive(Debug, Clone)]
pub struct Test {
    /// `None` when no transformation applied.
    pub applied: Option<Applied>,
    /// Transformations tried first that did not apply, with why.
    pub skipped: Vec<(Transformation, String)>,
    /// The follow-up program (the same as the initial one for action transformations).
    pub program: Program,
    /// The follow-up run and its outcome; `None` when no transformation applied
    /// or the control run found the programs not comparable (no follow-up ran).
    pub follow_up: Option<FollowUp>,
    /// [`doppel_core::Verdict::NotComparable`] when the control runs show
    /// the follow-up program ending differently from the initial one
    /// ([`crate::control::follow_up`]); no follow-up ran.
    pub not_comparable: Option<doppel_core::Verdict>,
}

/// Runs one metamorphic test on the input (`program`, `script`): tries the
/// enabled transformations in a seeded random order until one applies.
/// With `controls` (the campaign's control runs, `None` in replays), a
/// follow-up program that ends differently from `program` with no
/// breakpoint is not run: the test is not comparable.
pub async fn run(
    dbg: &mut dyn Debugger,
    program: &Program,
    script: &Script,
    cfg: &MetaConfig,
    builder: &Builder,
    rng: &mut ChaCha8Rng,
    controls: Option<&ControlCache>,
) -> Test {
    let mut order = cfg.transformations.clone();
    order.shuffle(rng);
    let mut skipped = Vec::new();
    for t in order {
        match prepare(t, program, script, cfg, builder, rng).await {
            Ok((plan, follow_program, relation, applied)) => {
                if let Some(cache) = controls
                    && follow_program.subject.hash != program.subject.hash
                    && let Some(v) = crate::control::follow_up(cache, dbg, program, &follow_program).await
                {
                    return Test {
                        applied: Some(applied),
                        skipped,
                        program: follow_program,
                        follow_up: None,
                        not_comparable: Some(v),
                    };
                }
                let mut follow_up = follow_up::run(dbg, &follow_program.subject, &plan, &relation).await;
                if let FollowUpOutcome::Violated { difference, .. } = &follow_up.outcome
                    && let Some(reason) = nondeterministic(dbg, program, script, cfg).await
                {
                    follow_up.outcome = FollowUpOutcome::Inconclusive {
                        reason: format!("{reason}; the warning ({}) may be that", difference.detail),
                    };
                }
                return Test {
                    applied: Some(applied),
                    skipped,
                    program: follow_program,
                    follow_up: Some(follow_up),
                    not_comparable: None,
                };
            }
            Err(reason) => skipped.push((t, reason)),
        }
    }
    Test {
        applied: None,
        skipped,
        program: program.clone(),
        follow_up: None,
        not_comparable: None,
    }
}

/// The control run behind every warning: the initial input once more,
/// unchanged. When it does not reproduce the initial trace, the input is
/// not deterministic (a C program reading uninitialized memory whose
/// garbage changes from run to run, e.g. with the `AT_RANDOM` bytes on the
/// stack), and a warning says nothing about the transformation. Returns why.
async fn nondeterministic(
    dbg: &mut dyn Debugger,
    program: &Program,
    script: &Script,
    cfg: &MetaConfig,
) -> Option<String> {
    let plan = Plan {
        script: script.clone(),
        ..Plan::default()
    };
    let again = follow_up::run(dbg, &program.subject, &plan, &relation(cfg, program)).await;
    match again.outcome {
        FollowUpOutcome::Violated { difference, .. } => Some(format!(
            "the initial input is not deterministic: run again unchanged, {}",
            difference.detail
        )),
        _ => None,
    }
}

fn relation(cfg: &MetaConfig, program: &Program) -> Relation {
    Relation {
        normalization: cfg.initial.normalization,
        // One debugger against itself: its columns are comparable (the
        // differential default, off, is for GDB against LLDB). Without them
        // a pause at an added breakpoint on a line that has another
        // breakpoint at another column looks like the expected pause.
        columns: true,
        file: program.subject.source_name.clone(),
        expect_variable: None,
        replacements: Vec::new(),
        breakability_may_change: Vec::new(),
        indeterminate: indeterminate(program, &LocationMap::identity(), program),
        // The same binary: every address is where it was.
        layout_may_change: false,
    }
}

/// The definite-assignment facts of a C test (`None` for other languages):
/// the relation does not compare locals that may hold garbage.
fn indeterminate(initial: &Program, map: &LocationMap, follow_up: &Program) -> Option<Arc<Indeterminate>> {
    (initial.subject.language == Language::C)
        .then(|| Arc::new(Indeterminate::new(&initial.text, map.clone(), &follow_up.text)))
}

/// The follow-up plan, program and relation of `t`, or why `t` does not apply.
async fn prepare(
    t: Transformation,
    program: &Program,
    script: &Script,
    cfg: &MetaConfig,
    builder: &Builder,
    rng: &mut ChaCha8Rng,
) -> Result<(Plan, Program, Relation, Applied), String> {
    let file = program.subject.source_name.clone();
    let applied = |description: String, node: String| Applied {
        transformation: t,
        description,
        node,
    };
    match t {
        Transformation::AddBreakpoint => {
            let plan = action::add_breakpoint::plan(script, &file, &program.code_lines(), rng)?;
            let a = plan.add_breakpoint.as_ref().expect("the plan adds a breakpoint");
            let what = applied(
                format!("added a breakpoint at {} before action {}", a.at, a.before + 1),
                program.node_type(Some(a.at.line)),
            );
            Ok((plan, program.clone(), relation(cfg, program), what))
        }
        Transformation::ReplaceContinue => {
            let plan = action::replace_continue::plan(script, rng)?;
            let r = plan.replace_continue.expect("the plan replaces a continue");
            let line = script.steps[r.index - 1].output.paused().map(|s| s.location.line);
            let what = applied(
                format!("replaced the continue of action {} by {}", r.index + 1, r.by.name()),
                program.node_type(line),
            );
            Ok((plan, program.clone(), relation(cfg, program), what))
        }
        Transformation::BreakpointSliding => {
            let slid = script.slid_breakpoints();
            let plan = action::sliding::plan(script)?;
            let (_, from, to) = &slid[0];
            let what = applied(
                format!(
                    "requested {} slid breakpoint(s) at their resolved locations ({from} -> {to}{})",
                    slid.len(),
                    if slid.len() > 1 { ", ..." } else { "" }
                ),
                program.node_type(Some(to.line)),
            );
            Ok((plan, program.clone(), relation(cfg, program), what))
        }
        Transformation::Program(kind) => {
            let language = program.subject.language;
            if program::transformation(language, kind).is_none() {
                return Err(format!("no {kind:?} for this language"));
            }
            let coverage = if kind == ProgramTransformationKind::RemoveDeadCode {
                Some(builder.coverage(program).await.map_err(|e| format!("coverage: {e}"))?)
            } else {
                None
            };
            // Parsing, scope analysis and re-parsing are CPU-bound (seconds
            // on a large Csmith program before issue 17): off the runtime's
            // worker threads, with the generator handed over and back.
            let text = program.text.clone();
            let mut moved = rng.clone();
            let (result, moved) = tokio::task::spawn_blocking(move || {
                let result = match program::transformation(language, kind) {
                    Some(t) => t.apply(ProgramInput::new(&text, coverage.as_ref()), &mut moved),
                    None => Err(Skip::new(kind, "no transformation of this kind for this language")),
                };
                (result, moved)
            })
            .await
            .map_err(|e| format!("the transformation panicked: {e}"))?;
            *rng = moved;
            let transformed = result.map_err(|s| s.reason)?;
            let follow = builder.build(&program.subject, &transformed.text).await?;
            // Section 3.2.1: sliding is applied before every program
            // transformation, so that no breakpoint slides into new code.
            let (slid, _) = script.slide();
            let mapped = slid.map(&transformed.map, &file).map_err(|e| e.to_string())?;
            let inserted = inserted_lines(&transformed.map, program.subject.line_count, follow.subject.line_count);
            if let Some(b) = slides_across(&mapped, &inserted) {
                return Err(format!(
                    "breakpoint {b} slides across the inserted code (its sliding could not be removed)"
                ));
            }
            // A breakpoint that still slides across a line whose breakability
            // may change could slide elsewhere (or stop sliding): the relation
            // could not tell where it must resolve, nor where it must pause.
            if let Some(b) = slides_across(&mapped, &transformed.breakability_may_change) {
                return Err(format!(
                    "breakpoint {b} slides across a line whose code was removed (its sliding could not be removed)"
                ));
            }
            let plan = Plan {
                script: mapped,
                inserted_lines: inserted,
                ..Plan::default()
            };
            let mut rel = relation(cfg, &follow);
            rel.expect_variable = transformed.expect_variable.clone();
            rel.replacements = transformed.map.replacements();
            rel.breakability_may_change = transformed.breakability_may_change.clone();
            rel.indeterminate = indeterminate(program, &transformed.map, &follow);
            rel.layout_may_change = language == Language::C;
            let what = applied(transformed.description.clone(), transformed.node.clone());
            Ok((plan, follow, rel, what))
        }
    }
}

/// A breakpoint that still slides (sliding could not be removed: another
/// breakpoint is requested at its target) past one of `lines` (new
/// numbering, its requested and resolved lines included): past an inserted
/// line it would slide into the new code instead (ISSTA'19 section 3.2.1);
/// past a line whose breakability may change it may stop there.
fn slides_across(script: &Script, lines: &[u32]) -> Option<doppel_core::Location> {
    script
        .slid_breakpoints()
        .into_iter()
        .find_map(|(_, from, to)| lines.iter().any(|&l| from.line <= l && l <= to.line).then_some(from))
}

/// Lines of the new program that no line of the old one maps to: inserted code.
pub fn inserted_lines(map: &LocationMap, old_lines: u32, new_lines: u32) -> Vec<u32> {
    let image: std::collections::BTreeSet<u32> = (1..=old_lines).filter_map(|l| map.map_line(l)).collect();
    (1..=new_lines).filter(|l| !image.contains(l)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_lang::edit::{Pos, SourceEdit, apply};

    #[test]
    fn inserted_lines_are_the_new_ones_only() {
        let (_, map) = apply(
            "a;\nb;\nc;\n",
            &[SourceEdit::insert(Pos::new(2, 1), "if (0) {\n  x = 1;\n}\n")],
        )
        .unwrap();
        assert_eq!(inserted_lines(&map, 3, 6), vec![2, 3, 4]);
        let (_, map) = apply(
            "a = 1;\n",
            &[SourceEdit::replace(Pos::new(1, 5), Pos::new(1, 6), "(1*1)")],
        )
        .unwrap();
        assert!(inserted_lines(&map, 1, 1).is_empty());
    }

    #[test]
    fn a_breakpoint_still_sliding_across_a_given_line_is_found() {
        use doppel_core::{Action, Location, Output};
        // Requested at 15 (the `}` of an emptied block, now on the `if`
        // line), resolved at 18 in the initial run: node's case of a slide
        // that could not be removed.
        let script = Script {
            steps: vec![crate::script::Step {
                action: Action::SetBreakpoint {
                    at: Location::line("p.js", 15),
                },
                output: Output::BreakpointSet {
                    requested: Location::line("p.js", 15),
                    resolved: Some(Location::line("p.js", 18)),
                    message: None,
                },
            }],
        };
        assert_eq!(slides_across(&script, &[15]), Some(Location::line("p.js", 15)));
        assert_eq!(slides_across(&script, &[16, 18]), Some(Location::line("p.js", 15)));
        assert_eq!(slides_across(&script, &[14, 19]), None);
    }
}
