//! The control runs of metamorphic testing (issue 17 item 2) with real GDB:
//! a program that prints `__LINE__` is not comparable with a follow-up
//! that moves its lines (dead code inserted), and never a broken relation;
//! a program that prints its process id is not deterministic, so its
//! sequence ends before its initial run, the control runs held once per
//! program and not once per seed; a normal program runs as before, with
//! the control runs on or off.

use doppel_core::Verdict;
use doppel_core::technique::Technique;
use doppel_debuggers::control::ControlCache;
use doppel_debuggers::{Debugger, DebuggerConfig};
use doppel_lang::c::{BuildCache, BuildRecipe};
use doppel_metamorphic::campaign::{self, MetaSpec};
use doppel_metamorphic::program::{Builder, Program};
use doppel_metamorphic::sequence::{self, TestRecord};
use doppel_metamorphic::{MetaConfig, Transformation, control};
use std::path::Path;
use std::time::Duration;

/// Prints the line numbers of its two `printf` calls: any line inserted
/// above one changes the output.
const LINES_C: &str = "#include <stdio.h>

int main(void) {
  int x = 1;
  printf(\"%d %d\\n\", __LINE__, x);
  x = x + 1;
  printf(\"%d %d\\n\", __LINE__, x);
  x = x * 3;
  printf(\"%d %d\\n\", __LINE__, x);
  return 0;
}
";

/// Prints its process id: different in every run.
const PID_C: &str = "#include <stdio.h>
#include <unistd.h>

int main(void) {
  int pid = (int)getpid();
  printf(\"%d\\n\", pid);
  return 0;
}
";

async fn program(dir: &Path, name: &str, text: &str) -> Program {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let cache = BuildCache::new(dir.join("cache"));
    let recipe = BuildRecipe::parse("gcc -O0 -g").unwrap();
    let p = doppel_lang::prepare::prepare_one(&cache, &file, name, &recipe)
        .await
        .unwrap();
    assert!(p.error.is_none(), "{:?}", p.error);
    Program::new(p.subject.clone(), p.source_text.clone())
}

fn gdb() -> Box<dyn Debugger> {
    let cfg = campaign::debugger_config(&DebuggerConfig {
        action_timeout: Duration::from_secs(20),
        ..DebuggerConfig::default()
    });
    doppel_debuggers::registry::create("gdb", &cfg).unwrap()
}

fn builder(dir: &Path) -> Builder {
    Builder::new(dir.join("sources"), dir.join("cache"), Default::default())
}

fn meta(transformations: Vec<Transformation>, control_run: bool) -> MetaConfig {
    MetaConfig {
        rounds: 3,
        transformations,
        control_run,
        ..MetaConfig::default()
    }
}

async fn sequence_of(
    dbg: &mut Box<dyn Debugger>,
    program: &Program,
    seed: u64,
    cfg: &MetaConfig,
    builder: &Builder,
    controls: &ControlCache,
) -> Vec<TestRecord> {
    let mut out = Vec::new();
    sequence::run(dbg, program.clone(), seed, cfg, builder, controls, &mut |t| out.push(t)).await;
    out
}

fn spec(cfg: &MetaConfig) -> MetaSpec {
    MetaSpec {
        name: "control-gdb".into(),
        debugger: "gdb".into(),
        debugger_config: campaign::debugger_config(&DebuggerConfig::default()),
        meta: cfg.clone(),
        jobs: 1,
        resume: false,
        tool: None,
    }
}

#[tokio::test]
async fn a_follow_up_that_moves_printed_line_numbers_is_not_comparable_and_no_warning() {
    let dir = tempfile::tempdir().unwrap();
    let initial = program(dir.path(), "lines.c", LINES_C).await;
    let b = builder(dir.path());
    let mut dbg = gdb();
    let cache = ControlCache::default();

    // The program itself is deterministic.
    assert_eq!(control::initial(&cache, dbg.as_mut(), &initial).await, None);
    // A line inserted above the first printf: every printed line moves.
    let moved = LINES_C.replacen("  printf", "  if (0) {\n    x = 2;\n  }\n  printf", 1);
    let follow = b.build(&initial.subject, &moved).await.unwrap();
    let Some(Verdict::NotComparable { reason, controls }) =
        control::follow_up(&cache, dbg.as_mut(), &initial, &follow).await
    else {
        panic!("expected not comparable");
    };
    assert!(reason.contains("transformation changed"), "{reason}");
    assert!(reason.contains("prints differently"), "{reason}");
    assert_eq!(controls.len(), 2);
    assert_eq!(controls[0].debugger, "gdb: initial program");
    assert_eq!(controls[1].debugger, "gdb: follow-up program");
    assert_eq!(controls[0].program_output.trim(), "5 1\n7 2\n9 6");
    assert_eq!(controls[1].program_output.trim(), "8 1\n10 2\n12 6");
    // A change that moves no line and keeps the output: comparable.
    let same = LINES_C.replace("x = x + 1;", "x = x + (2 - 1);");
    let follow = b.build(&initial.subject, &same).await.unwrap();
    assert_eq!(control::follow_up(&cache, dbg.as_mut(), &initial, &follow).await, None);
    // Held once per program: the initial program twice, two follow-ups.
    assert_eq!(cache.len(), 4);

    // Whole sequences: dead code inserted into the program. The tests
    // whose insertion moved a printf are not comparable (and end their
    // sequence); none is a broken relation.
    let cfg = meta(vec![Transformation::parse_list("insert_dead_code").unwrap()[0]], true);
    let controls = ControlCache::default();
    let mut not_comparable = 0;
    for seed in 0..4 {
        let tests = sequence_of(&mut dbg, &initial, seed, &cfg, &b, &controls).await;
        assert!(!tests.is_empty());
        for t in &tests {
            assert!(t.verdict.finding().is_none(), "seed {seed}: {:?}", t.verdict);
            if let Verdict::NotComparable { reason, controls } = &t.verdict {
                not_comparable += 1;
                assert!(t.last, "a not comparable test ends its sequence");
                assert!(t.follow_up_trace.is_none(), "no follow-up run");
                assert_ne!(t.follow_up.text, t.initial.text);
                assert!(reason.contains("prints differently"), "{reason}");
                assert_ne!(controls[0].program_output, controls[1].program_output);
                // `doppel show` shows the reason and both outputs.
                let rec = campaign::record(&spec(&cfg), "seq", seed, t);
                let view = doppel_metamorphic::technique::Metamorphic.view(&rec).unwrap();
                assert!(
                    view.lines
                        .iter()
                        .any(|l| l.starts_with("verdict: not comparable (control run)")),
                    "{:?}",
                    view.lines
                );
                assert!(
                    view.lines.iter().any(|l| l == "  gdb: follow-up program: exit code 0"),
                    "{:?}",
                    view.lines
                );
                assert!(view.lines.iter().any(|l| l == "    | 5 1"), "{:?}", view.lines);
            }
        }
    }
    assert!(not_comparable > 0, "some insertion moved a printf");
    dbg.shutdown().await;
}

#[tokio::test]
async fn a_program_printing_its_process_id_is_not_deterministic_and_not_tested() {
    let dir = tempfile::tempdir().unwrap();
    let initial = program(dir.path(), "pid.c", PID_C).await;
    let b = builder(dir.path());
    let mut dbg = gdb();
    let cfg = meta(MetaConfig::default().transformations, true);
    let controls = ControlCache::default();
    for seed in 0..2 {
        let tests = sequence_of(&mut dbg, &initial, seed, &cfg, &b, &controls).await;
        assert_eq!(tests.len(), 1, "seed {seed}: one test ends the sequence");
        let t = &tests[0];
        let Verdict::NotComparable { reason, controls } = &t.verdict else {
            panic!("seed {seed}: {:?}", t.verdict);
        };
        assert!(reason.contains("not deterministic"), "{reason}");
        assert_eq!(controls[1].debugger, "gdb: initial program, again");
        assert!(t.last && t.follow_up_trace.is_none() && t.initial_trace.events.is_empty());
    }
    assert_eq!(
        controls.len(),
        2,
        "the program ran twice, once per campaign, not per seed"
    );
    // Off: the sequence runs as before (the relation never reads the output).
    let off = meta(MetaConfig::default().transformations, false);
    let tests = sequence_of(&mut dbg, &initial, 0, &off, &b, &ControlCache::default()).await;
    assert!(
        tests
            .iter()
            .all(|t| !matches!(t.verdict, Verdict::NotComparable { .. })),
        "{:?}",
        tests.iter().map(|t| t.verdict.name()).collect::<Vec<_>>()
    );
    assert!(tests[0].follow_up_trace.is_some() || tests[0].verdict.name() == "inconclusive");
    dbg.shutdown().await;
}

#[tokio::test]
async fn a_normal_program_runs_as_before_with_the_control_runs() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c/loops.c")).unwrap();
    let initial = program(dir.path(), "loops.c", &text).await;
    let b = builder(dir.path());
    let mut dbg = gdb();
    let all = MetaConfig::default().transformations;
    let controls = ControlCache::default();
    for seed in 0..2 {
        let on = sequence_of(&mut dbg, &initial, seed, &meta(all.clone(), true), &b, &controls).await;
        let off = sequence_of(
            &mut dbg,
            &initial,
            seed,
            &meta(all.clone(), false),
            &b,
            &ControlCache::default(),
        )
        .await;
        let names = |ts: &[TestRecord]| ts.iter().map(|t| t.verdict.name()).collect::<Vec<_>>();
        assert_eq!(names(&on), names(&off), "seed {seed}");
        assert!(on.iter().all(|t| !matches!(t.verdict, Verdict::NotComparable { .. })));
        let applied = |ts: &[TestRecord]| ts.iter().map(|t| t.applied.clone()).collect::<Vec<_>>();
        assert_eq!(applied(&on), applied(&off), "seed {seed}: the same transformations");
    }
    // The original twice, plus each changed follow-up once.
    assert!(controls.len() >= 2);
    dbg.shutdown().await;
}
