//! Turning corpus files into JavaScript [`Subject`]s.
//!
//! A JavaScript subject is a list of classic scripts run in one global
//! scope: the prelude scripts, the source file, the epilogue scripts (see
//! `Subject::prelude`). The source file is never modified, so the lines a
//! debugger reports are the source's own lines. Three kinds of file:
//!
//! - a plain program: prelude = the determinism prelude
//!   ([`determinism_prelude`]);
//! - a test262 test (under a directory named `test262`, or starting a
//!   `/*--- ... ---*/` frontmatter): prelude = the determinism prelude,
//!   then test262's `harness/assert.js` and `harness/sta.js`, then the
//!   frontmatter's `includes`, from the `harness/` directory of the test262
//!   checkout the test is in (none of the harness with the `raw` flag).
//!   Tests flagged `onlyStrict` get the directive `"use strict"; ` in front
//!   of their first line (`STRICT_PREFIX` (`strict.rs`); that line is a comment in
//!   every test262 file, so every line and every column of code is kept).
//!   Tests that cannot run as a classic script in node (`module`, `async`,
//!   `CanBlockIsFalse`, parse-phase `negative`, tests using the host object
//!   `$262`, and an `onlyStrict` test whose first line holds code) are
//!   refused with [`JsSubjectError::Unsupported`];
//!   The source file is copied unmodified except for that prefix.
//! - a SunSpider program (under a directory named `sunspider`; it declares
//!   `function run()` and does not call it): prelude = the determinism
//!   prelude, epilogue = a generated script calling `run();`.
//!
//! The scripts are written into a content-addressed cache, like the C build
//! cache: `<cache>/<key>/` holds a copy of the source under its own file
//! name, `prelude/<n>-<name>.js` and `epilogue/<n>-<name>.js`. The key (and
//! the subject's `hash`) is the SHA-256 of the source's file name and bytes,
//! the kind and every prelude and epilogue script's name and bytes. Entries
//! are written to a temporary directory and renamed into place.

use super::prelude::{PRELUDE_FILE_NAME, determinism_prelude};
#[cfg(test)]
use super::strict::STRICT_PREFIX;
use super::strict::strict_prefixed;
use super::syntax::{JsSyntax, count_lines};
use doppel_core::{Language, Subject};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

impl JsSubjectError {
    /// Whether the failure is the environment's (reading or writing the
    /// cache failed), not the file's: an error of the campaign, not an
    /// outcome of the subject.
    pub fn is_environment(&self) -> bool {
        matches!(self, JsSubjectError::Io { .. })
    }
}

/// File name of the generated epilogue that starts a SunSpider program.
pub const RUN_EPILOGUE_FILE_NAME: &str = "doppel-run.js";

/// Why a file cannot become a JavaScript subject.
#[derive(Debug, thiserror::Error)]
pub enum JsSubjectError {
    /// Reading the source or a harness file, or writing the cache, failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The source is not UTF-8 text.
    #[error("{path}: not UTF-8 text")]
    NotUtf8 {
        /// The file.
        path: PathBuf,
    },
    /// The source is not a valid classic script (parser and semantic
    /// checker errors, `line:column: message`, at most 20 of them).
    #[error("does not parse as a script:\n{}", errors.join("\n"))]
    Syntax {
        /// `line:column: message` per error.
        errors: Vec<String>,
    },
    /// A test262 test that cannot run as an unmodified sloppy classic script.
    #[error("unsupported test262 test: {reason}")]
    Unsupported {
        /// Which flag or feature rules it out (`flags: [module]`).
        reason: String,
    },
    /// A test262 test outside any checkout with `harness/assert.js`.
    #[error(
        "{test}: no test262 harness (a directory with harness/assert.js) above this test; \
         pass one with JsCache::with_test262_harness"
    )]
    HarnessMissing {
        /// The test file.
        test: PathBuf,
    },
    /// A harness file the test includes does not exist.
    #[error("test262 harness file {file} is missing from {dir}")]
    HarnessFileMissing {
        /// The file the test's `includes:` names.
        file: String,
        /// The harness directory searched.
        dir: PathBuf,
    },
    /// A SunSpider program without a top-level `function run()`.
    #[error("SunSpider program declares no top-level function run(), which its epilogue calls")]
    NoRunFunction,
}

/// A test262 test's frontmatter (the YAML between `/*---` and `---*/`):
/// the fields that decide how the test runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Test262Meta {
    /// Harness files to run before the test, after assert.js and sta.js.
    pub includes: Vec<String>,
    /// `onlyStrict`, `noStrict`, `raw`, `module`, `async`, `generated`, ...
    pub flags: Vec<String>,
    /// Language features the test needs (informative).
    pub features: Vec<String>,
    /// The error the test is expected to end with, if any.
    pub negative: Option<Negative>,
}

