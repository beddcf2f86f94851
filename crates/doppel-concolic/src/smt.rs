//! Expressions as SMT-LIB2 text (SMT-LIB 2.6, QF_ABV terms; the scripts say
//! `(set-logic ALL)` because z3 rejects `(as const ...)` arrays under QF_ABV): input bytes are
//! `(declare-fun stdin_3 () (_ BitVec 8))`, every compound node is defined
//! once as `(define-fun eN () S ...)` so shared sub-terms stay shared, and a
//! read-only table is a store chain over a constant array, used directly
//! inside `select` (darwin-measured.md §2: equating a declared array to the
//! chain was about 100 times slower on z3 4.8.12).
//!
//! [`SmtWriter`] is incremental: it remembers what the solver already knows,
//! per `push`/`pop` scope, and emits only new declarations.

use crate::expr::{Expr, ExprArena, ExprId, InputVar};
use std::collections::HashSet;
use std::fmt::Write;

/// Incremental printer of declarations, definitions and assertions.
#[derive(Debug, Default, Clone)]
pub struct SmtWriter {
    defined: HashSet<ExprId>,
    declared: HashSet<InputVar>,
    tables: HashSet<u32>,
    log: Vec<Item>,
    scopes: Vec<usize>,
    prefix: String,
}

#[derive(Debug, Clone, Copy)]
enum Item {
    Def(ExprId),
    Var(InputVar),
    Table(u32),
}

fn sort(w: u8) -> String {
    if w == 0 {
        "Bool".into()
    } else {
        format!("(_ BitVec {w})")
    }
}

impl SmtWriter {
    /// A writer for a fresh solver.
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer whose definitions are named `<prefix>eN` / `<prefix>tN`, so
    /// several arenas (e.g. the path conditions of two programs) can feed one
    /// solver without name clashes; input variables keep their names and are
    /// shared.
    pub fn with_prefix(prefix: &str) -> Self {
        SmtWriter {
            prefix: prefix.to_string(),
            ..Self::default()
        }
    }

    /// Opens a scope (the caller sends `(push 1)`; [`crate::solver::Session`] does).
    pub fn push(&mut self) {
        self.scopes.push(self.log.len());
    }

    /// Closes the innermost scope: what it declared is forgotten.
    pub fn pop(&mut self) {
        let Some(mark) = self.scopes.pop() else { return };
        for item in self.log.drain(mark..) {
            match item {
                Item::Def(e) => {
                    self.defined.remove(&e);
                }
                Item::Var(v) => {
                    self.declared.remove(&v);
                }
                Item::Table(t) => {
                    self.tables.remove(&t);
                }
            }
        }
    }

    /// Input variables declared so far (in open scopes).
    pub fn declared(&self) -> Vec<InputVar> {
        let mut v: Vec<_> = self.declared.iter().copied().collect();
        v.sort();
        v
    }

    /// Declares `var` if needed (so a model can give its value).
    pub fn declare(&mut self, var: InputVar, out: &mut String) {
        if self.declared.insert(var) {
            self.log.push(Item::Var(var));
            let _ = writeln!(out, "(declare-fun {} () (_ BitVec 8))", var.name());
        }
    }

    /// Records that the solver already knows `var` (declared through another
    /// writer feeding the same solver), so this writer never declares it.
    pub fn assume_declared(&mut self, var: InputVar) {
        if self.declared.insert(var) {
            self.log.push(Item::Var(var));
        }
    }

    /// Appends to `out` whatever `id` needs, and returns the term naming it.
    pub fn term(&mut self, arena: &ExprArena, id: ExprId, out: &mut String) -> String {
        // Post-order without recursion: path conditions can be deep chains.
        let mut stack = vec![(id, false)];
        while let Some((n, children_done)) = stack.pop() {
            if self.defined.contains(&n) || leaf(arena, n).is_some() {
                if let Expr::Var(v) = arena.get(n) {
                    self.declare(v, out);
                }
                continue;
            }
            if !children_done {
                stack.push((n, true));
                for c in children(arena, n) {
                    stack.push((c, false));
                }
                continue;
            }
            if let Expr::Select { table, .. } = arena.get(n)
                && self.tables.insert(table)
            {
                self.log.push(Item::Table(table));
                let _ = writeln!(
                    out,
                    "(define-fun {}t{table} () (Array (_ BitVec 32) (_ BitVec 8)) {})",
                    self.prefix,
                    table_term(arena, table)
                );
            }
            let body = self.node(arena, n);
            let _ = writeln!(
                out,
                "(define-fun {}e{} () {} {})",
                self.prefix,
                n.0,
                sort(arena.width(n)),
                body
            );
            self.defined.insert(n);
            self.log.push(Item::Def(n));
        }
        self.name(arena, id)
    }

