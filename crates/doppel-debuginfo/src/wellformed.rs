//! Well-formedness of seed programs (PLDI 2020, section 3.1: a test program
//! must be free of undefined behaviour, or its optimized and unoptimized
//! builds may legitimately disagree).
//!
//! The paper used CompCert's interpreter and UBSan; CompCert is not packaged
//! for Debian 12, so (following `docs`' prior-art notes, section 6) a seed is
//! checked by
//! 1. a clang `-O0 -g -fsanitize=address,undefined -fno-sanitize-recover=all`
//!    build, run once: any sanitizer report, crash, non-zero exit or timeout
//!    rejects it, with the first report line as the detail;
//! 2. optionally ([`CheckConfig::valgrind`], about 1-3 s per Csmith program)
//!    valgrind memcheck on a `gcc -O0 -g` build, which also catches reads of
//!    uninitialized memory (ASan does not); its output must equal the clang
//!    build's (a Csmith program prints a checksum of its globals).
//!
//! Every run of a compiled program goes through
//! [`doppel_core::process::run_limited`]: CPU, file-size and (except for the
//! sanitizer build, whose shadow memory needs terabytes of address space)
//! memory limits, network isolation, and a wall-clock timeout.

use doppel_core::process::{self, Completed, Limits, Sandbox};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::Duration;
use tokio::process::Command;

/// Exit code the sanitizer runtimes and valgrind are told to use for a
/// report, so that a report is told from the program's own exit code.
pub const REPORT_EXIT_CODE: i32 = 99;

/// Environment of every sanitizer run: no leak checking (Csmith programs do
/// not allocate; LeakSanitizer fails under ptrace), the report exit code,
/// symbolized stacks.
pub(crate) const SANITIZER_ENV: [(&str, &str); 3] = [
    ("ASAN_OPTIONS", "detect_leaks=0:exitcode=99:handle_abort=1:symbolize=1"),
    ("UBSAN_OPTIONS", "print_stacktrace=1:exitcode=99:symbolize=1"),
    ("MSAN_OPTIONS", "exitcode=99:symbolize=1"),
];

/// The environment variables through which the sanitizer runtimes are told
/// where their symbolizer is (compiler-rt's `external_symbolizer_path`).
pub const SYMBOLIZER_ENV: [&str; 3] = ["ASAN_SYMBOLIZER_PATH", "MSAN_SYMBOLIZER_PATH", "UBSAN_SYMBOLIZER_PATH"];

/// The `llvm-symbolizer` that matches `clang`'s sanitizer runtimes: the one
/// in the directory of the real compiler binary, `/usr/lib/llvm-N/bin/`
/// on Debian (`clang-19` is a link to `/usr/lib/llvm-19/bin/clang`; the
/// binary is in package `llvm-N`). An older symbolizer found on `PATH`
/// (llvm-14's, from package `llvm`) may fail on a newer clang's DWARF, and
/// the reports then name no source line.
///
/// `clang` is a name on `PATH` or a path.
///
/// Errors: `clang` is not installed, or no `llvm-symbolizer` is beside it
/// (the message names the path looked at and the package).
pub fn symbolizer_for(clang: &str) -> Result<std::path::PathBuf, String> {
    let found = process::which(clang).ok_or_else(|| format!("{clang} is not installed"))?;
    let real = std::fs::canonicalize(&found).map_err(|e| format!("cannot resolve {}: {e}", found.display()))?;
    let dir = real
        .parent()
        .ok_or_else(|| format!("{} has no directory", real.display()))?;
    let symbolizer = dir.join("llvm-symbolizer");
    if symbolizer.is_file() {
        return Ok(symbolizer);
    }
    let package = dir
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .filter(|n| n.starts_with("llvm-"))
        .map(|n| format!(" (Debian package {n})"))
        .unwrap_or_default();
    Err(format!(
        "no llvm-symbolizer for {clang} ({}): {} is missing{package}; without it sanitizer reports name no source line",
        real.display(),
        symbolizer.display()
    ))
}

