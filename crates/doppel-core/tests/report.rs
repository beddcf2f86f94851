//! The HTML report: content, escaping, highlighted divergence, and a real
//! browser rendering it (headless Chromium screenshot).

mod support;

use doppel_core::process::Sandbox;
use doppel_core::report::{
    ClassReport, ReportInput, ReportSection, RootCauseReport, describe_output, side_by_side_rows, trace_table,
    write_html,
};
use doppel_core::store::CampaignSummary;
use doppel_core::*;
use std::time::Duration;
use support::*;

fn input() -> ReportInput {
    let k = class(DivergenceKind::PauseLocation, ActionKind::StepOver, "for_statement");
    let mut sample = run("k1", "loops.c", 7, Some(k.clone()));
    sample.id = Some(41);
    ReportInput {
        title: "doppel test report".into(),
        root_causes: Vec::new(),
        parameters: vec![
            ("max actions".into(), "20".into()),
            ("campaign".into(), "<script>alert(2)</script>".into()),
        ],
        tools: vec![tool("gdb"), tool("lldb")],
        summary: CampaignSummary {
            verdicts: vec![("divergence".into(), 5), ("program_finished".into(), 3)],
            runs: 8,
            divergences: 5,
            classes: 1,
            median_duration_ms: 120.0,
            total_duration_ms: 960.0,
        },
        sections: vec![ReportSection {
            title: "differential testing".into(),
            legend: "divergence type, last action, AST node".into(),
            headers: vec!["divergence".into(), "last action".into(), "AST node".into()],
            classes: vec![ClassReport {
                parts: vec!["pause_location".into(), "step_over".into(), "for_statement".into()],
                key: k,
                size: 5,
                note: Some("normalization gap <b>".into()),
                samples: vec![(
                    sample.clone(),
                    technique::RunView {
                        lines: vec![
                            "Diverged after action 3 (step over).".into(),
                            sample.verdict.finding().unwrap().detail.clone(),
                        ],
                        tables: vec![trace_table(&sample)],
                    },
                )],
            }],
        }],
        pages: vec![technique::ReportPage {
            file: "matrix-1.html".into(),
            title: "engine by test <matrix>".into(),
            view: technique::RunView {
                lines: vec!["tests <i>".into()],
                tables: Vec::new(),
            },
        }],
    }
}

#[test]
fn rows_pair_actions_with_outputs_and_mark_the_divergence() {
    let r = run(
        "k",
        "p.c",
        1,
        Some(class(DivergenceKind::PauseLocation, ActionKind::StepOver, "x")),
    );
    let rows = side_by_side_rows(&r);
    assert_eq!(rows.len(), 4);
    assert_eq!(
        rows.iter().filter(|r| r.divergent).map(|r| r.index).collect::<Vec<_>>(),
        [3]
    );
    assert_eq!(rows[0].outputs[0], "breakpoint @ p.c:5 (requested 4)");
    assert!(
        rows[3].outputs[0].starts_with("paused @ p.c:7 [main]"),
        "{}",
        rows[3].outputs[0]
    );
    assert!(
        rows[3].outputs[1].starts_with("paused @ p.c:9"),
        "{}",
        rows[3].outputs[1]
    );
}

