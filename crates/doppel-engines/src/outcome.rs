//! What running one script gives: the [`Outcome`] and the printed output.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How one script run in a fresh realm ended.
///
/// The JSON form is internally tagged: `{"kind":"exception","constructor":"TypeError","message":"x is not a function"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The script (and its promise jobs) completed normally.
    Normal,
    /// An uncaught exception (ECMA-262 §7.4 ThrowCompletion reaching the script's top level).
    Exception {
        /// The thrown value's `constructor.name`, read inside the engine
        /// (`TypeError`, `MyErr`); for a primitive its type: `number`, `string`,
        /// `boolean`, `bigint`, `symbol`, `null` or `undefined`. `None` when the
        /// engine's host cannot tell (mini-racer and quickjs-ng for primitive
        /// throws: they give only a message).
        constructor: Option<String>,
        /// The thrown object's `message` (or the primitive as a string), if any.
        message: Option<String>,
    },
    /// The script ran past its timeout and was stopped (by the engine's own
    /// interrupt or by killing the worker).
    Timeout,
    /// The engine process (or its per-test child) died on a signal.
    Crash {
        /// The signal number (11 = SIGSEGV, 6 = SIGABRT).
        signal: i32,
    },
    /// The engine lacks a feature the script uses (per its feature probe); the
    /// script was not run.
    Unsupported {
        /// The features the script needs that the engine lacks.
        features: Vec<String>,
    },
    /// The host running the engine ran out of native stack (engine262's node
    /// process on deep recursion): a resource limit, not a verdict.
    HostStackOverflow,
    /// A transpiler (a tool under test of [`crate::Family::is_transpiler`])
    /// refused the script: it threw or reported a syntax error, so V8 never
    /// ran it. A finding only when engine262 accepts the program.
    TranspileError {
        /// The transpiler's message (at most 4,000 characters).
        message: String,
    },
    /// The host failed: the worker printed garbage or flooded its output, did
    /// not start, or exited without a signal. Never a verdict on the engine's semantics.
    HostError {
        /// What went wrong, for a human.
        reason: String,
    },
}

impl Outcome {
    /// A short label: `normal`, `exception TypeError`, `timeout`, `crash 11`, ...
    pub fn label(&self) -> String {
        match self {
            Outcome::Normal => "normal".into(),
            Outcome::Exception { constructor, .. } => {
                format!("exception {}", constructor.as_deref().unwrap_or("?"))
            }
            Outcome::Timeout => "timeout".into(),
            Outcome::Crash { signal } => format!("crash {signal}"),
            Outcome::Unsupported { features } => format!("unsupported {}", features.join(",")),
            Outcome::HostStackOverflow => "host stack overflow".into(),
            Outcome::TranspileError { message } => {
                format!("transpile error: {}", message.lines().next().unwrap_or_default())
            }
            Outcome::HostError { reason } => format!("host error: {reason}"),
        }
    }
}

/// One script run: the outcome plus what the script printed (`print`, one line per call).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunResult {
    /// How the run ended.
    pub outcome: Outcome,
    /// Printed output, at most [`RunOptions::output_cap`] bytes.
    pub output: String,
    /// Whether the output was cut at the cap (the text ends with [`CUT_MARK`]).
    pub output_cut: bool,
    /// Wall-clock time of the run, in milliseconds (including any respawn).
    pub millis: u64,
}

/// Appended to output cut at the cap.
pub const CUT_MARK: &str = "\n[doppel: output cut]";

/// Per-run limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOptions {
    /// Wall-clock limit for the script (engines with their own interrupt stop
    /// it there; the driver kills the worker a grace period later).
    pub timeout: Duration,
    /// Maximum bytes of printed output kept.
    pub output_cap: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(5),
            output_cap: 64 * 1024,
        }
    }
}

/// A script to run: its source (a classic Script, ECMA-262 §16.1) and the
/// features it uses (test262 feature names, see [`crate::features`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Script {
    /// The source text.
    pub source: String,
    /// test262 feature tags the script needs; an engine lacking one answers
    /// [`Outcome::Unsupported`] without running it.
    pub features: Vec<String>,
}

impl Script {
    /// A script without feature tags.
    pub fn new(source: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            features: Vec::new(),
        }
    }
}

/// Cuts `text` to at most `cap` bytes (on a char boundary), marking the cut.
pub fn cap_output(mut text: String, cap: usize, already_cut: bool) -> (String, bool) {
    let mut cut = already_cut;
    if text.len() > cap {
        let mut end = cap;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        cut = true;
    }
    if cut && !text.ends_with(CUT_MARK) {
        text.push_str(CUT_MARK);
    }
    (text, cut)
}
