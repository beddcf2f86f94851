//! The HTML report: content, escaping, highlighted divergence, and a real
//! browser rendering it (headless Chromium screenshot).

mod support;

use doppel_core::report::{ClassReport, ReportInput, side_by_side_rows, write_html};
use doppel_core::store::CampaignSummary;
use doppel_core::{ActionKind, DivergenceKind};
use support::*;

fn input() -> ReportInput {
    let k = class(DivergenceKind::PauseLocation, ActionKind::StepOver, "for_statement");
    let mut sample = run("k1", "loops.c", 7, Some(k.clone()));
    sample.id = Some(41);
    ReportInput {
        title: "doppel test report".into(),
        parameters: vec![("max actions".into(), "20".into())],
        tools: vec![tool("gdb"), tool("lldb")],
        summary: CampaignSummary {
            verdicts: vec![("divergence".into(), 5), ("program_finished".into(), 3)],
            runs: 8,
            divergences: 5,
            classes: 1,
            median_duration_ms: 120.0,
            total_duration_ms: 960.0,
        },
        classes: vec![ClassReport {
            key: k,
            size: 5,
            note: Some("normalization gap".into()),
            samples: vec![sample],
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
        html.contains(r#"<a href="class-1.html">1</a></td><td class="num">5</td>"#),
        "{html}"
    );
    assert!(html.contains("gdb 1.0") && html.contains("max actions"));
    let page = std::fs::read_to_string(dir.path().join("class-1.html")).unwrap();
    assert!(!page.contains("<script>alert(1)</script>"), "values must be escaped");
    assert!(page.contains("&lt;script&gt;"));
    assert_eq!(page.matches(r#"class="divergent""#).count(), 1);
    assert!(page.contains("doppel replay 41"));
}

/// The documented browser check (see `doppel_core::report`): Chromium renders
/// the index and a class page to PNG. CI installs chromium.
#[test]
fn a_real_browser_renders_the_report() {
    let chromium = std::path::Path::new("/usr/bin/chromium");
    assert!(
        chromium.exists(),
        "chromium is needed for this check: apt-get install chromium"
    );
    let dir = tempfile::tempdir().unwrap();
    write_html(dir.path(), &input()).unwrap();
    for page in ["index.html", "class-1.html"] {
        let png = dir.path().join(format!("{page}.png"));
        let profile = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1400,1000",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--screenshot={}", png.display()))
            .arg(format!("file://{}", dir.path().join(page).display()))
            .output()
            .unwrap();
        let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        assert!(
            size > 10_000,
            "{page}: screenshot of {size} bytes; chromium said {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if let Ok(keep) = std::env::var("DOPPEL_KEEP_SCREENSHOTS") {
            std::fs::copy(&png, std::path::Path::new(&keep).join(format!("{page}.png"))).unwrap();
        }
    }
}
