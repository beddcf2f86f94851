//! The symbolic shadow of each instruction: given the concrete operands and
//! their shadows (0 = concrete), build the result's expression. Shadows are
//! raw `u32` expression ids; a result that folds to a constant is returned
//! as 0, so concrete values never carry a shadow.
//!
//! Memory policy (darwin-measured.md §4.1 item 3): a symbolic address whose
//! range stays inside an unwritten data segment reads through
//! [`Expr::Select`](crate::expr::Expr::Select) over a snapshot of that
//! table; any other symbolic address is concretized, with the equality added
//! to the path condition. Float operations concretize symbolic integer
//! operands (the floats themselves are never symbolic).

use crate::ConstraintOrigin;
use crate::expr::{BinOp, CmpOp, ExprId, Table};
use crate::instr::{Cvt, IBin, ICmp, IUn, LoadKind};
use crate::shadow::Sym;

/// Widest table a symbolic address may index (bytes).
const MAX_TABLE: u64 = 4096;

impl Sym {
    #[inline]
    fn lift(&mut self, w: u8, v: u64, s: u32) -> ExprId {
        if s != 0 { ExprId(s) } else { self.arena.constant(w, v) }
    }

    #[inline]
    fn out(&mut self, e: ExprId) -> u32 {
        self.check_size();
        if self.arena.as_const(e).is_some() { 0 } else { e.0 }
    }

    /// Fixes the symbolic value `s` (width `w`) to its concrete value `v`.
    pub fn concretize(&mut self, w: u8, v: u64, s: u32, offset: u32, origin: ConstraintOrigin) {
        if s == 0 {
            return;
        }
        let c = self.arena.constant(w, v);
        let eq = self.arena.cmp(CmpOp::Eq, ExprId(s), c);
        self.constrain(eq, offset, origin);
    }

    pub fn ibin(&mut self, op: IBin, w: u8, a: u64, sa: u32, b: u64, sb: u32) -> u32 {
        let (x, y) = (self.lift(w, a, sa), self.lift(w, b, sb));
        let ar = &mut self.arena;
        let e = match op {
            IBin::Add => ar.bin(BinOp::Add, x, y),
            IBin::Sub => ar.bin(BinOp::Sub, x, y),
            IBin::Mul => ar.bin(BinOp::Mul, x, y),
            IBin::DivS => ar.bin(BinOp::SDiv, x, y),
            IBin::DivU => ar.bin(BinOp::UDiv, x, y),
            IBin::RemS => ar.bin(BinOp::SRem, x, y),
            IBin::RemU => ar.bin(BinOp::URem, x, y),
            IBin::And => ar.bin(BinOp::And, x, y),
            IBin::Or => ar.bin(BinOp::Or, x, y),
            IBin::Xor => ar.bin(BinOp::Xor, x, y),
            IBin::Shl | IBin::ShrS | IBin::ShrU | IBin::Rotl | IBin::Rotr => {
                let m = ar.constant(w, w as u64 - 1);
                let n = ar.bin(BinOp::And, y, m);
                match op {
                    IBin::Shl => ar.bin(BinOp::Shl, x, n),
                    IBin::ShrS => ar.bin(BinOp::AShr, x, n),
                    IBin::ShrU => ar.bin(BinOp::LShr, x, n),
                    _ => {
                        // rotl x n = (x << n) | (x >> (w - n)); a shift by w gives 0.
                        let wc = ar.constant(w, w as u64);
                        let back = ar.bin(BinOp::Sub, wc, n);
                        let (l, r) = if op == IBin::Rotl { (n, back) } else { (back, n) };
                        let hi = ar.bin(BinOp::Shl, x, l);
                        let lo = ar.bin(BinOp::LShr, x, r);
                        ar.bin(BinOp::Or, hi, lo)
                    }
                }
            }
        };
        self.out(e)
    }

    /// A comparison as a Boolean expression.
    pub fn icmp_bool(&mut self, op: ICmp, w: u8, a: u64, sa: u32, b: u64, sb: u32) -> ExprId {
        let (x, y) = (self.lift(w, a, sa), self.lift(w, b, sb));
        let ar = &mut self.arena;
        match op {
            ICmp::Eq => ar.cmp(CmpOp::Eq, x, y),
            ICmp::Ne => {
                let e = ar.cmp(CmpOp::Eq, x, y);
                ar.not(e)
            }
            ICmp::LtS => ar.cmp(CmpOp::Slt, x, y),
            ICmp::LtU => ar.cmp(CmpOp::Ult, x, y),
            ICmp::GtS => ar.cmp(CmpOp::Slt, y, x),
            ICmp::GtU => ar.cmp(CmpOp::Ult, y, x),
            ICmp::LeS => ar.cmp(CmpOp::Sle, x, y),
            ICmp::LeU => ar.cmp(CmpOp::Ule, x, y),
            ICmp::GeS => ar.cmp(CmpOp::Sle, y, x),
            ICmp::GeU => ar.cmp(CmpOp::Ule, y, x),
        }
    }

    /// A Boolean as an i32 0/1 value.
    fn as_i32(&mut self, c: ExprId) -> u32 {
        let one = self.arena.constant(32, 1);
        let zero = self.arena.constant(32, 0);
        let e = self.arena.ite(c, one, zero);
        self.out(e)
    }

    pub fn icmp(&mut self, op: ICmp, w: u8, a: u64, sa: u32, b: u64, sb: u32) -> u32 {
        let c = self.icmp_bool(op, w, a, sa, b, sb);
        self.as_i32(c)
    }