/// A test262 `negative:` entry: the test must fail with `error_type` in
/// `phase` (`parse`, `resolution` or `runtime`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Negative {
    /// `parse`, `resolution` or `runtime` (test262's INTERPRETING.md, "negative").
    pub phase: String,
    /// The constructor name of the expected error (`SyntaxError`, `TypeError`).
    pub error_type: String,
}

impl Test262Meta {
    /// Parses the frontmatter of `source`; `None` if there is none. Reads
    /// the list keys `includes`, `flags` and `features` (inline `[a, b]` or
    /// block `- a` lists) and the `negative` mapping; other keys, including
    /// block scalars such as `description: |`, are skipped.
    pub fn parse(source: &str) -> Option<Self> {
        let start = source.find("/*---")? + "/*---".len();
        let end = start + source[start..].find("---*/")?;
        let mut meta = Self::default();
        let mut key = String::new();
        for raw in source[start..end].lines() {
            let line = raw.trim_end();
            if line.trim().is_empty() {
                continue;
            }
            let indented = line.starts_with(char::is_whitespace);
            if !indented {
                let Some((k, rest)) = line.split_once(':') else {
                    key.clear();
                    continue;
                };
                key = k.trim().to_string();
                let rest = rest.trim();
                if let Some(list) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                    let items = list.split(',').map(|s| unquote(s.trim())).filter(|s| !s.is_empty());
                    if let Some(v) = meta.list_mut(&key) {
                        v.extend(items);
                    }
                }
                continue;
            }
            let item = line.trim();
            if let Some(v) = meta.list_mut(&key)
                && let Some(x) = item.strip_prefix("- ")
            {
                v.push(unquote(x.trim()));
            } else if key == "negative"
                && let Some((k, v)) = item.split_once(':')
            {
                let neg = meta.negative.get_or_insert_with(Negative::default);
                match k.trim() {
                    "phase" => neg.phase = unquote(v.trim()),
                    "type" => neg.error_type = unquote(v.trim()),
                    _ => {}
                }
            }
        }
        Some(meta)
    }

    fn list_mut(&mut self, key: &str) -> Option<&mut Vec<String>> {
        match key {
            "includes" => Some(&mut self.includes),
            "flags" => Some(&mut self.flags),
            "features" => Some(&mut self.features),
            _ => None,
        }
    }

    /// Whether the frontmatter lists `flag`.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// Why the test cannot run as a classic script, if it cannot. test262
    /// runs a test without flags in both modes; doppel runs it once,
    /// sloppy, and an `onlyStrict` test once, strict (see
    /// `strict::strict_prefixed`; the harness conventions are in
    /// shared/notes/js-conformance-prior-art.md, section 4).
    pub fn unsupported(&self) -> Option<String> {
        if self.has_flag("module") {
            return Some("flag module: the test is an ES module; subjects run as classic scripts".into());
        }
        if self.has_flag("async") {
            return Some(
                "flag async: the test reports its outcome asynchronously through $DONE and print, \
                 which a debugger run does not observe"
                    .into(),
            );
        }
        if self.has_flag("CanBlockIsFalse") {
            return Some(
                "flag CanBlockIsFalse: the test needs an agent that cannot block; node's main thread can".into(),
            );
        }
        if let Some(n) = &self.negative
            && (n.phase == "parse" || n.phase == "resolution")
        {
            return Some(format!(
                "negative test: it must fail with {} in the {} phase, so it never runs",
                n.error_type, n.phase
            ));
        }
        None
    }
}

fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '"' || c == '\'').to_string()
}

/// The kind of a corpus file, which decides its prelude and epilogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsKind {
    /// A program that runs on its own.
    Plain,
    /// A test262 test, with its frontmatter (empty if it has none).
    Test262(Test262Meta),
    /// A SunSpider program: it defines `run()`, which the epilogue calls.
    SunSpider,
}

impl JsKind {
    /// Classifies `path` with contents `source`: under a directory named
    /// `test262` or with a `/*---` frontmatter: test262; under a directory
    /// named `sunspider` (any case): SunSpider; else plain.
    pub fn classify(path: &Path, source: &str) -> Self {
        let under = |name: &str| {
            path.parent()
                .is_some_and(|p| p.components().any(|c| c.as_os_str().eq_ignore_ascii_case(name)))
        };
        match Test262Meta::parse(source) {
            Some(meta) => Self::Test262(meta),
            None if under("test262") => Self::Test262(Test262Meta::default()),
            None if under("sunspider") => Self::SunSpider,
            None => Self::Plain,
        }
    }

    /// Short name for [`Subject::build`]: `js`, `js test262`, `js sunspider`.
    fn label(&self) -> &'static str {
        match self {
            Self::Plain => "js",
            Self::Test262(_) => "js test262",
            Self::SunSpider => "js sunspider",
        }
    }
}

