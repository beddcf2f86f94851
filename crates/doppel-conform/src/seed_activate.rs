//! Seed activation: variants of a grammar seed whose code runs.
//!
//! A grammar seed (JEST, ICSE 2021, §III-A) is every symbol of one
//! alternative at its shortest string, so most seeds are inert: a function,
//! generator or class is declared and never called (`function * $ ( ) { }`),
//! and a value position holds the shortest expression `0`, which makes the
//! surrounding semantics throw before they start (`var [ $ ] = 0`,
//! `for ( $ of 0 ) ;`, `class $ extends 0 { }`). engine262 then covers the
//! declaration and the TypeError, never the body: the nested steps of the
//! syntax-directed operations (IteratorBindingInitialization,
//! DestructuringAssignmentEvaluation, generator resumption, SuperCall,
//! ClassDefinitionEvaluation's elements) stay uncovered whatever the
//! mutators do to the seed's shape (measured: 0 of 69
//! DestructuringAssignmentEvaluation and 0 of 54 YieldExpression steps
//! after a 45-minute campaign). [`activate`] makes them run, in two edits on
//! oxc's syntax tree:
//!
//! 1. **Values** ([`substitute_values`]): a literal `0` where the semantics
//!    need something else gets a value of the right shape: an iterable
//!    `[0, 1]` (for-of, spread, `yield*`, a destructuring pattern's
//!    initializer or assigned value), an object `{ $: 0 }` (for-in, `with`,
//!    the right of `in`), a constructor (class heritage, `instanceof`) or a
//!    function (callee, `new`, tag); a loop whose test is missing (`for ( ; ; )`,
//!    which never ends) or `0` (which never iterates) gets [`LOOP_TEST`], any
//!    other test is bounded by it (`do ; while ( {..} ) ;`, the shortest
//!    context of an object literal, never ends either).
//! 2. **Drivers** ([`add_drivers`]): a declared function, generator, async
//!    function or class is called right after its declaration (`f(ARGS);`,
//!    `var g = f(ARGS); g.next(); g.next(0); g.return(1);`,
//!    `new C(ARGS);` plus each public method, getter and setter), and a
//!    function, arrow or class expression is called in place (`(E)(ARGS)`,
//!    a generator resumed by `next()`, `next(0)` and `return(1)`,
//!    `new (E)(ARGS)`); an object literal with a method
//!    or accessor has its first one invoked. Drivers nest: up to
//!    [`DRIVER_PASSES`] passes reach functions declared inside called ones.
//! 3. **Eval** ([`in_eval`]): a seed that declares a name also runs as the
//!    code of a direct `eval`, at the top level and in a function.
//!
//! Every variant is oxc-accepted and differs from the seed; the generator
//! tries them right after the seed, and keeps one only when it adds
//! semantics coverage like any other candidate.

use oxc_allocator::Allocator;
use oxc_ast::AstKind;
use oxc_ast::ast::{
    AssignmentTarget, BinaryOperator, ClassElement, Expression, MethodDefinitionKind, PropertyKey, PropertyKind,
};
use oxc_parser::Parser;
use oxc_semantic::{AstNodes, SemanticBuilder};
use oxc_span::{GetSpan, SourceType};

use crate::seed_check::oxc_check;

/// The arguments drivers pass: none (parameter defaults run), and one
/// array, which array and object binding patterns both destructure.
pub const DRIVER_ARGS: [&str; 2] = ["", "[0, 1]"];

/// How many times drivers are added to their own output (a function
/// declared inside a called function is called in the next pass).
pub const DRIVER_PASSES: usize = 3;

/// The iterable a value position gets.
const ITERABLE: &str = "[0, 1]";
/// The ordinary object a value position gets.
const OBJECT: &str = "({ $: 0 })";
/// The constructor a value position gets.
const CONSTRUCTOR: &str = "Object";
/// The function a value position gets.
const FUNCTION: &str = "(function () {})";
/// The test a loop without one (or with `0`) gets: true twice, then false
/// (a global counter, so nested and later loops stop too).
pub const LOOP_TEST: &str = "(globalThis.$$n = -~globalThis.$$n) % 3";

