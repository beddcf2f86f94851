//! The wasm32-wasi build of C regression pairs (clang-16, wasi-libc), run
//! under node's WASI, against the native gcc reference build: the bundled
//! pair, the source fixes, and a program that does not build.

use doppel_core::process::Limits;
use doppel_lang::c::codeflaws::{self, outputs_match};
use doppel_lang::c::run::RunEnd;
use doppel_lang::c::wasi_node::run_wasm_node;
use doppel_lang::c::wasm::{WasmBuildCache, WasmBuildError, run_native};
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(60);

/// `../shared` next to the repository (`DOPPEL_SHARED` overrides it, for
/// worktrees that live elsewhere).
fn shared() -> PathBuf {
    std::env::var_os("DOPPEL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/regressions")
}

#[tokio::test]
async fn bundled_pair_builds_for_wasm_and_agrees_with_native() {
    let d = tempfile::tempdir().unwrap();
    let cache = WasmBuildCache::new(d.path().join("cache"));
    let pair = codeflaws::read_pair(&corpus().join("1-A-bug-10-11"), None).unwrap();
    for (prog, is_p) in [(&pair.reference, true), (&pair.modified, false)] {
        let wasm = cache.build_wasm(prog).await.unwrap();
        let native = cache.build_native(prog).await.unwrap();
        let bytes = std::fs::read(&wasm.output).unwrap();
        assert_eq!(&bytes[..4], b"\0asm");
        // DWARF names the cached source, so branch records can be mapped to lines.
        // (DW_AT_comp_dir is the cache entry, not the temporary build directory.)
        let dir = wasm.source.parent().unwrap().to_string_lossy().into_owned();
        assert!(
            bytes.windows(dir.len()).any(|w| w == dir.as_bytes()),
            "DWARF names {dir}"
        );
        assert!(!bytes.windows(5).any(|w| w == b".tmp-"));
        for t in pair.passing.iter().chain(&pair.failing) {
            let input = codeflaws::read_bytes(&t.input).unwrap();
            let expected = codeflaws::read_bytes(&t.expected).unwrap();
            let w = run_wasm_node(&wasm.output, &[], &input, T, Limits::default())
                .await
                .unwrap();
            let n = run_native(&native, &input, T, Limits::default()).await.unwrap();
            assert_eq!(
                w.end,
                RunEnd::Exited(0),
                "{}: {}",
                t.name,
                String::from_utf8_lossy(&w.stderr)
            );
            assert_eq!(n.end, RunEnd::Exited(0));
            assert_eq!(w.stdout, n.stdout, "wasm and native agree byte for byte on {}", t.name);
            let passes = outputs_match(&expected, &w.stdout);
            if t.name.starts_with("neg") && !is_p {
                assert!(!passes, "P' fails {}", t.name);
            } else {
                assert!(passes, "{} passes {}", prog.display(), t.name);
            }
        }
        // Built once: the second build is the cached entry.
        assert_eq!(cache.build_wasm(prog).await.unwrap(), wasm);
    }
}

#[tokio::test]
async fn source_fixes_make_msvc_formats_gets_and_libc_names_work() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("fixes.c");
    // `read` is a wasi-libc symbol: without the rename scanf traps in a
    // signature-mismatch stub. %I64d is MSVCRT's. gets is missing from wasi-libc.
    std::fs::write(
        &src,
        "#include <stdio.h>\nlong long v;\nchar line[100];\nvoid read() { scanf(\"%I64d\", &v); }\n\
         int main() {\n  read();\n  gets(line);\n  gets(line);\n  printf(\"%I64d [%s]\\n\", v * 3, line);\n  return 0;\n}\n",
    )
    .unwrap();
    let cache = WasmBuildCache::new(d.path().join("cache"));
    let wasm = cache.build_wasm(&src).await.unwrap();
    assert_eq!(wasm.renamed, ["read"]);
    assert!(wasm.force_included);
    let native = cache.build_native(&src).await.unwrap();
    let input = b"5000000000\nhello world\n";
    let w = run_wasm_node(&wasm.output, &[], input, T, Limits::default())
        .await
        .unwrap();
    let n = run_native(&native, input, T, Limits::default()).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&w.stdout), "15000000000 [hello world]\n");
    assert_eq!(w.stdout, n.stdout);
}

