//! Culprit bisection: which optimization makes the debugger show a wrong
//! value (ASPLOS'23 triage, applied to the PLDI'20 findings; see
//! `/work/shared/notes/debuginfo-prior-art.md`, sections 3 and 5).
//!
//! Both methods are generic over an [`Oracle`]: something that rebuilds the
//! optimized binary with extra compiler flags and re-checks the finding's
//! pair (s, v), answering whether the *same* wrong value still shows. The
//! oracle owns the program, the pair, the debugger and the notion of "same";
//! this module only decides which flags to try.
//!
//! - **Clang** ([`bisect_clang`]): LLVM's `-mllvm -opt-bisect-limit=N` runs
//!   only the first N optional passes of each compiler process (`-1`: all of
//!   them, `0`: none). A binary search finds the smallest N at which the bug
//!   shows; pass number N is the culprit, named by one more compile that
//!   prints the pass log ([`pass_log`]). The count covers the IR pipeline
//!   *and* the optional codegen passes after it (`X86 DAG->DAG Instruction
//!   Selection`, `Machine Copy Propagation Pass`, ...), so a culprit may be a
//!   machine pass. When the bug shows even with N = 0 no optional pass is
//!   responsible: the culprit is [`NOT_BISECTABLE`] (mandatory codegen, or
//!   the front end's debug-information emission).
//! - **GCC** ([`bisect_gcc`]): the `-f` flags enabled at the level
//!   ([`gcc_enabled_flags`], from `gcc -Q --help=optimizers -O2`), each
//!   turned off with `-fno-<flag>`; the culprits are the flags whose removal
//!   alone makes the bug disappear. Cost: one build and one debugger check
//!   per flag tried, and GCC 12 enables 134 flags at -O2 (90 at -O1, 147 at
//!   -O3): with about 1 s per check, two to three minutes per finding.
//!   [`GccStrategy::Halving`] is the cheaper first pass (see there for what
//!   it may miss); [`GccStrategy::OneAtATime`] is exhaustive up to a cap.

use crate::toolchain::{COMMON_FLAGS, Compiler, Family};
use async_trait::async_trait;
use doppel_core::process::{self, Sandbox};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;
use tokio::process::Command;

/// Re-checks one finding with extra compiler flags.
///
/// `wrong(extra_flags)` rebuilds the optimized binary of the finding with
/// `extra_flags` appended after the level and common flags (see
/// [`Compiler::recipe`]), re-runs the debugger at the finding's line, and
/// answers `Ok(true)` iff the same wrong value still shows. `Ok(false)` covers
/// every other outcome (the reference value, optimized out, line not hit),
/// so "false" means "this build does not exhibit the bug".
///
/// Errors: a reason when the check itself could not be done (the build
/// failed, the debugger crashed); bisection stops with that reason.
#[async_trait]
pub trait Oracle: Send {
    /// Whether the build with `extra_flags` added (a pass limit, flags turned
    /// off) still shows the wrong value.
    async fn wrong(&mut self, extra_flags: &[String]) -> Result<bool, String>;
}

/// Culprit name when the bug shows with `-opt-bisect-limit=0`.
pub const NOT_BISECTABLE: &str = "codegen/not bisectable";

/// How a culprit was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Clang and rustc: binary search on LLVM's `-opt-bisect-limit`.
    OptBisectLimit,
    /// GCC: `-fno-<flag>` for every enabled flag in turn.
    GccFlagRemoval,
    /// GCC: adaptive halving of the flag set, each culprit confirmed alone.
    GccFlagHalving,
}

