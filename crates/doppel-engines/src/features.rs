//! Feature probes: which ES2015..ES2025 features an engine supports, measured
//! by running a probe script in the engine itself and cached per engine version.
//!
//! Feature names are test262's `features:` tags (tc39/test262 `features.txt`)
//! where test262 has one, so a test262-format test is gated by its front
//! matter; the ES2015 baseline, which test262 does not tag, gets descriptive
//! names (`let`, `const`, `for-of`, ...). Syntax is probed by parsing a
//! function expression through indirect `eval` (a Script, so engine262's
//! `Function()`-body gap for `#x in o` does not count; shells without a
//! global `eval`, njs and mujs, parse through `Function`), library features by
//! `typeof`/behaviour checks. The probe script itself is ES5 so that ES5-level
//! engines (Duktape, mujs) can run it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How a probe checks its feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    /// The text parses as a function body.
    Syntax,
    /// The text, evaluated as a Script, gives `true`.
    Library,
    /// The text evaluates as a Script without throwing (for syntax only legal at a script's start).
    Script,
}

/// One probe: test262 feature tag, ECMAScript edition year, kind, JavaScript text.
pub type Probe = (&'static str, u16, ProbeKind, &'static str);

use ProbeKind::{Library as L, Script as R, Syntax as S};

