//! The built-in function synthesizer (JEST, ICSE 2021, §III-A) and the spec
//! vocabulary the mutators draw from.
//!
//! The built-ins are not written down here: [`SpecVocabulary::from_engine262`]
//! walks engine262's global object once (own properties, recursively through
//! data properties and constructors' prototypes, well-known-symbol keys
//! included) and records every function with its `length` and whether it is
//! a constructor (`Reflect.construct` with it as `newTarget` succeeds). The
//! walk also gives the spec's property keys and well-known symbols; string
//! literals come from engine262's own source (`Value('...')` in its bundle)
//! and the catalogue's algorithm names. Built-ins of post-ES2025 proposals
//! that engine262 also implements are left out ([`POST_ES2025`]), as the
//! coverage catalogue leaves out their algorithms: the edition is pinned.
//!
//! [`builtin_programs`] then writes, per built-in, calls with 0 to
//! `length + 1` arguments (so optional and variadic parameters get values
//! and one extra argument is passed), with `new` as well for constructors,
//! prototype methods called on an instance (`new C()`) or another seed
//! value through `.call`, and arguments drawn from [`SEED_VALUES`].

use doppel_engines::engine::engine262::Engine262;
use doppel_engines::{EnginesConfig, Outcome, RunOptions};
use rand::Rng;
use rand::seq::IndexedRandom;
use serde::{Deserialize, Serialize};

/// One built-in function of engine262's realm.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Builtin {
    /// An expression that evaluates to it: `Array.prototype.join`,
    /// `RegExp.prototype[Symbol.replace]`, `Object.getPrototypeOf(Int8Array).from`.
    pub path: String,
    /// Its `length` property (ECMA-262 §18: required parameters).
    pub length: u32,
    /// Whether it has a [[Construct]] method.
    pub constructor: bool,
}

/// What the spec offers the generator: built-ins, keys, symbols, strings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecVocabulary {
    /// ES2025 built-in functions, in engine262's property order.
    pub builtins: Vec<Builtin>,
    /// String property keys of the built-ins (`length`, `prototype`, `lastIndex`).
    pub property_keys: Vec<String>,
    /// Well-known symbols as expressions (`Symbol.iterator`, ECMA-262 §6.1.5.1).
    pub symbols: Vec<String>,
    /// String values of the spec: engine262's string constants and algorithm names.
    pub strings: Vec<String>,
}

/// Names (substrings of a built-in's path) of what engine262 implements
/// beyond ES2025: Temporal, ShadowRealm, explicit resource management,
/// `Array.fromAsync`, `Error.isError`, `Math.sumPrecise`, upsert
/// (`getOrInsert`), joint iteration (`Iterator.zip`), `Promise.allKeyed`,
/// iterator chunking, sequencing and `includes`/`join`, Uint8Array base64,
/// JSON.parse source text access, `Date.prototype.toTemporalInstant`, and
/// the test262 host hooks (`print`, `$262`).
pub const POST_ES2025: &[&str] = &[
    "Temporal",
    "ShadowRealm",
    "Disposable",
    "Suppressed",
    "dispose",
    "Dispose",
    "fromAsync",
    "isError",
    "sumPrecise",
    "getOrInsert",
    "Iterator.zip",
    "Keyed",
    "chunks",
    "windows",
    "Iterator.concat",
    "Iterator.prototype.includes",
    "Iterator.prototype.join",
    "Base64",
    "Hex",
    "rawJSON",
    "RawJSON",
    "print",
    "$262",
];

/// Seed values of several types (JEST §III-A): primitives at boundaries,
/// objects with conversion hooks, arrays, functions, a regular expression,
/// collections.
pub const SEED_VALUES: &[&str] = &[
    "undefined",
    "null",
    "true",
    "0",
    "-0",
    "1",
    "-1",
    "1.5",
    "NaN",
    "Infinity",
    "2 ** 32",
    "1n",
    "''",
    "'abc'",
    "'1'",
    "Symbol('s')",
    "{}",
    "[]",
    "[1, 2, 3]",
    "{ a: 1, length: 2, 0: 'x' }",
    "{ valueOf() { return 7; } }",
    "{ toString() { return 'k'; } }",
    "function () { return 1; }",
    "(a, b) => b",
    "/a+/g",
    "new Map([[1, 2]])",
    "new Set([1])",
    "new ArrayBuffer(8)",
    "new Int8Array(4)",
    "Promise.resolve(1)",
    "{ a: { value: 1, writable: true }, b: { get: function () { return 2; }, enumerable: true } }",
    "new Proxy({}, {})",
];

