//! Deviation queries on slices ([`crate::slice`]): the session of one walk
//! of [`crate::darwin`] with `DarwinConfig::slicing`.
//!
//! Every constraint of f and of the growing prefix ψ1..ψi is *defined* in
//! one long-lived z3 process (a `define-fun` at the outermost level, sent
//! once) and registered with a [`Slicer`]; a query asserts, in a push/pop
//! scope, only the constraints of the groups that share an input byte with
//! ¬ψi+1, and asks for the values of those groups' bytes only (the rest keep
//! t's values). The cheap check is the same scope without f's constraints.
//! With `DarwinConfig::near_t_first`, the first query of a deviation also
//! fixes the slice's bytes that ¬ψi+1 does not read to t's values (the
//! paper's concretization of the rest), so its model is near t; the whole
//! slice is freed only when that fails.
//! A query the long-lived process cannot decide in its short timeout goes
//! to a fresh z3 given the slice alone; a long-lived process that fails (no
//! answer within its timeout and grace: killed) is replaced by one that is
//! sent the definitions again, with no assertion to re-decide.

use crate::darwin::{DarwinConfig, DarwinStats, Witness};
use crate::dual::{Dual, Model, model_values, rename};
use crate::slice::Slicer;
use doppel_concolic::smt::SmtWriter;
use doppel_concolic::solver::{SatResult, Solver, SolverError, Z3Process};
use doppel_concolic::{ExprArena, ExprId, InputSource, InputVar};
use std::time::Duration;

/// Extra time the long-lived process gets beyond a query's timeout before
/// it is killed and replaced (a replacement costs only the definitions).
const GRACE: Duration = Duration::from_millis(500);

/// A registered constraint: which arena (0: the base run's, f; 1: the
/// deviating run's, the prefix), its expression, and its defined name.
struct Entry {
    side: usize,
    expr: ExprId,
    name: String,
}

/// The sliced solver session of one walk.
pub(crate) struct SlicedSession {
    dual: Dual,
    slicer: Slicer,
    entries: Vec<Entry>,
    /// t's standard input: the values of the bytes a near-t query fixes.
    t: Vec<u8>,
}

fn stdin_var(index: u32) -> InputVar {
    InputVar {
        source: InputSource::Stdin,
        index,
    }
}

fn bytes(arena: &ExprArena, e: ExprId) -> Vec<u32> {
    arena
        .vars(e)
        .into_iter()
        .filter(|v| v.source == InputSource::Stdin)
        .map(|v| v.index)
        .collect()
}

impl SlicedSession {
    /// A session over t's standard input bytes `vars` (in order; `t` their
    /// values), with f's constraints `f` from `base` registered.
    pub(crate) fn new(vars: &[InputVar], t: &[u8], base: &ExprArena, f: &[ExprId]) -> Result<Self, SolverError> {
        let mut s = SlicedSession {
            dual: Dual::new(vars)?,
            slicer: Slicer::new(vars.len()),
            entries: Vec::new(),
            t: t.to_vec(),
        };
        s.dual.solver.grace = GRACE;
        for &e in f {
            s.add(0, base, e)?;
        }
        Ok(s)
    }

    /// Defines constraint `expr` of `arena` (side 0: f, 1: the prefix) and
    /// registers it.
    pub(crate) fn add(&mut self, side: usize, arena: &ExprArena, expr: ExprId) -> Result<(), SolverError> {
        let mut defs = String::new();
        let name = self.dual.writers[side].term(arena, expr, &mut defs);
        if !defs.is_empty() {
            self.dual.send(rename(&defs, side))?;
        }
        self.slicer.add(&bytes(arena, expr));
        self.entries.push(Entry {
            side,
            expr,
            name: rename(&name, side),
        });
        Ok(())
    }

