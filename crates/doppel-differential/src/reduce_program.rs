//! Program reduction of a differential finding, after its action sequence
//! was reduced ([`crate::reduce`]): C with C-Vise, JavaScript with
//! treereduce 0.4 and tree-sitter-javascript ([`reducer_for`]).
//!
//! Reducers renumber lines, and the actions name lines. So every line a
//! breakpoint action names is marked with a comment `/*DOPPEL_B<k>*/` at
//! column 1 (k: the line's index in [`ProbeCase::lines`]); a comment changes
//! neither code nor line numbers (the debug-info reduction's device,
//! `doppel_debuginfo::reduce::MARKER`). A variant is interesting iff (the
//! script of [`interestingness_script`]):
//! 1. it passes a `-fsyntax-only` check with the warnings C-Vise artefacts
//!    cause made errors (implicit int, implicit declarations, ...);
//! 2. `doppel reduce-probe --case case.json a.c` ([`probe`]) exits 0: every
//!    marker occurs exactly once, the program builds with the run's recipe,
//!    and the reduced actions, their lines taken from the markers, diverge
//!    in the real debuggers with the finding's class key.
//!
//! A JavaScript variant is interesting iff the probe, called by
//! treereduce on the variant's file (`@@`), exits 0; the probe refuses
//! variants with syntax errors (oxc with semantic checks) first.
//!
//! The kept program has its markers removed (lines unchanged) and is run
//! once more in-process before it is stored.
//!
//! The driver ([`reduce_program_with`]: markers, the reducer's process, the
//! choice and confirmation of the kept variant) takes the test of a variant
//! as a [`VariantProbe`]: the differential one here ([`DiffProbe`]), the
//! metamorphic one in `doppel-metamorphic` (the round re-applied to the
//! variant); `doppel reduce-probe` picks it by the case's technique.

use crate::record::DiffRecord;
use crate::reduce::{ReducedCase, same_class, try_script};
use doppel_core::process::{self, Sandbox};
use doppel_core::{Action, ClassKey, Language, Location, RunRecord, Trace, Verdict};
use doppel_lang::c::BuildRecipe;
use doppel_lang::reduce::{Reducer, ReducerEnd, cvise_command, treereduce_command};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::process::Command;

/// What the probe of a variant needs: written as `case.json` next to the
/// script.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeCase {
    /// The run (traces dropped): configuration, subject and build recipe.
    pub run: RunRecord,
    /// The reduced actions, lines as in the original program.
    pub actions: Vec<Action>,
    /// The original lines that carry marker k (index k).
    pub lines: Vec<u32>,
    /// The class the variant must diverge with.
    pub class: ClassKey,
    /// The build cache directory.
    pub cache_dir: PathBuf,
}

/// A variant confirmed as the finding: the verdict and traces of its run,
/// and what the technique keeps besides (metamorphic: the follow-up
/// program of the round re-applied to the variant).
#[derive(Debug, Clone)]
pub struct Confirmed<E> {
    /// The verdict of the variant's run (the finding's class).
    pub verdict: Verdict,
    /// The traces of that run (what the reproducer shows).
    pub traces: Vec<Trace>,
    /// The technique's own part.
    pub extra: E,
}

/// A technique's test of a program variant: run the case's actions (lines
/// already those of `text`) on `text` in the real tools.
pub trait VariantProbe: Sync {
    /// What a confirming run keeps besides verdict and traces.
    type Extra: Send;
    /// `Ok(Ok(_))` iff `text` with `case.actions` gives the finding's class
    /// again; `Ok(Err(why))` when not.
    ///
    /// Errors: the tools cannot be created, I/O.
    fn probe(
        &self,
        case: &ProbeCase,
        text: &str,
    ) -> impl std::future::Future<Output = anyhow::Result<Result<Confirmed<Self::Extra>, String>>> + Send;
}

/// The differential technique's [`VariantProbe`]: [`probe`], unmarked.
pub struct DiffProbe;

impl VariantProbe for DiffProbe {
    type Extra = ();

    async fn probe(&self, case: &ProbeCase, text: &str) -> anyhow::Result<Result<Confirmed<()>, String>> {
        Ok(probe(case, text, false).await?.map(|o| Confirmed {
            verdict: o.verdict,
            traces: o.traces,
            extra: (),
        }))
    }
}