/// The symbolizer a sanitizer run uses: `configured` when given (it must
/// exist), else [`symbolizer_for`] `clang`.
///
/// Errors: the configured path does not exist, or [`symbolizer_for`]'s.
pub fn resolve_symbolizer(configured: Option<&Path>, clang: &str) -> Result<std::path::PathBuf, String> {
    match configured {
        Some(p) if p.is_file() => Ok(p.to_path_buf()),
        Some(p) => Err(format!(
            "the sanitizer symbolizer {} does not exist; without it sanitizer reports name no source line",
            p.display()
        )),
        None => symbolizer_for(clang),
    }
}

/// Clang versions tried for sanitizer builds, newest first. On the Debian 12
/// machines doppel runs on, the plain `clang` (14) cannot link ASan (its
/// `libclang_rt.asan` archives are not installed) while `clang-16` and
/// `clang-19` with `libclang-rt-N-dev` can.
pub const SANITIZER_CLANGS: [&str; 4] = ["clang-19", "clang-16", "clang-15", "clang"];

/// The first installed compiler of [`SANITIZER_CLANGS`] (`clang` if none).
pub fn sanitizer_clang() -> String {
    SANITIZER_CLANGS
        .iter()
        .find(|c| process::which(c).is_some())
        .unwrap_or(&"clang")
        .to_string()
}

/// How seeds are checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckConfig {
    /// Clang for the ASan+UBSan build; needs its sanitizer runtimes
    /// (`libclang-rt-N-dev`). Default: [`sanitizer_clang`].
    pub clang: String,
    /// GCC for the memcheck build.
    pub gcc: String,
    /// Flags added to both builds (`-I` directories, `-D` macros).
    pub extra_flags: Vec<String>,
    /// Wall-clock limit of one run of the sanitizer build (the PLDI'20
    /// reimplementation uses 10 s). Compiles get [`COMPILE_TIMEOUT`].
    pub timeout: Duration,
    /// Wall-clock limit of the valgrind run (memcheck is 20-50x slower).
    pub valgrind_timeout: Duration,
    /// Limits of every run; the CPU limit should be at least the timeout in
    /// seconds. The memory limit is lifted for the sanitizer build.
    pub limits: Limits,
    /// Also run valgrind memcheck on a `gcc -O0 -g` build.
    pub valgrind: bool,
    /// The `llvm-symbolizer` of the sanitizer runs; `None`: the one
    /// matching [`CheckConfig::clang`] ([`symbolizer_for`]), or, when that
    /// is missing, whatever the runtime finds (a seed check needs no line
    /// numbers, only the report).
    #[serde(default)]
    pub symbolizer: Option<std::path::PathBuf>,
}

/// Wall-clock limit of one compile.
pub const COMPILE_TIMEOUT: Duration = Duration::from_secs(120);

impl Default for CheckConfig {
    fn default() -> Self {
        Self {
            clang: sanitizer_clang(),
            gcc: "gcc".into(),
            extra_flags: vec!["-I/usr/include/csmith".into()],
            timeout: Duration::from_secs(10),
            valgrind_timeout: Duration::from_secs(120),
            limits: Limits {
                cpu_seconds: 120,
                memory_bytes: 2 << 30,
                file_size_bytes: 16 << 20,
            },
            valgrind: false,
            symbolizer: None,
        }
    }
}

/// Why a seed was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// A build failed (the detail is the first error line).
    DoesNotCompile,
    /// ASan or UBSan reported (the detail is the report's first line).
    UbAsanUbsan,
    /// Valgrind memcheck reported an error on the gcc -O0 build.
    UbMemcheck,
    /// The run exceeded its wall-clock timeout or CPU limit.
    Timeout,
    /// The program was killed by a signal (not the CPU limit's).
    Crash,
    /// The program exited non-zero without a report.
    NonzeroExit,
    /// The gcc and clang builds printed different output.
    OutputMismatch,
}

