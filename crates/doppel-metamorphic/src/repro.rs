//! The reproducer of a metamorphic test: the two inputs side by side, each
//! a stand-alone reproducer in the debugger's own terms (`initial/` and
//! `follow-up/`: program, command files or scripts, `run.sh`), a README that
//! names the transformation and the relation that broke, and a `run.sh` that
//! runs both, so a maintainer sees the same debugger behave differently on
//! two inputs that must behave alike (ISSTA'19 section 3.1: "the two
//! debugging traces, the two programs-to-debug").

use doppel_core::{RunRecord, Verdict};
use doppel_debuggers::repro::{self, Reproducer};
use std::fmt::Write as _;

/// Builds the reproducer of a stored metamorphic test.
///
/// Errors: the test has no follow-up trace (no transformation applied, or
/// the program did not build), or the stored configuration lacks a program.
pub fn build(run: &RunRecord) -> Result<Reproducer, String> {
    if run.traces.len() < 2 {
        return Err("this test has no follow-up run (no transformation applied or the program did not build)".into());
    }
    let c = crate::record::MetaRecord::of(run).map_err(|e| format!("{e:#}"))?;
    let follow_text = c.follow_up.source_text.as_str();
    let mut initial = run.clone();
    initial.traces = vec![run.traces[0].clone()];
    initial.verdict = Verdict::ProgramFinished { actions: 0 };
    initial.debuggers.truncate(1);
    let mut follow = run.clone();
    follow.traces = vec![run.traces[1].clone()];
    follow.debuggers.truncate(1);
    follow.config["source_text"] = serde_json::Value::String(follow_text.to_string());
    follow.subject = c.follow_up.subject.clone();
    let mut files = Vec::new();
    for (dir, r) in [("initial", &initial), ("follow-up", &follow)] {
        for (name, text) in repro::build(r)?.files {
            files.push((format!("{dir}/{name}"), text));
        }
    }
    let debugger = c.debugger_name.as_str();
    let chain: Vec<String> = c.chain.iter().map(|t| t.to_string()).collect();
    let mut readme = format!(
        "# Metamorphic test of {debugger} (doppel, ISSTA'19 interactive metamorphic testing)\n\n\
         Two inputs that {debugger} must treat alike: `initial/` and `follow-up/`, each a\n\
         program with the debugging actions doppel issued. The follow-up was made from the\n\
         initial input by one transformation:\n\n    {}\n\n\
         (round {} of its sequence; transformations so far: {}).\n\n",
        c.transformation.as_ref().map(|t| t.description.as_str()).unwrap_or("?"),
        c.round,
        chain.join(" -> ")
    );
    match &run.verdict {
        Verdict::Divergence(f) => {
            writeln!(
                readme,
                "The relation breaks after action {} of the follow-up (`{}`, marked `<-- divergence`\n\
                 in `follow-up/`), class `{}`:\n\n    {}\n",
                f.action_parts().0,
                f.action_parts().1,
                f.class,
                f.detail
            )
            .ok();
        }
        other => {
            writeln!(readme, "Verdict: {} (the relation held).\n", other.name()).ok();
        }
    }
    readme.push_str(
        "`sh run.sh` runs both. What the relation allows besides identity: pauses at an added\n\
         breakpoint (and the temporary breakpoint or extra step out that completes a step it\n\
         interrupted), a continue after a step that replaced a continue, a repeated step over\n\
         inserted code, and an added parameter in its function's frame. See doppel's\n\
         docs/metamorphic.md.\n",
    );
    files.push(("README.md".into(), readme));
    files.push((
        "run.sh".into(),
        "#!/bin/sh\n# The initial and the follow-up input, one after the other.\ncd \"$(dirname \"$0\")\"\n\
         echo '##### initial'\n(cd initial && sh run.sh)\necho\necho '##### follow-up'\n(cd follow-up && sh run.sh)\n"
            .into(),
    ));
    Ok(Reproducer { files })
}
