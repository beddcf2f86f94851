//! Assertion injection on hand-written programs with known final states, run
//! in the real engine262 (installed by scripts/deps/setup-engines.sh).

use doppel_conform::inject::{AssertionKind, Injection, Limits, State, Value, assertions, inspect};
use doppel_engines::engine::engine262::Engine262;
use doppel_engines::{Engine, EnginesConfig, Outcome, RunOptions};

/// Generous: engine262 on a loaded 2-core machine evaluates as few as 10^4 nodes a second.
fn opts() -> RunOptions {
    RunOptions {
        timeout: std::time::Duration::from_secs(30),
        ..RunOptions::default()
    }
}

async fn state_of(engine: &mut Engine262, program: &str) -> Injection {
    inspect(engine, program, &Limits::default(), &opts())
        .await
        .unwrap_or_else(|e| panic!("{program:?}: {e}"))
}

fn engine() -> Engine262 {
    Engine262::new(&EnginesConfig::default(), false)
        .expect("engine262 must be installed: run scripts/deps/setup-engines.sh")
}

fn global<'a>(s: &'a State, path: &str) -> &'a doppel_conform::inject::Property {
    s.globals
        .iter()
        .find(|g| g.path == path)
        .unwrap_or_else(|| panic!("no global {path} in {:#?}", s.globals))
}

fn src(v: &Option<Value>) -> &str {
    v.as_ref().and_then(|v| v.src.as_deref()).unwrap_or("<none>")
}

