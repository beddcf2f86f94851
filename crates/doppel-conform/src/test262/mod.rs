//! test262-format tests (tc39/test262 INTERPRETING.md, CONTRIBUTING.md "Test
//! Case Format"): a program plus its injected assertions with YAML front
//! matter, written so that test262-harness and eshost can run them.
//!
//! - [`Test262Test::from_injection`]: the emitted test (front matter:
//!   `description`, `includes`, `flags` (`noStrict`, or `onlyStrict` for a
//!   program with a `"use strict"` directive: engine262 ran it once, in that
//!   mode), `features`, `negative: {phase: runtime, type: X}` for an uncaught
//!   exception);
//! - [`Test262Test::render`] / [`Test262Test::parse`]: the text and back;
//! - [`failed_assertion`]: which assertion (index and kind) a failing run's
//!   message names;
//! - `harness.rs`: the script an engine runs for a test, and the test's
//!   verdict on an engine from that run.

pub mod features;
pub mod harness;

use crate::inject::{Assertion, AssertionKind, Injection, assertions};
use serde::{Deserialize, Serialize};

/// The harness file `verifyProperty` comes from.
pub const PROPERTY_HELPER: &str = "propertyHelper.js";

/// The line between the program and the injected assertions in a test body.
pub const ASSERTIONS_LINE: &str = "// doppel: assertions on the final state in engine262";

/// A test262 `negative:` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Negative {
    /// `parse`, `resolution` or `runtime`.
    pub phase: String,
    /// The error constructor's name.
    #[serde(rename = "type")]
    pub error_type: String,
}

/// A test262 front matter (the fields doppel writes and reads).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontMatter {
    /// One line.
    pub description: String,
    /// Harness files beyond assert.js and sta.js.
    pub includes: Vec<String>,
    /// `noStrict`, `onlyStrict`, `raw`, ...
    pub flags: Vec<String>,
    /// test262 feature tags.
    pub features: Vec<String>,
    /// The expected runtime error, if any.
    pub negative: Option<Negative>,
}

/// A test262-format test: front matter and body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Test262Test {
    /// The front matter.
    pub meta: FrontMatter,
    /// The program under test.
    pub program: String,
    /// The injected assertions (their code follows the program).
    pub assertions: Vec<Assertion>,
}

/// Why an injection cannot be written as a test262 test.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// The program declares a name the harness defines (`assert`, `verifyProperty`, ...).
    #[error("the program declares {0:?}, which the test262 harness defines")]
    HarnessName(String),
    /// The program throws a value test262's `negative:` cannot name (a primitive).
    #[error("the program throws a {0}, which a test262 negative: type cannot name")]
    UnnamedThrow(String),
}

/// Names the harness files doppel includes define (assert.js, sta.js,
/// propertyHelper.js; their `defines:` lists plus their helper globals).
pub const HARNESS_NAMES: &[&str] = &[
    "assert",
    "Test262Error",
    "$DONOTEVALUATE",
    "compareArray",
    "isPrimitive",
    "formatIdentityFreeValue",
    "formatSimpleValue",
    "verifyProperty",
    "verifyCallableProperty",
    "verifyAccessorProperty",
    "verifyEqualTo",
    "verifyWritable",
    "verifyNotWritable",
    "verifyEnumerable",
    "verifyNotEnumerable",
    "verifyConfigurable",
    "verifyNotConfigurable",
    "verifyPrimordialProperty",
    "verifyPrimordialCallableProperty",
    "verifyPrimordialAccessorProperty",
    "isConfigurable",
    "isEnumerable",
    "isSameValue",
    "isWritable",
    "nonIndexNumericPropertyName",
    "__isArray",
    "__defineProperty",
    "__getOwnPropertyDescriptor",
    "__getOwnPropertyNames",
    "__join",
    "__push",
    "__hasOwnProperty",
    "__propertyIsEnumerable",
    "$262",
    "print",
];

