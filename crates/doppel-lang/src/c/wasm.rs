//! Building C programs for `wasm32-wasi` (clang-16, wasm-ld-16, Debian's
//! wasi-libc and `libclang-rt-16-dev-wasm32`) and the native gcc reference
//! build of the same source, for regression root-causing (issue 16; the
//! flags are those measured on all 280 Codeflaws programs in
//! ../shared/notes/darwin-measured.md section 1.2).
//!
//! Both builds compile the same *prepared* source ([`prepare_source`]:
//! MSVCRT's `%I64d`/`%I64u` become `%lld`/`%llu`, line numbers unchanged)
//! with the same renames (a user function or global named like a symbol
//! wasi-libc defines, e.g. `void read()`, is renamed with
//! `-D<name>=doppel_user_<name>`; otherwise wasm-ld links the user's
//! function in place of libc's and `scanf` traps in a signature-mismatch
//! stub). The wasm build is
//!
//! ```text
//! clang-16 --target=wasm32-wasi -O0 -g -w -Wno-error=implicit-function-declaration
//!   -Wno-error=implicit-int -Wno-error=return-type -Wno-error=int-conversion
//!   -Wno-error=incompatible-pointer-types -Wno-error=incompatible-function-pointer-types
//!   -include stdio.h -include stdlib.h -include string.h -include math.h -include ctype.h
//!   -I <shim> [-D...] prog.c <shim>/gets_shim.o -o prog.wasm
//!   -Wl,-z,stack-size=8388608 -Wl,--stack-first
//! ```
//!
//! (an 8 MiB stack placed before the data: lld's default 64 KiB stack after
//! the data lets an overflow corrupt globals silently). `gets_shim.o`
//! defines `gets` on `fgets` (wasi-libc has no `gets`) and a constructor
//! that makes stdout unbuffered (so each write to fd 1 happens inside the
//! statement that printed it, which `doppel_concolic::Observe::writes`
//! attributes; the output is the same), and is compiled once per cache. If the force-included headers clash with the program (a
//! file-scope `y0` or `index`), the build is retried without them. The
//! native build is `gcc -O0 -g -w -I <shim> -include ... prog.c -lm`.
//!
//! Entries live in a content-addressed cache like [`crate::c::BuildCache`]:
//! `<cache>/wasm-<sha256>/` or `<cache>/native-<sha256>/`, key over the
//! prepared source, the compiler's `--version` line, the flags and the
//! shim; each holds the prepared source under its own name (compiled from
//! there, with `-fdebug-prefix-map`, so DWARF names the cached copy), the
//! output (`prog.wasm` / `prog`) and `build.log`.

use crate::c::run::{ProgramRun, run_with_stdin};
use doppel_core::process::{self, Limits, Sandbox};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;
use tokio::process::Command;

/// The clang that targets wasm32-wasi (Debian package `clang-16`).
pub const WASM_CLANG: &str = "clang-16";
/// wasi-libc's static libc (Debian package `wasi-libc`), whose archive
/// symbol table lists the names a user definition must not take.
pub const WASI_LIBC: &str = "/usr/lib/wasm32-wasi/libc.a";
/// Longest one compilation may take.
pub const WASM_COMPILE_TIMEOUT: Duration = Duration::from_secs(120);

const WARNINGS: &[&str] = &[
    "-w",
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=implicit-int",
    "-Wno-error=return-type",
    "-Wno-error=int-conversion",
    "-Wno-error=incompatible-pointer-types",
    "-Wno-error=incompatible-function-pointer-types",
];
const INCLUDES: &[&str] = &["stdio.h", "stdlib.h", "string.h", "math.h", "ctype.h"];
const STACK: &[&str] = &["-Wl,-z,stack-size=8388608", "-Wl,--stack-first"];

const GETS_SHIM: &str = "/* gets(3) for wasi-libc, which lacks it: fgets without the newline. */
#include <stdio.h>
#include <string.h>
char *gets(char *s) {
  if (!fgets(s, 0x7fffffff, stdin)) return 0;
  size_t n = strlen(s);
  if (n && s[n - 1] == '\\n') s[n - 1] = 0;
  return s;
}
/* Standard output unbuffered before main: every write reaches fd_write
   from the statement that made it (doppel-localize attributes output to
   source lines). The bytes written are the same. */
__attribute__((constructor)) static void doppel_unbuffered_stdout(void) {
  setvbuf(stdout, 0, _IONBF, 0);
}
";