/// The activated variants of `source`, distinct, each accepted by oxc and
/// different from `source`: the values substituted, then with drivers for
/// each of [`DRIVER_ARGS`]. Empty when nothing applies or `source` does not parse.
pub fn activate(source: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |v: String, out: &mut Vec<String>| {
        if v != source && !out.contains(&v) && oxc_check(&v).is_ok() {
            out.push(v);
        }
    };
    let valued = substitute_values(source).unwrap_or_else(|| source.to_string());
    push(valued.clone(), &mut out);
    let mut first_driven = None;
    for args in DRIVER_ARGS {
        let mut driven = valued.clone();
        for _ in 0..DRIVER_PASSES {
            match add_drivers(&driven, args) {
                Some(next) if next != driven => driven = next,
                _ => break,
            }
        }
        first_driven.get_or_insert_with(|| driven.clone());
        push(driven, &mut out);
    }
    if let Some(driven) = first_driven
        && crate::seed_check::SyntaxTree::parse(&driven).is_some_and(|t| !t.bindings.is_empty())
    {
        for v in in_eval(&driven) {
            push(v, &mut out);
        }
    }
    out
}

/// `program` as the code of a direct `eval`, at the top level and inside a
/// function: its declarations then go through EvalDeclarationInstantiation
/// (ECMA-262 §19.2.1.3) into the global or a function's variable
/// environment instead of GlobalDeclarationInstantiation.
pub fn in_eval(program: &str) -> [String; 2] {
    let code = serde_json::to_string(program).expect("a string serializes");
    [
        format!("eval({code});"),
        format!("(function () {{ eval({code}); }})();"),
    ]
}

/// One text edit: bytes `start..end` replaced by `text` (`start == end`: an insertion).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

/// `source` with `edits` applied. Of replacements that overlap, the one
/// starting first (the longest at one start) is kept; an insertion strictly
/// inside a kept replacement is dropped. At one position insertions go
/// before a replacement, in the order given.
fn apply(source: &str, edits: Vec<Edit>) -> String {
    let (inserts, mut replaces): (Vec<Edit>, Vec<Edit>) = edits.into_iter().partition(|e| e.start == e.end);
    replaces.sort_by_key(|e| (e.start, std::cmp::Reverse(e.end)));
    let mut kept: Vec<Edit> = Vec::new();
    for e in replaces {
        if !kept.iter().any(|k| e.start < k.end && k.start < e.end) {
            kept.push(e);
        }
    }
    let inside = |p: usize| kept.iter().any(|k| k.start < p && p < k.end);
    let mut all: Vec<Edit> = inserts.into_iter().filter(|e| !inside(e.start)).collect();
    all.extend(kept);
    // Stable: insertions at one position keep their order; at a replacement's
    // start they come first, so (applied from the end) their text precedes it.
    all.sort_by_key(|e| (e.start, e.start != e.end));
    let mut out = source.to_string();
    for e in all.iter().rev() {
        out.replace_range(e.start..e.end, &e.text);
    }
    out
}

