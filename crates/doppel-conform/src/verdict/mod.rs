//! Verdicts of N+1-version differential testing (JEST, ICSE 2021, §III-E):
//! each engine's run of a test judged against what the test expects
//! ([`judge`]), then the engines' verdicts voted per family ([`vote`]): a
//! failure shared by few families is an engine-bug candidate, one shared
//! by most families a specification (or engine262 transcription) candidate.
//!
//! What a test expects ([`Expected`]) comes from its test262 front matter
//! (`negative:`, `flags: [async]`) or, for a generated program without
//! assertions, from engine262's outcome (the "+1"). A failing test262
//! assertion is an uncaught `Test262Error`; which assertion failed is read
//! from the harness's message ([`assertion_kind`]).
//!
//! `panel.rs`: the engines that vote and engine262, running one test on
//! all of them.

pub mod panel;

use doppel_engines::registry::HostTraits;
use doppel_engines::{Family, Outcome};
use serde::{Deserialize, Serialize};

/// What a test expects of a conforming engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Expected {
    /// Normal completion (a test262 test without `negative:`). With
    /// `async`, the output must also hold `Test262:AsyncTestComplete` (the
    /// harness's `doneprintHandle.js`).
    Normal {
        /// Whether the test is asynchronous (`flags: [async]`).
        #[serde(default)]
        async_done: bool,
    },
    /// An uncaught exception whose constructor is named `constructor`
    /// (test262 `negative: {type}`, or engine262's exception).
    Exception {
        /// The constructor's name (`SyntaxError`, `TypeError`, `number`).
        constructor: String,
    },
}

impl Expected {
    /// A synchronous test that must complete normally.
    pub const NORMAL: Expected = Expected::Normal { async_done: false };

    /// What engine262's `outcome` says a program must do, or `None` when
    /// engine262 gave no verdict (timeout, crash, host failure, unsupported
    /// feature, an exception whose constructor it could not tell): then the
    /// program has no expectation and no engine is judged on it.
    pub fn from_spec(outcome: &Outcome) -> Option<Expected> {
        match outcome {
            Outcome::Normal => Some(Expected::NORMAL),
            Outcome::Exception {
                constructor: Some(c), ..
            } => Some(Expected::Exception { constructor: c.clone() }),
            _ => None,
        }
    }

    /// For people: `normal`, `normal (async)`, `throws TypeError`.
    pub fn label(&self) -> String {
        match self {
            Expected::Normal { async_done: false } => "normal".into(),
            Expected::Normal { async_done: true } => "normal (async)".into(),
            Expected::Exception { constructor } => format!("throws {constructor}"),
        }
    }
}

/// How an engine failed a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailKind {
    /// A test262 assertion failed (an uncaught `Test262Error`, or an async
    /// test's `Test262:AsyncTestFailure`).
    Assertion,
    /// An exception was expected and another constructor's was thrown.
    ExceptionMismatch,
    /// The test was to complete normally and threw.
    UnexpectedException,
    /// The test was to throw and completed normally.
    MissingException,
    /// The engine did not finish within the timeout (engine262 did).
    Timeout,
    /// The engine died on a signal.
    Crash,
    /// An assertion doppel injected (JEST §III-D: the final state engine262
    /// computed) failed: the engine computed another value at that point.
    Injected,
    /// A transpiler refused a program engine262 accepts (issue 15 part 7c).
    TranspileError,
}

impl FailKind {
    /// Stable name (`assertion`, `exception_mismatch`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FailKind::Assertion => "assertion",
            FailKind::ExceptionMismatch => "exception_mismatch",
            FailKind::UnexpectedException => "unexpected_exception",
            FailKind::MissingException => "missing_exception",
            FailKind::Timeout => "timeout",
            FailKind::Crash => "crash",
            FailKind::Injected => "injected",
            FailKind::TranspileError => "transpile_error",
        }
    }
}