impl Test262Test {
    /// The test for an injection: the program, then its assertions.
    ///
    /// Errors: the program declares a harness name, or throws a primitive.
    pub fn from_injection(inj: &Injection, description: &str) -> Result<Self, EmitError> {
        if let Some(name) = HARNESS_NAMES.iter().find(|n| inj.facts.declares(n)) {
            return Err(EmitError::HarnessName(name.to_string()));
        }
        let assertions = assertions(inj);
        let negative = match &inj.outcome {
            doppel_engines::Outcome::Exception { constructor, .. } => {
                let name = constructor.clone().unwrap_or_default();
                let named = name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_uppercase() || c == '_' || c == '$')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
                if !named {
                    return Err(EmitError::UnnamedThrow(if name.is_empty() {
                        "value".into()
                    } else {
                        name
                    }));
                }
                Some(Negative {
                    phase: "runtime".into(),
                    error_type: name,
                })
            }
            _ => None,
        };
        let mut features = features::of_program(&inj.program);
        for a in &assertions {
            features.extend(a.features.iter().cloned());
        }
        features.sort();
        features.dedup();
        let uses_helper = assertions.iter().any(|a| a.code.contains("verifyProperty("));
        let meta = FrontMatter {
            description: description.to_string(),
            includes: if uses_helper {
                vec![PROPERTY_HELPER.to_string()]
            } else {
                Vec::new()
            },
            flags: vec![if inj.facts.strict { "onlyStrict" } else { "noStrict" }.to_string()],
            features,
            negative,
        };
        Ok(Self {
            meta,
            program: inj.program.clone(),
            assertions,
        })
    }

    /// The test file's text: front matter, program, assertions.
    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str("// Generated by doppel conform (JEST-style assertion injection; state from engine262).\n");
        s.push_str(&render_front_matter(&self.meta));
        s.push('\n');
        s.push_str(&self.program);
        if !self.program.ends_with('\n') {
            s.push('\n');
        }
        let code: Vec<&str> = self
            .assertions
            .iter()
            .map(|a| a.code.as_str())
            .filter(|c| !c.is_empty())
            .collect();
        if !code.is_empty() {
            s.push('\n');
            s.push_str(ASSERTIONS_LINE);
            s.push('\n');
            for c in code {
                s.push_str(c);
                s.push('\n');
            }
        }
        s
    }

    /// Reads a rendered test back: front matter and body (a body without the
    /// assertions line is all program). The assertions' index, kind and
    /// subject come back from their markers; their features are not kept.
    ///
    /// Errors: no `/*---` ... `---*/` front matter.
    pub fn parse(text: &str) -> Result<Self, String> {
        let start = text.find("/*---").ok_or("no /*--- front matter")?;
        let end = text[start..]
            .find("---*/")
            .ok_or("front matter not closed with ---*/")?
            + start;
        let meta = parse_front_matter(&text[start + 5..end]);
        let body = text[end + 5..].strip_prefix('\n').unwrap_or(&text[end + 5..]);
        let body = body.strip_prefix('\n').unwrap_or(body);
        let (program, rest) = match body.find(&format!("\n{ASSERTIONS_LINE}\n")) {
            Some(i) => (&body[..i], &body[i + ASSERTIONS_LINE.len() + 2..]),
            None => (body, ""),
        };
        let mut assertions = Vec::new();
        if let Some(neg) = &meta.negative {
            assertions.push(Assertion {
                index: 0,
                kind: AssertionKind::Exception,
                subject: neg.error_type.clone(),
                code: String::new(),
                features: Vec::new(),
            });
        }
        for line in rest.lines().filter(|l| !l.trim().is_empty()) {
            let Some((index, kind, subject)) = find_marker(line, true) else {
                continue;
            };
            assertions.push(Assertion {
                index,
                kind,
                subject,
                code: line.to_string(),
                features: Vec::new(),
            });
        }
        let program = program.strip_suffix('\n').unwrap_or(program);
        Ok(Self {
            meta,
            program: format!("{program}\n"),
            assertions,
        })
    }
}

fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '$' | ' ' | '(' | ')' | ','))
        && !s.starts_with(' ')
        && !s.ends_with(' ');
    if plain {
        s.to_string()
    } else {
        // A YAML double-quoted scalar; JSON's escapes are YAML's.
        serde_json::to_string(s).expect("strings serialize")
    }
}

/// The `/*--- ... ---*/` block for `meta`.
pub fn render_front_matter(meta: &FrontMatter) -> String {
    let mut s = String::from("/*---\n");
    s.push_str(&format!("description: {}\n", yaml_scalar(&meta.description)));
    for (key, list) in [
        ("includes", &meta.includes),
        ("flags", &meta.flags),
        ("features", &meta.features),
    ] {
        if !list.is_empty() {
            let items: Vec<String> = list.iter().map(|i| yaml_scalar(i)).collect();
            s.push_str(&format!("{key}: [{}]\n", items.join(", ")));
        }
    }
    if let Some(n) = &meta.negative {
        s.push_str(&format!(
            "negative:\n  phase: {}\n  type: {}\n",
            yaml_scalar(&n.phase),
            yaml_scalar(&n.error_type)
        ));
    }
    s.push_str("---*/\n");
    s
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    if s.starts_with('"')
        && let Ok(v) = serde_json::from_str::<String>(s)
    {
        return v;
    }
    s.trim_matches(|c| c == '"' || c == '\'').to_string()
}

