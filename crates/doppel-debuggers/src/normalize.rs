//! Normalization: explicit, per-rule, switchable rewrites that make the
//! outputs of different debuggers comparable before the oracle looks at them.
//!
//! Every rule is documented in `docs/normalization.md` with an example. A rule
//! removes a difference of *rendering* (how a value or a stack is printed);
//! differences of *behaviour* stay. Raw outputs stay untouched in the traces:
//! normalization works on copies used only for comparison.

use doppel_core::{Frame, Location, Output, ProgramState, Value, Variable, VariableKind};
use serde::{Deserialize, Serialize};

/// Switches for the normalization rules. All are on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NormalizationConfig {
    /// Drop call-stack frames below `main` (LLDB shows `__libc_start_call_main`
    /// and `_start` when libc debug info is installed; GDB stops at `main`).
    pub frames_below_main: bool,
    /// Render pointers without leading zeros (`0x0000555555556004` → `0x555555556004`)
    /// and without symbol decorations (`0x...139 <add>`, `0x...139 (prog`add at f.c:6)`,
    /// `(struct node *) 0x...`).
    pub pointer_format: bool,
    /// Render `char` values as their character literal (GDB `97 'a'`, LLDB `'a'` → `'a'`).
    pub char_format: bool,
    /// Ignore whether a variable is flagged as an argument (LLDB's adapter does
    /// not flag arguments; GDB/MI does).
    pub argument_flags: bool,
    /// Compare variables as a set sorted by name, keeping the first binding of
    /// each name (DBDB's implementation does the same).
    pub variable_order: bool,
    /// Compare aggregates by their members when a backend expanded them,
    /// instead of by each debugger's own summary text.
    pub aggregate_members: bool,
    /// Spell types the same way (`char [6]` → `char[6]`, `int *` → `int*`).
    pub type_spelling: bool,
    /// Spell floating-point exponents the same way (`1E-5` → `1e-5`).
    pub number_format: bool,
    /// One spelling of unreadable values (`<optimized out>`,
    /// `<error: variable not available>` → `<unavailable>`).
    pub unavailable_values: bool,
    /// Drop GDB's entry-value pseudo-variables (`argc@entry`), which GDB
    /// shows in optimized code (DW_OP_entry_value) and LLDB does not.
    pub entry_values: bool,
    /// Drop pseudo-variables that stand for a message, not a variable:
    /// lldb-dap lists `<error>` = "no variable information is available in
    /// debug info for this compile unit" for a frame without variables.
    pub pseudo_variables: bool,
    /// Name shadowed variables plainly: lldb-dap calls them `x @ scopes.c:11`;
    /// with `variable_order`, the first binding of a name is compared.
    pub shadowed_names: bool,
    /// Drop GDB's `<repeats N times>` and trailing `'\000'` padding of char arrays.
    pub char_array_padding: bool,
    /// JavaScript: drop bindings whose value is `undefined`. Node 20's V8
    /// lists `let`/`const`/`class` bindings that are not initialised yet (in
    /// their temporal dead zone) as `undefined`; Chromium's V8 leaves them
    /// out, and CDP does not mark them. The price: an `undefined` binding is
    /// not compared.
    pub undefined_bindings: bool,
    /// JavaScript: show the global object one way. Node's V8 describes it as
    /// `global` (class `global`, own properties `global`, `clearImmediate`,
    /// `setImmediate`, ...), Chromium's as `Window` (class `Window`): both
    /// become `<global object>` without members (issue 17, "What was seen":
    /// node's global as `arguments[0]` where Chromium shows the window).
    /// The price: an instance of a program's own class named `global` or
    /// `Window` is not compared by its members.
    pub global_object: bool,
}

impl Default for NormalizationConfig {
    fn default() -> Self {
        Self {
            frames_below_main: true,
            pointer_format: true,
            char_format: true,
            argument_flags: true,
            variable_order: true,
            aggregate_members: true,
            type_spelling: true,
            char_array_padding: true,
            undefined_bindings: true,
            number_format: true,
            unavailable_values: true,
            entry_values: true,
            pseudo_variables: true,
            shadowed_names: true,
            global_object: true,
        }
    }
}

impl NormalizationConfig {
    /// Every rule switched off: compare the debuggers' raw renderings.
    pub fn none() -> Self {
        Self {
            frames_below_main: false,
            pointer_format: false,
            char_format: false,
            argument_flags: false,
            variable_order: false,
            aggregate_members: false,
            type_spelling: false,
            char_array_padding: false,
            undefined_bindings: false,
            number_format: false,
            unavailable_values: false,
            entry_values: false,
            pseudo_variables: false,
            shadowed_names: false,
            global_object: false,
        }
    }

