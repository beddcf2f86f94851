//! Reduction of a failure group's representative (issue 15 part 7b): the
//! test's body is reduced by treereduce 0.4 with tree-sitter-javascript
//! (`doppel_lang::reduce`), its front matter (description, includes,
//! flags, features, negative) and harness kept intact, to the few lines a
//! maintainer reads.
//!
//! A variant body is interesting iff (the hidden `doppel conform-probe`,
//! which treereduce calls on each variant's file, `@@`; [`probe`]):
//! 1. the variant test parses as the original did (oxc with semantic
//!    checks: a variant with a syntax error the original did not have is
//!    refused before any engine runs);
//! 2. run on the original's panel engines and engine262 (coverage off), it
//!    gives the same [`Pattern`]: the same candidate kind, the same failing
//!    families each with the same failure key (`assert.sameValue`,
//!    `unexpected_exception:TypeError`), and engine262 failing the same way
//!    or passing as before. An engine-bug candidate thus still fails on
//!    that family only, and engine262 still passes it.
//!
//! The probe also keeps the smallest interesting body seen in `best.js`,
//! since treereduce writes its output only when it ends: a reduction
//! stopped at its budget keeps what it found. The kept body (blank lines
//! dropped) is confirmed once more in-process; its per-engine outcome is
//! stored with the group ([`Reduction`]).

use crate::technique_record::TestRecord;
use crate::verdict::panel::{ConformTest, Panel, PanelConfig, TestRun};
use crate::verdict::{Expected, Failure, FamilyVerdict, Vote};
use doppel_engines::{EnginesConfig, Script};
use doppel_lang::reduce::{Reducer, ReducerEnd, drop_blank_lines, treereduce_command};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The verdict pattern a variant must keep: the candidate kind, the
/// failing families with their failure keys (sorted), engine262's failure
/// key (`None`: it passed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pattern {
    /// `engine_bug`, `spec_bug`, `engine262_bug` (`Candidate::name`).
    pub candidate: String,
    /// (family, failure key) of each failing or split family.
    pub failing: Vec<(String, String)>,
    /// engine262's failure key of the test's own expectation, if it failed.
    pub spec: Option<String>,
}

impl Pattern {
    /// The pattern of a vote and engine262's failure (if any).
    pub fn of(vote: &Vote, spec_failure: Option<&Failure>) -> Pattern {
        let mut failing: Vec<(String, String)> = vote
            .families
            .iter()
            .filter_map(|f| match &f.verdict {
                FamilyVerdict::Fail(x) | FamilyVerdict::Split { failure: x, .. } => {
                    Some((f.family.to_string(), x.key()))
                }
                _ => None,
            })
            .collect();
        failing.sort();
        Pattern {
            candidate: vote.candidate.name().to_string(),
            failing,
            spec: spec_failure.map(Failure::key),
        }
    }

    /// The pattern of a run.
    pub fn of_run(run: &TestRun) -> Pattern {
        Pattern::of(&run.vote, run.spec.verdict.failure())
    }

    /// One line: `engine_bug: njs assert.sameValue; engine262 passes`.
    pub fn describe(&self) -> String {
        let f: Vec<String> = self.failing.iter().map(|(a, b)| format!("{a} {b}")).collect();
        format!(
            "{}: {}; engine262 {}",
            self.candidate,
            if f.is_empty() {
                "none failing".into()
            } else {
                f.join(", ")
            },
            self.spec
                .as_deref()
                .map(|s| format!("fails {s}"))
                .unwrap_or_else(|| "passes".into())
        )
    }
}

/// What the probe of a variant needs: written as `case.json` in the work
/// directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReduceCase {
    /// The test's name.
    pub name: String,
    /// The front matter part of the test (up to and including the line
    /// closing `/*--- ... ---*/`; empty for a plain program): kept intact.
    pub head: String,
    /// What the engines run before the test: harness files (and a
    /// `"use strict";` line for `onlyStrict` tests).
    pub prelude: String,
    /// The original's feature tags (an engine lacking one abstains, as for the original).
    pub features: Vec<String>,
    /// The original's expectation (`None`: engine262's outcome).
    pub expected: Option<Expected>,
    /// The panel: the original's engines, coverage off.
    pub panel: PanelConfig,
    /// The pattern to keep.
    pub pattern: Pattern,
    /// Whether the original test parses (oxc); a variant must do as it does.
    pub parses: bool,
    /// Where the smallest interesting body so far is kept (`best.js`).
    pub best: Option<PathBuf>,
    /// The Unix socket of the warm probe ([`crate::reduce_server`]) while
    /// the reduction runs; `None`: each probe runs its own panel.
    #[serde(default)]
    pub server: Option<PathBuf>,
}

