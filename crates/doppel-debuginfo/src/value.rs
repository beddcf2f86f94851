//! Reading a debugger's rendering of a variable as the normalized value the
//! shadow program prints (PLDI'20 section 4: "print v" in the debugger
//! against PRINT(P, s, v)), so that GDB and LLDB spellings compare alike.
//!
//! Normalized forms (the shadow program prints the same):
//! - integers: decimal, with the variable's signedness and width
//!   (GDB `-5 '\373'`, LLDB `'\xfb'` for an `int8_t` both read `-5`; `true` is `1`);
//! - pointers: `null` or `non-null` (addresses differ between builds);
//! - arrays of integers: `{a, b, c}` over the first [`ARRAY_PREFIX`] elements
//!   (GDB `{0 <repeats 16 times>}` is expanded);
//! - structs: `{a = 1, b = {0, 0}, c = null}`, every field in declaration
//!   order in its own normalized form (GDB's text `{a = 1, b = {0, 0}, c =
//!   0x0}`, or the members a debugger listed as children, by name). A field
//!   that is optimized out makes the whole value optimized out.

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
            let elems: Vec<Value> = if !value.children.is_empty() {
                value.children.iter().map(|c| c.value.clone()).collect()
            } else {
                match array_elements(text).or_else(|| char_array_elements(text)) {
                    Some(e) => e.into_iter().map(Value::scalar).collect(),
                    None => return Shown::Unreadable(text.to_string()),
                }
            };
            if elems.iter().any(|e| is_unavailable(&e.text)) {
                return Shown::OptimizedOut;
            }
            if elems.len() < take {
                return Shown::Unreadable(text.to_string());
            }
            let mut out = Vec::with_capacity(take);
            for e in &elems[..take] {
                match normalize(elem, e) {
                    Shown::Value(v) => out.push(v),
                    other => return other,
                }
            }
            Shown::Value(format!("{{{}}}", out.join(", ")))
        }
        VarKind::Struct { fields } => {
            if fields.is_empty() {
                return Shown::Unreadable(text.to_string());
            }
            let members: Vec<(String, Value)> = if !value.children.is_empty() {
                value
                    .children
                    .iter()
                    .map(|c| (c.name.trim().to_string(), c.value.clone()))
                    .collect()
            } else {
                match struct_members(text) {
                    Some(m) => m.into_iter().map(|(n, v)| (n, Value::scalar(v))).collect(),
                    None => return Shown::Unreadable(text.to_string()),
                }
            };
            if members.iter().any(|(_, v)| is_unavailable(&v.text)) {
                return Shown::OptimizedOut;
            }
            let mut out = Vec::with_capacity(fields.len());
            let mut unreadable = None;
            for (name, kind) in fields {
                let Some((_, v)) = members.iter().find(|(n, _)| n == name) else {
                    return Shown::Unreadable(text.to_string());
                };
                match normalize(kind, v) {
                    Shown::Value(s) => out.push(format!("{name} = {s}")),
                    Shown::OptimizedOut => return Shown::OptimizedOut,
                    // A later field may still be optimized out.
                    Shown::Unreadable(_) => unreadable = Some(Shown::Unreadable(text.to_string())),
                }
            }
            unreadable.unwrap_or_else(|| Shown::Value(format!("{{{}}}", out.join(", "))))
        }
        VarKind::Other => Shown::Unreadable(text.to_string()),
    }
}

/// The members of GDB's `{a = 1, b = {0, 0}, c = 0x0}`: names with their
/// texts, in order.
fn struct_members(text: &str) -> Option<Vec<(String, String)>> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    split_top_level(inner)?
        .into_iter()
        .map(|p| {
            let (name, value) = p.split_once(" = ")?;
            Some((name.trim().to_string(), value.trim().to_string()))
        })
        .collect()
}

