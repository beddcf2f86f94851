//! Smoke tests of the C program transformations (ISSTA'19 section 3.2.2) on
//! real programs: every kind's output, wherever it applies, still compiles
//! (`gcc -fsyntax-only`), over the bundled corpus (always) and the
//! c-testsuite corpus (when present); and dead-code removal end to end with
//! real gcov coverage.

use doppel_core::process::Limits;
use doppel_lang::c::{coverage, transform};
use doppel_lang::transform::{ProgramInput, ProgramTransformationKind};
use rand::SeedableRng;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn c_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "c"));
    files.sort();
    files
}

/// gcc's errors for `src`, or `None` when it compiles (flags as the subject's build).
fn syntax_errors(src: &str, include_dir: &Path) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.c");
    std::fs::write(&f, src).unwrap();
    let out = std::process::Command::new("gcc")
        .args(["-fsyntax-only", "-w", "-I"])
        .arg(include_dir)
        .arg(&f)
        .output()
        .expect("gcc runs");
    (!out.status.success()).then(|| String::from_utf8_lossy(&out.stderr).into_owned())
}

/// For each file that compiles as is: each kind (without coverage) at a few
/// seeds; every result must compile. Returns (applied, skipped) counts.
fn smoke(dir: &Path, seeds: u64) -> (usize, usize) {
    let mut failures = Vec::new();
    let (mut applied, mut skipped) = (0, 0);
    let mut per_kind = std::collections::BTreeMap::new();
    for f in c_files(dir) {
        let src = std::fs::read_to_string(&f).unwrap();
        if syntax_errors(&src, dir).is_some() {
            continue;
        }
        for t in transform::all() {
            for seed in 0..seeds {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                let input = ProgramInput::new(&src, None);
                match t.apply(input, &mut rng) {
                    Ok(out) => {
                        applied += 1;
                        *per_kind.entry(t.kind().as_str()).or_insert(0) += 1;
                        assert_eq!(out.kind, t.kind());
                        if let Some(errors) = syntax_errors(&out.text, dir) {
                            failures.push(format!(
                                "{} {:?} seed {seed}: {}\n{errors}",
                                f.display(),
                                t.kind(),
                                out.description
                            ));
                        }
                    }
                    Err(_) => skipped += 1,
                }
            }
        }
    }
    eprintln!("{}: applied per kind {per_kind:?}", dir.display());
    assert!(
        failures.is_empty(),
        "{} outputs do not compile:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (applied, skipped)
}

fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c")
}

#[test]
fn every_output_on_the_bundled_corpus_compiles() {
    let (applied, _) = smoke(&bundled(), 3);
    assert!(applied > 50, "transformations apply to the corpus ({applied})");
}

#[test]
#[ignore = "needs ../shared"]
fn every_output_on_c_testsuite_compiles() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/c/c-testsuite");
    assert!(
        dir.is_dir(),
        "the shared c-testsuite corpus is missing: {}",
        dir.display()
    );
    let (applied, skipped) = smoke(&dir, 2);
    eprintln!("c-testsuite: {applied} applied, {skipped} skipped");
    assert!(applied > 100);
}

#[tokio::test]
async fn dead_code_found_by_gcov_is_removed_and_the_result_compiles() {
    let src = "#include <stdio.h>\n\nstatic int unused(int x)\n{\n    return x + 1;\n}\n\nint main(int argc, char **argv) {\n    int n = argc;\n    while (n > 100) {\n        n--;\n    }\n    printf(\"%d\\n\", n);\n    return 0;\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dead.c");
    std::fs::write(&f, src).unwrap();
    let cov = coverage::collect(&f, Duration::from_secs(20), Limits::default())
        .await
        .unwrap();
    let remove = transform::all()
        .into_iter()
        .find(|t| t.kind() == ProgramTransformationKind::RemoveDeadCode)
        .unwrap();
    let mut nodes = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let out = remove.apply(ProgramInput::new(src, Some(&cov)), &mut rng).unwrap();
        assert!(syntax_errors(&out.text, dir.path()).is_none(), "{}", out.text);
        assert!(out.text.contains("printf(\"%d\\n\", n);"), "executed code stays");
        nodes.insert(out.node);
    }
    assert_eq!(
        nodes.into_iter().collect::<Vec<_>>(),
        vec!["compound_statement".to_string(), "function_definition".to_string()]
    );
}

/// Compiles `src` with `gcc -O0 -g` and runs it (10 s at most): exit code and stdout.
fn compile_and_run(src: &str, include_dir: &Path) -> Option<(Option<i32>, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.c");
    std::fs::write(&f, src).unwrap();
    let prog = dir.path().join("prog");
    let ok = std::process::Command::new("gcc")
        .args(["-O0", "-g", "-w", "-I"])
        .arg(include_dir)
        .arg(&f)
        .arg("-o")
        .arg(&prog)
        .arg("-lm")
        .status()
        .ok()?
        .success();
    if !ok {
        return None;
    }
    let out = std::process::Command::new("timeout")
        .arg("10")
        .arg(&prog)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    Some((out.status.code(), out.stdout))
}

#[tokio::test]
async fn outputs_on_the_bundled_corpus_behave_like_the_originals() {
    let dir = bundled();
    let mut compared = 0;
    for f in c_files(&dir) {
        let src = std::fs::read_to_string(&f).unwrap();
        let Some(before) = compile_and_run(&src, &dir) else {
            continue;
        };
        let cov = coverage::collect(&f, Duration::from_secs(20), Limits::default())
            .await
            .ok();
        for t in transform::all() {
            for seed in 0..2 {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                let input = ProgramInput::new(&src, cov.as_ref());
                let Ok(out) = t.apply(input, &mut rng) else { continue };
                let after = compile_and_run(&out.text, &dir);
                assert_eq!(
                    after.as_ref(),
                    Some(&before),
                    "{} {:?} seed {seed} changed behaviour: {}",
                    f.display(),
                    t.kind(),
                    out.description
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 50, "{compared}");
}
