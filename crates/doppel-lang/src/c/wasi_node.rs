//! Concrete runs of a wasm32-wasi program under node's WASI (`node:wasi`,
//! preview1): the reference runtime that wasm builds are cross-checked
//! against (darwin-measured.md section 1.3: node = wasmtime = native gcc
//! on all 196 runs of its sample).

use crate::c::run::{ProgramRun, run_with_stdin};
use doppel_core::process::Limits;
use std::path::Path;
use std::time::Duration;
use tokio::process::Command;

/// The runner: instantiates the module with node's WASI (stdin, stdout and
/// stderr inherited, no environment, argv = program name plus the
/// arguments) and exits with the program's exit code; a trap is an
/// uncaught `RuntimeError` (exit code 1, the message on stderr).
const RUNNER: &str = r#"'use strict';
const { WASI } = require('node:wasi');
const fs = require('node:fs');
const [wasmPath, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: ['prog', ...args], env: {}, returnOnExit: true });
const mod = new WebAssembly.Module(fs.readFileSync(wasmPath));
const inst = new WebAssembly.Instance(mod, wasi.getImportObject());
process.exitCode = wasi.start(inst);
"#;

/// Runs `wasm` with `args` and `stdin` under `node` (Debian package
/// `nodejs`), killed with its tree after `timeout`. `limits` bounds CPU
/// time and output; node's address space is left unlimited (V8 reserves
/// far more than it uses).
///
/// Errors: node cannot be started or the runner script cannot be written.
pub async fn run_wasm_node(
    wasm: &Path,
    args: &[String],
    stdin: &[u8],
    timeout: Duration,
    limits: Limits,
) -> std::io::Result<ProgramRun> {
    let dir = tempfile::tempdir()?;
    let runner = dir.path().join("run-wasi.js");
    std::fs::write(&runner, RUNNER)?;
    let mut cmd = Command::new("node");
    cmd.arg("--no-warnings").arg(&runner).arg(wasm).args(args);
    run_with_stdin(cmd, stdin, timeout, limits.without_memory_limit()).await
}
