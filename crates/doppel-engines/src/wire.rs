//! The JSON-lines protocol between the driver and a worker process.
//!
//! One request line, one response line. Both directions are pure ASCII:
//! every character from U+007F up is written as a `\uXXXX` escape (surrogate
//! pairs for astral characters), because the `readline()` of `jsc` and `js102`
//! decodes stdin as Latin-1 (../shared/notes/js-engines-measured.md §5.4).
//!
//! - The worker starts with a hello line: `{"hello":"doppel-engines/1","version":"..."}`.
//! - Request: `{"id":7,"src":"...","timeout_ms":5000,"output_cap":65536}`, plus
//!   `"inspect":"..."` for workers that support an inspector (engine262).
//! - Response: `{"id":7,"status":"normal"|"throw"|"timeout"|"crash"|"stack-overflow"|"host-error",
//!   "ctor":"TypeError","message":"...","stdout":"...","stdout_cut":false,"signal":11,"reason":"..."}`
//!   (`ctor`, `message`, `signal`, `reason` only where they apply).

use crate::outcome::Outcome;
use serde::{Deserialize, Serialize};

/// The hello line's protocol tag.
pub const HELLO: &str = "doppel-engines/1";

/// A request to run one script.
#[derive(Debug, Clone, Serialize)]
pub struct Request<'a> {
    /// Sequence number, echoed in the response.
    pub id: u64,
    /// The script source.
    pub src: &'a str,
    /// The script's timeout, for workers with their own interrupt.
    pub timeout_ms: u64,
    /// Output bytes the worker keeps.
    pub output_cap: usize,
    /// An inspector script (engine262 only): evaluated in the program's realm
    /// before the program, it gives a function the worker calls after the
    /// program's script (before its jobs) with whether it threw; its string
    /// result comes back in [`Response::inspected`]. The inspector's two
    /// phases each get `timeout_ms` of their own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inspect: Option<&'a str>,
    /// Milliseconds added to the host clock the program sees (engine262
    /// only: its `HostSystemUTCEpochNanoseconds` hook, ECMA-262 21.4.1.2),
    /// so that a second run can tell a clock-dependent program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_skew_ms: Option<i64>,
}

/// The first line a worker prints.
#[derive(Debug, Clone, Deserialize)]
pub struct Hello {
    /// Must be [`HELLO`].
    pub hello: String,
    /// The engine's version as the worker sees it (may be `unknown`).
    #[serde(default)]
    pub version: Option<String>,
}

/// A worker's answer to one request.
#[derive(Debug, Clone, Deserialize)]
pub struct Response {
    /// The request's id.
    pub id: u64,
    /// `normal`, `throw`, `timeout`, `crash`, `stack-overflow` or `host-error`.
    pub status: String,
    /// Constructor name (or primitive type) of a thrown value.
    #[serde(default)]
    pub ctor: Option<String>,
    /// Message of a thrown value.
    #[serde(default)]
    pub message: Option<String>,
    /// Printed output.
    #[serde(default)]
    pub stdout: String,
    /// Whether the worker cut the output at the cap.
    #[serde(default)]
    pub stdout_cut: bool,
    /// Signal of a crashed per-test child.
    #[serde(default)]
    pub signal: Option<i32>,
    /// Reason of a host error.
    #[serde(default)]
    pub reason: Option<String>,
    /// engine262 in coverage mode: the program's covered algorithms and steps.
    #[serde(default)]
    pub coverage: Option<crate::coverage::ProgramCoverage>,
    /// The inspector's result (a request with `inspect`).
    #[serde(default)]
    pub inspected: Option<String>,
    /// Why the inspector gave no result.
    #[serde(default)]
    pub inspect_error: Option<String>,
}

impl Response {
    /// The inspector's result, or why there is none; `None` when no inspector ran.
    pub fn inspection(&self) -> Option<Result<String, String>> {
        match (&self.inspected, &self.inspect_error) {
            (Some(text), _) => Some(Ok(text.clone())),
            (None, Some(e)) => Some(Err(e.clone())),
            (None, None) => None,
        }
    }

    /// The outcome this response stands for; an unknown status is a host error.
    pub fn outcome(&self) -> Outcome {
        match self.status.as_str() {
            "normal" => Outcome::Normal,
            "throw" => Outcome::Exception {
                constructor: self.ctor.clone().filter(|c| !c.is_empty()),
                message: self.message.clone(),
            },
            "timeout" => Outcome::Timeout,
            "crash" => Outcome::Crash {
                signal: self.signal.unwrap_or(0),
            },
            "stack-overflow" => Outcome::HostStackOverflow,
            "transpile-error" => Outcome::TranspileError {
                message: self.message.clone().unwrap_or_default(),
            },
            "host-error" => Outcome::HostError {
                reason: self
                    .reason
                    .clone()
                    .unwrap_or_else(|| "the worker gave no reason".into()),
            },
            other => Outcome::HostError {
                reason: format!("unknown status {other:?} from the worker"),
            },
        }
    }
}

/// Serializes `value` as one ASCII-only JSON line (with the trailing newline).
pub fn ascii_line<T: Serialize>(value: &T) -> String {
    let json = serde_json::to_string(value).expect("plain data serializes");
    let mut out = String::with_capacity(json.len() + 1);
    let mut buf = [0u16; 2];
    for c in json.chars() {
        if (c as u32) < 0x7f {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_ascii_with_surrogate_pairs() {
        let line = ascii_line(&Request {
            id: 1,
            src: "print('é😀\u{7f}')",
            timeout_ms: 10,
            output_cap: 5,
            inspect: None,
            clock_skew_ms: None,
        });
        assert!(line.is_ascii());
        assert!(line.contains(r"\u00e9\ud83d\ude00\u007f"), "{line}");
        let back: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
        assert_eq!(back["src"], "print('é😀\u{7f}')");
    }

    #[test]
    fn unknown_status_is_a_host_error() {
        let r: Response = serde_json::from_str(r#"{"id":1,"status":"weird"}"#).unwrap();
        assert!(matches!(r.outcome(), Outcome::HostError { .. }));
        let r: Response = serde_json::from_str(r#"{"id":1,"status":"throw","ctor":"","message":"m"}"#).unwrap();
        assert_eq!(
            r.outcome(),
            Outcome::Exception {
                constructor: None,
                message: Some("m".into())
            }
        );
    }
}
