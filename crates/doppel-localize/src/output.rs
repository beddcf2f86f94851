//! The output deviation point: where P and P' first print differently on
//! t, and which of the user's statements printed there.
//!
//! Darwin's deviations (TOSEM sections 3-4) need a branch, own or virtual
//! (section 5's predicates), whose direction some input can change between
//! the two path conditions. A fault that only changes what a statement
//! prints (`printf("No")` for `printf("NO")`, a wrong format or constant
//! in the printed expression) or how libc parses the input (a `scanf`
//! format) leaves f and f' with the same user branches: no deviation
//! exists. What t itself still shows is where the outputs part. The
//! statements of P' and of P that wrote the first differing character
//! under Codeflaws' comparison ([`doppel_lang::c::codeflaws::first_difference`])
//! are then the candidates, with t as their witness; P''s first. They are
//! reported only when no deviation was validated
//! ([`crate::darwin::DarwinOutcome::OutputDeviation`]), after every other
//! cause in [`crate::darwin::score`].
//!
//! Writes are attributed by doppel-concolic (`Observe::writes`): the
//! innermost call on the stack in the user's source when `fd_write` runs,
//! exact because the wasm builds' stdout is unbuffered.

use crate::darwin::{Program, RootCause, Witness};
use crate::truth::Line;
use doppel_concolic::Run;
use doppel_lang::c::codeflaws::first_difference;

/// The statements of `p` (reference) and `q` (modified) that wrote the
/// first differing output of their runs `rp` and `rq` on `t`: at most one
/// per program, `q`'s first. Empty when the outputs match or no write
/// there has a user statement (a flush at exit, a run without
/// `Observe::writes`).
pub fn output_causes(p: &Program, q: &Program, rp: &Run, rq: &Run, t: &[u8]) -> Vec<RootCause> {
    let Some((kp, kq)) = first_difference(&rp.stdout, &rq.stdout) else {
        return Vec::new();
    };
    let witness = Witness {
        input: t.to_vec(),
        reference_output: String::from_utf8_lossy(&rp.stdout).into_owned(),
        modified_output: String::from_utf8_lossy(&rq.stdout).into_owned(),
        successful: false,
    };
    [(q, rq, kq), (p, rp, kp)]
        .into_iter()
        .filter_map(|(prog, r, k)| {
            let k = k?;
            let offset = r.writer_of(k)?.site?;
            let loc = prog.module.source_loc(offset)?;
            (loc.line > 0).then(|| RootCause {
                line: Line {
                    side: prog.side,
                    line: loc.line,
                },
                function: loc.function.clone(),
                offset,
                witness: witness.clone(),
                predicate: false,
                output: true,
                position: (k as u32, r.stdout.len() as u32),
            })
        })
        .collect()
}