/// The test's text split after its front matter: (head, body). A text
/// without a `---*/` line is all body.
pub fn split_front_matter(text: &str) -> (&str, &str) {
    match text.find("---*/") {
        Some(i) => {
            let end = text[i..].find('\n').map(|n| i + n + 1).unwrap_or(text.len());
            text.split_at(end)
        }
        None => ("", text),
    }
}

impl ReduceCase {
    /// The case of a stored test record (a finding: its prepared script kept).
    ///
    /// Errors: the record keeps no prepared script, or the script does not
    /// end with the test's text (so the prelude cannot be told apart).
    pub fn of(t: &TestRecord) -> Result<ReduceCase, String> {
        let source = &t.test.script.source;
        if source.is_empty() {
            return Err("the record keeps no prepared script".into());
        }
        let prelude = source
            .strip_suffix(t.test.text.as_str())
            .ok_or("the prepared script does not end with the test's text")?;
        let (head, _) = split_front_matter(&t.test.text);
        let mut panel = t.config.panel.clone();
        panel.engines = t.members.iter().map(|m| m.info.name.clone()).collect();
        panel.coverage = false;
        Ok(ReduceCase {
            name: t.test.name.clone(),
            head: head.to_string(),
            prelude: prelude.to_string(),
            features: t.test.script.features.clone(),
            expected: t.test.expected.clone(),
            panel,
            pattern: Pattern::of_run(&t.run),
            parses: doppel_lang::js::syntax_errors(source).is_empty(),
            best: None,
            server: None,
        })
    }

    /// The test with `body` after the kept front matter.
    pub fn variant(&self, body: &str) -> ConformTest {
        let text = format!("{}{body}", self.head);
        ConformTest {
            name: self.name.clone(),
            script: Script {
                source: format!("{}{text}", self.prelude),
                features: self.features.clone(),
            },
            text,
            expected: self.expected.clone(),
        }
    }
}

/// Runs the variant with `body` on a fresh panel and says whether it keeps
/// the case's pattern: `Ok(run)` if so, `Err(why not)` otherwise (a syntax
/// error, another pattern). When it does and `case.best` is set, the body
/// is kept there if it is the smallest so far.
///
/// Errors (outer): the panel cannot be made (engine262 missing), I/O.
pub async fn probe(case: &ReduceCase, body: &str) -> anyhow::Result<Result<TestRun, String>> {
    let mut panel = Panel::new(&case.panel, &EnginesConfig::default())?;
    let judged = probe_on(&mut panel, case, body).await;
    panel.shutdown().await;
    judged
}

/// [`probe`] on `panel` (made from `case.panel`, possibly warm from earlier
/// probes: [`crate::reduce_server`]).
///
/// Errors: I/O of the best-keeping.
pub async fn probe_on(panel: &mut Panel, case: &ReduceCase, body: &str) -> anyhow::Result<Result<TestRun, String>> {
    let test = case.variant(body);
    let errors = doppel_lang::js::syntax_errors(&test.script.source);
    if errors.is_empty() != case.parses {
        return Ok(Err(match errors.first() {
            Some(e) => format!("syntax error: {e}"),
            None => "parses where the original does not".into(),
        }));
    }
    let run = panel.run(&test).await;
    let got = Pattern::of_run(&run);
    if got != case.pattern {
        return Ok(Err(format!("verdicts {}", got.describe())));
    }
    if let Some(best) = &case.best {
        let smaller = std::fs::read_to_string(best)
            .map(|b| body.len() < b.len())
            .unwrap_or(true);
        if smaller {
            let tmp = best.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, body)?;
            std::fs::rename(&tmp, best)?;
        }
    }
    Ok(Ok(run))
}