/// Why a program could not be built (a named outcome, with the compiler's
/// message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum WasmBuildError {
    /// A tool or library of the toolchain is not installed.
    #[error("toolchain missing: {0} (apt-get install clang-16 lld-16 wasi-libc libclang-rt-16-dev-wasm32 gcc)")]
    ToolchainMissing(String),
    /// The compiler rejected the program; its diagnostics (error lines first).
    #[error("does not compile: {0}")]
    CompileFailed(String),
    /// The compiler did not finish in time.
    #[error("the compiler did not finish within {0} s")]
    Timeout(u64),
    /// The cache could not be read or written.
    #[error("I/O error: {0}")]
    Io(String),
}

impl From<std::io::Error> for WasmBuildError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e.to_string())
    }
}

/// A built program: the prepared source in the cache and the output.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BuiltProgram {
    /// The prepared source the output was compiled from (its DWARF names it).
    pub source: PathBuf,
    /// `prog.wasm` (wasm build) or `prog` (native build).
    pub output: PathBuf,
    /// The cache key (hex SHA-256).
    pub hash: String,
    /// User names renamed because wasi-libc defines them.
    pub renamed: Vec<String>,
    /// Whether the standard headers were force-included (false after the
    /// fallback for programs that clash with them).
    pub force_included: bool,
}

/// Rewrites MSVCRT's 64-bit `printf`/`scanf` length modifier (`%I64d`,
/// `%I64i`, `%I64u`, `%I64x`, `%I64X`) to C99's `ll`. musl rejects `I64`
/// (prints nothing), glibc reads it as a flag and a width. Line numbers stay.
pub fn prepare_source(text: &str) -> String {
    let mut out = text.to_string();
    for c in ["d", "i", "u", "x", "X"] {
        out = out.replace(&format!("%I64{c}"), &format!("%ll{c}"));
    }
    out
}

/// Names defined at file scope of `text` (functions and variables), from
/// tree-sitter-c.
pub fn file_scope_definitions(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&tree_sitter_c::LANGUAGE.into()).is_err() {
        return names;
    }
    let Some(tree) = parser.parse(text, None) else {
        return names;
    };
    let root = tree.root_node();
    let mut cursor = root.walk();
    for item in root.children(&mut cursor) {
        match item.kind() {
            "function_definition" => {
                if let Some(d) = item.child_by_field_name("declarator") {
                    declared_name(d, text, &mut names);
                }
            }
            "declaration" => {
                // `int f(void);` declares without defining; skip prototypes.
                let mut c = item.walk();
                for d in item.children_by_field_name("declarator", &mut c) {
                    if !is_function_declarator(d) {
                        declared_name(d, text, &mut names);
                    }
                }
            }
            _ => {}
        }
    }
    names
}

fn is_function_declarator(mut d: tree_sitter::Node) -> bool {
    loop {
        match d.kind() {
            "function_declarator" => return true,
            "pointer_declarator" | "parenthesized_declarator" => match d.child_by_field_name("declarator") {
                Some(n) => d = n,
                None => return false,
            },
            _ => return false,
        }
    }
}

fn declared_name(mut d: tree_sitter::Node, text: &str, out: &mut BTreeSet<String>) {
    for _ in 0..32 {
        if d.kind() == "identifier" {
            out.insert(text[d.byte_range()].to_string());
            return;
        }
        match d.child_by_field_name("declarator") {
            Some(n) => d = n,
            None => {
                // parenthesized_declarator has no field name for its inner declarator.
                match d.named_child(0) {
                    Some(n) if d.kind() == "parenthesized_declarator" => d = n,
                    _ => return,
                }
            }
        }
    }
}

