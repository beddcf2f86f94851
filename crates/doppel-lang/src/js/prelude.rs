//! The determinism prelude: a classic script run before every JavaScript
//! subject, in the same global, that fixes time and randomness. Two runs of
//! a subject (under two debuggers, or twice under one) must compute the same
//! values, or every variable holding a time or a random number would show
//! as a divergence (DBDB, Lehmann & Pradel, FSE 2018, section 3.3 compares
//! program states between debuggers; section 5.1 runs deterministic
//! programs).
//!
//! What it changes:
//! - `Date`: `new Date()` and `Date()` (no arguments) give
//!   [`FIXED_EPOCH_MS`]; `Date.now()` returns it. `new Date(x)` and
//!   `new Date(y, m, ...)` behave as before; `Date.prototype` stays the same
//!   object (so programs that extend it, such as SunSpider's date-format
//!   tests, keep working, and `instanceof Date` holds), `Date.parse` and
//!   `Date.UTC` are the original functions, and subclasses still work.
//! - `Math.random`: a mulberry32 generator seeded with [`RANDOM_SEED`],
//!   restarted for every run.
//!
//! It is wrapped in a function, so it adds no global bindings, and it is a
//! script of its own, so the subject's line numbers do not move (see
//! `Subject::prelude`). It does not fix the time zone (`new Date("1/1/2007
//! 1:11:11")` reads local time): the runner sets `TZ=UTC`.

/// The fixed time, in milliseconds since the Unix epoch (UTC):
/// 2017-01-01T00:00:00Z, `Date.UTC(2017, 0, 1)`.
pub const FIXED_EPOCH_MS: i64 = 1_483_228_800_000;

/// The seed of `Math.random`'s generator (mulberry32, 32-bit state).
pub const RANDOM_SEED: u32 = 0x5EED_D0BB;

/// File name under which the prelude is written next to a subject.
pub const PRELUDE_FILE_NAME: &str = "doppel-determinism.js";

/// The determinism prelude, as JavaScript source (a classic script; no
/// global bindings of its own; ES2015 or later, for `Reflect.construct` and
/// `new.target`).
pub fn determinism_prelude() -> String {
    format!(
        r#"// doppel determinism prelude: fixed time and seeded randomness.
(function () {{
  "use strict";
  var FIXED_TIME = {FIXED_EPOCH_MS};
  var RealDate = Date;
  var define = function (obj, name, value) {{
    Object.defineProperty(obj, name, {{ value: value, writable: true, enumerable: false, configurable: true }});
  }};
  var FixedDate = function Date(a, b, c, d, e, f, g) {{
    if (new.target === undefined) {{
      return new RealDate(FIXED_TIME).toString();
    }}
    var args = arguments.length === 0 ? [FIXED_TIME] : Array.prototype.slice.call(arguments);
    return Reflect.construct(RealDate, args, new.target);
  }};
  Object.defineProperty(FixedDate, "prototype", {{ value: RealDate.prototype, writable: false, enumerable: false, configurable: false }});
  define(RealDate.prototype, "constructor", FixedDate);
  define(FixedDate, "now", function now() {{ return FIXED_TIME; }});
  define(FixedDate, "parse", RealDate.parse);
  define(FixedDate, "UTC", RealDate.UTC);
  define(globalThis, "Date", FixedDate);

  var state = {RANDOM_SEED} >>> 0;
  define(Math, "random", function random() {{
    state = (state + 0x6D2B79F5) >>> 0;
    var t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }});
}})();
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::syntax_errors;

    /// Writes `scripts` (file name, source) to a temporary directory and
    /// runs them under node in one global.
    fn run_node(scripts: &[(&str, &str)]) -> (Option<i32>, String, String) {
        let d = tempfile::tempdir().unwrap();
        let paths: Vec<_> = scripts
            .iter()
            .map(|(name, src)| {
                let p = d.path().join(name);
                std::fs::write(&p, src).unwrap();
                p
            })
            .collect();
        crate::js::testutil::run_node(&paths)
    }

    const PROBE: &str = r#"
var t0 = Date.now();
var later = [0, 0, 0].map(function () { return Date.now(); });
console.log(JSON.stringify({
  now: t0,
  stable: later.every(function (t) { return t === t0; }),
  newDate: new Date().getTime(),
  called: typeof Date() === "string" && Date() === new Date(t0).toString(),
  explicit: new Date(86400000).toISOString(),
  parts: new Date(2001, 1, 3).getDate(),
  parse: Date.parse("2001-02-03T00:00:00Z"),
  proto: new Date() instanceof Date && Object.getPrototypeOf(new Date()) === Date.prototype,
  ctor: new Date().constructor === Date,
  sub: (function () { class D extends Date { x() { return this.getTime(); } } return new D().x(); })(),
  random: [Math.random(), Math.random(), Math.random()],
  inRange: Array.from({ length: 1000 }, Math.random).every(function (r) { return r >= 0 && r < 1; }),
  globals: ["FIXED_TIME", "RealDate", "FixedDate", "state", "define"].filter(function (n) { return n in globalThis; })
}));
"#;

    #[test]
    fn prelude_is_a_valid_script() {
        assert_eq!(syntax_errors(&determinism_prelude()), Vec::<String>::new());
    }

    #[test]
    fn node_runs_are_repeatable_with_fixed_time_and_seeded_randomness() {
        let prelude = determinism_prelude();
        let scripts = [(PRELUDE_FILE_NAME, prelude.as_str()), ("probe.js", PROBE)];
        let (code1, out1, err1) = run_node(&scripts);
        assert_eq!(code1, Some(0), "{err1}");
        let (code2, out2, err2) = run_node(&scripts);
        assert_eq!(code2, Some(0), "{err2}");
        assert_eq!(out1, out2, "two runs print the same");
        let v: serde_json::Value = serde_json::from_str(out1.trim()).unwrap();
        assert_eq!(v["now"], FIXED_EPOCH_MS);
        assert_eq!(v["newDate"], FIXED_EPOCH_MS);
        assert_eq!(v["stable"], true);
        assert_eq!(v["called"], true);
        assert_eq!(v["explicit"], "1970-01-02T00:00:00.000Z");
        assert_eq!(v["parts"], 3);
        assert_eq!(v["parse"], 981158400000i64);
        assert_eq!(v["proto"], true);
        assert_eq!(v["ctor"], true);
        assert_eq!(v["sub"], FIXED_EPOCH_MS);
        assert_eq!(v["inRange"], true);
        assert_eq!(v["globals"], serde_json::json!([]), "no global bindings leak");
        let r = v["random"].as_array().unwrap();
        assert!(r[0] != r[1] && r[1] != r[2], "a sequence, not a constant: {r:?}");

        // Without the prelude the clock moves on.
        let (_, bare, _) = run_node(&[("probe.js", PROBE)]);
        let b: serde_json::Value = serde_json::from_str(bare.trim()).unwrap();
        assert_ne!(b["now"], FIXED_EPOCH_MS);
    }
}