/// The marker of line index `k`.
pub fn marker(k: usize) -> String {
    format!("/*DOPPEL_B{k}*/")
}

/// The distinct lines the breakpoint actions of `actions` name, in order
/// of first use.
pub fn breakpoint_lines(actions: &[Action]) -> Vec<u32> {
    let mut out = Vec::new();
    for a in actions {
        if let Action::SetBreakpoint { at } | Action::RemoveBreakpoint { at } = a
            && !out.contains(&at.line)
        {
            out.push(at.line);
        }
    }
    out
}

/// `text` with [`marker`]`(k)` at column 1 of line `lines[k]`.
pub fn mark(text: &str, lines: &[u32]) -> String {
    let mut out = String::with_capacity(text.len() + 16 * lines.len());
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if let Some(k) = lines.iter().position(|&n| n as usize == i + 1) {
            out.push_str(&marker(k));
        }
        out.push_str(l);
    }
    out
}

/// The line of each of `count` markers in `text`, or `None` unless each
/// occurs exactly once.
pub fn marker_lines(text: &str, count: usize) -> Option<Vec<u32>> {
    (0..count)
        .map(|k| {
            let m = marker(k);
            if text.matches(&m).count() != 1 {
                return None;
            }
            Some(text[..text.find(&m)?].matches('\n').count() as u32 + 1)
        })
        .collect()
}

/// `text` without markers: removed at the start of a line, a space
/// elsewhere (so no two tokens are joined); line numbers stay.
pub fn strip_markers(text: &str, count: usize) -> String {
    let mut t = text.to_string();
    for k in 0..count {
        let m = marker(k);
        while let Some(i) = t.find(&m) {
            let at_start = t[..i].chars().rev().take_while(|c| *c != '\n').all(char::is_whitespace);
            t.replace_range(i..i + m.len(), if at_start { "" } else { " " });
        }
    }
    t
}

pub use doppel_lang::reduce::drop_blank_lines;

/// `actions` with each breakpoint line `from[k]` moved to `to[k]`.
pub fn reline(actions: &[Action], from: &[u32], to: &[u32]) -> Vec<Action> {
    let map = |at: &Location| {
        let k = from.iter().position(|&l| l == at.line);
        Location {
            line: k.map(|k| to[k]).unwrap_or(at.line),
            ..at.clone()
        }
    };
    actions
        .iter()
        .map(|a| match a {
            Action::SetBreakpoint { at } => Action::SetBreakpoint { at: map(at) },
            Action::RemoveBreakpoint { at } => Action::RemoveBreakpoint { at: map(at) },
            other => other.clone(),
        })
        .collect()
}

/// The actions a variant `text` of `case`'s program is probed with: the
/// case's, relined to where the variant's markers are when `marked`.
/// `Err` (the variant is not interesting) with the reason: a marker is
/// missing or duplicated, or a JavaScript variant has a syntax error (oxc
/// with semantic checks). Shared by every technique's probe.
pub fn variant_actions(case: &ProbeCase, text: &str, marked: bool) -> Result<Vec<Action>, String> {
    let actions = if marked {
        match marker_lines(text, case.lines.len()) {
            Some(to) => reline(&case.actions, &case.lines, &to),
            None => return Err("a marker is missing or duplicated".into()),
        }
    } else {
        case.actions.clone()
    };
    if case.run.subject.language == Language::JavaScript
        && let Some(e) = doppel_lang::js::syntax_errors(text).first()
    {
        return Err(format!("syntax error: {e}"));
    }
    Ok(actions)
}