#[test]
fn report_lists_classes_escapes_values_and_highlights_the_divergent_row() {
    let dir = tempfile::tempdir().unwrap();
    let index = write_html(dir.path(), &input()).unwrap();
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(html.contains("pause_location|step_over|for_statement") || html.contains("for_statement"));
    assert!(
        html.contains(r#"<a href="class-1.html">1</a></td><td class="num"><a href="class-1.html">5</a></td>"#),
        "{html}"
    );
    assert!(html.contains("gdb 1.0") && html.contains("max actions"));
    assert!(
        html.contains("8 runs, 5 divergences in 1 equivalence classes"),
        "{html}"
    );
    assert!(
        !html.contains("<script>") && !html.contains("gap <b>"),
        "values must be escaped"
    );
    assert!(html.contains("&lt;script&gt;alert(2)"));
    // A technique's page: linked from the first page, its values escaped.
    assert!(
        html.contains(r#"<a href="matrix-1.html">engine by test &lt;matrix&gt;</a>"#),
        "{html}"
    );
    let m = std::fs::read_to_string(dir.path().join("matrix-1.html")).unwrap();
    assert!(
        m.contains("tests &lt;i&gt;") && m.contains("<h1>engine by test &lt;matrix&gt;</h1>"),
        "{m}"
    );
    let page = std::fs::read_to_string(dir.path().join("class-1.html")).unwrap();
    assert!(!page.contains("<script>"), "values must be escaped: {page}");
    assert!(page.contains("&lt;script&gt;alert(1)"));
    assert!(page.contains("Diverged after action 3 (step over)."), "{page}");
    assert!(page.contains("gdb: paused at p.c:7; lldb: paused at p.c:9"));
    // Exactly one highlighted row, and it is action 3 with both outputs.
    assert_eq!(page.matches(r#"class="divergent""#).count(), 1);
    let row = page.split(r#"<tr class="divergent">"#).nth(1).unwrap();
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.starts_with(r#"<td class="num">3</td><td class="act">step over</td>"#),
        "{row}"
    );
    assert!(
        row.contains("paused @ p.c:7") && row.contains("paused @ p.c:9"),
        "{row}"
    );
    assert!(page.contains("doppel replay 41"));
}

fn root(id: &str, standing: rootcause::Standing, reduced: Option<&str>) -> RootCauseReport {
    RootCauseReport {
        id: id.into(),
        key: format!("differential:shape={id}"),
        technique: "differential testing".into(),
        standing,
        suspect: "gdb or lldb".into(),
        size: 4,
        classes: 2,
        representative: 41,
        view: Some(technique::RunView {
            lines: vec!["verdict: <divergence>".into()],
            tables: vec![],
        }),
        reduced: reduced.map(str::to_string),
    }
}

#[test]
fn the_first_page_lists_new_root_causes_first_and_collapses_the_rest() {
    use rootcause::Standing;
    let dir = tempfile::tempdir().unwrap();
    let mut input = input();
    input.root_causes = vec![
        root(
            "rc-policy",
            Standing::Policy {
                name: "slide_vs_reject".into(),
            },
            None,
        ),
        root("rc-new", Standing::New, Some("int main() { <b> }")),
        root(
            "rc-known",
            Standing::Known {
                id: "k".into(),
                link: "https://github.com/llvm/llvm-project/issues/207497".into(),
            },
            None,
        ),
        root(
            "rc-fp",
            Standing::FalsePositive {
                note: "loop rotation".into(),
            },
            None,
        ),
    ];
    let html = std::fs::read_to_string(write_html(dir.path(), &input).unwrap()).unwrap();
    let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("{s} missing: {html}"));
    // New root causes come first, before any <details>, then the collapsed groups.
    assert!(at("Candidate bugs: new root causes (1)") < at("rc-new"));
    assert!(at("rc-new") < at("<details>"), "{html}");
    assert!(at("<summary>Policy differences (1)") < at("rc-policy"));
    assert!(at("<summary>Known upstream bugs (1)") < at("rc-known"));
    // minijinja escapes `/` as `&#x2f;` (also in attributes, where browsers decode it).
    assert!(
        html.contains(
            r#"known: <a href="https:&#x2f;&#x2f;github.com&#x2f;llvm&#x2f;llvm-project&#x2f;issues&#x2f;207497">"#
        ),
        "{html}"
    );
    assert!(at("<summary>Triaged false positives (1)") < at("rc-fp"));
    assert_eq!(html.matches("<details>").count(), 3);
    assert!(html.contains("and 4 root causes"), "{html}");
    // The new one's page: its representative run and its reduced reproducer, escaped.
    let page = std::fs::read_to_string(dir.path().join("root-2.html")).unwrap();
    assert!(
        page.contains("Root cause rc-new") && page.contains("Representative run 41"),
        "{page}"
    );
    assert!(
        page.contains("int main() { &lt;b&gt; }") && page.contains("verdict: &lt;divergence&gt;"),
        "{page}"
    );
    assert!(page.contains("doppel triage rc-new --as"), "{page}");
    assert!(
        !std::fs::read_to_string(dir.path().join("root-1.html"))
            .unwrap()
            .contains("Reduced reproducer")
    );
}

#[test]
fn rows_handle_failures_finishes_and_traces_of_different_length() {
    let mut r = run(
        "k",
        "p.c",
        1,
        Some(class(DivergenceKind::ToolFailure, ActionKind::StepOver, "x")),
    );
    // gdb finishes at action 3; lldb fails there and its trace has no more.
    let gdb = &mut r.traces[0].events;
    gdb[7].kind = EventKind::Output(Output::Finished {
        exit_code: Some(0),
        signal: None,
    });
    gdb.push(Event {
        t_ms: 9.0,
        kind: EventKind::Action(Action::Exec {
            exec: ExecAction::Resume,
        }),
        raw: vec![],
    });
    let lldb = &mut r.traces[1].events;
    lldb[7].kind = EventKind::Output(Output::failed(FailureKind::Timeout, "no answer in 10 s\nmore"));
    let rows = side_by_side_rows(&r);
    assert_eq!(rows.len(), 5);
    assert_eq!(
        rows[3].outputs,
        ["finished (exit 0)", "FAILED timeout: no answer in 10 s"]
    );
    assert_eq!(rows[4].action, "resume");
    assert_eq!(rows[4].outputs, ["", ""]);
    assert!(rows[3].divergent && !rows[4].divergent);
}

#[test]
fn describe_output_covers_every_output() {
    let rejected = Output::BreakpointSet {
        requested: Location::line("p.c", 2),
        resolved: None,
        message: Some("no code".into()),
    };
    assert_eq!(describe_output(&rejected), "breakpoint rejected: no code");
    let same_line = Output::BreakpointSet {
        requested: Location::line("p.c", 2),
        resolved: Some(Location {
            file: "p.c".into(),
            line: 2,
            column: Some(5),
        }),
        message: None,
    };
    assert_eq!(describe_output(&same_line), "breakpoint @ p.c:2:5");
    assert_eq!(
        describe_output(&Output::BreakpointRemoved {
            ok: true,
            message: None
        }),
        "removed"
    );
    assert_eq!(
        describe_output(&Output::BreakpointRemoved {
            ok: false,
            message: None
        }),
        "not removed"
    );
    assert_eq!(
        describe_output(&Output::Finished {
            exit_code: None,
            signal: Some("SIGSEGV".into())
        }),
        "finished (SIGSEGV)"
    );
    let paused = Output::Paused(ProgramState {
        location: Location::line("p.c", 13),
        reason: PauseReason::Breakpoint,
        call_stack: vec![
            Frame {
                function: "square".into(),
                location: None,
            },
            Frame {
                function: "main".into(),
                location: None,
            },
        ],
        variables: vec![Variable {
            name: "i".into(),
            type_name: Some("int".into()),
            value: Value::scalar("0"),
            kind: VariableKind::Argument,
        }],
        signal: None,
        return_value: None,
    });
    assert_eq!(describe_output(&paused), "paused @ p.c:13 [square <- main] i=0");
    assert_eq!(
        describe_output(&Output::failed(FailureKind::Crash, "gdb died")),
        "FAILED crash: gdb died"
    );
}

/// The documented browser check (see `doppel_core::report`): Chromium renders
/// the index and a class page to PNG. Runs when `/usr/bin/chromium` exists;
/// when `CI` is set (CI installs chromium) a missing browser is a failure.
#[tokio::test]
async fn a_real_browser_renders_the_report() {
    let chromium = std::path::Path::new("/usr/bin/chromium");
    assert!(
        chromium.exists(),
        "/usr/bin/chromium is missing: run scripts/test, which installs chromium"
    );
    let dir = tempfile::tempdir().unwrap();
    write_html(dir.path(), &input()).unwrap();
    for page in ["index.html", "class-1.html"] {
        let png = dir.path().join(format!("{page}.png"));
        let profile = tempfile::tempdir().unwrap();
        let mut cmd = tokio::process::Command::new(chromium);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1400,1000")
        .arg(format!("file://{}", dir.path().join(page).display()));
        // Own process group, whole tree killed on timeout; no network needed.
        let out = doppel_core::process::run(cmd, Duration::from_secs(90), Sandbox::default())
            .await
            .unwrap();
        assert!(!out.timed_out, "{page}: chromium did not finish within 90 s");
        let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        assert!(
            size > 10_000,
            "{page}: screenshot of {size} bytes; chromium said {}",
            out.stderr
        );
        if let Ok(keep) = std::env::var("DOPPEL_KEEP_SCREENSHOTS") {
            std::fs::copy(&png, std::path::Path::new(&keep).join(format!("{page}.png"))).unwrap();
        }
    }
}
