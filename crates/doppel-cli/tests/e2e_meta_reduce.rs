//! End to end: a metamorphic finding of LLDB (the one-line function whose
//! prologue LLDB's breakpoint stops before, `docs/results/metamorphic.md`,
//! c/inline.c with an added unused parameter) on a padded copy of the
//! bundled program is reduced by default at the end of `doppel meta`: its
//! initial actions by delta debugging, then its initial program by real
//! C-Vise through the hidden `doppel reduce-probe`, which re-applies the
//! test's round to each variant. The reduced program is shorter, still
//! breaks the relation with the same class (`doppel replay`), and the
//! bundle (`doppel repro`) is written from it.

mod reduce_support;
use reduce_support::{doppel, installed, run_ok};

use doppel_core::store::{RunFilter, Store};
use doppel_metamorphic::record::MetaRecord;
use std::path::Path;

/// c/inline.c with twelve globals and twelve statements of padding that
/// have nothing to do with the finding (and no function, so the
/// transformation's choice of function is the same on every variant).
fn padded() -> String {
    let src = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c/inline.c")).unwrap();
    let globals: String = (0..12).map(|k| format!("int pad_{k} = {k};\n")).collect();
    let statements: String = (0..12)
        .map(|k| format!("    pad_{k} += pad_{} * 2;\n", (k + 1) % 12))
        .collect();
    let out = src
        .replacen(
            "static inline int clamp",
            &format!("/* Padding. */\n{globals}\nstatic inline int clamp"),
            1,
        )
        .replacen(
            "    printf(\"%d\\n\", out);",
            &format!("{statements}    printf(\"%d %d\\n\", out, pad_0);"),
            1,
        );
    assert!(out.contains("pad_11 += pad_0"), "{out}");
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn meta_findings_have_their_program_reduced_by_default_and_bundled_from_the_reduced_case() {
    assert!(
        installed("lldb-dap-22") && installed("cvise"),
        "the test needs lldb-dap-22 and cvise"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let program = dir.path().join("inline.c");
    std::fs::write(&program, padded()).unwrap();
    let original_lines = padded().lines().count();

    // 1. The campaign: one transformation, one round, reduction on by
    // default (seeds 0 and 2 give a finding with LLDB 22).
    let (_, err) = run_ok(
        doppel(&db)
            .env(
                "RUST_LOG",
                "doppel_differential::reduce_program=info,doppel_metamorphic=info",
            )
            .args([
                "meta",
                "--debugger",
                "lldb",
                "--debugger-path",
                "lldb=/usr/bin/lldb-dap-22",
                "--transformations",
                "add_unused_parameter",
                "--rounds",
                "1",
                "--runs-per-program",
                "3",
                "--seed",
                "0",
                "--reduce-budget",
                "90",
                "--quiet",
            ])
            .arg(&program),
    );
    assert!(err.contains("reduced run "), "{err}");

    // 2. The root cause's representative holds a reduced case: fewer
    // lines, the same class, the follow-up made from the reduced program.
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let filter = RunFilter {
        technique: Some("metamorphic".into()),
        campaign: None,
    };
    let classes = store.classes(&filter).await.unwrap();
    let stored = store.summary(&filter).await.unwrap().runs as usize;
    let (mut seen, mut id, mut reduced) = (0, 1, None);
    while seen < stored && id < 10_000 {
        if let Some(run) = store.run(id).await.unwrap() {
            seen += 1;
            if let Some(case) = MetaRecord::of(&run).unwrap().reduced {
                let key = run.verdict.finding().unwrap().class.clone();
                reduced = Some((run, case, key));
            }
        }
        id += 1;
    }
    let (run, case, key) = reduced.unwrap_or_else(|| panic!("no reduced finding: {classes:?}\n{err}"));
    let rec = MetaRecord::of(&run).unwrap();
    eprintln!("{}", doppel_differential::reduce::describe(&case));
    assert_eq!(case.verdict.finding().unwrap().class, key);
    assert_eq!(case.original_lines, original_lines);
    let text = case
        .source_text
        .clone()
        .unwrap_or_else(|| panic!("program not reduced: {:?}\n--- doppel meta's stderr\n{err}", case.notes));
    assert!(case.lines < original_lines, "{} of {original_lines} lines", case.lines);
    assert_eq!(text.lines().count(), case.lines);
    // C-Vise's first passes join lines; within the budget on a loaded
    // machine it may stop before it removes every padding statement, so
    // the test asks for fewer lines, not for the padding gone.
    assert!(text.contains("twice"), "{text}");
    let follow = rec.reduced_follow_up.clone().expect("the reduced follow-up program");
    assert!(follow.source_text.contains("doppel_p"), "{}", follow.source_text);
    assert!(
        follow.source_text.lines().count() < original_lines,
        "{}",
        follow.source_text
    );
    assert_eq!(case.traces.len(), 2, "initial and follow-up traces");
    assert!(case.program_ms.is_some());

    // 3. Replay: the reduced case breaks the relation again.
    let id = run.id.unwrap().to_string();
    let (out, _) = run_ok(doppel(&db).args(["replay", &id]));
    let reduced_line = out
        .lines()
        .position(|l| l.contains("reduced case:"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        out.lines().nth(reduced_line - 1).unwrap().contains("REPRODUCES"),
        "{out}"
    );

    // 4. The bundle is the reduced case: both programs reduced.
    let bundle = dir.path().join("bundle");
    run_ok(doppel(&db).args(["repro", &id, "--out"]).arg(&bundle));
    let initial = std::fs::read_to_string(bundle.join("initial").join(&run.subject.source_name)).unwrap();
    assert_eq!(initial, text);
    let follow_up = std::fs::read_to_string(bundle.join("follow-up").join(&follow.subject.source_name)).unwrap();
    assert_eq!(follow_up, follow.source_text);
}