const ENUMERATE: &str = r#"(function () {
  var out = { builtins: [], keys: [], symbols: [] };
  var seen = new Set(), keys = new Set();
  function isCtor(f) { try { Reflect.construct(String, [], f); return true; } catch (e) { return false; } }
  function visit(obj, path, depth) {
    if (obj === null || (typeof obj !== 'object' && typeof obj !== 'function') || seen.has(obj) || depth > 5) return;
    seen.add(obj);
    var names = Reflect.ownKeys(obj);
    for (var i = 0; i < names.length; i++) {
      var k = names[i], d = Object.getOwnPropertyDescriptor(obj, k), sub;
      if (typeof k === 'symbol') {
        if (!/^Symbol\.[a-zA-Z]+$/.test(k.description || '')) continue;
        sub = path + '[' + k.description + ']';
      } else {
        keys.add(k);
        sub = path ? (/^[A-Za-z_$][\w$]*$/.test(k) ? path + '.' + k : path + '[' + JSON.stringify(k) + ']') : k;
      }
      if (!('value' in d)) continue;
      var v = d.value;
      if (typeof v === 'function' && !seen.has(v)) out.builtins.push({ path: sub, length: v.length, constructor: isCtor(v) });
      visit(v, sub, depth + 1);
    }
    if (typeof obj === 'function') visit(Object.getPrototypeOf(obj), 'Object.getPrototypeOf(' + path + ')', depth + 1);
  }
  visit(globalThis, '', 0);
  out.keys = Array.from(keys);
  Reflect.ownKeys(Symbol).forEach(function (k) { if (typeof Symbol[k] === 'symbol') out.symbols.push('Symbol.' + k); });
  print(JSON.stringify(out));
})();"#;

#[derive(Serialize, Deserialize)]
struct Enumerated {
    builtins: Vec<Builtin>,
    keys: Vec<String>,
    symbols: Vec<String>,
}

/// The walk of engine262's realm, cached per engine262 version in the
/// engines cache (`engine262-VERSION-builtins.json`): it is slow in
/// coverage mode and its result depends only on the build. It runs on a
/// plain engine262 of the same build (`spec` names the version).
async fn walk(spec: &mut Engine262, cfg: &EnginesConfig) -> Result<Enumerated, String> {
    use doppel_engines::Engine;
    let cache = cfg
        .cache
        .join(format!("engine262-{}-builtins.json", spec.info().version));
    if let Ok(text) = std::fs::read_to_string(&cache)
        && let Ok(e) = serde_json::from_str::<Enumerated>(&text)
    {
        return Ok(e);
    }
    let opts = RunOptions {
        timeout: std::time::Duration::from_secs(300),
        output_cap: 4 << 20,
    };
    // On an engine262 of its own at the default evaluation budget: `spec`
    // may be the generator's, whose per-candidate budget (200,000
    // Evaluate() calls) the walk exceeds (a fresh machine, without the
    // cache, failed every generation campaign so).
    let mut plain = Engine262::new(cfg, false).map_err(|e| format!("engine262 built-in walk: {e}"))?;
    let r = plain.run_unchecked(ENUMERATE, &opts).await;
    if r.outcome != Outcome::Normal || r.output_cut {
        return Err(format!(
            "engine262 built-in walk: {} (output cut: {})",
            r.outcome.label(),
            r.output_cut
        ));
    }
    let e: Enumerated = serde_json::from_str(r.output.trim()).map_err(|e| format!("engine262 built-in walk: {e}"))?;
    // Best effort: a cache that cannot be written is walked again next time.
    if std::fs::create_dir_all(&cfg.cache).is_ok() {
        let tmp = cache.with_extension(format!("{}.tmp", std::process::id()));
        if let Ok(text) = serde_json::to_string(&e)
            && std::fs::write(&tmp, text).is_ok()
        {
            let _ = std::fs::rename(&tmp, &cache);
        }
    }
    Ok(e)
}

fn post_es2025(path: &str) -> bool {
    POST_ES2025.iter().any(|n| path.contains(n))
}

