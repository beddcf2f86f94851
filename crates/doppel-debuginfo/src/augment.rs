//! Line augmentation (PLDI 2020, section 4.3): a line s that the optimizer
//! left without an `is_stmt` row in the line table gets a call of an
//! unoptimizable function before its statement, so the debugger can stop at
//! s in the optimized binary.
//!
//! The call is `opt_me_not();`, written at column 1 of s in front of the
//! existing text: no line is added, so every line number of the program (the
//! pairs, the references) stays valid. The barrier is defined in a
//! translation unit of its own ([`BARRIER_SOURCE`], written by
//! [`write_barrier`]) and must be linked without link-time optimization:
//! the compiler of the program then knows nothing about it and has to keep
//! the call, with its line, and the memory clobber keeps every global in
//! memory around it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The barrier's name.
pub const BARRIER: &str = "opt_me_not";

/// The prototype added at the start of line 1 (followed by a space).
pub const BARRIER_PROTOTYPE: &str = "void opt_me_not(void);";

/// The call written in front of an augmented line (followed by a space).
pub const BARRIER_CALL: &str = "opt_me_not();";

/// The barrier's translation unit (`opt_me_not.c`): an empty function with
/// a compiler memory barrier.
pub const BARRIER_SOURCE: &str = "void opt_me_not(void) { __asm__ volatile(\"\" ::: \"memory\"); }\n";

/// File name of the barrier's translation unit.
pub const BARRIER_FILE: &str = "opt_me_not.c";

/// `source` with `opt_me_not(); ` at column 1 of every line in `lines`
/// (1-based; the caller guarantees each is the start of a statement directly
/// inside a `{ }` block, not the brace-less body of an `if`, `for`, `while`
/// or `else`, whose meaning the inserted statement would change; Csmith
/// always writes braces) and the prototype declared before its
/// first use, without changing any line number (see [`declare_first`]).
/// Lines past the end are ignored.
pub fn augment(source: &str, lines: &BTreeSet<u32>) -> String {
    let body = prefix_lines(source, |line| lines.contains(&line).then(|| format!("{BARRIER_CALL} ")));
    declare_first(&body, BARRIER_PROTOTYPE)
}

/// The call written in front of an augmented line of a Rust program
/// (followed by a space): the barrier crate's function by its absolute
/// path, which no item of the program can shadow (PLDI'20 section 6.1: the
/// barrier is in a crate of its own, see [`crate::rust`]).
pub const RUST_BARRIER_CALL: &str = "::opt_me_not::opt_me_not();";

/// Rust `source` with `::opt_me_not::opt_me_not(); ` at column 1 of every
/// line in `lines` (1-based; the caller guarantees each is a statement start
/// of `doppel_lang::rust::statements`). No line number changes; lines past
/// the end are ignored.
pub fn augment_rust(source: &str, lines: &BTreeSet<u32>) -> String {
    prefix_lines(source, |line| {
        lines.contains(&line).then(|| format!("{RUST_BARRIER_CALL} "))
    })
}

