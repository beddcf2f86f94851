//! End to end: the `doppel` binary with real gdb and lldb on real programs,
//! checked through the SQLite store it writes.

use assert_cmd::Command;
use doppel_core::store::{RunFilter, Store};
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/c")
        .join(name)
}

fn doppel(db: &Path) -> Command {
    let mut c = Command::cargo_bin("doppel").unwrap();
    // Reduction (on by default) is tested in e2e_diff_reduce.rs.
    c.env("DOPPEL_REDUCE", "false");
    c.arg("--db").arg(db).env("CI", "1");
    c
}

#[tokio::test(flavor = "multi_thread")]
async fn diff_stores_runs_classes_and_everything_a_finding_needs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("out/doppel.db");
    let report = dir.path().join("report");
    let programs = ["structs.c", "switch.c", "recursion.c", "arrays.c"].map(corpus);
    let out = doppel(&db)
        .args([
            "diff",
            "--runs-per-program",
            "3",
            "--seed",
            "1",
            "--jobs",
            "2",
            "--report",
        ])
        .arg(&report)
        .args(&programs)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}\n{stdout}");
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    // 12 runs, plus a record of its own for each finding a run went on past
    // (`findings_per_run`, key `...#finding<k>`).
    let keys = store.finished_keys("differential").await.unwrap();
    let noted = keys.iter().filter(|k| k.contains("#finding")).count() as u64;
    assert_eq!(keys.len() as u64 - noted, 12, "{keys:?}");
    assert!(stdout.contains(&format!("{} runs", 12 + noted)), "{stdout}");
    let summary = store.summary(&RunFilter::default()).await.unwrap();
    assert_eq!(summary.runs, 12 + noted);
    let classes = store.classes(&RunFilter::default()).await.unwrap();
    assert_eq!(classes.iter().map(|c| c.size).sum::<u64>(), summary.divergences);

    // `doppel classes --json` agrees with the store.
    let json = doppel(&db).args(["classes", "--json"]).output().unwrap();
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(listed.len(), classes.len());

    assert!(report.join("index.html").is_file());
    let pages = |prefix: &str| {
        std::fs::read_dir(&report)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with(prefix))
            .count()
    };
    assert_eq!(pages("class-"), classes.len());
    assert!(pages("root-") >= 1 && pages("root-") <= summary.divergences as usize);

    // Every run carries both traces, tool versions and the program.
    let first = store.run(1).await.unwrap().unwrap();
    assert_eq!(first.traces.len(), 2);
    assert!(first.debuggers[0].version.contains("gdb") && first.debuggers[1].version.contains("lldb"));
    assert!(first.config["source_text"].as_str().unwrap().contains("int main"));

    // The four programs are known to diverge within three seeds (recursion.c
    // and switch.c through resumed step plans, the others through breakpoint
    // sliding before main); take one divergence and follow it through.
    let sample = store.sample_round_robin(&RunFilter::default(), 1).await.unwrap();
    let id = sample.first().expect("at least one divergence").id;
    let show = doppel(&db).args(["show", &id.to_string()]).output().unwrap();
    assert!(String::from_utf8_lossy(&show.stdout).contains("divergence after action"));

    let repro = dir.path().join("repro");
    let r = doppel(&db)
        .args(["repro", &id.to_string(), "--out"])
        .arg(&repro)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for f in ["repro.gdb", "repro.lldb", "run.sh", "build.sh", "README.md"] {
        assert!(repro.join(f).is_file(), "{f}");
    }
    let ran = std::process::Command::new("sh")
        .arg(repro.join("run.sh"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&ran.stdout);
    assert!(text.contains("##### gdb") && text.contains("##### lldb"), "{text}");
    let (gdb_part, lldb_part) = text.split_once("##### lldb").unwrap();
    assert!(
        gdb_part.contains("<-- divergence") && lldb_part.contains("<-- divergence"),
        "marker in both transcripts:\n{text}"
    );
    assert!(
        !text.contains("Error in sourced command file"),
        "the gdb command file runs cleanly:\n{text}"
    );

    let replay = doppel(&db).args(["replay", &id.to_string()]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&replay.stdout).contains("replays reproduce run"),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );

    // --resume skips everything already stored.
    let again = doppel(&db)
        .args(["diff", "--runs-per-program", "3", "--seed", "1", "--resume"])
        .args(&programs)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&again.stderr).contains("12 runs already stored are skipped"));
    assert_eq!(store.summary(&RunFilter::default()).await.unwrap().runs, 12 + noted);
}

