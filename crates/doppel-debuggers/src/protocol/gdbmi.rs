//! GDB/MI output parser (GDB manual, "GDB/MI Output Syntax").
//!
//! ```text
//! output        → ( out-of-band-record )* [ result-record ] "(gdb)"
//! result-record → [ token ] "^" result-class ( "," result )*
//! async-record  → [ token ] ( "*" | "+" | "=" ) async-class ( "," result )*
//! stream-record → ( "~" | "@" | "&" ) c-string
//! result        → variable "=" value
//! value         → c-string | tuple | list
//! tuple         → "{}" | "{" result ( "," result )* "}"
//! list          → "[]" | "[" value ( "," value )* "]" | "[" result ( "," result )* "]"
//! ```
//!
//! Results keep their order and duplicate keys (`stack=[frame={..},frame={..}]`
//! is a list of results, all named `frame`). C strings are unescaped,
//! including the octal escapes GDB uses for non-ASCII bytes (decoded as UTF-8,
//! lossily). A line that is not MI (inferior output that leaked into the
//! stream) parses as [`Line::Other`]; a malformed MI line is an error with a
//! byte position, never a panic.

use std::fmt;

/// An MI value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A C string, unescaped.
    Const(String),
    /// `{a=1,b=2}`: named results in order, duplicates kept.
    Tuple(Vec<(String, Value)>),
    /// `[v,...]`: values.
    List(Vec<Value>),
    /// `[a=v,...]`: named results in order.
    ResultList(Vec<(String, Value)>),
}

impl Value {
    /// The field `key` of a tuple or result list (first match).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Tuple(r) | Value::ResultList(r) => r.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string of a `Const`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Const(s) => Some(s),
            _ => None,
        }
    }

    /// `get(key)` as a string.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// The elements of a list, or the values of a result list / tuple.
    pub fn items(&self) -> Vec<&Value> {
        match self {
            Value::List(v) => v.iter().collect(),
            Value::ResultList(r) | Value::Tuple(r) => r.iter().map(|(_, v)| v).collect(),
            Value::Const(_) => vec![],
        }
    }
}

/// The kind of an asynchronous record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsyncKind {
    /// `*`: execution state changes (`running`, `stopped`).
    Exec,
    /// `+`: progress of slow operations.
    Status,
    /// `=`: notifications (`thread-group-started`, `breakpoint-modified`, ...).
    Notify,
}

/// The kind of a stream record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// `~`: console output.
    Console,
    /// `@`: target (inferior) output.
    Target,
    /// `&`: GDB's internal log.
    Log,
}

/// One line of MI output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// `[token]^class,results`
    Result {
        /// The command's token, if it had one (GDB manual, "GDB/MI Output Syntax").
        token: Option<u64>,
        /// `done`, `running`, `connected`, `error` or `exit`.
        class: String,
        /// The results as a tuple (`{}` when there are none).
        results: Value,
    },
    /// `[token]*class,results` and the like.
    Async {
        /// The token of the command that caused it, if any.
        token: Option<u64>,
        /// Exec (`*`), status (`+`) or notify (`=`).
        kind: AsyncKind,
        /// The async class (`stopped`, `running`, `breakpoint-modified`).
        class: String,
        /// The results as a tuple.
        results: Value,
    },
    /// `~"text"` and the like.
    Stream {
        /// Console (`~`), target (`@`) or log (`&`).
        kind: StreamKind,
        /// The C string, unescaped.
        text: String,
    },
    /// `(gdb)`
    Prompt,
    /// Anything that is not MI (inferior output in the stream).
    Other(String),
}

/// A malformed MI line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset in the line.
    pub at: usize,
    /// What is wrong there, for people.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed GDB/MI at byte {}: {}", self.at, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses one line of GDB/MI output (without its newline).
