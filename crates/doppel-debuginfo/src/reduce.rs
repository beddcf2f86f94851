//! Test-case reduction of a finding with C-Vise: the interestingness script
//! ([`interestingness_script`]) and the driver ([`reduce`]).
//!
//! A finding is a program `a.c` (exactly as it was checked: the original
//! text for a plain build, the line-augmented text for an augmented one), a
//! line s, a variable v, the -O0 reference value, and a compiler, level and
//! debugger that show a wrong value. C-Vise renumbers lines, so s is marked
//! by the comment [`MARKER`] (`/*DOPPEL_S*/`) written at column 1 of s: a
//! comment changes neither the code nor any line number, whereas a barrier
//! call added at s changes code generation and can make the finding vanish.
//! The reduced program must contain exactly one marker, and s is its line
//! ([`marker_line`]).
//!
//! The program may call the line-augmentation barrier `opt_me_not()` any
//! number of times (zero included); its unit `opt_me_not.c` is always
//! compiled as a translation unit of its own and linked (harmless when
//! unused), and `a.c` must not define it.
//!
//! Reduction keeps only variants that are still the *same* bug, so the
//! script re-checks every condition of a sound finding (prior-art notes,
//! section 5), each under `timeout`:
//! 1. exactly one marker in `a.c`, and no definition of `opt_me_not` in
//!    `a.c`;
//! 2. no C-Vise artefact the compilers accept silently: a `-fsyntax-only`
//!    pass with the warnings of [`ReduceSpec::warning_errors`] as errors
//!    (implicit int, implicit declarations, missing returns, int/pointer
//!    conversions); the -O0 and -Ox builds succeed (`-g -w`, the barrier its
//!    own translation unit, rewritten by the script from
//!    [`ReduceSpec::barrier_source`] so that the reduced variant cannot change
//!    it);
//! 3. no undefined behaviour: a clang `-fsanitize=address,undefined
//!    -fno-sanitize-recover=all` build runs to exit status 0 without a
//!    sanitizer report, and the shadow program (`a.c` with the marker
//!    replaced by a print of v, by `sed`, so that the print runs right before
//!    the statement of line s) built with `-fsanitize=memory` runs to exit
//!    status 0 without a report; for an integer or pointer v its first print
//!    must equal the reference value;
//! 4. the debugger part, delegated to `doppel debuginfo probe` (contract in
//!    [`interestingness_script`]).
//!
//! The script uses only `sh` (builtins `printf`, `test`, `case`), `timeout`,
//! the compilers, `sed` and `grep`.

use crate::VarKind;
use crate::toolchain::COMMON_FLAGS;
use doppel_core::process::{self, Sandbox};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::process::Command;

/// The barrier translation unit of line augmentation.
pub const BARRIER_SOURCE: &str = "void opt_me_not(void){__asm__ volatile(\"\" ::: \"memory\");}\n";

/// The marker of line s: a comment written at column 1 of s (it changes
/// neither the generated code nor any line number).
pub const MARKER: &str = "/*DOPPEL_S*/";

/// [`MARKER`] as a basic regular expression (`grep`, `sed`), without the
/// delimiter `/` escaped.
const MARKER_BRE: &str = "/\\*DOPPEL_S\\*/";

/// Which wrong values count as the same bug.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum WrongClass {
    /// The debugger must show exactly `actual` (the finding's wrong value).
    Same {
        /// The wrong value, normalized.
        actual: String,
    },
    /// Any value other than the reference (optimized-out and not-available
    /// do not count as values).
    Any,
}

/// What a reduced variant must still exhibit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReduceSpec {
    /// The variable v, as named in the source.
    pub variable: String,
    /// Its kind: decides the shadow print (integers and pointers are
    /// compared with the reference; other kinds are only read under MSan).
    pub kind: VarKind,
    /// PRINT(P, s, v): the value the -O0 build shows (decimal for integers,
    /// `null`/`non-null` for pointers).
    pub reference_value: String,
    /// Which wrong values count as the same bug.
    pub wrong: WrongClass,
    /// The compiler under test (path or name on `PATH`).
    pub compiler: String,
    /// The optimization level, without the dash (`O2`).
    pub level: String,
    /// `gdb` or `lldb`.
    pub debugger: String,
    /// Clang: the culprit pass (as [`crate::bisect::Culprit::pass`]) the
    /// variant must still bisect to.
    pub culprit: Option<String>,
    /// GCC: culprit flags (`-ftree-pre`) whose removal must still cure the
    /// variant.
    pub culprit_flags: Vec<String>,
    /// The clang that builds the sanitizer binaries (`clang-19`: the Debian
    /// 12 clang-14 has no sanitizer runtimes installed here).
    pub sanitizer_compiler: String,
    /// Warnings made errors in the syntax check (`implicit-int` for
    /// `-Werror=implicit-int`).
    pub warning_errors: Vec<String>,
    /// Text of the barrier unit written next to every variant.
    pub barrier_source: String,
    /// Seconds per compile.
    pub compile_timeout: u32,
    /// Seconds per run of a sanitizer binary.
    pub run_timeout: u32,
    /// Seconds for the probe (two builds, two debugger sessions, plus a
    /// culprit re-check when asked: a clang re-bisection is about ten more
    /// build-and-check rounds).
    pub probe_timeout: u32,
    /// C-Vise jobs (`--n`).
    pub jobs: u32,
}