/// Runs the case's actions on the program `text` (marked or not: with
/// `marked`, the lines come from its markers) and says whether it diverges
/// with the case's class; `Err` with the reason when not.
///
/// Errors (outer): a debugger cannot be created, I/O.
pub async fn probe(
    case: &ProbeCase,
    text: &str,
    marked: bool,
) -> anyhow::Result<Result<crate::engine::RunOutcome, String>> {
    let actions = match variant_actions(case, text, marked) {
        Ok(a) => a,
        Err(why) => return Ok(Err(why)),
    };
    let mut run = case.run.clone();
    let mut rec = DiffRecord::of(&run)?;
    rec.input.source_text = text.to_string();
    rec.reduced = None;
    run.config = rec.to_value();
    run.subject.hash = crate::reduce::text_hash(text);
    run.subject.line_count = text.lines().count() as u32;
    let p = crate::replay::prepared_of(&run, &rec.input, &case.cache_dir).await?;
    if let Some(e) = &p.error {
        return Ok(Err(format!("does not build: {}", e.lines().next().unwrap_or(""))));
    }
    let mut dbg = crate::campaign::create_debuggers(&rec.spec("reduce".into()))?;
    let out = try_script(
        &rec,
        &p,
        &actions,
        &mut dbg,
        crate::reduce::per_test_timeout(&rec, actions.len()),
    )
    .await?;
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    Ok(match out {
        Some(o) if same_class(&o.verdict, &case.class) => Ok(o),
        Some(o) => Err(format!("verdict {}", crate::replay::describe(&o.verdict))),
        None => Err("timed out".into()),
    })
}

/// Warnings made errors in the syntax check: artefacts of C-Vise that
/// compilers accept silently (as the debug-info reduction's
/// `DEFAULT_WARNING_ERRORS`).
pub const WARNING_ERRORS: [&str; 5] = [
    "implicit-int",
    "implicit-function-declaration",
    "return-type",
    "int-conversion",
    "incompatible-pointer-types",
];

/// Quotes `s` for POSIX sh.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Seconds a variant may run alone (without a debugger) in the
/// termination check.
pub const RUN_ALONE_SECONDS: u32 = 10;

/// The sh lines that build `a.c` with `recipe` into `doppel-prog`, run it
/// alone under a timeout and leave its exit status in `$status` (124: the
/// timeout).
fn run_alone(recipe: &BuildRecipe) -> String {
    let flags: Vec<String> = recipe.flags.iter().map(|f| sh_quote(f)).collect();
    format!(
        "timeout -k 5 30 {cc} {flags} a.c -o doppel-prog >/dev/null 2>&1 || exit 1\n\
         timeout -k 2 {secs} ./doppel-prog >/dev/null 2>&1 </dev/null\nstatus=$?\n",
        cc = sh_quote(&recipe.compiler),
        flags = flags.join(" "),
        secs = RUN_ALONE_SECONDS,
    )
}

/// The interestingness script: `sh`, run by C-Vise in a directory holding
/// the variant `a.c`; exit 0 iff interesting: the syntax check, the
/// variant run alone ends with exit status `status` (the original's, so a
/// variant that loops forever or crashes where the original did not is
/// not kept), then the probe (see the module docs).
pub fn interestingness_script(
    doppel_exe: &Path,
    case_json: &Path,
    recipe: &BuildRecipe,
    status: i32,
    probe_timeout: Duration,
) -> String {
    let werr: Vec<String> = WARNING_ERRORS.iter().map(|w| format!("-Werror={w}")).collect();
    format!(
        "#!/bin/sh\n# doppel interestingness test (generated by doppel-differential reduce_program).\n\
         # Run by C-Vise in a directory holding the variant a.c; exit 0 = interesting.\n\
         timeout -k 5 30 {cc} -fsyntax-only {werr} a.c >/dev/null 2>&1 || exit 1\n\
         {alone}[ \"$status\" = {status} ] || exit 1\n\
         exec timeout -k 10 {pt} {doppel} reduce-probe --case {case} a.c >doppel-probe.out 2>&1\n",
        cc = sh_quote(&recipe.compiler),
        werr = werr.join(" "),
        alone = run_alone(recipe),
        pt = probe_timeout.as_secs(),
        doppel = sh_quote(&doppel_exe.to_string_lossy()),
        case = sh_quote(&case_json.to_string_lossy()),
    )
}

/// The exit status of the program `a.c` in `dir` run alone (124: it ran
/// past [`RUN_ALONE_SECONDS`]).
///
/// Errors: it does not build, or sh cannot run.
async fn status_alone(dir: &Path, recipe: &BuildRecipe) -> anyhow::Result<i32> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("{}exit $status\n", run_alone(recipe)))
        .current_dir(dir);
    let done = process::run(cmd, Duration::from_secs(60), Sandbox::NONE).await?;
    match done.code {
        Some(c) if !done.timed_out => Ok(c),
        _ => anyhow::bail!(
            "the original program does not build or run alone: {}",
            done.stderr.trim()
        ),
    }
}