/// The result of a bisection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Culprit {
    /// How the culprit was searched (Clang pass limit or a GCC flag search).
    pub method: Method,
    /// Clang: the name of pass number `limit` as the pass log prints it
    /// (`InstCombinePass`, `Machine Copy Propagation Pass`), or
    /// [`NOT_BISECTABLE`]. `None` for GCC, and for Clang when the log has no
    /// line numbered `limit`.
    pub pass: Option<String>,
    /// Clang: what the pass ran on (`main`, `[module]`, `function (main)`,
    /// `loop %for.body in function main`).
    pub target: Option<String>,
    /// Clang: the smallest opt-bisect limit at which the bug shows (0 when
    /// not bisectable). `None` for GCC.
    pub limit: Option<u32>,
    /// Clang: the number of optional passes the full pipeline runs on the
    /// source (the upper end of the search).
    pub passes: Option<u32>,
    /// GCC: the flags (`-ftree-pre`) whose removal alone makes the bug
    /// disappear. Empty for Clang, and for GCC when no single flag does.
    pub flags: Vec<String>,
    /// GCC: the flags tried (all of them, unless capped).
    pub flags_tried: u32,
    /// Oracle calls made (one build and one debugger check each).
    pub checks: u32,
}

impl Culprit {
    /// A short stable name for grouping findings: the pass name (Clang) or the
    /// sorted culprit flags joined by `+` (GCC), `unknown` when neither.
    pub fn signature(&self) -> String {
        if let Some(p) = &self.pass {
            return p.clone();
        }
        if self.flags.is_empty() {
            return "unknown".to_string();
        }
        let mut f = self.flags.clone();
        f.sort();
        f.join("+")
    }
}

/// The extra flags that limit LLVM to its first `limit` optional passes
/// (`-1`: all) in a compiler of `family`: `-mllvm -opt-bisect-limit=N` for
/// Clang, `-C llvm-args=-opt-bisect-limit=N` for rustc (whose builds use one
/// codegen unit: LLVM's pass counter is global to the process, and parallel
/// codegen units would number passes in no stable order). GCC has no such
/// switch: the Clang spelling is returned, and GCC rejects it.
pub fn bisect_flags(family: Family, limit: i64) -> Vec<String> {
    match family {
        Family::Rustc => vec!["-C".to_string(), format!("llvm-args=-opt-bisect-limit={limit}")],
        _ => vec!["-mllvm".to_string(), format!("-opt-bisect-limit={limit}")],
    }
}

/// The outcome of the opt-bisect binary search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitSearch {
    /// The smallest limit at which the bug shows (0: even with no pass).
    pub limit: u32,
    /// Oracle calls made.
    pub checks: u32,
}

/// Binary search for the smallest opt-bisect limit N in `0..=passes` at
/// which `oracle` sees the bug. `passes` is the number of optional passes
/// the full pipeline runs (the largest number in the pass log); any larger
/// limit behaves like `-1`.
///
/// Order of calls: limit `-1` (the bug must reproduce, else an error), then
/// `0` (if the bug shows, the result is 0: not bisectable), then a bisection
/// of `(0, passes]` keeping "absent at lo, present at hi": about
/// log2(passes) + 2 calls (10 for 200 passes). If the bug is not monotone in
/// N, the result is still a limit N where N-1 does not show it and N does.
///
/// Errors: the oracle's errors; the bug does not reproduce with all passes.
pub async fn search_limit<O: Oracle + ?Sized>(
    oracle: &mut O,
    family: Family,
    passes: u32,
) -> Result<LimitSearch, String> {
    let mut checks = 0u32;
    if !check_limit(oracle, family, -1, &mut checks).await? {
        return Err("the wrong value does not reproduce with all passes (-opt-bisect-limit=-1)".into());
    }
    if check_limit(oracle, family, 0, &mut checks).await? {
        return Ok(LimitSearch { limit: 0, checks });
    }
    // Invariant: absent at lo, present at hi (hi = passes behaves like -1).
    let (mut lo, mut hi) = (0u32, passes.max(1));
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if check_limit(oracle, family, i64::from(mid), &mut checks).await? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(LimitSearch { limit: hi, checks })
}

async fn check_limit<O: Oracle + ?Sized>(
    oracle: &mut O,
    family: Family,
    limit: i64,
    checks: &mut u32,
) -> Result<bool, String> {
    *checks += 1;
    oracle.wrong(&bisect_flags(family, limit)).await
}

