//! The symbolic shadow state of a run: the expression arena, sparse shadow
//! memory (only bytes with a symbolic value are stored, in 4 KiB pages
//! allocated on first use), the path condition, and the bookkeeping for
//! read-only tables (which data-segment bytes were written).

use crate::expr::{ExprArena, ExprId};
use crate::{BudgetKind, ConstraintOrigin, PathConstraint};
use std::collections::HashMap;

const PAGE_BITS: u32 = 12;
const PAGE: usize = 1 << PAGE_BITS;

/// Byte address -> expression id (0: concrete), sparse.
#[derive(Default)]
pub(crate) struct ShadowMem {
    pages: Vec<Option<Box<[u32; PAGE]>>>,
    /// Number of pages holding at least one symbolic byte (fast "all concrete" test).
    live: usize,
}

impl ShadowMem {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    #[inline]
    pub fn get(&self, addr: u32) -> u32 {
        match self.pages.get((addr >> PAGE_BITS) as usize) {
            Some(Some(p)) => p[addr as usize & (PAGE - 1)],
            _ => 0,
        }
    }

    pub fn set(&mut self, addr: u32, e: u32) {
        let pi = (addr >> PAGE_BITS) as usize;
        if e == 0 {
            if let Some(Some(p)) = self.pages.get_mut(pi) {
                p[addr as usize & (PAGE - 1)] = 0;
            }
            return;
        }
        if self.pages.len() <= pi {
            self.pages.resize_with(pi + 1, || None);
        }
        let slot = &mut self.pages[pi];
        if slot.is_none() {
            *slot = Some(Box::new([0; PAGE]));
            self.live += 1;
        }
        slot.as_mut().expect("just set")[addr as usize & (PAGE - 1)] = e;
    }

    /// Whether any byte of `[addr, addr + n)` is symbolic.
    #[inline]
    pub fn any(&self, addr: u32, n: u32) -> bool {
        if self.live == 0 {
            return false;
        }
        (0..n).any(|i| self.get(addr.wrapping_add(i)) != 0)
    }
}

/// The symbolic side of a run.
pub(crate) struct Sym {
    pub arena: ExprArena,
    pub mem: ShadowMem,
    pub path: Vec<PathConstraint>,
    pub dropped: u64,
    per_site: HashMap<u32, u32, crate::expr::FxBuild>,
    per_site_cap: u32,
    max_constraints: usize,
    max_exprs: usize,
    /// Data-segment span `[lo, hi)` and a bit per 64-byte chunk written there.
    data_lo: u32,
    data_hi: u32,
    written: Vec<u64>,
    /// Byte ranges of the active data segments.
    pub segments: Vec<(u32, u32)>,
    /// Set when a budget ran out inside an operation that cannot fail.
    pub exhausted: Option<BudgetKind>,
}

impl Sym {
    pub fn new(budget: &crate::Budget, segments: Vec<(u32, u32)>) -> Sym {
        let data_lo = segments.iter().map(|s| s.0).min().unwrap_or(0);
        let data_hi = segments.iter().map(|s| s.1).max().unwrap_or(0);
        let chunks = (data_hi.saturating_sub(data_lo) as usize).div_ceil(64);
        Sym {
            arena: ExprArena::new(),
            mem: ShadowMem::default(),
            path: Vec::new(),
            dropped: 0,
            per_site: HashMap::default(),
            per_site_cap: budget.per_site,
            max_constraints: budget.constraints,
            max_exprs: budget.expressions,
            data_lo,
            data_hi,
            written: vec![0; chunks.div_ceil(64)],
            segments,
            exhausted: None,
        }
    }

    /// Notes a store to `[addr, addr + n)` (for the read-only test).
    #[inline]
    pub fn note_write(&mut self, addr: u32, n: u32) {
        if addr >= self.data_hi || addr.saturating_add(n) <= self.data_lo {
            return;
        }
        let first = (addr.max(self.data_lo) - self.data_lo) / 64;
        let last = (addr.saturating_add(n - 1).min(self.data_hi - 1) - self.data_lo) / 64;
        for c in first..=last {
            self.written[(c / 64) as usize] |= 1 << (c % 64);
        }
    }

    /// Whether `[lo, hi]` lies inside one data segment and was never written.
    pub fn read_only(&self, lo: u32, hi: u32) -> bool {
        if !self.segments.iter().any(|&(s, e)| s <= lo && hi < e) {
            return false;
        }
        let first = (lo - self.data_lo) / 64;
        let last = (hi - self.data_lo) / 64;
        (first..=last).all(|c| self.written[(c / 64) as usize] & (1 << (c % 64)) == 0)
    }

    /// Adds `expr` (Boolean, true on this run) to the path condition. Returns
    /// its index, or None when it is constant or dropped by the per-site cap.
    pub fn constrain(&mut self, expr: ExprId, offset: u32, origin: ConstraintOrigin) -> Option<u32> {
        if self.arena.as_const(expr).is_some() {
            return None;
        }
        let n = self.per_site.entry(offset).or_insert(0);
        if *n >= self.per_site_cap {
            self.dropped += 1;
            return None;
        }
        *n += 1;
        if self.path.len() >= self.max_constraints {
            self.exhausted = Some(BudgetKind::Constraints);
            return None;
        }
        self.path.push(PathConstraint { expr, offset, origin });
        Some((self.path.len() - 1) as u32)
    }

    /// Checks the expression budget after building nodes.
    #[inline]
    pub fn check_size(&mut self) {
        if self.arena.len() > self.max_exprs {
            self.exhausted = Some(BudgetKind::Expressions);
        }
    }
}
