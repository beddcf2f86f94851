//! What the DWARF of a binary says at the address a debugger paused at, for
//! debug-information validation (issue 17, parts 3 and 4): a variable's
//! location description there, and the line table's row there.
//!
//! - The location: the `DW_TAG_variable` / `DW_TAG_formal_parameter` of that
//!   name in the innermost scope whose ranges cover the address (the name
//!   read through `DW_AT_abstract_origin` for inlined copies), its
//!   `DW_AT_location` an expression (`DW_FORM_exprloc`) or a location list
//!   (DWARF 4 `.debug_loc`, DWARF 5 `.debug_loclists`; DWARF 5 sections 2.5
//!   and 2.6), read as an operator pattern with every operand abstracted to
//!   `K` (`DW_OP_fbreg K`, `DW_OP_addr K; DW_OP_stack_value`).
//! - The row: the rows at the greatest address not above the pause address
//!   in its sequence (DWARF 5 section 6.2), with their `is_stmt` flag,
//!   column and view number. Views follow GCC's numbering (Oliva, "Location
//!   views", the `DW_AT_GNU_locviews` proposal for DWARF 6): a row at the
//!   address of the row before it gets the next view, a row at a new address
//!   view 0.
//! - The clause of a `for` header a (line, column) lies in (tree-sitter-c's
//!   `condition` and `update` fields), and the lines of a `for` body.
//!
//! The pause address is a run-time address: for a position-independent
//! executable it is the file address plus the load bias, which
//! `load_bias` recovers from the line the debugger reported.

use gimli::{ColumnType, Reader, ReaderOffset};
use object::{Object, ObjectKind};
use std::path::Path;
use tree_sitter::{Node, Parser, Point};

/// Where GDB and LLDB load a position-independent executable on x86-64
/// Linux with address-space randomization off (both turn it off by
/// default): the bias preferred when several are consistent with a line.
pub const DEBUGGER_PIE_BASE: u64 = 0x5555_5555_4000;

/// One row of the line table with its view number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewRow {
    /// File address of the row.
    pub address: u64,
    /// Last path component of the row's file (`p.c`).
    pub file: String,
    /// 1-based line (0: no line).
    pub line: u32,
    /// 1-based column (0: no column).
    pub column: u32,
    /// The `is_stmt` flag.
    pub is_stmt: bool,
    /// The view number: 0 for the first row at an address, then 1, 2, ...
    pub view: u32,
}

/// The line table's row in effect at the pause address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PauseRow {
    /// The row (of the reported line when one of the rows at that address
    /// has it, an `is_stmt` one preferred; else the last row there).
    pub row: ViewRow,
    /// Whether the pause address is the row's own address (not inside it).
    pub at_row_start: bool,
}

/// What the DWARF says at one pause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PauseDwarf {
    /// The pause address with the load bias removed.
    pub file_address: u64,
    /// The variable's location pattern there (see the module
    /// documentation): `<no location>` when the variable has a location list
    /// and no entry covers the address, or no `DW_AT_location` at all;
    /// `<no variable>` when no DIE of that name is in scope.
    pub location_pattern: String,
    /// The row in effect there (`None`: no sequence covers the address).
    pub row: Option<PauseRow>,
    /// The load bias removed (0 for an executable at its link address).
    pub bias: u64,
    /// The location list's views at the address (`None`: an expression, or
    /// a list without `DW_AT_GNU_locviews`).
    pub location_views: Option<LocationViews>,
}

/// Which clause of a `for` header a source position lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForClause {
    /// The condition (`i < n`).
    Condition,
    /// The increment (`i++`).
    Increment,
}

