//! Observation points: predicates over values, recorded as virtual branches.
//!
//! A client names source files ([`crate::Observe::files`]); at the
//! instructions of those files the interpreter evaluates predicates that no
//! branch of the program computes and records each one like a conditional
//! branch: a [`crate::BranchRecord`] of kind [`crate::BranchKind::Predicate`]
//! (`taken` = 1 when the predicate holds) and, when the predicate depends on
//! input, its oriented constraint in the path condition. The predicate
//! families are those of statistical debugging (Liblit et al., PLDI 2005,
//! "returns" and "scalar-pairs"), as Darwin (TOSEM, section 5, "errors that
//! do not affect control flow") instruments them:
//!
//! - at a `call` whose callee returns one `i32`/`i64`: `result < 0` (signed)
//!   and `result == 0` (the null check of a pointer);
//! - at an integer store of 4 or 8 bytes (an assignment to a variable in
//!   memory, which is where clang puts every C variable at `-O0`):
//!   `stored == y` for the current contents of the most recently used
//!   other slots of the same size ([`crate::Observe::peers`] of them: the
//!   variables of the same type that user code read or wrote last, an
//!   approximation of "live at the statement"; variables that `scanf`
//!   filled become peers once the user's code reads them). A 4-byte store
//!   compares the low 32 bits, so `i64.store32` and `i32.store` behave alike;
//! - with [`crate::Observe::narrow`], the same at 1- and 2-byte stores
//!   (`char` and `short` variables, `i32.store8`/`store16`), compared at 8
//!   or 16 bits with the recently used slots of the same size.
//!
//! Concrete and symbolic runs record the same sequence: which slots are
//! compared depends only on the addresses stored to, never on shadows.
//!
//! With [`crate::Observe::writes`], the observation points also name the
//! statement behind each write to stdout: the innermost call on the stack
//! that sits at one ([`crate::Run::writes`]).

use crate::decode::{Func, Module};
use crate::exec::{Machine, load};
use crate::expr::ExprId;
use crate::instr::{ICmp, LoadKind};
use crate::{BranchKind, BranchRecord, ConstraintOrigin, Observe, Predicate};

/// The observation state of one run.
pub(crate) struct Observer {
    /// Per source-location index: whether it is an observation point
    /// (empty when observation is off).
    points: Vec<bool>,
    /// Predicates on call results.
    pub returns: bool,
    /// `x == y` predicates at stores.
    pub assignments: bool,
    peers: usize,
    /// 1- and 2-byte slots too.
    narrow: bool,
    /// Writes to stdout are attributed to their statement.
    pub writes: bool,
    /// Recently assigned slots `(address, bytes)`, newest first.
    recent: Vec<(u32, u8)>,
}

impl Observer {
    pub fn new(module: &Module, cfg: &Observe) -> Observer {
        let on = (cfg.returns || cfg.assignments || cfg.writes) && !cfg.files.is_empty();
        let points = if on {
            module
                .source
                .locs
                .iter()
                .map(|l| cfg.files.iter().any(|f| crate::source::file_matches(&l.file, f)))
                .collect()
        } else {
            Vec::new()
        };
        Observer {
            points,
            returns: on && cfg.returns,
            assignments: on && cfg.assignments && cfg.peers > 0,
            peers: cfg.peers as usize,
            narrow: cfg.narrow,
            writes: on && cfg.writes,
            recent: Vec::new(),
        }
    }

    /// Notes an integer slot of `bytes` at `ea` that user code just read or
    /// wrote: the variables in use, the peers of the next assignment.
    #[inline]
    pub fn touch(&mut self, ea: u32, bytes: u8) {
        let recent = &mut self.recent;
        if recent.first() == Some(&(ea, bytes)) {
            return;
        }
        recent.retain(|&(a, _)| a != ea);
        recent.insert(0, (ea, bytes));
        recent.truncate(4 * self.peers);
    }

    /// Whether an integer access of `bytes` is a variable slot that the
    /// `x == y` predicates observe.
    #[inline]
    pub fn slot(&self, bytes: u8) -> bool {
        bytes == 4 || bytes == 8 || (self.narrow && (bytes == 1 || bytes == 2))
    }

    /// Whether instruction `i` of `func` is an observation point.
    #[inline]
    pub fn at(&self, func: &Func, i: usize) -> bool {
        match func.locs.get(i) {
            Some(&l) if l != u32::MAX => self.points.get(l as usize).copied().unwrap_or(false),
            _ => false,
        }
    }
}

