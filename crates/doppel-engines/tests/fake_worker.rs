//! The worker driver against fake workers (`sh` scripts) that misbehave:
//! garbage, floods, crashes, hangs, silent exits, wrong ids, no hello.

use doppel_engines::worker::{Worker, WorkerCommand};
use doppel_engines::{Outcome, RunOptions};
use std::time::{Duration, Instant};

const HELLO: &str = r#"printf '{"hello":"doppel-engines/1","version":"fake"}\n'; "#;

fn fake(script: &str) -> Worker {
    let mut cmd = WorkerCommand::new("/bin/sh", &["-c", &format!("{HELLO}{script}")]);
    cmd.startup = Duration::from_secs(10);
    Worker::new(cmd)
}

fn opts(ms: u64) -> RunOptions {
    RunOptions {
        timeout: Duration::from_millis(ms),
        output_cap: 1000,
    }
}

fn reason(o: &Outcome) -> &str {
    match o {
        Outcome::HostError { reason } => reason,
        other => panic!("expected a host error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_well_behaved_fake_answers_and_is_reused() {
    let mut w = fake(
        r#"while read l; do id=$(echo "$l" | sed 's/.*"id":\([0-9]*\).*/\1/'); printf '{"id":%s,"status":"normal","stdout":"hi\\n"}\n' "$id"; done"#,
    );
    for _ in 0..3 {
        let r = w.run("x", &opts(5000)).await;
        assert_eq!(r.outcome, Outcome::Normal);
        assert_eq!(r.output, "hi\n");
    }
    assert_eq!(w.starts, 1);
    assert_eq!(w.announced_version(), Some("fake"));
}

#[tokio::test]
async fn garbage_is_a_host_error_and_the_worker_is_replaced() {
    let mut w = fake("read l; echo 'this is not json'; sleep 60");
    let r = w.run("x", &opts(5000)).await;
    assert!(reason(&r.outcome).contains("garbage"), "{:?}", r.outcome);
    let r = w.run("x", &opts(5000)).await;
    assert!(reason(&r.outcome).contains("garbage"));
    assert_eq!(w.starts, 2, "a new worker after garbage");
}

#[tokio::test]
async fn a_flood_without_newline_is_cut_off() {
    let mut w = fake(
        "read l; while :; do printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; done",
    );
    let started = Instant::now();
    let r = w.run("x", &opts(20_000)).await;
    assert!(reason(&r.outcome).contains("flooded"), "{:?}", r.outcome);
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test]
async fn an_oversized_stdout_field_is_cut_and_marked() {
    let mut w = fake(
        r#"read l; printf '{"id":1,"status":"normal","stdout":"%s"}\n' "$(head -c 3000 /dev/zero | tr '\0' a)"; sleep 60"#,
    );
    let r = w.run("x", &opts(5000)).await;
    assert_eq!(r.outcome, Outcome::Normal);
    assert!(r.output_cut);
    assert!(r.output.starts_with(&"a".repeat(1000)));
    assert!(r.output.ends_with(doppel_engines::outcome::CUT_MARK));
}

#[tokio::test]
async fn a_signal_death_is_a_crash() {
    let mut w = fake("read l; kill -SEGV $$");
    let r = w.run("x", &opts(5000)).await;
    assert_eq!(r.outcome, Outcome::Crash { signal: 11 });
}

#[tokio::test]
async fn a_plain_exit_is_a_host_error_with_stderr() {
    let mut w = fake("read l; echo 'worker broke' >&2; exit 3");
    let r = w.run("x", &opts(5000)).await;
    let why = reason(&r.outcome);
    assert!(why.contains("code 3") && why.contains("worker broke"), "{why}");
}

#[tokio::test]
async fn a_silent_worker_times_out_and_is_killed() {
    let mut w = fake("read l; sleep 60");
    let started = Instant::now();
    let r = w.run("x", &opts(300)).await;
    assert_eq!(r.outcome, Outcome::Timeout);
    assert!(started.elapsed() < Duration::from_secs(10));
    let r = w.run("x", &opts(300)).await;
    assert_eq!(r.outcome, Outcome::Timeout);
    assert_eq!(w.starts, 2);
}

#[tokio::test]
async fn a_response_to_another_request_is_rejected() {
    let mut w = fake(r#"read l; printf '{"id":99,"status":"normal"}\n'; sleep 60"#);
    let r = w.run("x", &opts(5000)).await;
    assert!(reason(&r.outcome).contains("request 99"));
}

#[tokio::test]
async fn a_worker_without_hello_is_reported() {
    let mut cmd = WorkerCommand::new("/bin/sh", &["-c", "echo nonsense; sleep 60"]);
    cmd.startup = Duration::from_secs(5);
    let r = Worker::new(cmd).run("x", &opts(1000)).await;
    assert!(reason(&r.outcome).contains("bad hello"));
    let cmd = WorkerCommand::new("/nonexistent/engine", &[]);
    let r = Worker::new(cmd).run("x", &opts(1000)).await;
    assert!(reason(&r.outcome).contains("cannot start"));
}

/// The Python fork-per-script loop the PythonMonkey and Boa workers use: a
/// child's crash or hang is that script's outcome, the worker lives on.
#[tokio::test]
async fn forked_children_crash_and_hang_without_taking_the_worker_down() {
    let workers = doppel_engines::EnginesConfig::default().workers;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/forking_worker.py");
    let mut cmd = WorkerCommand::new("python3", &["-u", script, &workers.to_string_lossy()]);
    cmd.own_timeout = true;
    let mut w = Worker::new(cmd);
    let r = w.run("crash", &opts(5000)).await;
    assert_eq!(r.outcome, Outcome::Crash { signal: 11 });
    let r = w.run("hang", &opts(300)).await;
    assert_eq!(r.outcome, Outcome::Timeout);
    let r = w.run("still here", &opts(5000)).await;
    assert_eq!((r.outcome, r.output.as_str()), (Outcome::Normal, "still here\n"));
    assert_eq!(w.starts, 1, "one worker served all three");
}
