//! The Rust path (PLDI'20 section 6.1) against real rustc and GDB: the
//! paper's Figure 10 and a trivial correct program.

use doppel_debuggers::{Debugger, DebuggerConfig, registry};
use doppel_debuginfo::program::Program;
use doppel_debuginfo::rust::{self, RustBuilder};
use doppel_debuginfo::toolchain::{Compiler, Family};
use doppel_debuginfo::{CheckVerdict, VarKind};
use std::path::Path;

/// Figure 10 (`corpus/debuginfo/paper/fig10-rust/main.rs`; the barrier
/// crate is passed as `lib` too).
fn fig10() -> String {
    corpus("paper/fig10-rust/main.rs")
}

/// A program of the bundled debuginfo corpus.
fn corpus(path: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../corpus/debuginfo")
            .join(path),
    )
    .unwrap()
}

/// Every value is used after the last line, so it is live everywhere.
const TRIVIAL: &str = "fn main() {
    let a: u8 = 200;
    let b = a as i64 * -3;
    let c = b == -600;
    let d: u32 = (b as u32).wrapping_mul(7);
    opt_me_not::opt_me_not();
    std::process::exit(if c && a > 1 && d != 0 { 0 } else { 1 });
}
";

async fn setup(
    text: &str,
) -> (
    tempfile::TempDir,
    Program,
    Compiler,
    RustBuilder,
    Vec<(String, Box<dyn Debugger>)>,
) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("main.rs");
    std::fs::write(&src, text).unwrap();
    let program = Program::from_file("main.rs", &src).unwrap();
    let rustc = Compiler::discover("rustc").await.unwrap();
    assert_eq!(rustc.family, Family::Rustc);
    assert!(rustc.tag().starts_with("rustc-1."), "{}", rustc.tag());
    let builder = RustBuilder::new(dir.path().join("cache"));
    let dbgs = vec![(
        "gdb".to_string(),
        registry::create("gdb", &DebuggerConfig::default()).unwrap(),
    )];
    (dir, program, rustc, builder, dbgs)
}

#[tokio::test]
async fn figure_10_has_references_and_every_pair_a_verdict() {
    let (_dir, program, rustc, builder, mut dbgs) = setup(&fig10()).await;
    let refs = rust::prepare(&program, &rustc, &builder, &mut dbgs, 0, 1)
        .await
        .unwrap();
    eprintln!("{refs:#?}");
    let counter = refs
        .references
        .iter()
        .find(|r| r.pair.line == 7 && r.pair.variable.name == "counter")
        .expect("counter at line 7");
    assert_eq!(counter.value, "2");
    assert_eq!(counter.pair.variable.kind, VarKind::Integer { signed: true, bits: 32 });
    let checked = rust::check_level(&program, &refs.references, &rustc, "O1", &builder, &mut dbgs)
        .await
        .unwrap();
    assert!(!checked.builds.is_empty());
    for b in &checked.builds {
        assert!(b.recipe.contains("opt-level=1"), "{}", b.recipe);
    }
    assert_eq!(checked.cells.len(), checked.builds.len());
    let verdicts: Vec<_> = checked.cells.iter().flat_map(|c| &c.session.verdicts).collect();
    eprintln!("{verdicts:#?}");
    assert_eq!(verdicts.len(), refs.references.len());
    assert!(
        !verdicts
            .iter()
            .any(|v| matches!(v.verdict, CheckVerdict::DebuggerFailure { .. })),
        "{verdicts:?}"
    );
    for (_, d) in dbgs.iter_mut() {
        d.shutdown().await;
    }
}

#[tokio::test]
async fn a_correct_program_shows_no_wrong_value() {
    let (_dir, program, rustc, builder, mut dbgs) = setup(TRIVIAL).await;
    let refs = rust::prepare(&program, &rustc, &builder, &mut dbgs, 0, 1)
        .await
        .unwrap();
    eprintln!("{refs:#?}");
    let at6: Vec<(&str, &str)> = refs
        .references
        .iter()
        .filter(|r| r.pair.line == 6)
        .map(|r| (r.pair.variable.name.as_str(), r.value.as_str()))
        .collect();
    for want in [("a", "200"), ("b", "-600"), ("c", "1"), ("d", "4294963096")] {
        assert!(at6.contains(&want), "{want:?} in {at6:?}");
    }
    for level in ["O0", "O1", "O2"] {
        let checked = rust::check_level(&program, &refs.references, &rustc, level, &builder, &mut dbgs)
            .await
            .unwrap();
        let v: Vec<_> = checked.cells.iter().flat_map(|c| c.session.verdicts.clone()).collect();
        eprintln!("{level}: {v:#?}");
        assert_eq!(v.len(), refs.references.len());
        assert!(
            !v.iter().any(|x| x.verdict.is_finding()),
            "{level}: {:?}",
            v.iter().filter(|x| x.verdict.is_finding()).collect::<Vec<_>>()
        );
        if level == "O0" {
            assert!(v.iter().all(|x| x.verdict == CheckVerdict::Match), "{v:?}");
        }
    }
    for (_, d) in dbgs.iter_mut() {
        d.shutdown().await;
    }
}