#[tokio::test(flavor = "current_thread")]
async fn primitives_exactly_and_globals_in_creation_order() {
    let mut e = engine();
    let inj = state_of(
        &mut e,
        "var b = -0; var a = NaN; function f() {} c = 'q\"\\u00e9\\ud800'; var big = 10n; var u; var s = Symbol.for('k'); var w = Symbol.iterator;",
    )
    .await;
    assert_eq!(inj.outcome, Outcome::Normal);
    let s = &inj.state;
    let order: Vec<&str> = s.globals.iter().map(|g| g.path.as_str()).collect();
    // Declaration instantiation creates functions first, then vars in order; `c` by assignment at the end.
    assert_eq!(order, ["f", "b", "a", "big", "u", "s", "w", "c"]);
    assert_eq!(src(&global(s, "b").value), "-0");
    assert_eq!(src(&global(s, "a").value), "NaN");
    assert_eq!(src(&global(s, "c").value), r#""q\"\u00e9\ud800""#);
    assert_eq!(src(&global(s, "big").value), "10n");
    assert_eq!(src(&global(s, "u").value), "undefined");
    assert_eq!(src(&global(s, "s").value), r#"Symbol.for("k")"#);
    assert_eq!(src(&global(s, "w").value), "Symbol.iterator");
    // var: non-configurable; assignment: configurable.
    assert!(!global(s, "b").configurable);
    assert!(global(s, "c").configurable);
    assert_eq!(global(s, "b").writable, Some(true));
    e.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn lexical_bindings_objects_descriptors_and_key_order() {
    let mut e = engine();
    let inj = state_of(
        &mut e,
        r#"let o = { b: 1, a: 2, 1: 'x', [Symbol.toPrimitive]: 0 };
Object.defineProperty(o, 'g', { get: function () { throw new Error('never called'); }, enumerable: false, configurable: true });
const frozen = Object.freeze([1, 2]);
class C { m() {} }
let u = Symbol('unique');"#,
    )
    .await;
    let s = &inj.state;
    let names: Vec<&str> = s.lexicals.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["o", "frozen", "C", "u"]);
    assert!(s.globals.is_empty(), "{:?}", s.globals);
    let obj = |path: &str| {
        s.objects
            .iter()
            .find(|o| o.path == path)
            .unwrap_or_else(|| panic!("{path}"))
    };
    let o = obj("o");
    let keys: Vec<&str> = o.keys.iter().map(|k| k.as_deref().unwrap_or("?")).collect();
    // OrdinaryOwnPropertyKeys: indices, then strings in creation order, then symbols.
    assert_eq!(keys, [r#""1""#, r#""b""#, r#""a""#, r#""g""#, "Symbol.toPrimitive"]);
    assert_eq!(o.proto.src.as_deref(), Some("Object.prototype"));
    let g = o.props.iter().find(|p| p.key.as_deref() == Some(r#""g""#)).unwrap();
    assert_eq!(
        (g.get.as_deref(), g.set.as_deref()),
        (Some("function"), Some("undefined"))
    );
    assert!(!g.enumerable && g.configurable && g.value.is_none());
    let f = obj("frozen");
    assert!(!f.extensible);
    assert_eq!(f.proto.src.as_deref(), Some("Array.prototype"));
    assert!(
        f.props
            .iter()
            .all(|p| p.writable == Some(false) || p.key.as_deref() == Some(r#""length""#))
    );
    let c = obj("C");
    assert!(c.callable && c.constructor);
    assert_eq!(c.proto.src.as_deref(), Some("Function.prototype"));
    let m = obj("C.prototype.m");
    assert!(m.callable && !m.constructor, "methods are not constructors");
    let u = s
        .lexicals
        .iter()
        .find(|l| l.name == "u")
        .unwrap()
        .value
        .as_ref()
        .unwrap();
    assert_eq!((u.t.as_str(), u.src.as_deref()), ("symbol", None));
    assert_eq!(u.description.as_deref(), Some(r#""unique""#));
    // The assertions cover every kind but exception, descriptors last.
    let a = assertions(&inj);
    for kind in AssertionKind::ALL
        .into_iter()
        .filter(|k| *k != AssertionKind::Exception)
    {
        assert!(a.iter().any(|x| x.kind == kind), "no {kind} assertion");
    }
    let first_descriptor = a.iter().position(|x| x.kind == AssertionKind::Descriptor).unwrap();
    assert!(
        a[first_descriptor..]
            .iter()
            .all(|x| x.kind == AssertionKind::Descriptor)
    );
    assert!(
        a.iter()
            .enumerate()
            .all(|(i, x)| x.index == i && x.code.contains(&format!("[doppel#{i} ")))
    );
    e.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn exceptions_cycles_and_truncation() {
    let mut e = engine();
    let inj = state_of(&mut e, "var x = 1; let y; null.p;").await;
    assert!(inj.state.threw);
    assert!(matches!(&inj.outcome, Outcome::Exception { constructor: Some(c), .. } if c == "TypeError"));
    let a = assertions(&inj);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].kind, AssertionKind::Exception);

    let inj = state_of(&mut e, "let z = 1; throw new RangeError('r'); let t = 2;").await;
    let t = inj.state.lexicals.iter().find(|l| l.name == "t").unwrap();
    assert!(t.uninitialized, "t never initialized: {t:?}");

    // A cycle is an identity with the first path; a deep chain is cut and marked.
    let inj = state_of(&mut e, "var a = {}; a.self = a; var d = {n: {n: {n: {n: {n: {}}}}}};").await;
    let s = &inj.state;
    let a_obj = s.objects.iter().find(|o| o.path == "a").unwrap();
    let self_prop = a_obj.props.iter().find(|p| p.path == "a.self").unwrap();
    assert_eq!(
        self_prop.value.as_ref().unwrap().id,
        Some(s.objects.iter().position(|o| o.path == "a").unwrap())
    );
    assert!(s.truncated);
    assert!(
        s.objects
            .iter()
            .all(|o| o.path.matches(".n").count() <= Limits::default().depth as usize)
    );

    // A program that does not parse never runs.
    let err = inspect(&mut e, "let let = 1;", &Limits::default(), &opts())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("does not parse"), "{err}");
    e.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn replaced_globals_are_not_trusted_as_intrinsic_paths() {
    let mut e = engine();
    let inj = state_of(&mut e, "var p = Array.prototype; Array = function () {}; var q = [];").await;
    let s = &inj.state;
    let p = global(s, "p").value.as_ref().unwrap();
    // `Array.prototype` no longer reaches the intrinsic, so p is walked as an object.
    assert_ne!(p.src.as_deref(), Some("Array.prototype"));
    let q = s.objects.iter().find(|o| o.path == "q").unwrap();
    assert_ne!(q.proto.src.as_deref(), Some("Array.prototype"));
    e.shutdown().await;
}
