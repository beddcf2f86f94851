//! The pre-decoded instruction set the interpreter runs: structured control
//! flow is resolved at decode time into jumps with absolute targets and the
//! operand-stack height to unwind to, so execution needs no label stack.

/// Where a branch lands and what it keeps: after the branch the frame's
/// operand stack holds `height` values plus the top `arity` values from
/// before the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Target {
    /// Instruction index in the function's code.
    pub pc: u32,
    /// Operand-stack height (relative to the frame's operand base).
    pub height: u32,
    /// Values carried over.
    pub arity: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IBin {
    Add,
    Sub,
    Mul,
    DivS,
    DivU,
    RemS,
    RemU,
    And,
    Or,
    Xor,
    Shl,
    ShrS,
    ShrU,
    Rotl,
    Rotr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ICmp {
    Eq,
    Ne,
    LtS,
    LtU,
    GtS,
    GtU,
    LeS,
    LeU,
    GeS,
    GeU,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IUn {
    Clz,
    Ctz,
    Popcnt,
    Eqz,
    Extend8S,
    Extend16S,
    Extend32S,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FBin {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    Copysign,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FUn {
    Abs,
    Neg,
    Ceil,
    Floor,
    Trunc,
    Nearest,
    Sqrt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FCmp {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

/// Conversions between numeric types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cvt {
    I32WrapI64,
    I64ExtendI32S,
    I64ExtendI32U,
    /// Float to int: (source is f64, destination is i64, signed, saturating).
    Trunc {
        f64: bool,
        i64: bool,
        signed: bool,
        sat: bool,
    },
    /// Int to float: (source is i64, destination is f64, signed).
    Convert {
        i64: bool,
        f64: bool,
        signed: bool,
    },
    F32DemoteF64,
    F64PromoteF32,
    /// Bit reinterpretations: the value bits do not change (i32<->f32 and
    /// i64<->f64); `to_float` tells the direction.
    Reinterpret {
        to_float: bool,
    },
}

/// Width and extension of a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LoadKind {
    /// Bytes read: 1, 2, 4 or 8.
    pub bytes: u8,
    /// Sign-extend (narrow loads only).
    pub signed: bool,
    /// Result is i64 (or f64 when `float`).
    pub wide: bool,
    /// f32/f64 load.
    pub float: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Instr {
    Unreachable,
    Br(Target),
    BrIf(Target),
    /// Entries `first..first+len` of the function's `tables`; the last one
    /// is the default.
    BrTable {
        first: u32,
        len: u32,
    },
    /// Condition false: jump to `else_pc` (after the `else`, or past `end`).
    If {
        else_pc: u32,
    },
    Jump(u32),
    Return,
    Call(u32),
    CallIndirect {
        ty: u32,
    },
    Drop,
    Select,
    LocalGet(u32),
    LocalSet(u32),
    LocalTee(u32),
    GlobalGet(u32),
    GlobalSet(u32),
    Load {
        kind: LoadKind,
        offset: u32,
    },
    Store {
        bytes: u8,
        float: bool,
        offset: u32,
    },
    MemorySize,
    MemoryGrow,
    Const(u64),
    I32Bin(IBin),
    I64Bin(IBin),
    I32Cmp(ICmp),
    I64Cmp(ICmp),
    I32Un(IUn),
    I64Un(IUn),
    F32Bin(FBin),
    F64Bin(FBin),
    F32Un(FUn),
    F64Un(FUn),
    F32Cmp(FCmp),
    F64Cmp(FCmp),
    Cvt(Cvt),
    /// An instruction outside the supported set: the index of its name in
    /// the module's `unsupported` list.
    Unsupported(u32),
}
