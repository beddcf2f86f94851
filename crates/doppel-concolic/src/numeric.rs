//! Concrete semantics of the numeric instructions (core spec §4.3). Values
//! travel as `u64` bit patterns; i32 and f32 values keep the upper 32 bits
//! zero.

use crate::Trap;
use crate::instr::{Cvt, FBin, FCmp, FUn, IBin, ICmp, IUn};

macro_rules! int_ops {
    ($bin:ident, $cmp:ident, $un:ident, $u:ty, $s:ty, $bits:expr) => {
        pub(crate) fn $bin(op: IBin, a: $u, b: $u) -> Result<$u, Trap> {
            Ok(match op {
                IBin::Add => a.wrapping_add(b),
                IBin::Sub => a.wrapping_sub(b),
                IBin::Mul => a.wrapping_mul(b),
                IBin::DivU => a.checked_div(b).ok_or(Trap::DivisionByZero)?,
                IBin::RemU => a.checked_rem(b).ok_or(Trap::DivisionByZero)?,
                IBin::DivS => {
                    if b == 0 {
                        return Err(Trap::DivisionByZero);
                    }
                    (a as $s).checked_div(b as $s).ok_or(Trap::IntegerOverflow)? as $u
                }
                IBin::RemS => {
                    if b == 0 {
                        return Err(Trap::DivisionByZero);
                    }
                    (a as $s).wrapping_rem(b as $s) as $u
                }
                IBin::And => a & b,
                IBin::Or => a | b,
                IBin::Xor => a ^ b,
                IBin::Shl => a.wrapping_shl(b as u32),
                IBin::ShrS => (a as $s).wrapping_shr(b as u32) as $u,
                IBin::ShrU => a.wrapping_shr(b as u32),
                IBin::Rotl => a.rotate_left((b % $bits) as u32),
                IBin::Rotr => a.rotate_right((b % $bits) as u32),
            })
        }

        pub(crate) fn $cmp(op: ICmp, a: $u, b: $u) -> bool {
            let (sa, sb) = (a as $s, b as $s);
            match op {
                ICmp::Eq => a == b,
                ICmp::Ne => a != b,
                ICmp::LtS => sa < sb,
                ICmp::LtU => a < b,
                ICmp::GtS => sa > sb,
                ICmp::GtU => a > b,
                ICmp::LeS => sa <= sb,
                ICmp::LeU => a <= b,
                ICmp::GeS => sa >= sb,
                ICmp::GeU => a >= b,
            }
        }

        pub(crate) fn $un(op: IUn, a: $u) -> $u {
            match op {
                IUn::Clz => a.leading_zeros() as $u,
                IUn::Ctz => a.trailing_zeros() as $u,
                IUn::Popcnt => a.count_ones() as $u,
                IUn::Eqz => (a == 0) as $u,
                IUn::Extend8S => a as u8 as i8 as $s as $u,
                IUn::Extend16S => a as u16 as i16 as $s as $u,
                IUn::Extend32S => a as u32 as i32 as $s as $u,
            }
        }
    };
}

int_ops!(ibin32, icmp32, iun32, u32, i32, 32);
int_ops!(ibin64, icmp64, iun64, u64, i64, 64);

