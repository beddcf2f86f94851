//! The interpreter loop. One loop serves both modes: `SYM = false` is the
//! concrete fast path (no shadow stack, no shadow memory), `SYM = true`
//! carries a shadow id next to every operand, local, global and symbolic
//! memory byte.

use crate::decode::{Func, Module};
use crate::instr::{Instr, LoadKind};
use crate::numeric as num;
use crate::shadow::Sym;
use crate::wasi::{Host, Wasi};
use crate::{BranchFilter, BranchKind, BranchRecord, BudgetKind, ConstraintOrigin, Outcome, Run, RunConfig, Trap};

const PAGE: u64 = 65536;

pub(crate) struct Frame {
    pub func: u32,
    /// The caller's next instruction (the call is at `pc - 1`).
    pub pc: u32,
    base: u32,
}

pub(crate) struct Machine<'m> {
    pub module: &'m Module,
    pub stack: Vec<u64>,
    pub sh: Vec<u32>,
    pub frames: Vec<Frame>,
    /// `(function, pc)` of the latest call to an import, in the calling
    /// function (the frame a host function runs in).
    pub caller: (u32, u32),
    /// Attributed writes to stdout ([`crate::Observe::writes`]).
    pub writes: Vec<crate::OutputWrite>,
    pub mem: Vec<u8>,
    mem_max: u64,
    globals: Vec<u64>,
    gsh: Vec<u32>,
    pub sym: Sym,
    pub wasi: Wasi,
    hosts: Vec<Host>,
    fuel: u64,
    budget: crate::Budget,
    pub branches: Vec<BranchRecord>,
    pub obs: crate::observe::Observer,
    record_concrete: bool,
    record_symbolic: bool,
    /// Per source-location index: whether its branches are recorded (Files filter).
    user_loc: Vec<bool>,
    covered: Vec<bool>,
    coverage: bool,
    /// [`RunConfig::switch`]: the index in `branches` whose direction is inverted.
    switch: Option<u32>,
    switched: bool,
}

/// Runs `module` under `config`. Never panics on a valid module: every way a
/// run can end is an [`Outcome`].
pub fn run(module: &Module, config: &RunConfig) -> Run {
    let mut m = Machine::new(module, config);
    // A switched run is not the program's execution: no path condition.
    let outcome = if config.symbolic.any() && config.switch.is_none() {
        m.start::<true>()
    } else {
        m.start::<false>()
    };
    m.finish(outcome)
}

fn trap(t: Trap, offset: u32) -> Outcome {
    Outcome::Trap { trap: t, offset }
}