/// Splits `s` on commas outside braces and quotes.
fn split_top_level(s: &str) -> Option<Vec<String>> {
    let (mut out, mut cur) = (Vec::new(), String::new());
    let (mut depth, mut quote, mut escaped) = (0usize, None::<char>, false);
    for c in s.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                '\'' | '"' => quote = Some(c),
                '{' => depth += 1,
                '}' => depth = depth.checked_sub(1)?,
                ',' if depth == 0 => {
                    out.push(std::mem::take(&mut cur));
                    continue;
                }
                _ => {}
            }
        }
        cur.push(c);
    }
    if depth != 0 || quote.is_some() {
        return None;
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    Some(out)
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

    fn struct_kind() -> VarKind {
        VarKind::Struct {
            fields: vec![
                ("a".into(), int(true, 32)),
                (
                    "b".into(),
                    VarKind::Array {
                        elem: Box::new(int(true, 32)),
                        len: 2,
                    },
                ),
                ("c".into(), VarKind::Pointer),
                (
                    "d".into(),
                    VarKind::Struct {
                        fields: vec![("x".into(), int(true, 8))],
                    },
                ),
            ],
        }
    }

    fn child(name: &str, value: Value) -> doppel_core::Variable {
        doppel_core::Variable {
            name: name.into(),
            type_name: None,
            value,
            kind: Default::default(),
        }
    }

    #[test]
    fn structs_from_gdb_text_and_from_lldb_children() {
        let k = struct_kind();
        let want = v("{a = 1, b = {0, 0}, c = null, d = {x = -5}}");
        assert_eq!(n(&k, "{a = 1, b = {0, 0}, c = 0x0, d = {x = -5 '\\373'}}"), want);
        assert_eq!(
            n(&k, "{a = 1, b = {0 <repeats 2 times>}, c = 0x0, d = {x = -5 '\\373'}}"),
            want
        );
        // A `,` or `=` inside a character does not split.
        let c = VarKind::Struct {
            fields: vec![("p".into(), int(true, 8)), ("q".into(), int(true, 8))],
        };
        assert_eq!(n(&c, "{p = 44 ',', q = 61 '='}"), v("{p = 44, q = 61}"));
        // LLDB: members as children, by name, the struct's own text unused.
        let lldb = Value {
            text: "{...}".into(),
            children: vec![
                child("a", Value::scalar("1")),
                child(
                    "b",
                    Value {
                        text: "{...}".into(),
                        children: vec![child("[0]", Value::scalar("0")), child("[1]", Value::scalar("0"))],
                    },
                ),
                child("c", Value::scalar("0x0000000000000000")),
                child(
                    "d",
                    Value {
                        text: "{...}".into(),
                        children: vec![child("x", Value::scalar("'\\xfb'"))],
                    },
                ),
            ],
        };
        assert_eq!(normalize(&k, &lldb), want);
        assert_eq!(
            n(&k, "{a = 2, b = {1, 2}, c = 0x4010 <g>, d = {x = 0 '\\000'}}"),
            v("{a = 2, b = {1, 2}, c = non-null, d = {x = 0}}")
        );
    }

    #[test]
    fn an_optimized_out_field_makes_the_struct_optimized_out() {
        let k = struct_kind();
        assert_eq!(
            n(&k, "{a = 1, b = {0, 0}, c = <optimized out>, d = {x = 1}}"),
            Shown::OptimizedOut
        );
        assert_eq!(n(&k, "<optimized out>"), Shown::OptimizedOut);
        let lldb = Value {
            text: "{...}".into(),
            children: vec![
                child("a", Value::scalar("<variable not available>")),
                child("b", Value::scalar("{...}")),
            ],
        };
        assert_eq!(normalize(&k, &lldb), Shown::OptimizedOut);
    }

    #[test]
    fn structs_with_missing_or_unknown_fields_are_unreadable() {
        let k = struct_kind();
        let missing = "{a = 1, b = {0, 0}, c = 0x0}";
        assert_eq!(n(&k, missing), Shown::Unreadable(missing.into()));
        assert_eq!(n(&k, "42"), Shown::Unreadable("42".into()));
        let empty = VarKind::Struct { fields: vec![] };
        assert_eq!(n(&empty, "{a = 1}"), Shown::Unreadable("{a = 1}".into()));
    }
}
