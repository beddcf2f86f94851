//! The live follow-up run against the real headless Firefox ESR
//! (SpiderMonkey over RDP): resynchronization after an added breakpoint
//! that interrupts a step into a harness (prelude) function, where the
//! Firefox backend sets no breakpoint (campaign run 21022, test262).

use doppel_core::{Action, ExecAction, Language, Location, Output, Subject};
use doppel_debuggers::backend::firefox::Firefox;
use doppel_debuggers::{Debugger, DebuggerConfig};
use doppel_metamorphic::action::{AddedBreakpoint, Plan};
use doppel_metamorphic::follow_up::{self, FollowUpOutcome};
use doppel_metamorphic::relation::Relation;
use doppel_metamorphic::script::{Script, Step};
use std::path::Path;
use std::time::Duration;

/// test262's `assert`, reduced: a harness function in a prelude script.
const PRELUDE: &str =
    "function check(ok, message) {\n    if (ok === true) {\n        return;\n    }\n    throw new Error(message);\n}\n";

/// A call whose arguments span lines and call only natives: a step in at
/// line 2 goes straight into `check`; a breakpoint on line 3 is hit on the
/// way (at the argument's call).
const SOURCE: &str = "// run 21022, reduced\ncheck(\n  !Object.prototype.hasOwnProperty.call(Object, \"nope\"),\n  \"no own property\"\n);\nconsole.log(\"done\");\n";

fn subject(dir: &Path) -> Subject {
    let src = dir.join("main.js");
    std::fs::write(&src, SOURCE).unwrap();
    let pre = dir.join("harness.js");
    std::fs::write(&pre, PRELUDE).unwrap();
    Subject {
        name: "main.js".into(),
        language: Language::JavaScript,
        source: src,
        source_name: "main.js".into(),
        line_count: SOURCE.lines().count() as u32,
        binary: None,
        prelude: vec![pre],
        epilogue: vec![],
        hash: "main.js".into(),
        build: "none".into(),
    }
}

fn cfg() -> DebuggerConfig {
    DebuggerConfig {
        action_timeout: Duration::from_secs(20),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_step_into_the_harness_consumed_by_an_added_breakpoint_is_inconclusive_not_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let s = subject(dir.path());
    let mut d = Firefox::new(&cfg()).unwrap();
    // The initial run: a breakpoint at the call, start, step in.
    assert!(matches!(d.load(&s).await, Output::Finished { .. }));
    let actions = [
        Action::SetBreakpoint {
            at: Location::line("main.js", 2),
        },
        Action::Start,
        Action::Exec {
            exec: ExecAction::StepIn,
        },
        Action::Exec {
            exec: ExecAction::Resume,
        },
    ];
    let mut steps = vec![];
    for a in &actions {
        let output = match a {
            Action::SetBreakpoint { at } => d.set_breakpoint(at).await,
            Action::RemoveBreakpoint { at } => d.remove_breakpoint(at).await,
            Action::Start => d.start().await,
            Action::Exec { exec } => d.exec(*exec).await,
        };
        steps.push(Step {
            action: a.clone(),
            output,
        });
    }
    d.reset().await;
    let stepped = steps[2].output.paused().expect("the step in pauses");
    assert_eq!(
        (stepped.location.file.as_str(), stepped.location.line),
        ("harness.js", 2),
        "the step in ends in the harness: {:?}",
        steps[2].output
    );
    // Firefox sets no breakpoint there (doppel's backend: source file only).
    match d.load(&s).await {
        Output::Finished { .. } => {}
        other => panic!("{other:?}"),
    }
    let rejected = d.set_breakpoint(&stepped.location).await;
    assert!(
        matches!(rejected, Output::BreakpointSet { resolved: None, .. }),
        "{rejected:?}"
    );
    d.reset().await;

    // The follow-up run: a breakpoint on line 3 interrupts the step in.
    let plan = Plan {
        script: Script { steps },
        add_breakpoint: Some(AddedBreakpoint {
            before: 2,
            at: Location::line("main.js", 3),
        }),
        ..Plan::default()
    };
    let rel = Relation {
        file: "main.js".into(),
        columns: true,
        ..Relation::default()
    };
    let f = follow_up::run(&mut d, &s, &plan, &rel).await;
    d.shutdown().await;
    let acts: Vec<String> = f.trace.actions().map(|a| a.to_string()).collect();
    match &f.outcome {
        FollowUpOutcome::Inconclusive { reason } => {
            assert!(reason.contains("temporary breakpoint at harness.js:2"), "{reason}");
            assert!(reason.contains("rejected"), "{reason}");
        }
        other => panic!("expected an inconclusive test, got {other:?}\n{acts:?}"),
    }
    // The added breakpoint did interrupt the step (the case being tested).
    assert!(
        acts.last()
            .is_some_and(|a| a.starts_with("set breakpoint @ harness.js:2")),
        "no continue after the rejected temporary breakpoint: {acts:?}"
    );
    assert!(acts.contains(&"step in".to_string()), "{acts:?}");
}
