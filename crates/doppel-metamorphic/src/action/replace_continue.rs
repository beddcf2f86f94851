//! Replace continue by step (ISSTA'19 section 3.2.1, Figure 8, Table 2):
//! continue ⊂ step out ⊂ step over ⊂ step in by where they may pause, so
//! a continue may be replaced by a step, followed (when the step paused
//! somewhere the continue did not) by a continue; every pause of the initial
//! run must still appear.

use super::{Plan, ReplacedContinue, depth};
use crate::script::Script;
use doppel_core::ExecAction;
use rand::Rng;

/// The plan, or `Err` when the initial run has no continue issued while
/// paused that pauses again.
pub fn plan(script: &Script, rng: &mut impl Rng) -> Result<Plan, String> {
    let candidates: Vec<(usize, usize)> = script
        .resumes()
        .into_iter()
        .filter_map(|i| {
            // A continue that ends the program: a step there leaves the
            // program's code (into the C library's exit path), where the
            // subset relation says nothing.
            script.steps[i].output.paused()?;
            let before = script.steps.get(i.checked_sub(1)?)?.output.paused()?;
            Some((i, depth(before)))
        })
        .collect();
    if candidates.is_empty() {
        return Err("the initial run has no continue".into());
    }
    let (index, depth) = candidates[rng.random_range(0..candidates.len())];
    // A step out of the outermost frame leaves the program's code.
    let steps: &[ExecAction] = if depth > 1 {
        &[ExecAction::StepIn, ExecAction::StepOver, ExecAction::StepOut]
    } else {
        &[ExecAction::StepIn, ExecAction::StepOver]
    };
    let by = steps[rng.random_range(0..steps.len())];
    Ok(Plan {
        script: script.clone(),
        replace_continue: Some(ReplacedContinue { index, by }),
        ..Plan::default()
    })
}
