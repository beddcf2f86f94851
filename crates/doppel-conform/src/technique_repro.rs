//! The reproducer of a conformance finding: a directory with
//! - `test.js`: the test in test262 format (as generated or given; the
//!   reduced test when the test was reduced as its group's representative,
//!   [`crate::reduce`], with `original/test.js` and `original/prepared.js`
//!   beside it and `outcomes/reduced.txt` its per-engine outcome);
//! - `prepared.js`: the script the engines run (harness files, then the test);
//! - `outcomes/<engine>.txt`: each engine's outcome, verdict and output;
//! - `transpiled-<transpiler>.js`: for each transpiler in the panel, its
//!   output for `prepared.js` (or `.error.txt`: why it refused), what V8 ran;
//! - `run.sh`: a plain shell command per engine running `prepared.js`
//!   (one-shot shells; engines reachable only through a library get a
//!   one-line interpreter call), plus the `doppel conform run` line that
//!   runs the whole panel again. A transpiler's command transpiles
//!   `prepared.js` again (`node .../workers/transpile.js <name> <modules>
//!   --emit`) and runs the result in node as the `v8-node` line does.

use crate::technique_record::TestRecord;
use doppel_core::technique::Reproducer;
use doppel_engines::{EnginesConfig, transpile};
use std::fmt::Write as _;
use std::path::Path;

/// Seconds each engine's command in `run.sh` may take before timeout(1)
/// kills it (exit 124): a reproducer never hangs.
const REPRO_TIMEOUT_S: u32 = 60;

/// How long transpiling `prepared.js` once for the reproducer may take.
const TRANSPILE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The `v8-node` command without its file argument: runs a script in node's
/// V8 with `print` bound to `console.log`.
const NODE_RUN: &str = "node -e 'globalThis.print = console.log; \
     require(\"vm\").runInThisContext(require(\"fs\").readFileSync(process.argv[1], \"utf8\"))'";

/// The shell command running `prepared.js` on `engine` (`$E`: the engines
/// directory), or `None` when the engine has no command outside doppel's worker.
fn command(engine: &str) -> Option<&'static str> {
    Some(match engine {
        "engine262" => "node \"$E/npm/node_modules/@engine262/engine262/lib/node/bin.mjs\" --no-inspect prepared.js",
        "v8-mini-racer" => {
            // os._exit: a one-shot MiniRacer can hang in Python's finalization
            // (one thread left in a futex wait; seen on a fresh machine).
            "\"$E/venv/bin/python\" -c 'import os, sys; from py_mini_racer import MiniRacer; m = MiniRacer(); \
             m.eval(\"globalThis.print = function () {}\"); print(m.eval(open(sys.argv[1]).read())); \
             sys.stdout.flush(); os._exit(0)' prepared.js"
        }
        "v8-node" => concat!(
            "node -e 'globalThis.print = console.log; \
             require(\"vm\").runInThisContext(require(\"fs\").readFileSync(process.argv[1], \"utf8\"))'",
            " prepared.js"
        ),
        "jsc" => "jsc prepared.js",
        "sm102" => "js102 prepared.js",
        "sm-pythonmonkey" => "\"$E/venv/bin/pmjs\" prepared.js",
        "hermes" => "\"$E/npm/node_modules/hermes-engine-cli/linux64-bin/hermes\" prepared.js",
        "duktape" => "duk prepared.js",
        "njs" => "njs prepared.js",
        "mujs" => "mujs prepared.js",
        "rhino" => "rhino -version 200 -opt -1 prepared.js",
        _ => return None,
    })
}

