//! test262-format files as [`ConformTest`]s, the way a test262 host runs
//! them (test262's INTERPRETING.md): `harness/assert.js`, `sta.js` and the
//! front matter's `includes` before the test (none with `raw`),
//! `doneprintHandle.js` for `async` tests (they pass on
//! `Test262:AsyncTestComplete`), a `"use strict";` directive first for
//! `onlyStrict`, and `negative:` as the exception expected. Each test runs
//! once (sloppy unless `onlyStrict`), not in both modes.
//!
//! A file without front matter is a plain program: what engine262 does is
//! its expectation. Tests a classic-script host cannot run (`module`,
//! `CanBlockIs*`, `$262`, a missing harness file) are [`Skip`]s with their
//! reason, counted by the caller, never silently dropped.

use crate::verdict::Expected;
use crate::verdict::panel::ConformTest;
use doppel_engines::Script;
use doppel_lang::js::{Test262Meta, find_test262_harness};
use std::path::{Path, PathBuf};

/// Why a file is not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct Skip {
    /// The file.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// Every `.js` file under `paths` (files as given, directories walked in
/// sorted order; test262's `_FIXTURE` files left out), with the root each
/// test's name is relative to.
pub fn discover(paths: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(PathBuf, PathBuf)>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|e| e == "js") && !p.to_string_lossy().contains("_FIXTURE") {
                out.push((p, root.to_path_buf()));
            }
        }
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, p, &mut out);
        } else {
            out.push((p.clone(), p.parent().map(Path::to_path_buf).unwrap_or_default()));
        }
    }
    out
}

/// The name of `path` relative to `root` (the path itself outside it).
pub fn name_of(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let s = rel.to_string_lossy().into_owned();
    if s.is_empty() {
        path.file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        s
    }
}