/// Writes [`BARRIER_SOURCE`] to `dir/opt_me_not.c` and returns its path.
///
/// Errors: the write error.
///
/// The file is written only when missing or different, and then through a
/// temporary file renamed into place: parallel jobs share it, and a compiler
/// reading it while another job rewrote it in place saw an empty unit (an
/// undefined `opt_me_not` at link time, 2 builds in a 200-program campaign).
pub fn write_barrier(dir: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join(BARRIER_FILE);
    if std::fs::read_to_string(&path).is_ok_and(|t| t == BARRIER_SOURCE) {
        return Ok(path);
    }
    let tmp = dir.join(format!(
        ".{BARRIER_FILE}.{}.{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&tmp, BARRIER_SOURCE)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// `source` with `prefix(n)` written at column 1 of line n (1-based) where
/// it is `Some`. Line ends (`\n`, `\r\n`) and a missing final newline are
/// kept.
pub(crate) fn prefix_lines(source: &str, mut prefix: impl FnMut(u32) -> Option<String>) -> String {
    let mut out = String::with_capacity(source.len() + source.len() / 8);
    for (i, line) in source.split_inclusive('\n').enumerate() {
        if let Some(p) = prefix(i as u32 + 1) {
            out.push_str(&p);
        }
        out.push_str(line);
    }
    out
}

/// `source` with the file-scope declaration `decl` added without changing
/// the line number of any original line:
/// - at the start of line 1, followed by a space, when line 1 is not a
///   preprocessor directive (Csmith's line 1 opens a comment);
/// - otherwise (a directive cannot share its line) on a line of its own,
///   followed by `#line 1`, so that compilers, debug information and
///   sanitizer reports still number the original lines from 1 (only the
///   physical line count grows by two).
pub fn declare_first(source: &str, decl: &str) -> String {
    if source.trim_start_matches([' ', '\t']).starts_with('#') {
        format!("{decl}\n#line 1\n{source}")
    } else {
        format!("{decl} {source}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_augmentation_calls_the_barrier_crate_without_moving_lines() {
        let src = "fn main() {\n    let a = 1;\n    let b = a + 1;\n}\n";
        let out = augment_rust(src, &BTreeSet::from([3, 9]));
        assert_eq!(
            out,
            "fn main() {\n    let a = 1;\n::opt_me_not::opt_me_not();     let b = a + 1;\n}\n"
        );
    }
    use crate::wellformed::compile;

    const PROGRAM: &str = "int g;\nint f(int x) {\n  int y = x * 2;\n  int z = y + 1;\n  g = z;\n  return z;\n}\nint main(void) { return f(3) - 7; }\n";

    #[test]
    fn calls_go_in_front_of_the_lines_and_line_numbers_stay() {
        let out = augment(PROGRAM, &BTreeSet::from([3, 5, 99]));
        assert_eq!(out.lines().count(), PROGRAM.lines().count());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "void opt_me_not(void); int g;");
        assert_eq!(lines[2], "opt_me_not();   int y = x * 2;");
        assert_eq!(lines[3], "  int z = y + 1;");
        assert_eq!(lines[4], "opt_me_not();   g = z;");
        let hashed = augment(
            "#include <stdio.h>\nint main(void) {\n  return 0;\n}",
            &BTreeSet::from([3]),
        );
        assert_eq!(
            hashed,
            "void opt_me_not(void);\n#line 1\n#include <stdio.h>\nint main(void) {\nopt_me_not();   return 0;\n}"
        );
    }

    /// Lines (1-based) of `object` that have an `is_stmt` row, from
    /// `llvm-dwarfdump --debug-line`.
    async fn stmt_lines(object: &Path) -> BTreeSet<u32> {
        let mut cmd = tokio::process::Command::new("llvm-dwarfdump");
        cmd.arg("--debug-line").arg(object);
        let done = doppel_core::process::run(
            cmd,
            std::time::Duration::from_secs(30),
            doppel_core::process::Sandbox::default(),
        )
        .await
        .unwrap();
        assert_eq!(done.code, Some(0), "{}", done.stderr);
        done.stdout
            .lines()
            .filter(|l| l.starts_with("0x") && l.contains("is_stmt") && !l.contains("end_sequence"))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
            .collect()
    }

    #[tokio::test]
    async fn augmented_lines_get_a_statement_row_at_o2_with_gcc_and_clang() {
        let dir = tempfile::tempdir().unwrap();
        let barrier = write_barrier(dir.path()).unwrap();
        let wanted = BTreeSet::from([3, 4, 5]);
        let plain = dir.path().join("plain.c");
        std::fs::write(&plain, PROGRAM).unwrap();
        let aug = dir.path().join("aug.c");
        std::fs::write(&aug, augment(PROGRAM, &wanted)).unwrap();
        let o2: Vec<String> = ["-O2", "-g", "-w"].map(String::from).to_vec();
        let mut c_flags = o2.clone();
        c_flags.push("-c".into());
        let mut checked = 0;
        for cc in ["gcc", &crate::wellformed::sanitizer_clang()] {
            // The whole program links: the barrier is only known at link time.
            let exe = dir.path().join(format!("aug-{cc}"));
            compile(cc, &o2, &[aug.as_path(), barrier.as_path()], &exe)
                .await
                .unwrap();
            let obj = dir.path().join(format!("aug-{cc}.o"));
            compile(cc, &c_flags, &[aug.as_path()], &obj).await.unwrap();
            let have = stmt_lines(&obj).await;
            assert!(
                wanted.is_subset(&have),
                "{cc}: is_stmt rows at {have:?}, want {wanted:?}"
            );
            let pobj = dir.path().join(format!("plain-{cc}.o"));
            compile(cc, &c_flags, &[plain.as_path()], &pobj).await.unwrap();
            eprintln!(
                "{cc}: without augmentation, is_stmt rows at {:?}",
                stmt_lines(&pobj).await
            );
            checked += 1;
        }
        assert_eq!(checked, 2);
    }
}
