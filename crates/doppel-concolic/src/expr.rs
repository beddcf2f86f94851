//! The symbolic shadow's expressions: a hash-consed arena of bit-vector terms
//! over input bytes (QF_ABV terms: SMT-LIB2 FixedSizeBitVectors plus `select`
//! over a constant array for read-only tables).
//!
//! Every node has a sort: a bit-vector of width 1..=64, or Boolean (width 0).
//! Construction folds constants and applies a few local rewrites (identity
//! elements, extract/concat of adjacent slices, `ite(c,1,0) != 0` to `c`), so
//! a node whose value no longer depends on input is a [`Expr::Const`] and the
//! interpreter drops the shadow: the paper's constant propagation
//! (Darwin, TOSEM, section 5) for free.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Index of a node in an [`ExprArena`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ExprId(pub u32);

/// Where an input byte comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum InputSource {
    /// Standard input.
    Stdin,
    /// argv\[n\] for n >= 1 (`Arg(0)` is argv\[1\]).
    Arg(u32),
    /// The n-th file of [`crate::Inputs::files`].
    File(u32),
}

/// One symbolic input byte (an SMT-LIB2 constant of sort `(_ BitVec 8)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct InputVar {
    /// Which input.
    pub source: InputSource,
    /// Byte position within it (0-based).
    pub index: u32,
}

impl InputVar {
    /// The stable SMT-LIB2 name: `stdin_17`, `arg0_3` (argv\[1\] byte 3), `file2_0`.
    pub fn name(&self) -> String {
        match self.source {
            InputSource::Stdin => format!("stdin_{}", self.index),
            InputSource::Arg(a) => format!("arg{}_{}", a, self.index),
            InputSource::File(f) => format!("file{}_{}", f, self.index),
        }
    }

    /// Inverse of [`InputVar::name`].
    pub fn parse(name: &str) -> Option<InputVar> {
        let (head, index) = name.rsplit_once('_')?;
        let index = index.parse().ok()?;
        let source = if head == "stdin" {
            InputSource::Stdin
        } else if let Some(a) = head.strip_prefix("arg") {
            InputSource::Arg(a.parse().ok()?)
        } else if let Some(f) = head.strip_prefix("file") {
            InputSource::File(f.parse().ok()?)
        } else {
            return None;
        };
        Some(InputVar { source, index })
    }
}

/// Bit-vector binary operators (SMT-LIB2 names in [`BinOp::smt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    URem,
    SRem,
    And,
    Or,
    Xor,
    /// Shift left by the second operand (as SMT-LIB2: amounts >= width give 0).
    Shl,
    LShr,
    AShr,
}

impl BinOp {
    /// The SMT-LIB2 function symbol.
    pub fn smt(self) -> &'static str {
        match self {
            BinOp::Add => "bvadd",
            BinOp::Sub => "bvsub",
            BinOp::Mul => "bvmul",
            BinOp::UDiv => "bvudiv",
            BinOp::SDiv => "bvsdiv",
            BinOp::URem => "bvurem",
            BinOp::SRem => "bvsrem",
            BinOp::And => "bvand",
            BinOp::Or => "bvor",
            BinOp::Xor => "bvxor",
            BinOp::Shl => "bvshl",
            BinOp::LShr => "bvlshr",
            BinOp::AShr => "bvashr",
        }
    }
}

/// Comparisons (Boolean result). `Ne`, `>` and `>=` are built from these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum CmpOp {
    Eq,
    Ult,
    Ule,
    Slt,
    Sle,
}

impl CmpOp {
    /// The SMT-LIB2 function symbol.
    pub fn smt(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ult => "bvult",
            CmpOp::Ule => "bvule",
            CmpOp::Slt => "bvslt",
            CmpOp::Sle => "bvsle",
        }
    }
}

