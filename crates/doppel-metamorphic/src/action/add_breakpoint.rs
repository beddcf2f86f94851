//! Add breakpoint and continue (ISSTA'19 section 3.2.1, Figures 6 and 7):
//! a breakpoint at a random line, added at a random point of the run where
//! the debugger takes actions. Pauses at its resolved location that the
//! initial run did not have are ignored; a step that such a pause
//! interrupted is completed by the follow-up runner (a temporary breakpoint
//! where the initial step went and a continue, or, for a step out, further
//! step outs until the frame is left).

use super::{AddedBreakpoint, Plan, issuable_points};
use crate::script::Script;
use doppel_core::Location;
use rand::Rng;

/// The plan: `lines` are the candidate lines (lines with code; those the
/// script requests a breakpoint at are left out), `file` the program's file name. `Err` when there is no line or no point to add it.
pub fn plan(script: &Script, file: &str, lines: &[u32], rng: &mut impl Rng) -> Result<Plan, String> {
    if lines.is_empty() {
        return Err("the program has no line with code".into());
    }
    let points = issuable_points(script);
    if points.is_empty() {
        return Err("the initial run has no point where a breakpoint can be added".into());
    }
    // A line the script requests a breakpoint at already would make the
    // two requests one (debuggers name breakpoints by their request).
    let requested: std::collections::BTreeSet<u32> = script
        .steps
        .iter()
        .filter_map(|s| match &s.action {
            doppel_core::Action::SetBreakpoint { at } if at.file == file => Some(at.line),
            _ => None,
        })
        .collect();
    let lines: Vec<u32> = lines.iter().copied().filter(|l| !requested.contains(l)).collect();
    if lines.is_empty() {
        return Err("every line with code has a breakpoint already".into());
    }
    let line = lines[rng.random_range(0..lines.len())];
    let before = points[rng.random_range(0..points.len())];
    Ok(Plan {
        script: script.clone(),
        add_breakpoint: Some(AddedBreakpoint {
            before,
            at: Location::line(file, line),
        }),
        ..Plan::default()
    })
}