    /// The deviation query of `neg` (¬ψi+1, in `arenas[1]`): the cheap check
    /// on the slice's prefix, then (with `near_t_first`) the slice with only
    /// `neg`'s own bytes free, then the whole slice free; each model goes
    /// to `check` (the concrete validation) and the first witness is the
    /// answer. `arenas`: the base run's and the deviating run's. Solver
    /// failures are counted in `stats` and answered as undecided; `Err`
    /// only when no replacement solver can be started.
    pub(crate) fn query(
        &mut self,
        arenas: [&ExprArena; 2],
        neg: ExprId,
        cfg: &DarwinConfig,
        stats: &mut DarwinStats,
        check: &dyn Fn(&Model) -> Option<Witness>,
    ) -> Result<Option<Witness>, SolverError> {
        let neg_bytes = bytes(arenas[1], neg);
        if neg_bytes.is_empty() {
            // A concrete condition: ¬ψ is false on every input.
            stats.precheck_unsat += 1;
            return Ok(None);
        }
        let (members, slice_bytes) = self.slicer.slice(&neg_bytes);
        stats.slice_constraints.0 += members.len();
        stats.slice_constraints.1 += self.entries.len();
        let prefix: Vec<usize> = members.iter().copied().filter(|&m| self.entries[m].side == 1).collect();
        match self.scoped(&prefix, &[], arenas[1], neg, cfg.precheck_timeout, None) {
            Ok((SatResult::Unsat, _)) => {
                stats.precheck_unsat += 1;
                return Ok(None);
            }
            Ok(_) => {}
            Err(_) => self.restart(stats)?,
        }
        stats.queries += 1;
        let vars: Vec<InputVar> = slice_bytes.iter().map(|&b| stdin_var(b)).collect();
        let fixed: Vec<u32> = slice_bytes
            .iter()
            .copied()
            .filter(|b| neg_bytes.binary_search(b).is_err())
            .collect();
        if cfg.near_t_first && !fixed.is_empty() && !cfg.incremental_timeout.is_zero() {
            match self.scoped(&members, &fixed, arenas[1], neg, cfg.incremental_timeout, Some(&vars)) {
                Ok((SatResult::Sat, Some(model))) => {
                    if let Some(w) = check(&model) {
                        stats.sat += 1;
                        stats.incremental += 1;
                        stats.near_t += 1;
                        return Ok(Some(w));
                    }
                }
                Ok(_) => {}
                Err(_) => self.restart(stats)?,
            }
        }
        let mut answer = (SatResult::Unknown, None);
        if !cfg.incremental_timeout.is_zero() {
            match self.scoped(&members, &[], arenas[1], neg, cfg.incremental_timeout, Some(&vars)) {
                Ok(a) => {
                    if a.0 != SatResult::Unknown {
                        stats.incremental += 1;
                    }
                    answer = a;
                }
                Err(_) => self.restart(stats)?,
            }
        }
        if answer.0 == SatResult::Unknown {
            answer = match self.one_shot(&members, &vars, arenas, neg, cfg.query_timeout) {
                Ok(a) => a,
                Err(_) => {
                    stats.solver_errors += 1;
                    (SatResult::Unknown, None)
                }
            };
        }
        match answer.0 {
            SatResult::Unknown => stats.unknown += 1,
            SatResult::Sat => stats.sat += 1,
            SatResult::Unsat => {}
        }
        Ok(answer.1.and_then(|m| check(&m)))
    }

    /// Asserts the `members`, `neg` and t's values of the bytes `fixed` in a
    /// scope of the long-lived process and checks them; with `model`, the
    /// values of those bytes when satisfiable.
    fn scoped(
        &mut self,
        members: &[usize],
        fixed: &[u32],
        arena: &ExprArena,
        neg: ExprId,
        timeout: Duration,
        model: Option<&[InputVar]>,
    ) -> Result<(SatResult, Option<Model>), SolverError> {
        self.dual.push()?;
        let mut text = String::new();
        for &m in members {
            text.push_str(&format!("(assert {})\n", self.entries[m].name));
        }
        for &b in fixed {
            let value = self.t.get(b as usize).copied().unwrap_or(0);
            text.push_str(&format!("(assert (= {} #x{value:02x}))\n", stdin_var(b).name()));
        }
        text.push_str(&rename(&self.dual.writers[1].assert(arena, neg), 1));
        self.dual.send(text)?;
        let answer = self.dual.solver.check(timeout)?;
        let values = match (answer, model) {
            (SatResult::Sat, Some(vars)) => Some(model_values(&mut self.dual.solver, vars)?),
            _ => None,
        };
        self.dual.pop()?;
        Ok((answer, values))
    }

    /// The slice alone on a fresh z3 process.
    fn one_shot(
        &self,
        members: &[usize],
        vars: &[InputVar],
        arenas: [&ExprArena; 2],
        neg: ExprId,
        timeout: Duration,
    ) -> Result<(SatResult, Option<Model>), SolverError> {
        let mut writers = [SmtWriter::new(), SmtWriter::new()];
        let (mut script, mut scratch) = (String::new(), String::new());
        for v in vars {
            writers[0].declare(*v, &mut script);
            writers[1].declare(*v, &mut scratch);
        }
        for &m in members {
            let e = &self.entries[m];
            script.push_str(&rename(&writers[e.side].assert(arenas[e.side], e.expr), e.side));
        }
        script.push_str(&rename(&writers[1].assert(arenas[1], neg), 1));
        let mut fresh = Z3Process::new()?;
        fresh.grace = GRACE;
        fresh.send(&script)?;
        let answer = fresh.check(timeout)?;
        if answer == SatResult::Unknown
            && let Some(dir) = std::env::var_os("DOPPEL_DARWIN_DUMP")
        {
            let text = format!("(set-logic ALL)\n{script}(check-sat)\n");
            let name = format!("unknown-sliced-{}-{}.smt2", std::process::id(), neg.0);
            let _ = std::fs::write(std::path::Path::new(&dir).join(name), text);
        }
        let model = match answer {
            SatResult::Sat => Some(model_values(&mut fresh, vars)?),
            _ => None,
        };
        Ok((answer, model))
    }

    /// Replaces a failed long-lived process: the open scope is dropped and
    /// the definitions are sent again.
    fn restart(&mut self, stats: &mut DarwinStats) -> Result<(), SolverError> {
        stats.solver_errors += 1;
        self.dual.reset_scopes();
        let mut solver = Z3Process::new()?;
        solver.grace = GRACE;
        // The log holds the declarations and every definition.
        solver.send(&self.dual.log.as_ref().map(|l| l.concat()).unwrap_or_default())?;
        self.dual.solver = solver;
        Ok(())
    }
}
