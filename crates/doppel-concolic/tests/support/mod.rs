//! Shared helpers of doppel-concolic's tests: the reference runtime (node's
//! WASI, tests/support/run_wasi.mjs) and C-to-wasm32-wasi builds with
//! Debian's clang-16 (flags of darwin-measured.md §1.2).
#![allow(dead_code)]

use doppel_concolic::{Inputs, Module, Outcome, RunConfig, Symbolic};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How a run ended, comparable across runtimes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    Exit(u32),
    Trap,
}

/// What a runtime printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    pub stdout: Vec<u8>,
    pub end: End,
}

/// Runs `wasm` under node's WASI with `stdin` and `args`, in `dir` (the preopen).
pub fn node(wasm: &Path, stdin: &[u8], args: &[&str], dir: &Path) -> Observed {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/run_wasi.mjs");
    let mut child = Command::new("node")
        .arg("--no-warnings")
        .arg(script)
        .arg(wasm)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node (Debian package nodejs) must be installed");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("node output");
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let end = if stderr.contains("TRAP ") || stderr.contains("RuntimeError") {
        End::Trap
    } else {
        End::Exit(out.status.code().expect("node exited normally") as u32)
    };
    Observed {
        stdout: out.stdout,
        end,
    }
}

/// Runs `module` under doppel-concolic.
pub fn ours(
    module: &Module,
    stdin: &[u8],
    args: &[&str],
    files: Vec<(String, Vec<u8>)>,
    symbolic: Symbolic,
) -> (Observed, doppel_concolic::Run) {
    let config = RunConfig {
        inputs: Inputs {
            stdin: stdin.to_vec(),
            args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
            files,
            ..Default::default()
        },
        symbolic,
        ..Default::default()
    };
    let run = doppel_concolic::run(module, &config);
    let end = match &run.outcome {
        Outcome::Exited { code } => End::Exit(*code),
        Outcome::Trap { .. } => End::Trap,
        o => panic!("unexpected outcome {o:?}"),
    };
    (
        Observed {
            stdout: run.stdout.clone(),
            end,
        },
        run,
    )
}

/// Compiles C `source` (file name `name`) to wasm32-wasi at -O0 -g into `dir`.
pub fn compile_c(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(name);
    std::fs::write(&src, source).unwrap();
    let out = dir.join(format!("{name}.wasm"));
    let status = Command::new("clang-16")
        .args(["--target=wasm32-wasi", "-O0", "-g", "-w"])
        .args([
            "-include", "stdio.h", "-include", "stdlib.h", "-include", "string.h", "-include", "math.h",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .args(["-Wl,-z,stack-size=8388608", "-Wl,--stack-first"])
        .status()
        .expect("clang-16 (Debian packages clang-16 lld-16 wasi-libc libclang-rt-16-dev-wasm32) must be installed");
    assert!(status.success(), "clang-16 failed on {name}");
    out
}

/// Builds C `source` (file name `name`) with [`compile_c`] in a fresh
/// temporary directory and decodes it; the directory lives as long as the
/// returned guard.
pub fn build_c(name: &str, source: &str) -> (tempfile::TempDir, Module) {
    let dir = tempfile::tempdir().unwrap();
    let wasm = compile_c(dir.path(), name, source);
    let module = Module::decode(&std::fs::read(&wasm).unwrap()).expect("decode");
    (dir, module)
}

/// The 1-based line of `source` that holds `marker`.
pub fn line_of(source: &str, marker: &str) -> u32 {
    source.lines().position(|l| l.contains(marker)).expect("marker") as u32 + 1
}