/// One node. Children are [`ExprId`]s of the same arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Expr {
    /// A bit-vector constant of `width` bits (value masked to the width).
    Const {
        /// Width in bits (1..=64).
        width: u8,
        /// Value.
        value: u64,
    },
    /// A Boolean constant.
    Bool(bool),
    /// An input byte (width 8).
    Var(InputVar),
    /// Bitwise complement.
    BvNot(ExprId),
    /// Binary bit-vector operator; both operands have the same width.
    Bin(BinOp, ExprId, ExprId),
    /// Comparison of two bit-vectors of equal width (Boolean).
    Cmp(CmpOp, ExprId, ExprId),
    /// Boolean negation.
    Not(ExprId),
    /// If-then-else: Boolean condition, two operands of equal sort.
    Ite(ExprId, ExprId, ExprId),
    /// Bits `hi..=lo` of the operand.
    Extract {
        /// Highest bit kept.
        hi: u8,
        /// Lowest bit kept.
        lo: u8,
        /// Operand.
        arg: ExprId,
    },
    /// Concatenation (first operand is the high part).
    Concat(ExprId, ExprId),
    /// Zero extension by `by` bits.
    ZExt {
        /// Added bits.
        by: u8,
        /// Operand.
        arg: ExprId,
    },
    /// Sign extension by `by` bits.
    SExt {
        /// Added bits.
        by: u8,
        /// Operand.
        arg: ExprId,
    },
    /// A byte of a read-only table (`(select table index)`): `index` is a
    /// 32-bit linear-memory address, the table is [`ExprArena::table`].
    Select {
        /// Table number.
        table: u32,
        /// Address (width 32).
        index: ExprId,
    },
}

/// A read-only region of linear memory captured for [`Expr::Select`]: the
/// bytes at addresses `base .. base + bytes.len()`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// First address.
    pub base: u32,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// A fast non-cryptographic hasher for small keys (the multiply-rotate
/// scheme of rustc's FxHasher): interning is the hot path of symbolic runs,
/// and SipHash took a third of their time.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx(u64);

impl std::hash::Hasher for Fx {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxBuild = std::hash::BuildHasherDefault<Fx>;

/// The hash-consed node store: structurally equal nodes get the same id.
#[derive(Debug, Clone, Default)]
pub struct ExprArena {
    nodes: Vec<(Expr, u8)>,
    index: HashMap<Expr, ExprId, FxBuild>,
    tables: Vec<Table>,
}

fn mask(width: u8) -> u64 {
    if width >= 64 { u64::MAX } else { (1u64 << width) - 1 }
}

fn sext(value: u64, width: u8) -> i64 {
    if width >= 64 {
        value as i64
    } else {
        let s = 64 - width as u32;
        ((value << s) as i64) >> s
    }
}

impl ExprArena {
    /// An empty arena.
    pub fn new() -> Self {
        let mut a = ExprArena::default();
        // Slot 0 is never handed out: the interpreter uses 0 for "concrete".
        a.nodes.push((Expr::Bool(false), 0));
        a
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the arena holds no node besides the reserved slot.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 1
    }

    /// The node `id`.
    pub fn get(&self, id: ExprId) -> Expr {
        self.nodes[id.0 as usize].0
    }

    /// Width of `id` in bits; 0 for Boolean.
    pub fn width(&self, id: ExprId) -> u8 {
        self.nodes[id.0 as usize].1
    }

    /// The table `n` of [`Expr::Select`].
    pub fn table(&self, n: u32) -> &Table {
        &self.tables[n as usize]
    }

    /// Number of tables.
    pub fn table_count(&self) -> usize {
        self.tables.len()
    }

    pub(crate) fn add_table(&mut self, table: Table) -> u32 {
        if let Some(i) = self.tables.iter().position(|t| *t == table) {
            return i as u32;
        }
        self.tables.push(table);
        (self.tables.len() - 1) as u32
    }

    fn intern(&mut self, e: Expr, width: u8) -> ExprId {
        if let Some(&id) = self.index.get(&e) {
            return id;
        }
        let id = ExprId(self.nodes.len() as u32);
        self.nodes.push((e, width));
        self.index.insert(e, id);
        id
    }