/// The outcome of [`check_seed`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SeedCheck {
    /// No report: the seed is usable.
    Ok {
        /// The exit status.
        exit_code: i32,
        /// Hex SHA-256 of the complete standard output.
        stdout_sha256: String,
        /// The standard output, cut to its first 4 KiB.
        stdout: String,
        /// Seconds spent (builds and runs).
        seconds: f64,
    },
    /// A report, a failed build or a bad exit: the seed is not usable.
    Rejected {
        /// What kind of problem.
        reason: RejectReason,
        /// The first report line (process-id prefixes removed), or the
        /// first error line of a failed build.
        detail: String,
        /// Seconds spent (builds and runs).
        seconds: f64,
    },
}

impl SeedCheck {
    /// Whether the seed passed.
    pub fn is_ok(&self) -> bool {
        matches!(self, SeedCheck::Ok { .. })
    }
}

/// Checks that `source` is free of undefined behaviour as far as ASan+UBSan
/// (and, if configured, valgrind memcheck) can tell, in a temporary
/// directory.
///
/// Never fails: every problem, including a missing compiler, is a
/// [`SeedCheck::Rejected`] (a missing compiler as
/// [`RejectReason::DoesNotCompile`] with the spawn error).
pub async fn check_seed(source: &Path, config: &CheckConfig) -> SeedCheck {
    let start = std::time::Instant::now();
    let result = check_inner(source, config).await;
    let seconds = start.elapsed().as_secs_f64();
    match result {
        Ok((exit_code, out)) => SeedCheck::Ok {
            exit_code,
            stdout_sha256: hex::encode(Sha256::digest(out.as_bytes())),
            stdout: truncate(&out, 4096).to_string(),
            seconds,
        },
        Err((reason, detail)) => SeedCheck::Rejected {
            reason,
            detail,
            seconds,
        },
    }
}

async fn check_inner(source: &Path, config: &CheckConfig) -> Result<(i32, String), (RejectReason, String)> {
    let dir =
        tempfile::tempdir().map_err(|e| (RejectReason::DoesNotCompile, format!("no temporary directory: {e}")))?;
    let exe = dir.path().join("asan-ubsan");
    let mut flags: Vec<String> = [
        "-O0",
        "-g",
        "-w",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all",
    ]
    .map(String::from)
    .to_vec();
    flags.extend(config.extra_flags.iter().cloned());
    compile(&config.clang, &flags, &[source], &exe)
        .await
        .map_err(|d| (RejectReason::DoesNotCompile, d))?;
    let symbolizer = resolve_symbolizer(config.symbolizer.as_deref(), &config.clang).ok();
    let mut cmd = Command::new(&exe);
    if let Some(s) = &symbolizer {
        with_symbolizer(&mut cmd, s);
    }
    let done = run_program(cmd, config.timeout, config.limits.without_memory_limit())
        .await
        .map_err(|e| (RejectReason::Crash, format!("cannot run the program: {e}")))?;
    let clang_code = classify(&done, sanitizer_report(&done.stderr), RejectReason::UbAsanUbsan)?;
    if !config.valgrind {
        return Ok((clang_code, done.stdout));
    }
    let gexe = dir.path().join("gcc-O0");
    let mut flags: Vec<String> = ["-O0", "-g", "-w"].map(String::from).to_vec();
    flags.extend(config.extra_flags.iter().cloned());
    compile(&config.gcc, &flags, &[source], &gexe)
        .await
        .map_err(|d| (RejectReason::DoesNotCompile, d))?;
    let vg = run_program(valgrind_command(&gexe), config.valgrind_timeout, config.limits)
        .await
        .map_err(|e| (RejectReason::Crash, format!("cannot run valgrind: {e}")))?;
    let gcc_code = classify(&vg, valgrind_report(&vg.stderr), RejectReason::UbMemcheck)?;
    if gcc_code != clang_code || vg.stdout != done.stdout {
        return Err((
            RejectReason::OutputMismatch,
            format!(
                "clang: exit {clang_code}, {:?}; gcc: exit {gcc_code}, {:?}",
                truncate(done.stdout.trim(), 200),
                truncate(vg.stdout.trim(), 200)
            ),
        ));
    }
    Ok((clang_code, done.stdout))
}