/// Reads the DWARF of `binary` at run-time address `pc`, where a debugger
/// reported a pause at `line` of the file named `source_name` (matched on
/// its last path component), for variable `variable`.
///
/// Errors: the binary cannot be read or has no DWARF, its DWARF is
/// malformed, or no load bias maps `pc` to a row of `line`.
pub fn at_pause(binary: &Path, pc: u64, line: u32, source_name: &str, variable: &str) -> Result<PauseDwarf, String> {
    super::dwarf_file::with_dwarf(binary, ".debug_info", |file, dwarf| {
        let bad = |e: gimli::Error| format!("malformed DWARF in {}: {e}", binary.display());
        let sequences = sequences(dwarf).map_err(bad)?;
        let wanted = last_component(source_name);
        let bias = if file.kind() == ObjectKind::Executable {
            0
        } else {
            load_bias(&sequences, pc, line, wanted)
                .ok_or_else(|| format!("no load bias maps {pc:#x} to a row of line {line} of {wanted}"))?
        };
        let address = pc.wrapping_sub(bias);
        let row = row_at(&sequences, address, line, wanted);
        let section = |name: &str| super::dwarf_file::section(file, name);
        let (loclists, loc) = (section(".debug_loclists")?, section(".debug_loc")?);
        let views = ViewSections {
            loclists: &loclists,
            loc: &loc,
        };
        let (location_pattern, location_views) = location_pattern(dwarf, address, variable, &views).map_err(bad)?;
        Ok(PauseDwarf {
            file_address: address,
            location_pattern,
            row,
            bias,
            location_views,
        })
    })
}

/// The data or function symbol of `binary`'s symbol table (`.symtab`)
/// that file address `address` lies in, with the offset into it:
/// `("g_9", 4)` for `&g_9[1]` of an `int` array. A symbol without a size
/// holds only its own address.
///
/// Errors: the binary cannot be read or is not an object file.
pub fn symbol_at(binary: &Path, address: u64) -> Result<Option<(String, u64)>, String> {
    use object::ObjectSymbol;
    let data = std::fs::read(binary).map_err(|e| format!("cannot read {}: {e}", binary.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{} is not an object file: {e}", binary.display()))?;
    for sym in file.symbols() {
        if !matches!(sym.kind(), object::SymbolKind::Data | object::SymbolKind::Text) || sym.is_undefined() {
            continue;
        }
        let (start, size) = (sym.address(), sym.size());
        let inside = if size == 0 {
            address == start
        } else {
            start <= address && address < start + size
        };
        if inside && let Ok(name) = sym.name() {
            return Ok(Some((name.to_string(), address - start)));
        }
    }
    Ok(None)
}

/// A line sequence: its rows and the address just past its end.
struct Sequence {
    rows: Vec<ViewRow>,
    end: u64,
}

/// The load bias of a position-independent executable: a multiple of the
/// page size (4 KiB) that maps `pc` into a row of `line` of `file`;
/// [`DEBUGGER_PIE_BASE`] when it is one of several, else the only one.
fn load_bias(sequences: &[Sequence], pc: u64, line: u32, file: &str) -> Option<u64> {
    const PAGE: u64 = 0x1000;
    let mut found: Vec<u64> = Vec::new();
    for s in sequences {
        for (i, r) in s.rows.iter().enumerate() {
            if r.line != line || r.file != file {
                continue;
            }
            let end = s.rows[i + 1..]
                .iter()
                .find(|n| n.address > r.address)
                .map_or(s.end, |n| n.address);
            // pc - bias in [r.address, end): bias in (pc - end, pc - r.address].
            let Some(high) = pc.checked_sub(r.address) else {
                continue;
            };
            let bias = high / PAGE * PAGE;
            if pc - bias < end && !found.contains(&bias) {
                found.push(bias);
            }
        }
    }
    if found.contains(&DEBUGGER_PIE_BASE) {
        return Some(DEBUGGER_PIE_BASE);
    }
    (found.len() == 1).then(|| found[0])
}

/// The row in effect at file address `address` (see [`PauseRow`]).
fn row_at(sequences: &[Sequence], address: u64, line: u32, file: &str) -> Option<PauseRow> {
    let s = sequences
        .iter()
        .find(|s| s.rows.first().is_some_and(|r| r.address <= address) && address < s.end)?;
    let at = s.rows.iter().rev().find(|r| r.address <= address)?.address;
    let group: Vec<&ViewRow> = s.rows.iter().filter(|r| r.address == at).collect();
    let of_line = |r: &&&ViewRow| r.line == line && r.file == file;
    let row = group
        .iter()
        .filter(of_line)
        .find(|r| r.is_stmt)
        .or_else(|| group.iter().find(of_line))
        .or(group.last())?;
    Some(PauseRow {
        row: (*row).clone(),
        at_row_start: at == address,
    })
}

/// Every line sequence of every unit, rows with their views.
///
/// Errors: malformed DWARF.
fn sequences<R: Reader>(dwarf: &gimli::Dwarf<R>) -> gimli::Result<Vec<Sequence>> {
    let mut out = Vec::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let Some(program) = unit.line_program.clone() else {
            continue;
        };
        let mut table = program.rows();
        let mut rows: Vec<ViewRow> = Vec::new();
        let mut names: Vec<Option<String>> = Vec::new();
        while let Some((header, row)) = table.next_row()? {
            if row.end_sequence() {
                out.push(Sequence {
                    rows: std::mem::take(&mut rows),
                    end: row.address(),
                });
                continue;
            }
            let index = row.file_index() as usize;
            if names.len() <= index {
                names.resize(index + 1, None);
            }
            if names[index].is_none() {
                let name = match header.file(row.file_index()) {
                    Some(entry) => {
                        let s = dwarf.attr_string(&unit, entry.path_name())?;
                        last_component(&s.to_string_lossy()?).to_string()
                    }
                    None => String::new(),
                };
                names[index] = Some(name);
            }
            let file = names[index].clone().unwrap_or_default();
            let view = match rows.last() {
                Some(prev) if prev.address == row.address() => prev.view + 1,
                _ => 0,
            };
            rows.push(ViewRow {
                address: row.address(),
                file,
                line: row.line().map_or(0, |l| l.get() as u32),
                column: match row.column() {
                    ColumnType::LeftEdge => 0,
                    ColumnType::Column(c) => c.get() as u32,
                },
                is_stmt: row.is_stmt(),
                view,
            });
        }
    }
    Ok(out)
}

/// GCC's location views of the variable's location list at the pause
/// address (`DW_AT_GNU_locviews`: one pair of ULEB128 views, begin and
/// end, per bounded entry of the list, stored before it in the same
/// section).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocationViews {
    /// The begin view of the entry that starts at the address.
    pub begins_here: Option<u32>,
    /// The end view of an entry that ends at the address.
    pub ends_here: Option<u32>,
}