/// Writes the reproducer of `t` into `out`.
///
/// Errors: `out` cannot be written.
pub fn write(t: &TestRecord, out: &Path) -> anyhow::Result<Reproducer> {
    std::fs::create_dir_all(out.join("outcomes"))?;
    let mut files = Vec::new();
    let mut put = |name: &str, text: &str| -> anyhow::Result<()> {
        let p = out.join(name);
        std::fs::write(&p, text)?;
        files.push(p);
        Ok(())
    };
    let prepared = if t.test.script.source.is_empty() {
        &t.test.text
    } else {
        &t.test.script.source
    };
    let reduced = t
        .reduction
        .as_ref()
        .and_then(|r| Some((r, r.text.as_ref()?, r.prepared(t)?)));
    match &reduced {
        Some((r, text, reduced_prepared)) => {
            std::fs::create_dir_all(out.join("original"))?;
            put("test.js", text)?;
            put("prepared.js", reduced_prepared)?;
            put("original/test.js", &t.test.text)?;
            put("original/prepared.js", prepared)?;
            let mut o = format!("{}\n", r.summary());
            for e in &r.engines {
                let _ = writeln!(o, "{} ({}): {}", e.engine, e.family, e.verdict);
            }
            put("outcomes/reduced.txt", &o)?;
        }
        None => {
            put("test.js", &t.test.text)?;
            put("prepared.js", prepared)?;
        }
    }
    let engines_cfg = EnginesConfig::default();
    for r in t.run.results.iter().filter(|r| r.family.is_transpiler()) {
        let input = out.join("prepared.js");
        match transpile::transpile_file(&engines_cfg, &r.engine, &input, TRANSPILE_TIMEOUT) {
            Ok(text) => put(&format!("transpiled-{}.js", r.engine), &text)?,
            Err(why) => put(&format!("transpiled-{}.error.txt", r.engine), &why)?,
        }
    }
    for r in std::iter::once(&t.run.spec).chain(&t.run.results) {
        let text = format!(
            "engine: {} ({} {})\noutcome: {}\nverdict: {}\n{}\n--- output ---\n{}",
            r.engine,
            r.family,
            r.version,
            r.outcome.label(),
            r.verdict.label(),
            r.verdict.failure().map(|f| f.detail.clone()).unwrap_or_default(),
            r.output
        );
        put(&format!("outcomes/{}.txt", r.engine), &text)?;
    }
    let mut sh =
        String::from("#!/bin/sh\n# Runs prepared.js (harness + test) on each engine, one plain command each.\n");
    let _ = writeln!(sh, "# {}", t.run.vote.summary());
    if let Some((r, _, _)) = &reduced {
        let _ = writeln!(
            sh,
            "# the test is {} (original/ holds the original; outcomes/ the original's outcomes, outcomes/reduced.txt the reduced test's)",
            r.summary()
        );
    }
    let _ = writeln!(
        sh,
        "# expected: {}",
        t.run.expected.as_ref().map(|e| e.label()).unwrap_or_else(|| "-".into())
    );
    let _ = writeln!(sh, "cd \"$(dirname \"$0\")\"");
    let _ = writeln!(
        sh,
        "E=\"${{DOPPEL_ENGINES_DIR:-{}}}\"",
        EnginesConfig::default().dir.display()
    );
    for r in std::iter::once(&t.run.spec).chain(&t.run.results) {
        let _ = writeln!(
            sh,
            "echo '== {} (stored: {})'",
            r.engine,
            r.outcome.label().replace('\'', "")
        );
        if r.family.is_transpiler() {
            let words = transpile::emit_command(&engines_cfg, &r.engine, "prepared.js");
            let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
            let _ = writeln!(
                sh,
                "timeout -k 5 {REPRO_TIMEOUT_S} {} > transpiled-{}.js && timeout -k 5 {REPRO_TIMEOUT_S} {NODE_RUN} transpiled-{}.js; echo \"exit $?\"",
                quoted.join(" "),
                r.engine,
                r.engine
            );
            continue;
        }
        match command(&r.engine) {
            Some(c) => {
                let _ = writeln!(sh, "timeout -k 5 {REPRO_TIMEOUT_S} {c}; echo \"exit $?\"");
            }
            None => {
                let _ = writeln!(
                    sh,
                    "# {} runs only through doppel's worker (a library binding): doppel conform run test.js --engines {}",
                    r.engine, r.engine
                );
            }
        }
    }
    let engines: Vec<&str> = t.members.iter().map(|m| m.info.name.as_str()).collect();
    let _ = writeln!(
        sh,
        "# the whole panel again:\n# doppel conform run test.js --engines {}",
        engines.join(",")
    );
    put("run.sh", &sh)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(out.join("run.sh"), std::fs::Permissions::from_mode(0o755));
    }
    Ok(Reproducer {
        files,
        how: format!("sh {}/run.sh  (outcomes/ holds what each engine did)", out.display()),
    })
}