    /// The constant `value` of `width` bits.
    pub fn constant(&mut self, width: u8, value: u64) -> ExprId {
        self.intern(
            Expr::Const {
                width,
                value: value & mask(width),
            },
            width,
        )
    }

    /// A Boolean constant.
    pub fn boolean(&mut self, b: bool) -> ExprId {
        self.intern(Expr::Bool(b), 0)
    }

    /// The input byte `var`.
    pub fn var(&mut self, var: InputVar) -> ExprId {
        self.intern(Expr::Var(var), 8)
    }

    /// The constant value of `id`, if it is a constant.
    pub fn as_const(&self, id: ExprId) -> Option<u64> {
        match self.get(id) {
            Expr::Const { value, .. } => Some(value),
            Expr::Bool(b) => Some(b as u64),
            _ => None,
        }
    }

    /// Bitwise complement.
    pub fn bvnot(&mut self, a: ExprId) -> ExprId {
        let w = self.width(a);
        if let Some(v) = self.as_const(a) {
            return self.constant(w, !v);
        }
        if let Expr::BvNot(x) = self.get(a) {
            return x;
        }
        self.intern(Expr::BvNot(a), w)
    }

    /// A binary bit-vector operation (operands of equal width).
    pub fn bin(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
        let w = self.width(a);
        let (ca, cb) = (self.as_const(a), self.as_const(b));
        if let (Some(x), Some(y)) = (ca, cb) {
            return self.constant(w, fold_bin(op, x, y, w));
        }
        let m = mask(w);
        match (op, ca, cb) {
            (BinOp::Add | BinOp::Or | BinOp::Xor, Some(0), _) => return b,
            (BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor, _, Some(0)) => return a,
            (BinOp::Shl | BinOp::LShr | BinOp::AShr, _, Some(0)) => return a,
            (BinOp::Mul, Some(1), _) => return b,
            (BinOp::Mul | BinOp::UDiv | BinOp::SDiv, _, Some(1)) => return a,
            (BinOp::Mul | BinOp::And, Some(0), _) | (BinOp::Mul | BinOp::And, _, Some(0)) => {
                return self.constant(w, 0);
            }
            (BinOp::And, Some(x), _) if x == m => return b,
            (BinOp::And, _, Some(y)) if y == m => return a,
            (BinOp::Shl | BinOp::LShr, _, Some(y)) if y >= w as u64 => return self.constant(w, 0),
            _ => {}
        }
        // (x + c1) + c2 -> x + (c1 + c2): address arithmetic chains.
        if let (BinOp::Add, Some(c2)) = (op, cb)
            && let Expr::Bin(BinOp::Add, x, y) = self.get(a)
            && let Some(c1) = self.as_const(y)
        {
            let c = self.constant(w, c1.wrapping_add(c2));
            return self.bin(BinOp::Add, x, c);
        }
        // Constants go right for commutative operators (better sharing).
        let (a, b) = match op {
            BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor if ca.is_some() => (b, a),
            _ => (a, b),
        };
        self.intern(Expr::Bin(op, a, b), w)
    }

