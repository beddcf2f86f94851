//! The cap on what one run stores (issue 13 part 5e: one run stored 419 MB
//! from a 400 MB debugger line, another a 62 MB transcript).
//!
//! Applied to the record's JSON at the store boundary, whatever the
//! record's shape, after the protocol clients' own caps on lines and
//! messages (`doppel-debuggers`):
//! 1. every string longer than [`RunCaps::max_string`] bytes is cut to that
//!    length, ending in a marker `…[doppel cut: kept K of N bytes]`;
//! 2. while the record is over [`RunCaps::max_run`] bytes, milder cuts
//!    first: transcript texts (strings inside a `raw` array:
//!    [`crate::RawMessage`]) are cut shorter (16 kB, 1 kB, 256 bytes) and
//!    transcripts thinned in the middle (keeping 64, 16, 2 messages at each
//!    end, with one marker message, `dir` `"cut"`, saying how many were
//!    dropped); then every string is cut (64 kB, 4 kB);
//! 3. a record still over the cap is refused: an error, so the campaign
//!    counts the run as not stored (never a silent loss).
//!
//! The verdict, class key and the trace's events are never dropped: only
//! text is shortened and transcripts thinned, each cut marked.

use serde_json::Value;

/// Limits on one stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunCaps {
    /// Longest string kept whole, bytes (default 1 MiB).
    pub max_string: usize,
    /// Largest record JSON, bytes (default 16 MiB).
    pub max_run: usize,
}

impl Default for RunCaps {
    fn default() -> Self {
        RunCaps {
            max_string: 1 << 20,
            max_run: 16 << 20,
        }
    }
}

/// What the cap did to one record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cut {
    /// Strings shortened.
    pub strings: usize,
    /// Transcript messages dropped.
    pub messages: usize,
    /// Size of the JSON before and after, bytes.
    pub bytes_before: usize,
    /// Size after.
    pub bytes_after: usize,
}

/// The marker's upper bound in bytes (for budgeting).
const MARKER_MAX: usize = 64;

/// `s` cut to at most `max` bytes (at a character boundary) plus the marker.
fn cut_string(s: &mut String, max: usize) -> bool {
    if s.len() <= max + MARKER_MAX {
        return false;
    }
    let total = s.len();
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push_str(&format!("…[doppel cut: kept {end} of {total} bytes]"));
    true
}

/// Cuts every string under `v` (only those inside `raw` arrays when
/// `transcripts_only`) to `max` bytes; returns how many were cut.
fn cut_strings(v: &mut Value, max: usize, transcripts_only: bool, in_raw: bool) -> usize {
    match v {
        Value::String(s) if !transcripts_only || in_raw => cut_string(s, max) as usize,
        Value::Array(a) => a
            .iter_mut()
            .map(|x| cut_strings(x, max, transcripts_only, in_raw))
            .sum(),
        Value::Object(o) => o
            .iter_mut()
            .map(|(k, x)| cut_strings(x, max, transcripts_only, in_raw || k == "raw"))
            .sum(),
        _ => 0,
    }
}

/// Keeps the first and last `keep` messages of every `raw` array longer
/// than `2 * keep + 1`, with a marker message in between.
fn thin_transcripts(v: &mut Value, keep: usize) -> usize {
    match v {
        Value::Array(a) => a.iter_mut().map(|x| thin_transcripts(x, keep)).sum(),
        Value::Object(o) => {
            let mut n = 0;
            for (k, x) in o.iter_mut() {
                match x {
                    Value::Array(msgs) if k == "raw" && msgs.len() > 2 * keep + 1 => {
                        let dropped = msgs.len() - 2 * keep;
                        let tail = msgs.split_off(msgs.len() - keep);
                        msgs.truncate(keep);
                        msgs.push(serde_json::json!({
                            "dir": "cut",
                            "text": format!("[doppel cut: {dropped} messages dropped here]"),
                        }));
                        msgs.extend(tail);
                        n += dropped;
                    }
                    _ => n += thin_transcripts(x, keep),
                }
            }
            n
        }
        _ => 0,
    }
}

/// Serialized size of `v`, bytes, without building the text.
fn size(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    match serde_json::to_writer(&mut c, v) {
        Ok(()) => c.0,
        Err(_) => usize::MAX,
    }
}