/// One engine's outcome on the reduced test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineOutcome {
    /// Registry name (`engine262` for the specification).
    pub engine: String,
    /// Its family.
    pub family: String,
    /// Its verdict label (`pass`, `FAIL assert.sameValue`, `unsupported`, `no verdict`).
    pub verdict: String,
}

/// How a reduction ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ReductionOutcome {
    /// A smaller test with the same pattern was found and confirmed.
    Reduced,
    /// The original is kept, and why.
    NotReduced {
        /// Why (reducer missing or failed, nothing smaller, not confirmed).
        reason: String,
    },
}

/// A group representative's reduction, stored with the group and its test record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reduction {
    /// How it ended.
    pub outcome: ReductionOutcome,
    /// The reduced test (test262 format: the original front matter, the
    /// reduced body), when reduced.
    pub text: Option<String>,
    /// Lines of the original test.
    pub original_lines: usize,
    /// Lines of the reduced test (the original's when not reduced).
    pub reduced_lines: usize,
    /// Wall seconds spent.
    pub seconds: f64,
    /// The reduced test's per-engine outcome (engine262 first), from the confirming run.
    pub engines: Vec<EngineOutcome>,
    /// Notes (the reducer stopped at its budget, ...).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Reduction {
    /// `reduced 42 -> 6 lines in 31.0 s` or `not reduced: why`.
    pub fn summary(&self) -> String {
        match &self.outcome {
            ReductionOutcome::Reduced => format!(
                "reduced {} -> {} lines in {:.1} s",
                self.original_lines, self.reduced_lines, self.seconds
            ),
            ReductionOutcome::NotReduced { reason } => format!("not reduced ({:.1} s): {reason}", self.seconds),
        }
    }

    /// The reduced test's prepared script (prelude, then the reduced
    /// test), given the original's record.
    pub fn prepared(&self, t: &TestRecord) -> Option<String> {
        let text = self.text.as_ref()?;
        let prelude = t.test.script.source.strip_suffix(t.test.text.as_str())?;
        Some(format!("{prelude}{text}"))
    }
}

fn outcomes(run: &TestRun) -> Vec<EngineOutcome> {
    std::iter::once(&run.spec)
        .chain(&run.results)
        .map(|r| EngineOutcome {
            engine: r.engine.clone(),
            family: r.family.to_string(),
            verdict: r.verdict.label(),
        })
        .collect()
}

/// Reduces the test of `t` (a group's representative) within `budget`,
/// working in `work` (created), treereduce calling
/// `<doppel_exe> conform-probe --case <work>/case.json @@` on each variant,
/// which asks this process's warm panel when `warm_probe`
/// ([`crate::reduce_server`]), else runs a panel of its own. Never fails:
/// every problem is a [`ReductionOutcome::NotReduced`] with its reason.
pub async fn reduce(t: &TestRecord, doppel_exe: &Path, work: &Path, budget: Duration, warm_probe: bool) -> Reduction {
    let started = Instant::now();
    let original_lines = t.test.text.lines().count();
    let mut notes = Vec::new();
    let result = attempt(t, doppel_exe, work, budget, warm_probe, &mut notes).await;
    let seconds = started.elapsed().as_secs_f64();
    match result {
        Ok((text, run)) => Reduction {
            outcome: ReductionOutcome::Reduced,
            reduced_lines: text.lines().count(),
            text: Some(text),
            original_lines,
            seconds,
            engines: outcomes(&run),
            notes,
        },
        Err(reason) => Reduction {
            outcome: ReductionOutcome::NotReduced { reason },
            text: None,
            original_lines,
            reduced_lines: original_lines,
            seconds,
            engines: outcomes(&t.run),
            notes,
        },
    }
}