    /// The rule names and whether each is on, for reports.
    pub fn describe(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("frames_below_main", self.frames_below_main),
            ("pointer_format", self.pointer_format),
            ("char_format", self.char_format),
            ("argument_flags", self.argument_flags),
            ("variable_order", self.variable_order),
            ("aggregate_members", self.aggregate_members),
            ("type_spelling", self.type_spelling),
            ("char_array_padding", self.char_array_padding),
            ("undefined_bindings", self.undefined_bindings),
            ("number_format", self.number_format),
            ("unavailable_values", self.unavailable_values),
            ("entry_values", self.entry_values),
            ("pseudo_variables", self.pseudo_variables),
            ("shadowed_names", self.shadowed_names),
            ("global_object", self.global_object),
        ]
    }

    /// Switches off the rules named in `names` (comma-separated).
    /// Errors: an unknown rule name.
    pub fn disable(&mut self, names: &str) -> Result<(), String> {
        for n in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let slot = match n {
                "frames_below_main" => &mut self.frames_below_main,
                "pointer_format" => &mut self.pointer_format,
                "char_format" => &mut self.char_format,
                "argument_flags" => &mut self.argument_flags,
                "variable_order" => &mut self.variable_order,
                "aggregate_members" => &mut self.aggregate_members,
                "type_spelling" => &mut self.type_spelling,
                "char_array_padding" => &mut self.char_array_padding,
                "undefined_bindings" => &mut self.undefined_bindings,
                "number_format" => &mut self.number_format,
                "unavailable_values" => &mut self.unavailable_values,
                "entry_values" => &mut self.entry_values,
                "pseudo_variables" => &mut self.pseudo_variables,
                "shadowed_names" => &mut self.shadowed_names,
                "global_object" => &mut self.global_object,
                "all" => {
                    *self = Self::none();
                    continue;
                }
                other => return Err(format!("unknown normalization rule '{other}'")),
            };
            *slot = false;
        }
        Ok(())
    }
}

/// Members compared per aggregate level (the backends read as many).
pub const MAX_MEMBERS: usize = 64;

/// Returns the normalized copy of an output used for comparison.
pub fn output(o: &Output, cfg: &NormalizationConfig) -> Output {
    match o {
        Output::Paused(s) => Output::Paused(state(s, cfg)),
        Output::BreakpointSet {
            requested, resolved, ..
        } => Output::BreakpointSet {
            requested: requested.clone(),
            resolved: resolved.clone(),
            // Messages are the debugger's prose; they never match across debuggers.
            message: None,
        },
        Output::BreakpointRemoved { ok, .. } => Output::BreakpointRemoved { ok: *ok, message: None },
        other => other.clone(),
    }
}

/// Normalizes a program state.
pub fn state(s: &ProgramState, cfg: &NormalizationConfig) -> ProgramState {
    let mut call_stack: Vec<Frame> = s.call_stack.clone();
    if cfg.frames_below_main
        && let Some(i) = call_stack.iter().position(|f| f.function == "main")
    {
        call_stack.truncate(i + 1);
    }
    let mut variables: Vec<Variable> = s
        .variables
        .iter()
        .filter(|v| !(cfg.entry_values && v.name.ends_with("@entry")))
        .filter(|v| !(cfg.pseudo_variables && v.name.starts_with('<') && v.name.ends_with('>')))
        .filter(|v| !(cfg.undefined_bindings && v.type_name.as_deref() == Some("undefined")))
        .map(|v| variable(v, cfg))
        // A variable that cannot be read tells nothing; GDB omits some that
        // LLDB lists as unreadable (a block-local without a location yet).
        .filter(|v| !(cfg.unavailable_values && v.value.text == "<unavailable>"))
        .collect();
    if cfg.variable_order {
        let mut seen = std::collections::HashSet::new();
        variables.retain(|v| seen.insert(v.name.clone()));
        variables.sort_by(|a, b| a.name.cmp(&b.name));
    }
    ProgramState {
        location: s.location.clone(),
        reason: s.reason,
        call_stack,
        variables,
        signal: s.signal.clone(),
        // Compared by value only: GDB/MI gives no type for it, but renders a
        // char unmistakably (`97 'a'`).
        return_value: s.return_value.as_ref().map(|r| {
            let type_name = r
                .type_name
                .as_deref()
                .or_else(|| looks_like_gdb_char(&r.value.text).then_some("char"));
            Variable {
                name: r.name.clone(),
                type_name: None,
                value: value(&r.value, type_name, cfg),
                kind: VariableKind::Unknown,
            }
        }),
    }
}