/// One line of LLVM's opt-bisect log:
/// `BISECT: running pass (5) SimplifyCFGPass on main` or
/// `BISECT: NOT running pass (6) SROAPass on main` (same format in clang 14
/// and 19).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassRun {
    /// 1-based pass number, as printed.
    pub number: u32,
    /// Whether the pass ran (number <= limit).
    pub ran: bool,
    /// Pass name, possibly with spaces (`X86 LEA Fixup`).
    pub pass: String,
    /// What it ran on: a function, `[module]`, `(f, g)` for an SCC,
    /// `loop %x in function f`, `function (main)` for machine passes.
    pub target: String,
}

/// Parses the `BISECT:` lines of a compiler's stderr; other lines are
/// skipped.
pub fn parse_pass_log(stderr: &str) -> Vec<PassRun> {
    stderr.lines().filter_map(parse_pass_line).collect()
}

fn parse_pass_line(line: &str) -> Option<PassRun> {
    let rest = line.trim_end().strip_prefix("BISECT: ")?;
    let (ran, rest) = match rest.strip_prefix("NOT ") {
        Some(r) => (false, r),
        None => (true, rest),
    };
    let rest = rest.strip_prefix("running pass (")?;
    let (num, rest) = rest.split_once(") ")?;
    let number = num.parse().ok()?;
    // Pass names have no " on " (checked on the whole -O1..-O3/-Os/-Og
    // pipelines of clang 14 and 19); targets may ("loop %x in function f"
    // has none either, but split at the first to be safe with names).
    let (pass, target) = match rest.split_once(" on ") {
        Some((p, t)) => (p.to_string(), t.to_string()),
        None => (rest.to_string(), String::new()),
    };
    Some(PassRun {
        number,
        ran,
        pass,
        target,
    })
}

/// Compiles `source` alone (`-c`, object discarded) with `compiler` at
/// `level`, the common flags, `extra` and `-mllvm -opt-bisect-limit=limit`,
/// and returns the parsed pass log. The source must be compiled by itself:
/// each compiler process counts passes from 1, so a build that also compiles
/// the barrier prints two interleaved logs, while the numbering of the
/// source's own log is the same in both.
///
/// Errors: not a Clang compiler; spawn failure; timeout (60 s); a compile
/// error (non-zero exit, stderr quoted).
pub async fn pass_log(
    compiler: &Compiler,
    level: &str,
    source: &Path,
    extra: &[String],
    limit: i64,
) -> Result<Vec<PassRun>, String> {
    if compiler.family != Family::Clang {
        return Err(format!("{} is not clang: no opt-bisect pass log", compiler.name));
    }
    let mut cmd = Command::new(&compiler.path);
    cmd.arg(format!("-{level}"))
        .args(COMMON_FLAGS)
        .args(extra)
        .args(bisect_flags(Family::Clang, limit))
        .arg("-c")
        .arg(source)
        .arg("-o")
        .arg("/dev/null");
    let done = process::run(cmd, Duration::from_secs(60), Sandbox::NONE)
        .await
        .map_err(|e| format!("cannot run {}: {e}", compiler.path))?;
    if done.timed_out {
        return Err(format!("{} timed out on {}", compiler.name, source.display()));
    }
    if done.code != Some(0) {
        let msg: String = done
            .stderr
            .lines()
            .filter(|l| !l.starts_with("BISECT:"))
            .take(10)
            .collect::<Vec<_>>()
            .join("\n");
        return Err(format!("{} failed on {}: {msg}", compiler.name, source.display()));
    }
    Ok(parse_pass_log(&done.stderr))
}

/// Clang culprit bisection of one finding: counts the passes ([`pass_log`]
/// with limit -1), then [`bisect_llvm`]. `extra` are flags the finding's
/// build already has (usually none); the oracle must add the same ones.
///
/// Errors: those of [`pass_log`] and [`search_limit`].
pub async fn bisect_clang<O: Oracle + ?Sized>(
    oracle: &mut O,
    compiler: &Compiler,
    level: &str,
    source: &Path,
    extra: &[String],
) -> Result<Culprit, String> {
    let log = pass_log(compiler, level, source, extra, -1).await?;
    bisect_llvm(oracle, Family::Clang, &log).await
}

