//! The first divergence of the two executions on t: Darwin's report when
//! no deviation is validated.
//!
//! Darwin's deviations (TOSEM sections 3-4) need a branch, own or virtual
//! (section 5's predicates), whose direction an input can change while
//! keeping the other program's path. Two kinds of fault leave none:
//!
//! - faults in what a statement prints (`printf("No")` for `printf("NO")`,
//!   a wrong format or printed expression) or in how libc parses the input
//!   (a `scanf` format): f and f' have the same user branches;
//! - faults whose deviating input would have to change a value that the
//!   rest of the path pins (`a[j] > 5` for `a[j] >= 5` on t = 5, where the
//!   loop after it runs `a[j] - 5` times): P and P' already part on t
//!   itself, but no other input parts them at that branch alone.
//!
//! What t itself shows is where the executions part. The *branch
//! divergence point*: the user's own branches of P and P' on t, each as
//! its source line's text (blanks removed) and direction, are compared in
//! order; at the first difference after a common prefix of at least one
//! branch, the branch of P' and the branch of P there are the candidates
//! (only the longer one's when one sequence is a prefix of the other).
//! Without one (identical branch sequences, or programs that differ from
//! their first branch, as a cross-author pair may), the *output divergence
//! point*: the statements of P' and of P that printed the first differing
//! character under Codeflaws' comparison
//! ([`doppel_lang::c::codeflaws::first_difference`]). P''s line first; t
//! is the witness. They rank after every deviation and after the critical
//! predicates of [`crate::switching`] ([`crate::darwin::score`]).
//!
//! Writes are attributed by doppel-concolic (`Observe::writes`): the
//! innermost call on the stack in the user's source when `fd_write` runs,
//! exact because the wasm builds' stdout is unbuffered.

use crate::darwin::{DivergencePoint, Program, RootCause, Witness};
use crate::truth::Line;
use doppel_concolic::{BranchKind, Run};
use doppel_lang::c::codeflaws::first_difference;

/// The first divergence of `rp` (P's run on `t`) and `rq` (P''s):
/// the branch divergence point if there is one, else the output
/// divergence point; at most one line per program, P''s first. Empty when
/// neither exists (no common branch prefix and matching outputs, or no
/// user statement behind the first differing output).
pub fn first_divergence(p: &Program, q: &Program, rp: &Run, rq: &Run, t: &[u8]) -> Vec<RootCause> {
    let witness = Witness {
        input: t.to_vec(),
        reference_output: String::from_utf8_lossy(&rp.stdout).into_owned(),
        modified_output: String::from_utf8_lossy(&rq.stdout).into_owned(),
        successful: false,
    };
    let branches = branch_divergence(p, q, rp, rq, &witness);
    if !branches.is_empty() {
        return branches;
    }
    output_divergence(p, q, rp, rq, &witness)
}

/// One own branch as compared across programs: its line's text without
/// blanks, and its direction.
type Event = (String, u32);

/// A run's own branches in order: (offset, compared form).
fn events(prog: &Program, r: &Run, lines: &[&str]) -> Vec<(u32, Event)> {
    r.branches
        .iter()
        .filter(|b| !matches!(b.kind, BranchKind::Predicate(_)))
        .map(|b| {
            let line = prog.module.source_loc(b.offset).map_or(0, |l| l.line) as usize;
            let text: String = line
                .checked_sub(1)
                .and_then(|i| lines.get(i))
                .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect())
                .unwrap_or_else(|| format!("@{}", b.offset));
            (b.offset, (text, b.taken))
        })
        .collect()
}

fn branch_divergence(p: &Program, q: &Program, rp: &Run, rq: &Run, witness: &Witness) -> Vec<RootCause> {
    let (Ok(tp), Ok(tq)) = (std::fs::read_to_string(&p.source), std::fs::read_to_string(&q.source)) else {
        return Vec::new();
    };
    let (lp, lq): (Vec<&str>, Vec<&str>) = (tp.lines().collect(), tq.lines().collect());
    let (ep, eq) = (events(p, rp, &lp), events(q, rq, &lq));
    let common = ep.iter().zip(&eq).take_while(|(a, b)| a.1 == b.1).count();
    if common == 0 || (common == ep.len() && common == eq.len()) {
        return Vec::new();
    }
    [(q, eq.get(common)), (p, ep.get(common))]
        .into_iter()
        .filter_map(|(prog, e)| {
            let &(offset, _) = e?;
            cause(prog, offset, DivergencePoint::Branch, (common as u32, 0), witness)
        })
        .collect()
}

fn output_divergence(p: &Program, q: &Program, rp: &Run, rq: &Run, witness: &Witness) -> Vec<RootCause> {
    let Some((kp, kq)) = first_difference(&rp.stdout, &rq.stdout) else {
        return Vec::new();
    };
    [(q, rq, kq), (p, rp, kp)]
        .into_iter()
        .filter_map(|(prog, r, k)| {
            let k = k?;
            let offset = r.writer_of(k)?.site?;
            cause(
                prog,
                offset,
                DivergencePoint::Output,
                (k as u32, r.stdout.len() as u32),
                witness,
            )
        })
        .collect()
}

fn cause(
    prog: &Program,
    offset: u32,
    point: DivergencePoint,
    position: (u32, u32),
    witness: &Witness,
) -> Option<RootCause> {
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
        point: Some(point),
        position,
    })
}
