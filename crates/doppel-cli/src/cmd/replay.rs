//! `doppel replay RUN`: re-runs a stored run with its seed and configuration
//! and says whether the verdict reproduces.

use anyhow::Context;
use clap::Args;
use doppel_core::{Language, RunRecord, Verdict};
use doppel_differential::campaign::{self, CampaignSpec, Prepared};
use doppel_lang::c::{BuildCache, BuildRecipe};
use doppel_lang::prepare as subjects;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Run id.
    pub run: i64,
    /// Replay this many times (a flaky divergence reproduces only sometimes).
    #[arg(long, default_value_t = 1)]
    pub times: usize,
}

/// Reconstructs the campaign spec a run was made with.
pub fn spec_of(r: &RunRecord) -> anyhow::Result<CampaignSpec> {
    let c = &r.config;
    Ok(CampaignSpec {
        name: format!("replay of {}", r.id.unwrap_or_default()),
        debuggers: serde_json::from_value(c["debuggers"].clone()).context("stored config lacks debuggers")?,
        debugger: serde_json::from_value(c["debugger"].clone()).context("stored config lacks the debugger settings")?,
        diff: serde_json::from_value(c["diff"].clone()).context("stored config lacks the diff settings")?,
        jobs: 1,
        resume: false,
        executables: serde_json::from_value(c["executables"].clone()).unwrap_or_default(),
        tools: Vec::new(),
    })
}

/// Rebuilds the run's subject from the stored source text (and, for
/// JavaScript, the stored prelude and epilogue scripts).
pub async fn prepared_of(r: &RunRecord, db: &str) -> anyhow::Result<Prepared> {
    let text = r.config["source_text"]
        .as_str()
        .context("the run stores no source text")?;
    if r.subject.language == Language::JavaScript {
        return js_prepared_of(r, text, db);
    }
    let dir = tempfile::tempdir()?;
    let file = dir.path().join(&r.subject.source_name);
    std::fs::write(&file, text)?;
    let recipe = BuildRecipe::parse(&r.subject.build).map_err(anyhow::Error::msg)?;
    let cache = BuildCache::new(subjects::cache_dir(db));
    subjects::prepare_one(&cache, &file, &r.subject.name, &recipe).await
}

/// Writes stored scripts (`[{name, text}]`) under `dir`, each as
/// `<dir>/<index>/<name>`, and returns their canonical paths in order. The
/// stored name is the file name the run saw (the cache's `<i>-<name>`): it
/// is kept as it is, so the replay's traces name the scripts alike.
fn write_scripts(dir: &std::path::Path, list: &serde_json::Value) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for (i, s) in list.as_array().into_iter().flatten().enumerate() {
        let name = s["name"].as_str().context("a stored script without a name")?;
        let path = dir.join(i.to_string()).join(name);
        std::fs::create_dir_all(path.parent().unwrap_or(dir))?;
        std::fs::write(&path, s["text"].as_str().unwrap_or(""))?;
        out.push(std::fs::canonicalize(&path)?);
    }
    Ok(out)
}

/// A JavaScript subject from the run's stored scripts, written under the
/// JavaScript cache (`<cache>/replay/<subject hash>/`).
fn js_prepared_of(r: &RunRecord, text: &str, db: &str) -> anyhow::Result<Prepared> {
    let dir = subjects::js_cache_dir(db).join("replay").join(&r.subject.hash);
    std::fs::create_dir_all(&dir)?;
    let source = dir.join(&r.subject.source_name);
    std::fs::write(&source, text)?;
    let syntax = doppel_lang::js::JsSyntax::parse(text);
    let mut subject = r.subject.clone();
    subject.source = std::fs::canonicalize(&source)?;
    subject.prelude = write_scripts(&dir.join("prelude"), &r.config["scripts"]["prelude"])?;
    subject.epilogue = write_scripts(&dir.join("epilogue"), &r.config["scripts"]["epilogue"])?;
    Ok(Prepared {
        subject,
        source_text: text.to_string(),
        node_types: (1..=syntax.line_count()).map(|l| syntax.ast_node_type(l)).collect(),
        root_node: syntax.ast_node_type(0),
        error: None,
    })
}

/// Whether two verdicts are the same for replay purposes: same verdict and,
/// for divergences, same class and same action index.
pub fn same_verdict(a: &Verdict, b: &Verdict) -> bool {
    match (a, b) {
        (Verdict::Divergence(x), Verdict::Divergence(y)) => x.class == y.class && x.action_index == y.action_index,
        _ => a.name() == b.name(),
    }
}

