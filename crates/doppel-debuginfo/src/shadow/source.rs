//! The shadow program's source: the printing code of each pair (integers,
//! pointers as null or non-null, integer arrays and structs field by field,
//! in the normalized form of [`crate::value`]), grouped per line behind a
//! first-hit guard and written at column 1 of the line, so line numbers do
//! not change.

use crate::augment::{declare_first, prefix_lines};
use crate::{Pair, VarKind};
use std::collections::{BTreeMap, BTreeSet};

/// Marker that starts every value line of a shadow program's output.
pub const MARKER: &str = "@@doppel ";

/// Largest number of array elements printed (the first ones).
pub const MAX_ARRAY_ELEMENTS: u32 = 16;

/// The declaration of `printf` added to line 1 (the program may not include
/// `<stdio.h>`; a compatible redeclaration is harmless when it does).
pub const PRINTF_PROTOTYPE: &str = "int printf(const char *, ...);";

/// The printing code of one pair: a C statement that prints it, or why it
/// cannot be printed.
pub(super) fn render(pair: &Pair) -> Result<String, String> {
    let v = &pair.variable.name;
    let s = pair.line;
    match &pair.variable.kind {
        VarKind::Integer { signed: true, .. } => Ok(format!("printf(\"{MARKER}{s} {v} %lld\\n\", (long long)({v}));")),
        VarKind::Integer { signed: false, .. } => Ok(format!(
            "printf(\"{MARKER}{s} {v} %llu\\n\", (unsigned long long)({v}));"
        )),
        VarKind::Pointer => Ok(format!(
            "printf(\"{MARKER}{s} {v} %s\\n\", ({v}) ? \"non-null\" : \"null\");"
        )),
        VarKind::Array { elem, len } => {
            let (fmt, cast) = match elem.as_ref() {
                VarKind::Integer { signed: true, .. } => ("%lld", "long long"),
                VarKind::Integer { signed: false, .. } => ("%llu", "unsigned long long"),
                other => return Err(format!("array of {} elements is not printed", other.name())),
            };
            let n = (*len).min(MAX_ARRAY_ELEMENTS);
            Ok(format!(
                "printf(\"{MARKER}{s} {v} {{\"); for (int doppel_i = 0; doppel_i < {n}; doppel_i++) \
                 printf(doppel_i ? \", {fmt}\" : \"{fmt}\", ({cast})({v})[doppel_i]); printf(\"}}\\n\");"
            ))
        }
        VarKind::Struct { .. } => {
            let (fmt, args) = struct_format(&pair.variable.kind, v)?;
            Ok(format!("printf(\"{MARKER}{s} {v} {fmt}\\n\", {});", args.join(", ")))
        }
        VarKind::Other => Err(format!("type {} is not printed", pair.variable.type_name)),
    }
}

/// The `printf` format and arguments that print `expr`, of `kind`, in the
/// normalized form of [`crate::value`]: a struct as `{a = 1, b = {0, 0},
/// c = null}`, field by field in declaration order (arrays: their first
/// [`MAX_ARRAY_ELEMENTS`] elements, one argument each). Only integers,
/// pointers, arrays of those and structs of all these are printed.
pub(super) fn struct_format(kind: &VarKind, expr: &str) -> Result<(String, Vec<String>), String> {
    match kind {
        VarKind::Integer { signed: true, .. } => Ok(("%lld".into(), vec![format!("(long long)({expr})")])),
        VarKind::Integer { signed: false, .. } => Ok(("%llu".into(), vec![format!("(unsigned long long)({expr})")])),
        VarKind::Pointer => Ok(("%s".into(), vec![format!("({expr}) ? \"non-null\" : \"null\"")])),
        VarKind::Array { elem, len } => {
            let (mut fmts, mut args) = (Vec::new(), Vec::new());
            for i in 0..(*len).min(MAX_ARRAY_ELEMENTS) {
                let (f, a) = struct_format(elem, &format!("({expr})[{i}]"))?;
                fmts.push(f);
                args.extend(a);
            }
            Ok((format!("{{{}}}", fmts.join(", ")), args))
        }
        VarKind::Struct { fields } => {
            if fields.is_empty() {
                return Err("struct without known fields is not printed".into());
            }
            let (mut fmts, mut args) = (Vec::new(), Vec::new());
            for (name, k) in fields {
                let (f, a) = struct_format(k, &format!("({expr}).{name}"))
                    .map_err(|_| format!("struct field {name} ({}) is not printed", k.name()))?;
                fmts.push(format!("{name} = {f}"));
                args.extend(a);
            }
            Ok((format!("{{{}}}", fmts.join(", ")), args))
        }
        VarKind::Other => Err("not printed".into()),
    }
}

/// The printing code of one line: the pairs' statements inside a first-hit
/// guard, and the 1-based column span `[start, end)` of each pair's code
/// (for attributing a sanitizer report to a pair).
pub(super) struct LineCode {
    pub(super) text: String,
    pub(super) spans: Vec<(usize, usize, usize)>, // (pair index, start col, end col)
}

/// Groups the printable pairs by line; the code prints at the first `hits`
/// executions of its line.
pub(super) fn plan(pairs: &[Pair], hits: u32) -> (BTreeMap<u32, LineCode>, Vec<(Pair, String)>) {
    let mut by_line: BTreeMap<u32, LineCode> = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, pair) in pairs.iter().enumerate() {
        if !seen.insert((pair.line, pair.variable.name.clone())) {
            continue;
        }
        match render(pair) {
            Ok(code) => {
                let s = pair.line;
                let lc = by_line.entry(s).or_insert_with(|| LineCode {
                    text: format!(
                        "{{ static int doppel_seen_{s}; if (doppel_seen_{s} < {hits}) {{ doppel_seen_{s}++; "
                    ),
                    spans: Vec::new(),
                });
                let start = lc.text.len() + 1;
                lc.text.push_str(&code);
                lc.spans.push((i, start, lc.text.len() + 1));
                lc.text.push(' ');
            }
            Err(why) => skipped.push((pair.clone(), why)),
        }
    }
    for lc in by_line.values_mut() {
        lc.text.push_str("} } ");
    }
    (by_line, skipped)
}

/// The shadow program of `source` for `pairs` (see the module
/// documentation), and the pairs skipped because of their kind, with the
/// reason. Pairs at lines past the end of `source` print nothing (and are
/// rejected as not reached by [`validate`]). A repeated (line, name) is
/// printed once.
pub fn shadow_source(source: &str, pairs: &[Pair]) -> (String, Vec<(Pair, String)>) {
    let (by_line, skipped) = plan(pairs, 1);
    (build(source, &by_line), skipped)
}

pub(super) fn build(source: &str, by_line: &BTreeMap<u32, LineCode>) -> String {
    let body = prefix_lines(source, |n| by_line.get(&n).map(|lc| lc.text.clone()));
    declare_first(&body, PRINTF_PROTOTYPE)
}
