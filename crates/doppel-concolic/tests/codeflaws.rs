//! Every program of ../shared/corpus/regressions/codeflaws (both versions of
//! each pair) built for wasm32-wasi with the flags of darwin-measured.md
//! §1.2, run concretely on every test input: stdout and the end (exit code,
//! trap) must equal node's WASI. Runs that exceed the instruction budget
//! (393-C needs 4.75e9 instructions) are counted, not compared.

mod support;

use doppel_concolic::{Module, Outcome, Symbolic};
use std::io::Read;
use std::path::Path;
use std::process::Command;
use support::node;

/// `../shared` next to the repository (`DOPPEL_SHARED` overrides it, for
/// worktrees that live elsewhere), as the other crates' shared-corpus tests.
fn corpus() -> std::path::PathBuf {
    std::env::var_os("DOPPEL_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
        .join("corpus/regressions/codeflaws")
}

fn read_maybe_gz(p: &Path) -> Vec<u8> {
    if p.extension().is_some_and(|e| e == "gz") {
        let out = Command::new("gzip").arg("-dc").arg(p).output().expect("gzip");
        out.stdout
    } else {
        let mut v = Vec::new();
        std::fs::File::open(p).unwrap().read_to_end(&mut v).unwrap();
        v
    }
}

/// darwin-measured.md §1.2: the `%I64d` rewrite, `-D` renames of user
/// functions that clash with wasi-libc (only `read` in this corpus), lenient
/// warnings, force-included headers, the `gets` shim, an 8 MiB stack first.
fn build(dir: &Path, name: &str, source: &str, shim: &Path) -> Option<std::path::PathBuf> {
    let source = source.replace("%I64d", "%lld").replace("%I64u", "%llu");
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, &source).unwrap();
    let out = dir.join(format!("{name}.wasm"));
    let mut cmd = Command::new("clang-16");
    cmd.args(["--target=wasm32-wasi", "-O0", "-g", "-w"]);
    for w in [
        "implicit-function-declaration",
        "implicit-int",
        "return-type",
        "int-conversion",
        "incompatible-pointer-types",
        "incompatible-function-pointer-types",
    ] {
        cmd.arg(format!("-Wno-error={w}"));
    }
    for h in ["stdio.h", "stdlib.h", "string.h", "math.h", "ctype.h"] {
        cmd.args(["-include", h]);
    }
    let defines_read = source.lines().any(|l| {
        let l = l.trim_start();
        ["void read(", "int read(", "void read (", "int read ("]
            .iter()
            .any(|p| l.starts_with(p))
    });
    if defines_read {
        cmd.arg("-Dread=doppel_user_read");
    }
    cmd.arg(&src)
        .arg(shim)
        .arg("-o")
        .arg(&out)
        .args(["-Wl,-z,stack-size=8388608", "-Wl,--stack-first"]);
    let ok = cmd.output().expect("clang-16").status.success();
    ok.then_some(out)
}

#[test]
#[ignore = "needs ../shared"]
fn codeflaws_programs_agree_with_node() {
    let dir = tempfile::tempdir().unwrap();
    let shim_c = dir.path().join("gets_shim.c");
    std::fs::write(
        &shim_c,
        "#include <stdio.h>\n#include <string.h>\nchar *gets(char *s) { if (!fgets(s, 1 << 30, stdin)) return 0; \
         size_t n = strlen(s); if (n && s[n - 1] == '\\n') s[n - 1] = 0; return s; }\n",
    )
    .unwrap();
    let shim = dir.path().join("gets_shim.o");
    assert!(
        Command::new("clang-16")
            .args(["--target=wasm32-wasi", "-O0", "-c"])
            .arg(&shim_c)
            .arg("-o")
            .arg(&shim)
            .status()
            .unwrap()
            .success()
    );
    let mut pairs: Vec<_> = std::fs::read_dir(corpus())
        .expect("../shared corpus")
        .flatten()
        .map(|e| e.path())
        .collect();
    pairs.retain(|p| p.is_dir());
    pairs.sort();
    // Every pair takes about 20 s (node and clang per program): CI takes an
    // evenly spread tenth; DOPPEL_CORPUS_STRIDE=1 runs all 140 (45 minutes).
    let stride: usize = std::env::var("DOPPEL_CORPUS_STRIDE")
        .ok()
        .map(|s| s.parse().expect("DOPPEL_CORPUS_STRIDE is a whole number"))
        .unwrap_or(10);
    let pairs: Vec<_> = pairs.into_iter().step_by(stride.max(1)).collect();
    assert!(!pairs.is_empty());
    let (mut same, mut budget, mut programs) = (0, 0, 0);
    let mut differ = Vec::new();
    for pair in &pairs {
        let files: Vec<_> = std::fs::read_dir(pair).unwrap().flatten().map(|e| e.path()).collect();
        let mut inputs: Vec<_> = files
            .iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("input-"))
            .cloned()
            .collect();
        inputs.sort();
        for src in files.iter().filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            n.ends_with(".c") || n.ends_with(".c.gz")
        }) {
            let name = src
                .file_name()
                .unwrap()
                .to_string_lossy()
                .replace(".c.gz", "")
                .replace(".c", "");
            let source = String::from_utf8_lossy(&read_maybe_gz(src)).to_string();
            let wasm = build(dir.path(), &name, &source, &shim).unwrap_or_else(|| panic!("{name} does not build"));
            let module = Module::decode(&std::fs::read(&wasm).unwrap()).expect("decode");
            programs += 1;
            for input in &inputs {
                let stdin = read_maybe_gz(input);
                let run_dir = tempfile::tempdir().unwrap();
                let want = node(&wasm, &stdin, &[], run_dir.path());
                let (got, run) = ours_or_budget(&module, &stdin);
                match got {
                    None => {
                        budget += 1;
                        let _ = run;
                    }
                    Some(g) if g == want => same += 1,
                    Some(g) => differ.push(format!(
                        "{name} on {}: ours {:?} {:?}, node {:?} {:?}",
                        input.display(),
                        g.end,
                        String::from_utf8_lossy(&g.stdout[..g.stdout.len().min(120)]),
                        want.end,
                        String::from_utf8_lossy(&want.stdout[..want.stdout.len().min(120)])
                    )),
                }
            }
        }
    }
    eprintln!(
        "{programs} programs: {same} runs identical, {budget} over the instruction budget, {} differ",
        differ.len()
    );
    // P and P' of every sampled pair were built and run.
    assert_eq!(programs, 2 * pairs.len(), "{programs} programs");
    assert!(differ.is_empty(), "runs that differ from node:\n{}", differ.join("\n"));
}

fn ours_or_budget(module: &Module, stdin: &[u8]) -> (Option<support::Observed>, Outcome) {
    let config = doppel_concolic::RunConfig {
        inputs: doppel_concolic::Inputs {
            stdin: stdin.to_vec(),
            ..Default::default()
        },
        symbolic: Symbolic::NONE,
        ..Default::default()
    };
    let run = doppel_concolic::run(module, &config);
    let end = match &run.outcome {
        Outcome::Exited { code } => support::End::Exit(*code),
        Outcome::Trap { .. } => support::End::Trap,
        Outcome::Budget { .. } => return (None, run.outcome),
        o => panic!("unexpected outcome {o:?}"),
    };
    (
        Some(support::Observed {
            stdout: run.stdout,
            end,
        }),
        run.outcome,
    )
}