macro_rules! float_ops {
    ($bin:ident, $un:ident, $cmp:ident, $f:ty, $bits:ty) => {
        pub(crate) fn $bin(op: FBin, a: $f, b: $f) -> $f {
            match op {
                FBin::Add => a + b,
                FBin::Sub => a - b,
                FBin::Mul => a * b,
                FBin::Div => a / b,
                FBin::Min => {
                    if a.is_nan() || b.is_nan() {
                        <$f>::NAN
                    } else if a == b {
                        // min(-0, +0) = -0
                        <$f>::from_bits(a.to_bits() | b.to_bits())
                    } else {
                        a.min(b)
                    }
                }
                FBin::Max => {
                    if a.is_nan() || b.is_nan() {
                        <$f>::NAN
                    } else if a == b {
                        <$f>::from_bits(a.to_bits() & b.to_bits())
                    } else {
                        a.max(b)
                    }
                }
                FBin::Copysign => a.copysign(b),
            }
        }

        pub(crate) fn $un(op: FUn, a: $f) -> $f {
            match op {
                FUn::Abs => <$f>::from_bits(a.to_bits() & !(1 << (<$bits>::BITS - 1))),
                FUn::Neg => <$f>::from_bits(a.to_bits() ^ (1 << (<$bits>::BITS - 1))),
                FUn::Ceil => a.ceil(),
                FUn::Floor => a.floor(),
                FUn::Trunc => a.trunc(),
                FUn::Nearest => a.round_ties_even(),
                FUn::Sqrt => a.sqrt(),
            }
        }

        pub(crate) fn $cmp(op: FCmp, a: $f, b: $f) -> bool {
            match op {
                FCmp::Eq => a == b,
                FCmp::Ne => a != b,
                FCmp::Lt => a < b,
                FCmp::Gt => a > b,
                FCmp::Le => a <= b,
                FCmp::Ge => a >= b,
            }
        }
    };
}

float_ops!(fbin32, fun32, fcmp32, f32, u32);
float_ops!(fbin64, fun64, fcmp64, f64, u64);

/// A conversion; `v` is the operand's bit pattern.
pub(crate) fn cvt(c: Cvt, v: u64) -> Result<u64, Trap> {
    Ok(match c {
        Cvt::I32WrapI64 => v & 0xffff_ffff,
        Cvt::I64ExtendI32S => v as u32 as i32 as i64 as u64,
        Cvt::I64ExtendI32U => v & 0xffff_ffff,
        Cvt::Trunc { f64, i64, signed, sat } => {
            let x = if f64 {
                f64::from_bits(v)
            } else {
                f32::from_bits(v as u32) as f64
            };
            return trunc(x, i64, signed, sat);
        }
        Cvt::Convert { i64, f64, signed } => {
            let r64 = |x: f64| x.to_bits();
            let r32 = |x: f32| x.to_bits() as u64;
            match (i64, signed, f64) {
                (false, true, false) => r32(v as u32 as i32 as f32),
                (false, false, false) => r32(v as u32 as f32),
                (true, true, false) => r32(v as i64 as f32),
                (true, false, false) => r32(v as f32),
                (false, true, true) => r64(v as u32 as i32 as f64),
                (false, false, true) => r64(v as u32 as f64),
                (true, true, true) => r64(v as i64 as f64),
                (true, false, true) => r64(v as f64),
            }
        }
        Cvt::F32DemoteF64 => (f64::from_bits(v) as f32).to_bits() as u64,
        Cvt::F64PromoteF32 => (f32::from_bits(v as u32) as f64).to_bits(),
        Cvt::Reinterpret { .. } => v,
    })
}

fn trunc(x: f64, i64: bool, signed: bool, sat: bool) -> Result<u64, Trap> {
    // Rust's `as` saturates and maps NaN to 0: exactly the *_sat semantics.
    let sat_value = match (i64, signed) {
        (false, true) => x as i32 as u32 as u64,
        (false, false) => x as u32 as u64,
        (true, true) => x as i64 as u64,
        (true, false) => x as u64,
    };
    if sat {
        return Ok(sat_value);
    }
    if x.is_nan() {
        return Err(Trap::InvalidConversion);
    }
    let t = x.trunc();
    let in_range = match (i64, signed) {
        (false, true) => (-2147483648.0..2147483648.0).contains(&t),
        (false, false) => t > -1.0 && t < 4294967296.0,
        (true, true) => (-9223372036854775808.0..9223372036854775808.0).contains(&t),
        (true, false) => t > -1.0 && t < 18446744073709551616.0,
    };
    if in_range {
        Ok(sat_value)
    } else {
        Err(Trap::IntegerOverflow)
    }
}