/// The test262 `harness/` directory for `test`: the nearest ancestor
/// directory holding `harness/assert.js`, as `<ancestor>/harness`.
pub fn find_test262_harness(test: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(test).ok()?;
    abs.ancestors()
        .skip(1)
        .map(|a| a.join("harness"))
        .find(|h| h.join("assert.js").is_file())
}

/// A directory of prepared JavaScript subjects, keyed by content.
#[derive(Debug, Clone)]
pub struct JsCache {
    dir: PathBuf,
    harness: Option<PathBuf>,
}

/// One generated or copied script: its file name and text.
struct Script {
    name: String,
    text: String,
}

impl JsCache {
    /// A cache rooted at `dir`, created here and made absolute and
    /// canonical (subjects name their scripts by absolute path, and the
    /// debuggers set breakpoints by it).
    pub fn new(dir: PathBuf) -> Self {
        let _ = std::fs::create_dir_all(&dir);
        let dir = std::fs::canonicalize(&dir)
            .or_else(|_| std::path::absolute(&dir))
            .unwrap_or(dir);
        Self { dir, harness: None }
    }

    /// Uses `harness` (a test262 `harness/` directory) for every test262
    /// test, instead of looking for one above each test.
    pub fn with_test262_harness(mut self, harness: PathBuf) -> Self {
        self.harness = Some(harness);
        self
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Prepares `source` as the subject `name`: classifies it, checks that
    /// it parses, generates its prelude and epilogue and writes all of it
    /// into the cache (or finds it there).
    ///
    /// Errors: [`JsSubjectError`]: the file cannot be read or is not UTF-8,
    /// it has syntax errors, it is a test262 test doppel cannot run
    /// unmodified (with the reason), its harness is missing, it is a
    /// SunSpider program without `run()`, or the cache cannot be written.
    pub fn prepare(&self, source: &Path, name: &str) -> Result<Subject, JsSubjectError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| JsSubjectError::Io { path, source }
        };
        let bytes = std::fs::read(source).map_err(io(source))?;
        let mut text = String::from_utf8(bytes).map_err(|_| JsSubjectError::NotUtf8 {
            path: source.to_path_buf(),
        })?;
        let kind = JsKind::classify(source, &text);
        if let JsKind::Test262(meta) = &kind {
            if let Some(reason) = meta.unsupported() {
                return Err(JsSubjectError::Unsupported { reason });
            }
            if meta.has_flag("onlyStrict") {
                text = strict_prefixed(&text).map_err(|reason| JsSubjectError::Unsupported { reason })?;
            }
            if text.contains("$262") {
                return Err(JsSubjectError::Unsupported {
                    reason: "uses $262, the test262 host object (evalScript, createRealm, ...), \
                             which the debugger runs do not provide"
                        .into(),
                });
            }
        }
        let syntax = JsSyntax::parse(&text);
        if syntax.has_errors() {
            return Err(JsSubjectError::Syntax {
                errors: syntax.errors().iter().take(20).cloned().collect(),
            });
        }

        let mut prelude = vec![Script {
            name: PRELUDE_FILE_NAME.into(),
            text: determinism_prelude(),
        }];
        let mut epilogue = Vec::new();
        match &kind {
            JsKind::Plain => {}
            JsKind::Test262(meta) if meta.has_flag("raw") => {}
            JsKind::Test262(meta) => {
                let harness = match &self.harness {
                    Some(h) => h.clone(),
                    None => find_test262_harness(source).ok_or_else(|| JsSubjectError::HarnessMissing {
                        test: source.to_path_buf(),
                    })?,
                };
                let mut files: Vec<&str> = vec!["assert.js", "sta.js"];
                for inc in &meta.includes {
                    if !files.contains(&inc.as_str()) {
                        files.push(inc);
                    }
                }
                for file in files {
                    let path = harness.join(file);
                    if !path.is_file() {
                        return Err(JsSubjectError::HarnessFileMissing {
                            file: file.to_string(),
                            dir: harness.clone(),
                        });
                    }
                    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
                    prelude.push(Script {
                        name: file.to_string(),
                        text,
                    });
                }
            }
            JsKind::SunSpider => {
                if !syntax.top_level_functions().iter().any(|f| f == "run") {
                    return Err(JsSubjectError::NoRunFunction);
                }
                epilogue.push(Script {
                    name: RUN_EPILOGUE_FILE_NAME.into(),
                    text: "run();\n".into(),
                });
            }
        }