pub use doppel_lang::reduce::reducer_for;

/// Reduces the program of `case` (a finding whose actions were reduced)
/// within `budget`, working in `work` (created): C with C-Vise and the
/// script of [`interestingness_script`], JavaScript with
/// `treereduce-javascript` calling `doppel reduce-probe` on each variant
/// (`@@`). On success the case holds the reduced program (markers
/// removed), its relined actions and the traces of a confirming run; when
/// nothing smaller is found, or the result does not confirm, the case is
/// returned with a note.
///
/// Errors: a language without a reducer, the reducer missing, I/O.
pub async fn reduce_program(
    run: &RunRecord,
    case: ReducedCase,
    doppel_exe: &Path,
    cache_dir: &Path,
    work: &Path,
    budget: Duration,
) -> anyhow::Result<ReducedCase> {
    let rec = DiffRecord::of(run)?;
    let per_probe = crate::reduce::per_test_timeout(&rec, case.actions.len()) + Duration::from_secs(30);
    let reduction = ProgramReduction {
        run,
        source_text: &rec.input.source_text,
        per_probe,
        doppel_exe,
        cache_dir,
        work,
        budget,
    };
    Ok(reduce_program_with(&reduction, case, &DiffProbe).await?.0)
}

/// What [`reduce_program_with`] works on besides the case.
#[derive(Debug, Clone, Copy)]
pub struct ProgramReduction<'a> {
    /// The stored finding (its subject's language and build recipe; its
    /// configuration goes to the probe's `case.json`, traces dropped).
    pub run: &'a RunRecord,
    /// The program to reduce (the finding's, or its test's initial program).
    pub source_text: &'a str,
    /// The bound on one probe (the reducer's per-variant timeout).
    pub per_probe: Duration,
    /// The `doppel` executable the interestingness test calls.
    pub doppel_exe: &'a Path,
    /// The build cache directory.
    pub cache_dir: &'a Path,
    /// The work directory (created).
    pub work: &'a Path,
    /// The reducer's wall-time budget.
    pub budget: Duration,
}