/// The raw bytes of `.debug_loclists` (DWARF 5) and `.debug_loc` (DWARF
/// 4), where GCC's view pairs are.
struct ViewSections<'a> {
    loclists: &'a [u8],
    loc: &'a [u8],
}

/// The location pattern of `variable` at file address `address`, and the
/// location views there when the list has them.
fn location_pattern<R: Reader>(
    dwarf: &gimli::Dwarf<R>,
    address: u64,
    variable: &str,
    views: &ViewSections<'_>,
) -> gimli::Result<(String, Option<LocationViews>)> {
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let u = unit.unit_ref(dwarf);
        let mut covers_unit = false;
        let mut ranges = u.unit_ranges()?;
        while let Some(r) = ranges.next()? {
            covers_unit |= r.begin <= address && address < r.end;
        }
        if !covers_unit {
            continue;
        }
        // (depth, covers) of the scopes on the path to the current entry.
        let mut scopes: Vec<(isize, bool)> = Vec::new();
        let mut best: Option<(isize, gimli::UnitOffset<R::Offset>)> = None;
        let mut entries = u.entries();
        while let Some(e) = entries.next_dfs()? {
            let depth = e.depth();
            while scopes.last().is_some_and(|(d, _)| *d >= depth) {
                scopes.pop();
            }
            let tag = e.tag();
            if matches!(
                tag,
                gimli::DW_TAG_subprogram | gimli::DW_TAG_lexical_block | gimli::DW_TAG_inlined_subroutine
            ) {
                let mut covers = false;
                let mut has_ranges = false;
                let mut rs = u.die_ranges(e)?;
                while let Some(r) = rs.next()? {
                    has_ranges = true;
                    covers |= r.begin <= address && address < r.end;
                }
                // A lexical block without ranges (gcc emits some) is its
                // parent's scope.
                let covers = covers || (!has_ranges && tag == gimli::DW_TAG_lexical_block);
                scopes.push((depth, covers));
                continue;
            }
            if !matches!(tag, gimli::DW_TAG_variable | gimli::DW_TAG_formal_parameter) {
                continue;
            }
            if !scopes.iter().all(|(_, c)| *c) || e.attr_value(gimli::DW_AT_location).is_none() {
                continue;
            }
            if name_of(&u, e)?.as_deref() != Some(variable) {
                continue;
            }
            if best.is_none_or(|(d, _)| depth > d) {
                best = Some((depth, e.offset()));
            }
        }
        let Some((_, offset)) = best else { continue };
        let e = u.entry(offset)?;
        let Some(attr) = e.attr_value(gimli::DW_AT_location) else {
            return Ok(("<no location>".into(), None));
        };
        if let gimli::AttributeValue::Exprloc(expr) = attr {
            return Ok((expression_pattern(&expr, unit.encoding())?, None));
        }
        // The view pairs, one per bounded entry, when GCC gave them.
        let pairs: Option<Vec<(u32, u32)>> = match e.attr_value(gimli::DW_AT_GNU_locviews) {
            Some(gimli::AttributeValue::SecOffset(o)) => {
                let section = if unit.encoding().version >= 5 {
                    views.loclists
                } else {
                    views.loc
                };
                Some(view_pairs(section, o.into_u64() as usize))
            }
            _ => None,
        };
        let Some(mut list) = u.attr_locations(attr)? else {
            return Ok(("<unknown>".into(), None));
        };
        let (mut pattern, mut found) = (None, LocationViews::default());
        let mut bounded = 0usize;
        while let Some(raw) = list.next_raw()? {
            let index = match raw {
                gimli::RawLocListEntry::BaseAddress { .. } | gimli::RawLocListEntry::BaseAddressx { .. } => None,
                _ => {
                    bounded += 1;
                    Some(bounded - 1)
                }
            };
            let Some(entry) = list.convert_raw(raw)? else { continue };
            let view = |pick: fn(&(u32, u32)) -> u32| {
                let pairs = pairs.as_ref()?;
                pairs.get(index?).map(pick)
            };
            if entry.range.begin <= address && address < entry.range.end && pattern.is_none() {
                pattern = Some(expression_pattern(&entry.data, unit.encoding())?);
                if entry.range.begin == address {
                    found.begins_here = view(|p| p.0);
                }
            }
            if entry.range.end == address && entry.range.begin < address {
                found.ends_here = view(|p| p.1);
            }
        }
        let views = pairs.map(|_| found);
        return Ok((pattern.unwrap_or_else(|| "<no location>".into()), views));
    }
    Ok(("<no variable>".into(), None))
}