    /// A comparison (Boolean).
    pub fn cmp(&mut self, op: CmpOp, a: ExprId, b: ExprId) -> ExprId {
        let w = self.width(a);
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            let r = match op {
                CmpOp::Eq => x == y,
                CmpOp::Ult => x < y,
                CmpOp::Ule => x <= y,
                CmpOp::Slt => sext(x, w) < sext(y, w),
                CmpOp::Sle => sext(x, w) <= sext(y, w),
            };
            return self.boolean(r);
        }
        if a == b {
            return self.boolean(matches!(op, CmpOp::Eq | CmpOp::Ule | CmpOp::Sle));
        }
        if op == CmpOp::Eq {
            // ite(c, k1, k0) == k  ->  c, !c, true or false.
            let (x, k) = if self.as_const(a).is_some() { (b, a) } else { (a, b) };
            if let (Expr::Ite(c, t, e), Some(k)) = (self.get(x), self.as_const(k))
                && let (Some(t), Some(e)) = (self.as_const(t), self.as_const(e))
            {
                return match (t == k, e == k) {
                    (true, true) => self.boolean(true),
                    (true, false) => c,
                    (false, true) => self.not(c),
                    (false, false) => self.boolean(false),
                };
            }
            // zext(x) == k -> x == k' (or false when k does not fit).
            if let (Expr::ZExt { by, arg }, Some(k)) = (self.get(x), self.as_const(k)) {
                let aw = w - by;
                if k >> aw != 0 {
                    return self.boolean(false);
                }
                let kk = self.constant(aw, k);
                return self.cmp(CmpOp::Eq, arg, kk);
            }
            let (a, b) = if a.0 <= b.0 { (a, b) } else { (b, a) };
            return self.intern(Expr::Cmp(op, a, b), 0);
        }
        self.intern(Expr::Cmp(op, a, b), 0)
    }

    /// Boolean negation.
    pub fn not(&mut self, a: ExprId) -> ExprId {
        match self.get(a) {
            Expr::Bool(b) => self.boolean(!b),
            Expr::Not(x) => x,
            _ => self.intern(Expr::Not(a), 0),
        }
    }

    /// If-then-else over a Boolean condition.
    pub fn ite(&mut self, c: ExprId, t: ExprId, e: ExprId) -> ExprId {
        if let Expr::Bool(b) = self.get(c) {
            return if b { t } else { e };
        }
        if t == e {
            return t;
        }
        if let Expr::Not(x) = self.get(c) {
            return self.ite(x, e, t);
        }
        let w = self.width(t);
        self.intern(Expr::Ite(c, t, e), w)
    }

    /// A bit-vector value as a Boolean: `a != 0`.
    pub fn nonzero(&mut self, a: ExprId) -> ExprId {
        let w = self.width(a);
        let z = self.constant(w, 0);
        let eq = self.cmp(CmpOp::Eq, a, z);
        self.not(eq)
    }

    /// Bits `hi..=lo` of `a`.
    pub fn extract(&mut self, hi: u8, lo: u8, a: ExprId) -> ExprId {
        let w = self.width(a);
        let nw = hi - lo + 1;
        if lo == 0 && nw == w {
            return a;
        }
        if let Some(v) = self.as_const(a) {
            return self.constant(nw, v >> lo);
        }
        match self.get(a) {
            Expr::Extract { lo: l2, arg, .. } => return self.extract(hi + l2, lo + l2, arg),
            Expr::Concat(h, l) => {
                let lw = self.width(l);
                if hi < lw {
                    return self.extract(hi, lo, l);
                }
                if lo >= lw {
                    return self.extract(hi - lw, lo - lw, h);
                }
            }
            Expr::ZExt { arg, .. } | Expr::SExt { arg, .. } if hi < self.width(arg) => {
                return self.extract(hi, lo, arg);
            }
            Expr::ZExt { arg, .. } if lo >= self.width(arg) => return self.constant(nw, 0),
            _ => {}
        }
        self.intern(Expr::Extract { hi, lo, arg: a }, nw)
    }