/// Parses `source` as a Script and calls `f` with its nodes; `None` when oxc does not accept it.
fn with_nodes<T>(source: &str, f: impl FnOnce(&AstNodes<'_>) -> T) -> Option<T> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::script()).parse();
    if parsed.panicked || parsed.diagnostics.errors().next().is_some() {
        return None;
    }
    let built = SemanticBuilder::new().with_build_nodes(true).build(&parsed.program);
    Some(f(built.semantic.nodes()))
}

/// An edit replacing `e` by `text` when `e` is the literal `0`.
fn zero(e: &Expression<'_>, text: &str) -> Option<Edit> {
    match e.without_parentheses() {
        Expression::NumericLiteral(n) if n.value == 0.0 => Some(Edit {
            start: n.span.start as usize,
            end: n.span.end as usize,
            text: text.to_string(),
        }),
        _ => None,
    }
}

/// Step 1 of [`activate`]: every `0` in a value position replaced by a
/// value of the shape its semantics need (see the module doc). `None`
/// when `source` does not parse or nothing changed.
pub fn substitute_values(source: &str) -> Option<String> {
    let edits = with_nodes(source, |nodes| {
        let mut edits = Vec::new();
        for node in nodes.iter() {
            let e = match node.kind() {
                AstKind::ForOfStatement(s) => zero(&s.right, ITERABLE),
                AstKind::ForStatement(s) => match &s.test {
                    Some(t) => {
                        edits.extend(bounded(t));
                        None
                    }
                    None => for_test_position(source, s).map(|at| Edit {
                        start: at,
                        end: at,
                        text: format!(" {LOOP_TEST}"),
                    }),
                },
                AstKind::WhileStatement(s) => {
                    edits.extend(bounded(&s.test));
                    None
                }
                AstKind::DoWhileStatement(s) => {
                    edits.extend(bounded(&s.test));
                    None
                }
                AstKind::ForInStatement(s) => zero(&s.right, OBJECT),
                AstKind::WithStatement(s) => zero(&s.object, OBJECT),
                AstKind::SpreadElement(s) => zero(&s.argument, ITERABLE),
                AstKind::YieldExpression(y) if y.delegate => y.argument.as_ref().and_then(|a| zero(a, ITERABLE)),
                AstKind::VariableDeclarator(d) if d.id.is_destructuring_pattern() => {
                    d.init.as_ref().and_then(|i| zero(i, ITERABLE))
                }
                AstKind::AssignmentPattern(p) if p.left.is_destructuring_pattern() => zero(&p.right, ITERABLE),
                AstKind::AssignmentExpression(a)
                    if matches!(
                        a.left,
                        AssignmentTarget::ArrayAssignmentTarget(_) | AssignmentTarget::ObjectAssignmentTarget(_)
                    ) =>
                {
                    zero(&a.right, ITERABLE)
                }
                AstKind::Class(c) => c.heritage.as_ref().and_then(|h| zero(&h.expression, CONSTRUCTOR)),
                AstKind::CallExpression(c) => zero(&c.callee, FUNCTION),
                AstKind::NewExpression(c) => zero(&c.callee, FUNCTION),
                AstKind::TaggedTemplateExpression(t) => zero(&t.tag, FUNCTION),
                AstKind::BinaryExpression(b) if b.operator == BinaryOperator::In => zero(&b.right, OBJECT),
                AstKind::BinaryExpression(b) if b.operator == BinaryOperator::Instanceof => zero(&b.right, CONSTRUCTOR),
                _ => None,
            };
            edits.extend(e);
        }
        edits
    })?;
    if edits.is_empty() {
        return None;
    }
    Some(apply(source, edits))
}

/// A loop test made to end: `0` (never iterates) becomes [`LOOP_TEST`];
/// any other test `T` becomes `(T) && LOOP_TEST`, still evaluated each
/// iteration but false by the third. The grammar puts an expression that
/// cannot start a statement (an object literal, a function or class
/// expression) in its shortest context `do ; while ( E ) ;`, which loops
/// forever on a truthy `E`: without this, every such seed was a timeout.
fn bounded(test: &Expression<'_>) -> Vec<Edit> {
    if let Some(e) = zero(test, LOOP_TEST) {
        return vec![e];
    }
    let span = test.span();
    let (start, end) = (span.start as usize, span.end as usize);
    vec![
        Edit {
            start,
            end: start,
            text: "(".into(),
        },
        Edit {
            start: end,
            end,
            text: format!(") && {LOOP_TEST}"),
        },
    ]
}

/// Where the test of a `for` statement without one goes: just after the
/// first `;` that follows its initializer (or its `(`).
fn for_test_position(source: &str, s: &oxc_ast::ast::ForStatement<'_>) -> Option<usize> {
    let from = match &s.init {
        Some(i) => i.span().end as usize,
        None => s.span.start as usize + source[s.span.start as usize..].find('(')? + 1,
    };
    Some(from + source[from..].find(';')? + 1)
}

/// What calling a function does to its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Callable {
    /// A plain or async function, or an arrow: called.
    Function,
    /// A generator or async generator: called and resumed.
    Generator,
    /// A class: constructed.
    Class,
}