/// Reads the front matter text between `/*---` and `---*/`: `description`
/// (one line), the lists `includes`, `flags`, `features` (inline or block),
/// and `negative`. Other keys are skipped.
pub fn parse_front_matter(text: &str) -> FrontMatter {
    let mut meta = FrontMatter::default();
    let mut key = String::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(char::is_whitespace) {
            let Some((k, rest)) = line.split_once(':') else {
                key.clear();
                continue;
            };
            key = k.trim().to_string();
            let rest = rest.trim();
            if key == "description" {
                meta.description = unquote(rest);
            } else if let Some(list) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                let items: Vec<String> = split_list(list).into_iter().map(|i| unquote(&i)).collect();
                if let Some(v) = list_mut(&mut meta, &key) {
                    v.extend(items.into_iter().filter(|i| !i.is_empty()));
                }
            }
            continue;
        }
        let item = line.trim();
        if let Some(x) = item.strip_prefix("- ") {
            if let Some(v) = list_mut(&mut meta, &key) {
                v.push(unquote(x));
            }
        } else if key == "negative"
            && let Some((k, v)) = item.split_once(':')
        {
            let neg = meta.negative.get_or_insert_with(|| Negative {
                phase: String::new(),
                error_type: String::new(),
            });
            match k.trim() {
                "phase" => neg.phase = unquote(v),
                "type" => neg.error_type = unquote(v),
                _ => {}
            }
        }
    }
    meta
}

fn split_list(list: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in list.chars() {
        match c {
            _ if escaped => {
                escaped = false;
                cur.push(c);
            }
            '\\' if quoted => {
                escaped = true;
                cur.push(c);
            }
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => items.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    items.push(cur);
    items.into_iter().map(|i| i.trim().to_string()).collect()
}

fn list_mut<'a>(meta: &'a mut FrontMatter, key: &str) -> Option<&'a mut Vec<String>> {
    match key {
        "includes" => Some(&mut meta.includes),
        "flags" => Some(&mut meta.flags),
        "features" => Some(&mut meta.features),
        _ => None,
    }
}

/// The first assertion marker in `text` (`[doppel#3 key-order] o.a`):
/// index, kind and the subject after it. In a test's source line
/// (`quoted`), the subject ends at the message literal's closing quote and its
/// escapes are decoded; in a run's message it ends at the harness's own
/// continuation (` Expected`, ` descriptor`, `;`).
fn find_marker(text: &str, quoted: bool) -> Option<(usize, AssertionKind, String)> {
    let mut rest = text;
    while let Some(at) = rest.find("[doppel#") {
        let tail = &rest[at + "[doppel#".len()..];
        if let Some(close) = tail.find(']')
            && let Some((n, kind)) = tail[..close].split_once(' ')
            && let (Ok(index), Some(kind)) = (n.parse::<usize>(), AssertionKind::from_label(kind))
        {
            let after = tail[close + 1..].trim_start();
            let subject = if quoted {
                literal_prefix(after)
            } else {
                after.split([' ', ';']).next().unwrap_or("").to_string()
            };
            return Some((index, kind, subject));
        }
        rest = &rest[at + 1..];
    }
    None
}

/// The characters of a JavaScript string literal's body up to its closing
/// `"`, with `\"`, `\\` and `\uXXXX` (surrogate pairs joined) decoded.
fn literal_prefix(s: &str) -> String {
    let mut units: Vec<u16> = Vec::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    if let Ok(u) = u16::from_str_radix(&hex, 16) {
                        units.push(u);
                    }
                }
                Some(other) => {
                    let mut buf = [0u16; 2];
                    units.extend_from_slice(other.encode_utf16(&mut buf));
                }
                None => break,
            },
            _ => {
                let mut buf = [0u16; 2];
                units.extend_from_slice(c.encode_utf16(&mut buf));
            }
        }
    }
    String::from_utf16_lossy(&units)
}

/// Which assertion a failing run names: the first `[doppel#N kind]` marker in
/// the exception message or output (the harness's `Test262Error` message
/// starts with the assertion's message; `verifyProperty` puts its label
/// first). `None` when no marker is there (the program itself failed
/// differently, or the harness failed before any assertion).
pub fn failed_assertion(message: &str) -> Option<(usize, AssertionKind)> {
    find_marker(message, false).map(|(i, k, _)| (i, k))
}

/// As [`failed_assertion`], with the point the assertion checks: its
/// subject expression (`x`, `o.a`, `this`).
pub fn failed_assertion_at(message: &str) -> Option<(usize, AssertionKind, String)> {
    find_marker(message, false)
}
