//! The scripted runner against the generator, with the real GDB and LLDB
//! (lldb-dap-22): every generated run on the bundled `globals.c`, run again
//! as the script of its recorded actions, ends with the same verdict (same
//! class and action index for divergences), policy notes included: delta
//! debugging's test judges exactly as a campaign does.

use doppel_core::{Action, Verdict};
use doppel_debuggers::DebuggerConfig;
use doppel_differential::DiffConfig;
use doppel_differential::campaign::{self, CampaignSpec};
use doppel_differential::{replay, scripted};
use doppel_lang::c::{BuildCache, BuildRecipe};
use std::path::PathBuf;

#[tokio::test]
async fn generated_runs_replayed_as_scripts_end_alike() {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = BuildCache::new(cache_dir.path().to_path_buf());
    let recipe = BuildRecipe::parse("gcc -O0 -g").unwrap();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c/globals.c");
    let p = doppel_lang::prepare::prepare_one(&cache, &path, "globals.c", &recipe)
        .await
        .unwrap();
    assert!(p.error.is_none(), "{:?}", p.error);
    let spec = CampaignSpec {
        name: "scripted-real".into(),
        debuggers: vec!["gdb".into(), "lldb".into()],
        debugger: DebuggerConfig::default(),
        diff: DiffConfig::default(),
        jobs: 1,
        resume: false,
        executables: [("lldb".to_string(), "/usr/bin/lldb-dap-22".to_string())].into(),
        tools: Vec::new(),
    };
    let mut dbg = campaign::create_debuggers(&spec).unwrap();
    let nt = |l: Option<u32>| p.node_type(l);
    let mut divergences = 0;
    for seed in 0..6 {
        let generated = campaign::run_one(&spec, &p, seed, &mut dbg).await;
        let actions: Vec<Action> = generated.traces[0].actions().cloned().collect();
        assert!(scripted::well_formed(&actions), "seed {seed}: {actions:?}");
        let again = scripted::run(&mut dbg, &p.subject, &actions, &spec.diff, &nt).await;
        let same = match (&generated.verdict, &again.verdict) {
            // The generator stops at max_actions; the script ends there too.
            (Verdict::MaxActions { .. }, Verdict::MaxActions { .. }) => true,
            (a, b) => replay::same_verdict(a, b),
        };
        assert!(
            same,
            "seed {seed}: generated {:?}, scripted {:?}",
            generated.verdict, again.verdict
        );
        assert_eq!(
            generated.traces[0].policy_notes().count(),
            again.traces[0].policy_notes().count(),
            "seed {seed}"
        );
        divergences += usize::from(matches!(generated.verdict, Verdict::Divergence(_)));
    }
    for d in dbg.iter_mut() {
        d.shutdown().await;
    }
    assert!(
        divergences > 0,
        "no divergence among six seeds: the comparison compared little"
    );
}