    /// `(assert ...)` of Boolean `id`, with what it needs.
    pub fn assert(&mut self, arena: &ExprArena, id: ExprId) -> String {
        let mut out = String::new();
        let t = self.term(arena, id, &mut out);
        let _ = writeln!(out, "(assert {t})");
        out
    }

    fn name(&self, arena: &ExprArena, n: ExprId) -> String {
        leaf(arena, n).unwrap_or_else(|| format!("{}e{}", self.prefix, n.0))
    }

    fn node(&self, arena: &ExprArena, n: ExprId) -> String {
        let nm = |x: ExprId| self.name(arena, x);
        match arena.get(n) {
            Expr::BvNot(a) => format!("(bvnot {})", nm(a)),
            Expr::Bin(op, a, b) => format!("({} {} {})", op.smt(), nm(a), nm(b)),
            Expr::Cmp(op, a, b) => format!("({} {} {})", op.smt(), nm(a), nm(b)),
            Expr::Not(a) => format!("(not {})", nm(a)),
            Expr::Ite(c, a, b) => format!("(ite {} {} {})", nm(c), nm(a), nm(b)),
            Expr::Extract { hi, lo, arg } => format!("((_ extract {hi} {lo}) {})", nm(arg)),
            Expr::Concat(a, b) => format!("(concat {} {})", nm(a), nm(b)),
            Expr::ZExt { by, arg } => format!("((_ zero_extend {by}) {})", nm(arg)),
            Expr::SExt { by, arg } => format!("((_ sign_extend {by}) {})", nm(arg)),
            Expr::Select { table, index } => format!("(select {}t{table} {})", self.prefix, nm(index)),
            Expr::Const { .. } | Expr::Bool(_) | Expr::Var(_) => nm(n),
        }
    }
}

fn leaf(arena: &ExprArena, n: ExprId) -> Option<String> {
    match arena.get(n) {
        Expr::Const { width, value } => Some(format!("(_ bv{value} {width})")),
        Expr::Bool(b) => Some(b.to_string()),
        Expr::Var(v) => Some(v.name()),
        _ => None,
    }
}

fn children(arena: &ExprArena, n: ExprId) -> Vec<ExprId> {
    match arena.get(n) {
        Expr::Const { .. } | Expr::Bool(_) | Expr::Var(_) => vec![],
        Expr::BvNot(a)
        | Expr::Not(a)
        | Expr::Extract { arg: a, .. }
        | Expr::ZExt { arg: a, .. }
        | Expr::SExt { arg: a, .. }
        | Expr::Select { index: a, .. } => vec![a],
        Expr::Bin(_, a, b) | Expr::Cmp(_, a, b) | Expr::Concat(a, b) => vec![a, b],
        Expr::Ite(c, a, b) => vec![c, a, b],
    }
}

/// The table as `(store ... ((as const ...) default) ...)`, the most common
/// byte as the default.
fn table_term(arena: &ExprArena, n: u32) -> String {
    let t = arena.table(n);
    let mut counts = [0usize; 256];
    for &b in &t.bytes {
        counts[b as usize] += 1;
    }
    let default = (0..256).max_by_key(|&b| counts[b]).unwrap_or(0);
    let stores: Vec<(usize, u8)> = t
        .bytes
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, b)| b as usize != default)
        .collect();
    let mut s = "(store ".repeat(stores.len());
    let _ = write!(s, "((as const (Array (_ BitVec 32) (_ BitVec 8))) (_ bv{default} 8))");
    for (i, b) in stores {
        let _ = write!(s, " (_ bv{} 32) (_ bv{b} 8))", t.base as u64 + i as u64);
    }
    s
}

/// A standalone script asserting `exprs` (a reproducer for a query):
/// logic, declarations, definitions, assertions, `(check-sat)`.
pub fn script(arena: &ExprArena, exprs: &[ExprId]) -> String {
    let mut w = SmtWriter::new();
    let mut out = String::from("(set-logic ALL)\n");
    for &e in exprs {
        out.push_str(&w.assert(arena, e));
    }
    out.push_str("(check-sat)\n");
    out
}