/// The view pairs from `offset` of `section` up to the end of the section
/// or the first malformed number (the caller indexes only the entries its
/// list has).
fn view_pairs(section: &[u8], offset: usize) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut at = offset;
    let uleb = |at: &mut usize| -> Option<u32> {
        let (mut value, mut shift) = (0u64, 0u32);
        loop {
            let b = *section.get(*at)?;
            *at += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return u32::try_from(value).ok();
            }
            shift += 7;
            if shift > 35 {
                return None;
            }
        }
    };
    // A list has at most as many pairs as bytes remain; 4096 pairs bound it.
    while out.len() < 4096 {
        let Some(begin) = uleb(&mut at) else { break };
        let Some(end) = uleb(&mut at) else { break };
        out.push((begin, end));
    }
    out
}

/// The name of a DIE, read through `DW_AT_abstract_origin` (in the same
/// unit) for inlined and out-of-line copies.
fn name_of<R: Reader>(
    u: &gimli::UnitRef<'_, R>,
    e: &gimli::DebuggingInformationEntry<R>,
) -> gimli::Result<Option<String>> {
    if let Some(n) = e.attr_value(gimli::DW_AT_name) {
        return Ok(Some(u.attr_string(n)?.to_string_lossy()?.into_owned()));
    }
    if let Some(gimli::AttributeValue::UnitRef(o)) = e.attr_value(gimli::DW_AT_abstract_origin) {
        let origin = u.entry(o)?;
        if let Some(n) = origin.attr_value(gimli::DW_AT_name) {
            return Ok(Some(u.attr_string(n)?.to_string_lossy()?.into_owned()));
        }
    }
    Ok(None)
}

