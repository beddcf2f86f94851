//! A concolic WebAssembly interpreter: modules decoded with wasmparser run
//! concretely, with an optional symbolic shadow that follows every input byte
//! (stdin, argv, preopened files) through the computation as a bit-vector
//! expression, and an SMT-LIB2 solver interface (z3 as a child process) to
//! solve path conditions for new inputs.
//!
//! The crate knows nothing about the techniques built on it (Darwin's
//! path-condition deviations, SBFL spectra): it offers
//! - [`Module::decode`]: a validated module, pre-decoded into flat instruction
//!   arrays with resolved branch targets, with its DWARF line table resolved
//!   per instruction ([`SourceLoc`]);
//! - [`run`]: one execution under a [`RunConfig`] (inputs, which bytes are
//!   symbolic, budgets, which branches to record), giving a [`Run`]: the
//!   [`Outcome`], stdout/stderr, [`BranchRecord`]s, the path condition
//!   ([`PathConstraint`]s over an [`ExprArena`]) and line coverage;
//! - [`smt`] and [`solver`]: path conditions as SMT-LIB2 (QF_ABV) and a
//!   [`solver::Solver`] trait with the `z3 -smt2 -in` process backend;
//! - [`bench::measure`]: instructions per second, concrete and with shadow.
//!
//! Semantics follow the WebAssembly core specification 1.0 (MVP) plus the
//! sign-extension operators, mutable globals, multi-value blocks and the
//! non-trapping float-to-int conversions; any other instruction ends the run
//! with [`Outcome::Unsupported`] naming it. The WASI layer is preview1
//! (`wasi_snapshot_preview1`); an import it does not implement ends the run
//! with [`Outcome::UnsupportedImport`] when called.
#![deny(missing_docs)]

pub mod bench;
mod decode;
mod exec;
pub mod expr;
mod instr;
mod numeric;
mod observe;
mod shadow;
pub mod smt;
pub mod solver;
pub mod source;
mod symops;
mod wasi;

pub use decode::{DecodeError, Module};
pub use exec::run;
pub use expr::{Expr, ExprArena, ExprId, InputSource, InputVar};
pub use source::SourceLoc;

use serde::{Deserialize, Serialize};

/// The inputs of one run. Each byte of stdin, of each argument (argv\[1..\],
/// not argv\[0\]) and of each file can be a symbolic 8-bit variable
/// ([`InputVar`]), named stably (`stdin_17`, `arg1_0`, `file0_5`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inputs {
    /// Bytes the program reads from fd 0.
    pub stdin: Vec<u8>,
    /// argv\[0\] (the program name; never symbolic).
    pub program_name: String,
    /// argv\[1..\], raw bytes (a NUL terminator is added by the WASI layer).
    pub args: Vec<Vec<u8>>,
    /// Environment as `NAME=value` strings (never symbolic).
    pub env: Vec<String>,
    /// Files of the in-memory preopened directory (fd 3, guest path `.`):
    /// (relative path, contents). Files the program creates live only during
    /// the run.
    pub files: Vec<(String, Vec<u8>)>,
}

impl Inputs {
    /// The concrete byte of `var`, if `var` is inside these inputs.
    pub fn byte(&self, var: InputVar) -> Option<u8> {
        let i = var.index as usize;
        match var.source {
            InputSource::Stdin => self.stdin.get(i).copied(),
            InputSource::Arg(a) => self.args.get(a as usize)?.get(i).copied(),
            InputSource::File(f) => self.files.get(f as usize)?.1.get(i).copied(),
        }
    }

    /// These inputs with the bytes of `values` replaced (a solver model);
    /// variables outside the inputs are ignored. Lengths never change.
    pub fn with_values(&self, values: &[(InputVar, u8)]) -> Inputs {
        let mut out = self.clone();
        for &(var, value) in values {
            let i = var.index as usize;
            let slot = match var.source {
                InputSource::Stdin => out.stdin.get_mut(i),
                InputSource::Arg(a) => out.args.get_mut(a as usize).and_then(|v| v.get_mut(i)),
                InputSource::File(f) => out.files.get_mut(f as usize).and_then(|v| v.1.get_mut(i)),
            };
            if let Some(slot) = slot {
                *slot = value;
            }
        }
        out
    }
}

