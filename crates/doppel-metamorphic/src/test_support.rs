//! Shared fixtures of the unit tests.

use doppel_core::{Frame, Location, PauseReason, ProgramState};

/// A pause in `main` of `p.c` at `line`, without variables.
pub fn pause_in_main(line: u32, reason: PauseReason) -> ProgramState {
    ProgramState {
        location: Location::line("p.c", line),
        reason,
        call_stack: vec![Frame {
            function: "main".into(),
            location: Some(Location::line("p.c", line)),
        }],
        variables: vec![],
        signal: None,
        return_value: None,
    }
}
