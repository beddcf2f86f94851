//! Replaying a stored run: its subject rebuilt from the stored text (and,
//! for JavaScript, the stored prelude and epilogue), then the same seed and
//! configuration again.

use crate::campaign::{self, Prepared};
use crate::record::DiffRecord;
use doppel_core::technique::{ReplayAttempt, ReplayReport};
use doppel_core::{Language, RunRecord, Verdict};
use doppel_debuggers::record::{DebuggerInput, StoredScript};
use doppel_lang::c::{BuildCache, BuildRecipe, CSyntax};
use std::path::{Path, PathBuf};

/// Whether two verdicts are the same for replay purposes: same verdict and,
/// for divergences, same class and same action index.
pub fn same_verdict(a: &Verdict, b: &Verdict) -> bool {
    match (a, b) {
        (Verdict::Divergence(x), Verdict::Divergence(y)) => x.class == y.class && x.action_index == y.action_index,
        _ => a.name() == b.name(),
    }
}

/// A verdict for people: `divergence after action 3: <class>`, or its name.
pub fn describe(v: &Verdict) -> String {
    match v {
        Verdict::Divergence(f) => format!("divergence after action {}: {}", f.action_parts().0, f.class),
        other => other.name().to_string(),
    }
}

/// Rebuilds a run's subject from its stored input under `cache_dir` (the
/// store's build cache): C through the build cache with the stored recipe
/// (a build that fails now gives a `Prepared` with the error), JavaScript
/// as scripts under `<cache>/js/replay/<subject hash>/`.
///
/// Errors: I/O errors, a stored recipe that does not parse.
pub async fn prepared_of(r: &RunRecord, input: &DebuggerInput, cache_dir: &Path) -> anyhow::Result<Prepared> {
    let text = input.source_text.as_str();
    if r.subject.language == Language::JavaScript {
        return js_prepared_of(r, input, cache_dir);
    }
    let dir = cache_dir.join("replay").join(&r.subject.hash);
    std::fs::create_dir_all(&dir)?;
    let file = dir.join(&r.subject.source_name);
    std::fs::write(&file, text)?;
    let recipe = BuildRecipe::parse(&r.subject.build).map_err(anyhow::Error::msg)?;
    let syntax = CSyntax::parse(text);
    let node_types = (1..=syntax.line_count()).map(|l| syntax.ast_node_type(l)).collect();
    let root_node = syntax.ast_node_type(0);
    let cache = BuildCache::new(cache_dir.to_path_buf());
    let (subject, error) = match cache.build(&file, &r.subject.name, &recipe).await {
        Ok(s) => (s, None),
        Err(e) => (r.subject.clone(), Some(e.to_string())),
    };
    Ok(Prepared {
        subject,
        source_text: text.to_string(),
        node_types,
        root_node,
        error,
    })
}

/// Writes stored scripts under `dir`, each as `<dir>/<index>/<name>`, and
/// returns their canonical paths in order. The stored name is the file name
/// the run saw (the cache's `<i>-<name>`): it is kept as it is, so the
/// replay's traces name the scripts alike.
fn write_scripts(dir: &Path, list: &[StoredScript]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for (i, s) in list.iter().enumerate() {
        let path = dir.join(i.to_string()).join(&s.name);
        std::fs::create_dir_all(path.parent().unwrap_or(dir))?;
        std::fs::write(&path, &s.text)?;
        out.push(std::fs::canonicalize(&path)?);
    }
    Ok(out)
}

fn js_prepared_of(r: &RunRecord, input: &DebuggerInput, cache_dir: &Path) -> anyhow::Result<Prepared> {
    let text = input.source_text.as_str();
    let dir = cache_dir.join("js").join("replay").join(&r.subject.hash);
    std::fs::create_dir_all(&dir)?;
    let source = dir.join(&r.subject.source_name);
    std::fs::write(&source, text)?;
    let syntax = doppel_lang::js::JsSyntax::parse(text);
    let mut subject = r.subject.clone();
    subject.source = std::fs::canonicalize(&source)?;
    let scripts = input.scripts.clone().unwrap_or_default();
    subject.prelude = write_scripts(&dir.join("prelude"), &scripts.prelude)?;
    subject.epilogue = write_scripts(&dir.join("epilogue"), &scripts.epilogue)?;
    Ok(Prepared {
        subject,
        source_text: text.to_string(),
        node_types: (1..=syntax.line_count()).map(|l| syntax.ast_node_type(l)).collect(),
        root_node: syntax.ast_node_type(0),
        error: None,
    })
}

/// Replays a stored differential run `times` times with fresh debuggers.
///
/// Errors: the record does not read, the subject cannot be written, a
/// debugger is missing.
pub async fn replay(r: &RunRecord, cache_dir: &Path, times: usize) -> anyhow::Result<ReplayReport> {
    let rec = DiffRecord::of(r)?;
    let spec = rec.spec(format!("replay of {}", r.id.unwrap_or_default()));
    let p = prepared_of(r, &rec.input, cache_dir).await?;
    let mut dbg = campaign::create_debuggers(&spec)?;
    let mut report = ReplayReport {
        stored: describe(&r.verdict),
        ..Default::default()
    };
    for _ in 0..times.max(1) {
        let again = campaign::run_one(&spec, &p, r.seed, &mut dbg).await;
        report.attempts.push(ReplayAttempt {
            reproduces: same_verdict(&r.verdict, &again.verdict),
            got: describe(&again.verdict),
            notes: Vec::new(),
        });
    }
    // The reduced case (`doppel reduce`): its program and action sequence,
    // run as a script; it reproduces when the class comes back.
    if let Some(case) = &rec.reduced
        && let Some(reduced) = crate::reduce::reduced_run(r)
    {
        let rrec = DiffRecord::of(&reduced)?;
        let rp = prepared_of(&reduced, &rrec.input, cache_dir).await?;
        let class = r.verdict.finding().map(|f| f.class.clone());
        let per_test = crate::reduce::per_test_timeout(&rrec, case.actions.len());
        for _ in 0..times.max(1) {
            let note = format!(
                "reduced case: {} of {} actions, {} of {} lines",
                case.actions.len(),
                case.original_actions,
                case.lines,
                case.original_lines
            );
            let (reproduces, got) = match (&rp.error, &class) {
                (Some(e), _) => (false, format!("the reduced program does not build: {e}")),
                (None, Some(class)) => {
                    match crate::reduce::try_script(&rrec, &rp, &case.actions, &mut dbg, per_test).await? {
                        Some(o) => (crate::reduce::same_class(&o.verdict, class), describe(&o.verdict)),
                        None => (false, "timed out".into()),
                    }
                }
                (None, None) => (false, "the stored run is not a divergence".into()),
            };
            report.attempts.push(ReplayAttempt {
                reproduces,
                got,
                notes: vec![note],
            });
        }
    }
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replayed_scripts_keep_the_stored_file_names() {
        let d = std::env::temp_dir().join(format!("doppel-replay-test-{}", std::process::id()));
        let list = [
            StoredScript {
                name: "0-doppel-determinism.js".into(),
                text: "1;".into(),
            },
            StoredScript {
                name: "1-assert.js".into(),
                text: "2;".into(),
            },
        ];
        let paths = write_scripts(&d, &list).unwrap();
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["0-doppel-determinism.js", "1-assert.js"]);
        assert_eq!(std::fs::read_to_string(&paths[1]).unwrap(), "2;");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