        let file_name = source
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| "prog.js".into());
        let mut h = Sha256::new();
        for part in [file_name.as_bytes(), text.as_bytes(), kind.label().as_bytes()] {
            h.update(part);
            h.update([0]);
        }
        for (role, scripts) in [("prelude", &prelude), ("epilogue", &epilogue)] {
            for s in scripts.iter() {
                for part in [role.as_bytes(), s.name.as_bytes(), s.text.as_bytes()] {
                    h.update(part);
                    h.update([0]);
                }
            }
        }
        let key = hex::encode(h.finalize());
        let entry = self.dir.join(&key);
        let script_path = |dir: &Path, role: &str, i: usize, s: &Script| dir.join(role).join(format!("{i}-{}", s.name));
        // `js`, or e.g. `js test262: doppel-determinism.js assert.js sta.js`.
        let build = if prelude.len() == 1 && epilogue.is_empty() {
            kind.label().to_string()
        } else {
            let names: Vec<&str> = prelude.iter().chain(&epilogue).map(|s| s.name.as_str()).collect();
            format!("{}: {}", kind.label(), names.join(" "))
        };
        let subject = Subject {
            name: name.to_string(),
            language: Language::JavaScript,
            source: entry.join(&file_name),
            source_name: file_name.clone(),
            line_count: count_lines(&text),
            binary: None,
            prelude: prelude
                .iter()
                .enumerate()
                .map(|(i, s)| script_path(&entry, "prelude", i, s))
                .collect(),
            epilogue: epilogue
                .iter()
                .enumerate()
                .map(|(i, s)| script_path(&entry, "epilogue", i, s))
                .collect(),
            hash: key.clone(),
            build,
        };
        let complete = |s: &Subject| s.source.is_file() && s.prelude.iter().chain(&s.epilogue).all(|p| p.is_file());
        if complete(&subject) {
            return Ok(subject);
        }

        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let tmp = self.dir.join(format!(".tmp-{key}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let written = (|| -> Result<(), JsSubjectError> {
            for role in ["prelude", "epilogue"] {
                std::fs::create_dir_all(tmp.join(role)).map_err(io(&tmp))?;
            }
            let src = tmp.join(&file_name);
            std::fs::write(&src, &text).map_err(io(&src))?;
            for (role, scripts) in [("prelude", &prelude), ("epilogue", &epilogue)] {
                for (i, s) in scripts.iter().enumerate() {
                    let p = script_path(&tmp, role, i, s);
                    std::fs::write(&p, &s.text).map_err(io(&p))?;
                }
            }
            Ok(())
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
        // Whoever renames first wins; an existing complete entry is as good
        // as ours. An incomplete one (an interrupted older writer) is
        // replaced.
        if std::fs::rename(&tmp, &entry).is_err() {
            if !complete(&subject) {
                let _ = std::fs::remove_dir_all(&entry);
                std::fs::rename(&tmp, &entry).map_err(io(&entry))?;
            } else {
                let _ = std::fs::remove_dir_all(&tmp);
            }
        }
        Ok(subject)
    }
}

/// The JavaScript programs under `paths` (files are taken as they are if
/// they end in `.js`; directories are searched recursively), sorted and
/// deduplicated. Skipped: test262 `harness/` directories (a `harness`
/// directory holding `assert.js`; those files are preludes, not tests),
/// `node_modules`, and test262's `_FIXTURE` files (modules imported by
/// other tests).
pub fn discover_js(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out);
        } else if is_js(p) {
            out.push(p.to_path_buf());
        }
    }
    out.sort();
    out.dedup();
    out
}