    pub fn iun(&mut self, op: IUn, w: u8, a: u64, sa: u32, offset: u32) -> u32 {
        let x = ExprId(sa);
        let e = match op {
            IUn::Clz | IUn::Ctz | IUn::Popcnt => {
                self.concretize(w, a, sa, offset, ConstraintOrigin::Other);
                return 0;
            }
            IUn::Eqz => {
                let z = self.arena.constant(w, 0);
                let c = self.arena.cmp(CmpOp::Eq, x, z);
                return self.as_i32(c);
            }
            IUn::Extend8S => {
                let b = self.arena.extract(7, 0, x);
                self.arena.sext(w - 8, b)
            }
            IUn::Extend16S => {
                let b = self.arena.extract(15, 0, x);
                self.arena.sext(w - 16, b)
            }
            IUn::Extend32S => {
                let b = self.arena.extract(31, 0, x);
                self.arena.sext(w - 32, b)
            }
        };
        self.out(e)
    }

    /// Shadow of a conversion whose operand `v` has shadow `s`.
    pub fn cvt(&mut self, c: Cvt, v: u64, s: u32, offset: u32) -> u32 {
        let x = ExprId(s);
        let e = match c {
            Cvt::I32WrapI64 => self.arena.extract(31, 0, x),
            Cvt::I64ExtendI32S => self.arena.sext(32, x),
            Cvt::I64ExtendI32U => self.arena.zext(32, x),
            Cvt::Convert { i64, .. } | Cvt::Trunc { i64, .. } => {
                let w = if i64 { 64 } else { 32 };
                self.concretize(w, v, s, offset, ConstraintOrigin::Float);
                return 0;
            }
            Cvt::Reinterpret { .. } => {
                let w = self.arena.width(x);
                self.concretize(w, v, s, offset, ConstraintOrigin::Float);
                return 0;
            }
            Cvt::F32DemoteF64 | Cvt::F64PromoteF32 => return 0,
        };
        self.out(e)
    }

    /// Shadow of a load of `kind` at effective address `ea` = `base + moff`
    /// where `base` has shadow `sb`; `mem` is linear memory.
    #[allow(clippy::too_many_arguments)]
    pub fn load(&mut self, mem: &[u8], kind: LoadKind, ea: u32, base: u64, sb: u32, moff: u32, offset: u32) -> u32 {
        let n = kind.bytes as u32;
        let mut bytes: [u32; 8] = [0; 8];
        let mut any = false;
        if sb != 0 && !self.table_load(mem, kind, ea, sb, moff, &mut bytes) {
            self.concretize(32, base, sb, offset, ConstraintOrigin::Address);
        }
        for (i, slot) in bytes.iter_mut().enumerate().take(n as usize) {
            if *slot == 0 {
                *slot = self.mem.get(ea.wrapping_add(i as u32));
            }
            any |= *slot != 0;
        }
        if !any {
            return 0;
        }
        // Little endian: byte n-1 is the most significant.
        let mut e = self.lift(8, mem[(ea + n - 1) as usize] as u64, bytes[n as usize - 1]);
        for i in (0..n - 1).rev() {
            let b = self.lift(8, mem[(ea + i) as usize] as u64, bytes[i as usize]);
            e = self.arena.concat(e, b);
        }
        if kind.float {
            let w = self.arena.width(e);
            let v = (0..n)
                .rev()
                .fold(0u64, |acc, i| (acc << 8) | mem[(ea + i) as usize] as u64);
            self.concretize(w, v, e.0, offset, ConstraintOrigin::Float);
            return 0;
        }
        let w = if kind.wide { 64 } else { 32 };
        let by = w - 8 * n as u8;
        let e = if kind.signed {
            self.arena.sext(by, e)
        } else {
            self.arena.zext(by, e)
        };
        self.out(e)
    }

    /// Tries to read `[ea, ea+n)` as `select`s over a read-only table.
    fn table_load(&mut self, mem: &[u8], kind: LoadKind, ea: u32, sb: u32, moff: u32, out: &mut [u32; 8]) -> bool {
        let n = kind.bytes as u64;
        let off = self.arena.constant(32, moff as u64);
        let addr = self.arena.bin(BinOp::Add, ExprId(sb), off);
        let Some((lo, hi)) = self.arena.range(addr) else {
            return false;
        };
        let end = hi + n - 1;
        if end - lo >= MAX_TABLE || end >= mem.len() as u64 || !(lo..=hi).contains(&(ea as u64)) {
            return false;
        }
        let (lo, end) = (lo as u32, end as u32);
        if !self.read_only(lo, end) || self.mem.any(lo, end - lo + 1) {
            return false;
        }
        let table = self.arena.add_table(Table {
            base: lo,
            bytes: mem[lo as usize..=end as usize].to_vec(),
        });
        for (i, slot) in out.iter_mut().enumerate().take(n as usize) {
            let k = self.arena.constant(32, i as u64);
            let a = self.arena.bin(BinOp::Add, addr, k);
            let e = self.arena.select(table, a);
            *slot = if self.arena.as_const(e).is_some() { 0 } else { e.0 };
        }
        true
    }

    /// Shadow bookkeeping of a store of `n` bytes of a value with shadow `sv`.
    pub fn store(&mut self, ea: u32, n: u32, sv: u32) {
        self.note_write(ea, n);
        if sv == 0 {
            if !self.mem.is_empty() {
                for i in 0..n {
                    self.mem.set(ea + i, 0);
                }
            }
            return;
        }
        let x = ExprId(sv);
        let w = self.arena.width(x) as u32;
        for i in 0..n {
            let e = if 8 * i >= w {
                0
            } else {
                let b = self.arena.extract((8 * i + 7) as u8, (8 * i) as u8, x);
                if self.arena.as_const(b).is_some() { 0 } else { b.0 }
            };
            self.mem.set(ea + i, e);
        }
        self.check_size();
    }
}
