//! One seed program through the whole pipeline: preparation (well-formedness,
//! actionable pairs, shadow validation) and the compiler x level x debugger
//! matrix of batched checks, with line augmentation where the optimized
//! line table lacks a line (PLDI'20 sections 4.1 to 4.3 and Algorithm 1).

use crate::builder::{CLevel, LevelBuilder};
use crate::check::{self, Session};
use crate::config::DebuginfoConfig;
use crate::toolchain::Compiler;
use crate::{CheckVerdict, Pair, Reference, augment, shadow, wellformed};
use doppel_core::Subject;
use doppel_core::process::Limits;
use doppel_debuggers::Debugger;
use doppel_lang::c::clang_scope::{self, ScopeMap};
use doppel_lang::c::{BuildCache, coverage, linetable, statements, ts_scope, writes};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A seed program.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Program {
    /// Stable name (`csmith-17.c`, or the path relative to its corpus).
    pub name: String,
    /// The source file (absolute).
    pub source: PathBuf,
    /// Hex SHA-256 of the source text.
    pub hash: String,
    /// The Csmith seed and options, for Csmith programs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csmith: Option<(u64, Vec<String>)>,
}

impl Program {
    /// A program from a file.
    ///
    /// Errors: the file cannot be read.
    pub fn from_file(name: &str, source: &Path) -> Result<Program, String> {
        let text = std::fs::read(source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
        let source = std::path::absolute(source).unwrap_or_else(|_| source.to_path_buf());
        Ok(Program {
            name: name.to_string(),
            source,
            hash: hex::encode(Sha256::digest(&text)),
            csmith: None,
        })
    }

    /// The source's file name (`a.c`), as breakpoints and line tables name it.
    pub fn file_name(&self) -> String {
        self.source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "prog.c".into())
    }
}

/// Flags every build of a seed needs besides the level (Csmith's headers).
pub fn include_flags() -> Vec<String> {
    vec!["-I/usr/include/csmith".to_string()]
}

/// The result of preparing a program.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "prepared", rename_all = "snake_case")]
pub enum Preparation {
    /// The program can be checked.
    Ready(Box<Ready>),
    /// The program was rejected at `stage` (`seed`, `coverage`, `scopes`,
    /// `shadow`, `pairs`) for `reason`.
    Rejected {
        /// The stage (`seed`, `coverage`, `scopes`, `shadow`, `pairs`).
        stage: String,
        /// Why, for people.
        reason: String,
        /// Seconds spent preparing it.
        seconds: f64,
    },
    /// The machine could not prepare the program at `stage` (a tool is
    /// missing or cannot run, a sanitizer report names no line): an error of
    /// the campaign, not a verdict on the program, so it is never stored as
    /// one ([`crate::shadow::ShadowError::Environment`]).
    Failed {
        /// The stage that failed.
        stage: String,
        /// The cause (the missing tool, the unattributed report).
        error: String,
    },
}

/// A prepared program: its references and the bookkeeping of how many
/// pairs each step kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ready {
    /// The seed program's own check (sanitizers, exit, output).
    pub seed_check: wellformed::SeedCheck,
    /// Lines where a statement starts.
    pub statement_lines: usize,
    /// Of those, lines executed at least once.
    pub covered_lines: usize,
    /// Actionable pairs (covered statement line x variable in scope of a
    /// checked kind, not written on that line) before sampling.
    pub candidates: usize,
    /// Pairs left out because their line writes the variable.
    #[serde(default)]
    pub written_on_line: usize,
    /// Pairs handed to shadow validation (at most `max_pairs`).
    pub sampled: usize,
    /// Pairs shadow validation rejected, with the reason.
    pub rejected: Vec<(Pair, String)>,
    /// The references: pairs with their -O0 value at the first hit of s.
    pub references: Vec<Reference>,
    /// Which scope oracle found the variables in scope (see
    /// [`scope_oracle`]): `clang`, or `tree-sitter (clang: <why clang's
    /// failed>)`. Empty in records written before the fallback existed
    /// (clang then).
    #[serde(default)]
    pub scope_oracle: String,
    /// Seconds spent preparing.
    pub seconds: f64,
}