/// Every probe, by edition. The pinned edition is ES2025 (../shared/notes/js-engines-measured.md §6.3).
pub const PROBES: &[Probe] = &[
    ("let", 2015, S, "let a = 1; { let a = 2; }"),
    ("const", 2015, S, "const a = 1;"),
    ("arrow-function", 2015, S, "var f = (a) => a;"),
    (
        "class",
        2015,
        S,
        "class A { m() {} } class B extends A { constructor() { super(); } }",
    ),
    ("template", 2015, S, "var t = `a${1}b`;"),
    ("destructuring-binding", 2015, S, "var {a, b: [c]} = {b: [1]};"),
    ("default-parameters", 2015, S, "function f(a = 1) {}"),
    ("rest-parameters", 2015, S, "function f(...a) {}"),
    ("computed-property-names", 2015, S, "var o = {['a' + 1]: 1};"),
    ("generators", 2015, S, "function* g() { yield 1; }"),
    ("for-of", 2015, S, "for (var x of []) {}"),
    ("new.target", 2015, S, "function f() { return new.target; }"),
    ("super", 2015, S, "var o = { m() { return super.x; } };"),
    (
        "Symbol",
        2015,
        L,
        "typeof Symbol === 'function' && typeof Symbol() === 'symbol'",
    ),
    (
        "Symbol.iterator",
        2015,
        L,
        "typeof Symbol === 'function' && typeof Symbol.iterator === 'symbol'",
    ),
    ("Promise", 2015, L, "typeof Promise === 'function'"),
    ("Proxy", 2015, L, "typeof Proxy === 'function'"),
    (
        "Reflect",
        2015,
        L,
        "typeof Reflect === 'object' && typeof Reflect.ownKeys === 'function'",
    ),
    ("Map", 2015, L, "typeof Map === 'function'"),
    ("Set", 2015, L, "typeof Set === 'function'"),
    ("WeakMap", 2015, L, "typeof WeakMap === 'function'"),
    ("WeakSet", 2015, L, "typeof WeakSet === 'function'"),
    (
        "TypedArray",
        2015,
        L,
        "typeof Uint8Array === 'function' && typeof DataView === 'function'",
    ),
    ("exponentiation", 2016, S, "var a = 2 ** 3;"),
    ("Array.prototype.includes", 2016, L, "typeof [].includes === 'function'"),
    ("async-functions", 2017, S, "async function f() { await 1; }"),
    ("SharedArrayBuffer", 2017, L, "typeof SharedArrayBuffer === 'function'"),
    ("Atomics", 2017, L, "typeof Atomics === 'object'"),
    ("object-spread", 2018, S, "var o = {...{}};"),
    ("object-rest", 2018, S, "var {...r} = {};"),
    (
        "async-iteration",
        2018,
        S,
        "async function* g() { for await (var x of []) {} }",
    ),
    ("regexp-named-groups", 2018, S, "var r = /(?<a>x)\\k<a>/;"),
    ("regexp-lookbehind", 2018, S, "var r = /(?<=a)b/;"),
    ("regexp-dotall", 2018, S, "var r = /./s;"),
    (
        "Promise.prototype.finally",
        2018,
        L,
        "typeof Promise === 'function' && typeof Promise.prototype.finally === 'function'",
    ),
    ("optional-catch-binding", 2019, S, "try {} catch {}"),
    ("Array.prototype.flat", 2019, L, "typeof [].flat === 'function'"),
    (
        "Object.fromEntries",
        2019,
        L,
        "typeof Object.fromEntries === 'function'",
    ),
    ("string-trimming", 2019, L, "typeof ''.trimEnd === 'function'"),
    (
        "Symbol.prototype.description",
        2019,
        L,
        "typeof Symbol === 'function' && Symbol('a').description === 'a'",
    ),
    ("optional-chaining", 2020, S, "var a = null; a?.b; a?.[0]; a?.();"),
    ("coalesce-expression", 2020, S, "var a = null ?? 1;"),
    ("dynamic-import", 2020, S, "import('x');"),
    ("BigInt", 2020, S, "var a = 1n + BigInt(2);"),
    // Not a test262 feature name: BigInt and TypedArray both, which Rhino
    // 1.7.14 has without BigInt64Array.
    ("BigInt64Array", 2020, L, "typeof BigInt64Array === 'function'"),
    (
        "Promise.allSettled",
        2020,
        L,
        "typeof Promise === 'function' && typeof Promise.allSettled === 'function'",
    ),
    ("globalThis", 2020, L, "typeof globalThis === 'object'"),
    (
        "String.prototype.matchAll",
        2020,
        L,
        "typeof ''.matchAll === 'function'",
    ),
    (
        "logical-assignment-operators",
        2021,
        S,
        "var a; a ||= 1; a &&= 2; a ??= 3;",
    ),
    ("numeric-separator-literal", 2021, S, "var a = 1_000;"),
    (
        "Promise.any",
        2021,
        L,
        "typeof Promise === 'function' && typeof Promise.any === 'function'",
    ),
    (
        "String.prototype.replaceAll",
        2021,
        L,
        "typeof ''.replaceAll === 'function'",
    ),
    ("WeakRef", 2021, L, "typeof WeakRef === 'function'"),
    ("AggregateError", 2021, L, "typeof AggregateError === 'function'"),
    (
        "FinalizationRegistry",
        2021,
        L,
        "typeof FinalizationRegistry === 'function'",
    ),
    ("class-fields-public", 2022, S, "class A { x = 1; static y = 2; }"),
    (
        "class-fields-private",
        2022,
        S,
        "class A { #x = 1; m() { return this.#x; } }",
    ),
    ("class-methods-private", 2022, S, "class A { #m() {} static #n() {} }"),
    ("class-static-block", 2022, S, "class A { static { } }"),
    (
        "class-fields-private-in",
        2022,
        S,
        "class A { #x; m(o) { return #x in o; } }",
    ),
    ("Array.prototype.at", 2022, L, "typeof [].at === 'function'"),
    ("Object.hasOwn", 2022, L, "typeof Object.hasOwn === 'function'"),
    ("error-cause", 2022, L, "new Error('a', {cause: 1}).cause === 1"),
    ("regexp-match-indices", 2022, S, "var r = /a/d;"),
    ("array-find-from-last", 2023, L, "typeof [].findLast === 'function'"),
    ("change-array-by-copy", 2023, L, "typeof [].toSorted === 'function'"),
    ("hashbang", 2023, R, "#!doppel\n0"),
    (
        "symbols-as-weakmap-keys",
        2023,
        L,
        "new WeakMap().set(Symbol('k'), 1).has !== undefined",
    ),
    (
        "resizable-arraybuffer",
        2024,
        L,
        "typeof ArrayBuffer.prototype.resize === 'function'",
    ),
    ("array-grouping", 2024, L, "typeof Object.groupBy === 'function'"),
    (
        "promise-with-resolvers",
        2024,
        L,
        "typeof Promise === 'function' && typeof Promise.withResolvers === 'function'",
    ),
    ("regexp-v-flag", 2024, S, "var r = /[\\p{L}--[a-z]]/v;"),
    (
        "String.prototype.isWellFormed",
        2024,
        L,
        "typeof ''.isWellFormed === 'function'",
    ),
    (
        "String.prototype.toWellFormed",
        2024,
        L,
        "typeof ''.toWellFormed === 'function'",
    ),
    (
        "arraybuffer-transfer",
        2024,
        L,
        "typeof ArrayBuffer.prototype.transfer === 'function'",
    ),
    (
        "set-methods",
        2025,
        L,
        "typeof Set === 'function' && typeof Set.prototype.union === 'function'",
    ),
    (
        "iterator-helpers",
        2025,
        L,
        "typeof Iterator === 'function' && typeof Iterator.prototype.map === 'function'",
    ),
    (
        "promise-try",
        2025,
        L,
        "typeof Promise === 'function' && typeof Promise.try === 'function'",
    ),
    ("RegExp.escape", 2025, L, "typeof RegExp.escape === 'function'"),
    (
        "Float16Array",
        2025,
        L,
        "typeof Float16Array === 'function' && typeof Math.f16round === 'function'",
    ),
    ("regexp-modifiers", 2025, S, "var r = /(?i:a)b/;"),
    ("import-attributes", 2025, S, "import('x', { with: {} });"),
    ("regexp-duplicate-named-groups", 2025, S, "var r = /(?<a>x)|(?<a>y)/;"),
];