    /// `hi ++ lo`.
    pub fn concat(&mut self, hi: ExprId, lo: ExprId) -> ExprId {
        let (hw, lw) = (self.width(hi), self.width(lo));
        if let (Some(x), Some(y)) = (self.as_const(hi), self.as_const(lo)) {
            return self.constant(hw + lw, (x << lw) | y);
        }
        if self.as_const(hi) == Some(0) {
            return self.zext(hw, lo);
        }
        // Adjacent slices of one value merge back.
        if let (
            Expr::Extract {
                hi: h1,
                lo: l1,
                arg: a1,
            },
            Expr::Extract {
                hi: h2,
                lo: l2,
                arg: a2,
            },
        ) = (self.get(hi), self.get(lo))
            && a1 == a2
            && l1 == h2 + 1
        {
            return self.extract(h1, l2, a1);
        }
        // extract(h, l+k, x) ++ (extract(l+k-1, l, x) ++ rest)
        if let (
            Expr::Extract {
                hi: h1,
                lo: l1,
                arg: a1,
            },
            Expr::Concat(m, rest),
        ) = (self.get(hi), self.get(lo))
            && let Expr::Extract {
                hi: h2,
                lo: l2,
                arg: a2,
            } = self.get(m)
            && a1 == a2
            && l1 == h2 + 1
        {
            let merged = self.extract(h1, l2, a1);
            return self.concat(merged, rest);
        }
        self.intern(Expr::Concat(hi, lo), hw + lw)
    }

    /// Zero extension by `by` bits.
    pub fn zext(&mut self, by: u8, a: ExprId) -> ExprId {
        if by == 0 {
            return a;
        }
        let w = self.width(a);
        if let Some(v) = self.as_const(a) {
            return self.constant(w + by, v);
        }
        if let Expr::ZExt { by: b2, arg } = self.get(a) {
            return self.zext(by + b2, arg);
        }
        self.intern(Expr::ZExt { by, arg: a }, w + by)
    }

    /// Sign extension by `by` bits.
    pub fn sext(&mut self, by: u8, a: ExprId) -> ExprId {
        if by == 0 {
            return a;
        }
        let w = self.width(a);
        if let Some(v) = self.as_const(a) {
            return self.constant(w + by, sext(v, w) as u64);
        }
        if let Expr::SExt { by: b2, arg } = self.get(a) {
            return self.sext(by + b2, arg);
        }
        self.intern(Expr::SExt { by, arg: a }, w + by)
    }

    /// A byte of table `table` at 32-bit address `index`.
    pub fn select(&mut self, table: u32, index: ExprId) -> ExprId {
        if let Some(i) = self.as_const(index) {
            let t = &self.tables[table as usize];
            let v = t
                .bytes
                .get(i.wrapping_sub(t.base as u64) as usize)
                .copied()
                .unwrap_or(0);
            return self.constant(8, v as u64);
        }
        self.intern(Expr::Select { table, index }, 8)
    }