/// How a driver reaches a property `key` of an object expression text.
fn access(key: &PropertyKey<'_>, computed: bool, source: &str) -> Option<String> {
    match key {
        PropertyKey::StaticIdentifier(id) if !computed => Some(format!(".{}", id.name)),
        PropertyKey::PrivateIdentifier(_) => None,
        k => {
            let span = k.span();
            Some(format!("[{}]", &source[span.start as usize..span.end as usize]))
        }
    }
}

/// The statements that drive a member of class `name` (or object `name`).
fn member_driver(target: &str, key: &str, kind: MethodDefinitionKind, generator: bool, args: &str) -> String {
    match kind {
        MethodDefinitionKind::Get => format!("{target}{key};"),
        MethodDefinitionKind::Set => format!("{target}{key} = 0;"),
        MethodDefinitionKind::Constructor => String::new(),
        MethodDefinitionKind::Method if generator => format!("{};", resume(&format!("{target}{key}({args})"))),
        MethodDefinitionKind::Method => format!("{target}{key}({args});"),
    }
}

/// Step 2 of [`activate`], one pass: drivers for every declared callable
/// and every callable expression not already called (see the module doc),
/// passing `args`. `None` when `source` does not parse.
pub fn add_drivers(source: &str, args: &str) -> Option<String> {
    let edits = with_nodes(source, |nodes| {
        let mut edits = Vec::new();
        for (id, node) in nodes.iter_enumerated() {
            let kind = node.kind();
            let span = kind.span();
            let (start, end) = (span.start as usize, span.end as usize);
            let text = &source[start..end];
            // The first ancestor that is not a parenthesis.
            let parent = nodes
                .ancestor_kinds(id)
                .find(|k| !matches!(k, AstKind::ParenthesizedExpression(_)));
            let called = |parent: Option<AstKind<'_>>| {
                matches!(
                    parent,
                    Some(AstKind::CallExpression(c)) if c.callee.without_parentheses().span() == span
                ) || matches!(
                    parent,
                    Some(AstKind::NewExpression(c)) if c.callee.without_parentheses().span() == span
                ) || matches!(
                    parent,
                    Some(AstKind::StaticMemberExpression(_) | AstKind::ComputedMemberExpression(_))
                )
            };
            match kind {
                AstKind::Function(f) if f.is_declaration() => {
                    let Some(name) = f.id.as_ref().map(|i| i.name.to_string()) else {
                        continue;
                    };
                    let driver = if f.generator {
                        format!(" {};", resume(&format!("{name}({args})")))
                    } else {
                        format!(" {name}({args});")
                    };
                    // Resume a generator three ways where a statement fits.
                    let driver = if f.generator && !f.r#async {
                        format!(" var {name}$ = {name}({args}); {name}$.next(); {name}$.next(0); {name}$.return(1);")
                    } else {
                        driver
                    };
                    if source[end..].starts_with(&driver) {
                        continue; // driven in an earlier pass
                    }
                    edits.push(Edit {
                        start: end,
                        end,
                        text: driver,
                    });
                }
                AstKind::Class(c) if c.is_declaration() => {
                    let Some(name) = c.id.as_ref().map(|i| i.name.to_string()) else {
                        continue;
                    };
                    let mut driver = format!(" new {name}({args});");
                    for el in &c.body.body {
                        if let ClassElement::MethodDefinition(m) = el {
                            let Some(key) = access(&m.key, m.computed, source) else {
                                continue;
                            };
                            let target = if m.r#static {
                                name.clone()
                            } else {
                                format!("new {name}()")
                            };
                            let d = member_driver(&target, &key, m.kind, m.value.generator, args);
                            if !d.is_empty() {
                                driver.push(' ');
                                driver.push_str(&d);
                            }
                        }
                    }
                    if source[end..].starts_with(&driver) {
                        continue;
                    }
                    edits.push(Edit {
                        start: end,
                        end,
                        text: driver,
                    });
                }
                AstKind::Function(f) if !called(parent) && !is_member_value(parent) => {
                    let how = if f.generator {
                        Callable::Generator
                    } else {
                        Callable::Function
                    };
                    edits.push(in_place(start, end, text, how, args));
                }
                AstKind::ArrowFunctionExpression(_) if !called(parent) => {
                    edits.push(in_place(start, end, text, Callable::Function, args));
                }
                AstKind::Class(_) if !called(parent) => {
                    edits.push(in_place(start, end, text, Callable::Class, args));
                }
                AstKind::ObjectExpression(o) if !called(parent) => {
                    let first = o.properties.iter().find_map(|p| match p {
                        oxc_ast::ast::ObjectPropertyKind::ObjectProperty(p)
                            if p.method || p.kind != PropertyKind::Init =>
                        {
                            let kind = match p.kind {
                                PropertyKind::Get => MethodDefinitionKind::Get,
                                PropertyKind::Set => MethodDefinitionKind::Set,
                                PropertyKind::Init => MethodDefinitionKind::Method,
                            };
                            let generator =
                                matches!(p.value.without_parentheses(), Expression::FunctionExpression(f) if f.generator);
                            Some((access(&p.key, p.computed, source)?, kind, generator))
                        }
                        _ => None,
                    });
                    if let Some((key, kind, generator)) = first {
                        let d = member_driver(&format!("({text})"), &key, kind, generator, args);
                        let d = d.trim_end_matches(';');
                        // `x = 0` is not an expression everywhere `({..})` is: parenthesize.
                        edits.push(Edit {
                            start,
                            end,
                            text: format!("({d})"),
                        });
                    }
                }
                _ => {}
            }
        }
        edits
    })?;
    Some(apply(source, edits))
}