/// Sorts a finished run into a rejection or its exit code.
fn classify(done: &Completed, report: Option<String>, ub: RejectReason) -> Result<i32, (RejectReason, String)> {
    if done.timed_out {
        return Err((RejectReason::Timeout, "wall-clock timeout".into()));
    }
    if let Some(line) = report {
        return Err((ub, line));
    }
    if let Some(sig) = done.signal {
        if sig == libc::SIGXCPU || sig == libc::SIGKILL {
            return Err((RejectReason::Timeout, format!("killed by signal {sig} (CPU limit)")));
        }
        return Err((RejectReason::Crash, format!("killed by signal {sig}")));
    }
    match done.code {
        Some(0) => Ok(0),
        Some(c) => Err((
            RejectReason::NonzeroExit,
            format!("exit {c}: {}", first_line(&done.stderr).unwrap_or_default()),
        )),
        None => Err((RejectReason::Crash, "no exit status".into())),
    }
}

/// Compiles `units` into `out` with `compiler flags... units... -o out`.
///
/// Errors: the first `error` line of the compiler's output (or its first
/// line, or the spawn error, or a timeout after [`COMPILE_TIMEOUT`]).
pub(crate) async fn compile(compiler: &str, flags: &[String], units: &[&Path], out: &Path) -> Result<(), String> {
    let mut cmd = Command::new(compiler);
    cmd.args(flags).args(units).arg("-o").arg(out);
    let done = process::run(cmd, COMPILE_TIMEOUT, Sandbox::default())
        .await
        .map_err(|e| format!("cannot run {compiler}: {e}"))?;
    if done.timed_out {
        return Err(format!("{compiler} timed out after {COMPILE_TIMEOUT:?}"));
    }
    if done.code != Some(0) {
        let err = done
            .stderr
            .lines()
            .find(|l| l.contains("error"))
            .or_else(|| done.stderr.lines().next())
            .unwrap_or("")
            .trim()
            .to_string();
        return Err(format!("{compiler} failed: {err}"));
    }
    Ok(())
}

/// Runs an untrusted program: limits before exec, network isolation,
/// timeout, sanitizer options in the environment.
pub(crate) async fn run_program(mut cmd: Command, timeout: Duration, limits: Limits) -> std::io::Result<Completed> {
    cmd.envs(SANITIZER_ENV);
    process::run_limited(cmd, timeout, Sandbox::default(), limits).await
}

/// Points every sanitizer runtime of `cmd` at `symbolizer` ([`SYMBOLIZER_ENV`]).
pub(crate) fn with_symbolizer(cmd: &mut Command, symbolizer: &Path) {
    for var in SYMBOLIZER_ENV {
        cmd.env(var, symbolizer);
    }
}

/// `valgrind --tool=memcheck --error-exitcode=99 -q --error-limit=no <exe>`
/// (no error limit: past 1000 distinct errors valgrind would stop reporting,
/// and shadow validation needs every report).
pub(crate) fn valgrind_command(exe: &Path) -> Command {
    let mut cmd = Command::new("valgrind");
    cmd.args([
        "--tool=memcheck",
        "--error-exitcode=99",
        "-q",
        "--error-limit=no",
        "--leak-check=no",
        "--num-callers=30",
    ])
    .arg(exe);
    cmd
}