/// Which input bytes are symbolic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbolic {
    /// Every stdin byte.
    pub stdin: bool,
    /// Every byte of argv\[1..\] (not the NUL terminators).
    pub args: bool,
    /// Every byte of the preopened files.
    pub files: bool,
}

impl Symbolic {
    /// Nothing symbolic: a purely concrete run (the fast path).
    pub const NONE: Symbolic = Symbolic {
        stdin: false,
        args: false,
        files: false,
    };
    /// Every input byte symbolic.
    pub const ALL: Symbolic = Symbolic {
        stdin: true,
        args: true,
        files: true,
    };

    /// Whether any input is symbolic (the run keeps a shadow state).
    pub fn any(&self) -> bool {
        self.stdin || self.args || self.files
    }
}

/// Limits of one run; reaching one ends the run with [`Outcome::Budget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    /// Executed wasm instructions (default 10^8, darwin-measured.md §4.1).
    pub instructions: u64,
    /// Entries of the path condition (default 100,000).
    pub constraints: usize,
    /// Linear memory in bytes (default 256 MiB); `memory.grow` beyond it ends the run.
    pub memory_bytes: u64,
    /// Nodes of the expression arena (default 4,000,000): bounds the shadow state.
    pub expressions: usize,
    /// Call depth (default 20,000 frames).
    pub call_depth: usize,
    /// Path constraints kept per static branch site (wasm offset): the first
    /// `per_site` instances are kept, later ones are dropped (counted in
    /// [`Run::dropped_constraints`]); bounds input-bounded loops
    /// (darwin-measured.md §5 trap 10). Default: unlimited.
    pub per_site: u32,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            instructions: 100_000_000,
            constraints: 100_000,
            memory_bytes: 256 << 20,
            expressions: 4_000_000,
            call_depth: 20_000,
            per_site: u32::MAX,
        }
    }
}

/// Which branches get a [`BranchRecord`]. Path constraints are always kept
/// for every symbolic branch (libc's too, for feasibility); this only filters
/// the records.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BranchFilter {
    /// No branch records (fastest; path constraints are still collected).
    None,
    /// Every conditional branch executed.
    All,
    /// Only symbolic branches (those with a constraint), anywhere.
    #[default]
    Symbolic,
    /// Only branches whose source file is one of these (see
    /// [`source::file_matches`]: equal, or one is a `/`-suffix of the other),
    /// symbolic or not.
    Files(Vec<String>),
}

/// Everything one run needs besides the module.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    /// The program's inputs.
    pub inputs: Inputs,
    /// Which inputs are symbolic.
    pub symbolic: Symbolic,
    /// Limits.
    pub budget: Budget,
    /// Which branches are recorded.
    pub branches: BranchFilter,
    /// Whether the set of executed source lines is collected ([`Run::lines`]).
    pub coverage: bool,
    /// Cap on stdout and on stderr in bytes (default 0 means 16 MiB); output
    /// beyond it is dropped and [`Run::output_truncated`] is set.
    pub output_cap: usize,
    /// Observation points (virtual branches); default off.
    pub observe: Observe,
    /// Predicate switching (Zhang, Gupta and Gupta, ICSE 2006): the index
    /// into [`Run::branches`] of the record whose direction this run
    /// inverts, counted as a run with the same configuration and no switch
    /// records them (so usually an index into such a run's branches). Only
    /// a two-way branch (`br_if`, `if`, `select`) is inverted; at a
    /// `br_table` or a virtual branch nothing is, and [`Run::switched`]
    /// stays false. The record holds the direction taken (the inverted
    /// one). A switched run is not an execution of the program on its
    /// inputs, so it runs concretely whatever [`RunConfig::symbolic`]
    /// says (no path condition). Default: none.
    #[serde(default)]
    pub switch: Option<u32>,
}

/// What kind of instruction a [`BranchRecord`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BranchKind {
    /// `br_if`: `taken` is 1 when the branch was taken (condition non-zero).
    BrIf,
    /// `if`: `taken` is 1 when the then-arm ran (condition non-zero).
    If,
    /// `br_table`: `taken` is the index into the label table, or the table
    /// length for the default label.
    BrTable,
    /// `select`: `taken` is 1 when the first operand was chosen (condition non-zero).
    Select,
    /// A virtual branch at an observation point ([`RunConfig::observe`]):
    /// `taken` is 1 when the predicate held.
    Predicate(Predicate),
}