/// Prepares `program`: seed well-formedness, covered statement lines,
/// scopes, sampled pairs, shadow validation.
///
/// Never fails: every problem of the program is a
/// [`Preparation::Rejected`] with its stage, every problem of the machine
/// shadow validation found a [`Preparation::Failed`].
///
/// `barrier` is the barrier unit (`opt_me_not.c`), linked into every build
/// (seed check, coverage, shadow): programs written for line augmentation,
/// like the paper's figures, call `opt_me_not()` themselves.
pub async fn prepare(program: &Program, config: &DebuginfoConfig, limits: Limits, barrier: &Path) -> Preparation {
    let started = Instant::now();
    let reject = |stage: &str, reason: String| Preparation::Rejected {
        stage: stage.into(),
        reason,
        seconds: started.elapsed().as_secs_f64(),
    };
    let barrier_unit = barrier.to_string_lossy().into_owned();
    let mut check_config = wellformed::CheckConfig {
        valgrind: config.seed_memcheck,
        timeout: config.run_timeout,
        ..Default::default()
    };
    check_config.extra_flags.push(barrier_unit.clone());
    let seed_check = wellformed::check_seed(&program.source, &check_config).await;
    if let wellformed::SeedCheck::Rejected { reason, detail, .. } = &seed_check {
        return reject(
            "seed",
            format!(
                "{}: {detail}",
                serde_json::to_string(reason).unwrap_or_default().trim_matches('"')
            ),
        );
    }
    let text = match std::fs::read_to_string(&program.source) {
        Ok(t) => t,
        Err(e) => return reject("seed", format!("cannot read the source: {e}")),
    };
    let starts = statements::statement_starts(&text);
    let counts = match coverage::line_counts(
        &program.source,
        &[include_flags(), vec![barrier_unit.clone()]].concat(),
        config.run_timeout,
        limits,
    )
    .await
    {
        Ok(c) => c,
        Err(e) => return reject("coverage", e),
    };
    let covered: BTreeSet<u32> = starts
        .iter()
        .copied()
        .filter(|l| counts.get(l).is_some_and(|&n| n > 0))
        .collect();
    let (scopes, oracle) = match scope_oracle(&program.source, &text, &wellformed::sanitizer_clang()).await {
        Ok(s) => s,
        Err(e) => return reject("scopes", e),
    };
    // A line that writes v has no single value of v "at" it (see
    // doppel_lang::c::writes): such pairs are left out.
    let writes = writes::writes_by_line(&text);
    let mut written = 0usize;
    let mut pairs: Vec<Pair> = Vec::new();
    for &line in &covered {
        for variable in scopes.visible_at(line) {
            if !config.checks_kind(variable.kind.name()) {
                continue;
            }
            if writes.get(&line).is_some_and(|w| w.contains(&variable.name)) {
                written += 1;
                continue;
            }
            pairs.push(Pair { line, variable });
        }
    }
    let candidates = pairs.len();
    if config.max_pairs > 0 && pairs.len() > config.max_pairs {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
            config.seed ^ u64::from_str_radix(&program.hash[..15], 16).unwrap_or(0),
        );
        pairs.shuffle(&mut rng);
        pairs.truncate(config.max_pairs);
        pairs.sort_by(|a, b| (a.line, &a.variable.name).cmp(&(b.line, &b.variable.name)));
    }
    if pairs.is_empty() {
        return reject(
            "pairs",
            format!(
                "no actionable pair ({} statement lines, {} covered)",
                starts.len(),
                covered.len()
            ),
        );
    }
    let sampled = pairs.len();
    let shadowed = match shadow::validate(&program.source, &pairs, &{
        let mut c = shadow::ShadowConfig::default();
        c.extra_flags.push(barrier_unit.clone());
        c
    })
    .await
    {
        Ok(s) => s,
        Err(shadow::ShadowError::Program(e)) => return reject("shadow", e),
        Err(shadow::ShadowError::Environment(error)) => {
            return Preparation::Failed {
                stage: "shadow".into(),
                error,
            };
        }
    };
    Preparation::Ready(Box::new(Ready {
        seed_check,
        statement_lines: starts.len(),
        covered_lines: covered.len(),
        candidates,
        written_on_line: written,
        sampled,
        rejected: shadowed.rejected,
        references: shadowed.references,
        scope_oracle: oracle,
        seconds: started.elapsed().as_secs_f64(),
    }))
}