/// Features a conforming host may leave out (SharedArrayBuffer and Atomics
/// need cross-origin isolation in browsers; engine262 and PythonMonkey lack
/// them): probed and gated on, but not held against an engine's level.
pub const HOST_OPTIONAL: &[&str] = &["SharedArrayBuffer", "Atomics"];

/// The first and last edition probed.
pub const EDITIONS: std::ops::RangeInclusive<u16> = 2015..=2025;

/// The marker at the start of each probe output line: `doppel-feature NAME 0|1`.
const MARK: &str = "doppel-feature ";

/// The probe script: ES5, prints one `doppel-feature NAME 0|1` line per probe.
pub fn probe_script() -> String {
    let mut s = String::from("var doppelProbes = [\n");
    for (name, _, kind, text) in PROBES {
        let k = match kind {
            S => "s",
            L => "l",
            R => "r",
        };
        s.push_str(&format!(
            "  [{}, {}, {}],\n",
            serde_json::to_string(name).unwrap(),
            serde_json::to_string(k).unwrap(),
            serde_json::to_string(text).unwrap()
        ));
    }
    s.push_str(
        r#"];
// Indirect eval (a Script: engine262 rejects `#x in o` only in Function
// bodies); shells without a usable global eval (njs, mujs) fall back to Function.
var doppelEval = (function () {
  try {
    var g = Function("return this")(), e = g["ev" + "al"];
    if (typeof e === "function" && e("1") === 1) return e;
  } catch (x) {}
  return null;
})();
for (var doppelI = 0; doppelI < doppelProbes.length; doppelI++) {
  var doppelP = doppelProbes[doppelI], doppelOk = false;
  try {
    if (doppelP[1] === "s") {
      if (doppelEval) doppelEval("0, function () {\n" + doppelP[2] + "\n}");
      else Function(doppelP[2]);
      doppelOk = true;
    } else if (doppelP[1] === "r") {
      if (doppelEval) { doppelEval(doppelP[2]); doppelOk = true; }
    } else {
      doppelOk = Function("return (" + doppelP[2] + ");")() === true;
    }
  } catch (doppelE) { doppelOk = false; }
  print("doppel-feature " + doppelP[0] + " " + (doppelOk ? 1 : 0));
}
"#,
    );
    s
}

/// A hash of the probe script (first 12 hex digits): part of the cache key, so
/// changing a probe re-measures every engine.
pub fn probe_hash() -> String {
    let digest = Sha256::digest(probe_script().as_bytes());
    hex::encode(digest)[..12].to_string()
}

/// An engine's measured features.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureSet {
    /// Engine name (registry name).
    pub engine: String,
    /// Engine version the probe ran on.
    pub version: String,
    /// [`probe_hash`] of the probe that measured it.
    pub probe: String,
    /// Feature tag to supported.
    pub supported: BTreeMap<String, bool>,
}

