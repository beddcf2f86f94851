//! Module decoding and validation with wasmparser (pinned `=0.263.0`: its
//! API moves between minor versions, darwin-measured.md §5 trap 17), and
//! translation of each function body into [`Instr`] arrays. Branch targets
//! and the operand-stack heights to unwind to come from wasmparser's
//! validator state at each branch (`FuncValidator::get_control_frame`).

use crate::instr::*;
use crate::source::{Dwarf, SourceLoc, SourceMap};
use wasmparser::{
    BlockType, DataKind, ElementItems, ElementKind, ExternalKind, FrameKind, Operator, Parser, Payload, TypeRef,
    ValType, ValidPayload, Validator,
};

/// Why a module could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// wasmparser rejected the binary (malformed or invalid).
    #[error("invalid module at byte {offset}: {message}")]
    Invalid {
        /// Byte offset in the module.
        offset: u64,
        /// wasmparser's message.
        message: String,
    },
    /// A module-level feature outside the supported set (several memories,
    /// imported memories/tables/globals, non-constant initializers).
    #[error("unsupported module feature: {0}")]
    Unsupported(String),
}

impl From<wasmparser::BinaryReaderError> for DecodeError {
    fn from(e: wasmparser::BinaryReaderError) -> Self {
        DecodeError::Invalid {
            offset: e.offset(),
            message: e.message().to_string(),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Sig {
    pub params: u32,
    pub results: u32,
    /// The value types, for `call_indirect`'s structural type check.
    pub key: Vec<ValType>,
}

#[derive(Debug, Clone)]
pub(crate) struct Func {
    pub ty: u32,
    pub params: u32,
    pub results: u32,
    /// Declared locals beyond the parameters.
    pub locals: u32,
    pub code: Vec<Instr>,
    /// Code-section-relative offset of each instruction.
    pub offsets: Vec<u32>,
    /// Source location index of each instruction (`u32::MAX`: none).
    pub locs: Vec<u32>,
    pub tables: Vec<Target>,
}

#[derive(Debug, Clone)]
pub(crate) struct Import {
    pub module: String,
    pub name: String,
    pub ty: u32,
}

/// A decoded, validated module ready to [`crate::run`] any number of times.
#[derive(Debug, Clone)]
pub struct Module {
    pub(crate) types: Vec<Sig>,
    pub(crate) imports: Vec<Import>,
    /// Defined functions (index = function index - imports).
    pub(crate) funcs: Vec<Func>,
    pub(crate) globals: Vec<u64>,
    pub(crate) memory_pages: Option<(u64, Option<u64>)>,
    pub(crate) data: Vec<(u32, Vec<u8>)>,
    pub(crate) table: Vec<Option<u32>>,
    pub(crate) start: Option<u32>,
    pub(crate) entry: Option<u32>,
    pub(crate) unsupported: Vec<String>,
    pub(crate) source: SourceMap,
    pub(crate) names: Vec<String>,
}

impl Module {
    /// Decodes and validates `bytes` (a core wasm module) and resolves its
    /// DWARF line table, when it has one, for every instruction.
    pub fn decode(bytes: &[u8]) -> Result<Module, DecodeError> {
        Decoder.decode(bytes)
    }

    /// The source location of the instruction at `offset` (code-section
    /// relative, as in [`crate::BranchRecord::offset`]), from DWARF
    /// `.debug_line` (via addr2line); None without debug info.
    pub fn source_loc(&self, offset: u32) -> Option<&SourceLoc> {
        self.source.lookup(offset)
    }

    /// Name of function `index` (imports included) from the name section,
    /// or `func<index>`.
    pub fn function_name(&self, index: u32) -> String {
        self.names
            .get(index as usize)
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("func{index}"))
    }

    /// Number of functions, imports included.
    pub fn function_count(&self) -> u32 {
        (self.imports.len() + self.funcs.len()) as u32
    }

    /// Imported functions as `(module, name)`.
    pub fn imports(&self) -> Vec<(String, String)> {
        self.imports
            .iter()
            .map(|i| (i.module.clone(), i.name.clone()))
            .collect()
    }

    pub(crate) fn func_type(&self, f: u32) -> u32 {
        let n = self.imports.len() as u32;
        if f < n {
            self.imports[f as usize].ty
        } else {
            self.funcs[(f - n) as usize].ty
        }
    }

    pub(crate) fn same_type(&self, a: u32, b: u32) -> bool {
        a == b || self.types[a as usize].key == self.types[b as usize].key
    }

    /// Every conditional branch instruction (`br_if`, `if`, `br_table`,
    /// `select`) of the module: (code-section offset, function index, kind).
    pub fn branch_sites(&self) -> Vec<(u32, u32, crate::BranchKind)> {
        let mut out = Vec::new();
        for (i, f) in self.funcs.iter().enumerate() {
            let fi = (i + self.imports.len()) as u32;
            for (ins, &off) in f.code.iter().zip(&f.offsets) {
                let kind = match ins {
                    Instr::BrIf(_) => crate::BranchKind::BrIf,
                    Instr::If { .. } => crate::BranchKind::If,
                    Instr::BrTable { .. } => crate::BranchKind::BrTable,
                    Instr::Select => crate::BranchKind::Select,
                    _ => continue,
                };
                out.push((off, fi, kind));
            }
        }
        out
    }
}

struct Ctl {
    kind: FrameKind,
    start: u32,
    /// Instructions (or br_table entries, as `!index`) waiting for the end pc.
    patches: Vec<Patch>,
    if_pc: Option<u32>,
}

enum Patch {
    Instr(u32),
    Table(u32),
}

#[derive(Default)]
struct Decoder;

fn block_arity(types: &[Sig], bt: BlockType) -> (u32, u32) {
    match bt {
        BlockType::Empty => (0, 0),
        BlockType::Type(_) => (0, 1),
        BlockType::FuncType(i) => types.get(i as usize).map(|s| (s.params, s.results)).unwrap_or((0, 0)),
    }
}

fn const_expr(expr: &wasmparser::ConstExpr, globals: &[u64]) -> Result<u64, DecodeError> {
    let mut r = expr.get_operators_reader();
    let mut value = None;
    while !r.eof() {
        match r.read()? {
            Operator::I32Const { value: v } => value = Some(v as u32 as u64),
            Operator::I64Const { value: v } => value = Some(v as u64),
            Operator::F32Const { value: v } => value = Some(v.bits() as u64),
            Operator::F64Const { value: v } => value = Some(v.bits()),
            Operator::GlobalGet { global_index } => value = globals.get(global_index as usize).copied(),
            Operator::RefNull { .. } => value = Some(u64::MAX),
            Operator::RefFunc { function_index } => value = Some(function_index as u64),
            Operator::End => {}
            op => return Err(DecodeError::Unsupported(format!("constant expression {op:?}"))),
        }
    }
    value.ok_or_else(|| DecodeError::Unsupported("empty constant expression".into()))
}

impl Decoder {
    fn decode(self, bytes: &[u8]) -> Result<Module, DecodeError> {
        let mut m = Module {
            types: vec![],
            imports: vec![],
            funcs: vec![],
            globals: vec![],
            memory_pages: None,
            data: vec![],
            table: vec![],
            start: None,
            entry: None,
            unsupported: vec![],
            source: SourceMap::default(),
            names: vec![],
        };
        let mut func_types: Vec<u32> = vec![];
        let mut validator = Validator::new();
        let mut code_start = 0u64;
        let mut debug_sections: Vec<(String, Vec<u8>)> = vec![];
        let mut exports_main = None;
        for payload in Parser::new(0).parse_all(bytes) {
            let payload = payload?;
            let valid = validator.payload(&payload)?;
            match &payload {
                Payload::TypeSection(r) => {
                    for ft in r.clone().into_iter_err_on_gc_types() {
                        let ft = ft?;
                        let mut key = ft.params().to_vec();
                        key.push(ValType::I32);
                        key.extend_from_slice(ft.results());
                        m.types.push(Sig {
                            params: ft.params().len() as u32,
                            results: ft.results().len() as u32,
                            key,
                        });
                    }
                }
                Payload::ImportSection(r) => {
                    for imp in r.clone().into_imports() {
                        let imp = imp?;
                        match imp.ty {
                            TypeRef::Func(ty) => {
                                func_types.push(ty);
                                m.imports.push(Import {
                                    module: imp.module.into(),
                                    name: imp.name.into(),
                                    ty,
                                });
                            }
                            _ => {
                                return Err(DecodeError::Unsupported(format!(
                                    "import {}.{} is not a function",
                                    imp.module, imp.name
                                )));
                            }
                        }
                    }
                }
                Payload::FunctionSection(r) => {
                    for ty in r.clone() {
                        func_types.push(ty?);
                    }
                }
                Payload::TableSection(r) => {
                    for t in r.clone() {
                        let t = t?;
                        if m.table.is_empty() {
                            m.table = vec![None; t.ty.initial as usize];
                        }
                    }
                }
                Payload::MemorySection(r) => {
                    for mem in r.clone() {
                        let mem = mem?;
                        if m.memory_pages.is_some() {
                            return Err(DecodeError::Unsupported("several memories".into()));
                        }
                        if mem.memory64 {
                            return Err(DecodeError::Unsupported("memory64".into()));
                        }
                        m.memory_pages = Some((mem.initial, mem.maximum));
                    }
                }
                Payload::GlobalSection(r) => {
                    for g in r.clone() {
                        let g = g?;
                        let v = const_expr(&g.init_expr, &m.globals)?;
                        let v = if g.ty.content_type == ValType::I32 {
                            v & 0xffff_ffff
                        } else {
                            v
                        };
                        m.globals.push(v);
                    }
                }
                Payload::ExportSection(r) => {
                    for e in r.clone() {
                        let e = e?;
                        if e.kind == ExternalKind::Func {
                            if e.name == "_start" {
                                m.entry = Some(e.index);
                            } else if e.name == "main" || e.name == "__main_argc_argv" {
                                exports_main = Some(e.index);
                            }
                        }
                    }
                }
                Payload::StartSection { func, .. } => m.start = Some(*func),
                Payload::ElementSection(r) => {
                    for el in r.clone() {
                        let el = el?;
                        let ElementKind::Active {
                            table_index,
                            offset_expr,
                        } = el.kind
                        else {
                            continue;
                        };
                        if table_index.unwrap_or(0) != 0 {
                            return Err(DecodeError::Unsupported("several tables".into()));
                        }
                        let base = const_expr(&offset_expr, &m.globals)? as usize;
                        let items: Vec<Option<u32>> = match el.items {
                            ElementItems::Functions(fs) => {
                                fs.into_iter().map(|f| f.map(Some)).collect::<Result<_, _>>()?
                            }
                            ElementItems::Expressions(_, es) => es
                                .into_iter()
                                .map(|e| {
                                    let v = const_expr(&e?, &m.globals)?;
                                    Ok((v != u64::MAX).then_some(v as u32))
                                })
                                .collect::<Result<_, DecodeError>>()?,
                        };
                        for (i, f) in items.into_iter().enumerate() {
                            if base + i >= m.table.len() {
                                return Err(DecodeError::Unsupported("element segment outside the table".into()));
                            }
                            m.table[base + i] = f;
                        }
                    }
                }
                Payload::DataSection(r) => {
                    for d in r.clone() {
                        let d = d?;
                        if let DataKind::Active { offset_expr, .. } = d.kind {
                            let base = const_expr(&offset_expr, &m.globals)? as u32;
                            m.data.push((base, d.data.to_vec()));
                        }
                    }
                }
                Payload::CodeSectionStart { unchecked_range, .. } => code_start = unchecked_range.start,
                Payload::CodeSectionEntry(body) => {
                    let ValidPayload::Func(to_validate, _) = valid else {
                        return Err(DecodeError::Unsupported("function body without validator".into()));
                    };
                    let index = (m.imports.len() + m.funcs.len()) as u32;
                    let ty = func_types[index as usize];
                    let f = self.function(
                        &mut m,
                        to_validate.into_validator(Default::default()),
                        body,
                        ty,
                        code_start,
                    )?;
                    m.funcs.push(f);
                }
                Payload::CustomSection(c) => {
                    if c.name().starts_with(".debug_") {
                        debug_sections.push((c.name().to_string(), c.data().to_vec()));
                    } else if c.name() == "name" {
                        read_names(&mut m, c.data(), c.data_offset());
                    }
                }
                _ => {}
            }
        }
        if m.entry.is_none() {
            m.entry = exports_main;
        }
        let dwarf = Dwarf::new(&debug_sections);
        let n = m.imports.len() as u32;
        let named: Vec<(String, &[u32])> = m
            .funcs
            .iter()
            .enumerate()
            .map(|(i, f)| (m.function_name(n + i as u32), f.offsets.as_slice()))
            .collect();
        let (source, locs) = SourceMap::build(&dwarf, &named);
        m.source = source;
        for (f, l) in m.funcs.iter_mut().zip(locs) {
            f.locs = l;
        }
        Ok(m)
    }

    fn function(
        &self,
        m: &mut Module,
        mut fv: wasmparser::FuncValidator<wasmparser::ValidatorResources>,
        body: &wasmparser::FunctionBody,
        ty: u32,
        code_start: u64,
    ) -> Result<Func, DecodeError> {
        let sig = m.types[ty as usize].clone();
        let mut locals = 0u32;
        let mut lr = body.get_locals_reader()?;
        for _ in 0..lr.get_count() {
            let off = lr.original_position();
            let (n, t) = lr.read()?;
            fv.define_locals(off, n, t)?;
            locals = locals.saturating_add(n);
        }
        let mut f = Func {
            ty,
            params: sig.params,
            results: sig.results,
            locals,
            code: vec![],
            offsets: vec![],
            locs: vec![],
            tables: vec![],
        };
        let mut ctl: Vec<Ctl> = vec![Ctl {
            kind: FrameKind::Block,
            start: 0,
            patches: vec![],
            if_pc: None,
        }];
        let mut ops = body.get_operators_reader()?;
        while !ops.eof() {
            let pos = ops.original_position();
            let op = ops.read()?;
            let off = (pos - code_start) as u32;
            let pc = f.code.len() as u32;
            // Branch targets need the validator's frames *before* the branch.
            let target = |fv: &wasmparser::FuncValidator<wasmparser::ValidatorResources>,
                          depth: u32,
                          ctl: &mut Vec<Ctl>,
                          patch: Patch|
             -> Target {
                let fr = fv.get_control_frame(depth as usize).expect("validated depth");
                let (params, results) = block_arity(&m.types, fr.block_type);
                let c = ctl.len() - 1 - depth as usize;
                if fr.kind == FrameKind::Loop {
                    Target {
                        pc: ctl[c].start,
                        height: fr.height as u32,
                        arity: params,
                    }
                } else {
                    ctl[c].patches.push(patch);
                    Target {
                        pc: u32::MAX,
                        height: fr.height as u32,
                        arity: results,
                    }
                }
            };
            let ins = match &op {
                Operator::Unreachable => Some(Instr::Unreachable),
                Operator::Nop => None,
                Operator::Block { .. } => {
                    ctl.push(Ctl {
                        kind: FrameKind::Block,
                        start: pc,
                        patches: vec![],
                        if_pc: None,
                    });
                    None
                }
                Operator::Loop { .. } => {
                    ctl.push(Ctl {
                        kind: FrameKind::Loop,
                        start: pc,
                        patches: vec![],
                        if_pc: None,
                    });
                    None
                }
                Operator::If { .. } => {
                    ctl.push(Ctl {
                        kind: FrameKind::If,
                        start: pc,
                        patches: vec![],
                        if_pc: Some(pc),
                    });
                    Some(Instr::If { else_pc: u32::MAX })
                }
                Operator::Else => {
                    let c = ctl.last_mut().expect("validated");
                    c.kind = FrameKind::Else;
                    c.patches.push(Patch::Instr(pc));
                    if let Some(ip) = c.if_pc.take() {
                        f.code[ip as usize] = Instr::If { else_pc: pc + 1 };
                    }
                    Some(Instr::Jump(u32::MAX))
                }
                Operator::End => {
                    let c = ctl.pop().expect("validated");
                    let end = pc;
                    for p in c.patches {
                        match p {
                            Patch::Instr(i) => match &mut f.code[i as usize] {
                                Instr::Br(t) | Instr::BrIf(t) => t.pc = end,
                                Instr::Jump(t) => *t = end,
                                _ => {}
                            },
                            Patch::Table(i) => f.tables[i as usize].pc = end,
                        }
                    }
                    if let Some(ip) = c.if_pc {
                        f.code[ip as usize] = Instr::If { else_pc: end };
                    }
                    ctl.is_empty().then_some(Instr::Return)
                }
                Operator::Br { relative_depth } => {
                    Some(Instr::Br(target(&fv, *relative_depth, &mut ctl, Patch::Instr(pc))))
                }
                Operator::BrIf { relative_depth } => {
                    Some(Instr::BrIf(target(&fv, *relative_depth, &mut ctl, Patch::Instr(pc))))
                }
                Operator::BrTable { targets } => {
                    let first = f.tables.len() as u32;
                    let depths: Vec<u32> = targets
                        .targets()
                        .chain(std::iter::once(Ok(targets.default())))
                        .collect::<Result<_, _>>()?;
                    for d in &depths {
                        let i = f.tables.len() as u32;
                        let t = target(&fv, *d, &mut ctl, Patch::Table(i));
                        f.tables.push(t);
                    }
                    Some(Instr::BrTable {
                        first,
                        len: depths.len() as u32,
                    })
                }
                Operator::Return => Some(Instr::Return),
                Operator::Call { function_index } => Some(Instr::Call(*function_index)),
                Operator::CallIndirect {
                    type_index,
                    table_index,
                } if *table_index == 0 => Some(Instr::CallIndirect { ty: *type_index }),
                Operator::Drop => Some(Instr::Drop),
                Operator::Select | Operator::TypedSelect { .. } => Some(Instr::Select),
                Operator::LocalGet { local_index } => Some(Instr::LocalGet(*local_index)),
                Operator::LocalSet { local_index } => Some(Instr::LocalSet(*local_index)),
                Operator::LocalTee { local_index } => Some(Instr::LocalTee(*local_index)),
                Operator::GlobalGet { global_index } => Some(Instr::GlobalGet(*global_index)),
                Operator::GlobalSet { global_index } => Some(Instr::GlobalSet(*global_index)),
                Operator::MemorySize { mem: 0 } => Some(Instr::MemorySize),
                Operator::MemoryGrow { mem: 0 } => Some(Instr::MemoryGrow),
                Operator::I32Const { value } => Some(Instr::Const(*value as u32 as u64)),
                Operator::I64Const { value } => Some(Instr::Const(*value as u64)),
                Operator::F32Const { value } => Some(Instr::Const(value.bits() as u64)),
                Operator::F64Const { value } => Some(Instr::Const(value.bits())),
                _ => map_simple(&op),
            };
            let ins = match ins {
                Some(i) => Some(i),
                None if matches!(
                    op,
                    Operator::Nop | Operator::Block { .. } | Operator::Loop { .. } | Operator::Else | Operator::End
                ) =>
                {
                    None
                }
                None => {
                    let name = format!("{op:?}");
                    let name = name.split([' ', '{', '(']).next().unwrap_or("?").to_string();
                    let i = match m.unsupported.iter().position(|n| *n == name) {
                        Some(i) => i,
                        None => {
                            m.unsupported.push(name);
                            m.unsupported.len() - 1
                        }
                    };
                    Some(Instr::Unsupported(i as u32))
                }
            };
            fv.op(pos, &op)?;
            if let Some(ins) = ins {
                f.code.push(ins);
                f.offsets.push(off);
            }
        }
        Ok(f)
    }
}

fn load(bytes: u8, signed: bool, wide: bool, float: bool, m: &wasmparser::MemArg) -> Option<Instr> {
    (m.target == wasmparser::MemArgTarget::Memory(0) && m.offset <= u32::MAX as u64).then_some(Instr::Load {
        kind: LoadKind {
            bytes,
            signed,
            wide,
            float,
        },
        offset: m.offset as u32,
    })
}

fn store(bytes: u8, float: bool, m: &wasmparser::MemArg) -> Option<Instr> {
    (m.target == wasmparser::MemArgTarget::Memory(0) && m.offset <= u32::MAX as u64).then_some(Instr::Store {
        bytes,
        float,
        offset: m.offset as u32,
    })
}

/// Instructions without immediates other than a memarg.
fn map_simple(op: &Operator) -> Option<Instr> {
    use Instr::*;
    use Operator as O;
    Some(match op {
        O::I32Load { memarg } => return load(4, false, false, false, memarg),
        O::I64Load { memarg } => return load(8, false, true, false, memarg),
        O::F32Load { memarg } => return load(4, false, false, true, memarg),
        O::F64Load { memarg } => return load(8, false, true, true, memarg),
        O::I32Load8S { memarg } => return load(1, true, false, false, memarg),
        O::I32Load8U { memarg } => return load(1, false, false, false, memarg),
        O::I32Load16S { memarg } => return load(2, true, false, false, memarg),
        O::I32Load16U { memarg } => return load(2, false, false, false, memarg),
        O::I64Load8S { memarg } => return load(1, true, true, false, memarg),
        O::I64Load8U { memarg } => return load(1, false, true, false, memarg),
        O::I64Load16S { memarg } => return load(2, true, true, false, memarg),
        O::I64Load16U { memarg } => return load(2, false, true, false, memarg),
        O::I64Load32S { memarg } => return load(4, true, true, false, memarg),
        O::I64Load32U { memarg } => return load(4, false, true, false, memarg),
        O::I32Store { memarg } => return store(4, false, memarg),
        O::I64Store { memarg } => return store(8, false, memarg),
        O::F32Store { memarg } => return store(4, true, memarg),
        O::F64Store { memarg } => return store(8, true, memarg),
        O::I32Store8 { memarg } | O::I64Store8 { memarg } => return store(1, false, memarg),
        O::I32Store16 { memarg } | O::I64Store16 { memarg } => return store(2, false, memarg),
        O::I64Store32 { memarg } => return store(4, false, memarg),
        O::I32Eqz => I32Un(IUn::Eqz),
        O::I32Eq => I32Cmp(ICmp::Eq),
        O::I32Ne => I32Cmp(ICmp::Ne),
        O::I32LtS => I32Cmp(ICmp::LtS),
        O::I32LtU => I32Cmp(ICmp::LtU),
        O::I32GtS => I32Cmp(ICmp::GtS),
        O::I32GtU => I32Cmp(ICmp::GtU),
        O::I32LeS => I32Cmp(ICmp::LeS),
        O::I32LeU => I32Cmp(ICmp::LeU),
        O::I32GeS => I32Cmp(ICmp::GeS),
        O::I32GeU => I32Cmp(ICmp::GeU),
        O::I64Eqz => I64Un(IUn::Eqz),
        O::I64Eq => I64Cmp(ICmp::Eq),
        O::I64Ne => I64Cmp(ICmp::Ne),
        O::I64LtS => I64Cmp(ICmp::LtS),
        O::I64LtU => I64Cmp(ICmp::LtU),
        O::I64GtS => I64Cmp(ICmp::GtS),
        O::I64GtU => I64Cmp(ICmp::GtU),
        O::I64LeS => I64Cmp(ICmp::LeS),
        O::I64LeU => I64Cmp(ICmp::LeU),
        O::I64GeS => I64Cmp(ICmp::GeS),
        O::I64GeU => I64Cmp(ICmp::GeU),
        O::F32Eq => F32Cmp(FCmp::Eq),
        O::F32Ne => F32Cmp(FCmp::Ne),
        O::F32Lt => F32Cmp(FCmp::Lt),
        O::F32Gt => F32Cmp(FCmp::Gt),
        O::F32Le => F32Cmp(FCmp::Le),
        O::F32Ge => F32Cmp(FCmp::Ge),
        O::F64Eq => F64Cmp(FCmp::Eq),
        O::F64Ne => F64Cmp(FCmp::Ne),
        O::F64Lt => F64Cmp(FCmp::Lt),
        O::F64Gt => F64Cmp(FCmp::Gt),
        O::F64Le => F64Cmp(FCmp::Le),
        O::F64Ge => F64Cmp(FCmp::Ge),
        O::I32Clz => I32Un(IUn::Clz),
        O::I32Ctz => I32Un(IUn::Ctz),
        O::I32Popcnt => I32Un(IUn::Popcnt),
        O::I32Add => I32Bin(IBin::Add),
        O::I32Sub => I32Bin(IBin::Sub),
        O::I32Mul => I32Bin(IBin::Mul),
        O::I32DivS => I32Bin(IBin::DivS),
        O::I32DivU => I32Bin(IBin::DivU),
        O::I32RemS => I32Bin(IBin::RemS),
        O::I32RemU => I32Bin(IBin::RemU),
        O::I32And => I32Bin(IBin::And),
        O::I32Or => I32Bin(IBin::Or),
        O::I32Xor => I32Bin(IBin::Xor),
        O::I32Shl => I32Bin(IBin::Shl),
        O::I32ShrS => I32Bin(IBin::ShrS),
        O::I32ShrU => I32Bin(IBin::ShrU),
        O::I32Rotl => I32Bin(IBin::Rotl),
        O::I32Rotr => I32Bin(IBin::Rotr),
        O::I64Clz => I64Un(IUn::Clz),
        O::I64Ctz => I64Un(IUn::Ctz),
        O::I64Popcnt => I64Un(IUn::Popcnt),
        O::I64Add => I64Bin(IBin::Add),
        O::I64Sub => I64Bin(IBin::Sub),
        O::I64Mul => I64Bin(IBin::Mul),
        O::I64DivS => I64Bin(IBin::DivS),
        O::I64DivU => I64Bin(IBin::DivU),
        O::I64RemS => I64Bin(IBin::RemS),
        O::I64RemU => I64Bin(IBin::RemU),
        O::I64And => I64Bin(IBin::And),
        O::I64Or => I64Bin(IBin::Or),
        O::I64Xor => I64Bin(IBin::Xor),
        O::I64Shl => I64Bin(IBin::Shl),
        O::I64ShrS => I64Bin(IBin::ShrS),
        O::I64ShrU => I64Bin(IBin::ShrU),
        O::I64Rotl => I64Bin(IBin::Rotl),
        O::I64Rotr => I64Bin(IBin::Rotr),
        O::F32Abs => F32Un(FUn::Abs),
        O::F32Neg => F32Un(FUn::Neg),
        O::F32Ceil => F32Un(FUn::Ceil),
        O::F32Floor => F32Un(FUn::Floor),
        O::F32Trunc => F32Un(FUn::Trunc),
        O::F32Nearest => F32Un(FUn::Nearest),
        O::F32Sqrt => F32Un(FUn::Sqrt),
        O::F32Add => F32Bin(FBin::Add),
        O::F32Sub => F32Bin(FBin::Sub),
        O::F32Mul => F32Bin(FBin::Mul),
        O::F32Div => F32Bin(FBin::Div),
        O::F32Min => F32Bin(FBin::Min),
        O::F32Max => F32Bin(FBin::Max),
        O::F32Copysign => F32Bin(FBin::Copysign),
        O::F64Abs => F64Un(FUn::Abs),
        O::F64Neg => F64Un(FUn::Neg),
        O::F64Ceil => F64Un(FUn::Ceil),
        O::F64Floor => F64Un(FUn::Floor),
        O::F64Trunc => F64Un(FUn::Trunc),
        O::F64Nearest => F64Un(FUn::Nearest),
        O::F64Sqrt => F64Un(FUn::Sqrt),
        O::F64Add => F64Bin(FBin::Add),
        O::F64Sub => F64Bin(FBin::Sub),
        O::F64Mul => F64Bin(FBin::Mul),
        O::F64Div => F64Bin(FBin::Div),
        O::F64Min => F64Bin(FBin::Min),
        O::F64Max => F64Bin(FBin::Max),
        O::F64Copysign => F64Bin(FBin::Copysign),
        O::I32WrapI64 => Cvt(self::Cvt::I32WrapI64),
        O::I64ExtendI32S => Cvt(self::Cvt::I64ExtendI32S),
        O::I64ExtendI32U => Cvt(self::Cvt::I64ExtendI32U),
        O::I32TruncF32S => trunc(false, false, true, false),
        O::I32TruncF32U => trunc(false, false, false, false),
        O::I32TruncF64S => trunc(true, false, true, false),
        O::I32TruncF64U => trunc(true, false, false, false),
        O::I64TruncF32S => trunc(false, true, true, false),
        O::I64TruncF32U => trunc(false, true, false, false),
        O::I64TruncF64S => trunc(true, true, true, false),
        O::I64TruncF64U => trunc(true, true, false, false),
        O::I32TruncSatF32S => trunc(false, false, true, true),
        O::I32TruncSatF32U => trunc(false, false, false, true),
        O::I32TruncSatF64S => trunc(true, false, true, true),
        O::I32TruncSatF64U => trunc(true, false, false, true),
        O::I64TruncSatF32S => trunc(false, true, true, true),
        O::I64TruncSatF32U => trunc(false, true, false, true),
        O::I64TruncSatF64S => trunc(true, true, true, true),
        O::I64TruncSatF64U => trunc(true, true, false, true),
        O::F32ConvertI32S => convert(false, false, true),
        O::F32ConvertI32U => convert(false, false, false),
        O::F32ConvertI64S => convert(true, false, true),
        O::F32ConvertI64U => convert(true, false, false),
        O::F64ConvertI32S => convert(false, true, true),
        O::F64ConvertI32U => convert(false, true, false),
        O::F64ConvertI64S => convert(true, true, true),
        O::F64ConvertI64U => convert(true, true, false),
        O::F32DemoteF64 => Cvt(self::Cvt::F32DemoteF64),
        O::F64PromoteF32 => Cvt(self::Cvt::F64PromoteF32),
        O::I32ReinterpretF32 | O::I64ReinterpretF64 => Cvt(self::Cvt::Reinterpret { to_float: false }),
        O::F32ReinterpretI32 | O::F64ReinterpretI64 => Cvt(self::Cvt::Reinterpret { to_float: true }),
        O::I32Extend8S => I32Un(IUn::Extend8S),
        O::I32Extend16S => I32Un(IUn::Extend16S),
        O::I64Extend8S => I64Un(IUn::Extend8S),
        O::I64Extend16S => I64Un(IUn::Extend16S),
        O::I64Extend32S => I64Un(IUn::Extend32S),
        _ => return None,
    })
}

fn trunc(f64: bool, i64: bool, signed: bool, sat: bool) -> Instr {
    Instr::Cvt(Cvt::Trunc { f64, i64, signed, sat })
}

fn convert(i64: bool, f64: bool, signed: bool) -> Instr {
    Instr::Cvt(Cvt::Convert { i64, f64, signed })
}

/// Function names from the `name` custom section (best effort: a malformed
/// section leaves the names empty).
fn read_names(m: &mut Module, data: &[u8], offset: u64) {
    let reader = wasmparser::BinaryReader::new(data, offset);
    let Ok(names) = wasmparser::NameSectionReader::new(reader).collect::<Result<Vec<_>, _>>() else {
        return;
    };
    for n in names {
        if let wasmparser::Name::Function(map) = n {
            for naming in map.into_iter().flatten() {
                let i = naming.index as usize;
                if m.names.len() <= i {
                    m.names.resize(i + 1, String::new());
                }
                m.names[i] = naming.name.to_string();
            }
        }
    }
}