/// GDB's rendering of a `char`: its code and its literal, `97 'a'`, `-1 '\\377'`.
fn looks_like_gdb_char(text: &str) -> bool {
    text.split_once(' ').is_some_and(|(code, lit)| {
        code.trim_start_matches('-').chars().all(|c| c.is_ascii_digit())
            && !code.trim_start_matches('-').is_empty()
            && lit.len() >= 3
            && lit.starts_with('\'')
            && lit.ends_with('\'')
    })
}

fn variable(v: &Variable, cfg: &NormalizationConfig) -> Variable {
    Variable {
        name: if cfg.shadowed_names {
            shadow_suffix(&v.name).to_string()
        } else {
            v.name.clone()
        },
        type_name: v.type_name.as_deref().map(|t| {
            if cfg.global_object && is_global_object(Some(t), &v.value.text) {
                GLOBAL_OBJECT.to_string()
            } else if cfg.type_spelling {
                type_spelling(t)
            } else {
                t.to_string()
            }
        }),
        value: value(&v.value, v.type_name.as_deref(), cfg),
        kind: if cfg.argument_flags {
            VariableKind::Unknown
        } else {
            v.kind
        },
    }
}

/// Normalizes a value. With `aggregate_members`, an expanded aggregate is
/// rendered canonically from its members (`{x=1, y=2}`) and its children are
/// dropped, so that the text alone decides equality.
pub fn value(v: &Value, type_name: Option<&str>, cfg: &NormalizationConfig) -> Value {
    if cfg.global_object && is_global_object(type_name, &v.text) {
        return Value::scalar(GLOBAL_OBJECT);
    }
    // A pointer's only member is its pointee (LLDB expands pointers to arrays,
    // `int (*)[3]`); GDB/MI shows the address. Compare the address.
    let is_pointer = type_name.is_some_and(|t| t.trim_end().ends_with('*') || t.contains("(*)"));
    if cfg.aggregate_members && !v.children.is_empty() && !is_pointer {
        // Both backends read at most MAX_MEMBERS members per level (GDB prints
        // up to 200 elements); an anonymous member is named by its position,
        // as GDB does (`[1]`), where LLDB leaves the name empty.
        let parts: Vec<String> = v
            .children
            .iter()
            .take(MAX_MEMBERS)
            .enumerate()
            .map(|(i, c)| {
                // lldb-dap 19 leaves an anonymous member's name empty, 22 says `<null>`.
                let name = if c.name.is_empty() || c.name == "<null>" {
                    format!("[{i}]")
                } else {
                    c.name.clone()
                };
                format!("{name}={}", value(&c.value, c.type_name.as_deref(), cfg).text)
            })
            .collect();
        return Value::scalar(format!("{{{}}}", parts.join(", ")));
    }
    let mut text = v.text.trim().to_string();
    // lldb-dap 22 shows an aggregate below the expansion depth by its type
    // name alone (`f = flags`); lldb-dap 19 added its address.
    let type_as_summary = type_name.is_some_and(|t| {
        let bare = |s: &str| {
            s.trim()
                .trim_start_matches("struct ")
                .trim_start_matches("union ")
                .trim()
                .to_string()
        };
        // JavaScript's `undefined` and `null` are spelled like their types.
        !text.is_empty() && text != "undefined" && text != "null" && bare(t) == bare(&text)
    });
    if cfg.aggregate_members && (is_unexpanded_aggregate(&text) || type_as_summary) && !is_pointer {
        // Below the expansion depth: GDB prints the members inline, LLDB a
        // summary (`flags @ 0x7ffe...`). Neither is compared.
        return Value::scalar("{...}");
    }
    if cfg.number_format {
        text = number_format(&text);
        // Enum flag sets: GDB `(y | z | unknown: 0x7ffc)`, LLDB `y | z | 0x7ffc`.
        if text.starts_with('(') && text.ends_with(')') && text.contains(" | ") {
            text = text[1..text.len() - 1].replace("unknown: ", "");
        }
    }
    if cfg.unavailable_values
        && let Some(u) = unavailable(&text)
    {
        text = u.to_string();
    }
    if cfg.char_array_padding {
        text = char_array_padding(&text);
    }
    if cfg.char_format && type_name.is_some_and(is_char_type) {
        text = char_literal(&text);
    }
    if cfg.char_format && text.contains('\\') {
        text = canonical_escapes(&text);
    }
    if cfg.pointer_format {
        text = pointer_format(&pointer_decoration(&text));
    }
    Value {
        text,
        children: if cfg.aggregate_members {
            Vec::new()
        } else {
            v.children.clone()
        },
    }
}