impl<'m> Machine<'m> {
    fn new(module: &'m Module, config: &RunConfig) -> Machine<'m> {
        let segments = module
            .data
            .iter()
            .map(|(b, d)| (*b, b.saturating_add(d.len() as u32)))
            .collect();
        let nlocs = module.source.locs.len();
        let (record_concrete, record_symbolic, user_loc) = match &config.branches {
            BranchFilter::None => (false, false, vec![]),
            BranchFilter::All => (true, true, vec![true; nlocs]),
            BranchFilter::Symbolic => (false, true, vec![true; nlocs]),
            BranchFilter::Files(files) => (
                true,
                true,
                module
                    .source
                    .locs
                    .iter()
                    .map(|l| files.iter().any(|f| crate::source::file_matches(&l.file, f)))
                    .collect(),
            ),
        };
        let record_all_locs = matches!(config.branches, BranchFilter::All | BranchFilter::Symbolic);
        Machine {
            module,
            stack: Vec::with_capacity(1 << 16),
            sh: Vec::new(),
            frames: Vec::with_capacity(256),
            caller: (u32::MAX, 0),
            writes: Vec::new(),
            mem: Vec::new(),
            mem_max: 0,
            globals: module.globals.clone(),
            gsh: vec![0; module.globals.len()],
            sym: Sym::new(&config.budget, segments),
            wasi: Wasi::new(config),
            hosts: module
                .imports
                .iter()
                .map(|i| Host::resolve(&i.module, &i.name))
                .collect(),
            fuel: config.budget.instructions,
            budget: config.budget,
            branches: Vec::new(),
            obs: crate::observe::Observer::new(module, &config.observe),
            record_concrete,
            record_symbolic,
            user_loc: if record_all_locs { vec![] } else { user_loc },
            covered: vec![false; if config.coverage { nlocs } else { 0 }],
            coverage: config.coverage,
            switch: config.switch,
            switched: false,
        }
    }

    fn start<const SYM: bool>(&mut self) -> Outcome {
        if let Some((initial, max)) = self.module.memory_pages {
            let bytes = initial.saturating_mul(PAGE);
            if bytes > self.budget.memory_bytes {
                return Outcome::Budget {
                    budget: BudgetKind::Memory,
                };
            }
            self.mem = vec![0; bytes as usize];
            self.mem_max = max.unwrap_or(65536).min(65536);
        }
        for (base, data) in &self.module.data {
            let end = *base as usize + data.len();
            if end > self.mem.len() {
                return trap(Trap::MemoryOutOfBounds, 0);
            }
            self.mem[*base as usize..end].copy_from_slice(data);
        }
        if let Some(s) = self.module.start
            && let Err(o) = self.call::<SYM>(s)
        {
            return o;
        }
        let Some(entry) = self.module.entry else {
            return Outcome::NoEntryPoint;
        };
        match self.call::<SYM>(entry) {
            Ok(()) => Outcome::Exited { code: 0 },
            Err(o) => o,
        }
    }

    fn finish(self, outcome: Outcome) -> Run {
        let mut lines: Vec<(String, u32)> = self
            .covered
            .iter()
            .enumerate()
            .filter(|(_, c)| **c)
            .map(|(i, _)| {
                let l = &self.module.source.locs[i];
                (l.file.clone(), l.line)
            })
            .collect();
        lines.sort();
        lines.dedup();
        Run {
            outcome,
            output_truncated: self.wasi.truncated,
            stdout: self.wasi.stdout,
            stderr: self.wasi.stderr,
            instructions: self.budget.instructions - self.fuel,
            branches: self.branches,
            path: self.sym.path,
            dropped_constraints: self.sym.dropped,
            arena: self.sym.arena,
            lines,
            writes: self.writes,
            switched: self.switched,
        }
    }

    /// Records a conditional branch at `pc - 1` of `func`. Returns whether
    /// the branch is the one [`RunConfig::switch`] inverts (a two-way
    /// branch only): the caller then takes the other direction, which the
    /// record already holds.
    #[inline(never)]
    fn branch(
        &mut self,
        fi: usize,
        func: &Func,
        pc: usize,
        kind: BranchKind,
        taken: u32,
        cond: Option<crate::ExprId>,
    ) -> bool {
        let offset = func.offsets[pc - 1];
        let path_index = cond.and_then(|c| self.sym.constrain(c, offset, ConstraintOrigin::Branch { kind }));
        if self.sym.exhausted.is_some() {
            // The run ends here with a budget outcome; no record without its constraint.
            return false;
        }
        let constraint = cond.filter(|c| self.sym.arena.as_const(*c).is_none());
        let wanted = if constraint.is_some() {
            self.record_symbolic
        } else {
            self.record_concrete
        };
        if !wanted {
            return false;
        }
        if !self.user_loc.is_empty() {
            let loc = func.locs[pc - 1];
            if loc == u32::MAX || !self.user_loc[loc as usize] {
                return false;
            }
        }
        let flip = self.switch == Some(self.branches.len() as u32) && kind != BranchKind::BrTable;
        self.switched |= flip;
        self.branches.push(BranchRecord {
            offset,
            func: (fi + self.module.imports.len()) as u32,
            kind,
            taken: if flip { taken ^ 1 } else { taken },
            constraint,
            path_index,
        });
        flip
    }

    /// Calls function `f` (imports included) with its arguments on the stack.
    fn call<const SYM: bool>(&mut self, f: u32) -> Result<(), Outcome> {
        let nimp = self.module.imports.len() as u32;
        if f < nimp {
            return self.host::<SYM>(f as usize);
        }
        self.interp::<SYM>(f - nimp)
    }

    fn host<const SYM: bool>(&mut self, i: usize) -> Result<(), Outcome> {
        let imp = &self.module.imports[i];
        let sig = &self.module.types[imp.ty as usize];
        let n = sig.params as usize;
        let at = self.stack.len() - n;
        let args: Vec<u64> = self.stack.drain(at..).collect();
        if SYM {
            let shs: Vec<u32> = self.sh.drain(at..).collect();
            for (a, s) in args.iter().zip(shs) {
                self.sym.concretize(
                    64.min(if *a > u32::MAX as u64 { 64 } else { 32 }),
                    *a,
                    s,
                    0,
                    ConstraintOrigin::Other,
                );
            }
        }
        let host = self.hosts[i].clone();
        let results = self.wasi_call::<SYM>(&host, &args)?;
        for r in results.into_iter().take(sig.results as usize) {
            self.stack.push(r);
            if SYM {
                self.sh.push(0);
            }
        }
        Ok(())
    }

    fn interp<const SYM: bool>(&mut self, entry: u32) -> Result<(), Outcome> {
        let module = self.module;
        let nimp = module.imports.len() as u32;
        let depth0 = self.frames.len();
        let mut fi = entry as usize;
        let mut func: &'m Func = &module.funcs[fi];
        let mut code: &'m [Instr] = &func.code;
        let mut pc = 0usize;
        let mut base = self.stack.len() - func.params as usize;
        self.enter::<SYM>(func)?;
        let mut obase = base + (func.params + func.locals) as usize;
        let mut fuel = self.fuel;
        macro_rules! pop {
            () => {
                self.stack.pop().expect("validated stack")
            };
        }
        macro_rules! push {
            ($v:expr) => {
                self.stack.push($v)
            };
        }
        macro_rules! spop {
            () => {
                if SYM {
                    self.sh.pop().expect("validated stack")
                } else {
                    0
                }
            };
        }
        macro_rules! spush {
            ($v:expr) => {
                if SYM {
                    self.sh.push($v)
                }
            };
        }
        macro_rules! off {
            () => {
                func.offsets[pc - 1]
            };
        }
        macro_rules! bail {
            ($o:expr) => {{
                self.fuel = fuel;
                return Err($o);
            }};
        }
        macro_rules! jump {
            ($t:expr) => {{
                let t = $t;
                let keep = t.arity as usize;
                let to = obase + t.height as usize;
                let from = self.stack.len() - keep;
                if from != to {
                    self.stack.copy_within(from.., to);
                    self.stack.truncate(to + keep);
                    if SYM {
                        self.sh.copy_within(from.., to);
                        self.sh.truncate(to + keep);
                    }
                }
                pc = t.pc as usize;
            }};
        }
        loop {
            if fuel == 0 {
                bail!(Outcome::Budget {
                    budget: BudgetKind::Instructions
                });
            }
            fuel -= 1;
            if SYM && let Some(b) = self.sym.exhausted {
                bail!(Outcome::Budget { budget: b });
            }
            if self.coverage {
                let l = func.locs.get(pc).copied().unwrap_or(u32::MAX);
                if l != u32::MAX {
                    self.covered[l as usize] = true;
                }
            }
            let ins = code[pc];
            pc += 1;
            match ins {
                Instr::Unreachable => bail!(trap(Trap::Unreachable, off!())),
                Instr::Br(t) => jump!(t),
                Instr::BrIf(t) => {
                    let mut c = pop!() as u32;
                    let sc = spop!();
                    if (SYM && sc != 0) || self.record_concrete {
                        let cond = self.cond::<SYM>(sc, c != 0);
                        if self.branch(fi, func, pc, BranchKind::BrIf, (c != 0) as u32, cond) {
                            c = (c == 0) as u32;
                        }
                    }
                    if c != 0 {
                        jump!(t);
                    }
                }
                Instr::If { else_pc } => {
                    let mut c = pop!() as u32;
                    let sc = spop!();
                    if (SYM && sc != 0) || self.record_concrete {
                        let cond = self.cond::<SYM>(sc, c != 0);
                        if self.branch(fi, func, pc, BranchKind::If, (c != 0) as u32, cond) {
                            c = (c == 0) as u32;
                        }
                    }
                    if c == 0 {
                        pc = else_pc as usize;
                    }
                }
                Instr::BrTable { first, len } => {
                    let i = pop!() as u32;
                    let si = spop!();
                    let k = i.min(len - 1);
                    if (SYM && si != 0) || self.record_concrete {
                        let cond = if SYM && si != 0 {
                            let w = crate::instr::ICmp::Eq;
                            Some(if k < len - 1 {
                                self.sym.icmp_bool(w, 32, i as u64, si, k as u64, 0)
                            } else {
                                self.sym
                                    .icmp_bool(crate::instr::ICmp::GeU, 32, i as u64, si, (len - 1) as u64, 0)
                            })
                        } else {
                            None
                        };
                        let _ = self.branch(fi, func, pc, BranchKind::BrTable, k, cond);
                    }
                    jump!(func.tables[(first + k) as usize]);
                }
                Instr::Jump(t) => pc = t as usize,
                Instr::Return => {
                    let keep = func.results as usize;
                    let from = self.stack.len() - keep;
                    if from != base {
                        self.stack.copy_within(from.., base);
                        if SYM {
                            self.sh.copy_within(from.., base);
                        }
                    }
                    self.stack.truncate(base + keep);
                    if SYM {
                        self.sh.truncate(base + keep);
                    }
                    if self.frames.len() == depth0 {
                        self.fuel = fuel;
                        return Ok(());
                    }
                    let fr = self.frames.pop().expect("frame");
                    let result = if self.obs.returns && keep == 1 {
                        match module.types[func.ty as usize].key.last() {
                            Some(wasmparser::ValType::I32) => Some(32u8),
                            Some(wasmparser::ValType::I64) => Some(64u8),
                            _ => None,
                        }
                    } else {
                        None
                    };
                    fi = fr.func as usize;
                    func = &module.funcs[fi];
                    code = &func.code;
                    pc = fr.pc as usize;
                    base = fr.base as usize;
                    obase = base + (func.params + func.locals) as usize;
                    if let Some(w) = result
                        && self.obs.at(func, pc - 1)
                    {
                        let v = *self.stack.last().expect("result");
                        let sv = if SYM { *self.sh.last().expect("result") } else { 0 };
                        self.observe_return::<SYM>(fi, func, pc, w, v, sv);
                    }
                }
                Instr::Call(f) | Instr::CallIndirect { ty: f } => {
                    let callee = if let Instr::CallIndirect { ty } = ins {
                        let i = pop!() as u32;
                        let si = spop!();
                        if SYM {
                            self.sym.concretize(32, i as u64, si, off!(), ConstraintOrigin::Other);
                        }
                        let Some(entry) = module.table.get(i as usize) else {
                            bail!(trap(Trap::UndefinedElement, off!()))
                        };
                        let Some(target) = *entry else {
                            bail!(trap(Trap::UninitializedElement, off!()))
                        };
                        if !module.same_type(module.func_type(target), ty) {
                            bail!(trap(Trap::IndirectCallTypeMismatch, off!()));
                        }
                        target
                    } else {
                        f
                    };
                    if callee < nimp {
                        self.fuel = fuel;
                        self.caller = (fi as u32, pc as u32);
                        self.host::<SYM>(callee as usize)?;
                        continue;
                    }
                    if self.frames.len() - depth0 >= self.budget.call_depth {
                        bail!(Outcome::Budget {
                            budget: BudgetKind::CallDepth
                        });
                    }
                    self.frames.push(Frame {
                        func: fi as u32,
                        pc: pc as u32,
                        base: base as u32,
                    });
                    fi = (callee - nimp) as usize;
                    func = &module.funcs[fi];
                    code = &func.code;
                    pc = 0;
                    base = self.stack.len() - func.params as usize;
                    if let Err(o) = self.enter::<SYM>(func) {
                        bail!(o);
                    }
                    obase = base + (func.params + func.locals) as usize;
                }
                Instr::Drop => {
                    pop!();
                    spop!();
                }
                Instr::Select => {
                    let mut c = pop!() as u32;
                    let sc = spop!();
                    let b = pop!();
                    let sb = spop!();
                    let a = pop!();
                    let sa = spop!();
                    if (SYM && sc != 0) || self.record_concrete {
                        let cond = self.cond::<SYM>(sc, c != 0);
                        if self.branch(fi, func, pc, BranchKind::Select, (c != 0) as u32, cond) {
                            c = (c == 0) as u32;
                        }
                    }
                    push!(if c != 0 { a } else { b });
                    spush!(if c != 0 { sa } else { sb });
                }
                Instr::LocalGet(i) => {
                    push!(self.stack[base + i as usize]);
                    spush!(self.sh[base + i as usize]);
                }
                Instr::LocalSet(i) => {
                    let v = pop!();
                    self.stack[base + i as usize] = v;
                    if SYM {
                        let s = spop!();
                        self.sh[base + i as usize] = s;
                    }
                }
                Instr::LocalTee(i) => {
                    self.stack[base + i as usize] = *self.stack.last().expect("validated");
                    if SYM {
                        self.sh[base + i as usize] = *self.sh.last().expect("validated");
                    }
                }
                Instr::GlobalGet(i) => {
                    push!(self.globals[i as usize]);
                    spush!(self.gsh[i as usize]);
                }
                Instr::GlobalSet(i) => {
                    self.globals[i as usize] = pop!();
                    if SYM {
                        self.gsh[i as usize] = spop!();
                    }
                }
                Instr::Load { kind, offset } => {
                    let a = pop!();
                    let sa = spop!();
                    let ea = a + offset as u64;
                    let n = kind.bytes as u64;
                    if ea + n > self.mem.len() as u64 {
                        bail!(trap(Trap::MemoryOutOfBounds, off!()));
                    }
                    let v = load(&self.mem, ea as usize, kind);
                    if self.obs.assignments && !kind.float && self.obs.slot(kind.bytes) && self.obs.at(func, pc - 1) {
                        self.obs.touch(ea as u32, kind.bytes);
                    }
                    if SYM {
                        let s = if sa != 0 || !self.sym.mem.is_empty() {
                            self.sym.load(&self.mem, kind, ea as u32, a, sa, offset, off!())
                        } else {
                            0
                        };
                        self.sh.push(s);
                    }
                    push!(v);
                }
                Instr::Store { bytes, offset, float } => {
                    let v = pop!();
                    let sv = spop!();
                    let a = pop!();
                    let sa = spop!();
                    let ea = a + offset as u64;
                    if ea + bytes as u64 > self.mem.len() as u64 {
                        bail!(trap(Trap::MemoryOutOfBounds, off!()));
                    }
                    let ea = ea as usize;
                    self.mem[ea..ea + bytes as usize].copy_from_slice(&v.to_le_bytes()[..bytes as usize]);
                    if SYM {
                        if sa != 0 {
                            self.sym.concretize(32, a, sa, off!(), ConstraintOrigin::Address);
                        }
                        self.sym.store(ea as u32, bytes as u32, sv);
                    }
                    if self.obs.assignments && !float && self.obs.slot(bytes) && self.obs.at(func, pc - 1) {
                        self.observe_store::<SYM>(fi, func, pc, ea as u32, bytes, v, sv);
                    }
                }
                Instr::MemorySize => {
                    push!(self.mem.len() as u64 / PAGE);
                    spush!(0);
                }
                Instr::MemoryGrow => {
                    let n = pop!() as u32 as u64;
                    let sn = spop!();
                    if SYM {
                        self.sym.concretize(32, n, sn, off!(), ConstraintOrigin::Other);
                    }
                    let old = self.mem.len() as u64 / PAGE;
                    if old + n > self.mem_max {
                        push!(u32::MAX as u64);
                    } else if (old + n) * PAGE > self.budget.memory_bytes {
                        bail!(Outcome::Budget {
                            budget: BudgetKind::Memory
                        });
                    } else {
                        self.mem.resize(((old + n) * PAGE) as usize, 0);
                        push!(old);
                    }
                    spush!(0);
                }
                Instr::Const(v) => {
                    push!(v);
                    spush!(0);
                }
                Instr::I32Bin(op) => {
                    let b = pop!();
                    let a = pop!();
                    let r = match num::ibin32(op, a as u32, b as u32) {
                        Ok(r) => r as u64,
                        Err(t) => bail!(trap(t, off!())),
                    };
                    if SYM {
                        let sb = spop!();
                        let sa = spop!();
                        let s = if sa | sb != 0 {
                            self.sym.ibin(op, 32, a, sa, b, sb)
                        } else {
                            0
                        };
                        self.sh.push(s);
                    }
                    push!(r);
                }
                Instr::I64Bin(op) => {
                    let b = pop!();
                    let a = pop!();
                    let r = match num::ibin64(op, a, b) {
                        Ok(r) => r,
                        Err(t) => bail!(trap(t, off!())),
                    };
                    if SYM {
                        let sb = spop!();
                        let sa = spop!();
                        let s = if sa | sb != 0 {
                            self.sym.ibin(op, 64, a, sa, b, sb)
                        } else {
                            0
                        };
                        self.sh.push(s);
                    }
                    push!(r);
                }
                Instr::I32Cmp(op) => {
                    let b = pop!();
                    let a = pop!();
                    if SYM {
                        let sb = spop!();
                        let sa = spop!();
                        let s = if sa | sb != 0 {
                            self.sym.icmp(op, 32, a, sa, b, sb)
                        } else {
                            0
                        };
                        self.sh.push(s);
                    }
                    push!(num::icmp32(op, a as u32, b as u32) as u64);
                }
                Instr::I64Cmp(op) => {
                    let b = pop!();
                    let a = pop!();
                    if SYM {
                        let sb = spop!();
                        let sa = spop!();
                        let s = if sa | sb != 0 {
                            self.sym.icmp(op, 64, a, sa, b, sb)
                        } else {
                            0
                        };
                        self.sh.push(s);
                    }
                    push!(num::icmp64(op, a, b) as u64);
                }
                Instr::I32Un(op) => {
                    let a = pop!();
                    if SYM {
                        let sa = spop!();
                        let s = if sa != 0 {
                            self.sym.iun(op, 32, a, sa, off!())
                        } else {
                            0
                        };
                        self.sh.push(s);
                    }
                    push!(num::iun32(op, a as u32) as u64);
                }
                Instr::I64Un(op) => {
                    let a = pop!();
                    if SYM {
                        let sa = spop!();
                        let s = if sa != 0 {
                            self.sym.iun(op, 64, a, sa, off!())
                        } else {
                            0
                        };
                        self.sh.push(s);
                    }
                    push!(num::iun64(op, a));
                }
                Instr::F32Bin(op) => {
                    let b = f32::from_bits(pop!() as u32);
                    let a = f32::from_bits(pop!() as u32);
                    spop!();
                    spop!();
                    push!(num::fbin32(op, a, b).to_bits() as u64);
                    spush!(0);
                }
                Instr::F64Bin(op) => {
                    let b = f64::from_bits(pop!());
                    let a = f64::from_bits(pop!());
                    spop!();
                    spop!();
                    push!(num::fbin64(op, a, b).to_bits());
                    spush!(0);
                }
                Instr::F32Un(op) => {
                    let a = f32::from_bits(pop!() as u32);
                    push!(num::fun32(op, a).to_bits() as u64);
                }
                Instr::F64Un(op) => {
                    let a = f64::from_bits(pop!());
                    push!(num::fun64(op, a).to_bits());
                }
                Instr::F32Cmp(op) => {
                    let b = f32::from_bits(pop!() as u32);
                    let a = f32::from_bits(pop!() as u32);
                    spop!();
                    push!(num::fcmp32(op, a, b) as u64);
                }
                Instr::F64Cmp(op) => {
                    let b = f64::from_bits(pop!());
                    let a = f64::from_bits(pop!());
                    spop!();
                    push!(num::fcmp64(op, a, b) as u64);
                }
                Instr::Cvt(c) => {
                    let v = pop!();
                    let r = match num::cvt(c, v) {
                        Ok(r) => r,
                        Err(t) => bail!(trap(t, off!())),
                    };
                    if SYM {
                        let s = spop!();
                        let s = if s != 0 { self.sym.cvt(c, v, s, off!()) } else { 0 };
                        self.sh.push(s);
                    }
                    push!(r);
                }
                Instr::Unsupported(i) => bail!(Outcome::Unsupported {
                    opcode: module.unsupported[i as usize].clone(),
                    offset: off!(),
                }),
            }
        }
    }

    /// Pushes the declared locals (zero) of a function being entered.
    #[inline]
    fn enter<const SYM: bool>(&mut self, func: &Func) -> Result<(), Outcome> {
        let n = func.locals as usize;
        if self.stack.len() + n > (64 << 20) {
            return Err(Outcome::Budget {
                budget: BudgetKind::Memory,
            });
        }
        self.stack.resize(self.stack.len() + n, 0);
        if SYM {
            self.sh.resize(self.stack.len(), 0);
        }
        Ok(())
    }

    /// The constraint a branch on a value with shadow `sc` adds: `sc != 0`
    /// when taken, `sc == 0` otherwise.
    #[inline]
    fn cond<const SYM: bool>(&mut self, sc: u32, taken: bool) -> Option<crate::ExprId> {
        if !SYM || sc == 0 {
            return None;
        }
        let nz = self.sym.arena.nonzero(crate::ExprId(sc));
        Some(if taken { nz } else { self.sym.arena.not(nz) })
    }
}

#[inline]
pub(crate) fn load(mem: &[u8], ea: usize, kind: LoadKind) -> u64 {
    let mut buf = [0u8; 8];
    buf[..kind.bytes as usize].copy_from_slice(&mem[ea..ea + kind.bytes as usize]);
    let raw = u64::from_le_bytes(buf);
    let bits = 8 * kind.bytes as u32;
    let v = if kind.signed && bits < 64 {
        (((raw << (64 - bits)) as i64) >> (64 - bits)) as u64
    } else {
        raw
    };
    if kind.wide { v } else { v & 0xffff_ffff }
}
