//! Output attribution (`Observe::writes`): every write to stdout of a C
//! program built with clang-16 names the user's statement that made it.

mod support;

use doppel_concolic::{Inputs, Module, Observe, Run, RunConfig, Symbolic, run};

const SOURCE: &str = include_str!("c/writes.c");

fn line_of(marker: &str) -> u32 {
    support::line_of(SOURCE, marker)
}

fn build() -> (tempfile::TempDir, Module) {
    support::build_c("writes.c", SOURCE)
}

fn attributed(module: &Module, stdin: &[u8], env: &[&str], symbolic: Symbolic) -> Run {
    let config = RunConfig {
        inputs: Inputs {
            stdin: stdin.to_vec(),
            env: env.iter().map(|e| e.to_string()).collect(),
            ..Default::default()
        },
        symbolic,
        observe: Observe {
            files: vec!["writes.c".into()],
            writes: true,
            ..Default::default()
        },
        ..Default::default()
    };
    run(module, &config)
}

/// The line of the statement that wrote byte `k`.
fn line_at(module: &Module, r: &Run, k: usize) -> Option<u32> {
    let site = r.writer_of(k)?.site?;
    module.source_loc(site).map(|l| l.line)
}

#[test]
fn every_byte_of_unbuffered_output_names_its_statement() {
    let (_dir, module) = build();
    for symbolic in [Symbolic::NONE, Symbolic::ALL] {
        let r = attributed(&module, b"5\n", &[], symbolic);
        assert_eq!(r.stdout, b"n=5 big\n***\n");
        let lines: Vec<Option<u32>> = (0..r.stdout.len()).map(|k| line_at(&module, &r, k)).collect();
        let (head, big, call, end) = (line_of("HEAD"), line_of("BIG"), line_of("CALL"), line_of("END"));
        let mut want = vec![Some(head); 4];
        want.extend([Some(big); 4]);
        // putchar inside stars() belongs to stars' own line, the innermost
        // frame in the observed file.
        want.extend([Some(line_of("STARS")); 3]);
        want.push(Some(end));
        assert_eq!(lines, want, "symbolic {}", symbolic.any());
        assert_ne!(call, line_of("STARS"));
        // Writes from one site in a row are one entry.
        assert_eq!(r.writes.len(), 4);
        let r = attributed(&module, b"1\n", &[], symbolic);
        assert_eq!(line_at(&module, &r, 4), Some(line_of("SMALL")));
        assert_eq!(line_at(&module, &r, r.stdout.len()), None, "past the output");
    }
}

/// With musl's buffered stdout (line-buffered until its first write finds
/// no terminal, fully buffered after), a write belongs to the statement
/// that flushed the buffer (the newline of `puts`), or to none when the
/// flush comes at exit: why doppel-lang's wasm builds unbuffer stdout.
#[test]
fn buffered_output_belongs_to_the_statement_that_flushed_it() {
    let (_dir, module) = build();
    let r = attributed(&module, b"2\n", &["BUFFERED=1"], Symbolic::NONE);
    assert_eq!(r.stdout, b"n=2 small\n**\n");
    assert_eq!(
        line_at(&module, &r, 0),
        Some(line_of("SMALL")),
        "HEAD's bytes flushed by puts"
    );
    assert_eq!(r.writer_of(10).map(|w| w.site), Some(None), "the stars flushed at exit");
}

#[test]
fn without_observed_files_nothing_is_attributed() {
    let (_dir, module) = build();
    let config = RunConfig {
        inputs: Inputs {
            stdin: b"5\n".to_vec(),
            ..Default::default()
        },
        observe: Observe {
            writes: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let r = run(&module, &config);
    assert_eq!(r.stdout, b"n=5 big\n***\n");
    assert!(r.writes.is_empty());
}