/// How the global object of a JavaScript engine reads after the
/// `global_object` rule.
pub const GLOBAL_OBJECT: &str = "<global object>";

/// Whether a value is a JavaScript global object as V8 describes it over
/// CDP (`Runtime.RemoteObject`'s `className` is the type, its `description`
/// the text): node's `global`, Chromium's `Window`.
fn is_global_object(type_name: Option<&str>, text: &str) -> bool {
    matches!(
        (type_name, text.trim()),
        (Some("global"), "global") | (Some("Window"), "Window")
    )
}

fn is_char_type(t: &str) -> bool {
    matches!(t.trim(), "char" | "signed char" | "unsigned char")
}

/// `97 'a'` → `'a'`; `'a'` stays.
fn char_literal(text: &str) -> String {
    let lit = match text.find(" '") {
        Some(i) if text[..i].trim_start_matches('-').chars().all(|c| c.is_ascii_digit()) => &text[i + 1..],
        _ => text,
    };
    // One spelling of escapes: GDB writes octal (`'\367'`), LLDB hex (`'\xf7'`).
    if let Some(oct) = lit.strip_prefix("'\\").and_then(|r| r.strip_suffix('\''))
        && oct.len() == 3
        && oct.chars().all(|c| ('0'..='7').contains(&c))
        && let Ok(n) = u8::from_str_radix(oct, 8)
    {
        return format!("'\\x{n:02x}'");
    }
    lit.to_string()
}

/// One spelling of "this value cannot be read here": GDB `<optimized out>`,
/// LLDB `<error: variable not available>` and `<error: no location, value
/// may have been optimized out>`, GDB `<unavailable>`.
fn unavailable(text: &str) -> Option<&'static str> {
    (matches!(
        text,
        "<optimized out>" | "<unavailable>" | "<error: variable not available>" | "<variable not available>"
    ) || text.starts_with("<error: no location"))
    .then_some("<unavailable>")
}

/// Escapes of non-printable characters in one spelling, `\xHH`: GDB writes
/// octal (`"\000\320"`), LLDB `\0`, `\xd0` and `\U0000007f`. Named escapes
/// (`\n`, `\"`) stay.
fn canonical_escapes(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' || i + 1 >= chars.len() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let (radix, start, max) = match chars[i + 1] {
            '0'..='7' => (8, i + 1, 3),
            'x' => (16, i + 2, 2),
            'u' => (16, i + 2, 4),
            'U' => (16, i + 2, 8),
            c => {
                out.push('\\');
                out.push(c);
                i += 2;
                continue;
            }
        };
        let mut end = start;
        while end < chars.len() && end - start < max && chars[end].is_digit(radix) {
            end += 1;
        }
        let digits: String = chars[start..end].iter().collect();
        match u32::from_str_radix(&digits, radix) {
            Ok(n) if n < 0x100 => out.push_str(&format!("\\x{n:02x}")),
            _ => out.extend(&chars[i..end.max(i + 2)]),
        }
        i = end.max(i + 2);
    }
    out
}

/// Strips leading zeros of every `0x...` hexadecimal number in `text`.
fn pointer_format(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut last, mut i) = (0, 0);
    while i + 1 < b.len() {
        if b[i] == b'0' && b[i + 1] == b'x' && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let start = i + 2;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_hexdigit() {
                end += 1;
            }
            if end > start {
                // All indices sit on ASCII bytes, so they are char boundaries.
                let digits = text[start..end].trim_start_matches('0');
                out.push_str(&text[last..i]);
                out.push_str("0x");
                out.push_str(if digits.is_empty() { "0" } else { digits });
                last = end;
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[last..]);
    out
}

/// `x @ scopes.c:11` (lldb-dap's name for a shadowed variable) → `x`.
fn shadow_suffix(name: &str) -> &str {
    match name.split_once(" @ ") {
        Some((n, loc)) if loc.contains(':') => n,
        _ => name,
    }
}

