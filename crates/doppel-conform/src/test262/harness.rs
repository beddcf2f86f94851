//! Running a test262-format test on an engine the way test262's
//! INTERPRETING.md says: the script is `"use strict";` (flag `onlyStrict`),
//! then harness/assert.js and harness/sta.js (harness/doneprintHandle.js for
//! flag `async`), then the `includes:` files, then the test text; flag `raw`
//! runs the test text alone. [`verdict`] reads the engine's run as pass or
//! fail, naming the failed assertion where the message carries its marker.
//!
//! The harness files are test262's own, read from a test262 checkout's
//! `harness/` directory ([`Harness::locate`]): no package registry ships
//! them (npm's test262-harness carries only fakes for its own tests).

use super::{FrontMatter, Test262Test, failed_assertion};
use crate::inject::AssertionKind;
use doppel_engines::{Outcome, RunResult, Script};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Why a test could not be turned into a script.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// No test262 checkout with `harness/assert.js` was found.
    #[error(
        "no test262 harness: set DOPPEL_TEST262_DIR to a test262 checkout (a directory with harness/assert.js); \
         looked in {0}"
    )]
    Missing(String),
    /// A harness file could not be read.
    #[error("test262 harness file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The test needs something doppel does not run (`module`).
    #[error("unsupported test262 test: {0}")]
    Unsupported(String),
}

/// A test262 checkout's `harness/` directory.
#[derive(Debug, Clone)]
pub struct Harness {
    dir: PathBuf,
}

impl Harness {
    /// The harness of the test262 checkout at `root` (`root/harness`).
    ///
    /// Errors: `root/harness/assert.js` is missing.
    pub fn at(root: impl AsRef<Path>) -> Result<Self, HarnessError> {
        let dir = root.as_ref().join("harness");
        if dir.join("assert.js").is_file() {
            Ok(Self { dir })
        } else {
            Err(HarnessError::Missing(dir.display().to_string()))
        }
    }

    /// `DOPPEL_TEST262_DIR` if set, else `$DOPPEL_SHARED/corpus/js/test262`,
    /// else `../shared/corpus/js/test262` beside the repository.
    ///
    /// Errors: none of them holds `harness/assert.js`.
    pub fn locate() -> Result<Self, HarnessError> {
        let mut tried = Vec::new();
        let candidates = [
            std::env::var_os("DOPPEL_TEST262_DIR").map(PathBuf::from),
            std::env::var_os("DOPPEL_SHARED").map(|s| PathBuf::from(s).join("corpus/js/test262")),
            Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/js/test262")),
        ];
        for root in candidates.into_iter().flatten() {
            match Self::at(&root) {
                Ok(h) => return Ok(h),
                Err(_) => tried.push(root.display().to_string()),
            }
        }
        Err(HarnessError::Missing(tried.join(", ")))
    }

    /// The `harness/` directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn read(&self, name: &str) -> Result<String, HarnessError> {
        let path = self.dir.join(name);
        std::fs::read_to_string(&path).map_err(|source| HarnessError::Read { path, source })
    }

    /// The script an engine runs for a test with front matter `meta` and full
    /// text `text`, gated by the test's features.
    ///
    /// Errors: a harness file is missing; the test is a module.
    pub fn script_for(&self, meta: &FrontMatter, text: &str) -> Result<Script, HarnessError> {
        let has = |f: &str| meta.flags.iter().any(|x| x == f);
        if has("module") {
            return Err(HarnessError::Unsupported(
                "flag module: doppel's engines run classic scripts".into(),
            ));
        }
        let mut source = String::new();
        if has("onlyStrict") {
            source.push_str("\"use strict\";\n");
        }
        if !has("raw") {
            let mut files = vec!["assert.js".to_string(), "sta.js".to_string()];
            if has("async") {
                files.push("doneprintHandle.js".into());
            }
            for inc in &meta.includes {
                if !files.contains(inc) {
                    files.push(inc.clone());
                }
            }
            for f in files {
                source.push_str(&self.read(&f)?);
                source.push('\n');
            }
        }
        source.push_str(text);
        Ok(Script {
            source,
            features: meta.features.clone(),
        })
    }

    /// The script for an emitted test.
    ///
    /// Errors: as [`Harness::script_for`].
    pub fn script(&self, test: &Test262Test) -> Result<Script, HarnessError> {
        self.script_for(&test.meta, &test.render())
    }
}