/// The global symbols wasi-libc defines (its archive symbol table), read
/// once per process.
///
/// Errors: the archive is missing or unreadable.
pub fn wasi_libc_symbols() -> Result<&'static BTreeSet<String>, WasmBuildError> {
    static SYMS: OnceLock<Result<BTreeSet<String>, WasmBuildError>> = OnceLock::new();
    SYMS.get_or_init(|| {
        let data =
            std::fs::read(WASI_LIBC).map_err(|e| WasmBuildError::ToolchainMissing(format!("{WASI_LIBC}: {e}")))?;
        let archive = object::read::archive::ArchiveFile::parse(&*data)
            .map_err(|e| WasmBuildError::Io(format!("{WASI_LIBC}: {e}")))?;
        let mut names = BTreeSet::new();
        if let Ok(Some(syms)) = archive.symbols() {
            for s in syms.flatten() {
                names.insert(String::from_utf8_lossy(s.name()).into_owned());
            }
        }
        if names.is_empty() {
            return Err(WasmBuildError::Io(format!("{WASI_LIBC} has no symbol table")));
        }
        Ok(names)
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The `-D` renames `text` needs: its file-scope definitions that wasi-libc
/// also defines (`main` excepted).
///
/// Errors: wasi-libc is missing.
pub fn libc_clash_renames(text: &str) -> Result<Vec<String>, WasmBuildError> {
    let libc = wasi_libc_symbols()?;
    Ok(file_scope_definitions(text)
        .into_iter()
        .filter(|n| n != "main" && libc.contains(n))
        .collect())
}

/// A content-addressed cache of wasm and native builds of C programs.
#[derive(Debug, Clone)]
pub struct WasmBuildCache {
    dir: PathBuf,
}

enum Target {
    Wasm,
    Native,
}

impl WasmBuildCache {
    /// A cache rooted at `dir` (created, made absolute and canonical as in
    /// [`crate::c::cache_root`]).
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir: crate::c::cache_root(dir),
        }
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Builds `source` (a `.c` file, or `.c.gz`) for wasm32-wasi (or finds
    /// it in the cache).
    ///
    /// Errors: [`WasmBuildError`] (a program that does not compile is
    /// `CompileFailed` with the compiler's messages).
    pub async fn build_wasm(&self, source: &Path) -> Result<BuiltProgram, WasmBuildError> {
        self.build(source, Target::Wasm).await
    }

    /// Builds the native gcc reference of `source` (or finds it in the cache).
    ///
    /// Errors: as for [`WasmBuildCache::build_wasm`].
    pub async fn build_native(&self, source: &Path) -> Result<BuiltProgram, WasmBuildError> {
        self.build(source, Target::Native).await
    }

    async fn build(&self, source: &Path, target: Target) -> Result<BuiltProgram, WasmBuildError> {
        // Codeflaws stores a few programs gzipped (`*.c.gz`).
        let raw = crate::c::codeflaws::read_bytes(source).map_err(WasmBuildError::Io)?;
        let text = prepare_source(&String::from_utf8_lossy(&raw));
        let file_name = source
            .file_name()
            .map(|f| f.to_string_lossy().trim_end_matches(".gz").to_string())
            .filter(|n| n.ends_with(".c") && !n.starts_with('-'))
            .unwrap_or_else(|| "prog.c".into());
        let renamed = libc_clash_renames(&text)?;
        let (compiler, prefix, out_name) = match target {
            Target::Wasm => (WASM_CLANG, "wasm", "prog.wasm"),
            Target::Native => ("gcc", "native", "prog"),
        };
        let compiler_path =
            process::which(compiler).ok_or_else(|| WasmBuildError::ToolchainMissing(compiler.to_string()))?;
        let shim = self.shim_dir().await?;
        if matches!(target, Target::Wasm) {
            self.gets_shim(&shim).await?;
        }
        let version = compiler_version(&compiler_path).await;
        let mut h = Sha256::new();
        for part in [
            text.as_bytes(),
            file_name.as_bytes(),
            version.as_bytes(),
            GETS_SHIM.as_bytes(),
            prefix.as_bytes(),
        ] {
            h.update(part);
            h.update([0]);
        }
        for r in &renamed {
            h.update(r.as_bytes());
            h.update([0]);
        }
        let hash = hex::encode(h.finalize());
        let entry = self.dir.join(format!("{prefix}-{hash}"));
        let done = |force_included: bool| BuiltProgram {
            source: entry.join(&file_name),
            output: entry.join(out_name),
            hash: hash.clone(),
            renamed: renamed.clone(),
            force_included,
        };
        if entry.join(out_name).is_file() {
            let fi = !entry.join("no-force-include").exists();
            return Ok(done(fi));
        }
        let tmp = self.dir.join(format!(".tmp-{prefix}-{hash}-{}", std::process::id()));
        let _ = tokio::fs::remove_dir_all(&tmp).await;
        tokio::fs::create_dir_all(&tmp).await?;
        tokio::fs::write(tmp.join(&file_name), &text).await?;
        let mut first_error = None;
        for force_include in [true, false] {
            let mut cmd = Command::new(&compiler_path);
            cmd.current_dir(&tmp);
            if matches!(target, Target::Wasm) {
                cmd.arg("--target=wasm32-wasi");
            }
            cmd.args(["-O0", "-g"]);
            match target {
                Target::Wasm => cmd.args(WARNINGS),
                // gcc 12 only warns where clang-16 errs; it rejects clang's -Wno-error= names.
                Target::Native => cmd.arg("-w"),
            };
            if force_include {
                for i in INCLUDES {
                    cmd.arg("-include").arg(i);
                }
            }
            cmd.arg("-I").arg(&shim);
            for r in &renamed {
                cmd.arg(format!("-D{r}=doppel_user_{r}"));
            }
            cmd.arg(format!("-fdebug-prefix-map={}={}", tmp.display(), entry.display()));
            cmd.arg(&file_name);
            match target {
                Target::Wasm => {
                    cmd.arg(shim.join("gets_shim.o")).args(["-o", out_name]).args(STACK);
                }
                Target::Native => {
                    cmd.args(["-o", out_name, "-lm"]);
                }
            }
            let r = process::run(cmd, WASM_COMPILE_TIMEOUT, Sandbox::default()).await?;
            if r.timed_out {
                let _ = tokio::fs::remove_dir_all(&tmp).await;
                return Err(WasmBuildError::Timeout(WASM_COMPILE_TIMEOUT.as_secs()));
            }
            tokio::fs::write(tmp.join("build.log"), &r.stderr).await?;
            if r.code == Some(0) && tmp.join(out_name).is_file() {
                if !force_include {
                    tokio::fs::write(tmp.join("no-force-include"), b"").await?;
                }
                if tokio::fs::rename(&tmp, &entry).await.is_err() {
                    let _ = tokio::fs::remove_dir_all(&tmp).await;
                }
                return Ok(done(force_include));
            }
            first_error.get_or_insert_with(|| diagnostics(&r.stderr));
        }
        let _ = tokio::fs::remove_dir_all(&tmp).await;
        Err(WasmBuildError::CompileFailed(first_error.unwrap_or_default()))
    }

    /// `<cache>/shim/`: an empty `conio.h` (old DOS programs include it).
    async fn shim_dir(&self) -> Result<PathBuf, WasmBuildError> {
        let dir = self.dir.join("shim");
        tokio::fs::create_dir_all(&dir).await?;
        if !dir.join("conio.h").is_file() {
            tokio::fs::write(dir.join("conio.h"), b"/* empty: doppel's conio.h shim */\n").await?;
        }
        Ok(dir)
    }

    /// `<shim>/gets_shim.o`, compiled once for wasm32-wasi.
    async fn gets_shim(&self, shim: &Path) -> Result<(), WasmBuildError> {
        let obj = shim.join("gets_shim.o");
        let src = shim.join("gets_shim.c");
        let current = tokio::fs::read_to_string(&src).await.unwrap_or_default();
        if obj.is_file() && current == GETS_SHIM {
            return Ok(());
        }
        let tmp_src = shim.join(format!(".gets_shim-{}.c", std::process::id()));
        let tmp_obj = shim.join(format!(".gets_shim-{}.o", std::process::id()));
        tokio::fs::write(&tmp_src, GETS_SHIM).await?;
        let mut cmd = Command::new(WASM_CLANG);
        cmd.args(["--target=wasm32-wasi", "-O0", "-g", "-c"])
            .arg(&tmp_src)
            .arg("-o")
            .arg(&tmp_obj);
        let r = process::run(cmd, WASM_COMPILE_TIMEOUT, Sandbox::default()).await?;
        if r.code != Some(0) {
            let _ = tokio::fs::remove_file(&tmp_src).await;
            return Err(WasmBuildError::ToolchainMissing(format!(
                "cannot compile the gets shim: {}",
                diagnostics(&r.stderr)
            )));
        }
        tokio::fs::rename(&tmp_obj, &obj).await?;
        tokio::fs::rename(&tmp_src, &src).await?;
        Ok(())
    }
}

/// The compiler's error lines (at most 40), or its last 40 lines.
fn diagnostics(stderr: &str) -> String {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).take(40).collect();
    if errors.is_empty() {
        let all: Vec<&str> = stderr.lines().collect();
        all[all.len().saturating_sub(40)..].join("\n")
    } else {
        errors.join("\n")
    }
}

async fn compiler_version(compiler: &Path) -> String {
    let mut cmd = Command::new(compiler);
    cmd.arg("--version");
    match process::run(cmd, Duration::from_secs(10), Sandbox::NONE).await {
        Ok(done) => done.stdout.lines().next().unwrap_or("").to_string(),
        Err(_) => String::new(),
    }
}

/// Runs a native build with `stdin`, under `limits` and `timeout`
/// (the notes run the reference with an unlimited stack; `limits` bounds
/// CPU, memory and output).
///
/// Errors: the program cannot be started.
pub async fn run_native(
    program: &BuiltProgram,
    stdin: &[u8],
    timeout: Duration,
    limits: Limits,
) -> std::io::Result<ProgramRun> {
    let mut cmd = Command::new(&program.output);
    if let Some(dir) = program.output.parent() {
        cmd.current_dir(dir);
    }
    run_with_stdin(cmd, stdin, timeout, limits).await
}
