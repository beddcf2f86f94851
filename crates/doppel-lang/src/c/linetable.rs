//! The DWARF line table of a (usually optimized) binary, read with gimli
//! from the ELF sections object gives, for line augmentation in
//! debug-information validation (Li, Ding, Zhang & Italiano, PLDI 2020,
//! section 4.3): a line s without an `is_stmt` row in the optimized binary
//! has no breakpoint location, so `opt_me_not();` is inserted before it.
//!
//! Reads DWARF 2 to 5 line programs (gcc 12 and clang 14 to 19 emit DWARF 5
//! by default), compressed debug sections included. Split DWARF (`.dwo`)
//! is not followed.

use gimli::ColumnType;
use std::collections::BTreeSet;
use std::path::Path;

/// One row of a line table (sequence ends left out).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineRow {
    /// Address of the first machine instruction of the row.
    pub address: u64,
    /// The source file as the line table names it: the file name joined to
    /// its include directory when the name is relative and the directory is
    /// given (e.g. `/tmp/x/p.c`, or `p.c` when the table says only that).
    pub file: String,
    /// 1-based source line; 0 for code attributed to no line.
    pub line: u32,
    /// 1-based column; 0 for "left edge" (no column).
    pub column: u32,
    /// Whether the row is a recommended breakpoint location (`is_stmt`).
    pub is_stmt: bool,
}

/// All rows of all line programs of `binary` (an ELF file built with `-g`),
/// in table order (per compilation unit, per sequence, by address).
///
/// Errors: the file cannot be read or is not an object file, it has no
/// `.debug_line` section (built without `-g`), or the DWARF is malformed.
pub fn rows(binary: &Path) -> Result<Vec<LineRow>, String> {
    super::dwarf_file::with_dwarf(binary, ".debug_line", |_, dwarf| rows_of(binary, dwarf))
}

fn rows_of(binary: &Path, dwarf: &super::dwarf_file::Dwarf<'_>) -> Result<Vec<LineRow>, String> {
    let bad = |e: gimli::Error| format!("malformed DWARF in {}: {e}", binary.display());

    let mut out = Vec::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next().map_err(bad)? {
        let unit = dwarf.unit(header).map_err(bad)?;
        let Some(program) = unit.line_program.clone() else {
            continue;
        };
        let mut table = program.rows();
        // File names are resolved once per file index.
        let mut names: Vec<Option<String>> = Vec::new();
        while let Some((header, row)) = table.next_row().map_err(bad)? {
            if row.end_sequence() {
                continue;
            }
            let index = row.file_index() as usize;
            if names.len() <= index {
                names.resize(index + 1, None);
            }
            if names[index].is_none() {
                let mut name = String::new();
                if let Some(entry) = header.file(row.file_index()) {
                    let base = dwarf
                        .attr_string(&unit, entry.path_name())
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let dir = entry
                        .directory(header)
                        .and_then(|d| dwarf.attr_string(&unit, d).ok())
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    name = if dir.is_empty() || base.starts_with('/') {
                        base
                    } else {
                        format!("{}/{base}", dir.trim_end_matches('/'))
                    };
                }
                names[index] = Some(name);
            }
            out.push(LineRow {
                address: row.address(),
                file: names[index].clone().unwrap_or_default(),
                line: row.line().map_or(0, |l| l.get() as u32),
                column: match row.column() {
                    ColumnType::LeftEdge => 0,
                    ColumnType::Column(c) => c.get() as u32,
                },
                is_stmt: row.is_stmt(),
            });
        }
    }
    Ok(out)
}

/// The 1-based lines of source file `source_file_name` that have at least
/// one `is_stmt` row in `binary`'s line table: the lines a debugger can put
/// a breakpoint on. Files match on their last path component (`p.c` matches
/// `/tmp/x/p.c` and `p.c`), so a header of the same name would be merged.
///
/// Errors: those of [`rows`].
pub fn stmt_lines(binary: &Path, source_file_name: &str) -> Result<BTreeSet<u32>, String> {
    let wanted = last_component(source_file_name);
    Ok(rows(binary)?
        .into_iter()
        .filter(|r| r.is_stmt && r.line > 0 && last_component(&r.file) == wanted)
        .map(|r| r.line)
        .collect())
}

