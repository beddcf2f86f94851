//! Breakpoint sliding (ISSTA'19 section 3.2.1, Figure 10): a breakpoint
//! requested at `l` that the debugger moved to `l'` must behave exactly like
//! one requested at `l'`. The follow-up requests every slid breakpoint at
//! its resolved location and expects the initial trace unchanged.

use super::Plan;
use crate::script::Script;

/// The plan, or `Err` when no breakpoint slid in the initial run.
pub fn plan(script: &Script) -> Result<Plan, String> {
    let (script, n) = script.slide();
    if n == 0 {
        return Err("no breakpoint slid in the initial run".into());
    }
    Ok(Plan {
        script,
        ..Plan::default()
    })
}