/// LLVM culprit bisection (Clang or rustc) given the pass log of the full
/// pipeline (`log`, from a build with `-opt-bisect-limit=-1`): searches the
/// limit ([`search_limit`]) and names pass number `limit` from the log.
///
/// Errors: those of [`search_limit`].
pub async fn bisect_llvm<O: Oracle + ?Sized>(
    oracle: &mut O,
    family: Family,
    log: &[PassRun],
) -> Result<Culprit, String> {
    let passes = log.iter().map(|r| r.number).max().unwrap_or(0);
    let found = search_limit(oracle, family, passes).await?;
    let (pass, target) = if found.limit == 0 {
        (Some(NOT_BISECTABLE.to_string()), None)
    } else {
        match log.iter().find(|r| r.number == found.limit) {
            Some(r) => (Some(r.pass.clone()), Some(r.target.clone())),
            None => (None, None),
        }
    };
    Ok(Culprit {
        method: Method::OptBisectLimit,
        pass,
        target,
        limit: Some(found.limit),
        passes: Some(passes),
        flags: Vec::new(),
        flags_tried: 0,
        checks: found.checks,
    })
}

/// Flags listed as `[enabled]` that are not optimizations but ABI or
/// language-semantics switches: turning them off changes what the program
/// means (enum sizes, struct returns, floating-point semantics), so they are
/// not tried.
pub const GCC_NON_OPTIMIZATION_FLAGS: [&str; 9] = [
    "-fshort-enums",
    "-freg-struct-return",
    "-fpcc-struct-return",
    "-fsigned-zeros",
    "-ftrapping-math",
    "-fmath-errno",
    "-fasynchronous-unwind-tables",
    "-fexceptions",
    "-fsemantic-interposition",
];

/// Parses `gcc -Q --help=optimizers -O2` output: the flags marked
/// `[enabled]` (`-ftree-pre`), in order, without the `-falign-functions=`
/// style value lines and without [`GCC_NON_OPTIMIZATION_FLAGS`].
pub fn parse_enabled_flags(help: &str) -> Vec<String> {
    help.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let flag = words.next()?;
            let state = words.next()?;
            (flag.starts_with("-f")
                && !flag.ends_with('=')
                && state == "[enabled]"
                && !GCC_NON_OPTIMIZATION_FLAGS.contains(&flag))
            .then(|| flag.to_string())
        })
        .collect()
}

/// The `-f` flags `compiler` (GCC) enables at `level`
/// (`gcc -Q --help=optimizers -<level>`), see [`parse_enabled_flags`].
///
/// Errors: not GCC; spawn failure; timeout (30 s); non-zero exit; no flag
/// found.
pub async fn gcc_enabled_flags(compiler: &Compiler, level: &str) -> Result<Vec<String>, String> {
    if compiler.family != Family::Gcc {
        return Err(format!("{} is not gcc", compiler.name));
    }
    let mut cmd = Command::new(&compiler.path);
    cmd.arg("-Q").arg("--help=optimizers").arg(format!("-{level}"));
    let done = process::run(cmd, Duration::from_secs(30), Sandbox::NONE)
        .await
        .map_err(|e| format!("cannot run {}: {e}", compiler.path))?;
    if done.timed_out || done.code != Some(0) {
        return Err(format!(
            "{} -Q --help=optimizers failed: {}",
            compiler.name,
            done.stderr.trim()
        ));
    }
    let flags = parse_enabled_flags(&done.stdout);
    if flags.is_empty() {
        return Err(format!("{} lists no enabled optimizer flag at -{level}", compiler.name));
    }
    Ok(flags)
}

/// The switch that turns `flag` off: `-ftree-pre` -> `-fno-tree-pre`,
/// `-fno-x` -> `-fx`.
pub fn negate_flag(flag: &str) -> String {
    match flag.strip_prefix("-fno-") {
        Some(rest) => format!("-f{rest}"),
        None => format!("-fno-{}", flag.trim_start_matches("-f")),
    }
}