/// Warnings that signal a reduction artefact rather than the program's
/// meaning; made errors by default.
pub const DEFAULT_WARNING_ERRORS: [&str; 6] = [
    "implicit-int",
    "implicit-function-declaration",
    "return-type",
    "int-conversion",
    "incompatible-pointer-types",
    "main-return-type",
];

impl ReduceSpec {
    /// A spec with the default sanitizer compiler (`clang-19`), warnings,
    /// barrier, timeouts (30 s per compile, 10 s per run, 120 s per probe)
    /// and one job per core; no culprit.
    pub fn new(
        variable: &str,
        kind: VarKind,
        reference_value: &str,
        wrong: WrongClass,
        compiler: &str,
        level: &str,
        debugger: &str,
    ) -> ReduceSpec {
        ReduceSpec {
            variable: variable.to_string(),
            kind,
            reference_value: reference_value.to_string(),
            wrong,
            compiler: compiler.to_string(),
            level: level.trim_start_matches('-').to_string(),
            debugger: debugger.to_string(),
            culprit: None,
            culprit_flags: Vec::new(),
            sanitizer_compiler: "clang-19".to_string(),
            warning_errors: DEFAULT_WARNING_ERRORS.iter().map(|s| s.to_string()).collect(),
            barrier_source: BARRIER_SOURCE.to_string(),
            compile_timeout: 30,
            run_timeout: 10,
            probe_timeout: 120,
            jobs: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(2),
        }
    }