/// What the harness's assertion plumbing does when a test calls it and it
/// passes: each assertion function of assert.js, compareArray.js and
/// propertyHelper.js on trivially equal values (the latter two only when
/// included). Appended to a harness prelude when measuring the coverage
/// every test runs through the harness, which localization takes out
/// ([`crate::verdict::panel::Panel::baseline`]): the harness's own
/// definitions cover little; its calls (`assert.sameValue` reaching
/// SameValue, argument lists, `this` binding) are in every test.
pub const EXERCISE: &str = r#"
assert(true, "doppel baseline");
assert.sameValue(1, 1, "doppel baseline");
if (typeof assert.notSameValue === "function") { assert.notSameValue(1, 2, "doppel baseline"); }
if (typeof assert.throws === "function") {
  assert.throws(TypeError, function () { throw new TypeError("doppel baseline"); }, "doppel baseline");
}
if (typeof assert.compareArray === "function") { assert.compareArray([1, "a"], [1, "a"], "doppel baseline"); }
if (typeof verifyProperty === "function") {
  var doppelBaseline = {};
  Object.defineProperty(doppelBaseline, "x", { value: 1, writable: true, enumerable: true, configurable: true });
  verifyProperty(doppelBaseline, "x", { value: 1, writable: true, enumerable: true, configurable: true });
}
"#;

/// Whether `prelude` holds test262's assert.js (then [`EXERCISE`] can run after it).
pub fn has_assert(prelude: &str) -> bool {
    prelude.contains("assert.sameValue = function")
}

/// A test's verdict on one engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum TestVerdict {
    /// The engine did what the test expects.
    Pass,
    /// It did not.
    Fail {
        /// The failed assertion (index, kind), when the failure names one.
        assertion: Option<(usize, AssertionKind)>,
        /// What happened, for a human.
        reason: String,
    },
    /// No verdict: the engine lacks a feature, or its host failed.
    NotRun {
        /// Why.
        reason: String,
    },
}

impl TestVerdict {
    /// Whether this is [`TestVerdict::Pass`].
    pub fn passed(&self) -> bool {
        matches!(self, Self::Pass)
    }
}

/// The verdict of a run of the test with front matter `meta` (see [`Harness::script_for`]).
///
/// A negative test passes when the engine throws the named constructor; any
/// other test when the script completes normally. An uncaught
/// `Test262Error` whose message carries an assertion marker fails that
/// assertion; a negative test failing fails its exception assertion (index 0).
/// Timeouts and crashes are failures; an unsupported feature or a host failure
/// gives no verdict.
pub fn verdict(meta: &FrontMatter, run: &RunResult) -> TestVerdict {
    let fail = |assertion, reason: String| TestVerdict::Fail { assertion, reason };
    let exception = Some((0, AssertionKind::Exception));
    match (&run.outcome, &meta.negative) {
        (Outcome::Unsupported { features }, _) => TestVerdict::NotRun {
            reason: format!("unsupported: {}", features.join(", ")),
        },
        (Outcome::HostError { reason }, _) => TestVerdict::NotRun {
            reason: format!("host error: {reason}"),
        },
        (Outcome::HostStackOverflow, _) => TestVerdict::NotRun {
            reason: "the host ran out of stack".into(),
        },
        (Outcome::TranspileError { message }, _) => fail(None, format!("transpile error: {message}")),
        (Outcome::Timeout, _) => fail(None, "timeout".into()),
        (Outcome::Crash { signal }, _) => fail(None, format!("crash (signal {signal})")),
        (Outcome::Normal, None) => TestVerdict::Pass,
        (Outcome::Normal, Some(n)) => fail(
            exception,
            format!("expected {} to be thrown, the script completed normally", n.error_type),
        ),
        (Outcome::Exception { constructor, message }, Some(n)) => match constructor {
            Some(c) if *c == n.error_type => TestVerdict::Pass,
            Some(c) => fail(
                exception,
                format!(
                    "expected {}, got {c}: {}",
                    n.error_type,
                    message.as_deref().unwrap_or("")
                ),
            ),
            None => TestVerdict::NotRun {
                reason: "the host does not tell the thrown value's constructor".into(),
            },
        },
        (Outcome::Exception { constructor, message }, None) => {
            let message = message.as_deref().unwrap_or("");
            let assertion = failed_assertion(message).or_else(|| failed_assertion(&run.output));
            let ctor = constructor.as_deref().unwrap_or("?");
            fail(assertion, format!("uncaught {ctor}: {message}"))
        }
    }
}