/// The operators of a DWARF expression joined by `; `, each operand
/// abstracted to `K` (`DW_OP_breg7 K; DW_OP_deref`). `DW_OP_addrx` (an
/// index into `.debug_addr`, DWARF 5 section 2.5.1.1) reads as
/// `DW_OP_addr`: the same address, encoded another way.
///
/// Errors: an operation gimli cannot parse.
pub fn expression_pattern<R: Reader>(expr: &gimli::Expression<R>, encoding: gimli::Encoding) -> gimli::Result<String> {
    let mut ops = Vec::new();
    let mut r = expr.0.clone();
    while !r.is_empty() {
        let code = r.clone().read_u8()?;
        let before = r.len().into_u64();
        gimli::Operation::parse(&mut r, encoding)?;
        // DWARF 5's indexed address (clang) is an address as gcc's is.
        let code = if code == gimli::DW_OP_addrx.0 || code == gimli::DW_OP_GNU_addr_index.0 {
            gimli::DW_OP_addr.0
        } else {
            code
        };
        let name = gimli::DwOp(code)
            .static_string()
            .map_or_else(|| format!("DW_OP_{code:#x}"), str::to_string);
        ops.push(if before - r.len().into_u64() > 1 {
            format!("{name} K")
        } else {
            name
        });
    }
    Ok(if ops.is_empty() {
        "<empty>".into()
    } else {
        ops.join("; ")
    })
}

/// The clause of a `for` header that 1-based (`line`, `column`) of `source`
/// lies in, if any (column 0, no column, lies in none).
pub fn for_clause(source: &str, line: u32, column: u32) -> Option<ForClause> {
    if line == 0 || column == 0 {
        return None;
    }
    let tree = parse(source)?;
    let at = Point::new(line as usize - 1, column as usize - 1);
    let mut found = None;
    visit_for(tree.root_node(), &mut |n| {
        for (field, clause) in [("condition", ForClause::Condition), ("update", ForClause::Increment)] {
            if let Some(c) = n.child_by_field_name(field)
                && c.start_position() <= at
                && at < c.end_position()
            {
                found = Some(clause);
            }
        }
    });
    found
}

/// The 1-based first and last lines of the body of every `for` statement
/// whose header starts on `line`.
pub fn for_body_lines(source: &str, line: u32) -> Vec<(u32, u32)> {
    let Some(tree) = parse(source) else { return Vec::new() };
    let mut out = Vec::new();
    visit_for(tree.root_node(), &mut |n| {
        if n.start_position().row + 1 == line as usize
            && let Some(b) = n.child_by_field_name("body")
        {
            out.push((b.start_position().row as u32 + 1, b.end_position().row as u32 + 1));
        }
    });
    out
}

fn parse(source: &str) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_c::LANGUAGE.into()).ok()?;
    parser.parse(source, None)
}

fn visit_for(n: Node<'_>, f: &mut dyn FnMut(Node<'_>)) {
    if n.kind() == "for_statement" {
        f(n);
    }
    let mut c = n.walk();
    for child in n.children(&mut c) {
        visit_for(child, f);
    }
}