/// Root causes from a real GDB vs LLDB campaign: listed with their
/// standing, triaged, and the decision kept across `doppel reclassify` and
/// shown by `classes`, `show` and the report.
#[tokio::test(flavor = "multi_thread")]
async fn triage_decisions_are_shown_and_kept_across_reclassify() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("doppel.db");
    let out = doppel(&db)
        .args(["diff", "--runs-per-program", "3", "--seed", "1", "--jobs", "1"])
        .args(["recursion.c", "switch.c", "structs.c"].map(corpus))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let roots = |db: &Path| -> Vec<serde_json::Value> {
        let out = doppel(db)
            .args(["classes", "--root-causes", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let before = roots(&db);
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let divergences = store.summary(&RunFilter::default()).await.unwrap().divergences;
    assert!(!before.is_empty(), "these programs diverge within three seeds");
    assert_eq!(
        before.iter().map(|r| r["size"].as_u64().unwrap()).sum::<u64>(),
        divergences,
        "every divergent run has one root cause"
    );
    let id = before[0]["id"].as_str().unwrap().to_string();
    let run = before[0]["representative_run"].as_i64().unwrap();

    let unknown = doppel(&db)
        .args(["triage", "rc-nonesuch", "--as", "bug"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no root cause"));
    let t = doppel(&db)
        .args(["triage", &id, "--as", "false-positive", "--note", "seen in <every> run"])
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    assert!(String::from_utf8_lossy(&t.stdout).contains("false positive: seen in <every> run"));

    let r = doppel(&db).arg("reclassify").output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let after = roots(&db);
    let same = after
        .iter()
        .find(|r| r["id"] == id.as_str())
        .expect("the root cause is still there");
    assert_eq!(same["standing"]["standing"], "false_positive", "{same}");
    assert_eq!(store.triages().await.unwrap().len(), 1);

    let show = doppel(&db).args(["show", &run.to_string()]).output().unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(
        text.contains(&format!("root cause {id}: false positive: seen in <every> run")),
        "{text}"
    );
    let table = doppel(&db).arg("classes").output().unwrap();
    assert!(String::from_utf8_lossy(&table.stdout).contains("false positive: seen in"));

    let report = dir.path().join("report");
    let rep = doppel(&db).args(["report", "--out"]).arg(&report).output().unwrap();
    assert!(rep.status.success(), "{}", String::from_utf8_lossy(&rep.stderr));
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        index.contains("<title>doppel: differential testing (DBDB, FSE 2018)</title>"),
        "{index}"
    );
    let collapsed = index
        .split("<summary>Triaged false positives (1)")
        .nth(1)
        .expect("collapsed group");
    assert!(collapsed.contains(&id), "{index}");
    assert!(index.find("Candidate bugs").unwrap() < index.find("<summary>Triaged false positives").unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_programs_are_recorded_and_the_campaign_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("bad");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("broken.c"), "int main(void) { return missing; }\n").unwrap();
    std::fs::write(
        src.join("spin.c"),
        "int main(void) {\n    volatile int x = 0;\n    for (;;)\n        x++;\n}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("crash.c"),
        "int main(void) {\n    int *p = 0;\n    *p = 1;\n    return 0;\n}\n",
    )
    .unwrap();
    // Not UTF-8: Latin-1 (gcc compiles it, the program runs) and a binary
    // renamed `.c` (one subject's outcome, not an abort of the campaign);
    // an empty file keeps the linker's reason.
    std::fs::write(
        src.join("latin1.c"),
        b"/* caf\xe9 */\nint main(void) {\n    const char *s = \"caf\xe9\";\n    return s[3] == 'x';\n}\n",
    )
    .unwrap();
    std::fs::copy("/bin/true", src.join("binary.c")).unwrap();
    std::fs::write(src.join("empty.c"), "").unwrap();
    let db = dir.path().join("doppel.db");
    let out = doppel(&db)
        .args([
            "diff",
            "--runs-per-program",
            "1",
            "--action-timeout-ms",
            "2000",
            "--max-breakpoints",
            "0",
        ])
        .arg(&src)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let verdict_of = |name: &str| {
        let store = store.clone();
        let name = name.to_string();
        async move {
            for id in 1..=6 {
                if let Some(r) = store.run(id).await.unwrap()
                    && r.subject.name.ends_with(&name)
                {
                    return r.verdict;
                }
            }
            panic!("no run for {name}");
        }
    };
    match verdict_of("broken.c").await {
        doppel_core::Verdict::SubjectError { reason } => assert!(reason.contains("missing"), "{reason}"),
        v => panic!("{v:?}"),
    }
    match verdict_of("spin.c").await {
        doppel_core::Verdict::Inconclusive { reason, .. } => assert!(reason.contains("timed out"), "{reason}"),
        doppel_core::Verdict::Divergence(f) => assert_eq!(f.class.part("divergence"), Some("tool_failure")),
        v => panic!("{v:?}"),
    }
    let crash = verdict_of("crash.c").await;
    assert!(!matches!(crash, doppel_core::Verdict::SubjectError { .. }), "{crash:?}");
    let latin1 = verdict_of("latin1.c").await;
    assert!(
        !matches!(latin1, doppel_core::Verdict::SubjectError { .. }),
        "{latin1:?}"
    );
    assert!(matches!(
        verdict_of("binary.c").await,
        doppel_core::Verdict::SubjectError { .. }
    ));
    match verdict_of("empty.c").await {
        doppel_core::Verdict::SubjectError { reason } => {
            assert!(reason.contains("undefined reference to `main'"), "{reason}")
        }
        v => panic!("{v:?}"),
    }
    // Nothing of the hanging program is left running.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left = std::process::Command::new("pgrep")
        .args(["-x", "prog"])
        .output()
        .unwrap();
    let pids = String::from_utf8_lossy(&left.stdout).to_string();
    for pid in pids.split_whitespace() {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        assert!(!exe.starts_with(dir.path()), "orphan {pid} {}", exe.display());
    }
}

#[test]
fn a_missing_debugger_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = doppel(&dir.path().join("d.db"))
        .args(["diff", "--debugger-path", "lldb=/nonexistent/lldb-dap-19"])
        .arg(corpus("loops.c"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("lldb is not installed") && err.contains("apt-get install lldb-22"),
        "{err}"
    );
}

#[test]
fn backends_lists_gdb_and_lldb_with_versions() {
    let dir = tempfile::tempdir().unwrap();
    let out = doppel(&dir.path().join("d.db")).arg("backends").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("GDB/MI 3") && text.contains("DAP"), "{text}");
    assert!(text.contains("GNU gdb") && text.contains("lldb version"), "{text}");
}

/// The README's main command uses a relative store path (`doppel-out/...`),
/// so the build cache is relative too: breakpoints must still resolve.
#[tokio::test(flavor = "multi_thread")]
async fn a_relative_store_path_still_resolves_breakpoints() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("doppel")
        .unwrap()
        .current_dir(dir.path())
        .env("CI", "1")
        .env("DOPPEL_REDUCE", "false")
        .args([
            "--db",
            "out/doppel.db",
            "diff",
            "--runs-per-program",
            "2",
            "--max-breakpoints",
            "3",
        ])
        .arg(corpus("loops.c"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let store = Store::open(dir.path().join("out/doppel.db").to_str().unwrap())
        .await
        .unwrap();
    let mut resolved = 0;
    for id in 1..=2 {
        let run = store.run(id).await.unwrap().unwrap();
        resolved += run.traces[0]
            .outputs()
            .filter(|o| matches!(o, doppel_core::Output::BreakpointSet { resolved: Some(_), .. }))
            .count();
    }
    assert!(resolved > 0, "every breakpoint was left pending");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_kills_the_debuggers_and_keeps_finished_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("out/doppel.db");
    let bin = assert_cmd::cargo::cargo_bin("doppel");
    let mut child = std::process::Command::new(bin)
        .arg("--db")
        .arg(&db)
        .env("CI", "1")
        .env("DOPPEL_REDUCE", "false")
        .args(["diff", "--runs-per-program", "50", "--jobs", "2", "--quiet"])
        .arg(corpus("loops.c"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the debuggers run and a few runs are stored.
    let start = std::time::Instant::now();
    let mut debuggers = Vec::new();
    while start.elapsed() < std::time::Duration::from_secs(60) {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        debuggers = doppel_core::process::descendants(pid)
            .into_iter()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm"))
                    .is_ok_and(|c| c.trim() == "gdb" || c.trim().starts_with("lldb-dap"))
            })
            .collect();
        let stored = match Store::open(db.to_str().unwrap()).await {
            Ok(s) => s.summary(&RunFilter::default()).await.map(|s| s.runs).unwrap_or(0),
            Err(_) => 0,
        };
        if debuggers.len() >= 2 && stored >= 3 {
            break;
        }
    }
    assert!(debuggers.len() >= 2, "no debuggers seen under doppel");
    // Everything below doppel: debuggers, lldb-server, programs under test.
    let tree = doppel_core::process::descendants(pid);
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    // No grace period: the processes must be gone when doppel is.
    let alive: Vec<u32> = tree
        .iter()
        .copied()
        .filter(|p| std::path::Path::new(&format!("/proc/{p}")).exists())
        .filter(|p| {
            !std::fs::read_to_string(format!("/proc/{p}/stat"))
                .unwrap_or_default()
                .contains(") Z")
        })
        .collect();
    let described: Vec<String> = alive
        .iter()
        .map(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default())
        .collect();
    assert!(alive.is_empty(), "processes left running: {described:?}");
    let store = Store::open(db.to_str().unwrap()).await.unwrap();
    let runs = store.summary(&RunFilter::default()).await.unwrap().runs;
    assert!((3..100).contains(&runs), "{runs} runs stored");
}