/// `corpus/debuginfo/rust/lcg.rs` at -O1 in GDB (see the corpus README for
/// what rustc 1.95.0 does with it): lines of the inlined `mix` are checked
/// in the line-augmented build, line 16 is first paused at its second
/// execution (`later_hit`, not a finding), line 19 shows a wrong value of
/// `total`, and its culprit is bisected with `-C llvm-args=-opt-bisect-limit`.
#[tokio::test]
async fn lcg_augmentation_later_hit_and_a_bisected_wrong_value() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/debuginfo/rust/lcg.rs"))
            .unwrap();
    let (_dir, program, rustc, builder, mut dbgs) = setup(&text).await;
    let refs = rust::prepare(&program, &rustc, &builder, &mut dbgs, 0, 1)
        .await
        .unwrap();
    // Later executions are recorded: `i` at line 16 is 0, 1, 2, 3.
    let i16 = refs
        .references
        .iter()
        .find(|r| r.pair.line == 16 && r.pair.variable.name == "i")
        .expect("i at line 16");
    assert_eq!(
        (i16.value.as_str(), i16.later.as_slice()),
        ("0", &["1".to_string(), "2".into(), "3".into()][..])
    );
    let checked = rust::check_level(&program, &refs.references, &rustc, "O1", &builder, &mut dbgs)
        .await
        .unwrap();
    assert_eq!(checked.builds.len(), 2, "a plain and an augmented build");
    let augmented = &checked.builds[1];
    assert!(augmented.augmented.contains(&3), "{:?}", augmented.augmented);
    let augmented_source = std::fs::read_to_string(&augmented.subject.source).unwrap();
    assert!(
        augmented_source
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("::opt_me_not::opt_me_not(); "),
        "{augmented_source}"
    );
    let cell = checked.cells.iter().find(|c| c.build == 1).unwrap();
    for (r, v) in augmented.references.iter().zip(&cell.session.verdicts) {
        if r.pair.line == 3 {
            assert_eq!(v.verdict, CheckVerdict::Match, "{r:?}: {v:?}");
        }
    }
    let plain = checked.cells.iter().find(|c| c.build == 0).unwrap();
    let verdict_of = |line: u32, name: &str| {
        let i = checked.builds[0]
            .references
            .iter()
            .position(|r| r.pair.line == line && r.pair.variable.name == name)
            .unwrap_or_else(|| panic!("{name} at line {line} in the plain build"));
        (
            checked.builds[0].references[i].clone(),
            plain.session.verdicts[i].verdict.clone(),
        )
    };
    for name in ["acc", "i"] {
        let (_, v) = verdict_of(16, name);
        assert!(matches!(v, CheckVerdict::LaterHit { hit: 2, .. }), "{name}: {v:?}");
    }
    let (total, v) = verdict_of(19, "total");
    assert_eq!(total.value, "213");
    assert!(
        matches!(&v, CheckVerdict::WrongValue { expected, .. } if expected == "213"),
        "{v:?}"
    );

    // Culprit bisection through rustc's LLVM.
    let level = rust::RustLevel::new(&program, &rustc, "O1", &builder);
    let (_, gdb) = &mut dbgs[0];
    let culprit = doppel_debuginfo::culprit::bisect_pair(&level, &Default::default(), &total, gdb.as_mut())
        .await
        .unwrap();
    eprintln!("{culprit:?}");
    assert_eq!(culprit.method, doppel_debuginfo::bisect::Method::OptBisectLimit);
    assert!(culprit.limit.unwrap() > 0 && culprit.limit <= culprit.passes);
    assert!(culprit.pass.as_deref().is_some_and(|p| !p.is_empty()), "{culprit:?}");
    for (_, d) in dbgs.iter_mut() {
        d.shutdown().await;
    }
}