/// The parameters and locals in scope at each line of C file `source`
/// (whose text is `text`), and which oracle found them (PLDI'20 section
/// 4.1): clang's JSON AST from compiler `clang` (name on `PATH` or path,
/// with Csmith's headers, [`clang_scope::scopes`]), or, when that fails
/// (clang is not installed, rejects the file, times out, or its AST
/// cannot be read), tree-sitter-c's ([`ts_scope::scopes`], weaker: no
/// macro expansion, header typedefs from a fixed list). The oracle is
/// `clang`, or `tree-sitter (clang: <reason>)`.
///
/// In [`prepare`], the seed check has compiled the file with the same
/// clang already, so the fallback covers a failing AST dump rather than a
/// missing clang.
///
/// Errors: both oracles fail (both reasons).
pub async fn scope_oracle(source: &Path, text: &str, clang: &str) -> Result<(ScopeMap, String), String> {
    let why = match clang_scope::scopes(source, clang, &[PathBuf::from("/usr/include/csmith")]).await {
        Ok(s) => return Ok((s, "clang".to_string())),
        Err(e) => e,
    };
    match ts_scope::scopes(text) {
        Ok(s) => Ok((s, format!("tree-sitter (clang: {why})"))),
        Err(e) => Err(format!("clang: {why}; tree-sitter: {e}")),
    }
}

/// One optimized build and the references it checks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Build {
    /// The compiler.
    pub compiler: Compiler,
    /// The optimization level without the dash (`O2`).
    pub level: String,
    /// Lines prefixed with `opt_me_not();` (empty: the program as it is).
    pub augmented: Vec<u32>,
    /// The built program (source path, binary, hash).
    pub subject: Subject,
    /// The references checked in this build.
    pub references: Vec<Reference>,
    /// The build's own recipe with its extra units, for reproducers.
    pub recipe: String,
}

/// Builds `program` with `compiler` at `level` plus `extra` flags (bisection
/// switches) in `cache`: the program as it is when `augmented` is empty,
/// else the program with `opt_me_not();` before each of those lines and the
/// barrier as a unit of its own (section 4.3). Returns the subject and its
/// recipe.
///
/// Errors: the build fails (with the compiler's diagnostics).
pub async fn build(
    program: &Program,
    compiler: &Compiler,
    level: &str,
    extra: &[String],
    augmented: &BTreeSet<u32>,
    cache: &BuildCache,
) -> Result<(Subject, String), String> {
    // The include directory of Csmith's headers is among COMMON_FLAGS; the
    // barrier unit is linked into every build (unused unless augmented, or
    // called by the program itself).
    let flags = extra.to_vec();
    let barrier = barrier_unit(cache.dir())?;
    let recipe = compiler.recipe(level, &flags, &[barrier.as_path()]);
    let (source, what) = if augmented.is_empty() {
        (program.source.clone(), "")
    } else {
        (augmented_source(program, augmented, cache.dir())?, " (augmented)")
    };
    let subject = cache
        .build(&source, &program.name, &recipe)
        .await
        .map_err(|e| format!("{} -{level}{what}: {e}", compiler.name))?;
    Ok((subject, recipe.to_string()))
}

/// The barrier unit `<dir>/augmented/opt_me_not.c` (written if missing).
///
/// Errors: it cannot be written.
pub fn barrier_unit(dir: &Path) -> Result<PathBuf, String> {
    let dir = dir.join("augmented");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    augment::write_barrier(&dir).map_err(|e| format!("cannot write the barrier: {e}"))
}

/// The lines of `subject`'s source with an `is_stmt` row in its binary's
/// line table.
///
/// Errors: no binary, or an unreadable line table.
pub fn stmt_lines(subject: &Subject) -> Result<BTreeSet<u32>, String> {
    let binary = subject.binary.as_ref().ok_or("the build has no binary")?;
    linetable::stmt_lines(binary, &subject.source_name)
}

/// The checks of `program` at one (compiler, level): the builds and one
/// session per (build, debugger).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LevelCheck {
    /// The plain build and any augmented ones.
    pub builds: Vec<Build>,
    /// One session per (build, debugger).
    pub cells: Vec<Cell>,
}

