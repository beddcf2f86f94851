//! Values as the Firefox backend reports them (step 6 of `mod.rs`):
//! grips rendered as `v8.rs` renders V8's remote objects, function headers
//! from the source text, console and error lines.

use super::*;

/// A number as JavaScript's `String(x)` writes it.
pub fn js_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    // Shortest round-trip digits and exponent: "d.ddde-7".
    let e_form = format!("{:e}", x.abs());
    let (mantissa, exp) = e_form.split_once('e').unwrap_or((&e_form, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    let n = exp.parse::<i32>().unwrap_or(0) + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let es = if e >= 0 { format!("+{e}") } else { e.to_string() };
        if k == 1 {
            format!("{digits}e{es}")
        } else {
            format!("{}.{}e{es}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

/// The text and type of a value grip, as [`v8::render`] renders the same
/// value from V8: strings JSON-quoted, numbers as JavaScript writes them,
/// `undefined`, `null`, `5n`, `Symbol(s)`; objects by V8's description
/// (`Object`, `Array(3)`, `Map(2)`), functions by their header
/// (`function square(x)`, rebuilt from the grip's name and parameter names).
pub fn grip_text(grip: &Json) -> (String, Option<String>) {
    let (text, ty): (String, &str) = match grip {
        Json::String(s) => (serde_json::to_string(s).unwrap_or_default(), "string"),
        Json::Number(n) => (js_number(n.as_f64().unwrap_or(f64::NAN)), "number"),
        Json::Bool(b) => (b.to_string(), "boolean"),
        Json::Null => ("null".into(), "null"),
        Json::Array(_) => (grip.to_string(), "?"),
        Json::Object(_) => match grip["type"].as_str().unwrap_or("?") {
            "undefined" => ("undefined".into(), "undefined"),
            "null" if grip["optimizedOut"] == true || grip["missingArguments"] == true => {
                ("<optimized out>".into(), "undefined")
            }
            "null" if grip["uninitialized"] == true => ("<uninitialized>".into(), "undefined"),
            "null" => ("null".into(), "null"),
            t @ ("NaN" | "Infinity" | "-Infinity" | "-0") => (t.to_string(), "number"),
            "BigInt" => (format!("{}n", grip["text"].as_str().unwrap_or("?")), "bigint"),
            "symbol" => (format!("Symbol({})", grip["name"].as_str().unwrap_or("")), "symbol"),
            "longString" => (
                serde_json::to_string(grip["initial"].as_str().unwrap_or("")).unwrap_or_default(),
                "string",
            ),
            "optimizedOut" => ("<optimized out>".into(), "undefined"),
            "uninitialized" => ("<uninitialized>".into(), "undefined"),
            "object" => return object_text(grip),
            other => (other.to_string(), "?"),
        },
    };
    (text, Some(ty.to_string()))
}

/// The text and type of an object grip (see [`grip_text`]).
pub(super) fn object_text(grip: &Json) -> (String, Option<String>) {
    let class = grip["class"].as_str().unwrap_or("Object");
    let preview = &grip["preview"];
    if class == "Function" {
        let name = grip["name"].as_str().or(grip["displayName"].as_str()).unwrap_or("");
        let params: Vec<&str> = grip["parameterNames"]
            .as_array()
            .map(|a| a.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        let text = if grip["isClassConstructor"] == true {
            format!("class {name}")
        } else if grip["isArrow"] == true {
            format!("({}) =>", params.join(", "))
        } else {
            let star = if grip["isGenerator"] == true { "*" } else { "" };
            let asyn = if grip["isAsync"] == true { "async " } else { "" };
            format!("{asyn}function{star} {name}({})", params.join(", "))
        };
        return (text, Some("function".into()));
    }
    let text = match class {
        "Array" => format!("Array({})", preview["length"].as_u64().unwrap_or(0)),
        "Map" | "Set" | "WeakMap" | "WeakSet" if preview["size"].is_u64() => {
            format!("{class}({})", preview["size"])
        }
        "RegExp" => grip["displayString"].as_str().unwrap_or("RegExp").to_string(),
        _ if grip["isError"] == true || preview["kind"] == "Error" => {
            let name = preview["name"].as_str().unwrap_or(class);
            match preview["message"].as_str() {
                Some(m) if !m.is_empty() => format!("{name}: {m}"),
                _ => name.to_string(),
            }
        }
        _ => class.to_string(),
    };
    (text, Some(class.to_string()))
}

/// V8's header of a function (its description up to the body: the first
/// line of the source text before the first `{`, at most 100 characters).
pub(super) fn v8_head(text: &str) -> String {
    let head = text.split('{').next().unwrap_or(text);
    let head = head.lines().next().unwrap_or(head).trim();
    head.chars().take(100).collect()
}

/// The end (byte offset) of a concise arrow body starting at `text`: the
/// first `,`, `;` or line end outside brackets and strings, or an unopened
/// closing bracket.
pub(super) fn arrow_end(text: &str) -> usize {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth < 0 {
                    return i;
                }
            }
            ',' | ';' | '\n' if depth == 0 => return i,
            _ => {}
        }
    }
    text.len()
}

/// The header V8 shows for a function, from its source text: `lines` are
/// the lines of its file, `line` (1-based) and `column` (0-based, where
/// SpiderMonkey starts the function: its parameters) from the grip's
/// `location`. `function square(x)`, `async function* gen(u)`,
/// `function (q)`, `m(a, b)` for a method, `(x) => x + 1` for an arrow.
/// `None` when the location is not in the text.
pub fn function_head(lines: &[&str], line: usize, column: usize, is_async: bool) -> Option<String> {
    let text = lines.get(line.checked_sub(1)?)?;
    let split = text.char_indices().nth(column).map_or(text.len(), |(i, _)| i);
    let (before, _) = text.split_at(split);
    let after: String = std::iter::once(&text[split..])
        .chain(lines[line..].iter().copied())
        .collect::<Vec<&str>>()
        .join("\n");
    // The parameters: balanced parentheses, or one identifier (`x => ...`).
    let params_end = if after.starts_with('(') {
        let mut depth = 0;
        after
            .char_indices()
            .find_map(|(i, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i + 1)
            })
            .unwrap_or(after.len())
    } else {
        after
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(after.len())
    };
    if after[params_end..].trim_start().starts_with("=>") {
        let end = arrow_end(&after);
        let prefix = if is_async { "async " } else { "" };
        return Some(v8_head(&format!("{prefix}{}", after[..end].trim_end())));
    }
    let start = match before.rfind("function") {
        Some(i) => {
            let pre = before[..i].trim_end();
            if pre.ends_with("async") {
                pre.len() - "async".len()
            } else {
                i
            }
        }
        None => {
            // A method: its name right before the parameters.
            let name_end = before.trim_end().len();
            before[..name_end]
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '*' || c == '#'))
                .map_or(0, |i| i + 1)
        }
    };
    Some(v8_head(&format!("{}{after}", &before[start..])))
}