/// [`reduce_program`] with the technique's test of a variant: the
/// interestingness test runs `doppel reduce-probe` (which picks the probe
/// by the case's technique), and the kept variant is confirmed in-process
/// with `prober`. Returns the case and, when a smaller program was kept,
/// the probe's extra part of its confirming run.
///
/// Errors: a language without a reducer, the reducer missing, I/O.
pub async fn reduce_program_with<P: VariantProbe>(
    r: &ProgramReduction<'_>,
    mut case: ReducedCase,
    prober: &P,
) -> anyhow::Result<(ReducedCase, Option<P::Extra>)> {
    let (run, doppel_exe, cache_dir, work, budget) = (r.run, r.doppel_exe, r.cache_dir, r.work, r.budget);
    let started = Instant::now();
    let reducer = Reducer::find(run.subject.language)?;
    let tool = reducer.tool;
    let class = case
        .verdict
        .finding()
        .map(|f| f.class.clone())
        .ok_or_else(|| anyhow::anyhow!("the reduced case is not a divergence"))?;
    let lines = breakpoint_lines(&case.actions);
    let mut bare = run.clone();
    bare.traces.clear();
    let probe_case = ProbeCase {
        run: bare,
        actions: case.actions.clone(),
        lines: lines.clone(),
        class,
        cache_dir: cache_dir.to_path_buf(),
    };
    std::fs::create_dir_all(work)?;
    let work = work.canonicalize()?;
    let case_json = work.join("case.json");
    std::fs::write(&case_json, serde_json::to_string(&probe_case)?)?;
    match std::fs::remove_file(last_interesting_path(&case_json)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    let per_probe = r.per_probe;
    let variant_dir = work.join("variant");
    std::fs::create_dir_all(&variant_dir)?;
    let marked = mark(r.source_text, &lines);
    let (cmd, result) = if run.subject.language == Language::C {
        std::fs::write(variant_dir.join("a.c"), &marked)?;
        let recipe = BuildRecipe::parse(&run.subject.build).map_err(anyhow::Error::msg)?;
        let status = status_alone(&variant_dir, &recipe).await?;
        let script = work.join("interesting.sh");
        std::fs::write(
            &script,
            interestingness_script(doppel_exe, &case_json, &recipe, status, per_probe),
        )?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
        }
        let cmd = cvise_command(&reducer.exe, &variant_dir, &script, "a.c", per_probe);
        (cmd, variant_dir.join("a.c"))
    } else {
        std::fs::write(variant_dir.join("original.js"), &marked)?;
        let out = variant_dir.join("reduced.js");
        let check = [
            doppel_exe.as_os_str().to_owned(),
            "reduce-probe".into(),
            "--case".into(),
            case_json.as_os_str().to_owned(),
            "@@".into(),
        ];
        let cmd = treereduce_command(&reducer.exe, &variant_dir, "original.js", &out, per_probe, &check);
        (cmd, out)
    };
    let end = reducer.run(cmd, budget, &work.join("reducer.log")).await?;
    case.program_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
    match end {
        ReducerEnd::Budget => case
            .notes
            .push(format!("{tool} stopped at its budget of {} s", budget.as_secs())),
        ReducerEnd::Failed(why) => {
            case.notes.push(why);
            return Ok((case, None));
        }
        ReducerEnd::Finished => {}
    }
    // C-Vise keeps its best variant in a.c as it goes; treereduce writes
    // its output at the end only. Stopped at its budget, C-Vise may leave an
    // unverified variant there (its lines pass rewrites a.c in place while
    // it checks the rewrite), and treereduce nothing: the variant
    // `doppel reduce-probe` accepted last is the fallback.
    let mut candidates = vec![std::fs::read_to_string(&result).unwrap_or_default()];
    if let Some(last) = last_interesting(&case_json)
        && !candidates.contains(&last)
    {
        candidates.push(last);
    }
    let mut kept = None;
    let mut why_not = Vec::new();
    for (i, candidate) in candidates.into_iter().enumerate() {
        match confirm_candidate(
            prober,
            &probe_case,
            &case.actions,
            &lines,
            r.source_text,
            candidate,
            tool,
        )
        .await?
        {
            Ok(k) => {
                if i > 0 {
                    case.notes.push(format!(
                        "what {tool} left did not confirm; the variant the probe accepted last is used"
                    ));
                }
                kept = Some(k);
                break;
            }
            Err(why) => why_not.push(why),
        }
    }
    let mut extra = None;
    match kept {
        Some((text, actions, o)) => {
            if text.contains("/*DOPPEL_B") {
                case.notes
                    .push("the markers are kept: without them the class changes".into());
            }
            case.lines = text.lines().count();
            case.source_text = Some(text);
            case.actions = actions;
            case.verdict = o.verdict;
            case.traces = o.traces;
            extra = Some(o.extra);
        }
        None => {
            why_not.dedup();
            case.notes.extend(why_not);
        }
    }
    case.program_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
    Ok((case, extra))
}

/// Where `doppel reduce-probe` keeps the variant it accepted last: beside
/// the probe's `case.json`.
pub fn last_interesting_path(case_json: &Path) -> PathBuf {
    case_json.with_file_name("last-interesting")
}

/// Records `text` as the variant accepted last (through a temporary file
/// renamed into place, so a reducer killed at its budget never leaves half
/// a file). Called by `doppel reduce-probe` on exit 0.
///
/// Errors: the work directory cannot be written.
pub fn record_interesting(case_json: &Path, text: &str) -> std::io::Result<()> {
    let path = last_interesting_path(case_json);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &path)
}

fn last_interesting(case_json: &Path) -> Option<String> {
    std::fs::read_to_string(last_interesting_path(case_json)).ok()
}