/// Whether a function's parent makes it a method, getter or setter (its
/// driver is its object's or class's).
fn is_member_value(parent: Option<AstKind<'_>>) -> bool {
    matches!(
        parent,
        Some(AstKind::MethodDefinition(_)) | Some(AstKind::ObjectProperty(_))
    ) && !matches!(parent, Some(AstKind::ObjectProperty(p)) if !p.method && p.kind == PropertyKind::Init)
}

/// A generator object `g` resumed three ways, as one expression: `next()`
/// runs to the first `yield`, `next(0)` resumes it with a value, `return(1)`
/// resumes it with a return completion (GeneratorResumeAbrupt).
fn resume(g: &str) -> String {
    format!("(($g) => ($g.next(), $g.next(0), $g.return(1)))({g})")
}

/// The in-place driver of a callable expression `text` at `start..end`.
fn in_place(start: usize, end: usize, text: &str, how: Callable, args: &str) -> Edit {
    let text = match how {
        Callable::Function => format!("({text})({args})"),
        Callable::Generator => resume(&format!("({text})({args})")),
        Callable::Class => format!("new ({text})({args})"),
    };
    Edit { start, end, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_get_the_shape_their_semantics_need() {
        assert_eq!(substitute_values("var [ $ ] = 0 ;").unwrap(), "var [ $ ] = [0, 1] ;");
        assert_eq!(substitute_values("for ( $ of 0 ) ;").unwrap(), "for ( $ of [0, 1] ) ;");
        assert_eq!(
            substitute_values("for ( $ in 0 ) ;").unwrap(),
            "for ( $ in ({ $: 0 }) ) ;"
        );
        assert_eq!(
            substitute_values("class $ extends 0 { }").unwrap(),
            "class $ extends Object { }"
        );
        assert_eq!(substitute_values("[ $ ] = 0 ;").unwrap(), "[ $ ] = [0, 1] ;");
        assert_eq!(
            substitute_values("0 ( ... 0 ) ;").unwrap(),
            "(function () {}) ( ... [0, 1] ) ;"
        );
        assert_eq!(substitute_values("0 in 0 ;").unwrap(), "0 in ({ $: 0 }) ;");
        assert_eq!(
            substitute_values("var $ = 0 ;"),
            None,
            "a plain initializer keeps its 0"
        );
        assert_eq!(
            substitute_values("for ( let $ ; ; ) ;").unwrap(),
            format!("for ( let $ ; {LOOP_TEST} ; ) ;")
        );
        assert_eq!(
            substitute_values("for ( ; ; ) ;").unwrap(),
            format!("for ( ; {LOOP_TEST} ; ) ;")
        );
        assert_eq!(
            substitute_values("while ( 0 ) ;").unwrap(),
            format!("while ( {LOOP_TEST} ) ;")
        );
    }

    #[test]
    fn declared_callables_are_called_after_their_declaration() {
        assert_eq!(
            add_drivers("function $ ( ) { }", "").unwrap(),
            "function $ ( ) { } $();"
        );
        let once = add_drivers("class $ { a ( ) { } }", "").unwrap();
        assert_eq!(add_drivers(&once, "").unwrap(), once, "a declaration is driven once");
        assert_eq!(
            add_drivers("function * $ ( ) { }", "[0, 1]").unwrap(),
            "function * $ ( ) { } var $$ = $([0, 1]); $$.next(); $$.next(0); $$.return(1);"
        );
        assert_eq!(
            add_drivers("async function * $ ( ) { }", "").unwrap(),
            "async function * $ ( ) { } (($g) => ($g.next(), $g.next(0), $g.return(1)))($());"
        );
        assert_eq!(
            add_drivers("class $ { static 0 ( ) { } get $ ( ) { } * a ( ) { } #p ( ) { } }", "").unwrap(),
            "class $ { static 0 ( ) { } get $ ( ) { } * a ( ) { } #p ( ) { } } new $(); $[0](); new $().$; (($g) => ($g.next(), $g.next(0), $g.return(1)))(new $().a());"
        );
    }

    #[test]
    fn expressions_are_called_in_place_once() {
        assert_eq!(
            add_drivers("( function * ( ) { } ) ;", "").unwrap(),
            "( (($g) => ($g.next(), $g.next(0), $g.return(1)))((function * ( ) { })()) ) ;"
        );
        assert_eq!(add_drivers("$ => 0 ;", "").unwrap(), "($ => 0)() ;");
        // Already called: left alone.
        assert_eq!(add_drivers("( $ => 0 ) ( ) ;", "").unwrap(), "( $ => 0 ) ( ) ;");
        assert_eq!(
            add_drivers("({ set $ ( a ) { } }) ;", "").unwrap(),
            "((({ set $ ( a ) { } }).$ = 0)) ;"
        );
        // The outer arrow is called; the inner one in the next pass, then nothing changes.
        let once = add_drivers("a => b => 0 ;", "").unwrap();
        assert_eq!(once, "(a => b => 0)() ;");
        let twice = add_drivers(&once, "").unwrap();
        assert_eq!(twice, "(a => (b => 0)())() ;");
        assert_eq!(add_drivers(&twice, "").unwrap(), twice);
    }

    #[test]
    fn activation_yields_accepted_distinct_variants() {
        let v = activate("var [ $ ] = 0 ;");
        assert_eq!(v[0], "var [ $ ] = [0, 1] ;");
        assert_eq!(v[1], "eval(\"var [ $ ] = [0, 1] ;\");");
        let v = activate("function $ ( [ a ] ) { function b ( ) { } }");
        assert_eq!(
            v,
            [
                "function $ ( [ a ] ) { function b ( ) { } b(); } $();",
                "function $ ( [ a ] ) { function b ( ) { } b([0, 1]); } $([0, 1]);",
                "eval(\"function $ ( [ a ] ) { function b ( ) { } b(); } $();\");",
                "(function () { eval(\"function $ ( [ a ] ) { function b ( ) { } b(); } $();\"); })();"
            ]
        );
        assert!(activate("0 ;").is_empty());
        let v = activate("let $ ;");
        assert_eq!(v, ["eval(\"let $ ;\");", "(function () { eval(\"let $ ;\"); })();"]);
        assert!(activate("(").is_empty());
    }
}