/// [`function_head`], only when the text at `line`:`column` is the start
/// of the parameters of a function with `params` (the grip's
/// `parameterNames`; `None` for a destructuring parameter): the position
/// is inside the line, a `(` starts there (or the only parameter's name:
/// an arrow without parentheses), and the named parameters appear, in
/// order, among the identifiers of the parameter list. `None` otherwise: the text is not the
/// function's. Firefox ESR 153 sometimes gives a function of a large
/// script the URL of the page's first script (the pause at each script's
/// first statement seems to be needed; campaign run 6972), with the right
/// line and column.
pub fn checked_function_head(
    lines: &[&str],
    line: usize,
    column: usize,
    is_async: bool,
    params: &[Option<&str>],
) -> Option<String> {
    let text = lines.get(line.checked_sub(1)?)?;
    let rest: String = text.chars().skip(column).collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    if rest.starts_with('(') {
        // The parameter list: up to the balancing `)`, across lines.
        let mut list = String::new();
        let mut depth = 0i32;
        'lines: for l in std::iter::once(rest.as_str()).chain(lines[line..].iter().copied()) {
            for c in l.chars() {
                list.push(c);
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break 'lines;
                        }
                    }
                    _ => {}
                }
            }
            list.push('\n');
        }
        let mut words = list.split(|c: char| !ident(c)).filter(|w| !w.is_empty());
        if !params.iter().flatten().all(|p| words.any(|w| w == *p)) {
            return None;
        }
    } else {
        // Only a single arrow parameter stands without parentheses.
        let word: String = rest.chars().take_while(|c| ident(*c)).collect();
        if word.is_empty() || params != [Some(word.as_str())] {
            return None;
        }
    }
    function_head(lines, line, column, is_async)
}

/// Plain objects and arrays are expanded; other objects are shown by their
/// description only (as in [`v8`]).
pub(super) fn expandable(grip: &Json) -> bool {
    grip["type"] == "object" && matches!(grip["class"].as_str(), Some("Object" | "Array"))
}

/// One line of program output for a `console-message` resource.
pub(super) fn console_line(msg: &Json) -> String {
    let args = msg["arguments"].as_array().cloned().unwrap_or_default();
    let parts: Vec<String> = args
        .iter()
        .map(|a| match a {
            Json::String(s) => s.clone(),
            Json::Object(_) if a["type"] == "longString" => a["initial"].as_str().unwrap_or("").to_string(),
            _ => grip_text(a).0,
        })
        .collect();
    format!("{}\n", parts.join(" "))
}

/// One line of program output for an `error-message` resource that is an
/// error (`None` for warnings).
pub(super) fn error_line(msg: &Json) -> Option<String> {
    let e = &msg["pageError"];
    if e["warning"] == true || e["info"] == true {
        return None;
    }
    let text = e["errorMessage"].as_str().unwrap_or("uncaught exception");
    let text = text.lines().next().unwrap_or(text);
    if text.starts_with("Uncaught ") || text.starts_with("uncaught ") {
        Some(format!("{text}\n"))
    } else {
        Some(format!("Uncaught {text}\n"))
    }
}