/// The predicate of a virtual branch (see [`Observe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Predicate {
    /// A call's result is negative (signed), at the call.
    Negative,
    /// A call's result is zero (null for a pointer), at the call.
    Zero,
    /// A stored value equals the current value of a recently used
    /// other slot of the same size, at the store.
    Equal,
}

/// Observation points: where the interpreter evaluates predicates over
/// values that no branch of the program computes and records them as
/// virtual branches ([`BranchKind::Predicate`] records, and their
/// constraints in the path condition when they depend on input), so that a
/// wrong constant or a wrong assigned variable changes the path condition.
/// The predicate families are statistical debugging's (Liblit et al., PLDI
/// 2005: "returns", "scalar-pairs") as Darwin instruments them (Qi et al.,
/// TOSEM, section 5): at a call in an observed file whose callee returns one
/// `i32`/`i64`, `result < 0` and `result == 0`; at a 4- or 8-byte integer
/// store (and a 1- or 2-byte one with [`Observe::narrow`]) in an observed
/// file (an assignment at `-O0`), `stored == y` for the
/// `peers` other slots of the same size that observed code read or wrote
/// most recently. Default: off.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observe {
    /// Source files whose instructions are observation points (matched like
    /// [`BranchFilter::Files`]); empty: none.
    pub files: Vec<String>,
    /// Sign and zero predicates on call results.
    pub returns: bool,
    /// `x == y` predicates at stores.
    pub assignments: bool,
    /// How many other recently used slots a store is compared with.
    pub peers: u32,
    /// `x == y` at 1- and 2-byte stores too (`char` and `short` variables),
    /// against the recently used slots of the same size.
    #[serde(default)]
    pub narrow: bool,
    /// Attribute every write to standard output to the innermost call site
    /// in an observed file that made it ([`Run::writes`]): the statement
    /// (a `printf`, `puts`, `putchar` of the user's) whose call led to the
    /// `fd_write`. Independent of `returns` and `assignments`. Exact only
    /// when the program's stdout is unbuffered (doppel-lang's wasm builds
    /// make it so); with a buffer, a write is attributed to the statement
    /// that filled or flushed it.
    #[serde(default)]
    pub writes: bool,
}

/// One write to standard output (fd 1), attributed to the statement that
/// made it ([`Observe::writes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputWrite {
    /// Byte offset in [`Run::stdout`] where the write's bytes start.
    pub at: u32,
    /// Code-section-relative offset of the innermost call instruction on
    /// the call stack that lies in an observed file (see
    /// [`Module::source_loc`]); `None` when no frame is in one (a flush at
    /// exit, after `main` returned).
    pub site: Option<u32>,
}

/// One execution of a conditional branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchRecord {
    /// Offset of the instruction relative to the start of the code section
    /// (the address space of the module's DWARF); see [`Module::source_loc`].
    pub offset: u32,
    /// Function index (imports included) that holds the instruction.
    pub func: u32,
    /// Instruction kind.
    pub kind: BranchKind,
    /// Direction taken (see [`BranchKind`]).
    pub taken: u32,
    /// When the condition was symbolic: the constraint that held on this run
    /// (a boolean expression, already oriented to the direction taken), also
    /// present in the path condition at [`BranchRecord::path_index`].
    pub constraint: Option<ExprId>,
    /// Index into [`Run::path`] of that constraint (None when concrete or
    /// dropped by [`Budget::per_site`]).
    pub path_index: Option<u32>,
}

/// Why an entry of the path condition exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConstraintOrigin {
    /// A symbolic conditional branch ([`Run::branches`] may hold its record).
    Branch {
        /// Instruction kind.
        kind: BranchKind,
    },
    /// A symbolic memory address was fixed to its concrete value.
    Address,
    /// A symbolic operand of a float operation was fixed to its concrete value.
    Float,
    /// A symbolic value was fixed for another reason (call_indirect index,
    /// memory.grow size, a WASI argument).
    Other,
}