///
/// Errors: a line that starts like an MI record (token, `^*+=~@&`) but does
/// not follow the grammar.
pub fn parse_line(line: &str) -> Result<Line, ParseError> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.trim_end() == "(gdb)" {
        return Ok(Line::Prompt);
    }
    let b = line.as_bytes();
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let token = if digits > 0 { line[..digits].parse().ok() } else { None };
    let Some(&sigil) = b.get(digits) else {
        return Ok(Line::Other(line.to_string()));
    };
    let mut p = Parser { s: line, i: digits + 1 };
    match sigil {
        b'^' | b'*' | b'+' | b'=' => {
            let class = p.word();
            if class.is_empty() {
                if digits == 0 {
                    return Ok(Line::Other(line.to_string()));
                }
                return Err(p.err("expected a record class"));
            }
            let mut results = Vec::new();
            while p.eat(b',') {
                results.push(p.result()?);
            }
            if p.i != b.len() {
                return Err(p.err("trailing characters"));
            }
            let results = Value::Tuple(results);
            Ok(match sigil {
                b'^' => Line::Result { token, class, results },
                b'*' => Line::Async {
                    token,
                    kind: AsyncKind::Exec,
                    class,
                    results,
                },
                b'+' => Line::Async {
                    token,
                    kind: AsyncKind::Status,
                    class,
                    results,
                },
                _ => Line::Async {
                    token,
                    kind: AsyncKind::Notify,
                    class,
                    results,
                },
            })
        }
        b'~' | b'@' | b'&' if digits == 0 => {
            if b.get(1) != Some(&b'"') {
                return Ok(Line::Other(line.to_string()));
            }
            let text = p.cstring()?;
            let kind = match sigil {
                b'~' => StreamKind::Console,
                b'@' => StreamKind::Target,
                _ => StreamKind::Log,
            };
            Ok(Line::Stream { kind, text })
        }
        _ => Ok(Line::Other(line.to_string())),
    }
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn err(&self, message: &str) -> ParseError {
        ParseError {
            at: self.i,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> String {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' {
                self.i += 1;
            } else {
                break;
            }
        }
        self.s[start..self.i].to_string()
    }

    fn result(&mut self) -> Result<(String, Value), ParseError> {
        let name = self.word();
        if name.is_empty() {
            return Err(self.err("expected a variable name"));
        }
        if !self.eat(b'=') {
            return Err(self.err("expected '='"));
        }
        Ok((name, self.value()?))
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        match self.peek() {
            Some(b'"') => Ok(Value::Const(self.cstring()?)),
            Some(b'{') => {
                self.i += 1;
                let mut r = Vec::new();
                if self.eat(b'}') {
                    return Ok(Value::Tuple(r));
                }
                loop {
                    r.push(self.result()?);
                    if self.eat(b'}') {
                        return Ok(Value::Tuple(r));
                    }
                    if !self.eat(b',') {
                        return Err(self.err("expected ',' or '}' in tuple"));
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                if self.eat(b']') {
                    return Ok(Value::List(vec![]));
                }
                // A list of results starts with `name=`; a list of values with a value.
                let is_results = matches!(self.peek(), Some(c) if c.is_ascii_alphabetic() || c == b'_');
                if is_results {
                    let mut r = Vec::new();
                    loop {
                        r.push(self.result()?);
                        if self.eat(b']') {
                            return Ok(Value::ResultList(r));
                        }
                        if !self.eat(b',') {
                            return Err(self.err("expected ',' or ']' in list"));
                        }
                    }
                }
                let mut v = Vec::new();
                loop {
                    v.push(self.value()?);
                    if self.eat(b']') {
                        return Ok(Value::List(v));
                    }
                    if !self.eat(b',') {
                        return Err(self.err("expected ',' or ']' in list"));
                    }
                }
            }
            _ => Err(self.err("expected a value")),
        }
    }

    /// A C string starting at the opening quote.
    fn cstring(&mut self) -> Result<String, ParseError> {
        if !self.eat(b'"') {
            return Err(self.err("expected '\"'"));
        }
        let b = self.s.as_bytes();
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(&c) = b.get(self.i) else {
                return Err(self.err("unterminated string"));
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = b.get(self.i) else {
                        return Err(self.err("unterminated escape"));
                    };
                    self.i += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'a' => out.push(7),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'v' => out.push(11),
                        b'e' => out.push(27),
                        b'0'..=b'7' => {
                            let mut n = u32::from(e - b'0');
                            for _ in 0..2 {
                                match b.get(self.i) {
                                    Some(&d @ b'0'..=b'7') => {
                                        n = n * 8 + u32::from(d - b'0');
                                        self.i += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push((n & 0xff) as u8);
                        }
                        b'x' => {
                            let start = self.i;
                            while b.get(self.i).is_some_and(u8::is_ascii_hexdigit) && self.i - start < 2 {
                                self.i += 1;
                            }
                            let n = u8::from_str_radix(&self.s[start..self.i], 16)
                                .map_err(|_| self.err("bad \\x escape"))?;
                            out.push(n);
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_records_with_tokens_tuples_and_lists() {
        let l = parse_line(r#"2^done,bkpt={number="1",type="breakpoint",line="13",thread-groups=["i1"],original-location="prog.c:12"}"#).unwrap();
        let Line::Result { token, class, results } = l else {
            panic!()
        };
        assert_eq!((token, class.as_str()), (Some(2), "done"));
        let bkpt = results.get("bkpt").unwrap();
        assert_eq!(bkpt.str("line"), Some("13"));
        assert_eq!(bkpt.str("original-location"), Some("prog.c:12"));
        assert_eq!(
            bkpt.get("thread-groups"),
            Some(&Value::List(vec![Value::Const("i1".into())]))
        );
    }

    #[test]
    fn result_lists_keep_duplicate_keys_in_order() {
        let l = parse_line(r#"7^done,stack=[frame={level="0",func="sq"},frame={level="1",func="main"}]"#).unwrap();
        let Line::Result { results, .. } = l else { panic!() };
        let frames = results.get("stack").unwrap().items();
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[1].str("func"), Some("main"));
    }

    #[test]
    fn c_string_escapes_including_octal_utf8() {
        let l = parse_line(r#"~"a\"b\\c\n\t\303\251\101""#).unwrap();
        assert_eq!(
            l,
            Line::Stream {
                kind: StreamKind::Console,
                text: "a\"b\\c\n\té\u{41}".into()
            }
        );
    }

    #[test]
    fn async_records_prompt_and_other_lines() {
        let l = parse_line(r#"*stopped,reason="exited-normally""#).unwrap();
        assert!(matches!(l, Line::Async { kind: AsyncKind::Exec, ref class, .. } if class == "stopped"));
        assert_eq!(parse_line("(gdb) ").unwrap(), Line::Prompt);
        assert_eq!(
            parse_line("hello from the inferior").unwrap(),
            Line::Other("hello from the inferior".into())
        );
        assert_eq!(parse_line("= 42").unwrap(), Line::Other("= 42".into()));
        assert_eq!(parse_line("").unwrap(), Line::Other(String::new()));
        assert!(matches!(parse_line("^done,").unwrap_err(), ParseError { at: 6, .. }));
        assert!(parse_line(r#"^done,a="unterminated"#).is_err());
        assert!(parse_line(r#"^done,a={b="1""#).is_err());
    }

    #[test]
    fn empty_tuples_and_lists() {
        let l = parse_line(r#"^done,variables=[],frame={}"#).unwrap();
        let Line::Result { results, .. } = l else { panic!() };
        assert_eq!(results.get("variables"), Some(&Value::List(vec![])));
        assert_eq!(results.get("frame"), Some(&Value::Tuple(vec![])));
    }

    #[test]
    fn every_line_of_a_recorded_gdb_13_session_parses() {
        let text = include_str!("../../tests/data/gdb-session.mi");
        let mut stopped = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let parsed = parse_line(line).unwrap_or_else(|e| panic!("line {}: {e}: {line}", n + 1));
            if let Line::Async { class, results, .. } = &parsed
                && class == "stopped"
            {
                stopped.push(results.str("reason").unwrap_or("").to_string());
            }
        }
        assert!(stopped.contains(&"breakpoint-hit".to_string()), "{stopped:?}");
        assert!(stopped.contains(&"end-stepping-range".to_string()), "{stopped:?}");
        assert!(stopped.iter().any(|r| r.starts_with("exited")), "{stopped:?}");
    }
}