    /// The probe's arguments after `doppel` (see [`interestingness_script`]).
    pub fn probe_args(&self) -> Vec<String> {
        let mut a: Vec<String> = [
            "debuginfo",
            "probe",
            "--source",
            "a.c",
            "--barrier",
            "opt_me_not.c",
            "--variable",
            &self.variable,
            "--compiler",
            &self.compiler,
            "--level",
            &self.level,
            "--debugger",
            &self.debugger,
            "--expect-wrong",
            &self.reference_value,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        match &self.wrong {
            WrongClass::Same { actual } => {
                a.extend(["--wrong-class".into(), "same".into(), "--actual".into(), actual.clone()]);
            }
            WrongClass::Any => a.extend(["--wrong-class".into(), "any".into()]),
        }
        if let Some(p) = &self.culprit {
            a.extend(["--culprit".into(), p.clone()]);
        }
        for f in &self.culprit_flags {
            a.extend(["--culprit-flag".into(), f.clone()]);
        }
        a
    }
}

/// Quotes `s` for POSIX sh (single quotes, `'` as `'\''`).
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The C statement that replaces the marker in the shadow program (it runs
/// right before the statement of line s), with a
/// `DOPPEL_SHADOW ` prefix so the first print is found among the program's
/// own output. Integers print in decimal (`%lld`/`%llu`), pointers as
/// `null`/`non-null`, arrays element by element (read only, not compared),
/// other kinds take the address only (nothing to compare; MSan still checks
/// the program).
fn shadow_print(var: &str, kind: &VarKind) -> String {
    match kind {
        VarKind::Integer { signed: true, .. } => {
            format!("printf(\"DOPPEL_SHADOW %lld\\n\", (long long)({var}));")
        }
        VarKind::Integer { signed: false, .. } => {
            format!("printf(\"DOPPEL_SHADOW %llu\\n\", (unsigned long long)({var}));")
        }
        VarKind::Pointer => format!("printf(\"DOPPEL_SHADOW %s\\n\", ({var}) ? \"non-null\" : \"null\");"),
        VarKind::Array { len, .. } => format!(
            "{{ unsigned doppel_i; printf(\"DOPPEL_SHADOW {{\"); for (doppel_i = 0; doppel_i < {len}u; doppel_i++) \
             printf(doppel_i ? \", %lld\" : \"%lld\", (long long)({var})[doppel_i]); printf(\"}}\\n\"); }}"
        ),
        VarKind::Struct { .. } | VarKind::Other => format!("printf(\"DOPPEL_SHADOW\\n\"); (void)&({var});"),
    }
}

/// Escapes a sed replacement text: `\`, `&` and the delimiter `/`.
fn sed_replacement(s: &str) -> String {
    s.replace('\\', "\\\\").replace('&', "\\&").replace('/', "\\/")
}

/// The interestingness script for `spec`: a POSIX sh script, run by C-Vise
/// with the variant `a.c` in the current directory, exiting 0 iff the
/// variant is interesting (any other status: not). On failure it prints
/// `doppel-reduce: step N: reason` to stderr (C-Vise ignores it; [`reduce`]
/// quotes it when the original itself is rejected). It writes
/// `opt_me_not.c` and `doppel-*` files in the current directory.
///
/// The checks, cheapest first, each under `timeout`: see the module docs.
///
/// **The probe contract** (step 4). The script runs, in the variant's
/// directory and under `timeout <probe_timeout>`:
///
/// ```text
/// "$DOPPEL" debuginfo probe --source a.c --barrier opt_me_not.c \
///     --variable V --compiler C --level L --debugger D --expect-wrong REF \
///     (--wrong-class same --actual W | --wrong-class any) \
///     [--culprit PASS] [--culprit-flag FLAG]...
/// ```
///
/// with `DOPPEL = doppel_exe`, `L` without the dash (`O2`), `D` `gdb` or
/// `lldb`. `doppel` must exit with status **0 iff all** of:
/// - S, the line of the only [`MARKER`] in `a.c` (as [`marker_line`]: the
///   line compilers and debuggers call it, `#line` directives honoured), is
///   found by the probe itself (it must not assume the original line
///   number);
/// - `a.c` and `opt_me_not.c` (separate translation units, one command each
///   or one driver call without LTO) build with `C` at -O0 and at -L with
///   the common flags of [`crate::toolchain::Compiler::recipe`];
/// - in the -O0 binary under D, the first stop at a breakpoint on `a.c:S` is
///   reached, reported at line S, with V in scope showing REF;
/// - in the -L binary under D, the first stop at `a.c:S` is reached, at line
///   S, and V shows a value (not "optimized out", not unavailable) that is
///   not REF and, with `same`, is exactly W;
/// - with `--culprit PASS` (Clang): culprit bisection of the variant
///   ([`crate::bisect::bisect_clang`], the oracle being the -L check above)
///   names PASS;
/// - with each `--culprit-flag FLAG` (GCC): the -L build with
///   `-fno-<flag>` ([`crate::bisect::negate_flag`]) does *not* show the
///   wrong value.
///
/// Any failed condition: status 1. Bad arguments or a missing tool: status 2.
/// The probe must leave no process behind (debugger, inferior), also when
/// `timeout` stops it with `SIGTERM` (`SIGKILL` follows 10 s later), and may write
/// scratch files only in the current directory; one line on stderr saying
/// which condition failed is welcome. The script treats every non-zero
/// status, and a timeout (124), as "not interesting".
///
/// With `keep`, an interesting variant is also copied there (through a
/// temporary file renamed into place): C-Vise stopped at its budget may
/// leave an unchecked `a.c` (its lines pass rewrites the file in place while
/// it checks the rewrite); the variant kept last is checked, never trusted.
pub fn interestingness_script(spec: &ReduceSpec, doppel_exe: &Path, keep: Option<&Path>) -> String {
    let q = sh_quote;
    let flags = COMMON_FLAGS.join(" ");
    let werr: Vec<String> = spec.warning_errors.iter().map(|w| format!("-Werror={w}")).collect();
    let insert = shadow_print(&spec.variable, &spec.kind);
    let sed_expr = format!("s/{}/{}/", MARKER_BRE.replace('/', "\\/"), sed_replacement(&insert));
    let compare = matches!(&spec.kind, VarKind::Integer { .. } | VarKind::Pointer);
    let probe = spec.probe_args().iter().map(|a| q(a)).collect::<Vec<_>>().join(" ");
    let mut s = String::new();
    s.push_str("#!/bin/sh\n");
    s.push_str("# doppel interestingness test (generated by doppel-debuginfo reduce).\n");
    s.push_str("# Run by C-Vise in a directory holding the variant a.c; exit 0 = interesting.\n");
    s.push_str(&format!("DOPPEL={}\n", q(&doppel_exe.to_string_lossy())));
    s.push_str(&format!("CC={}\n", q(&spec.compiler)));
    s.push_str(&format!("SAN_CC={}\n", q(&spec.sanitizer_compiler)));
    s.push_str(&format!("LEVEL={}\n", q(&spec.level)));
    s.push_str(&format!("REF={}\n", q(&spec.reference_value)));
    s.push_str(&format!("FLAGS={}\n", q(&flags)));
    s.push_str(&format!(
        "CT={}\nRT={}\nPT={}\n",
        spec.compile_timeout, spec.run_timeout, spec.probe_timeout
    ));
    s.push_str("fail() { printf 'doppel-reduce: %s\\n' \"$*\" >&2; exit 1; }\n");
    s.push_str("export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=0\n\n");

    s.push_str("# 1. exactly one marker of s; no definition of the barrier here (calls are fine)\n");
    s.push_str("[ -f a.c ] || fail 'step 1: no a.c'\n");
    s.push_str(&format!("n=$(grep -c {} a.c)\n", q(MARKER_BRE)));
    s.push_str(&format!(
        "[ \"$n\" = 1 ] || fail \"step 1: $n lines with the marker {MARKER} (need 1)\"\n"
    ));
    s.push_str(&format!(
        "grep -q {} a.c && fail 'step 1: two markers on one line'\n",
        q(&format!("{MARKER_BRE}.*{MARKER_BRE}"))
    ));
    s.push_str("grep -q 'opt_me_not *([^)]*) *{' a.c && fail 'step 1: a.c defines opt_me_not'\n");
    s.push_str(&format!("printf '%s' {} > opt_me_not.c\n\n", q(&spec.barrier_source)));

    s.push_str("# 2. no reduction artefact; both builds compile (barrier in its own unit)\n");
    s.push_str(&format!(
        "timeout -k 5 \"$CT\" \"$SAN_CC\" -fsyntax-only $FLAGS {} a.c >/dev/null 2>&1 || fail 'step 2: syntax check (warnings as errors)'\n",
        werr.join(" ")
    ));
    s.push_str("timeout -k 5 \"$CT\" \"$CC\" -O0 $FLAGS a.c opt_me_not.c -o doppel-O0 >/dev/null 2>&1 || fail 'step 2: -O0 build'\n");
    s.push_str("timeout -k 5 \"$CT\" \"$CC\" -\"$LEVEL\" $FLAGS a.c opt_me_not.c -o doppel-Ox >/dev/null 2>&1 || fail \"step 2: -$LEVEL build\"\n\n");

    s.push_str("# 3. no undefined behaviour: ASan+UBSan run, MSan run of the shadow program\n");
    s.push_str("timeout -k 5 \"$CT\" \"$SAN_CC\" -O0 $FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all a.c opt_me_not.c -o doppel-asan >/dev/null 2>&1 || fail 'step 3: ASan build'\n");
    s.push_str(
        "timeout -k 5 \"$RT\" ./doppel-asan >/dev/null 2>doppel-asan.err || fail 'step 3: ASan/UBSan run failed'\n",
    );
    s.push_str("grep -q 'runtime error\\|Sanitizer' doppel-asan.err && fail 'step 3: sanitizer report'\n");
    s.push_str("{ printf '%s\\n' 'int printf(const char *, ...);'; sed ");
    s.push_str(&q(&sed_expr));
    s.push_str(" a.c; } > doppel-shadow.c || fail 'step 3: shadow'\n");
    s.push_str("timeout -k 5 \"$CT\" \"$SAN_CC\" -O0 $FLAGS -fsanitize=memory -fno-sanitize-recover=all doppel-shadow.c opt_me_not.c -o doppel-msan >/dev/null 2>&1 || fail 'step 3: MSan build of the shadow program'\n");
    s.push_str("timeout -k 5 \"$RT\" ./doppel-msan >doppel-msan.out 2>doppel-msan.err || fail 'step 3: MSan run of the shadow program failed'\n");
    s.push_str("grep -q 'MemorySanitizer' doppel-msan.err && fail 'step 3: MSan report'\n");
    s.push_str("first=$(grep -m 1 '^DOPPEL_SHADOW' doppel-msan.out | sed 's/^DOPPEL_SHADOW *//')\n");
    s.push_str("grep -q '^DOPPEL_SHADOW' doppel-msan.out || fail 'step 3: the marker line is not reached'\n");
    if compare {
        s.push_str("[ \"$first\" = \"$REF\" ] || fail \"step 3: shadow prints $first, reference is $REF\"\n");
    }
    s.push('\n');

    s.push_str("# 4. the debugger: reference at -O0, the same wrong value at -Ox (and the culprit)\n");
    s.push_str(&format!(
        "timeout -k 10 \"$PT\" \"$DOPPEL\" {probe} >doppel-probe.out 2>&1 || fail 'step 4: probe'\n"
    ));
    if let Some(k) = keep {
        let k = q(&k.to_string_lossy());
        s.push_str(&format!("cp a.c {k}.$$ 2>/dev/null && mv -f {k}.$$ {k}\n"));
    }
    s.push_str("exit 0\n");
    s
}

/// What [`reduce`] produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reduced {
    /// `out_dir/a.c`: the reduced program (the original when C-Vise found
    /// nothing, or its result failed the final re-check).
    pub path: PathBuf,
    /// `out_dir/interesting.sh`.
    pub script: PathBuf,
    /// Size of the program before, bytes.
    pub bytes_before: u64,
    /// Size of the result, bytes.
    pub bytes_after: u64,
    /// Lines before.
    pub lines_before: u32,
    /// Lines of the result.
    pub lines_after: u32,
    /// s in the reduced program: the line of its marker (as [`marker_line`]).
    pub marker_line: u32,
    /// The time budget ran out and C-Vise was killed.
    pub timed_out: bool,
    /// The kept `a.c` passed the script once more after C-Vise ended.
    pub verified: bool,
    /// Wall-clock seconds of one script run on the original.
    pub script_seconds: f64,
    /// Wall-clock seconds of the whole reduction.
    pub elapsed_seconds: f64,
}

/// The 1-based line of the single marker in `text`, if there is exactly one,
/// numbered as compilers and debuggers number it: `#line N` directives
/// (such as the one [`crate::augment::declare_first`] writes) are honoured.
pub fn marker_line(text: &str) -> Option<u32> {
    marker_position(text).map(|(_, logical)| logical)
}

/// The single marker's line in `text`: `(physical, logical)`, both 1-based,
/// the physical one counting the lines of the file and the logical one as
/// [`marker_line`]. `None` unless there is exactly one marker.
pub fn marker_position(text: &str) -> Option<(u32, u32)> {
    if text.matches(MARKER).count() != 1 {
        return None;
    }
    let physical = text.lines().position(|l| l.contains(MARKER))? as u32 + 1;
    Some((physical, logical_lines(text)[physical as usize - 1]))
}

/// The logical line number of every physical line of `text` (index: the
/// physical line - 1), after `#line N` and `# N "file"` directives.
fn logical_lines(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut next = 1u32;
    for l in text.lines() {
        out.push(next);
        next = line_directive(l).unwrap_or(next + 1);
    }
    out
}

/// N of a `#line N ...` or `# N ...` directive.
fn line_directive(l: &str) -> Option<u32> {
    let rest = l.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").map(str::trim_start).unwrap_or(rest);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `text` with [`MARKER`] written at column 1 of logical line `line` (see
/// [`marker_line`]); `None` when `text` has no such line or already holds a
/// marker.
pub fn mark_line(text: &str, line: u32) -> Option<String> {
    if text.contains(MARKER) {
        return None;
    }
    let physical = logical_lines(text).iter().rposition(|&n| n == line)? as u32 + 1;
    Some(crate::augment::prefix_lines(text, |n| {
        (n == physical).then(|| MARKER.to_string())
    }))
}

/// Runs `script` in `dir` (which holds `a.c`) once. `Ok(())` when
/// interesting, else the script's reason.
async fn run_script(script: &Path, dir: &Path, timeout: Duration) -> Result<(), String> {
    let mut cmd = Command::new("sh");
    cmd.arg(script).current_dir(dir);
    let done = process::run(cmd, timeout, Sandbox::NONE)
        .await
        .map_err(|e| format!("cannot run sh: {e}"))?;
    if done.timed_out {
        return Err(format!("the script took more than {} s", timeout.as_secs()));
    }
    match done.code {
        Some(0) => Ok(()),
        c => Err(format!("exit status {c:?}: {}", done.stderr.trim())),
    }
}

/// Reduces a finding with C-Vise.
///
/// `source`: the program as checked, with exactly one [`MARKER`] at s;
/// `barrier`: the barrier unit (its text replaces [`ReduceSpec::barrier_source`]);
/// `doppel_exe`: the `doppel` executable the script calls for the probe;
/// `out_dir`: created if needed, receives `a.c` (the result),
/// `a.orig.c`, `opt_me_not.c`, `interesting.sh` and `cvise.log`, and a
/// `work/` directory where C-Vise runs; `timeout`: the whole budget (C-Vise's
/// process tree is killed when it runs out, and the best variant so far,
/// which C-Vise keeps in `work/a.c`, is re-checked and kept if still
/// interesting).
///
/// Runs the script once on the original first (its time is
/// [`Reduced::script_seconds`]), then `cvise --n <jobs> --timeout <t>
/// --tidy interesting.sh a.c` with a per-variant timeout of 4 times the
/// first run, at least 30 s.
///
/// Errors: unreadable inputs; no single marker in `source`; `cvise` missing;
/// the original is not interesting (the script's reason is quoted).
pub async fn reduce(
    spec: &ReduceSpec,
    source: &Path,
    barrier: &Path,
    doppel_exe: &Path,
    out_dir: &Path,
    timeout: Duration,
) -> Result<Reduced, String> {
    let start = Instant::now();
    let text = std::fs::read_to_string(source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
    let barrier_text =
        std::fs::read_to_string(barrier).map_err(|e| format!("cannot read {}: {e}", barrier.display()))?;
    if marker_line(&text).is_none() {
        return Err(format!("{} must contain exactly one {MARKER}", source.display()));
    }
    let cvise = process::which("cvise").ok_or("cvise is not installed")?;
    let work = out_dir.join("work");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let mut spec = spec.clone();
    spec.barrier_source = barrier_text.clone();
    let script_path = out_dir.join("interesting.sh");
    let write = |p: &Path, t: &str| std::fs::write(p, t).map_err(|e| format!("cannot write {}: {e}", p.display()));
    let keep = std::path::absolute(out_dir.join("last-interesting.c"))
        .map_err(|e| format!("cannot resolve {}: {e}", out_dir.display()))?;
    write(&script_path, &interestingness_script(&spec, doppel_exe, Some(&keep)))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script_path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot chmod {}: {e}", script_path.display()))?;
    }
    let script_path = script_path
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", script_path.display()))?;
    write(&out_dir.join("a.orig.c"), &text)?;
    write(&out_dir.join("opt_me_not.c"), &barrier_text)?;
    write(&work.join("a.c"), &text)?;

    let one_run_limit = Duration::from_secs(
        u64::from(spec.compile_timeout) * 5 + u64::from(spec.run_timeout) * 2 + u64::from(spec.probe_timeout),
    );
    let t0 = Instant::now();
    run_script(&script_path, &work, one_run_limit)
        .await
        .map_err(|e| format!("the original is not interesting: {e}"))?;
    let script_seconds = t0.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&keep); // the original's, not C-Vise's

    let per_test = ((script_seconds * 4.0).ceil() as u64).max(30);
    let remaining = timeout.saturating_sub(start.elapsed());
    let mut cmd = Command::new(cvise);
    cmd.arg("--n")
        .arg(spec.jobs.max(1).to_string())
        .arg("--timeout")
        .arg(per_test.to_string())
        .arg("--tidy")
        .arg("--skip-interestingness-test-check")
        .arg(&script_path)
        .arg("a.c")
        .current_dir(&work);
    let done = process::run(cmd, remaining, Sandbox::NONE)
        .await
        .map_err(|e| format!("cannot run cvise: {e}"))?;
    let log = format!(
        "exit: {:?}, timed out: {}\n--- stdout\n{}\n--- stderr\n{}\n",
        done.code, done.timed_out, done.stdout, done.stderr
    );
    write(&out_dir.join("cvise.log"), &log)?;

    let candidate = std::fs::read_to_string(work.join("a.c")).unwrap_or_default();
    // Re-check what C-Vise left (it may have been killed mid-write, or in
    // the middle of checking a rewrite), then the variant the script kept last.
    let mut verified =
        marker_line(&candidate).is_some() && run_script(&script_path, &work, one_run_limit).await.is_ok();
    let mut kept = candidate;
    if !verified
        && let Ok(last) = std::fs::read_to_string(&keep)
        && last != kept
        && marker_line(&last).is_some()
    {
        write(&work.join("a.c"), &last)?;
        verified = run_script(&script_path, &work, one_run_limit).await.is_ok();
        kept = last;
    }
    if !verified {
        kept = text.clone();
    }
    let out = out_dir.join("a.c");
    write(&out, &kept)?;
    Ok(Reduced {
        path: out,
        script: script_path,
        bytes_before: text.len() as u64,
        bytes_after: kept.len() as u64,
        lines_before: text.lines().count() as u32,
        lines_after: kept.lines().count() as u32,
        marker_line: marker_line(&kept).unwrap_or(0),
        timed_out: done.timed_out,
        verified,
        script_seconds,
        elapsed_seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain program (no barrier call) with s = 8 marked.
    const GOOD: &str = "#include <stdio.h>\nint g;\nint main(void) {\n  int i, s = 0;\n  for (i = 0; i < 10; i++)\n    s += i * 3;\n  g = 1;\n/*DOPPEL_S*/  g = s;\n  printf(\"%d\\n\", g);\n  return 0;\n}\n";

    /// The same, augmented (barrier calls at lines 7 and 8).
    fn augmented() -> String {
        GOOD.replacen("#include", "void opt_me_not(void);\n#line 1\n#include", 1)
            .replace("  g = 1;", "opt_me_not();   g = 1;")
            .replace("/*DOPPEL_S*/  g = s;", "/*DOPPEL_S*/opt_me_not();   g = s;")
    }

    /// The tools the interestingness script runs; scripts/deps/apt.txt
    /// installs them, so a missing one fails the test (never a silent pass).
    fn require_tools(extra: &[&str]) {
        for t in ["gcc", "clang-19", "timeout", "sed", "grep"].iter().chain(extra) {
            assert!(
                process::which(t).is_some(),
                "{t} is missing: run scripts/test, which installs it"
            );
        }
    }

    fn spec() -> ReduceSpec {
        ReduceSpec::new(
            "s",
            VarKind::Integer { signed: true, bits: 32 },
            "135",
            WrongClass::Same { actual: "0".into() },
            "gcc",
            "O2",
            "gdb",
        )
    }

    /// A fake doppel that records its arguments and exits with `code`.
    fn fake_doppel(dir: &Path, code: i32) -> PathBuf {
        let p = dir.join(format!("fake-doppel-{code}"));
        let log = dir.join("probe-args.txt");
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > {}\nexit {code}\n",
                sh_quote(&log.to_string_lossy())
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    async fn verdict(spec: &ReduceSpec, program: &str, probe_code: i32) -> (Result<(), String>, PathBuf, f64) {
        let dir = tempfile::tempdir().unwrap().keep();
        let doppel = fake_doppel(&dir, probe_code);
        let script = dir.join("interesting.sh");
        std::fs::write(
            &script,
            interestingness_script(spec, &doppel, Some(&dir.join("kept.c"))),
        )
        .unwrap();
        let work = dir.join("work");
        std::fs::create_dir(&work).unwrap();
        std::fs::write(work.join("a.c"), program).unwrap();
        let t = Instant::now();
        let r = run_script(&script, &work, Duration::from_secs(120)).await;
        (r, dir, t.elapsed().as_secs_f64())
    }

    #[test]
    fn marker_line_needs_exactly_one_marker() {
        assert_eq!(marker_line(GOOD), Some(8));
        assert_eq!(marker_line("/*DOPPEL_S*/ x; /*DOPPEL_S*/ y;\n"), None);
        assert_eq!(marker_line("int x;\nopt_me_not();\n"), None);
        assert_eq!(marker_line("a\n/*DOPPEL_S*/b\n/*DOPPEL_S*/c\n"), None);
        // `#line 1` (line augmentation of a program starting with a
        // directive): the line compilers and debuggers see.
        assert_eq!(marker_position(&augmented()), Some((10, 8)));
        assert_eq!(marker_line("#line 20\nx;\n# 40 \"a.c\"\n/*DOPPEL_S*/y;\n"), Some(40));
    }

    #[test]
    fn mark_line_prefixes_the_logical_line() {
        let plain = GOOD.replace(MARKER, "");
        assert_eq!(mark_line(&plain, 8).as_deref(), Some(GOOD));
        let aug = augmented().replace(MARKER, "");
        assert_eq!(mark_line(&aug, 8), Some(augmented()));
        assert_eq!(mark_line(&plain, 99), None);
        assert_eq!(mark_line(GOOD, 8), None, "already marked");
    }

    #[test]
    fn script_quotes_and_passes_the_probe_contract() {
        let mut sp = spec();
        sp.reference_value = "it's".into();
        sp.culprit = Some("X86 LEA Fixup".into());
        let s = interestingness_script(&sp, Path::new("/opt/doppel"), Some(Path::new("/w/last-interesting.c")));
        assert!(s.contains("REF='it'\\''s'"), "{s}");
        assert!(s.contains("'--culprit' 'X86 LEA Fixup'"), "{s}");
        assert!(s.contains("'--wrong-class' 'same' '--actual' '0'"), "{s}");
        assert!(s.starts_with("#!/bin/sh\n"));
    }

    #[tokio::test]
    async fn interesting_when_everything_holds_and_the_probe_gets_the_contract() {
        require_tools(&[]);
        let (r, dir, secs) = verdict(&spec(), GOOD, 0).await;
        assert_eq!(r, Ok(()));
        assert_eq!(
            std::fs::read_to_string(dir.join("kept.c")).unwrap(),
            GOOD,
            "an interesting variant is kept"
        );
        eprintln!("one script run (fake probe): {secs:.2} s");
        let args = std::fs::read_to_string(dir.join("probe-args.txt")).unwrap();
        let args: Vec<&str> = args.lines().collect();
        assert_eq!(
            args,
            [
                "debuginfo",
                "probe",
                "--source",
                "a.c",
                "--barrier",
                "opt_me_not.c",
                "--variable",
                "s",
                "--compiler",
                "gcc",
                "--level",
                "O2",
                "--debugger",
                "gdb",
                "--expect-wrong",
                "135",
                "--wrong-class",
                "same",
                "--actual",
                "0"
            ]
        );
        let shadow = std::fs::read_to_string(dir.join("work/doppel-shadow.c")).unwrap();
        assert!(
            shadow.contains("\nprintf(\"DOPPEL_SHADOW %lld\\n\", (long long)(s));  g = s;\n"),
            "{shadow}"
        );
        assert!(!shadow.contains(MARKER), "{shadow}");
        assert_eq!(
            std::fs::read_to_string(dir.join("work/opt_me_not.c")).unwrap(),
            BARRIER_SOURCE
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn barrier_calls_in_the_program_are_linked_with_the_barrier_unit() {
        require_tools(&[]);
        let (r, dir, _) = verdict(&spec(), &augmented(), 0).await;
        assert_eq!(r, Ok(()));
        let shadow = std::fs::read_to_string(dir.join("work/doppel-shadow.c")).unwrap();
        assert!(
            shadow.contains("\nprintf(\"DOPPEL_SHADOW %lld\\n\", (long long)(s));opt_me_not();   g = s;\n"),
            "{shadow}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn not_interesting_when_a_condition_fails() {
        require_tools(&[]);
        let cases: [(&str, String, i32, &str); 8] = [
            (
                "uninitialized v (MSan on the shadow)",
                GOOD.replace("int i, s = 0;", "int i, s;\n  if (g > 5) s = 0;")
                    .replace("s += i * 3;", "g += i * 3;"),
                0,
                "MSan",
            ),
            ("does not compile", GOOD.replace("g = s;", "g = s"), 0, "step 2"),
            ("marker missing", GOOD.replace(MARKER, ""), 0, "step 1"),
            (
                "marker duplicated",
                GOOD.replace("g = s;", "g = s; /*DOPPEL_S*/"),
                0,
                "step 1",
            ),
            (
                "marker on two lines",
                GOOD.replace("  return 0;", "/*DOPPEL_S*/  return 0;"),
                0,
                "step 1",
            ),
            (
                "a.c defines the barrier",
                format!("{GOOD}void opt_me_not(void) {{ }}\n"),
                0,
                "step 1: a.c defines",
            ),
            (
                "out-of-bounds write (ASan)",
                GOOD.replace("int i, s = 0;", "int i, s = 0, a[2];\n  a[g + 2] = 1;"),
                0,
                "step 3: ASan",
            ),
            ("probe says no", GOOD.to_string(), 1, "step 4"),
        ];
        for (what, program, code, reason) in cases {
            let (r, dir, _) = verdict(&spec(), &program, code).await;
            let e = r.expect_err(what);
            assert!(e.contains(reason), "{what}: {e}");
            assert!(
                !dir.join("kept.c").exists(),
                "{what}: an uninteresting variant is not kept"
            );
            std::fs::remove_dir_all(dir).unwrap();
        }
        // The shadow's first print must be the reference.
        let mut sp = spec();
        sp.reference_value = "134".into();
        let (r, dir, _) = verdict(&sp, GOOD, 0).await;
        assert!(r.unwrap_err().contains("shadow prints 135"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn cvise_reduces_with_a_fake_probe() {
        require_tools(&["cvise"]);
        let dir = tempfile::tempdir().unwrap();
        let doppel = fake_doppel(dir.path(), 0);
        let src = dir.path().join("in.c");
        let padded = GOOD.replace(
            "int g;\n",
            "int g;\nint h[4] = {1, 2, 3, 4};\nstatic int unused(int x) { return x * h[1] + 7; }\nint k = 3;\n",
        );
        std::fs::write(&src, &padded).unwrap();
        let bar = dir.path().join("opt_me_not.c");
        std::fs::write(&bar, BARRIER_SOURCE).unwrap();
        let out = dir.path().join("out");
        let r = reduce(&spec(), &src, &bar, &doppel, &out, Duration::from_secs(40))
            .await
            .unwrap();
        eprintln!("{r:?}");
        assert!(r.verified);
        assert!(r.bytes_after < r.bytes_before, "{r:?}");
        let reduced = std::fs::read_to_string(&r.path).unwrap();
        assert_eq!(marker_line(&reduced), Some(r.marker_line));
        assert!(!reduced.contains("unused"), "{reduced}");
    }
}
