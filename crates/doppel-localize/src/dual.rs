//! One z3 process fed from two arenas (P's and P''s runs): the solver
//! sessions of Darwin's deviation queries ([`crate::darwin`],
//! [`crate::sliced`]). Definitions of the two arenas are renamed apart
//! (`s0eN`, `s1eN`); input variables are shared.

use doppel_concolic::smt::SmtWriter;
use doppel_concolic::solver::{SatResult, Solver, SolverError, Z3Process};
use doppel_concolic::{ExprArena, ExprId, InputVar};
use std::time::Duration;

/// Renames a writer's definitions (`eN`, `tN`) apart, so that expressions
/// of two arenas (P's and P''s runs) can share one solver.
pub(crate) fn rename(text: &str, side: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        let b = token.as_bytes();
        if b.len() > 1 && (b[0] == b'e' || b[0] == b't') && b[1..].iter().all(u8::is_ascii_digit) {
            out.push_str(&format!("s{side}{token}"));
        } else {
            out.push_str(token);
        }
        token.clear();
    };
    for c in text.chars() {
        if c.is_whitespace() || c == '(' || c == ')' {
            flush(&mut token, &mut out);
            out.push(c);
        } else {
            token.push(c);
        }
    }
    flush(&mut token, &mut out);
    out
}

/// A solver model: a value per input byte.
pub(crate) type Model = Vec<(InputVar, u8)>;

/// A z3 process fed from two arenas.
pub(crate) struct Dual {
    pub(crate) solver: Z3Process,
    pub(crate) writers: [SmtWriter; 2],
    /// Everything sent in open scopes: the text of a one-shot query, and a
    /// script in `DOPPEL_DARWIN_DUMP` (a directory) for a query the solver
    /// gives up on.
    pub(crate) log: Option<Vec<String>>,
}

impl Dual {
    pub(crate) fn new(vars: &[InputVar]) -> Result<Self, SolverError> {
        let mut d = Dual {
            solver: Z3Process::new()?,
            writers: [SmtWriter::new(), SmtWriter::new()],
            log: Some(Vec::new()),
        };
        let mut text = String::new();
        let mut scratch = String::new();
        for v in vars {
            d.writers[0].declare(*v, &mut text);
            d.writers[1].declare(*v, &mut scratch);
        }
        d.send(text)?;
        Ok(d)
    }

    pub(crate) fn assert(&mut self, side: usize, arena: &ExprArena, e: ExprId) -> Result<(), SolverError> {
        let text = rename(&self.writers[side].assert(arena, e), side);
        self.send(text)
    }

    pub(crate) fn send(&mut self, text: String) -> Result<(), SolverError> {
        self.solver.send(&text)?;
        if let Some(log) = self.log.as_mut() {
            log.push(text);
        }
        Ok(())
    }

    /// Checks the current assertions plus `neg` (from `arena`, side 1) on a
    /// fresh z3 process: z3's incremental core is far slower on these
    /// array and bit-vector queries than its one-shot solver (a query z3
    /// answers in 0.3 s alone timed out at 5 s in the long-lived session).
    pub(crate) fn one_shot(
        &mut self,
        arena: &ExprArena,
        neg: ExprId,
        vars: &[InputVar],
        timeout: Duration,
    ) -> Result<(SatResult, Option<Model>), SolverError> {
        self.push()?;
        let text = rename(&self.writers[1].assert(arena, neg), 1);
        let mut script = self.log.as_ref().map(|l| l.concat()).unwrap_or_default();
        script.push_str(&text);
        // Keep the writers' bookkeeping in step with the long-lived solver.
        self.send(text)?;
        let mut fresh = Z3Process::new()?;
        let result = (|| {
            fresh.send(&script)?;
            let answer = fresh.check(timeout)?;
            let model = if answer == SatResult::Sat {
                Some(model_values(&mut fresh, vars)?)
            } else {
                None
            };
            Ok((answer, model))
        })();
        if matches!(result, Ok((SatResult::Unknown, _))) {
            self.dump(&format!("unknown-{}.smt2", std::process::id()));
        }
        self.pop()?;
        result
    }

    /// Checks the current assertions plus `neg` (side 1) in this
    /// long-lived process, in a push/pop scope, with a short timeout: most
    /// deviation queries are decided at once here, without the cost of
    /// starting z3 and re-sending the path condition; what it cannot decide
    /// (`Unknown`) goes to [`Dual::one_shot`].
    pub(crate) fn incremental(
        &mut self,
        arena: &ExprArena,
        neg: ExprId,
        vars: &[InputVar],
        timeout: Duration,
    ) -> Result<(SatResult, Option<Model>), SolverError> {
        self.push()?;
        let text = rename(&self.writers[1].assert(arena, neg), 1);
        self.send(text)?;
        let answer = self.solver.check(timeout)?;
        let model = if answer == SatResult::Sat {
            Some(model_values(&mut self.solver, vars)?)
        } else {
            None
        };
        self.pop()?;
        Ok((answer, model))
    }

    /// Writes the current assertions as a script to `DOPPEL_DARWIN_DUMP`.
    pub(crate) fn dump(&self, name: &str) {
        if let (Some(log), Some(dir)) = (&self.log, std::env::var_os("DOPPEL_DARWIN_DUMP")) {
            let text = format!("(set-logic ALL)\n{}(check-sat)\n", log.concat());
            let _ = std::fs::write(std::path::Path::new(&dir).join(name), text);
        }
    }

    /// Forgets every open scope (after the process failed inside one): the
    /// writers and the log are back at the outermost level.
    pub(crate) fn reset_scopes(&mut self) {
        if let Some(log) = self.log.as_mut()
            && let Some(i) = log.iter().position(|t| t == "(push 1)\n")
        {
            let open = log[i..].iter().filter(|t| *t == "(push 1)\n").count();
            log.truncate(i);
            for _ in 0..open {
                self.writers.iter_mut().for_each(SmtWriter::pop);
            }
        }
    }

    pub(crate) fn push(&mut self) -> Result<(), SolverError> {
        self.writers.iter_mut().for_each(SmtWriter::push);
        if let Some(log) = self.log.as_mut() {
            log.push("(push 1)\n".into());
        }
        self.solver.push()
    }

    pub(crate) fn pop(&mut self) -> Result<(), SolverError> {
        self.writers.iter_mut().for_each(SmtWriter::pop);
        if let Some(log) = self.log.as_mut() {
            // Drop what the scope added.
            if let Some(i) = log.iter().rposition(|t| t == "(push 1)\n") {
                log.truncate(i);
            }
        }
        self.solver.pop()
    }
}

/// The values of the input variables `vars` in `solver`'s model (after a
/// `sat` answer): one byte per variable, variables z3 names that are not
/// input bytes left out.
pub(crate) fn model_values(solver: &mut Z3Process, vars: &[InputVar]) -> Result<Model, SolverError> {
    let names: Vec<String> = vars.iter().map(InputVar::name).collect();
    Ok(solver
        .values(&names)?
        .into_iter()
        .filter_map(|(n, v)| InputVar::parse(&n).map(|var| (var, v as u8)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renaming_keeps_variables_and_operators() {
        let t = "(define-fun e12 () (_ BitVec 8) (bvadd stdin_3 #x01))\n(assert (= e12 (select t0 e1)))\n";
        assert_eq!(
            rename(t, 1),
            "(define-fun s1e12 () (_ BitVec 8) (bvadd stdin_3 #x01))\n(assert (= s1e12 (select s1t0 s1e1)))\n"
        );
    }
}