pub async fn run(a: ReplayArgs, db: &str) -> anyhow::Result<ExitCode> {
    let store = super::open_store(db).await?;
    let r = super::load_run(&store, a.run).await?;
    if r.technique == doppel_metamorphic::campaign::TECHNIQUE {
        return replay_meta(&a, &r, db).await;
    }
    if r.technique == doppel_debuginfo::campaign::TECHNIQUE {
        return replay_debuginfo(&a, &r, db).await;
    }
    let spec = spec_of(&r)?;
    let p = prepared_of(&r, db).await?;
    let mut dbg = campaign::create_debuggers(&spec)?;
    let mut reproduced = 0;
    for i in 0..a.times.max(1) {
        let again = campaign::run_one(&spec, &p, r.seed, &mut dbg).await;
        let same = same_verdict(&r.verdict, &again.verdict);
        reproduced += usize::from(same);
        let describe = |v: &Verdict| match v {
            Verdict::Divergence(f) => {
                format!("divergence after action {}: {}", f.action_index, f.class)
            }
            other => other.name().to_string(),
        };
        println!(
            "replay {}: {} ({})",
            i + 1,
            if same { "REPRODUCES" } else { "DIFFERS" },
            describe(&again.verdict)
        );
        if !same {
            println!("  stored:   {}", describe(&r.verdict));
        }
    }
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    println!("{reproduced}/{} replays reproduce run {}", a.times.max(1), a.run);
    Ok(if reproduced > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Replays a metamorphic test: its round again from the stored initial
/// input, generator and configuration (the follow-up is decided live again).
async fn replay_meta(a: &ReplayArgs, r: &RunRecord, db: &str) -> anyhow::Result<ExitCode> {
    use doppel_metamorphic::program::{Builder, Program};
    use doppel_metamorphic::{MetaConfig, Transformation};
    let c = &r.config;
    let cfg: MetaConfig = serde_json::from_value(c["meta"].clone()).context("stored config lacks the meta settings")?;
    let stored: doppel_debuggers::DebuggerConfig =
        serde_json::from_value(c["debugger"].clone()).context("stored config lacks the debugger settings")?;
    // Replays behave as today's campaigns, also for tests stored before the
    // option existed.
    let dcfg = doppel_metamorphic::campaign::debugger_config(&stored);
    let name = c["debugger_name"]
        .as_str()
        .context("stored config lacks the debugger")?;
    let round = c["round"].as_u64().context("stored config lacks the round")? as usize;
    let mut chain: Vec<Transformation> = serde_json::from_value(c["chain"].clone()).unwrap_or_default();
    if r.traces.len() == 2 {
        chain.pop();
    }
    // The key: metamorphic|<fingerprint>|<debugger>|<first program hash>|<seed>|r<round>...
    let origin = r.key.split('|').nth(3).context("malformed key")?.to_string();
    let initial = r.traces.first().context("the test has no initial trace")?;
    if initial.events.is_empty() {
        anyhow::bail!("run {} has no initial run to replay ({})", a.run, r.verdict.name());
    }
    let p = prepared_of(r, db).await?;
    if let Some(e) = &p.error {
        anyhow::bail!("the initial program does not build again: {e}");
    }
    let program = Program::new(p.subject.clone(), p.source_text.clone());
    let cache = subjects::cache_dir(db);
    let builder = Builder::new(cache.join("meta-sources"), cache, dcfg.limits);
    if dcfg.absorb_breakpoint_restop != stored.absorb_breakpoint_restop {
        println!(
            "note: replayed with absorb_breakpoint_restop on (stored off): LLDB's re-stop at a breakpoint a step ended on is absorbed"
        );
    }
    let mut dbg = doppel_debuggers::registry::create(name, &dcfg)?;
    let mut reproduced = 0;
    for i in 0..a.times.max(1) {
        let (_, v, applied) = doppel_metamorphic::sequence::replay_round(
            &mut dbg, &program, initial, &origin, r.seed, round, &chain, &cfg, &builder,
        )
        .await;
        let same = same_verdict(&r.verdict, &v);
        reproduced += usize::from(same);
        let describe = |v: &Verdict| match v {
            Verdict::Divergence(f) => format!("warning after action {}: {}", f.action_index, f.class),
            Verdict::Inconclusive { reason, .. } => format!("inconclusive: {reason}"),
            other => other.name().to_string(),
        };
        println!(
            "replay {}: {} ({})",
            i + 1,
            if same { "REPRODUCES" } else { "DIFFERS" },
            describe(&v)
        );
        if !same {
            println!("  stored:   {}", describe(&r.verdict));
        }
        // The same generator may choose another transformation when the
        // transformations' rules changed since the run was stored.
        match &applied {
            Some(t) => println!("  applied:  {}: {}", t.transformation, t.description),
            None => println!("  applied:  no transformation"),
        }
    }
    dbg.shutdown().await;
    println!("{reproduced}/{} replays reproduce run {}", a.times.max(1), a.run);
    Ok(if reproduced > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Replays a debug-information finding: the program rebuilt from its stored
/// text with the stored compiler, level and augmentation, the pair checked
/// again with the stored debugger.
async fn replay_debuginfo(a: &ReplayArgs, r: &RunRecord, db: &str) -> anyhow::Result<ExitCode> {
    let stored = doppel_debuginfo::replay::stored_verdict(r).map_err(anyhow::Error::msg)?;
    let cache = subjects::cache_dir(db).join("debuginfo");
    let config = doppel_debuggers::DebuggerConfig {
        action_timeout: std::time::Duration::from_secs(20),
        ..Default::default()
    };
    let mut reproduced = 0;
    for i in 0..a.times.max(1) {
        let again = doppel_debuginfo::replay::replay(r, &cache, &config)
            .await
            .map_err(anyhow::Error::msg)?;
        if let Some(v) = &again.version_changed {
            println!("  note: the compiler is now {v}");
        }
        let same = again.reproduces(&stored);
        reproduced += usize::from(same);
        println!(
            "replay {}: {} ({})",
            i + 1,
            if same { "REPRODUCES" } else { "DIFFERS" },
            again.verdict.verdict
        );
        if !same {
            println!("  stored:   {stored}");
        }
    }
    println!("{reproduced}/{} replays reproduce run {}", a.times.max(1), a.run);
    Ok(if reproduced > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replayed_scripts_keep_the_stored_file_names() {
        let d = tempfile::tempdir().unwrap();
        let list = serde_json::json!([
            {"name": "0-doppel-determinism.js", "text": "1;"},
            {"name": "1-assert.js", "text": "2;"},
        ]);
        let paths = write_scripts(d.path(), &list).unwrap();
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["0-doppel-determinism.js", "1-assert.js"]);
        assert_eq!(std::fs::read_to_string(&paths[1]).unwrap(), "2;");
    }
}