impl Machine<'_> {
    /// The `x == y` predicates of the store just executed at instruction
    /// `pc - 1` of `func`: `bytes` (1, 2, 4 or 8) of value `v` (shadow
    /// `sv`) at `ea`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn observe_store<const SYM: bool>(
        &mut self,
        fi: usize,
        func: &Func,
        pc: usize,
        ea: u32,
        bytes: u8,
        v: u64,
        sv: u32,
    ) {
        let w: u8 = bytes * 8;
        let v = if w == 64 { v } else { v & ((1u64 << w) - 1) };
        let sv = if SYM { self.low_bits(sv, w) } else { 0 };
        let peers: Vec<u32> = self
            .obs
            .recent
            .iter()
            .filter(|&&(a, b)| b == bytes && a != ea)
            .map(|&(a, _)| a)
            .take(self.obs.peers)
            .collect();
        let kind = LoadKind {
            bytes,
            signed: false,
            wide: w == 64,
            float: false,
        };
        let offset = func.offsets[pc - 1];
        for a in peers {
            if a as usize + bytes as usize > self.mem.len() {
                continue;
            }
            let y = load(&self.mem, a as usize, kind);
            let sy = if SYM && !self.sym.mem.is_empty() {
                let s = self.sym.load(&self.mem, kind, a, a as u64, 0, 0, offset);
                self.low_bits(s, w)
            } else {
                0
            };
            let holds = v == y;
            let cond = if SYM && (sv | sy) != 0 {
                let e = self.sym.icmp_bool(ICmp::Eq, w, v, sv, y, sy);
                Some(if holds { e } else { self.sym.arena.not(e) })
            } else {
                None
            };
            self.predicate(fi, func, pc, Predicate::Equal, holds, cond);
        }
        self.obs.touch(ea, bytes);
    }

    /// Shadow `s` cut to its low `w` bits (0: concrete).
    fn low_bits(&mut self, s: u32, w: u8) -> u32 {
        if s == 0 || self.sym.arena.width(ExprId(s)) <= w {
            return s;
        }
        let e = self.sym.arena.extract(w - 1, 0, ExprId(s));
        if self.sym.arena.as_const(e).is_some() { 0 } else { e.0 }
    }

    /// The sign and zero predicates of a call result `v` (shadow `sv`,
    /// width `w`) returned to the call at instruction `pc - 1` of `func`.
    pub(crate) fn observe_return<const SYM: bool>(
        &mut self,
        fi: usize,
        func: &Func,
        pc: usize,
        w: u8,
        v: u64,
        sv: u32,
    ) {
        let v = if w == 32 { v & 0xffff_ffff } else { v };
        let negative = if w == 32 { (v as u32 as i32) < 0 } else { (v as i64) < 0 };
        for (p, holds, op) in [
            (Predicate::Negative, negative, ICmp::LtS),
            (Predicate::Zero, v == 0, ICmp::Eq),
        ] {
            let cond = if SYM && sv != 0 {
                let e = self.sym.icmp_bool(op, w, v, sv, 0, 0);
                Some(if holds { e } else { self.sym.arena.not(e) })
            } else {
                None
            };
            self.predicate(fi, func, pc, p, holds, cond);
        }
    }

    /// Records one predicate as a virtual branch at instruction `pc - 1`.
    fn predicate(&mut self, fi: usize, func: &Func, pc: usize, p: Predicate, holds: bool, cond: Option<ExprId>) {
        let kind = BranchKind::Predicate(p);
        let constraint = cond.filter(|c| self.sym.arena.as_const(*c).is_none());
        let offset = func.offsets[pc - 1];
        let path_index = constraint.and_then(|c| self.sym.constrain(c, offset, ConstraintOrigin::Branch { kind }));
        self.sym.check_size();
        if self.sym.exhausted.is_some() {
            return;
        }
        self.branches.push(BranchRecord {
            offset,
            func: (fi + self.module.imports.len()) as u32,
            kind,
            taken: holds as u32,
            constraint,
            path_index,
        });
    }
}

impl Machine<'_> {
    /// The statement a host call made now belongs to: the code offset of
    /// the innermost call instruction on the stack (the import's caller
    /// first, then the frames outward) at an observation point.
    pub(crate) fn write_site(&self) -> Option<u32> {
        let module = self.module;
        std::iter::once(self.caller)
            .chain(self.frames.iter().rev().map(|f| (f.func, f.pc)))
            .find_map(|(fi, pc)| {
                let func = module.funcs.get(fi as usize)?;
                let i = (pc as usize).checked_sub(1)?;
                self.obs.at(func, i).then(|| func.offsets[i])
            })
    }
}