async fn attempt(
    t: &TestRecord,
    doppel_exe: &Path,
    work: &Path,
    budget: Duration,
    warm_probe: bool,
    notes: &mut Vec<String>,
) -> Result<(String, TestRun), String> {
    let reducer = Reducer::find(doppel_core::Language::JavaScript).map_err(|e| e.to_string())?;
    let mut case = ReduceCase::of(t)?;
    let io = |e: std::io::Error| format!("work directory {}: {e}", work.display());
    std::fs::create_dir_all(work).map_err(io)?;
    let work = work.canonicalize().map_err(io)?;
    let best = work.join("best.js");
    let _ = std::fs::remove_file(&best);
    case.best = Some(best.clone());
    // The warm probe's socket, in a short path (sun_path holds 108 bytes).
    let socket_dir = tempfile::Builder::new()
        .prefix("doppel-probe")
        .tempdir()
        .map_err(|e| format!("a directory for the probe socket: {e}"))?;
    let listener = if warm_probe {
        let socket = socket_dir.path().join("s");
        let l =
            tokio::net::UnixListener::bind(&socket).map_err(|e| format!("probe socket {}: {e}", socket.display()))?;
        case.server = Some(socket);
        Some(l)
    } else {
        None
    };
    let case_json = work.join("case.json");
    let json = serde_json::to_string(&case).map_err(|e| e.to_string())?;
    std::fs::write(&case_json, json).map_err(io)?;
    let (_, body) = split_front_matter(&t.test.text);
    std::fs::write(work.join("original.js"), body).map_err(io)?;
    let out = work.join("reduced.js");
    let _ = std::fs::remove_file(&out);
    // One probe: the slowest engine262 run plus the panel's start.
    let per_check = case.panel.spec_run.timeout + Duration::from_secs(30);
    let check = [
        doppel_exe.as_os_str().to_owned(),
        "conform-probe".into(),
        "--case".into(),
        case_json.as_os_str().to_owned(),
        "@@".into(),
    ];
    let cmd = treereduce_command(&reducer.exe, &work, "original.js", &out, per_check, &check);
    let served = case.clone();
    let log = work.join("reducer.log");
    let reducing = reducer.run(cmd, budget, &log);
    tokio::pin!(reducing);
    let answered = std::cell::Cell::new(0);
    let serving = async {
        match listener {
            Some(l) => crate::reduce_server::serve(&served, l, &answered).await,
            None => std::future::pending().await,
        }
    };
    let end = tokio::select! {
        end = &mut reducing => end,
        stopped = serving => {
            // Each probe then runs its own panel, as without the server.
            notes.push(format!(
                "the warm probe stopped ({:#}); the probes ran their own panels",
                stopped.err().unwrap_or_else(|| anyhow::anyhow!("it ended"))
            ));
            reducing.await
        }
    }
    .map_err(|e| format!("{e:#}"))?;
    if warm_probe {
        notes.push(format!("{} probes answered by the warm panel", answered.get()));
    }
    case.server = None;
    match end {
        ReducerEnd::Finished => {}
        ReducerEnd::Budget => notes.push(format!(
            "{} stopped at its budget of {} s; the smallest variant the probe kept is used",
            reducer.tool,
            budget.as_secs()
        )),
        ReducerEnd::Failed(why) => return Err(why),
    }
    // treereduce's output when it finished, else the probe's best so far.
    let candidate = std::fs::read_to_string(&out)
        .or_else(|_| std::fs::read_to_string(&best))
        .map_err(|_| "the reducer left no interesting variant".to_string())?;
    // The kept test is confirmed without the probe's best-keeping.
    case.best = None;
    let mut last = String::from("nothing smaller");
    for b in [drop_blank_lines(&candidate), candidate] {
        if b.len() >= body.len() {
            continue;
        }
        match probe(&case, &b).await {
            Ok(Ok(run)) => return Ok((case.variant(&b).text, run)),
            Ok(Err(why)) => last = format!("the reduced test did not confirm: {why}"),
            Err(e) => last = format!("the reduced test could not run: {e:#}"),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_kept_apart_from_the_body() {
        let t = "// c\n/*---\ndescription: x\nincludes: [a.js]\n---*/\nvar a;\nf();\n";
        let (h, b) = split_front_matter(t);
        assert_eq!(h, "// c\n/*---\ndescription: x\nincludes: [a.js]\n---*/\n");
        assert_eq!(b, "var a;\nf();\n");
        assert_eq!(split_front_matter("var a;\n"), ("", "var a;\n"));
    }
}
