//! `doppel engines`: the JavaScript engines, installed or not (and why), with
//! version, family, how they run, and feature level (measured by the probe,
//! cached per engine version under `DOPPEL_ENGINES_DIR/cache`).

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use doppel_engines::{EnginesConfig, registry};
use std::process::ExitCode;

/// Arguments of `doppel engines`.
#[derive(clap::Args, Debug)]
pub struct EnginesArgs {
    /// Do not run (or read) the feature probes; only versions and install state.
    #[arg(long)]
    pub no_probe: bool,
}

pub async fn run(a: EnginesArgs) -> anyhow::Result<ExitCode> {
    let cfg = EnginesConfig::default();
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(["engine", "kind", "family", "status", "version", "mode", "features"]);
    let kind = |f: doppel_engines::Family| {
        if f.is_transpiler() {
            "transpiler"
        } else if f == doppel_engines::Family::Engine262 {
            "specification"
        } else {
            "engine"
        }
    };
    let (mut installed, mut missing) = (0, 0);
    for e in registry::all() {
        match (e.probe)(&cfg) {
            Ok(version) => {
                installed += 1;
                let (mode, features) = match (e.create)(&cfg) {
                    Ok(mut engine) => {
                        let mut mode = engine.info().mode.clone();
                        let t = e.traits;
                        for (ok, caveat) in [
                            (t.exact_constructor, "constructor from the message"),
                            (t.conformant_global, "global object not conformant"),
                            (t.runs_promise_jobs, "promise jobs not run"),
                        ] {
                            if !ok {
                                mode.push_str(&format!("\n{caveat}"));
                            }
                        }
                        let f = if a.no_probe {
                            "-".to_string()
                        } else {
                            match engine.features().await {
                                Ok(f) => f.summary(),
                                Err(err) => err.to_string(),
                            }
                        };
                        engine.shutdown().await;
                        (mode, f)
                    }
                    Err(err) => (String::new(), err.to_string()),
                };
                t.add_row([
                    e.name.to_string(),
                    kind(e.family).to_string(),
                    e.family.to_string(),
                    "installed".into(),
                    version,
                    mode,
                    features,
                ]);
            }
            Err(err) => {
                missing += 1;
                t.add_row([
                    e.name.to_string(),
                    kind(e.family).to_string(),
                    e.family.to_string(),
                    "MISSING".into(),
                    String::new(),
                    e.about.to_string(),
                    err.to_string(),
                ]);
            }
        }
    }
    println!("{t}");
    println!(
        "{installed} installed, {missing} missing; engines directory {} (DOPPEL_ENGINES_DIR)",
        cfg.dir.display()
    );
    if missing > 0 {
        println!(
            "to install the missing ones: {} and the Debian packages in scripts/deps/apt.txt",
            cfg.setup_hint()
        );
    }
    Ok(ExitCode::SUCCESS)
}