/// An aggregate's rendering without members: GDB's `{a = 1, ...}` or
/// `{1, 2}`, LLDB's `TYPE @ 0xADDRESS`.
fn is_unexpanded_aggregate(text: &str) -> bool {
    (text.starts_with('{') && text.ends_with('}'))
        || text.rsplit_once(" @ 0x").is_some_and(|(ty, addr)| {
            !ty.is_empty() && !ty.contains('"') && addr.chars().all(|c| c.is_ascii_hexdigit())
        })
}

/// Floating-point exponents in lower case (LLDB `6.95E-310`, GDB `6.95e-310`).
fn number_format(text: &str) -> String {
    let looks_numeric = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    if looks_numeric && text.contains('E') {
        text.replace('E', "e")
    } else {
        text.to_string()
    }
}

/// `"ab", '\000' <repeats 14 times>` → `"ab"`; `"ab\000\000"` → `"ab"`;
/// `'\000' <repeats 15 times>` (all zero) → `""`.
fn char_array_padding(text: &str) -> String {
    if text.starts_with("'\\000' <repeats ") && text.ends_with(" times>") {
        return "\"\"".into();
    }
    let mut t = text.to_string();
    if let Some(i) = t.find(", '\\000' <repeats") {
        t.truncate(i);
    }
    while let Some(stripped) = t.strip_suffix("\\000\"") {
        t = format!("{stripped}\"");
    }
    t
}

/// `char [6]` → `char[6]`, `int *` → `int*`, `struct point` → `point`
/// (LLDB's DAP adapter drops the tag keyword), collapsed spaces.
fn type_spelling(t: &str) -> String {
    // Anonymous aggregates: GDB `struct {...}`, LLDB `(unnamed struct)`.
    if matches!(
        t.trim(),
        "struct {...}"
            | "union {...}"
            | "(unnamed struct)"
            | "(unnamed union)"
            | "(anonymous struct)"
            | "(anonymous union)"
    ) {
        return "<anonymous>".into();
    }
    let words: Vec<&str> = t
        .split_whitespace()
        .filter(|w| !matches!(*w, "struct" | "union" | "enum"))
        .collect();
    words.join(" ").replace(" [", "[").replace(" *", "*").replace("* ", "*")
}

/// Reduces a pointer with a symbol decoration to the bare address:
/// GDB `0x555555555139 <add>` and `(struct node *) 0x5555...`, LLDB
/// `0x555555555139 (prog`add at funcptr.c:6:30)`. A `char *` with its string
/// (`0x... "text"`) keeps the string.
fn pointer_decoration(text: &str) -> String {
    let mut t = text.trim();
    // GDB's `(type *) 0x...` and `{type} 0x...` prefixes.
    if let Some(rest) = t.strip_prefix('(').or_else(|| t.strip_prefix('{'))
        && let Some((_, v)) = rest.split_once(") 0x").or_else(|| rest.split_once("} 0x"))
    {
        t = &t[t.len() - v.len() - 2..];
    }
    if let Some(r) = t.strip_prefix("0x") {
        let hex_end = r.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(r.len()) + 2;
        let rest = t[hex_end..].trim();
        if (rest.starts_with('<') && rest.ends_with('>')) || (rest.starts_with('(') && rest.ends_with(')')) {
            return t[..hex_end].to_string();
        }
        // GDB's symbol between a `char *`'s address and its string:
        // `0x7ffff7ffdad0 <_rtld_global+2736> ""`.
        if let Some(after) = rest
            .strip_prefix('<')
            .and_then(|r| r.split_once("> \""))
            .map(|(_, s)| s)
        {
            return format!("{} \"{after}", &t[..hex_end]);
        }
    }
    t.to_string()
}