    /// The input bytes `id` depends on, sorted (the slice of Darwin's
    /// section 5 "dynamic slicing" optimisation).
    pub fn vars(&self, id: ExprId) -> Vec<InputVar> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let mut todo = vec![id];
        while let Some(n) = todo.pop() {
            if !seen.insert(n) {
                continue;
            }
            match self.get(n) {
                Expr::Var(v) => out.push(v),
                Expr::Const { .. } | Expr::Bool(_) => {}
                Expr::BvNot(a)
                | Expr::Not(a)
                | Expr::Extract { arg: a, .. }
                | Expr::ZExt { arg: a, .. }
                | Expr::SExt { arg: a, .. }
                | Expr::Select { index: a, .. } => todo.push(a),
                Expr::Bin(_, a, b) | Expr::Cmp(_, a, b) | Expr::Concat(a, b) => todo.extend([a, b]),
                Expr::Ite(c, a, b) => todo.extend([c, a, b]),
            }
        }
        out.sort();
        out
    }

    /// Evaluates `id` with input bytes from `byte` (Booleans as 0/1). Used to
    /// check a path condition against an input without a solver.
    pub fn eval(&self, id: ExprId, byte: &dyn Fn(InputVar) -> u8) -> u64 {
        let mut memo: HashMap<ExprId, u64> = HashMap::new();
        self.eval_memo(id, byte, &mut memo)
    }

    fn eval_memo(&self, id: ExprId, byte: &dyn Fn(InputVar) -> u8, memo: &mut HashMap<ExprId, u64>) -> u64 {
        if let Some(&v) = memo.get(&id) {
            return v;
        }
        let w = self.width(id);
        let mut ev = |x: ExprId| self.eval_memo(x, byte, memo);
        let v = match self.get(id) {
            Expr::Const { value, .. } => value,
            Expr::Bool(b) => b as u64,
            Expr::Var(v) => byte(v) as u64,
            Expr::BvNot(a) => !ev(a) & mask(w),
            Expr::Bin(op, a, b) => {
                let (x, y) = (ev(a), ev(b));
                fold_bin(op, x, y, w)
            }
            Expr::Cmp(op, a, b) => {
                let aw = self.width(a);
                let (x, y) = (ev(a), ev(b));
                (match op {
                    CmpOp::Eq => x == y,
                    CmpOp::Ult => x < y,
                    CmpOp::Ule => x <= y,
                    CmpOp::Slt => sext(x, aw) < sext(y, aw),
                    CmpOp::Sle => sext(x, aw) <= sext(y, aw),
                }) as u64
            }
            Expr::Not(a) => (ev(a) == 0) as u64,
            Expr::Ite(c, a, b) => {
                if ev(c) != 0 {
                    ev(a)
                } else {
                    ev(b)
                }
            }
            Expr::Extract { hi: _, lo, arg } => (ev(arg) >> lo) & mask(w),
            Expr::Concat(h, l) => {
                let lw = self.width(l);
                (ev(h) << lw) | ev(l)
            }
            Expr::ZExt { arg, .. } => ev(arg),
            Expr::SExt { arg, .. } => sext(ev(arg), self.width(arg)) as u64 & mask(w),
            Expr::Select { table, index } => {
                let t = &self.tables[table as usize];
                let i = ev(index).wrapping_sub(t.base as u64) as usize;
                t.bytes.get(i).copied().unwrap_or(0) as u64
            }
        };
        memo.insert(id, v);
        v
    }

    /// A sound unsigned range `[lo, hi]` of the values `id` can take, when a
    /// simple interval analysis finds one (used to decide whether a symbolic
    /// address stays inside a read-only table).
    pub fn range(&self, id: ExprId) -> Option<(u64, u64)> {
        self.range_depth(id, 0)
    }

    fn range_depth(&self, id: ExprId, depth: u32) -> Option<(u64, u64)> {
        if depth > 48 {
            return None;
        }
        let w = self.width(id);
        let m = mask(w);
        let r = |x| self.range_depth(x, depth + 1);
        match self.get(id) {
            Expr::Const { value, .. } => Some((value, value)),
            Expr::Var(_) | Expr::Select { .. } => Some((0, 255)),
            Expr::ZExt { arg, .. } => r(arg),
            Expr::SExt { arg, .. } => {
                let (lo, hi) = r(arg)?;
                let aw = self.width(arg);
                (hi < 1u64 << (aw - 1)).then_some((lo, hi))
            }
            Expr::Extract { lo: 0, arg, .. } => {
                let (lo, hi) = r(arg)?;
                (hi <= m).then_some((lo, hi))
            }
            Expr::Bin(BinOp::Add, a, b) => {
                let ((l1, h1), (l2, h2)) = (r(a)?, r(b)?);
                let hi = h1.checked_add(h2)?;
                (hi <= m).then_some((l1 + l2, hi))
            }
            Expr::Bin(BinOp::Sub, a, b) => {
                let ((l1, h1), (l2, h2)) = (r(a)?, r(b)?);
                (l1 >= h2).then(|| (l1 - h2, h1 - l2))
            }
            Expr::Bin(BinOp::Mul, a, b) => {
                let ((l1, h1), (l2, h2)) = (r(a)?, r(b)?);
                let hi = h1.checked_mul(h2)?;
                (hi <= m).then_some((l1 * l2, hi))
            }
            Expr::Bin(BinOp::Shl, a, b) => {
                let ((l1, h1), (l2, h2)) = (r(a)?, r(b)?);
                if l2 != h2 || h2 >= 64 {
                    return None;
                }
                let hi = h1.checked_shl(h2 as u32).filter(|hi| hi >> h2 == h1)?;
                (hi <= m).then_some((l1 << h2, hi))
            }
            Expr::Bin(BinOp::And, a, b) => {
                let hi = match (r(a), r(b)) {
                    (Some((_, h1)), Some((_, h2))) => h1.min(h2),
                    (Some((_, h)), None) | (None, Some((_, h))) => h,
                    (None, None) => return None,
                };
                Some((0, hi))
            }
            Expr::Bin(BinOp::URem, _, b) => {
                let (_, h) = r(b)?;
                Some((0, h.saturating_sub(1)))
            }
            Expr::Bin(BinOp::LShr | BinOp::UDiv, a, _) => Some((0, r(a)?.1)),
            Expr::Ite(_, a, b) => {
                let ((l1, h1), (l2, h2)) = (r(a)?, r(b)?);
                Some((l1.min(l2), h1.max(h2)))
            }
            _ => None,
        }
    }
}