/// One way of making a record smaller, mildest first.
enum Step {
    /// Cut transcript texts to this many bytes.
    TranscriptText(usize),
    /// Keep this many messages at each end of every transcript.
    Thin(usize),
    /// Cut every string to this many bytes.
    AllText(usize),
}

/// `value` (a run record as JSON) cut to `caps` as the module docs say;
/// returns the JSON text and what was cut.
///
/// Errors: the record is over [`RunCaps::max_run`] even with every cut.
pub fn capped_json(mut value: Value, caps: &RunCaps) -> anyhow::Result<(String, Cut)> {
    let mut cut = Cut {
        bytes_before: size(&value),
        ..Default::default()
    };
    if cut.bytes_before > caps.max_string {
        cut.strings += cut_strings(&mut value, caps.max_string, false, false);
    }
    let steps = [
        Step::TranscriptText(16 << 10),
        Step::Thin(64),
        Step::TranscriptText(1024),
        Step::Thin(16),
        Step::TranscriptText(256),
        Step::Thin(2),
        Step::AllText(64 << 10),
        Step::AllText(4096),
    ];
    let mut current = if cut.strings > 0 {
        size(&value)
    } else {
        cut.bytes_before
    };
    for step in steps {
        if current <= caps.max_run {
            break;
        }
        match step {
            Step::TranscriptText(max) => cut.strings += cut_strings(&mut value, max.min(caps.max_string), true, false),
            Step::Thin(keep) => cut.messages += thin_transcripts(&mut value, keep),
            Step::AllText(max) => cut.strings += cut_strings(&mut value, max.min(caps.max_string), false, false),
        }
        current = size(&value);
    }
    let json = serde_json::to_string(&value)?;
    cut.bytes_after = json.len();
    anyhow::ensure!(
        json.len() <= caps.max_run,
        "the run's record is {} bytes even after cutting its strings and transcripts (cap {} bytes): not stored",
        json.len(),
        caps.max_run
    );
    Ok((json, cut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SMALL: RunCaps = RunCaps {
        max_string: 1000,
        max_run: 20_000,
    };

    #[test]
    fn a_small_record_is_untouched() {
        let v = json!({"a": "x".repeat(500), "raw": [{"dir": "<-", "text": "hi"}]});
        let (s, cut) = capped_json(v.clone(), &SMALL).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&s).unwrap(), v);
        assert_eq!((cut.strings, cut.messages), (0, 0));
    }

    #[test]
    fn a_huge_line_is_cut_with_a_marker_at_a_char_boundary() {
        let v = json!({"verdict": "divergence", "line": "é".repeat(5000)});
        let (s, cut) = capped_json(v, &SMALL).unwrap();
        let back: Value = serde_json::from_str(&s).unwrap();
        let line = back["line"].as_str().unwrap();
        assert!(
            line.ends_with("…[doppel cut: kept 1000 of 10000 bytes]"),
            "{}",
            &line[990..]
        );
        assert_eq!(back["verdict"], "divergence");
        assert_eq!(cut.strings, 1);
    }

    #[test]
    fn a_long_transcript_is_thinned_in_the_middle_and_the_rest_kept() {
        let msgs: Vec<Value> = (0..5000)
            .map(|i| json!({"dir": "<-", "text": format!("message {i}")}))
            .collect();
        let v = json!({"traces": [{"events": [{"event": "output", "raw": msgs}]}], "detail": "kept"});
        let (s, cut) = capped_json(v, &SMALL).unwrap();
        assert!(s.len() <= SMALL.max_run);
        let back: Value = serde_json::from_str(&s).unwrap();
        let raw = back["traces"][0]["events"][0]["raw"].as_array().unwrap();
        assert_eq!(raw[0]["text"], "message 0");
        assert_eq!(raw.last().unwrap()["text"], "message 4999");
        let marker = raw.iter().find(|m| m["dir"] == "cut").expect("a marker message");
        assert!(marker["text"].as_str().unwrap().contains("messages dropped"));
        assert_eq!(cut.messages + raw.len() - 1, 5000);
        assert_eq!(back["detail"], "kept");
    }

    #[test]
    fn a_record_that_cannot_fit_is_refused() {
        let events: Vec<Value> = (0..5000).map(|i| json!({"t_ms": i, "event": "action"})).collect();
        let err = capped_json(json!({ "events": events }), &SMALL)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not stored") && err.contains("cap 20000"), "{err}");
    }
}
