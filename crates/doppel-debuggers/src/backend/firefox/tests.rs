//! Unit tests of the Firefox backend's pure parts.

use super::*;

fn positions() -> BTreeMap<u32, Vec<u32>> {
    parse_positions(&json!({"positions": {"2": [12], "9": [27, 17, 20], "11": [8, 17], "16": [0]}}))
}

#[test]
fn a_click_takes_the_first_position_of_a_breakable_line_only() {
    let p = positions();
    let lines = [2, 9, 11, 16];
    assert_eq!(choose_position(&p, &lines, 11, None), Ok((11, 8)));
    assert_eq!(choose_position(&p, &lines, 9, None), Ok((9, 17)));
    assert_eq!(choose_position(&p, &lines, 11, Some(18)), Ok((11, 17)));
    assert!(choose_position(&p, &lines, 11, Some(10)).is_err());
    let comment = choose_position(&p, &lines, 10, None).unwrap_err();
    assert!(comment.contains("not breakable"), "{comment}");
    assert!(choose_position(&p, &lines, 500, None).is_err());
}

#[test]
fn numbers_are_written_as_javascript_writes_them() {
    for (x, s) in [
        (0.0, "0"),
        (-0.0, "-0"),
        (5.0, "5"),
        (-1.5, "-1.5"),
        (0.1, "0.1"),
        (1e21, "1e+21"),
        (123456789012345680000.0, "123456789012345680000"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (1e-7, "1e-7"),
        (f64::NAN, "NaN"),
        (f64::NEG_INFINITY, "-Infinity"),
    ] {
        assert_eq!(js_number(x), s, "{x}");
    }
}

#[test]
fn grips_render_as_v8_renders_the_same_values() {
    let t = |g: Json| grip_text(&g).0;
    assert_eq!(t(json!("pr\"obé")), "\"pr\\\"obé\"");
    assert_eq!(t(json!(3)), "3");
    assert_eq!(t(json!({"type": "-0"})), "-0");
    assert_eq!(t(json!({"type": "undefined"})), "undefined");
    assert_eq!(t(json!({"type": "null"})), "null");
    assert_eq!(t(json!({"type": "null", "optimizedOut": true})), "<optimized out>");
    assert_eq!(t(json!(true)), "true");
    assert_eq!(t(json!({"type": "BigInt", "text": "5"})), "5n");
    assert_eq!(
        grip_text(
            &json!({"type": "object", "class": "Array", "actor": "a", "preview": {"kind": "ArrayLike", "length": 2}})
        ),
        ("Array(2)".into(), Some("Array".into()))
    );
    assert_eq!(
        grip_text(&json!({"type": "object", "class": "Object", "actor": "o"})),
        ("Object".into(), Some("Object".into()))
    );
    assert_eq!(
        t(json!({"type": "object", "class": "Function", "name": "square", "parameterNames": ["x"]})),
        "function square(x)"
    );
}

#[test]
fn function_headers_come_from_the_source_text_as_in_v8() {
    let src = "function square(x) {\n    return x;\n}\nconst arrow = (x) => x + 1;\nconst obj = { m(a, b) { return a; }, n: function (q) {} };\nasync function* gen(u) {}\nxs.push((x) => x + i);\nconst one = y => [y, 1];";
    let lines: Vec<&str> = src.lines().collect();
    let h = |l, c, a| function_head(&lines, l, c, a).unwrap();
    assert_eq!(h(1, 15, false), "function square(x)");
    assert_eq!(h(4, 14, false), "(x) => x + 1");
    assert_eq!(h(5, 15, false), "m(a, b)");
    assert_eq!(h(5, 49, false), "function (q)");
    assert_eq!(h(6, 19, true), "async function* gen(u)");
    assert_eq!(h(7, 8, false), "(x) => x + i");
    assert_eq!(h(8, 12, false), "y => [y, 1]");
    assert_eq!(function_head(&lines, 99, 0, false), None);
}

#[test]
fn a_header_is_taken_only_where_the_functions_parameters_start() {
    let src = "function square(x) {\n    return x;\n}\nvar f = function (tri, pos) {};\nconst one = y => [y, 1];\nfunction d({ a }, b) {}";
    let lines: Vec<&str> = src.lines().collect();
    let h = |l, c, p: &[Option<&str>]| checked_function_head(&lines, l, c, false, p);
    assert_eq!(h(1, 15, &[Some("x")]).as_deref(), Some("function square(x)"));
    assert_eq!(
        h(4, 17, &[Some("tri"), Some("pos")]).as_deref(),
        Some("function (tri, pos)")
    );
    assert_eq!(h(5, 12, &[Some("y")]).as_deref(), Some("y => [y, 1]"));
    // A destructuring parameter has no name.
    assert_eq!(h(6, 10, &[None, Some("b")]).as_deref(), Some("function d("));
    // Not this function's text: other parameters, order, a position
    // that is not a parameter list, past the line or the file.
    assert_eq!(h(1, 15, &[Some("tri")]), None);
    assert_eq!(h(4, 17, &[Some("pos"), Some("tri")]), None);
    assert_eq!(h(2, 4, &[]), None);
    assert_eq!(h(3, 1, &[]), None);
    assert_eq!(h(99, 0, &[]), None);
}

#[test]
fn console_messages_and_errors_become_output_lines() {
    let m = json!({"arguments": ["probé", 5, {"type": "object", "class": "Object", "actor": "o"}]});
    assert_eq!(console_line(&m), "probé 5 Object\n");
    let e = json!({"pageError": {"errorMessage": "Error: boom", "warning": false}});
    assert_eq!(error_line(&e).as_deref(), Some("Uncaught Error: boom\n"));
    let w = json!({"pageError": {"errorMessage": "unreachable code", "warning": true}});
    assert_eq!(error_line(&w), None);
}

#[test]
fn the_page_loads_every_file_in_order_then_logs_the_marker() {
    let a = PathBuf::from("/t/pre lude.js");
    let b = PathBuf::from("/t/prog.js");
    let html = page_html(&[&a, &b], "console.log(\"__doppel_done_1\");");
    let pre = html.find("file:///t/pre%20lude.js").unwrap();
    let prog = html.find("file:///t/prog.js").unwrap();
    let done = html.find("__doppel_done_1").unwrap();
    assert!(pre < prog && prog < done, "{html}");
}