/// One engine's failure of one test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// How it failed.
    pub kind: FailKind,
    /// For [`FailKind::Assertion`]: which assertion ([`assertion_kind`]:
    /// `sameValue`, `compareArray`, `verifyProperty`, ...); for
    /// [`FailKind::Injected`] the assertion's kind (`value`, `key-order`); for an exception
    /// the constructor thrown; for a crash the signal.
    pub what: String,
    /// What happened, for people (the message).
    pub detail: String,
    /// For [`FailKind::Injected`]: the point the failed assertion checks,
    /// `#3 value x` (its index, kind and subject expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl Failure {
    /// The failure as one group-key word: `assert.sameValue`,
    /// `unexpected_exception:TypeError`, `crash:11`, `timeout`.
    pub fn key(&self) -> String {
        match self.kind {
            FailKind::Assertion => format!("assert.{}", self.what),
            FailKind::Injected => format!("injected.{}", self.what),
            FailKind::TranspileError if self.what == "crashed" => "transpile_error:crashed".to_string(),
            FailKind::Timeout | FailKind::MissingException | FailKind::TranspileError => self.kind.name().to_string(),
            _ => format!("{}:{}", self.kind.name(), self.what),
        }
    }
}

/// One engine's verdict on one test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum EngineVerdict {
    /// The engine did what the test expects.
    Pass,
    /// The engine failed the test.
    Fail(Failure),
    /// The test needs features the engine lacks (per its probe); not run.
    Unsupported {
        /// The features it lacks.
        features: Vec<String>,
    },
    /// No verdict on the engine's semantics: its host failed (garbage
    /// output, a worker that did not start, node's stack for engine262).
    NoVerdict {
        /// Why.
        reason: String,
    },
}

impl EngineVerdict {
    /// `pass`, `fail assert.sameValue`, `unsupported`, `no verdict`.
    pub fn label(&self) -> String {
        match self {
            EngineVerdict::Pass => "pass".into(),
            EngineVerdict::Fail(f) => format!("FAIL {}", f.key()),
            EngineVerdict::Unsupported { .. } => "unsupported".into(),
            EngineVerdict::NoVerdict { .. } => "no verdict".into(),
        }
    }

    /// The failure, if any.
    pub fn failure(&self) -> Option<&Failure> {
        match self {
            EngineVerdict::Fail(f) => Some(f),
            _ => None,
        }
    }
}

/// Which test262 assertion a `Test262Error` message comes from, by the
/// wording of the harness (`harness/assert.js`, `compareArray.js`,
/// `propertyHelper.js`): `sameValue`, `notSameValue`, `throws`,
/// `compareArray`, `verifyProperty`, `assert` (plain `assert(cond)`), else
/// `other`. A custom message passed to `assert.sameValue` comes before the
/// harness's own words, so the harness words are searched anywhere.
pub fn assertion_kind(message: &str) -> &'static str {
    const KINDS: &[(&str, &str)] = &[
        (") to be true", "sameValue"),
        (") to be false", "notSameValue"),
        ("to be thrown but no exception", "throws"),
        ("but got a different error constructor", "throws"),
        ("Thrown value was not an object", "throws"),
        ("should have the same contents", "compareArray"),
        ("descriptor value should be", "verifyProperty"),
        ("descriptor should", "verifyProperty"),
        (" value should be ", "verifyProperty"),
        ("Expected obj[", "verifyProperty"),
        ("Expected true but got", "assert"),
    ];
    if let Some((_, k)) = KINDS.iter().find(|(w, _)| message.contains(w)) {
        return k;
    }
    if message.contains("Expected a ") && message.contains(" but got a ") {
        return "throws";
    }
    "other"
}

/// The marker an async test prints when it completes (harness `doneprintHandle.js`).
pub const ASYNC_COMPLETE: &str = "Test262:AsyncTestComplete";
/// The marker an async test prints when it fails, followed by `Name: message`.
pub const ASYNC_FAILURE: &str = "Test262:AsyncTestFailure:";