fn last_component(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    const PROG: &str = r#"#include <stdio.h>
static int sq(int x) { return x * x; }
int main(int argc, char **argv) {
  int s = 0;
  for (int i = 0; i < argc * 10; i++)
    s += sq(i);
  (void)argv;
  printf("%d\n", s);
  return 0;
}
"#;

    /// (address, line, column, is_stmt) of the rows `llvm-dwarfdump
    /// --debug-line` prints (sequence ends left out).
    fn dwarfdump_rows(binary: &Path) -> Option<Vec<(u64, u32, u32, bool)>> {
        let out = Command::new("llvm-dwarfdump")
            .arg("--debug-line")
            .arg(binary)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let mut rows = Vec::new();
        for l in text.lines() {
            let t: Vec<&str> = l.split_whitespace().collect();
            if t.len() < 4 || !t[0].starts_with("0x") || t.contains(&"end_sequence") {
                continue;
            }
            let addr = u64::from_str_radix(&t[0][2..], 16).ok()?;
            rows.push((addr, t[1].parse().ok()?, t[2].parse().ok()?, t.contains(&"is_stmt")));
        }
        Some(rows)
    }

    #[test]
    fn rows_and_stmt_lines_agree_with_llvm_dwarfdump() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("lt.c");
        std::fs::write(&src, PROG).unwrap();
        let mut compilers = 0;
        for cc in ["gcc", "clang", "clang-19"] {
            for dwarf in ["-gdwarf-4", "-gdwarf-5"] {
                let bin = dir.path().join(format!("lt-{cc}{dwarf}"));
                let Ok(st) = Command::new(cc)
                    .current_dir(dir.path())
                    .args(["-O2", dwarf, "-o"])
                    .arg(&bin)
                    .arg("lt.c")
                    .status()
                else {
                    continue;
                };
                assert!(st.success(), "{cc} {dwarf}");
                compilers += 1;
                let ours = rows(&bin).unwrap();
                let Some(theirs) = dwarfdump_rows(&bin) else { continue };
                let mine: Vec<(u64, u32, u32, bool)> =
                    ours.iter().map(|r| (r.address, r.line, r.column, r.is_stmt)).collect();
                assert_eq!(mine, theirs, "{cc} {dwarf}");
                // One compilation unit with code from lt.c only.
                assert!(
                    ours.iter().all(|r| r.file.ends_with("/lt.c") || r.file == "lt.c"),
                    "{ours:?}"
                );
                let expected: BTreeSet<u32> = theirs.iter().filter(|r| r.3 && r.1 > 0).map(|r| r.1).collect();
                let lines = stmt_lines(&bin, "/somewhere/else/lt.c").unwrap();
                assert_eq!(lines, expected, "{cc} {dwarf}");
                // The printf call survives -O2 (`int s = 0;` on line 4 may
                // not: clang gives it no is_stmt row).
                assert!(lines.contains(&8), "{cc} {dwarf}: {lines:?}");
                assert!(stmt_lines(&bin, "other.c").unwrap().is_empty());
            }
        }
        assert!(compilers >= 4, "{compilers}");
    }

    #[test]
    fn stripped_and_missing_binaries_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.c"), "int main(void) { return 0; }\n").unwrap();
        let st = Command::new("gcc")
            .current_dir(dir.path())
            .args(["-O2", "-o", "t", "t.c"])
            .status()
            .unwrap();
        assert!(st.success());
        let err = stmt_lines(&dir.path().join("t"), "t.c").unwrap_err();
        assert!(err.contains("no .debug_line"), "{err}");
        let err = rows(&dir.path().join("t.c")).unwrap_err();
        assert!(err.contains("not an object file"), "{err}");
        let err = rows(&dir.path().join("missing")).unwrap_err();
        assert!(err.contains("cannot read"), "{err}");
    }
}