/// [`check_level_with`] for a C program built into `cache`.
///
/// Errors: a build or line-table failure, with the reason.
pub async fn check_level(
    program: &Program,
    references: &[Reference],
    compiler: &Compiler,
    level: &str,
    cache: &BuildCache,
    debuggers: &mut [(String, Box<dyn Debugger>)],
) -> Result<LevelCheck, String> {
    let builder = CLevel {
        program,
        compiler,
        level,
        cache,
    };
    check_level_with(&builder, references, debuggers).await
}

/// Checks `references` in the optimized builds of `builder`'s program at
/// its level with every debugger, in two steps:
/// 1. the program as it is, for the references whose line has an
///    `is_stmt` row in its line table, and for those whose line cannot be
///    augmented ([`LevelBuilder::augmentable`]);
/// 2. the line-augmented program (section 4.3) for the other references,
///    and for the augmentable references of step 1 whose breakpoint some
///    debugger put on another line (a prologue line, for example: its row
///    exists, but debuggers skip the prologue). Those leave step 1's
///    verdicts (they keep their place in its trace), so every reference has
///    exactly one verdict per debugger.
///
/// Errors: a build or line-table failure, with the reason.
pub async fn check_level_with(
    builder: &dyn LevelBuilder,
    references: &[Reference],
    debuggers: &mut [(String, Box<dyn Debugger>)],
) -> Result<LevelCheck, String> {
    let (compiler, level) = (builder.compiler(), builder.level());
    let (plain, recipe) = builder.build(&[], &BTreeSet::new()).await?;
    let stmt = stmt_lines(&plain)?;
    let (direct, mut rest): (Vec<Reference>, Vec<Reference>) = references
        .iter()
        .cloned()
        .partition(|r| stmt.contains(&r.pair.line) || !builder.augmentable(r.pair.line));
    let mut builds = Vec::new();
    let mut cells = Vec::new();
    if !direct.is_empty() {
        let mut b = Build {
            compiler: compiler.clone(),
            level: level.to_string(),
            augmented: Vec::new(),
            subject: plain,
            references: direct,
            recipe,
        };
        let mut mine = check_builds(std::slice::from_ref(&b), debuggers).await;
        let moved: BTreeSet<usize> = mine
            .iter()
            .flat_map(|c| c.session.verdicts.iter().enumerate())
            .filter(|(_, v)| matches!(&v.verdict, CheckVerdict::NotHit { detail } if detail.contains(MOVED)))
            .map(|(i, _)| i)
            .filter(|&i| builder.augmentable(b.references[i].pair.line))
            .collect();
        if !moved.is_empty() {
            let keep = |i: &usize| !moved.contains(i);
            rest.extend(moved.iter().map(|&i| b.references[i].clone()));
            b.references = b
                .references
                .into_iter()
                .enumerate()
                .filter(|(i, _)| keep(i))
                .map(|(_, r)| r)
                .collect();
            for c in &mut mine {
                c.session.verdicts = std::mem::take(&mut c.session.verdicts)
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| keep(i))
                    .map(|(_, v)| v)
                    .collect();
            }
        }
        if !b.references.is_empty() {
            builds.push(b);
            cells.extend(mine);
        }
    }
    if !rest.is_empty() {
        rest.sort_by(|a, b| (a.pair.line, &a.pair.variable.name).cmp(&(b.pair.line, &b.pair.variable.name)));
        let lines: BTreeSet<u32> = rest.iter().map(|r| r.pair.line).collect();
        let (subject, recipe) = builder.build(&[], &lines).await?;
        let b = Build {
            compiler: compiler.clone(),
            level: level.to_string(),
            augmented: lines.into_iter().collect(),
            subject,
            references: rest,
            recipe,
        };
        let index = builds.len();
        for mut c in check_builds(std::slice::from_ref(&b), debuggers).await {
            c.build = index;
            cells.push(c);
        }
        builds.push(b);
    }
    Ok(LevelCheck { builds, cells })
}

/// What [`crate::check`] says of a breakpoint the debugger put on another line.
const MOVED: &str = "went to line";

