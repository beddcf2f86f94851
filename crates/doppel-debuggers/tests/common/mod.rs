//! Shared helpers of the backend integration tests: compile a C program
//! with `gcc -O0 -g` into a temporary directory and describe it as a Subject.
#![allow(dead_code)]

use doppel_core::{Language, Subject};
use std::path::Path;

/// The program every backend test debugs. Line numbers matter: see the constants.
pub const PROG: &str = r#"#include <stdio.h>
struct point { int x; int y; };
int square(int x) {
    int y = x * x;
    return y;
}
int main(void) {
    struct point p = {1, 2};
    char c = 'a';
    const char *name = "probe";
    int total = 0;
    for (int i = 0; i < 3; i++) {
        // a comment line: breakpoints here slide to line 14
        total += square(i);
    }
    printf("%s %d %d %c\n", name, total, p.x, c);
    return 3;
}
"#;
pub const COMMENT_LINE: u32 = 13;
pub const CALL_LINE: u32 = 14;
pub const SQUARE_BODY: u32 = 4;

pub const SEGV: &str =
    "#include <stdio.h>\nint main(void) {\n    int *p = 0;\n    puts(\"before\");\n    *p = 1;\n    return 0;\n}\n";
pub const LOOP: &str =
    "int main(void) {\n    volatile int x = 0;\n    for (;;) {\n        x++;\n    }\n    return 0;\n}\n";

/// Compiles `source` as `name` in `dir` and returns the subject.
pub fn compile(dir: &Path, name: &str, source: &str) -> Subject {
    let src = dir.join(name);
    std::fs::write(&src, source).unwrap();
    let bin = dir.join(name.trim_end_matches(".c"));
    let ok = std::process::Command::new("gcc")
        .args(["-O0", "-g", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .unwrap();
    assert!(ok.success(), "gcc failed on {name}");
    Subject {
        name: name.into(),
        language: Language::C,
        source: src,
        source_name: name.into(),
        line_count: source.lines().count() as u32,
        binary: Some(bin),
        prelude: Vec::new(),
        epilogue: Vec::new(),
        hash: name.into(),
        build: "gcc -O0 -g".into(),
    }
}

/// Whether a process is alive (not a zombie).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        let rest = &s[s.rfind(')').unwrap() + 2..];
        !rest.starts_with('Z')
    })
}

/// Stops (`SIGSTOP`) a process and all its descendants, as a debugger that
/// stops answering without dying; returns the stopped pids.
#[allow(dead_code)]
pub fn freeze_tree(root: u32) -> Vec<u32> {
    let mut pids = doppel_core::process::descendants(root);
    pids.push(root);
    for p in &pids {
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(*p as i32, libc::SIGSTOP) };
    }
    pids
}

/// Prints its environment and the address of a local: both must be the same
/// under every debugger.
pub const ENV: &str = "#include <stdio.h>\nextern char **environ;\nint main(void) {\n    int x = 0;\n    printf(\"&x=%p\\n\", (void *)&x);\n    for (char **e = environ; *e; e++)\n        printf(\"%s\\n\", *e);\n    return x;\n}\n";

/// The JavaScript program of the node and chromium tests. Line numbers
/// matter: see the `JS_*` constants.
pub const JS_PROG: &str = r#"function square(x) {
    let y = x * x;
    return y;
}
function main() {
    const name = "probe";
    let total = 0;
    const point = { x: 1, y: [2, 3] };
    for (let i = 0; i < 3; i++) {
        // a comment line: breakpoints here slide to line 11
        total += square(i);
    }
    console.log(name, total, point.x);
    return total;
}
main();
"#;
pub const JS_COMMENT_LINE: u32 = 10;
pub const JS_CALL_LINE: u32 = 11;
pub const JS_SQUARE_BODY: u32 = 2;
pub const JS_FOR_LINE: u32 = 9;
pub const JS_MAIN_CALL: u32 = 16;

/// Writes `source` as `name` (and the given prelude and epilogue scripts)
/// in `dir` and returns the subject.
pub fn js_subject(
    dir: &Path,
    name: &str,
    source: &str,
    prelude: &[(&str, &str)],
    epilogue: &[(&str, &str)],
) -> Subject {
    let src = dir.join(name);
    std::fs::write(&src, source).unwrap();
    let write = |files: &[(&str, &str)]| -> Vec<std::path::PathBuf> {
        files
            .iter()
            .map(|(n, text)| {
                let p = dir.join(n);
                std::fs::write(&p, text).unwrap();
                p
            })
            .collect()
    };
    Subject {
        name: name.into(),
        language: Language::JavaScript,
        source: src,
        source_name: name.into(),
        line_count: source.lines().count() as u32,
        binary: None,
        prelude: write(prelude),
        epilogue: write(epilogue),
        hash: name.into(),
        build: "none".into(),
    }
}

/// A debugger that stops answering (its whole process tree SIGSTOPped while
/// the program is paused) is a timeout within a few action timeouts, is
/// killed, and the next `load` gets a new process (`pid` reads the backend's
/// debugger pid); none of the frozen processes survives. With a timeout of
/// a few seconds in `d`'s configuration.
#[allow(dead_code)]
pub async fn frozen_debugger_times_out_and_is_replaced<D: doppel_debuggers::Debugger>(
    d: &mut D,
    pid: fn(&D) -> Option<u32>,
    timeout: std::time::Duration,
) {
    use doppel_core::{ExecAction, FailureKind, Location, Output};
    let dir = tempfile::tempdir().unwrap();
    let s = js_subject(dir.path(), "prog.js", JS_PROG, &[], &[]);
    d.load(&s).await;
    d.set_breakpoint(&Location::line("prog.js", JS_CALL_LINE)).await;
    assert!(d.start().await.paused().is_some());
    let frozen = freeze_tree(pid(d).unwrap());
    let t = std::time::Instant::now();
    let out = d.exec(ExecAction::StepIn).await;
    assert!(
        matches!(
            out,
            Output::Failed {
                kind: FailureKind::Timeout,
                ..
            }
        ),
        "{out:?}"
    );
    assert!(t.elapsed() < timeout * 3, "answered after {:?}", t.elapsed());
    d.reset().await;
    assert!(matches!(d.load(&s).await, Output::Finished { .. }));
    assert!(!frozen.contains(&pid(d).unwrap()), "a new debugger process");
    d.set_breakpoint(&Location::line("prog.js", JS_CALL_LINE)).await;
    let out = d.start().await;
    assert_eq!(out.paused().map(|st| st.location.line), Some(JS_CALL_LINE), "{out:?}");
    d.shutdown().await;
    std::thread::sleep(std::time::Duration::from_millis(300));
    let left: Vec<u32> = frozen.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "the frozen processes survive: {left:?}");
}
