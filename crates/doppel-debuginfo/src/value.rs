//! Reading a debugger's rendering of a variable as the normalized value the
//! shadow program prints (PLDI'20 section 4: "print v" in the debugger
//! against PRINT(P, s, v)), so that GDB and LLDB spellings compare alike.
//!
//! Normalized forms (the shadow program prints the same):
//! - integers: decimal, with the variable's signedness and width
//!   (GDB `-5 '\373'`, LLDB `'\xfb'` for an `int8_t` both read `-5`; `true` is `1`);
//! - pointers: `null` or `non-null` (addresses differ between builds);
//! - arrays of integers: `{a, b, c}` over the first [`ARRAY_PREFIX`] elements
//!   (GDB `{0 <repeats 16 times>}` is expanded).

use crate::VarKind;
use doppel_core::Value;

/// How many leading elements of an array are compared.
pub const ARRAY_PREFIX: usize = 16;

/// What a debugger showed for a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// A readable value in normalized form.
    Value(String),
    /// The debugger said the value was optimized out or is not available
    /// (`<optimized out>`, `<error: variable not available>`, ...).
    OptimizedOut,
    /// The rendering could not be read as a value of that kind (with the text).
    Unreadable(String),
}

/// Normalizes `value`, shown for a variable of `kind`.
pub fn normalize(kind: &VarKind, value: &Value) -> Shown {
    let text = value.text.trim();
    if is_unavailable(text) {
        return Shown::OptimizedOut;
    }
    match kind {
        VarKind::Integer { signed, bits } => match integer(text, *signed, *bits) {
            Some(n) => Shown::Value(n),
            None => Shown::Unreadable(text.to_string()),
        },
        VarKind::Pointer => match pointer(text) {
            Some(p) => Shown::Value(p.to_string()),
            None => Shown::Unreadable(text.to_string()),
        },
        VarKind::Array { elem, len } => {
            let take = (*len as usize).min(ARRAY_PREFIX);
            let elems: Vec<String> = if !value.children.is_empty() {
                value.children.iter().map(|c| c.value.text.trim().to_string()).collect()
            } else {
                match array_elements(text).or_else(|| char_array_elements(text)) {
                    Some(e) => e,
                    None => return Shown::Unreadable(text.to_string()),
                }
            };
            if elems.iter().any(|e| is_unavailable(e)) {
                return Shown::OptimizedOut;
            }
            if elems.len() < take {
                return Shown::Unreadable(text.to_string());
            }
            let mut out = Vec::with_capacity(take);
            for e in &elems[..take] {
                match normalize(elem, &Value::scalar(e.clone())) {
                    Shown::Value(v) => out.push(v),
                    other => return other,
                }
            }
            Shown::Value(format!("{{{}}}", out.join(", ")))
        }
        VarKind::Struct | VarKind::Other => Shown::Unreadable(text.to_string()),
    }
}

/// GDB `<optimized out>`, `<unavailable>`; LLDB `<error: variable not
/// available>`, `<variable not available>`, `<error: no location, value may
/// have been optimized out>`.
pub fn is_unavailable(text: &str) -> bool {
    let t = text.trim();
    matches!(t, "<optimized out>" | "<unavailable>" | "<variable not available>")
        || t.starts_with("<error:")
        || t.contains("optimized out")
}

/// A decimal integer for the text of a `bits`-wide integer.
fn integer(text: &str, signed: bool, bits: u8) -> Option<String> {
    let raw: i128 = match text {
        "true" => 1,
        "false" => 0,
        t if t.starts_with('\'') => char_literal(t)? as i128,
        t => {
            // `-5 '\373'` (GDB's char), `42`, `0x2a`, an enum's `A` is not numeric.
            let tok = t.split_whitespace().next()?;
            if let Some(h) = tok.strip_prefix("0x") {
                i128::from_str_radix(h, 16).ok()?
            } else {
                tok.parse::<i128>().ok()?
            }
        }
    };
    Some(fit(raw, signed, bits).to_string())
}

/// Reinterprets `raw` as a `bits`-wide integer of the given signedness.
fn fit(raw: i128, signed: bool, bits: u8) -> i128 {
    if bits == 0 || bits >= 128 {
        return raw;
    }
    let mask: i128 = (1i128 << bits) - 1;
    let u = raw & mask;
    if signed && u >> (bits - 1) == 1 {
        u - (1i128 << bits)
    } else {
        u
    }
}