/// One entry of the path condition: a boolean expression true on this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathConstraint {
    /// The boolean expression.
    pub expr: ExprId,
    /// Code-section-relative offset of the instruction that produced it.
    pub offset: u32,
    /// Why it exists.
    pub origin: ConstraintOrigin,
}

/// A wasm trap (core spec §4.4: the instructions that trap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Trap {
    /// `unreachable`.
    Unreachable,
    /// A load or store outside linear memory.
    MemoryOutOfBounds,
    /// Integer division or remainder by zero.
    DivisionByZero,
    /// Signed division overflow (`INT_MIN / -1`).
    IntegerOverflow,
    /// Float-to-int conversion of NaN or an out-of-range value.
    InvalidConversion,
    /// `call_indirect` to an index outside the table.
    UndefinedElement,
    /// `call_indirect` to a null table entry.
    UninitializedElement,
    /// `call_indirect` whose callee has another type.
    IndirectCallTypeMismatch,
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BudgetKind {
    /// [`Budget::instructions`].
    Instructions,
    /// [`Budget::constraints`].
    Constraints,
    /// [`Budget::memory_bytes`].
    Memory,
    /// [`Budget::expressions`].
    Expressions,
    /// [`Budget::call_depth`].
    CallDepth,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// `proc_exit(code)`, or the entry point returned (code 0).
    Exited {
        /// The exit code.
        code: u32,
    },
    /// A wasm trap.
    Trap {
        /// Which.
        trap: Trap,
        /// Code-section-relative offset of the trapping instruction.
        offset: u32,
    },
    /// An instruction outside the supported set was reached.
    Unsupported {
        /// Its name as wasmparser spells it (e.g. `V128Load`, `MemoryCopy`).
        opcode: String,
        /// Code-section-relative offset.
        offset: u32,
    },
    /// A call to an import this interpreter does not provide.
    UnsupportedImport {
        /// Import module (e.g. `wasi_snapshot_preview1`).
        module: String,
        /// Import name (e.g. `sock_accept`).
        name: String,
    },
    /// A budget ran out.
    Budget {
        /// Which.
        budget: BudgetKind,
    },
    /// The module has no `_start` (nor `main`) export to run.
    NoEntryPoint,
}

/// The result of one [`run`].
#[derive(Debug, Clone)]
pub struct Run {
    /// How the run ended.
    pub outcome: Outcome,
    /// Bytes written to fd 1 (capped by [`RunConfig::output_cap`]).
    pub stdout: Vec<u8>,
    /// Bytes written to fd 2 (capped likewise).
    pub stderr: Vec<u8>,
    /// Whether output beyond the cap was dropped.
    pub output_truncated: bool,
    /// Instructions executed.
    pub instructions: u64,
    /// Recorded branches in execution order (filtered by [`RunConfig::branches`]).
    pub branches: Vec<BranchRecord>,
    /// The path condition in execution order: every symbolic branch plus
    /// every concretization.
    pub path: Vec<PathConstraint>,
    /// Constraints dropped by [`Budget::per_site`].
    pub dropped_constraints: u64,
    /// The expressions that [`Run::path`] and [`Run::branches`] refer to.
    pub arena: ExprArena,
    /// Executed source lines `(file, line)`, sorted, when
    /// [`RunConfig::coverage`] was set; empty otherwise.
    pub lines: Vec<(String, u32)>,
    /// Writes to standard output in order, with the statement that made
    /// each, when [`Observe::writes`] was set (and files named); empty
    /// otherwise. Consecutive writes from one site are one entry; writes
    /// dropped by the output cap are not listed.
    pub writes: Vec<OutputWrite>,
    /// Whether [`RunConfig::switch`] inverted a branch (false when the run
    /// ended before that record, or the record was not a two-way branch).
    pub switched: bool,
}

impl Run {
    /// The write that produced byte `k` of [`Run::stdout`]: the last one
    /// starting at or before it (`None` when `k` is past the output or no
    /// write was recorded).
    pub fn writer_of(&self, k: usize) -> Option<&OutputWrite> {
        if k >= self.stdout.len() {
            return None;
        }
        let i = self.writes.partition_point(|w| (w.at as usize) <= k);
        i.checked_sub(1).map(|i| &self.writes[i])
    }
}