impl SpecVocabulary {
    /// Walks engine262's realm (one program run, then cached) and reads its string
    /// constants from the installed bundle (`cfg`), adding the catalogue's
    /// algorithm names when `spec` runs with coverage.
    ///
    /// Errors: engine262 did not run the walk normally, or its output was
    /// not the expected JSON.
    pub async fn from_engine262(spec: &mut Engine262, cfg: &EnginesConfig) -> Result<SpecVocabulary, String> {
        let e = walk(spec, cfg).await?;
        let builtins: Vec<Builtin> = e.builtins.into_iter().filter(|b| !post_es2025(&b.path)).collect();
        let mut strings: Vec<String> = Vec::new();
        let bundle = cfg
            .npm_package("@engine262/engine262")
            .join("lib")
            .join("engine262.mjs");
        if let Ok(text) = std::fs::read_to_string(&bundle) {
            strings.extend(value_constants(&text));
        }
        if let Ok(cat) = spec.catalogue().await {
            strings.extend(cat.algorithms.iter().map(|a| a.name.clone()));
        }
        strings.sort();
        strings.dedup();
        strings.retain(|s| !post_es2025(s));
        let mut property_keys = e.keys;
        property_keys.retain(|k| !post_es2025(k));
        let symbols = e.symbols.into_iter().filter(|s| !post_es2025(s)).collect();
        Ok(SpecVocabulary {
            builtins,
            property_keys,
            symbols,
            strings,
        })
    }
}

/// The string constants `Value('...')` / `Value("...")` of engine262's bundle
/// (spec strings such as `default`, `number`, `[object Undefined]`).
pub fn value_constants(bundle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in bundle.match_indices("Value(") {
        let rest = &bundle[i + 6..];
        let Some(q) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        let body = &rest[1..];
        if let Some(end) = body.find(q) {
            let s = &body[..end];
            if s.len() <= 40 && !s.contains('\\') && !s.contains('\n') {
                out.push(s.to_string());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A JavaScript string literal for `s` (single-quoted, escaped).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The owner expression of a prototype method (`Array` for
/// `Array.prototype.join`), if the path has a `.prototype.` segment.
fn prototype_owner(path: &str) -> Option<&str> {
    path.rfind(".prototype").map(|i| &path[..i]).filter(|o| !o.is_empty())
}

/// Calls of every built-in: for each, 0 to `min(length, 3) + 1` arguments,
/// plus `new` with the same arguments for constructors; each program
/// stores the result in `var result`. Arguments and receivers are drawn
/// with `rng` from [`SEED_VALUES`]; a prototype method's receiver is
/// `new Owner()` for even argument counts when the owner is a constructor.
pub fn builtin_programs<R: Rng>(vocab: &SpecVocabulary, rng: &mut R) -> Vec<String> {
    let owners: std::collections::BTreeMap<&str, bool> = vocab
        .builtins
        .iter()
        .map(|b| (b.path.as_str(), b.constructor))
        .collect();
    let mut out = Vec::new();
    for b in &vocab.builtins {
        let max = b.length.min(3) + 1;
        for n in 0..=max {
            let args: Vec<&str> = (0..n).map(|_| *SEED_VALUES.choose(rng).expect("non-empty")).collect();
            let args = args.join(", ");
            let call = match prototype_owner(&b.path) {
                Some(owner) => {
                    let receiver = if n % 2 == 0 && owners.get(owner) == Some(&true) {
                        format!("new {owner}()")
                    } else {
                        SEED_VALUES.choose(rng).expect("non-empty").to_string()
                    };
                    let sep = if args.is_empty() { "" } else { ", " };
                    format!("{}.call({receiver}{sep}{args})", b.path)
                }
                None => format!("{}({args})", b.path),
            };
            out.push(format!("var result = {call};"));
            if b.constructor && prototype_owner(&b.path).is_none() {
                out.push(format!("var result = new {}({args});", b.path));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn calls_cover_optional_and_variadic_arguments_and_new() {
        let vocab = SpecVocabulary {
            builtins: vec![
                Builtin {
                    path: "Array".into(),
                    length: 1,
                    constructor: true,
                },
                Builtin {
                    path: "Array.prototype.join".into(),
                    length: 1,
                    constructor: false,
                },
            ],
            ..SpecVocabulary::default()
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let p = builtin_programs(&vocab, &mut rng);
        // Array: 0, 1, 2 arguments, each called and constructed; join: 0, 1, 2 via .call.
        assert_eq!(p.len(), 9, "{p:#?}");
        assert!(p.iter().any(|s| s.starts_with("var result = new Array(")));
        assert!(p.contains(&"var result = Array();".to_string()));
        assert!(p.contains(&"var result = Array.prototype.join.call(new Array());".to_string()));
        assert_eq!(p.iter().filter(|s| s.starts_with("var result = Array(")).count(), 3);
        let mut again = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        assert_eq!(p, builtin_programs(&vocab, &mut again), "deterministic for a seed");
    }

    #[test]
    fn value_constants_are_read_from_the_bundle() {
        let text = "x = Value('number'); y = Value(\"default\"); z = Value(v); Value('number');";
        assert_eq!(value_constants(text), vec!["default", "number"]);
        assert_eq!(quote("it's"), "'it\\'s'");
    }
}