/// The byte of a C character literal as debuggers print it: `'a'`,
/// `'\n'`, `'\0'`, `'\373'` (octal, GDB), `'\xfb'` (hex, LLDB).
fn char_literal(t: &str) -> Option<u8> {
    let inner = t.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = inner.chars();
    let c = chars.next()?;
    if c != '\\' {
        return (chars.next().is_none() && c.is_ascii()).then_some(c as u8);
    }
    let rest: String = chars.collect();
    Some(match rest.as_str() {
        "n" => b'\n',
        "t" => b'\t',
        "r" => b'\r',
        "a" => 7,
        "b" => 8,
        "f" => 12,
        "v" => 11,
        "e" => 27,
        "\\" => b'\\',
        "'" => b'\'',
        "\"" => b'"',
        "?" => b'?',
        r if r.starts_with('x') => u8::from_str_radix(&r[1..], 16).ok()?,
        r if !r.is_empty() && r.chars().all(|c| ('0'..='7').contains(&c)) => u32::from_str_radix(r, 8).ok()? as u8,
        _ => return None,
    })
}

/// `null` for an all-zero address, `non-null` for another one. GDB may add
/// a symbol (`0x4010 <g_5>`), LLDB a type (`(int *) 0x0`).
fn pointer(text: &str) -> Option<&'static str> {
    // GDB's rendering of DW_OP_implicit_pointer: the pointer was optimized
    // away but what it points to is known, so it is not null.
    if text.contains("<synthetic pointer>") {
        return Some("non-null");
    }
    let hex = text.split_whitespace().find_map(|w| w.strip_prefix("0x"))?;
    let digits: String = hex.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    if digits.is_empty() {
        return None;
    }
    Some(if digits.chars().all(|c| c == '0') {
        "null"
    } else {
        "non-null"
    })
}