/// Writes the program with `opt_me_not();` before each of `lines` under
/// `<dir>/augmented/<hash of the result>/<file name>`.
fn augmented_source(program: &Program, lines: &BTreeSet<u32>, dir: &Path) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(&program.source).map_err(|e| format!("cannot read the source: {e}"))?;
    let augmented = augment::augment(&text, lines);
    let sub = dir
        .join("augmented")
        .join(&hex::encode(Sha256::digest(augmented.as_bytes()))[..16]);
    std::fs::create_dir_all(&sub).map_err(|e| format!("cannot write the augmented program: {e}"))?;
    let path = sub.join(program.file_name());
    std::fs::write(&path, augmented).map_err(|e| format!("cannot write the augmented program: {e}"))?;
    Ok(path)
}

/// One session of the matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// Index into the builds of its (compiler, level).
    pub build: usize,
    /// The debugger (a registered backend name).
    pub debugger: String,
    /// What the session checked and how it ended.
    pub session: Session,
}

/// Checks every build with every debugger in `debuggers` (name, backend).
pub async fn check_builds(builds: &[Build], debuggers: &mut [(String, Box<dyn Debugger>)]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for (i, b) in builds.iter().enumerate() {
        for (name, dbg) in debuggers.iter_mut() {
            let session = check::check_binary(dbg.as_mut(), &b.subject, &b.references).await;
            cells.push(Cell {
                build: i,
                debugger: name.clone(),
                session,
            });
        }
    }
    cells
}

/// Verdict counts per name, for statistics.
pub fn verdict_counts<'a>(cells: impl IntoIterator<Item = &'a Cell>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for c in cells {
        for v in &c.session.verdicts {
            *m.entry(v.verdict.name().to_string()).or_insert(0) += 1;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::process;

    const PROG: &str = "#include <stdint.h>\nint f(int32_t p) {\n  uint8_t a = 1;\n  return p + a;\n}\nint main(void) { return f(1); }\n";

    fn visible(m: &ScopeMap, line: u32) -> Vec<String> {
        m.visible_at(line).into_iter().map(|v| v.name).collect()
    }

    #[tokio::test]
    async fn the_scope_oracle_is_clang_when_clang_can_dump_the_ast() {
        let clang = wellformed::sanitizer_clang();
        assert!(
            process::which(&clang).is_some(),
            "clang is needed (apt-get install clang-19)"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.c");
        std::fs::write(&f, PROG).unwrap();
        let (m, oracle) = scope_oracle(&f, PROG, &clang).await.unwrap();
        assert_eq!(oracle, "clang");
        assert_eq!(visible(&m, 4), ["p", "a"]);
    }

    #[tokio::test]
    async fn the_scope_oracle_falls_back_to_tree_sitter_when_clang_is_missing_or_fails() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.c");
        std::fs::write(&f, PROG).unwrap();
        let (m, oracle) = scope_oracle(&f, PROG, "no-such-clang-doppel").await.unwrap();
        assert!(
            oracle.starts_with("tree-sitter (clang: no-such-clang-doppel is not installed"),
            "{oracle}"
        );
        assert_eq!(visible(&m, 4), ["p", "a"]);
        // A file clang rejects (an undeclared name) still parses.
        let clang = wellformed::sanitizer_clang();
        assert!(
            process::which(&clang).is_some(),
            "clang is needed (apt-get install clang-19)"
        );
        let broken = PROG.replace("return p + a;", "return p + a + undeclared;");
        std::fs::write(&f, &broken).unwrap();
        let (m, oracle) = scope_oracle(&f, &broken, &clang).await.unwrap();
        assert!(
            oracle.starts_with("tree-sitter (clang: ") && oracle.contains("failed"),
            "{oracle}"
        );
        assert_eq!(visible(&m, 4), ["p", "a"]);
    }

    #[test]
    fn ready_records_without_the_oracle_still_read() {
        // A record written before the oracle was recorded.
        let json = serde_json::json!({
            "seed_check": {"outcome": "ok", "exit_code": 0, "stdout_sha256": "", "stdout": "", "seconds": 0.0},
            "statement_lines": 1, "covered_lines": 1, "candidates": 0, "sampled": 0,
            "rejected": [], "references": [], "seconds": 0.0
        });
        let r: Ready = serde_json::from_value(json).unwrap();
        assert_eq!(r.scope_oracle, "");
        let written = serde_json::to_value(&r).unwrap();
        assert_eq!(written["scope_oracle"], "");
    }
}
