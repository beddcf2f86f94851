//! Test support: hand-made run records.
#![allow(dead_code)]

pub mod postgres;

use doppel_core::*;

pub fn tool(name: &str) -> ToolInfo {
    ToolInfo {
        name: name.into(),
        version: format!("{name} 1.0"),
        protocol: "test".into(),
        executable: format!("/usr/bin/{name}"),
    }
}

pub fn subject(name: &str) -> Subject {
    Subject {
        name: name.into(),
        language: Language::C,
        source: format!("/tmp/{name}").into(),
        source_name: name.into(),
        line_count: 20,
        binary: None,
        prelude: Vec::new(),
        epilogue: Vec::new(),
        hash: format!("hash-{name}"),
        build: "gcc -O0 -g".into(),
    }
}

fn paused(line: u32, value: &str) -> Output {
    Output::Paused(ProgramState {
        location: Location::line("p.c", line),
        reason: PauseReason::Step,
        call_stack: vec![Frame {
            function: "main".into(),
            location: Some(Location::line("p.c", line)),
        }],
        variables: vec![Variable {
            name: "v".into(),
            type_name: Some("char *".into()),
            value: Value::scalar(value),
            kind: VariableKind::Local,
        }],
        signal: None,
        return_value: None,
    })
}

/// A run of two debuggers that diverge (pause location) at action 3 when
/// `class` is given, else agree until the end.
pub fn run(key: &str, subject_name: &str, seed: u64, class: Option<ClassKey>) -> RunRecord {
    let actions = [
        Action::SetBreakpoint {
            at: Location::line("p.c", 4),
        },
        Action::Start,
        Action::Exec {
            exec: ExecAction::StepIn,
        },
        Action::Exec {
            exec: ExecAction::StepOver,
        },
    ];
    let outs = |dbg: usize| -> Vec<Output> {
        vec![
            Output::BreakpointSet {
                requested: Location::line("p.c", 4),
                resolved: Some(Location::line("p.c", 5)),
                message: None,
            },
            paused(5, "0x1 \"<script>alert(1)</script>\""),
            paused(6, "1"),
            if dbg == 1 && class.is_some() {
                paused(9, "2")
            } else {
                paused(7, "2")
            },
        ]
    };
    let traces = (0..2)
        .map(|d| Trace {
            debugger: tool(if d == 0 { "gdb" } else { "lldb" }),
            events: actions
                .iter()
                .zip(outs(d))
                .enumerate()
                .flat_map(|(i, (a, o))| {
                    [
                        Event {
                            t_ms: i as f64,
                            kind: EventKind::Action(a.clone()),
                            raw: vec![],
                        },
                        Event {
                            t_ms: i as f64 + 0.5,
                            kind: EventKind::Output(o),
                            raw: vec![RawMessage::received("raw")],
                        },
                    ]
                })
                .collect(),
        })
        .collect();
    let verdict = match class {
        Some(class) => Verdict::Divergence(Finding {
            class,
            action_index: Some(3),
            last_action: Some(actions[3].clone()),
            line: Some(6),
            detail: "gdb: paused at p.c:7; lldb: paused at p.c:9".into(),
        }),
        None => Verdict::ProgramFinished { actions: 2 },
    };
    RunRecord {
        id: None,
        key: key.into(),
        technique: "differential".into(),
        campaign: "test".into(),
        subject: subject(subject_name),
        seed,
        config: serde_json::json!({"source_text": "int main(void) { return 0; }\n"}),
        debuggers: vec![tool("gdb"), tool("lldb")],
        verdict,
        traces,
        duration_ms: 10.0 + seed as f64,
        started_at_ms: 1_700_000_000_000,
    }
}

pub fn class(d: DivergenceKind, a: ActionKind, node: &str) -> ClassKey {
    ClassKey::new("differential")
        .with("divergence", d.as_str())
        .with("last_action", a.as_str())
        .with("node", node)
}