fn is_js(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "js")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let skip = dir.file_name().is_some_and(|n| n == "node_modules")
        || (dir.file_name().is_some_and(|n| n == "harness") && dir.join("assert.js").is_file());
    if skip {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if is_js(&p) && !e.file_name().to_string_lossy().contains("_FIXTURE") {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::testutil::run_node;

    /// The shared JavaScript corpus: `$DOPPEL_JS_CORPUS`, else `shared/`
    /// beside the checkout, else `/work/shared/corpus/js`.
    fn corpus() -> PathBuf {
        let candidates = [
            std::env::var_os("DOPPEL_JS_CORPUS").map(PathBuf::from),
            Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/js")),
            Some(PathBuf::from("/work/shared/corpus/js")),
        ];
        candidates
            .into_iter()
            .flatten()
            .find(|p| p.join("test262/harness/assert.js").is_file())
            .expect("the shared JavaScript corpus (set DOPPEL_JS_CORPUS to its corpus/js directory)")
    }

    fn names(paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    /// Runs a subject's scripts under node, as the node backend will.
    fn run(s: &Subject) -> (Option<i32>, String, String) {
        let scripts: Vec<&PathBuf> = s.prelude.iter().chain([&s.source]).chain(&s.epilogue).collect();
        run_node(&scripts)
    }

    #[test]
    fn frontmatter_lists_flags_and_negative_entries() {
        let src = "// c\n/*---\ndescription: |\n    Provides:\n    - not an include\nincludes: [propertyHelper.js, 'compareArray.js']\nflags:\n  - noStrict\n  - raw\nfeatures: [class]\nnegative:\n  phase: runtime\n  type: TypeError\n---*/\nx;\n";
        let m = Test262Meta::parse(src).unwrap();
        assert_eq!(m.includes, ["propertyHelper.js", "compareArray.js"]);
        assert_eq!(m.flags, ["noStrict", "raw"]);
        assert_eq!(m.features, ["class"]);
        assert_eq!(
            m.negative,
            Some(Negative {
                phase: "runtime".into(),
                error_type: "TypeError".into()
            })
        );
        assert!(m.has_flag("raw") && !m.has_flag("onlyStrict"));
        assert_eq!(m.unsupported(), None, "a runtime negative test runs");
        assert!(Test262Meta::parse("var x = 1;\n").is_none());
        let parse_neg = Test262Meta::parse("/*---\nnegative:\n  phase: parse\n  type: SyntaxError\n---*/").unwrap();
        assert!(
            parse_neg
                .unsupported()
                .unwrap()
                .contains("SyntaxError in the parse phase")
        );
        assert_eq!(
            Test262Meta::parse("/*---\nflags: [onlyStrict]\n---*/")
                .unwrap()
                .unsupported(),
            None
        );
        for (flag, why) in [("module", "ES module"), ("async", "$DONE")] {
            let m = Test262Meta::parse(&format!("/*---\nflags: [{flag}]\n---*/")).unwrap();
            assert!(m.unsupported().unwrap().contains(why), "{flag}");
        }
    }

    #[test]
    fn classify_by_directory_and_frontmatter() {
        let plain = "var x = 1;\n";
        assert_eq!(
            JsKind::classify(Path::new("/c/sunspider/a.js"), plain),
            JsKind::SunSpider
        );
        assert_eq!(
            JsKind::classify(Path::new("/c/SunSpider/a.js"), plain),
            JsKind::SunSpider
        );
        assert_eq!(
            JsKind::classify(Path::new("/c/test262/test/a.js"), plain),
            JsKind::Test262(Test262Meta::default())
        );
        assert!(matches!(
            JsKind::classify(Path::new("/elsewhere/a.js"), "/*---\nflags: [raw]\n---*/\nx;"),
            JsKind::Test262(m) if m.has_flag("raw")
        ));
        assert_eq!(
            JsKind::classify(Path::new("/elsewhere/sunspider.js"), plain),
            JsKind::Plain
        );
    }

    /// A miniature test262 checkout in `dir`: `harness/` with small
    /// stand-ins for `assert.js`, `sta.js` and an include, and `test/`.
    /// Returns the `test262` root.
    fn mini_test262(dir: &Path) -> PathBuf {
        let root = dir.join("test262");
        std::fs::create_dir_all(root.join("harness")).unwrap();
        std::fs::create_dir_all(root.join("test/language")).unwrap();
        std::fs::write(
            root.join("harness/assert.js"),
            "function assert(v, m) { if (v !== true) throw new Test262Error(m); }\n\
             assert.sameValue = function (a, b, m) { if (a !== b) throw new Test262Error(m); };\n",
        )
        .unwrap();
        std::fs::write(
            root.join("harness/sta.js"),
            "function Test262Error(m) { this.message = m || ''; }\n\
             Test262Error.prototype.toString = function () { return 'Test262Error: ' + this.message; };\n",
        )
        .unwrap();
        std::fs::write(root.join("harness/twice.js"), "function twice(x) { return 2 * x; }\n").unwrap();
        root
    }

    #[test]
    fn a_miniature_test262_gets_its_harness_and_runs_under_node() {
        let d = tempfile::tempdir().unwrap();
        let root = mini_test262(d.path());
        let cache = JsCache::new(d.path().join("cache"));
        let test = root.join("test/language/plain.js");
        let text = "/*---\ndescription: x\n---*/\nvar a = 1;\nassert.sameValue(a + 1, 2, 'sum');\n";
        std::fs::write(&test, text).unwrap();
        let s = cache.prepare(&test, "plain.js").unwrap();
        assert_eq!(
            names(&s.prelude),
            ["0-doppel-determinism.js", "1-assert.js", "2-sta.js"]
        );
        assert_eq!(s.build, "js test262: doppel-determinism.js assert.js sta.js");
        assert_eq!(
            std::fs::read_to_string(&s.source).unwrap(),
            text,
            "the test is unmodified"
        );
        assert_eq!(s.line_count, count_lines(text));
        assert_eq!(
            std::fs::read_to_string(&s.prelude[1]).unwrap(),
            std::fs::read_to_string(root.join("harness/assert.js")).unwrap()
        );
        let (code, _, err) = run(&s);
        assert_eq!(code, Some(0), "{err}");

        // Includes follow the harness; a failing assertion fails under node.
        let inc = root.join("test/language/include.js");
        std::fs::write(
            &inc,
            "/*---\nincludes: [twice.js]\n---*/\nassert.sameValue(twice(2), 5, 'twice');\n",
        )
        .unwrap();
        let s = cache.prepare(&inc, "include.js").unwrap();
        assert_eq!(
            names(&s.prelude),
            ["0-doppel-determinism.js", "1-assert.js", "2-sta.js", "3-twice.js"]
        );
        let (code, _, err) = run(&s);
        assert_ne!(code, Some(0));
        assert!(err.contains("Test262Error"), "{err}");

        // Tests needing the host's $262 are refused.
        let host = root.join("test/language/g.js");
        std::fs::write(&host, "/*---\ndescription: x\n---*/\n$262.evalScript('let x;');\n").unwrap();
        match cache.prepare(&host, "g.js") {
            Err(e @ JsSubjectError::Unsupported { .. }) => assert!(e.to_string().contains("$262"), "{e}"),
            other => panic!("{other:?}"),
        }
        // A strict-only test runs strict, its lines where they were.
        let strict = root.join("test/language/s.js");
        let test = "// Copyright\n/*---\nflags: [onlyStrict]\n---*/\nvar f = function () { return this; };\nif (f() !== undefined) { throw new Error('sloppy'); }\n";
        std::fs::write(&strict, test).unwrap();
        let s = cache.prepare(&strict, "s.js").unwrap();
        let copy = std::fs::read_to_string(&s.source).unwrap();
        assert_eq!(copy, format!("\"use strict\"; {test}"));
        assert_eq!(s.line_count, count_lines(test));
        let (code, _, err) = run(&s);
        assert_eq!(code, Some(0), "strict: `this` is undefined in a plain call: {err}");
        // The same test without the flag runs sloppy (and throws).
        let sloppy = root.join("test/language/t.js");
        std::fs::write(&sloppy, test.replace("flags: [onlyStrict]", "flags: []")).unwrap();
        let (code, _, _) = run(&cache.prepare(&sloppy, "t.js").unwrap());
        assert_ne!(code, Some(0));
        // Code on line 1 would move: refused with the reason.
        let first = root.join("test/language/u.js");
        std::fs::write(&first, "var x; /*---\nflags: [onlyStrict]\n---*/\n").unwrap();
        match cache.prepare(&first, "u.js") {
            Err(e @ JsSubjectError::Unsupported { .. }) => assert!(e.to_string().contains("line 1 holds code"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    #[ignore = "needs ../shared"]
    fn test262_tests_get_the_harness_and_run_under_node() {
        let root = corpus().join("test262");
        let d = tempfile::tempdir().unwrap();
        let cache = JsCache::new(d.path().join("cache"));
        let test = root.join("test/language/types/string/S8.4_A3.js");
        let s = cache.prepare(&test, "S8.4_A3.js").unwrap();
        assert_eq!(s.language, Language::JavaScript);
        assert_eq!(s.binary, None);
        assert_eq!(
            names(&s.prelude),
            ["0-doppel-determinism.js", "1-assert.js", "2-sta.js"],
            "determinism prelude, then assert.js and sta.js"
        );
        assert!(s.epilogue.is_empty());
        assert_eq!(s.build, "js test262: doppel-determinism.js assert.js sta.js");
        assert!(s.source.is_absolute() && s.source.starts_with(cache.dir()));
        let original = std::fs::read_to_string(&test).unwrap();
        assert_eq!(
            std::fs::read_to_string(&s.source).unwrap(),
            original,
            "the test is unmodified"
        );
        assert_eq!(s.line_count, count_lines(&original));
        assert_eq!(
            std::fs::read_to_string(&s.prelude[1]).unwrap(),
            std::fs::read_to_string(root.join("harness/assert.js")).unwrap()
        );
        assert_eq!(s.hash.len(), 64);
        let (code, _, err) = run(&s);
        assert_eq!(code, Some(0), "{err}");

        // Includes follow the harness; the test runs with them.
        let with_include = root.join("test/language/expressions/array/spread-sngl-obj-ident.js");
        let s = cache.prepare(&with_include, "spread").unwrap();
        assert_eq!(
            names(&s.prelude),
            [
                "0-doppel-determinism.js",
                "1-assert.js",
                "2-sta.js",
                "3-propertyHelper.js"
            ]
        );
        let (code, _, err) = run(&s);
        assert_eq!(code, Some(0), "{err}");

        // A sloppy-only test runs as it is.
        let sloppy = root.join("test/language/types/object/S8.6.1_A1.js");
        let (code, _, err) = run(&cache.prepare(&sloppy, "sloppy").unwrap());
        assert_eq!(code, Some(0), "{err}");

        // A test needing the host's $262 object is refused with its reason.
        let host = tempfile::tempdir().unwrap();
        let t = host.path().join("test262/test/g.js");
        std::fs::create_dir_all(t.parent().unwrap()).unwrap();
        std::fs::write(&t, "/*---\ndescription: x\n---*/\n$262.evalScript('let x;');\n").unwrap();
        match cache
            .clone()
            .with_test262_harness(root.join("harness"))
            .prepare(&t, "g.js")
        {
            Err(e @ JsSubjectError::Unsupported { .. }) => assert!(e.to_string().contains("$262"), "{e}"),
            other => panic!("{other:?}"),
        }

        // A strict-only test runs strict (it passes only in strict mode).
        let strict = root.join("test/language/types/reference/8.7.2-3-s.js");
        let s = cache.prepare(&strict, "strict").unwrap();
        assert!(std::fs::read_to_string(&s.source).unwrap().starts_with(STRICT_PREFIX));
        let (code, _, err) = run(&s);
        assert_eq!(code, Some(0), "{err}");
    }

    #[test]
    #[ignore = "needs ../shared"]
    fn a_sample_of_test262_runs_to_completion_under_node() {
        let root = corpus().join("test262");
        let tests = discover_js(std::slice::from_ref(&root));
        assert!(tests.len() > 10_000, "{} tests", tests.len());
        assert!(
            !tests.iter().any(|t| t.starts_with(root.join("harness"))),
            "harness files are not tests"
        );
        let d = tempfile::tempdir().unwrap();
        let cache = JsCache::new(d.path().join("cache"));
        let step: usize = std::env::var("DOPPEL_TEST262_STEP")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(500);
        let (mut passed, mut refused, mut engine_failures) = (0, 0, Vec::new());
        // Every 500th test: a spread over the directories, in a few seconds.
        for t in tests.iter().step_by(step) {
            match cache.prepare(t, &t.display().to_string()) {
                Ok(s) => {
                    let (code, _, err) = run(&s);
                    if code == Some(0) {
                        passed += 1;
                    } else {
                        // A failed assertion is node's verdict on the test
                        // (V8 has known test262 failures); anything else
                        // (a ReferenceError for the harness, a SyntaxError)
                        // would be ours.
                        let verdict = err.lines().find(|l| l.starts_with("Test262Error"));
                        assert!(verdict.is_some(), "{}: {err}", t.display());
                        engine_failures.push(format!("{}: {}", t.display(), verdict.unwrap_or_default()));
                    }
                }
                Err(JsSubjectError::Unsupported { .. }) => refused += 1,
                Err(e) => panic!("{}: {e}", t.display()),
            }
        }
        eprintln!(
            "test262 sample: {passed} passed, {} failed in node, {refused} refused\n{}",
            engine_failures.len(),
            engine_failures.join("\n")
        );
        assert!(passed >= 20, "passed {passed}");
        assert!(
            engine_failures.len() * 20 <= passed,
            "more than 5% of the sample fails: {engine_failures:#?}"
        );
    }

    #[test]
    #[ignore = "needs ../shared"]
    fn sunspider_programs_get_a_run_epilogue_and_finish_under_node() {
        let dir = corpus().join("sunspider");
        let programs = discover_js(&[dir]);
        assert_eq!(programs.len(), 12, "{programs:?}");
        let d = tempfile::tempdir().unwrap();
        let cache = JsCache::new(d.path().join("cache"));
        for p in &programs {
            let s = cache.prepare(p, &p.display().to_string()).unwrap();
            assert_eq!(names(&s.prelude), ["0-doppel-determinism.js"]);
            assert_eq!(names(&s.epilogue), ["0-doppel-run.js"]);
            assert_eq!(std::fs::read_to_string(&s.epilogue[0]).unwrap(), "run();\n");
            assert_eq!(s.build, "js sunspider: doppel-determinism.js doppel-run.js");
            let (code, _, err) = run(&s);
            assert_eq!(code, Some(0), "{}: {err}", p.display());
        }
    }

    #[test]
    fn sunspider_style_programs_get_a_run_call_that_runs() {
        let d = tempfile::tempdir().unwrap();
        let cache = JsCache::new(d.path().join("cache"));
        let ss = d.path().join("sunspider");
        std::fs::create_dir(&ss).unwrap();
        std::fs::write(
            ss.join("prints.js"),
            "function run() {\n  console.log('ran', 6 * 7);\n}\n",
        )
        .unwrap();
        let s = cache.prepare(&ss.join("prints.js"), "prints.js").unwrap();
        assert_eq!(names(&s.prelude), ["0-doppel-determinism.js"]);
        assert_eq!(names(&s.epilogue), ["0-doppel-run.js"]);
        assert_eq!(s.build, "js sunspider: doppel-determinism.js doppel-run.js");
        let (code, out, err) = run(&s);
        assert_eq!((code, out.as_str()), (Some(0), "ran 42\n"), "{err}");
        // run() really runs: a program whose run() throws fails under node.
        std::fs::write(ss.join("throws.js"), "function run() {\n  throw new Error('ran');\n}\n").unwrap();
        let s = cache.prepare(&ss.join("throws.js"), "throws.js").unwrap();
        let (code, _, err) = run(&s);
        assert_ne!(code, Some(0));
        assert!(err.contains("ran"), "{err}");
        std::fs::write(ss.join("norun.js"), "function start() {}\n").unwrap();
        assert!(matches!(
            cache.prepare(&ss.join("norun.js"), "norun.js"),
            Err(JsSubjectError::NoRunFunction)
        ));
    }

    #[test]
    fn plain_programs_are_cached_by_content_and_syntax_errors_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let cache = JsCache::new(d.path().join("cache"));
        let src = d.path().join("hello.js");
        std::fs::write(&src, "var t = Date.now();\nconsole.log(t, Math.random());\n").unwrap();
        let s = cache.prepare(&src, "hello.js").unwrap();
        assert_eq!(s.build, "js");
        assert_eq!(s.line_count, 2);
        assert_eq!(s.source_name, "hello.js");
        assert_eq!(names(&s.prelude), ["0-doppel-determinism.js"]);
        assert_eq!(std::fs::read_to_string(&s.prelude[0]).unwrap(), determinism_prelude());
        let (code, out1, err) = run(&s);
        assert_eq!(code, Some(0), "{err}");
        assert!(out1.starts_with(&crate::js::FIXED_EPOCH_MS.to_string()), "{out1}");
        assert_eq!(run(&s).1, out1, "deterministic");
        // Same content: same entry, untouched.
        let mtime = std::fs::metadata(&s.source).unwrap().modified().unwrap();
        let again = cache.prepare(&src, "hello.js").unwrap();
        assert_eq!(again, s);
        assert_eq!(std::fs::metadata(&again.source).unwrap().modified().unwrap(), mtime);
        // A damaged entry is rewritten.
        std::fs::remove_file(&s.prelude[0]).unwrap();
        assert_eq!(cache.prepare(&src, "hello.js").unwrap(), s);
        assert!(s.prelude[0].is_file());
        // New content: new key.
        std::fs::write(&src, "var t = 2;\n").unwrap();
        assert_ne!(cache.prepare(&src, "hello.js").unwrap().hash, s.hash);

        std::fs::write(&src, "var t = ;\n").unwrap();
        match cache.prepare(&src, "hello.js") {
            Err(e @ JsSubjectError::Syntax { .. }) => {
                assert!(e.to_string().starts_with("does not parse as a script:\n1:9: "), "{e}")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            cache.prepare(&d.path().join("missing.js"), "missing.js"),
            Err(JsSubjectError::Io { .. })
        ));
    }

    #[test]
    fn test262_tests_need_a_harness() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("test262/test/a.js");
        std::fs::create_dir_all(t.parent().unwrap()).unwrap();
        std::fs::write(&t, "/*---\nincludes: [nope.js]\n---*/\nassert(true);\n").unwrap();
        let cache = JsCache::new(d.path().join("cache"));
        assert!(matches!(
            cache.prepare(&t, "a.js"),
            Err(JsSubjectError::HarnessMissing { .. })
        ));
        let harness = mini_test262(d.path()).join("harness");
        let cache = cache.with_test262_harness(harness);
        match cache.prepare(&t, "a.js") {
            Err(JsSubjectError::HarnessFileMissing { file, .. }) => assert_eq!(file, "nope.js"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn discover_finds_js_files_and_skips_harness_and_fixtures() {
        let d = tempfile::tempdir().unwrap();
        for dir in ["sub", "harness", "node_modules/m", "test"] {
            std::fs::create_dir_all(d.path().join(dir)).unwrap();
        }
        for f in [
            "b.js",
            "a.js",
            "sub/c.js",
            "notes.txt",
            "x.mjs",
            "harness/assert.js",
            "harness/sta.js",
            "node_modules/m/index.js",
            "test/imported_FIXTURE.js",
        ] {
            std::fs::write(d.path().join(f), "").unwrap();
        }
        let found = discover_js(&[d.path().to_path_buf(), d.path().join("a.js")]);
        let rel: Vec<_> = found
            .iter()
            .map(|p| p.strip_prefix(d.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(rel, ["a.js", "b.js", "sub/c.js"]);
    }
}