#[tokio::test]
async fn a_program_that_does_not_build_is_a_named_outcome_with_the_message() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("bad.c");
    std::fs::write(&src, "int main(void) { return undefined_name; }\n").unwrap();
    let cache = WasmBuildCache::new(d.path().join("cache"));
    match cache.build_wasm(&src).await {
        Err(WasmBuildError::CompileFailed(msg)) => assert!(msg.contains("undefined_name"), "{msg}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn two_mib_of_locals_fit_the_8_mib_stack() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("stack.c");
    // 2 MiB of locals: more than lld's default 64 KiB stack, within 8 MiB.
    std::fs::write(
        &src,
        "#include <stdio.h>\nint g = 7;\nint main(void) {\n  char big[2 << 20];\n  for (int i = 0; i < (2 << 20); i++) big[i] = (char)i;\n  printf(\"%d %d\\n\", g, big[12345]);\n  return 0;\n}\n",
    )
    .unwrap();
    let cache = WasmBuildCache::new(d.path().join("cache"));
    let wasm = cache.build_wasm(&src).await.unwrap();
    let w = run_wasm_node(&wasm.output, &[], b"", T, Limits::default())
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&w.stdout), "7 57\n");
}

/// Real Codeflaws pairs with the traps of darwin-measured.md: a user
/// `read` (59-C), `%I64d` (95-C), a gzipped program (146-B), `gets`
/// (113-A), plus a plain one (71-A). Every test's stdout must be identical
/// under wasm (node's WASI) and native gcc, and P passes / P' fails the
/// failing test under wasm.
#[tokio::test]
#[ignore = "needs ../shared"]
async fn real_codeflaws_pairs_agree_between_wasm_and_native() {
    let root = shared().join("corpus/regressions/codeflaws");
    let d = tempfile::tempdir().unwrap();
    let cache = WasmBuildCache::new(d.path().join("cache"));
    for name in [
        "59-C-bug-547951-547955",
        "95-C-bug-536958-537053",
        "146-B-bug-16622388-16622448",
        "113-A-bug-691902-691903",
        "71-A-bug-18212928-18212976",
    ] {
        let pair = codeflaws::read_pair(&root.join(name), None).unwrap();
        for prog in [&pair.reference, &pair.modified] {
            let wasm = cache.build_wasm(prog).await.unwrap();
            let native = cache.build_native(prog).await.unwrap();
            for t in pair.passing.iter().chain(&pair.failing) {
                let input = codeflaws::read_bytes(&t.input).unwrap();
                if codeflaws::is_truncated(&input) {
                    continue;
                }
                let w = run_wasm_node(&wasm.output, &[], &input, T, Limits::default())
                    .await
                    .unwrap();
                let n = run_native(&native, &input, T, Limits::default()).await.unwrap();
                assert_eq!(w.stdout, n.stdout, "{name} {} {}", prog.display(), t.name);
            }
        }
        let p = cache.build_wasm(&pair.reference).await.unwrap();
        let q = cache.build_wasm(&pair.modified).await.unwrap();
        let t = &pair.failing[0];
        let input = codeflaws::read_bytes(&t.input).unwrap();
        let expected = codeflaws::read_bytes(&t.expected).unwrap();
        let rp = run_wasm_node(&p.output, &[], &input, T, Limits::default())
            .await
            .unwrap();
        let rq = run_wasm_node(&q.output, &[], &input, T, Limits::default())
            .await
            .unwrap();
        assert!(outputs_match(&expected, &rp.stdout), "{name}: P passes {}", t.name);
        assert!(!outputs_match(&expected, &rq.stdout), "{name}: P' fails {}", t.name);
    }
}
