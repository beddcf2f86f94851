//! Strict mode for `onlyStrict` test262 tests without moving a line or a
//! column of code (issue 17 part 3).

/// What an `onlyStrict` test262 test gets in front of its first line: a
/// directive prologue of its own (ECMA-262 section 11.2.1), so the whole
/// script is strict mode code, as test262's runners make it.
pub const STRICT_PREFIX: &str = "\"use strict\"; ";

/// `source` made strict mode code by [`STRICT_PREFIX`] in front of line 1,
/// when line 1 holds no code (blank, a `//` comment, or a `/*` comment that
/// does not end before code on that line): then every line keeps its
/// number and every token its column. Errors: the reason, when line 1
/// holds code (its columns would move).
pub fn strict_prefixed(source: &str) -> Result<String, String> {
    let first = source.split(['\n', '\r']).next().unwrap_or("").trim_start();
    let no_code = first.is_empty()
        || first.starts_with("//")
        || first
            .strip_prefix("/*")
            .is_some_and(|rest| rest.split_once("*/").is_none_or(|(_, after)| after.trim().is_empty()));
    if no_code {
        Ok(format!("{STRICT_PREFIX}{source}"))
    } else {
        Err(
            "flag onlyStrict, and line 1 holds code: a \"use strict\" directive in front of it \
             would move its columns"
                .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_prefix_only_in_front_of_a_line_without_code() {
        for ok in ["// c\nx;", "/*---\n---*/\nx;", "\nx;", "/* a */ \nx;", "  // c"] {
            assert_eq!(strict_prefixed(ok).unwrap(), format!("{STRICT_PREFIX}{ok}"), "{ok:?}");
        }
        for bad in ["x; // c", "/* a */ x;\n", "'use strict';"] {
            assert!(strict_prefixed(bad).is_err(), "{bad:?}");
        }
    }
}