/// Reads `path` as a test named `name`; `harness`: the test262 `harness/`
/// directory (default: the nearest one above the file).
///
/// Errors: a [`Skip`] saying why the file cannot run (unreadable, not
/// UTF-8, a module, uses `$262`, a harness file missing, ...).
pub fn load(path: &Path, name: &str, harness: Option<&Path>) -> Result<ConformTest, Skip> {
    let skip = |reason: String| Skip {
        path: path.display().to_string(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|e| skip(format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| skip("not UTF-8 text".into()))?;
    let Some(meta) = Test262Meta::parse(&text) else {
        return Ok(ConformTest {
            name: name.to_string(),
            script: Script::new(text.clone()),
            text,
            expected: None,
        });
    };
    from_test262(&text, &meta, name, harness, path).map_err(skip)
}

/// A test262 test from its text and parsed front matter.
fn from_test262(
    text: &str,
    meta: &Test262Meta,
    name: &str,
    harness: Option<&Path>,
    path: &Path,
) -> Result<ConformTest, String> {
    for flag in ["module", "CanBlockIsTrue", "CanBlockIsFalse"] {
        if meta.has_flag(flag) {
            return Err(format!(
                "flag {flag}: not runnable as a classic script in a fresh realm"
            ));
        }
    }
    if text.contains("$262") {
        return Err("uses $262, the test262 host object, which not every engine's host provides".into());
    }
    let expected = match &meta.negative {
        Some(n) if n.phase == "resolution" => return Err("negative in the resolution phase (modules)".into()),
        Some(n) => Expected::Exception {
            constructor: n.error_type.clone(),
        },
        None => Expected::Normal {
            async_done: meta.has_flag("async"),
        },
    };
    let mut source = String::new();
    if meta.has_flag("onlyStrict") {
        source.push_str("\"use strict\";\n");
    }
    if !meta.has_flag("raw") {
        let dir = match harness {
            Some(h) => h.to_path_buf(),
            None => find_test262_harness(path)
                .ok_or("no test262 harness directory (harness/assert.js) above the test; pass --harness")?,
        };
        let mut files: Vec<String> = vec!["assert.js".into(), "sta.js".into()];
        if meta.has_flag("async") {
            files.push("doneprintHandle.js".into());
        }
        files.extend(meta.includes.iter().cloned());
        for f in files {
            let h = std::fs::read_to_string(dir.join(&f))
                .map_err(|e| format!("harness file {f} missing from {}: {e}", dir.display()))?;
            source.push_str(&h);
            source.push('\n');
        }
    }
    source.push_str(text);
    Ok(ConformTest {
        name: name.to_string(),
        text: text.to_string(),
        script: Script {
            source,
            features: gated_features(&meta.features, text),
        },
        expected: Some(expected),
    })
}

/// The features a test is gated by: its `features:` front matter plus the
/// tags its syntax uses ([`crate::test262::features::of_program`]). test262
/// leaves ES2015 syntax (`let`, classes, arrows) untagged, so without the
/// syntax's tags an ES5-level engine (Duktape, njs, mujs, Rhino) would run
/// such a test, fail it and vote, where it must abstain.
pub fn gated_features(front_matter: &[String], text: &str) -> Vec<String> {
    let mut f: Vec<String> = front_matter.to_vec();
    f.extend(crate::test262::features::of_program(text));
    f.sort();
    f.dedup();
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_es2015_syntax_gates_the_test() {
        // test262 tags no ES2015 syntax: the syntax's own tags join the front matter's.
        let f = gated_features(&["Symbol".into()], "/*---\n---*/\nlet x = () => 1; class C {}");
        assert_eq!(f, ["Symbol", "arrow-function", "class", "let"]);
        assert!(gated_features(&[], "var x = 1; function f() { return x; }").is_empty());
    }

    #[test]
    fn front_matter_decides_expectation_harness_and_mode() {
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path().join("harness");
        std::fs::create_dir_all(&h).unwrap();
        for f in ["assert.js", "sta.js", "doneprintHandle.js", "compareArray.js"] {
            std::fs::write(h.join(f), format!("/* {f} */")).unwrap();
        }
        let t = dir.path().join("test");
        std::fs::create_dir_all(&t).unwrap();
        let write = |n: &str, s: &str| {
            std::fs::write(t.join(n), s).unwrap();
            t.join(n)
        };
        let p = write(
            "a.js",
            "/*---\nincludes: [compareArray.js]\nflags: [onlyStrict]\nfeatures: [Symbol]\n---*/\nx;",
        );
        let c = load(&p, "a.js", None).unwrap();
        assert!(c.script.source.starts_with("\"use strict\";\n/* assert.js */"));
        assert!(c.script.source.contains("/* compareArray.js */") && c.script.source.ends_with("x;"));
        assert_eq!(c.script.features, ["Symbol"]);
        assert_eq!(c.expected, Some(Expected::NORMAL));
        let p = write(
            "n.js",
            "/*---\nnegative:\n  phase: parse\n  type: SyntaxError\nflags: [raw]\n---*/\nvar;",
        );
        let c = load(&p, "n.js", None).unwrap();
        assert_eq!(
            c.expected,
            Some(Expected::Exception {
                constructor: "SyntaxError".into()
            })
        );
        assert!(c.script.source.starts_with("/*---"), "raw: no harness");
        let p = write("as.js", "/*---\nflags: [async]\n---*/\n$DONE();");
        let c = load(&p, "as.js", None).unwrap();
        assert!(c.script.source.contains("/* doneprintHandle.js */"));
        assert_eq!(c.expected, Some(Expected::Normal { async_done: true }));
        let p = write("m.js", "/*---\nflags: [module]\n---*/\n");
        assert!(load(&p, "m.js", None).unwrap_err().reason.contains("module"));
        let p = write("h.js", "/*---\nincludes: [nonesuch.js]\n---*/\n");
        assert!(load(&p, "h.js", None).unwrap_err().reason.contains("nonesuch.js"));
        let p = write("plain.js", "1 + 1;");
        assert_eq!(load(&p, "plain.js", None).unwrap().expected, None);
        let found = discover(std::slice::from_ref(&t));
        assert_eq!(found.len(), 6);
        assert_eq!(name_of(&found[0].0, &found[0].1), "a.js");
    }
}