/// The top-level elements of `{1, 2, 3}`, GDB's `<repeats N times>`
/// expanded (`{0 <repeats 16 times>}`, `{1, 0 <repeats 15 times>}`).
fn array_elements(text: &str) -> Option<Vec<String>> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    let push = |item: &str, out: &mut Vec<String>| -> Option<()> {
        let item = item.trim();
        if let Some(i) = item.find(" <repeats ") {
            let n: usize = item[i + 10..]
                .trim_end_matches('>')
                .trim_end_matches(" times")
                .trim()
                .parse()
                .ok()?;
            out.extend(std::iter::repeat_n(item[..i].to_string(), n));
        } else if !item.is_empty() {
            out.push(item.to_string());
        }
        Some(())
    };
    let mut quoted = false;
    for c in inner.chars() {
        match c {
            '\'' => quoted = !quoted,
            '{' if !quoted => depth += 1,
            '}' if !quoted => depth = depth.saturating_sub(1),
            ',' if depth == 0 && !quoted => {
                push(&cur, &mut out)?;
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    push(&cur, &mut out)?;
    Some(out)
}

/// The bytes of a `char`-element array as GDB prints it: string segments
/// and repeated characters (`"\354_\001"`, `"ab", '\000' <repeats 14 times>`),
/// as one decimal element each (unsigned; the element kind reinterprets it).
fn char_array_elements(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('"') {
            let mut bytes = Vec::new();
            let mut chars = r.char_indices();
            let end = loop {
                let (i, c) = chars.next()?;
                match c {
                    '"' => break i,
                    '\\' => {
                        let (_, e) = chars.next()?;
                        let b = match e {
                            'n' => b'\n',
                            't' => b'\t',
                            'r' => b'\r',
                            'a' => 7,
                            'b' => 8,
                            'f' => 12,
                            'v' => 11,
                            'e' => 27,
                            '0'..='7' => {
                                let mut n = e.to_digit(8)?;
                                for _ in 0..2 {
                                    let save = chars.clone();
                                    match chars.next() {
                                        Some((_, d)) if d.is_digit(8) => n = n * 8 + d.to_digit(8)?,
                                        _ => {
                                            chars = save;
                                            break;
                                        }
                                    }
                                }
                                n as u8
                            }
                            other if other.is_ascii() => other as u8,
                            _ => return None,
                        };
                        bytes.push(b);
                    }
                    c if c.is_ascii() => bytes.push(c as u8),
                    _ => return None,
                }
            };
            out.extend(bytes.iter().map(|b| b.to_string()));
            rest = r[end + 1..].trim_start();
        } else if rest.starts_with('\'') {
            let close = rest[1..].find('\'').map(|i| i + 2)?;
            // An escaped quote ('\'') is not a close.
            let close = if &rest[..close] == "'\\'" {
                rest[3..].find('\'').map(|i| i + 4)?
            } else {
                close
            };
            let b = char_literal(&rest[..close])?;
            rest = rest[close..].trim_start();
            let mut n = 1usize;
            if let Some(r) = rest.strip_prefix("<repeats ") {
                let (count, after) = r.split_once(" times>")?;
                n = count.trim().parse().ok()?;
                rest = after.trim_start();
            }
            out.extend(std::iter::repeat_n(b.to_string(), n));
        } else {
            return None;
        }
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        if rest.starts_with("...") {
            break;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(signed: bool, bits: u8) -> VarKind {
        VarKind::Integer { signed, bits }
    }
    fn n(kind: &VarKind, text: &str) -> Shown {
        normalize(kind, &Value::scalar(text))
    }
    fn v(s: &str) -> Shown {
        Shown::Value(s.into())
    }

    #[test]
    fn gdb_and_lldb_chars_read_as_the_same_integer() {
        let i8k = int(true, 8);
        assert_eq!(n(&i8k, "-5 '\\373'"), v("-5"));
        assert_eq!(n(&i8k, "'\\xfb'"), v("-5"));
        assert_eq!(n(&i8k, "97 'a'"), v("97"));
        assert_eq!(n(&i8k, "'a'"), v("97"));
        assert_eq!(n(&i8k, "'\\0'"), v("0"));
        assert_eq!(n(&int(false, 8), "'\\xfb'"), v("251"));
        assert_eq!(n(&int(false, 8), "251 '\\373'"), v("251"));
    }

    #[test]
    fn integers_take_the_variables_width_and_sign() {
        assert_eq!(n(&int(false, 64), "18446744073709551615"), v("18446744073709551615"));
        assert_eq!(n(&int(true, 32), "-1"), v("-1"));
        assert_eq!(n(&int(false, 32), "0xffffffff"), v("4294967295"));
        assert_eq!(n(&int(false, 1), "true"), v("1"));
        assert_eq!(n(&int(true, 16), "enum_thing"), Shown::Unreadable("enum_thing".into()));
    }

    #[test]
    fn unavailable_spellings_of_both_debuggers() {
        for t in [
            "<optimized out>",
            "<error: variable not available>",
            "<variable not available>",
            "<error: no location, value may have been optimized out>",
        ] {
            assert_eq!(n(&int(true, 32), t), Shown::OptimizedOut, "{t}");
        }
    }

    #[test]
    fn gdb_strings_of_char_arrays_read_as_their_bytes() {
        let k = VarKind::Array {
            elem: Box::new(int(true, 8)),
            len: 4,
        };
        assert_eq!(n(&k, "\"\\354_\\001\\001_\""), v("{-20, 95, 1, 1}"));
        assert_eq!(n(&k, "\"a\", '\\000' <repeats 3 times>"), v("{97, 0, 0, 0}"));
        let u = VarKind::Array {
            elem: Box::new(int(false, 8)),
            len: 2,
        };
        assert_eq!(n(&u, "\"\\377\\n\""), v("{255, 10}"));
    }

    #[test]
    fn gdbs_synthetic_pointer_is_not_null() {
        assert_eq!(n(&VarKind::Pointer, "<synthetic pointer>"), v("non-null"));
    }

    #[test]
    fn pointers_compare_by_nullness() {
        assert_eq!(n(&VarKind::Pointer, "0x0"), v("null"));
        assert_eq!(n(&VarKind::Pointer, "0x0000000000000000"), v("null"));
        assert_eq!(n(&VarKind::Pointer, "(int *) 0x0"), v("null"));
        assert_eq!(n(&VarKind::Pointer, "0x4010 <g_5>"), v("non-null"));
    }

    #[test]
    fn arrays_from_gdb_text_and_from_children() {
        let k = VarKind::Array {
            elem: Box::new(int(true, 8)),
            len: 3,
        };
        assert_eq!(n(&k, "{1, -2 '\\376', 3 '\\003'}"), v("{1, -2, 3}"));
        assert_eq!(n(&k, "{0 <repeats 3 times>}"), v("{0, 0, 0}"));
        let children = Value {
            text: "int8_t[3]".into(),
            children: ["'\\x01'", "'\\xfe'", "'\\x03'"]
                .iter()
                .enumerate()
                .map(|(i, t)| doppel_core::Variable {
                    name: format!("[{i}]"),
                    type_name: None,
                    value: Value::scalar(*t),
                    kind: Default::default(),
                })
                .collect(),
        };
        assert_eq!(normalize(&k, &children), v("{1, -2, 3}"));
        assert_eq!(n(&k, "{1, <optimized out>, 3}"), Shown::OptimizedOut);
    }
}