/// The first of a candidate's forms that gives the class again, tried in
/// order: blank lines dropped (reducers leave the lines of what they
/// delete; markers move with their lines), then as the reducer left it;
/// each without markers, then with them (a comment can change a line's AST
/// node type in the class key, e.g. when the reducer joined lines).
/// `Ok(Err(note))`: no form confirms, or the candidate lost a marker or is
/// not smaller than `original` (the note names `tool`).
async fn confirm_candidate<P: VariantProbe>(
    prober: &P,
    probe_case: &ProbeCase,
    actions: &[Action],
    lines: &[u32],
    original: &str,
    candidate: String,
    tool: &str,
) -> anyhow::Result<Result<(String, Vec<Action>, Confirmed<P::Extra>), String>> {
    if marker_lines(&candidate, lines.len()).is_none() {
        return Ok(Err(format!(
            "{tool} left no variant with every marker; the original program is kept"
        )));
    }
    if strip_markers(&candidate, lines.len()).len() >= original.len() {
        return Ok(Err(format!("{tool} found no smaller program")));
    }
    let squeezed = drop_blank_lines(&candidate);
    let mut tried = Vec::new();
    for text in [squeezed, candidate] {
        let Some(to) = marker_lines(&text, lines.len()) else {
            continue;
        };
        let confirm_case = ProbeCase {
            actions: reline(actions, lines, &to),
            ..probe_case.clone()
        };
        for t in [strip_markers(&text, lines.len()), text.clone()] {
            if tried.contains(&t) {
                continue;
            }
            match prober.probe(&confirm_case, &t).await? {
                Ok(o) => return Ok(Ok((t, confirm_case.actions, o))),
                Err(why) => {
                    tracing::info!("reduced variant not confirmed: {why}");
                    tried.push(t);
                }
            }
        }
    }
    Ok(Err("the reduced program did not confirm; the original is kept".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bp(line: u32) -> Action {
        Action::SetBreakpoint {
            at: Location::line("p.c", line),
        }
    }

    #[test]
    fn markers_round_trip_and_keep_lines() {
        let text = "int g;\nint main(void) {\n  g = 1;\n  return g;\n}\n";
        let actions = vec![bp(3), Action::Start, bp(4)];
        let lines = breakpoint_lines(&actions);
        assert_eq!(lines, [3, 4]);
        let m = mark(text, &lines);
        assert_eq!(
            m,
            "int g;\nint main(void) {\n/*DOPPEL_B0*/  g = 1;\n/*DOPPEL_B1*/  return g;\n}\n"
        );
        assert_eq!(marker_lines(&m, 2), Some(vec![3, 4]));
        assert_eq!(strip_markers(&m, 2), text);
        // C-Vise removed line 2 and joined tokens around a marker.
        let reduced = "int g;\n/*DOPPEL_B0*/g = 1;\nint/*DOPPEL_B1*/x;\n";
        assert_eq!(marker_lines(reduced, 2), Some(vec![2, 3]));
        assert_eq!(strip_markers(reduced, 2), "int g;\ng = 1;\nint x;\n");
        assert_eq!(reline(&actions, &lines, &[2, 3]), vec![bp(2), Action::Start, bp(3)]);
        assert_eq!(marker_lines("/*DOPPEL_B0*/\n/*DOPPEL_B0*/", 1), None, "duplicated");
        assert_eq!(marker_lines("x", 1), None, "missing");
        assert_eq!(drop_blank_lines("a\n\n  \n/*DOPPEL_B0*/b\n\n"), "a\n/*DOPPEL_B0*/b\n");
    }

    #[test]
    fn script_quotes_its_arguments() {
        let recipe = BuildRecipe::parse("gcc -O0 -g").unwrap();
        let s = interestingness_script(
            Path::new("/opt/it's/doppel"),
            Path::new("/w/case.json"),
            &recipe,
            3,
            Duration::from_secs(40),
        );
        assert!(
            s.contains("'/opt/it'\\''s/doppel' reduce-probe --case '/w/case.json' a.c"),
            "{s}"
        );
        assert!(s.contains("'gcc' '-O0' '-g' a.c -o doppel-prog"), "{s}");
        assert!(s.contains("[ \"$status\" = 3 ] || exit 1"), "{s}");
        assert!(s.contains("-Werror=implicit-int"));
        assert!(s.starts_with("#!/bin/sh\n"));
    }

    #[test]
    fn the_variant_accepted_last_is_kept_beside_the_case() {
        let dir = tempfile::tempdir().unwrap();
        let case = dir.path().join("case.json");
        assert_eq!(last_interesting(&case), None);
        record_interesting(&case, "int main(void) { return 1; }\n").unwrap();
        record_interesting(&case, "int main(void) { return 0; }\n").unwrap();
        assert_eq!(
            last_interesting(&case).as_deref(),
            Some("int main(void) { return 0; }\n")
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["last-interesting"], "no temporary file is left");
    }
}