/// The first line of a sanitizer report in `stderr` (ASan/MSan `ERROR:` or
/// a UBSan `runtime error:`), without the `==pid==` prefix.
pub(crate) fn sanitizer_report(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .map(strip_pid)
        .find(|l| {
            l.starts_with("ERROR: ")
                || l.contains("runtime error:")
                || l.starts_with("WARNING: MemorySanitizer")
                || l.starts_with("AddressSanitizer:")
        })
        .map(str::to_string)
}

/// The first line of a valgrind error in `stderr` (run with `-q`, valgrind
/// prints only errors), without the `==pid==` prefix.
pub(crate) fn valgrind_report(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("=="))
        .map(strip_pid)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// `==1234== text` -> `text`.
pub(crate) fn strip_pid(line: &str) -> &str {
    let l = line.trim();
    if let Some(rest) = l.strip_prefix("==")
        && let Some(end) = rest.find("==")
        && rest[..end].chars().all(|c| c.is_ascii_digit())
    {
        return rest[end + 2..].trim();
    }
    l
}

fn first_line(s: &str) -> Option<String> {
    s.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

/// At most `max` bytes of `s`, cut at a character boundary.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::PathBuf;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// The first Csmith seed from 1 up that is at least 4000 bytes.
    pub(crate) async fn first_csmith_seed(dir: &Path) -> crate::seed::Seed {
        for n in 1..50 {
            match crate::seed::generate(n, &crate::seed::CsmithConfig::default(), dir).await {
                Ok(s) => return s,
                Err(crate::seed::SeedError::TooSmall { .. }) => continue,
                Err(e) => panic!("{e}"),
            }
        }
        panic!("no Csmith seed of 4000 bytes among 1..50")
    }

    #[test]
    fn the_symbolizer_is_the_one_beside_the_real_clang() {
        // clang-19 is /usr/bin/clang-19 -> /usr/lib/llvm-19/bin/clang.
        assert_eq!(
            symbolizer_for("clang-19").unwrap(),
            Path::new("/usr/lib/llvm-19/bin/llvm-symbolizer")
        );
        assert!(
            symbolizer_for("/nonexistent/clang")
                .unwrap_err()
                .contains("not installed")
        );
        // A clang without a symbolizer beside it: the error names the path.
        let dir = tempfile::tempdir().unwrap();
        let clang = dir.path().join("clang");
        std::fs::copy("/usr/bin/true", &clang).unwrap();
        let e = symbolizer_for(&clang.display().to_string()).unwrap_err();
        assert!(
            e.contains(&dir.path().join("llvm-symbolizer").display().to_string()),
            "{e}"
        );
        let e = resolve_symbolizer(Some(Path::new("/nonexistent/llvm-symbolizer")), "clang-19").unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn report_lines_lose_their_pid() {
        let asan = "=================================================================\n==4711==ERROR: AddressSanitizer: stack-buffer-overflow on address 0x1\n";
        assert_eq!(
            sanitizer_report(asan).unwrap(),
            "ERROR: AddressSanitizer: stack-buffer-overflow on address 0x1"
        );
        let ub = "a.c:3:5: runtime error: signed integer overflow: 2147483647 + 1\n";
        assert_eq!(sanitizer_report(ub).unwrap(), ub.trim());
        let vg = "==12== Conditional jump or move depends on uninitialised value(s)\n==12==    at 0x1: main (a.c:4)\n";
        assert_eq!(
            valgrind_report(vg).unwrap(),
            "Conditional jump or move depends on uninitialised value(s)"
        );
        assert_eq!(sanitizer_report("checksum = 1\n"), None);
    }

    #[tokio::test]
    async fn clean_overflowing_crashing_and_broken_programs() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = CheckConfig {
            valgrind: true,
            ..CheckConfig::default()
        };
        let ok = write(
            dir.path(),
            "ok.c",
            "#include <stdio.h>\nint main(void) { printf(\"hi\\n\"); return 0; }\n",
        );
        let r = check_seed(&ok, &cfg).await;
        let SeedCheck::Ok { exit_code, stdout, .. } = &r else {
            panic!("{r:?}")
        };
        assert_eq!((*exit_code, stdout.as_str()), (0, "hi\n"));

        let ub = write(
            dir.path(),
            "ub.c",
            "int main(void) {\n  int a[4] = {0};\n  volatile int i = 4;\n  return a[i];\n}\n",
        );
        let r = check_seed(&ub, &cfg).await;
        let SeedCheck::Rejected { reason, detail, .. } = &r else {
            panic!("{r:?}")
        };
        assert_eq!(*reason, RejectReason::UbAsanUbsan, "{detail}");
        assert!(
            detail.contains("out of bounds") || detail.contains("stack-buffer-overflow"),
            "{detail}"
        );

        let ov = write(
            dir.path(),
            "ov.c",
            "int main(void) {\n  volatile int x = 2147483647;\n  return x + 1 > 0 ? 0 : 1;\n}\n",
        );
        let r = check_seed(&ov, &cfg).await;
        assert!(
            matches!(&r, SeedCheck::Rejected { reason: RejectReason::UbAsanUbsan, detail, .. } if detail.contains("signed integer overflow")),
            "{r:?}"
        );

        let uninit = write(
            dir.path(),
            "uninit.c",
            "#include <stdio.h>\nint main(void) {\n  int x;\n  if (x) printf(\"a\\n\");\n  return 0;\n}\n",
        );
        let r = check_seed(&uninit, &cfg).await;
        assert!(
            matches!(&r, SeedCheck::Rejected { reason: RejectReason::UbMemcheck, detail, .. } if detail.contains("uninitialised")),
            "{r:?}"
        );

        let bad = write(dir.path(), "bad.c", "int main(void) { return nope; }\n");
        let r = check_seed(&bad, &cfg).await;
        assert!(
            matches!(
                &r,
                SeedCheck::Rejected {
                    reason: RejectReason::DoesNotCompile,
                    ..
                }
            ),
            "{r:?}"
        );

        let exit = write(dir.path(), "exit.c", "int main(void) { return 3; }\n");
        let r = check_seed(&exit, &cfg).await;
        assert!(
            matches!(
                &r,
                SeedCheck::Rejected {
                    reason: RejectReason::NonzeroExit,
                    ..
                }
            ),
            "{r:?}"
        );

        let spin = write(dir.path(), "spin.c", "int main(void) { for (;;) {} }\n");
        let fast = CheckConfig {
            timeout: Duration::from_secs(2),
            ..cfg.clone()
        };
        let r = check_seed(&spin, &fast).await;
        assert!(
            matches!(
                &r,
                SeedCheck::Rejected {
                    reason: RejectReason::Timeout,
                    ..
                }
            ),
            "{r:?}"
        );
        // Serializable, with the reason spelled in snake case.
        let json = serde_json::to_string(&r).unwrap();
        assert!(
            json.contains("\"outcome\":\"rejected\"") && json.contains("\"timeout\""),
            "{json}"
        );
    }

    #[tokio::test]
    async fn a_csmith_seed_passes_both_checks() {
        let dir = tempfile::tempdir().unwrap();
        let seed = first_csmith_seed(dir.path()).await;
        let cfg = CheckConfig {
            valgrind: true,
            ..CheckConfig::default()
        };
        let r = check_seed(&seed.path, &cfg).await;
        match &r {
            SeedCheck::Ok { stdout, seconds, .. } => {
                assert!(stdout.starts_with("checksum = "), "{stdout}");
                eprintln!(
                    "seed check of csmith-{} ({} bytes): {seconds:.2} s",
                    seed.seed, seed.size_bytes
                );
            }
            // A Csmith program may still loop for long; that is a valid verdict.
            SeedCheck::Rejected { reason, .. } => assert_eq!(*reason, RejectReason::Timeout, "{r:?}"),
        }
    }
}