/// Constant folding with SMT-LIB2 semantics (division by zero as defined by
/// the standard: `bvudiv x 0 = ~0`, `bvurem x 0 = x`).
fn fold_bin(op: BinOp, x: u64, y: u64, w: u8) -> u64 {
    let m = mask(w);
    let (sx, sy) = (sext(x, w), sext(y, w));
    let r = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::UDiv => x.checked_div(y).unwrap_or(m),
        BinOp::URem => x.checked_rem(y).unwrap_or(x),
        BinOp::SDiv => {
            if y == 0 {
                if sx < 0 { 1 } else { m }
            } else {
                sx.wrapping_div(sy) as u64
            }
        }
        BinOp::SRem => {
            if y == 0 {
                x
            } else {
                sx.wrapping_rem(sy) as u64
            }
        }
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Shl => {
            if y >= w as u64 {
                0
            } else {
                x << y
            }
        }
        BinOp::LShr => {
            if y >= w as u64 {
                0
            } else {
                x >> y
            }
        }
        BinOp::AShr => {
            let s = y.min(w as u64 - 1);
            (sx >> s) as u64
        }
    };
    r & m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_consing_and_folding() {
        let mut a = ExprArena::new();
        let v = a.var(InputVar {
            source: InputSource::Stdin,
            index: 3,
        });
        let x = a.zext(24, v);
        let c = a.constant(32, 48);
        let s1 = a.bin(BinOp::Sub, x, c);
        let s2 = a.bin(BinOp::Sub, x, c);
        assert_eq!(s1, s2);
        let one = a.constant(32, 1);
        let zero = a.constant(32, 0);
        let ten = a.constant(32, 10);
        let lt = a.cmp(CmpOp::Ult, s1, ten);
        let as_int = a.ite(lt, one, zero);
        assert_eq!(a.nonzero(as_int), lt);
        // Slices of a 32-bit value concatenated back give the value.
        let parts: Vec<_> = (0..4).map(|i| a.extract(i * 8 + 7, i * 8, s1)).collect();
        let hi = a.concat(parts[3], parts[2]);
        let lo = a.concat(parts[1], parts[0]);
        assert_eq!(a.concat(hi, lo), s1);
        assert_eq!(a.eval(lt, &|_| b'7'), 1);
        assert_eq!(a.eval(lt, &|_| b'a'), 0);
        assert_eq!(a.vars(lt).len(), 1);
        assert_eq!(a.range(s1), None, "x - 48 can wrap");
        let k = a.constant(32, 1000);
        let idx = a.bin(BinOp::Add, x, k);
        assert_eq!(a.range(idx), Some((1000, 1255)));
        assert_eq!(
            InputVar::parse("arg2_14"),
            Some(InputVar {
                source: InputSource::Arg(2),
                index: 14
            })
        );
    }
}