impl FeatureSet {
    /// Reads the probe's printed output. Errors: a probe line missing (the
    /// engine stopped early), with the first missing feature.
    pub fn from_output(engine: &str, version: &str, output: &str) -> Result<Self, String> {
        let mut supported = BTreeMap::new();
        for line in output.lines() {
            if let Some(rest) = line.trim().strip_prefix(MARK)
                && let Some((name, v)) = rest.rsplit_once(' ')
            {
                supported.insert(name.to_string(), v == "1");
            }
        }
        if let Some((missing, ..)) = PROBES.iter().find(|p| !supported.contains_key(p.0)) {
            return Err(format!(
                "the feature probe stopped before {missing:?} ({} of {} answered)",
                supported.len(),
                PROBES.len()
            ));
        }
        Ok(Self {
            engine: engine.into(),
            version: version.into(),
            probe: probe_hash(),
            supported,
        })
    }

    /// The features in `wanted` this engine lacks. A tag no probe measures is
    /// not held against the engine.
    pub fn lacking(&self, wanted: &[String]) -> Vec<String> {
        wanted
            .iter()
            .filter(|f| self.supported.get(f.as_str()) == Some(&false))
            .cloned()
            .collect()
    }

    /// (supported, probed) per edition year, without [`HOST_OPTIONAL`] features.
    pub fn by_edition(&self) -> BTreeMap<u16, (usize, usize)> {
        let mut m = BTreeMap::new();
        for (name, year, ..) in PROBES.iter().filter(|p| !HOST_OPTIONAL.contains(&p.0)) {
            let e = m.entry(*year).or_insert((0, 0));
            e.1 += 1;
            if self.supported.get(*name) == Some(&true) {
                e.0 += 1;
            }
        }
        m
    }

    /// The newest edition E such that every probed feature of E and all older
    /// editions is supported (`None`: not even ES2015 complete, an ES5-level engine).
    pub fn level(&self) -> Option<u16> {
        let mut level = None;
        for (year, (ok, all)) in self.by_edition() {
            if ok < all {
                break;
            }
            level = Some(year);
        }
        level
    }

    /// `ES2025 (78/78)`, `ES5 (3/78)`, `ES2022, 71/78`: the level and the total count.
    pub fn summary(&self) -> String {
        let ok = self.supported.values().filter(|v| **v).count();
        let level = self.level().map_or("ES5".to_string(), |y| format!("ES{y}"));
        format!("{level} complete, {ok}/{} features", PROBES.len())
    }
}

/// Where a feature set is cached: `<cache>/features/<engine>-<version>-<probe hash>.json`.
pub fn cache_path(cache_dir: &Path, engine: &str, version: &str) -> PathBuf {
    let clean: String = version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    cache_dir
        .join("features")
        .join(format!("{engine}-{clean}-{}.json", probe_hash()))
}

/// The cached feature set, if one is stored for this engine version and probe.
/// A set measured with another list of probes (an older doppel's) is stale:
/// `None`, so the engine is probed again.
pub fn load_cached(cache_dir: &Path, engine: &str, version: &str) -> Option<FeatureSet> {
    let text = std::fs::read_to_string(cache_path(cache_dir, engine, version)).ok()?;
    let set: FeatureSet = serde_json::from_str(&text).ok()?;
    let current = set.supported.len() == PROBES.len() && PROBES.iter().all(|p| set.supported.contains_key(p.0));
    current.then_some(set)
}

/// Stores a feature set in the cache (best effort: a read-only cache only
/// means probing again next time).
pub fn store(cache_dir: &Path, set: &FeatureSet) {
    let path = cache_path(cache_dir, &set.engine, &set.version);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(text) = serde_json::to_string_pretty(set) {
        let _ = std::fs::write(path, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_names_are_unique_and_editions_in_range() {
        let mut names: Vec<_> = PROBES.iter().map(|p| p.0).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PROBES.len());
        assert!(PROBES.iter().all(|p| EDITIONS.contains(&p.1)));
    }

    #[test]
    fn output_parsing_and_level() {
        let mut out = String::new();
        for (name, year, ..) in PROBES {
            out.push_str(&format!("{MARK}{name} {}\n", u8::from(*year <= 2019)));
        }
        let set = FeatureSet::from_output("e", "1", &out).unwrap();
        assert_eq!(set.level(), Some(2019));
        assert_eq!(
            set.lacking(&["optional-chaining".into(), "let".into(), "unknown-tag".into()]),
            vec!["optional-chaining".to_string()]
        );
        let cut: String = out.lines().take(3).map(|l| format!("{l}\n")).collect();
        assert!(FeatureSet::from_output("e", "1", &cut).is_err());
    }
}
