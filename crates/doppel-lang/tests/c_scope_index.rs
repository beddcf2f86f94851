//! The per-program scope index (issue 17 part 6) changes cost only: every C
//! transformation gives the same result (same program text, map,
//! description, or the same skip) for the same seed with
//! `ScopeIndexing::PerProgram` as with the original per-statement walk, on
//! the bundled corpus and on real Csmith programs.

use doppel_lang::c::transform;
use doppel_lang::c::transform::scope::ScopeIndex;
use doppel_lang::transform::{ProgramInput, ScopeIndexing};
use rand::SeedableRng;
use std::path::Path;
use std::time::{Duration, Instant};

/// Applies every kind at `seeds` with both indexings; asserts equal
/// results. Returns (applied, old time, new time).
fn same_results(name: &str, src: &str, seeds: u64) -> (usize, Duration, Duration) {
    let (mut applied, mut old, mut new) = (0, Duration::ZERO, Duration::ZERO);
    for t in transform::all() {
        for seed in 0..seeds {
            let run = |indexing| {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                let mut input = ProgramInput::new(src, None);
                input.scope_indexing = indexing;
                let start = Instant::now();
                let out = t.apply(input, &mut rng);
                (out, start.elapsed())
            };
            let (a, ta) = run(ScopeIndexing::PerStatement);
            let (b, tb) = run(ScopeIndexing::PerProgram);
            old += ta;
            new += tb;
            assert_eq!(a, b, "{name}: {:?} seed {seed} differs between the indexings", t.kind());
            applied += usize::from(a.is_ok());
        }
    }
    (applied, old, new)
}

#[test]
fn the_bundled_corpus_gets_the_same_transformations() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c");
    let mut applied = 0;
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "c") {
            let src = std::fs::read_to_string(&p).unwrap();
            applied += same_results(&p.display().to_string(), &src, 4).0;
            files += 1;
        }
    }
    assert!(files >= 20 && applied > 100, "{files} files, {applied} applied");
}

/// A Csmith program (csmith 2.3.0; `--max-funcs 1 --max-block-depth 2`:
/// ~270 lines, the original walk is slow in a debug build).
fn csmith(seed: u64) -> String {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(format!("cs{seed}.c"));
    let status = std::process::Command::new("csmith")
        .arg("--seed")
        .arg(seed.to_string())
        .args(["--max-funcs", "1", "--max-block-depth", "2", "-o"])
        .arg(&f)
        // csmith writes platform.info into its working directory.
        .current_dir(dir.path())
        .status()
        .expect("csmith runs (scripts/deps/apt.txt)");
    assert!(status.success());
    std::fs::read_to_string(&f).unwrap()
}

#[test]
fn a_csmith_program_gets_the_same_scope_answers_at_every_statement() {
    let src = csmith(1);
    assert!(src.lines().count() > 200, "a Csmith program of some size");
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_c::LANGUAGE.into()).unwrap();
    let tree = parser.parse(&src, None).unwrap();
    let root = tree.root_node();
    let indexed = ScopeIndex::new(&src, root, ScopeIndexing::PerProgram);
    let original = ScopeIndex::new(&src, root, ScopeIndexing::PerStatement);
    // Every block item: the variables visible there.
    let mut stack = vec![root];
    let (mut statements, mut visible) = (0, 0);
    let mut names = std::collections::BTreeSet::new();
    while let Some(n) = stack.pop() {
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
        if n.kind() == "identifier" {
            names.insert(n.utf8_text(src.as_bytes()).unwrap().to_string());
        }
        if n.parent().is_some_and(|p| p.kind() == "compound_statement") {
            let v = indexed.visible_at(n);
            assert_eq!(v, original.visible_at(n), "at {:?}", n.start_position());
            statements += 1;
            visible += v.len();
        }
    }
    // Every name's uses (what `used_visible_at` filters by).
    for name in &names {
        assert_eq!(indexed.use_count(name), original.use_count(name), "{name}");
    }
    assert!(
        statements > 50 && visible > 1000 && names.len() > 30,
        "{statements} {visible} {}",
        names.len()
    );
}

#[test]
fn a_csmith_program_gets_the_same_transformations() {
    let src = csmith(6);
    let (applied, old, new) = same_results("csmith seed 6", &src, 1);
    eprintln!(
        "csmith seed 6: {} lines, {applied} applied, per-statement {old:?}, per-program {new:?}",
        src.lines().count()
    );
    assert!(applied >= 3, "{applied}");
}