/// Opens `binary`'s DWARF sections and hands them to `f`.
fn last_component(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn pattern(bytes: &[u8]) -> String {
        let enc = gimli::Encoding {
            format: gimli::Format::Dwarf32,
            version: 5,
            address_size: 8,
        };
        let expr = gimli::Expression(gimli::EndianSlice::new(bytes, gimli::LittleEndian));
        expression_pattern(&expr, enc).unwrap()
    }

    #[test]
    fn operands_are_abstracted_and_register_numbers_kept() {
        // DW_OP_addr 0x4010; DW_OP_stack_value
        let mut addr = vec![0x03];
        addr.extend_from_slice(&0x4010u64.to_le_bytes());
        addr.push(0x9f);
        assert_eq!(pattern(&addr), "DW_OP_addr K; DW_OP_stack_value");
        assert_eq!(pattern(&[0x91, 0x6c]), "DW_OP_fbreg K");
        assert_eq!(pattern(&[0x56]), "DW_OP_reg6");
        assert_eq!(pattern(&[0x30, 0x9f]), "DW_OP_lit0; DW_OP_stack_value");
        assert_eq!(pattern(&[0x77, 0x08, 0x06]), "DW_OP_breg7 K; DW_OP_deref");
        assert_eq!(pattern(&[]), "<empty>");
    }

    #[test]
    fn view_pairs_are_uleb128_pairs_from_the_offset() {
        // Two pairs at offset 1: (2, 3) and (300, 0); 300 = 0xac 0x02.
        let section = [0xff, 0x02, 0x03, 0xac, 0x02, 0x00];
        assert_eq!(view_pairs(&section, 1), vec![(2, 3), (300, 0)]);
        // A truncated number ends the pairs.
        assert_eq!(view_pairs(&[0x01, 0x80], 0), Vec::<(u32, u32)>::new());
        assert!(view_pairs(&section, 99).is_empty());
    }

    const LOOP: &str = "int g;\n__attribute__((noinline)) int f(int x) { return x * g + 1; }\nint main(int argc, char **argv) {\n  int s = 0;\n  for (int i = 0; i < argc * 10; i++) {\n    s += f(i);\n  }\n  return s;\n}\n";

    #[test]
    fn for_clauses_and_bodies_from_the_header() {
        // "  for (int i = 0; i < argc * 10; i++) {": `i <` at column 19,
        // `i++` at 34.
        assert_eq!(for_clause(LOOP, 5, 19), Some(ForClause::Condition));
        assert_eq!(for_clause(LOOP, 5, 34), Some(ForClause::Increment));
        assert_eq!(for_clause(LOOP, 5, 8), None);
        assert_eq!(for_clause(LOOP, 5, 0), None);
        assert_eq!(for_clause(LOOP, 6, 5), None);
        assert_eq!(for_body_lines(LOOP, 5), vec![(5, 7)]);
        assert!(for_body_lines(LOOP, 6).is_empty());
    }

    fn row(address: u64, line: u32, is_stmt: bool, view: u32) -> ViewRow {
        ViewRow {
            address,
            file: "p.c".into(),
            line,
            column: 3,
            is_stmt,
            view,
        }
    }

    #[test]
    fn the_bias_maps_the_pause_into_a_row_of_its_line() {
        let seqs = vec![Sequence {
            rows: vec![
                row(0x1130, 3, true, 0),
                row(0x1138, 4, true, 0),
                row(0x1138, 5, false, 1),
            ],
            end: 0x1150,
        }];
        assert_eq!(load_bias(&seqs, 0x555555555134, 3, "p.c"), Some(DEBUGGER_PIE_BASE));
        assert_eq!(load_bias(&seqs, 0x7f0000001140, 4, "p.c"), Some(0x7f0000000000));
        // 0x...1134 lies in line 3's row, not line 4's.
        assert_eq!(load_bias(&seqs, 0x7f0000001134, 4, "p.c"), None);
        let r = row_at(&seqs, 0x1138, 5, "p.c").unwrap();
        assert_eq!(
            (r.row.line, r.row.view, r.row.is_stmt, r.at_row_start),
            (5, 1, false, true)
        );
        let r = row_at(&seqs, 0x1140, 4, "p.c").unwrap();
        assert_eq!((r.row.line, r.row.view, r.at_row_start), (4, 0, false));
        assert!(row_at(&seqs, 0x1150, 4, "p.c").is_none());
    }

    #[test]
    fn symbols_with_offsets_and_addresses_outside_every_symbol() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("s.c"),
            "int g_9[4] = {1};\nint main(void) { return g_9[0]; }\n",
        )
        .unwrap();
        let bin = dir.path().join("s");
        let st = Command::new("gcc")
            .current_dir(dir.path())
            .args(["-O0", "-g", "-o"])
            .arg(&bin)
            .arg("s.c")
            .status()
            .unwrap();
        assert!(st.success());
        let out = Command::new("nm").arg(&bin).output().unwrap();
        let nm = String::from_utf8_lossy(&out.stdout);
        let g = nm
            .lines()
            .find(|l| l.ends_with(" g_9"))
            .and_then(|l| u64::from_str_radix(l.split_whitespace().next()?, 16).ok())
            .unwrap();
        assert_eq!(symbol_at(&bin, g).unwrap(), Some(("g_9".into(), 0)));
        assert_eq!(symbol_at(&bin, g + 12).unwrap(), Some(("g_9".into(), 12)));
        assert_ne!(symbol_at(&bin, g + 16).unwrap().map(|s| s.0), Some("g_9".into()));
        assert_eq!(symbol_at(&bin, 0x5555_5555_8000 + g).unwrap(), None);
        assert!(symbol_at(&dir.path().join("s.c"), g).is_err());
    }

    /// `llvm-dwarfdump --debug-line` rows: (address, line, column, is_stmt).
    fn dwarfdump_rows(bin: &Path) -> Vec<(u64, u32, u32, bool)> {
        let out = Command::new("llvm-dwarfdump-19")
            .arg("--debug-line")
            .arg(bin)
            .output()
            .expect("llvm-dwarfdump-19");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let t: Vec<&str> = l.split_whitespace().collect();
                if t.len() < 4 || !t[0].starts_with("0x") || t.contains(&"end_sequence") {
                    return None;
                }
                Some((
                    u64::from_str_radix(&t[0][2..], 16).ok()?,
                    t[1].parse().ok()?,
                    t[2].parse().ok()?,
                    t.contains(&"is_stmt"),
                ))
            })
            .collect()
    }

    #[test]
    fn real_binaries_of_gcc_and_clang_at_o0_and_o2() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.c"), LOOP).unwrap();
        for (cc, level, pie) in [
            ("gcc", "-O0", true),
            ("clang-19", "-O0", true),
            ("gcc", "-O2", false),
            ("clang-19", "-O2", true),
        ] {
            let bin = dir.path().join(format!("p-{cc}{level}{pie}"));
            let st = Command::new(cc)
                .current_dir(dir.path())
                .args([
                    level,
                    "-g",
                    if pie { "-fPIE" } else { "-fno-PIE" },
                    if pie { "-pie" } else { "-no-pie" },
                    "-o",
                ])
                .arg(&bin)
                .arg("p.c")
                .status()
                .unwrap();
            assert!(st.success(), "{cc} {level}");
            let rows = dwarfdump_rows(&bin);
            let bias = if pie { DEBUGGER_PIE_BASE } else { 0 };
            // Every is_stmt row of line 6 (the loop body), paused at.
            let body: Vec<_> = rows.iter().filter(|r| r.1 == 6 && r.3).collect();
            assert!(!body.is_empty(), "{cc} {level}: {rows:?}");
            for r in body {
                let d = at_pause(&bin, r.0 + bias, 6, "/x/p.c", "s").unwrap();
                assert_eq!(d.file_address, r.0, "{cc} {level}");
                let pr = d.row.unwrap();
                assert_eq!(
                    (pr.row.line, pr.row.column, pr.row.is_stmt),
                    (6, r.2, true),
                    "{cc} {level}"
                );
                assert!(pr.at_row_start);
                if level == "-O0" {
                    assert_eq!(d.location_pattern, "DW_OP_fbreg K", "{cc}");
                    assert_eq!(
                        at_pause(&bin, r.0 + bias, 6, "p.c", "argc").unwrap().location_pattern,
                        "DW_OP_fbreg K"
                    );
                }
                assert_eq!(
                    at_pause(&bin, r.0 + bias, 6, "p.c", "g").unwrap().location_pattern,
                    "DW_OP_addr K",
                    "{cc} {level}"
                );
                assert_eq!(
                    at_pause(&bin, r.0 + bias, 6, "p.c", "nope").unwrap().location_pattern,
                    "<no variable>"
                );
                assert_eq!(d.bias, bias);
            }
            // An address outside every row: no bias for a PIE, no row for
            // an executable at its link address.
            match at_pause(&bin, 0x10, 5, "p.c", "s") {
                Err(e) => assert!(pie && e.contains("no load bias"), "{cc} {level}: {e}"),
                Ok(d) => assert!(!pie && d.row.is_none(), "{cc} {level}: {d:?}"),
            }
        }
    }
}