/// Whether a transpiler's error `message` is its own crash rather than a
/// diagnostic about the program: a Go panic (esbuild: `panic: runtime error:
/// index out of range`), a Rust panic (SWC: `panicked at`), a failed internal
/// assertion (TypeScript: `Debug Failure.`), or its own stack overflow. A
/// crash is a bug whatever the program, so it fails even a program engine262
/// rejects (key `transpile_error:crashed`).
pub fn transpiler_crashed(message: &str) -> bool {
    [
        "panic: ",
        "panicked at",
        "Debug Failure.",
        "Maximum call stack size exceeded",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// Judges one engine's `outcome` (and printed `output`) against `expected`.
///
/// A transpiler's crash ([`transpiler_crashed`]) fails every program. A
/// transpiler's refusal ([`Outcome::TranspileError`]) fails a program
/// engine262 accepts (expected to complete, or to throw anything but a
/// `SyntaxError`); for a program engine262 rejects as a `SyntaxError` it is
/// [`EngineVerdict::Unsupported`]: refusing invalid syntax is no bug.
///
/// Hosts that read the thrown constructor only from the engine's message
/// (`traits.exact_constructor == false`) may report the base `Error` for a
/// subclass or nothing for a primitive: such an answer is not a mismatch.
pub fn judge(expected: &Expected, outcome: &Outcome, output: &str, traits: HostTraits) -> EngineVerdict {
    let fail = |kind, what: &str, detail: String| {
        EngineVerdict::Fail(Failure {
            kind,
            what: what.to_string(),
            detail,
            at: None,
        })
    };
    match (outcome, expected) {
        (Outcome::Unsupported { features }, _) => EngineVerdict::Unsupported {
            features: features.clone(),
        },
        (Outcome::HostError { reason }, _) => EngineVerdict::NoVerdict { reason: reason.clone() },
        (Outcome::TranspileError { message }, _) if transpiler_crashed(message) => fail(
            FailKind::TranspileError,
            "crashed",
            format!("the transpiler crashed (an internal error, not a diagnostic): {message}"),
        ),
        (Outcome::TranspileError { message }, Expected::Exception { constructor }) if constructor == "SyntaxError" => {
            EngineVerdict::Unsupported {
                features: vec![format!(
                    "transpile error on a program engine262 rejects: {}",
                    message.lines().next().unwrap_or_default()
                )],
            }
        }
        (Outcome::TranspileError { message }, _) => fail(
            FailKind::TranspileError,
            "refused",
            format!("the transpiler refused a program engine262 accepts: {message}"),
        ),
        (Outcome::HostStackOverflow, _) => EngineVerdict::NoVerdict {
            reason: "the host ran out of native stack".into(),
        },
        (Outcome::Timeout, _) => fail(FailKind::Timeout, "timeout", "did not finish within the timeout".into()),
        (Outcome::Crash { signal }, _) => fail(
            FailKind::Crash,
            &signal.to_string(),
            format!("the engine died on signal {signal}"),
        ),
        (Outcome::Normal, Expected::Normal { async_done: false }) => EngineVerdict::Pass,
        (Outcome::Normal, Expected::Normal { async_done: true }) => {
            if let Some(line) = output.lines().find_map(|l| l.trim().strip_prefix(ASYNC_FAILURE)) {
                fail(FailKind::Assertion, assertion_kind(line), line.to_string())
            } else if output.lines().any(|l| l.trim() == ASYNC_COMPLETE) {
                EngineVerdict::Pass
            } else {
                fail(
                    FailKind::Assertion,
                    "asyncDone",
                    "the async test never called $DONE (no Test262:AsyncTestComplete printed)".into(),
                )
            }
        }
        (Outcome::Normal, Expected::Exception { constructor }) => fail(
            FailKind::MissingException,
            constructor,
            format!("completed normally; expected {constructor}"),
        ),
        (Outcome::Exception { constructor, message }, Expected::Normal { .. }) => {
            let msg = message.clone().unwrap_or_default();
            match constructor.as_deref() {
                Some("Test262Error") => match crate::test262::failed_assertion_at(&msg) {
                    Some((index, kind, subject)) if !traits.conformant_global && on_global(kind, &subject) => {
                        EngineVerdict::NoVerdict {
                            reason: format!(
                                "the host's global object does not follow the spec for declarations \
                                 (node vm context): injected assertion #{index} {kind} {subject} is not observable there"
                            ),
                        }
                    }
                    Some((index, kind, subject)) if only_time_zone_names_differ(&msg) => EngineVerdict::NoVerdict {
                        reason: format!(
                            "injected assertion #{index} {kind} {subject} compares date strings that differ only in \
                             the implementation-defined time zone name (ECMA-262 21.4.4.41.3 TimeZoneString)"
                        ),
                    },
                    Some((index, kind, subject)) if only_list_separators_differ(&msg) => EngineVerdict::NoVerdict {
                        reason: format!(
                            "injected assertion #{index} {kind} {subject} compares strings that differ only in \
                             the implementation-defined list separator (ECMA-262 23.1.3.32 Array.prototype.toLocaleString)"
                        ),
                    },
                    Some((index, kind, subject))
                        if traits.dollar_removed
                            && on_global(kind, &subject)
                            && (subject == "$"
                                || (kind == crate::inject::AssertionKind::KeyOrder && lists_dollar(&msg))) =>
                    {
                        EngineVerdict::NoVerdict {
                            reason: format!(
                                "the host removed its own global `$` before the program and a declared `$` \
                                 is not enumerated there (JSC's shell): injected assertion #{index} {kind} $ is not observable"
                            ),
                        }
                    }
                    Some((index, kind, subject)) => {
                        let at = format!("#{index} {kind} {subject}");
                        EngineVerdict::Fail(Failure {
                            kind: FailKind::Injected,
                            what: kind.label().to_string(),
                            detail: format!("assertion failed at {at}: {msg}"),
                            at: Some(at),
                        })
                    }
                    None => fail(FailKind::Assertion, assertion_kind(&msg), msg),
                },
                c => {
                    let c = c.unwrap_or("?");
                    fail(FailKind::UnexpectedException, c, format!("threw {c}: {msg}"))
                }
            }
        }
        (Outcome::Exception { constructor, message }, Expected::Exception { constructor: want }) => {
            match constructor.as_deref() {
                Some(c) if c == want => EngineVerdict::Pass,
                None if !traits.exact_constructor => EngineVerdict::Pass,
                Some("Error") if !traits.exact_constructor => EngineVerdict::Pass,
                c => {
                    let c = c.unwrap_or("?");
                    fail(
                        FailKind::ExceptionMismatch,
                        c,
                        format!("threw {c}: {}; expected {want}", message.as_deref().unwrap_or_default()),
                    )
                }
            }
        }
    }
}

/// Whether a failed `assert.sameValue` message compares two strings that
/// differ only in the time zone names after their `GMT+hhmm` offsets:
/// ECMA-262 21.4.4.41.3 TimeZoneString leaves tzName to the implementation
/// (empty, as engine262 has it, or ` (name)`, as V8, SpiderMonkey and JSC
/// print ` (Coordinated Universal Time)`).
pub fn only_time_zone_names_differ(message: &str) -> bool {
    same_value_operands(message).is_some_and(|(actual, expected)| {
        actual != expected && without_time_zone_names(actual) == without_time_zone_names(expected)
    })
}

/// The (actual, expected) texts of a failed `assert.sameValue` message.
fn same_value_operands(message: &str) -> Option<(&str, &str)> {
    let (_, rest) = message.split_once("Expected SameValue(«")?;
    let (actual, rest) = rest.split_once("», «")?;
    let (expected, _) = rest.split_once("») to be true")?;
    Some((actual, expected))
}

/// Whether a failed `assert.sameValue` message compares two strings that
/// differ only in their list separators (`"a, b"` against `"a,b"`):
/// Array.prototype.toLocaleString and %TypedArray%.prototype.toLocaleString
/// join with "the implementation-defined list-separator String appropriate
/// for the host environment's current locale" (ECMA-262 23.1.3.32, 23.2.3.31);
/// engine262 uses `,`, Boa and mujs `, `.
pub fn only_list_separators_differ(message: &str) -> bool {
    same_value_operands(message).is_some_and(|(actual, expected)| {
        actual != expected && actual.replace(", ", ",") == expected.replace(", ", ",")
    })
}

/// Whether a failed `assert.compareArray` message lists the key `$`.
fn lists_dollar(message: &str) -> bool {
    message.contains("[$,") || message.contains(", $]") || message.contains(", $,") || message.contains("[$]")
}

/// `s` with every ` (...)` right after a `GMT+hhmm` / `GMT-hhmm` offset removed.
fn without_time_zone_names(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("GMT") {
        let (head, tail) = rest.split_at(i);
        out.push_str(head);
        let offset_len = 3 + 5;
        let is_offset = tail.len() >= offset_len
            && matches!(tail.as_bytes()[3], b'+' | b'-')
            && tail.as_bytes()[4..offset_len].iter().all(u8::is_ascii_digit);
        if !is_offset {
            out.push_str("GMT");
            rest = &tail[3..];
            continue;
        }
        out.push_str(&tail[..offset_len]);
        rest = &tail[offset_len..];
        if let Some(name) = rest.strip_prefix(" (")
            && let Some(close) = name.find(')')
        {
            rest = &name[close + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// Whether an injected assertion of `kind` on `subject` is about the global
/// object's own properties (descriptors and key order of a global binding,
/// or of `this` at a Script's top level), which a host without a conformant
/// global object ([`HostTraits::conformant_global`]) does not show as the spec says.
fn on_global(kind: crate::inject::AssertionKind, subject: &str) -> bool {
    use crate::inject::AssertionKind as K;
    matches!(kind, K::Descriptor | K::KeyOrder)
        && (subject == "this"
            || subject.starts_with("this[")
            || subject.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$'))
}

/// One engine build's result on one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineResult {
    /// Registry name (`jsc`).
    pub engine: String,
    /// The family it votes with.
    pub family: Family,
    /// Its version.
    pub version: String,
    /// How the run ended.
    pub outcome: Outcome,
    /// Printed output (capped by the run options).
    pub output: String,
    /// Wall-clock milliseconds.
    pub millis: u64,
    /// The verdict against the test's expectation.
    pub verdict: EngineVerdict,
    /// Whether the engine's first run timed out and this is a second run
    /// (a fresh worker or process), which confirms or replaces the timeout: a
    /// `timeout` verdict always held twice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timeout_retried: bool,
    /// Whether the engine is ES5-level (its feature probe finds ES2015
    /// incomplete, `FeatureSet::level` is `None`). It votes, but [`vote`]
    /// does not let it make a test a specification candidate: such engines
    /// fail ES2015 semantics of ES5 syntax (completion values, `with` and
    /// `@@unscopables`) that no feature tag names, so on a test262 sample
    /// five of them plus one modern family made "most families" (11 false
    /// specification candidates, docs/results/conformance.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub legacy: bool,
}

/// How a family voted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "vote", rename_all = "snake_case")]
pub enum FamilyVerdict {
    /// Every build that gave a verdict passed.
    Pass,
    /// Every build that gave a verdict failed; the first build's failure.
    Fail(Failure),
    /// Its builds disagree (one passes, another fails): reported, and
    /// counted with the failing families as an engine-bug candidate of the
    /// failing builds (a bug fixed or introduced between versions).
    Split {
        /// The builds that failed.
        failing: Vec<String>,
        /// The first failing build's failure.
        failure: Failure,
    },
    /// No build gave a verdict (unsupported feature, host failure): the
    /// family does not take part.
    Abstain,
}

/// One family's vote on one test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyVote {
    /// The family.
    pub family: Family,
    /// Its builds that ran the test.
    pub engines: Vec<String>,
    /// The vote.
    pub verdict: FamilyVerdict,
}

/// What the votes say about a test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "candidate", rename_all = "snake_case")]
pub enum Candidate {
    /// Every taking-part family passed.
    Agree,
    /// Few families failed (at most half of those taking part): bugs of
    /// these engines.
    EngineBug {
        /// The failing (or split) families.
        families: Vec<Family>,
    },
    /// Most families failed (more than half of those taking part, counting
    /// only modern families when any takes part, see [`EngineResult::legacy`]):
    /// the test, that is engine262's reading of the specification, or the
    /// specification itself is suspect (JEST §III-E).
    SpecBug {
        /// The failing families.
        families: Vec<Family>,
    },
    /// engine262 itself failed a test whose expectation is given (a
    /// test262 test), while most families passed: an engine262 bug.
    Engine262Bug,
    /// Every engine family taking part agrees and the untranspiled V8 host
    /// ([`V8_BASELINE`]) passes, but these transpilers' output (run on the
    /// same V8) fails: transpiler-bug candidates (issue 15 part 7c, JEST-FS).
    TranspilerBug {
        /// The failing (or split) transpiler families.
        families: Vec<Family>,
    },
    /// No family took part (every engine lacked a feature or failed to
    /// run), or engine262 gave no expectation.
    NoQuorum {
        /// Why.
        reason: String,
    },
}

impl Candidate {
    /// Stable name: `agree`, `engine_bug`, `spec_bug`, `engine262_bug`, `transpiler_bug`, `no_quorum`.
    pub fn name(&self) -> &'static str {
        match self {
            Candidate::Agree => "agree",
            Candidate::EngineBug { .. } => "engine_bug",
            Candidate::SpecBug { .. } => "spec_bug",
            Candidate::Engine262Bug => "engine262_bug",
            Candidate::TranspilerBug { .. } => "transpiler_bug",
            Candidate::NoQuorum { .. } => "no_quorum",
        }
    }

    /// Whether this is a finding (an engine, spec or engine262 bug candidate).
    pub fn is_finding(&self) -> bool {
        matches!(
            self,
            Candidate::EngineBug { .. }
                | Candidate::SpecBug { .. }
                | Candidate::Engine262Bug
                | Candidate::TranspilerBug { .. }
        )
    }
}

/// The families' votes on one test and the conclusion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote {
    /// One entry per family with an engine in the panel, in [`Family`] order.
    pub families: Vec<FamilyVote>,
    /// How many engine families took part (did not abstain); transpilers not counted.
    pub taking_part: usize,
    /// The transpilers' votes ([`Family::is_transpiler`]), one per family,
    /// kept apart from [`Vote::families`] so that they never dilute the engine vote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transpilers: Vec<FamilyVote>,
    /// The conclusion.
    pub candidate: Candidate,
    /// With an [`Candidate::EngineBug`] conclusion: the transpiler families
    /// whose output fails on V8 while the untranspiled [`V8_BASELINE`] and
    /// engine262 pass, transpiler-bug candidates beside the engine bug (a
    /// transpiler runs its output on V8 alone, so another engine failing the
    /// test says nothing about it). Empty otherwise; with an agreeing engine
    /// vote they are the conclusion itself ([`Candidate::TranspilerBug`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_transpiler_bugs: Vec<Family>,
}

impl Vote {
    /// The engine families that voted fail or split.
    pub fn failing(&self) -> impl Iterator<Item = &FamilyVote> {
        self.families
            .iter()
            .filter(|f| matches!(f.verdict, FamilyVerdict::Fail(_) | FamilyVerdict::Split { .. }))
    }

    /// The transpiler families that voted fail or split.
    pub fn failing_transpilers(&self) -> impl Iterator<Item = &FamilyVote> {
        self.transpilers
            .iter()
            .filter(|f| matches!(f.verdict, FamilyVerdict::Fail(_) | FamilyVerdict::Split { .. }))
    }

    /// One line: `engine bug candidate: jsc (1 of 6 families failed)`.
    pub fn summary(&self) -> String {
        let names = |fs: &[Family]| fs.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(", ");
        match &self.candidate {
            Candidate::Agree => format!("all {} families taking part agree", self.taking_part),
            Candidate::EngineBug { families } if !self.also_transpiler_bugs.is_empty() => format!(
                "engine bug candidate: {} ({} of {} families failed); transpiler bug candidate: {} (untranspiled V8 agrees with engine262)",
                names(families),
                families.len(),
                self.taking_part,
                names(&self.also_transpiler_bugs)
            ),
            Candidate::EngineBug { families } => format!(
                "engine bug candidate: {} ({} of {} families failed)",
                names(families),
                families.len(),
                self.taking_part
            ),
            Candidate::SpecBug { families } => format!(
                "specification (or engine262) bug candidate: {} of {} families failed ({})",
                families.len(),
                self.taking_part,
                names(families)
            ),
            Candidate::Engine262Bug => format!(
                "engine262 bug candidate: engine262 failed, most of {} families passed",
                self.taking_part
            ),
            Candidate::TranspilerBug { families } => format!(
                "transpiler bug candidate: {} (the engines and untranspiled V8 agree with engine262)",
                names(families)
            ),
            Candidate::NoQuorum { reason } => format!("no vote: {reason}"),
        }
    }
}

/// The untranspiled V8 host the transpilers' output is compared with: the
/// same node and V8 the transpiler workers run their output in.
pub const V8_BASELINE: &str = "v8-node";

/// Votes per family (builds of one family vote as one, notes §5.10) over
/// `results` (the N engines and any transpilers, never engine262), given
/// engine262's own verdict `spec` (`None` when the expectation came from
/// engine262, which then passes by definition). Transpilers vote apart
/// ([`Vote::transpilers`]); when the engines agree and [`V8_BASELINE`]
/// passes, a failing transpiler makes the test a [`Candidate::TranspilerBug`].
pub fn vote(results: &[EngineResult], spec: Option<&EngineVerdict>) -> Vote {
    let (transpiled, engines): (Vec<EngineResult>, Vec<EngineResult>) =
        results.iter().cloned().partition(|r| r.family.is_transpiler());
    let families = family_votes(&engines);
    let transpilers = family_votes(&transpiled);
    let taking_part = families.iter().filter(|f| f.verdict != FamilyVerdict::Abstain).count();
    let failed: Vec<Family> = families
        .iter()
        .filter(|f| matches!(f.verdict, FamilyVerdict::Fail(_)))
        .map(|f| f.family)
        .collect();
    let split: Vec<Family> = families
        .iter()
        .filter(|f| matches!(f.verdict, FamilyVerdict::Split { .. }))
        .map(|f| f.family)
        .collect();
    let spec_failed = spec.is_some_and(|v| v.failure().is_some());
    let v8_agrees = engines
        .iter()
        .any(|r| r.engine == V8_BASELINE && r.verdict == EngineVerdict::Pass);
    let bad_transpilers: Vec<Family> = if v8_agrees && !spec_failed {
        transpilers
            .iter()
            .filter(|f| matches!(f.verdict, FamilyVerdict::Fail(_) | FamilyVerdict::Split { .. }))
            .map(|f| f.family)
            .collect()
    } else {
        Vec::new()
    };
    // "Most families" counts the modern families (ES2015 and later) when
    // any takes part: ES5-level ones fail what they never implemented.
    let legacy: Vec<Family> = engines.iter().filter(|r| r.legacy).map(|r| r.family).collect();
    let modern = |f: &&FamilyVote| !legacy.contains(&f.family);
    let modern_taking_part = families
        .iter()
        .filter(modern)
        .filter(|f| f.verdict != FamilyVerdict::Abstain)
        .count();
    let modern_failed = families
        .iter()
        .filter(modern)
        .filter(|f| matches!(f.verdict, FamilyVerdict::Fail(_)))
        .count();
    let most_failed = if modern_taking_part > 0 {
        modern_failed * 2 > modern_taking_part
    } else {
        failed.len() * 2 > taking_part
    };
    let candidate = if taking_part == 0 {
        Candidate::NoQuorum {
            reason: "no engine family gave a verdict (unsupported features or host failures)".into(),
        }
    } else if most_failed {
        Candidate::SpecBug { families: failed }
    } else if spec_failed {
        Candidate::Engine262Bug
    } else if failed.is_empty() && split.is_empty() {
        if bad_transpilers.is_empty() {
            Candidate::Agree
        } else {
            Candidate::TranspilerBug {
                families: bad_transpilers.clone(),
            }
        }
    } else {
        let mut fs = failed;
        fs.extend(split);
        fs.sort();
        Candidate::EngineBug { families: fs }
    };
    let also_transpiler_bugs = match candidate {
        Candidate::EngineBug { .. } => bad_transpilers,
        _ => Vec::new(),
    };
    Vote {
        families,
        taking_part,
        transpilers,
        candidate,
        also_transpiler_bugs,
    }
}

/// One vote per family among `results`, in [`Family`] order.
fn family_votes(results: &[EngineResult]) -> Vec<FamilyVote> {
    let mut families: Vec<FamilyVote> = Vec::new();
    let mut order: Vec<Family> = results.iter().map(|r| r.family).collect();
    order.sort();
    order.dedup();
    for family in order {
        let builds: Vec<&EngineResult> = results.iter().filter(|r| r.family == family).collect();
        let judged: Vec<&EngineResult> = builds
            .iter()
            .copied()
            .filter(|r| matches!(r.verdict, EngineVerdict::Pass | EngineVerdict::Fail(_)))
            .collect();
        let failing: Vec<&EngineResult> = judged
            .iter()
            .copied()
            .filter(|r| r.verdict.failure().is_some())
            .collect();
        let verdict = if judged.is_empty() {
            FamilyVerdict::Abstain
        } else if failing.is_empty() {
            FamilyVerdict::Pass
        } else {
            let failure = failing[0]
                .verdict
                .failure()
                .cloned()
                .expect("failing build has a failure");
            if failing.len() == judged.len() {
                FamilyVerdict::Fail(failure)
            } else {
                FamilyVerdict::Split {
                    failing: failing.iter().map(|r| r.engine.clone()).collect(),
                    failure,
                }
            }
        };
        families.push(FamilyVote {
            family,
            engines: builds.iter().map(|r| r.engine.clone()).collect(),
            verdict,
        });
    }
    families
}

#[cfg(test)]
mod tests;
