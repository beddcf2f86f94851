//! Source locations of instructions from the module's DWARF (the
//! `.debug_*` custom sections clang emits for wasm32; addresses are offsets
//! from the start of the code section's contents, per the WebAssembly DWARF
//! convention), resolved with addr2line over gimli.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A source position: `file:line` in `function`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SourceLoc {
    /// The file as DWARF names it (joined with the compilation directory
    /// when relative, as addr2line does).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// The enclosing function's name from DWARF (its linkage name when it
    /// has one: wasi-libc renames `main(argc, argv)` to `__main_argc_argv`),
    /// or the wasm name section's name without DWARF subprogram info.
    pub function: String,
}

/// Whether a DWARF file name denotes the caller's `user` file: equal, or one
/// ends with `/` + the other (a caller may give `prog.c` for
/// `/tmp/build/prog.c`, or an absolute path for a relative DWARF name).
pub fn file_matches(dwarf_file: &str, user: &str) -> bool {
    dwarf_file == user
        || dwarf_file.strip_suffix(user).is_some_and(|p| p.ends_with('/'))
        || user.strip_suffix(dwarf_file).is_some_and(|p| p.ends_with('/'))
}

/// Offset-to-location table of a module.
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceMap {
    /// Distinct locations.
    pub locs: Vec<SourceLoc>,
    /// (instruction offset, location index), sorted by offset.
    by_offset: Vec<(u32, u32)>,
}

type R<'a> = gimli::EndianSlice<'a, gimli::LittleEndian>;

/// The DWARF of a module, while decoding.
pub(crate) struct Dwarf<'a> {
    ctx: Option<addr2line::Context<R<'a>>>,
}

impl<'a> Dwarf<'a> {
    pub fn new(sections: &'a [(String, Vec<u8>)]) -> Dwarf<'a> {
        let load = |id: gimli::SectionId| -> Result<R<'a>, gimli::Error> {
            let data = sections
                .iter()
                .find(|(n, _)| n == id.name())
                .map(|(_, d)| d.as_slice())
                .unwrap_or(&[]);
            Ok(gimli::EndianSlice::new(data, gimli::LittleEndian))
        };
        let ctx = if sections.iter().any(|(n, _)| n == ".debug_line") {
            gimli::Dwarf::load(load)
                .ok()
                .and_then(|d| addr2line::Context::from_dwarf(d).ok())
        } else {
            None
        };
        Dwarf { ctx }
    }

    /// Name of the DWARF subprogram containing `offset`.
    pub fn function(&self, offset: u32) -> Option<String> {
        let ctx = self.ctx.as_ref()?;
        let mut frames = ctx.find_frames(offset as u64).skip_all_loads().ok()?;
        let mut name = None;
        // The outermost frame is the real function (inlined frames come first).
        while let Ok(Some(f)) = frames.next() {
            if let Some(n) = f.function.as_ref().and_then(|n| n.raw_name().ok()) {
                name = Some(n.into_owned());
            }
        }
        name
    }

    /// `(file, line)` rows covering `[lo, hi)`, as (start, end, file, line).
    pub fn rows(&self, lo: u32, hi: u32) -> Vec<(u32, u32, String, u32)> {
        let Some(ctx) = self.ctx.as_ref() else { return vec![] };
        let Ok(iter) = ctx.find_location_range(lo as u64, hi as u64) else {
            return vec![];
        };
        iter.filter_map(|(start, len, loc)| {
            let (file, line) = (loc.file?, loc.line?);
            (line > 0).then(|| (start as u32, (start + len) as u32, file.to_string(), line))
        })
        .collect()
    }
}

impl SourceMap {
    /// Builds the table for functions given as (DWARF-less fallback name,
    /// sorted instruction offsets); returns the per-instruction location
    /// indices of each function (`u32::MAX` where DWARF has no line).
    pub fn build(dwarf: &Dwarf<'_>, funcs: &[(String, &[u32])]) -> (SourceMap, Vec<Vec<u32>>) {
        let mut map = SourceMap::default();
        let mut ids: HashMap<SourceLoc, u32> = HashMap::new();
        let mut out = Vec::with_capacity(funcs.len());
        for (fallback, offsets) in funcs {
            let (Some(&first), Some(&last)) = (offsets.first(), offsets.last()) else {
                out.push(vec![]);
                continue;
            };
            let rows = dwarf.rows(first, last + 1);
            if rows.is_empty() {
                out.push(vec![u32::MAX; offsets.len()]);
                continue;
            }
            let function = dwarf.function(first).unwrap_or_else(|| fallback.clone());
            let mut locs = Vec::with_capacity(offsets.len());
            let mut r = 0;
            for &o in offsets.iter() {
                while r < rows.len() && rows[r].1 <= o {
                    r += 1;
                }
                let id = match rows.get(r) {
                    Some((start, _, file, line)) if *start <= o => {
                        let loc = SourceLoc {
                            file: file.clone(),
                            line: *line,
                            function: function.clone(),
                        };
                        *ids.entry(loc.clone()).or_insert_with(|| {
                            map.locs.push(loc);
                            (map.locs.len() - 1) as u32
                        })
                    }
                    _ => u32::MAX,
                };
                if id != u32::MAX {
                    map.by_offset.push((o, id));
                }
                locs.push(id);
            }
            out.push(locs);
        }
        map.by_offset.sort_unstable();
        (map, out)
    }

    /// The location of the instruction at `offset`.
    pub fn lookup(&self, offset: u32) -> Option<&SourceLoc> {
        let i = self.by_offset.binary_search_by_key(&offset, |e| e.0).ok()?;
        self.locs.get(self.by_offset[i].1 as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::file_matches;

    #[test]
    fn user_files_match_by_path_suffix() {
        assert!(file_matches("/tmp/x/prog.c", "prog.c"));
        assert!(file_matches("prog.c", "/home/u/prog.c"));
        assert!(!file_matches("/tmp/x/myprog.c", "prog.c"));
        assert!(!file_matches("/tmp/x/prog.c", "other.c"));
    }
}