/// How to search the GCC flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "strategy", rename_all = "snake_case")]
pub enum GccStrategy {
    /// Turn each flag off alone, in order, trying at most `max` flags
    /// (`flags_tried` says how many were). Exact by definition; one check
    /// per flag (plus one to confirm the bug).
    OneAtATime {
        /// The most flags to try.
        max: u32,
    },
    /// Adaptive group testing: turn a whole set off at once; if the bug
    /// persists, no flag of the set is counted as a culprit, otherwise split
    /// the set in halves and recurse; a set of one flag is exactly the
    /// single-flag check, so every reported culprit is confirmed alone (no
    /// false culprit). It may *miss* a culprit when flags interact
    /// non-monotonically (turning off f alone cures the bug, but turning off
    /// f together with g brings it back by another path); run
    /// [`GccStrategy::OneAtATime`] when it finds nothing. Cost with k
    /// culprits among n flags: about 2k log2(n) checks (about 15 for one
    /// culprit among 134), at most `max` checks.
    Halving {
        /// The most checks to make.
        max: u32,
    },
}

/// GCC culprit bisection of one finding: confirms the bug with no extra
/// flag, then searches the enabled `flags` (from [`gcc_enabled_flags`])
/// with `strategy`. `flags` is given by the caller so that it can cache or
/// filter the list.
///
/// Errors: the oracle's errors; the bug does not reproduce without extra
/// flags.
pub async fn bisect_gcc<O: Oracle + ?Sized>(
    oracle: &mut O,
    flags: &[String],
    strategy: GccStrategy,
) -> Result<Culprit, String> {
    let mut checks = 1u32;
    if !oracle.wrong(&[]).await? {
        return Err("the wrong value does not reproduce without extra flags".into());
    }
    let mut culprits = Vec::new();
    let (method, tried) = match strategy {
        GccStrategy::OneAtATime { max } => {
            let mut tried = 0u32;
            for f in flags.iter().take(max as usize) {
                tried += 1;
                checks += 1;
                if !oracle.wrong(&[negate_flag(f)]).await? {
                    culprits.push(f.clone());
                }
            }
            (Method::GccFlagRemoval, tried)
        }
        GccStrategy::Halving { max } => {
            // Work list of index ranges, in order, so culprits come out in
            // the order of `flags`.
            let mut stack: Vec<(usize, usize)> = vec![(0, flags.len())];
            let mut tried = std::collections::BTreeSet::new();
            while let Some((lo, hi)) = stack.pop() {
                if lo >= hi {
                    continue;
                }
                if checks >= max.max(2) {
                    break;
                }
                let set = &flags[lo..hi];
                let off: Vec<String> = set.iter().map(|f| negate_flag(f)).collect();
                checks += 1;
                tried.extend(lo..hi);
                let still = oracle.wrong(&off).await?;
                if still {
                    continue;
                }
                if hi - lo == 1 {
                    culprits.push(set[0].clone());
                    continue;
                }
                let mid = lo + (hi - lo) / 2;
                stack.push((mid, hi));
                stack.push((lo, mid));
            }
            (Method::GccFlagHalving, tried.len() as u32)
        }
    };
    Ok(Culprit {
        method,
        pass: None,
        target: None,
        limit: None,
        passes: None,
        flags: culprits,
        flags_tried: tried,
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bug iff the opt-bisect limit is -1 or >= `from`.
    struct LimitOracle {
        from: i64,
        calls: Vec<i64>,
    }

    #[async_trait]
    impl Oracle for LimitOracle {
        async fn wrong(&mut self, extra: &[String]) -> Result<bool, String> {
            assert_eq!(extra[0], "-mllvm");
            let n: i64 = extra[1].strip_prefix("-opt-bisect-limit=").unwrap().parse().unwrap();
            self.calls.push(n);
            Ok(n == -1 || n >= self.from)
        }
    }

    #[test]
    fn bisect_switches_per_compiler_family() {
        assert_eq!(bisect_flags(Family::Clang, 7), ["-mllvm", "-opt-bisect-limit=7"]);
        assert_eq!(
            bisect_flags(Family::Rustc, -1),
            ["-C", "llvm-args=-opt-bisect-limit=-1"]
        );
    }

    #[tokio::test]
    async fn binary_search_finds_the_first_limit_with_the_bug() {
        for from in [1, 2, 36, 37, 38, 176, 177] {
            let mut o = LimitOracle { from, calls: vec![] };
            let r = search_limit(&mut o, Family::Clang, 177).await.unwrap();
            assert_eq!(r.limit, from as u32, "from {from}");
            assert_eq!(r.checks as usize, o.calls.len());
            assert!(r.checks <= 2 + 8, "{} checks", r.checks);
            assert_eq!(&o.calls[..2], &[-1, 0]);
        }
    }

    #[tokio::test]
    async fn bug_with_no_pass_is_not_bisectable_and_absent_bug_is_an_error() {
        let mut o = LimitOracle { from: 0, calls: vec![] };
        assert_eq!(
            search_limit(&mut o, Family::Clang, 100).await.unwrap(),
            LimitSearch { limit: 0, checks: 2 }
        );
        let mut o = LimitOracle {
            from: 1000,
            calls: vec![],
        };
        // -1 always shows it in this oracle; use one that never does.
        struct Never;
        #[async_trait]
        impl Oracle for Never {
            async fn wrong(&mut self, _: &[String]) -> Result<bool, String> {
                Ok(false)
            }
        }
        assert!(
            search_limit(&mut Never, Family::Clang, 100)
                .await
                .unwrap_err()
                .contains("does not reproduce")
        );
        // A bug beyond the counted passes is attributed to the last one.
        assert_eq!(search_limit(&mut o, Family::Clang, 100).await.unwrap().limit, 100);
    }

    #[test]
    fn pass_log_lines_of_clang_14_and_19() {
        let log = "BISECT: running pass (1) Annotation2MetadataPass on [module]\n\
                   BISECT: running pass (5) LowerExpectIntrinsicPass on main\n\
                   BISECT: NOT running pass (6) SROAPass on main\n\
                   BISECT: NOT running pass (40) LICMPass on loop %<unnamed loop> in function main\n\
                   BISECT: running pass (173) X86 Execution Dependency Fix on function (main)\n\
                   clang: warning: something\n";
        let runs = parse_pass_log(log);
        assert_eq!(runs.len(), 5);
        assert_eq!(
            runs[1],
            PassRun {
                number: 5,
                ran: true,
                pass: "LowerExpectIntrinsicPass".into(),
                target: "main".into()
            }
        );
        assert!(!runs[2].ran);
        assert_eq!(runs[3].target, "loop %<unnamed loop> in function main");
        assert_eq!(runs[4].pass, "X86 Execution Dependency Fix");
        assert_eq!(runs[4].target, "function (main)");
    }

    #[test]
    fn gcc_help_parsing_and_negation() {
        let help = "The following options control optimizations:\n  -O<number>\n  -faggressive-loop-optimizations \t[enabled]\n  -falign-functions           \t\t[enabled]\n  -falign-functions=          \t\t16\n  -fallow-store-data-races    \t\t[disabled]\n  -fshort-enums               \t\t[enabled]\n  -ftree-pre                  \t\t[enabled]\n";
        assert_eq!(
            parse_enabled_flags(help),
            vec!["-faggressive-loop-optimizations", "-falign-functions", "-ftree-pre"]
        );
        assert_eq!(negate_flag("-ftree-pre"), "-fno-tree-pre");
        assert_eq!(negate_flag("-fno-common"), "-fcommon");
    }

    /// Bug unless one of `cures` is turned off; records every call.
    struct FlagOracle {
        cures: Vec<&'static str>,
        calls: u32,
    }

    #[async_trait]
    impl Oracle for FlagOracle {
        async fn wrong(&mut self, extra: &[String]) -> Result<bool, String> {
            self.calls += 1;
            Ok(!self.cures.iter().any(|c| extra.iter().any(|e| e == &negate_flag(c))))
        }
    }

    fn flags(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("-fflag{i}")).collect()
    }

    #[tokio::test]
    async fn gcc_one_at_a_time_and_halving_agree_on_independent_culprits() {
        let fl = flags(134);
        let mut o = FlagOracle {
            cures: vec!["-fflag17", "-fflag99"],
            calls: 0,
        };
        let a = bisect_gcc(&mut o, &fl, GccStrategy::OneAtATime { max: 500 })
            .await
            .unwrap();
        assert_eq!(a.flags, vec!["-fflag17", "-fflag99"]);
        assert_eq!((a.checks, a.flags_tried), (135, 134));
        let mut o = FlagOracle {
            cures: vec!["-fflag17", "-fflag99"],
            calls: 0,
        };
        let b = bisect_gcc(&mut o, &fl, GccStrategy::Halving { max: 500 })
            .await
            .unwrap();
        assert_eq!(b.flags, a.flags);
        assert_eq!(b.method, Method::GccFlagHalving);
        assert!(b.checks <= 2 + 2 * 2 * 8, "{} checks", b.checks);
        assert_eq!(b.checks, o.calls);
        assert_eq!(b.signature(), "-fflag17+-fflag99");
        // Capped: stops early, says how many were tried.
        let mut o = FlagOracle {
            cures: vec!["-fflag130"],
            calls: 0,
        };
        let c = bisect_gcc(&mut o, &fl, GccStrategy::OneAtATime { max: 10 })
            .await
            .unwrap();
        assert!(c.flags.is_empty());
        assert_eq!(c.flags_tried, 10);
    }

    #[tokio::test]
    async fn real_clang_pass_names_for_a_tiny_program() {
        let clang = Compiler::discover("clang-19")
            .await
            .expect("the test needs clang-19 (.ci/run installs it)");
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("x.c");
        std::fs::write(
            &src,
            "int g;\nstatic int f(int a) { int b = a * 3; return b + 1; }\nint main(void) { int s = 0; for (int i = 0; i < 10; i++) s += f(i); g = s; return 0; }\n",
        )
        .unwrap();
        let log = pass_log(&clang, "O2", &src, &[], -1).await.expect("the pass log");
        assert!(log.len() > 50, "{} passes", log.len());
        let shown = || format!("{:?}", &log[..log.len().min(20)]);
        assert!(log.iter().all(|r| r.ran), "{}", shown());
        assert!(
            log.iter().any(|r| r.pass == "InstCombinePass" && r.target == "main"),
            "{}",
            shown()
        );
        assert!(
            log.iter()
                .any(|r| r.pass.starts_with("X86 ") && r.target == "function (main)"),
            "{}",
            shown()
        );
        let numbers: Vec<u32> = log.iter().map(|r| r.number).collect();
        assert_eq!(numbers, (1..=log.len() as u32).collect::<Vec<_>>());
        // Limit 5: exactly five run.
        let five = pass_log(&clang, "O2", &src, &[], 5)
            .await
            .expect("the pass log, limit 5");
        assert_eq!(five.iter().filter(|r| r.ran).count(), 5, "{five:?}");

        // The whole Clang bisection with a fake oracle: bug from pass 37.
        let mut o = LimitOracle {
            from: 37,
            calls: vec![],
        };
        let c = bisect_clang(&mut o, &clang, "O2", &src, &[])
            .await
            .expect("the bisection");
        assert_eq!(c.limit, Some(37), "{c:?}; oracle calls {:?}", o.calls);
        assert_eq!(c.pass.as_deref(), Some(log[36].pass.as_str()));
        assert_eq!(c.passes, Some(log.len() as u32));
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains("\"method\":\"opt_bisect_limit\""), "{json}");
    }

    #[tokio::test]
    async fn real_gcc_enabled_flags() {
        let gcc = Compiler::discover("gcc")
            .await
            .expect("the test needs gcc (scripts/deps/apt.txt)");
        let o2 = gcc_enabled_flags(&gcc, "O2").await.unwrap();
        let o1 = gcc_enabled_flags(&gcc, "O1").await.unwrap();
        assert!(o2.len() > o1.len() && o2.len() > 80, "{} vs {}", o2.len(), o1.len());
        assert!(o2.iter().any(|f| f == "-ftree-pre"));
        assert!(!o2.iter().any(|f| f == "-fshort-enums"));
    }
}