/// Whether two locations are the same for the oracle: same file and line,
/// and the same column when `columns` is set and both have one.
pub fn same_location(a: &Location, b: &Location, columns: bool) -> bool {
    a.file == b.file
        && a.line == b.line
        && (!columns || a.column.is_none() || b.column.is_none() || a.column == b.column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use doppel_core::PauseReason;

    fn var(name: &str, ty: &str, text: &str) -> Variable {
        Variable {
            name: name.into(),
            type_name: Some(ty.into()),
            value: Value::scalar(text),
            kind: VariableKind::Local,
        }
    }

    #[test]
    fn pointers_lose_leading_zeros_only_in_hex_numbers() {
        assert_eq!(
            pointer_format("0x0000555555556004 \"probe\""),
            "0x555555556004 \"probe\""
        );
        assert_eq!(pointer_format("0x0"), "0x0");
        assert_eq!(pointer_format("0x0000000000000000"), "0x0");
        assert_eq!(pointer_format("10x00"), "10x00");
        assert_eq!(pointer_format("é 0x00ab é"), "é 0xab é");
    }

    #[test]
    fn chars_render_as_literals() {
        let cfg = NormalizationConfig::default();
        assert_eq!(value(&Value::scalar("97 'a'"), Some("char"), &cfg).text, "'a'");
        assert_eq!(value(&Value::scalar("'a'"), Some("char"), &cfg).text, "'a'");
        assert_eq!(value(&Value::scalar("-1 '\\377'"), Some("char"), &cfg).text, "'\\xff'");
        // Not a char: untouched.
        assert_eq!(value(&Value::scalar("97 'a'"), Some("int"), &cfg).text, "97 'a'");
    }

    #[test]
    fn aggregates_compare_by_members() {
        let cfg = NormalizationConfig::default();
        let gdb = Value {
            text: "{x = 1, y = 2}".into(),
            children: vec![var("x", "int", "1"), var("y", "int", "2")],
        };
        let lldb = Value {
            text: "{...}".into(),
            children: vec![var("x", "int", "1"), var("y", "int", "2")],
        };
        assert_eq!(
            value(&gdb, Some("struct p"), &cfg),
            value(&lldb, Some("struct p"), &cfg)
        );
        let off = NormalizationConfig::none();
        assert_ne!(
            value(&gdb, Some("struct p"), &off),
            value(&lldb, Some("struct p"), &off)
        );
    }

    #[test]
    fn undefined_javascript_bindings_are_dropped_and_not_taken_for_aggregates() {
        let js = |name: &str, ty: &str, text: &str| Variable {
            name: name.into(),
            type_name: Some(ty.into()),
            value: Value::scalar(text),
            kind: VariableKind::Local,
        };
        let s = ProgramState {
            location: Location::line("p.js", 3),
            reason: doppel_core::PauseReason::Breakpoint,
            call_stack: vec![],
            variables: vec![js("i", "undefined", "undefined"), js("n", "number", "3")],
            signal: None,
            return_value: None,
        };
        let n = state(&s, &NormalizationConfig::default());
        assert_eq!(n.variables.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["n"]);
        let mut keep = NormalizationConfig::default();
        keep.disable("undefined_bindings").unwrap();
        let n = state(&s, &keep);
        assert_eq!(n.variables[0].value.text, "undefined", "not a {{...}} placeholder");
    }

    #[test]
    fn node_global_and_chromium_window_read_the_same() {
        // As V8 renders them over CDP (`className`, `description`), with the
        // first own properties each engine lists.
        let node = Variable {
            name: "[0]".into(),
            type_name: Some("global".into()),
            value: Value {
                text: "global".into(),
                children: vec![var("clearImmediate", "function", "function clearImmediate(immediate)")],
            },
            kind: VariableKind::Local,
        };
        let chromium = Variable {
            type_name: Some("Window".into()),
            value: Value {
                text: "Window".into(),
                children: vec![
                    var("window", "Window", "Window"),
                    var("document", "HTMLDocument", "#document"),
                ],
            },
            ..node.clone()
        };
        let cfg = NormalizationConfig::default();
        assert_eq!(variable(&node, &cfg), variable(&chromium, &cfg));
        assert_eq!(variable(&node, &cfg).value.text, GLOBAL_OBJECT);
        // An ordinary object is not taken for the global one.
        let plain = Variable {
            type_name: Some("Object".into()),
            value: Value::scalar("Object"),
            ..node.clone()
        };
        assert_eq!(variable(&plain, &cfg).value.text, "{...}");
        let mut off = NormalizationConfig::default();
        off.disable("global_object").unwrap();
        assert_ne!(variable(&node, &off), variable(&chromium, &off));
    }

    #[test]
    fn anonymous_members_are_named_by_position_whatever_lldb_calls_them() {
        let cfg = NormalizationConfig::default();
        let member = |name: &str, text: &str| Variable {
            name: name.into(),
            type_name: Some("int".into()),
            value: Value::scalar(text),
            kind: VariableKind::Unknown,
        };
        let agg = |names: [&str; 2]| Value {
            text: String::new(),
            children: vec![member(names[0], "0"), member(names[1], "1")],
        };
        let gdb = value(&agg(["a", "[1]"]), Some("struct s"), &cfg);
        assert_eq!(value(&agg(["a", ""]), Some("struct s"), &cfg), gdb);
        assert_eq!(value(&agg(["a", "<null>"]), Some("struct s"), &cfg), gdb);
        assert_eq!(gdb.text, "{a=0, [1]=1}");
    }

    #[test]
    fn an_aggregate_below_the_expansion_depth_compares_as_a_placeholder() {
        let cfg = NormalizationConfig::default();
        // GDB prints the members inline; lldb-dap 22 the type name; 19 `type @ address`.
        let gdb = value(&Value::scalar("{ready = 0, mode = 0}"), Some("flags"), &cfg);
        let lldb22 = value(&Value::scalar("flags"), Some("flags"), &cfg);
        let lldb22_struct = value(&Value::scalar("flags"), Some("struct flags"), &cfg);
        let lldb19 = value(&Value::scalar("flags @ 0x7ffe3c"), Some("flags"), &cfg);
        assert_eq!(gdb.text, "{...}");
        assert_eq!(lldb22.text, "{...}");
        assert_eq!(lldb22_struct.text, "{...}");
        assert_eq!(lldb19.text, "{...}");
        // A scalar that happens to be spelled like its type is left alone
        // only when the rule is off.
        assert_eq!(
            value(&Value::scalar("flags"), Some("flags"), &NormalizationConfig::none()).text,
            "flags"
        );
        assert_eq!(value(&Value::scalar("3"), Some("int"), &cfg).text, "3");
    }

    #[test]
    fn frames_below_main_are_dropped_and_variables_sorted() {
        let f = |n: &str| Frame {
            function: n.into(),
            location: None,
        };
        let s = ProgramState {
            location: Location::line("p.c", 3),
            reason: PauseReason::Step,
            call_stack: vec![f("sq"), f("main"), f("__libc_start_call_main"), f("_start")],
            variables: vec![var("y", "int", "1"), var("x", "int", "2"), var("y", "int", "9")],
            signal: None,
            return_value: None,
        };
        let n = state(&s, &NormalizationConfig::default());
        assert_eq!(n.call_stack.len(), 2);
        assert_eq!(
            n.variables.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
            ["x", "y"]
        );
        assert_eq!(n.variables[1].value.text, "1", "first binding of a shadowed name wins");
        let raw = state(&s, &NormalizationConfig::none());
        assert_eq!(raw.call_stack.len(), 4);
    }

    #[test]
    fn types_and_char_arrays_are_spelled_alike() {
        assert_eq!(type_spelling("char [6]"), "char[6]");
        assert_eq!(type_spelling("struct node *"), "node*");
        assert_eq!(char_array_padding("\"ab\", '\\000' <repeats 14 times>"), "\"ab\"");
        assert_eq!(char_array_padding("\"ab\\000\\000\""), "\"ab\"");
        assert_eq!(char_array_padding("'\\000' <repeats 15 times>"), "\"\"");
        assert_eq!(type_spelling("struct point"), "point");
        assert_eq!(type_spelling("const struct node *"), "const node*");
    }

    #[test]
    fn shadowed_names_and_pointers_to_arrays_compare_alike() {
        let cfg = NormalizationConfig::default();
        assert_eq!(shadow_suffix("x @ scopes.c:11"), "x");
        assert_eq!(shadow_suffix("x"), "x");
        let lldb = Value {
            text: "0x00007fffffffeb80".into(),
            children: vec![var("[0]", "int", "1")],
        };
        let gdb = Value::scalar("0x7fffffffeb80");
        assert_eq!(
            value(&lldb, Some("int (*)[3]"), &cfg),
            value(&gdb, Some("int (*)[3]"), &cfg)
        );
    }

    #[test]
    fn gdb_entry_values_are_dropped() {
        let mut s = ProgramState {
            location: Location::line("printf.c", 28),
            reason: PauseReason::Step,
            call_stack: vec![],
            variables: vec![
                var("argc@entry", "int", "1"),
                var("format", "char *", "0x1"),
                var("<error>", "", "no variable information"),
            ],
            signal: None,
            return_value: None,
        };
        assert_eq!(state(&s, &NormalizationConfig::default()).variables.len(), 1);
        s.variables.truncate(1);
        assert_eq!(state(&s, &NormalizationConfig::none()).variables.len(), 1);
    }

    #[test]
    fn string_escapes_symbols_and_anonymous_types_compare_alike() {
        let cfg = NormalizationConfig::default();
        let v = |t: &str| value(&Value::scalar(t), Some("char[16]"), &cfg).text;
        assert_eq!(v(r#""\000\000\320\332\377\177""#), v(r#""\0\0\xd0\xda\xff\U0000007f""#));
        assert_eq!(v(r#""a\nb\"""#), r#""a\nb\"""#);
        let p = |t: &str| value(&Value::scalar(t), Some("char *"), &cfg).text;
        assert_eq!(
            p("0x7ffff7ffdad0 <_rtld_global+2736> \"\""),
            p("0x00007ffff7ffdad0 \"\"")
        );
        assert_eq!(type_spelling("struct {...}"), type_spelling("(unnamed struct)"));
        assert_eq!(type_spelling("union {...}"), type_spelling("(unnamed union)"));
    }

    #[test]
    fn long_arrays_anonymous_members_and_enum_flags_compare_alike() {
        let cfg = NormalizationConfig::default();
        let elems = |n: usize| (0..n).map(|i| var(&format!("[{i}]"), "int", "0")).collect::<Vec<_>>();
        let gdb = Value {
            text: "{0 <repeats 100 times>}".into(),
            children: elems(100),
        };
        let lldb = Value {
            text: "int[100] @ 0x1".into(),
            children: elems(64),
        };
        assert_eq!(
            value(&gdb, Some("int[100]"), &cfg),
            value(&lldb, Some("int[100]"), &cfg)
        );
        let g = Value {
            text: "{a = 0, {b = 1}}".into(),
            children: vec![var("a", "int", "0"), var("[1]", "", "1")],
        };
        let l = Value {
            text: "s @ 0x1".into(),
            children: vec![var("a", "int", "0"), var("", "", "1")],
        };
        assert_eq!(value(&g, Some("s"), &cfg), value(&l, Some("s"), &cfg));
        let e = |t: &str| value(&Value::scalar(t), Some("E"), &cfg).text;
        assert_eq!(e("(y | z | unknown: 0x7ffc)"), e("y | z | 0x7ffc"));
    }

    #[test]
    fn escapes_and_unavailable_values_compare_alike() {
        let cfg = NormalizationConfig::default();
        let c = |t: &str| value(&Value::scalar(t), Some("unsigned char"), &cfg).text;
        assert_eq!(c("247 '\\367'"), c("'\\xf7'"));
        assert_eq!(c("0 '\\000'"), "'\\x00'");
        let u = |t: &str| value(&Value::scalar(t), Some("int"), &cfg).text;
        assert_eq!(u("<optimized out>"), u("<error: variable not available>"));
    }

    #[test]
    fn unexpanded_aggregates_and_exponents_compare_alike() {
        let cfg = NormalizationConfig::default();
        let g = value(&Value::scalar("{ready = 0, mode = 0}"), Some("struct flags"), &cfg);
        let l = value(&Value::scalar("flags @ 0x7fffffffe608"), Some("flags"), &cfg);
        assert_eq!(g, l);
        assert_ne!(
            value(&Value::scalar("0x7fffffffe608 \"a @ 0x1\""), None, &cfg).text,
            "{...}"
        );
        assert_eq!(
            value(&Value::scalar("6.9533491761278071E-310"), Some("double"), &cfg).text,
            "6.9533491761278071e-310"
        );
        assert_eq!(number_format("ERROR"), "ERROR");
    }

    #[test]
    fn pointer_decorations_are_dropped_but_strings_kept() {
        assert_eq!(pointer_decoration("0x555555555139 <add>"), "0x555555555139");
        assert_eq!(
            pointer_decoration("0x0000555555555139 (prog`add at funcptr.c:6:30)"),
            "0x0000555555555139"
        );
        assert_eq!(pointer_decoration("(struct node *) 0x5555555592a0"), "0x5555555592a0");
        assert_eq!(
            pointer_decoration("{int (int, int)} 0x555555555139 <add>"),
            "0x555555555139"
        );
        assert_eq!(
            pointer_decoration("0x555555556004 \"probe\""),
            "0x555555556004 \"probe\""
        );
        assert_eq!(pointer_decoration("42"), "42");
    }

    #[test]
    fn disable_names_rules_and_rejects_unknown_ones() {
        let mut c = NormalizationConfig::default();
        c.disable("pointer_format, char_format").unwrap();
        assert!(!c.pointer_format && !c.char_format && c.frames_below_main);
        assert!(c.disable("nope").is_err());
        c.disable("all").unwrap();
        assert_eq!(c, NormalizationConfig::none());
    }
}
