//! The test262 feature tags (tc39/test262 `features.txt`, and for the ES2015
//! baseline the descriptive names of doppel-engines' probe, see
//! `doppel_engines::features::PROBES`) a program uses, read from its syntax
//! (oxc): syntax features by node, library features by the global names and
//! method names it mentions. Method names are a heuristic (`x.at(0)` on any
//! object counts as `Array.prototype.at`): a tag too many only makes an engine
//! lacking that feature answer "unsupported", never a wrong verdict.

use oxc_allocator::Allocator;
use oxc_ast::AstKind;
use oxc_ast::ast::{BinaryOperator, LogicalOperator, VariableDeclarationKind};
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::SourceType;
use std::collections::BTreeSet;

/// Global names whose mention means a library feature.
const GLOBALS: &[(&str, &str)] = &[
    ("Symbol", "Symbol"),
    ("Promise", "Promise"),
    ("Proxy", "Proxy"),
    ("Reflect", "Reflect"),
    ("Map", "Map"),
    ("Set", "Set"),
    ("WeakMap", "WeakMap"),
    ("WeakSet", "WeakSet"),
    ("SharedArrayBuffer", "SharedArrayBuffer"),
    ("Atomics", "Atomics"),
    ("WeakRef", "WeakRef"),
    ("FinalizationRegistry", "FinalizationRegistry"),
    ("globalThis", "globalThis"),
    ("BigInt", "BigInt"),
    ("Iterator", "iterator-helpers"),
    ("Float16Array", "Float16Array"),
    ("ArrayBuffer", "TypedArray"),
    ("DataView", "TypedArray"),
    ("Int8Array", "TypedArray"),
    ("Uint8Array", "TypedArray"),
    ("Uint8ClampedArray", "TypedArray"),
    ("Int16Array", "TypedArray"),
    ("Uint16Array", "TypedArray"),
    ("Int32Array", "TypedArray"),
    ("Uint32Array", "TypedArray"),
    ("Float32Array", "TypedArray"),
    ("Float64Array", "TypedArray"),
    ("BigInt64Array", "TypedArray"),
    ("BigUint64Array", "TypedArray"),
    // BigInt64Array is an ES2020 typed array: engines with ES2015's typed
    // arrays and no BigInt (Duktape, njs) lack it, and so does Rhino, which
    // has both: a probe of its own.
    ("BigInt64Array", "BigInt"),
    ("BigUint64Array", "BigInt"),
    ("BigInt64Array", "BigInt64Array"),
    ("BigUint64Array", "BigInt64Array"),
    ("AggregateError", "AggregateError"),
];

/// Method and property names whose mention means a library feature.
const MEMBERS: &[(&str, &str)] = &[
    ("includes", "Array.prototype.includes"),
    ("flat", "Array.prototype.flat"),
    ("flatMap", "Array.prototype.flatMap"),
    ("fromEntries", "Object.fromEntries"),
    ("trimStart", "string-trimming"),
    ("trimEnd", "string-trimming"),
    ("description", "Symbol.prototype.description"),
    ("allSettled", "Promise.allSettled"),
    ("matchAll", "String.prototype.matchAll"),
    ("any", "Promise.any"),
    ("replaceAll", "String.prototype.replaceAll"),
    ("at", "Array.prototype.at"),
    ("hasOwn", "Object.hasOwn"),
    ("findLast", "array-find-from-last"),
    ("findLastIndex", "array-find-from-last"),
    ("toSorted", "change-array-by-copy"),
    ("with", "change-array-by-copy"),
    ("toReversed", "change-array-by-copy"),
    ("toSpliced", "change-array-by-copy"),
    ("groupBy", "array-grouping"),
    ("withResolvers", "promise-with-resolvers"),
    ("try", "promise-try"),
    ("isWellFormed", "String.prototype.isWellFormed"),
    ("toWellFormed", "String.prototype.toWellFormed"),
    // ES2024's transfer came with transferToFixedLength and detached;
    // resize with resizable and maxByteLength (a campaign's false V8 11
    // candidate called transferToFixedLength).
    ("transfer", "arraybuffer-transfer"),
    ("transferToFixedLength", "arraybuffer-transfer"),
    ("detached", "arraybuffer-transfer"),
    ("resize", "resizable-arraybuffer"),
    ("resizable", "resizable-arraybuffer"),
    ("maxByteLength", "resizable-arraybuffer"),
    ("finally", "Promise.prototype.finally"),
    ("union", "set-methods"),
    ("intersection", "set-methods"),
    ("symmetricDifference", "set-methods"),
    ("isSubsetOf", "set-methods"),
    ("escape", "RegExp.escape"),
    ("f16round", "Float16Array"),
];

/// Well-known symbols: `Symbol.iterator` is tagged `Symbol.iterator`.
const WELL_KNOWN: &[&str] = &[
    "asyncIterator",
    "hasInstance",
    "isConcatSpreadable",
    "iterator",
    "match",
    "matchAll",
    "replace",
    "search",
    "species",
    "split",
    "toPrimitive",
    "toStringTag",
    "unscopables",
];

/// The feature tags `source` uses, sorted. A program that does not parse
/// gets the tags of whatever oxc recovered (possibly none).
pub fn of_program(source: &str) -> Vec<String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::script()).parse();
    let mut tags: BTreeSet<&str> = BTreeSet::new();
    if source.starts_with("#!") {
        tags.insert("hashbang");
    }
    if parsed.panicked {
        return Vec::new();
    }
    let built = SemanticBuilder::new().with_build_nodes(true).build(&parsed.program);
    for node in built.semantic.nodes().iter() {
        match node.kind() {
            AstKind::VariableDeclaration(d) => match d.kind {
                VariableDeclarationKind::Let => {
                    tags.insert("let");
                }
                VariableDeclarationKind::Const => {
                    tags.insert("const");
                }
                _ => {}
            },
            AstKind::ArrowFunctionExpression(f) => {
                tags.insert("arrow-function");
                if f.r#async {
                    tags.insert("async-functions");
                }
            }
            AstKind::Class(_) => {
                tags.insert("class");
            }
            AstKind::PropertyDefinition(p) => {
                tags.insert(if p.key.is_private_identifier() {
                    "class-fields-private"
                } else {
                    "class-fields-public"
                });
            }
            AstKind::MethodDefinition(m) if m.key.is_private_identifier() => {
                tags.insert("class-methods-private");
            }
            AstKind::StaticBlock(_) => {
                tags.insert("class-static-block");
            }
            AstKind::PrivateInExpression(_) => {
                tags.insert("class-fields-private-in");
            }
            AstKind::TemplateLiteral(_) | AstKind::TaggedTemplateExpression(_) => {
                tags.insert("template");
            }
            AstKind::ObjectPattern(_) | AstKind::ArrayPattern(_) => {
                tags.insert("destructuring-binding");
            }
            AstKind::ObjectAssignmentTarget(_) | AstKind::ArrayAssignmentTarget(_) => {
                tags.insert("destructuring-assignment");
            }
            AstKind::FormalParameters(ps) => {
                if ps.rest.is_some() {
                    tags.insert("rest-parameters");
                }
                if ps.items.iter().any(|p| p.initializer.is_some()) {
                    tags.insert("default-parameters");
                }
            }
            AstKind::ObjectProperty(p) if p.computed => {
                tags.insert("computed-property-names");
            }
            AstKind::Function(f) => {
                match (f.generator, f.r#async) {
                    (true, true) => tags.insert("async-iteration"),
                    (true, false) => tags.insert("generators"),
                    (false, true) => tags.insert("async-functions"),
                    _ => false,
                };
            }
            AstKind::ForOfStatement(f) => {
                tags.insert(if f.r#await { "async-iteration" } else { "for-of" });
            }
            AstKind::ImportExpression(i) => {
                tags.insert("dynamic-import");
                if i.options.is_some() {
                    // import(x, options): ES2025 import attributes
                    // (SpiderMonkey 102 and 136 reject the second argument).
                    tags.insert("import-attributes");
                }
            }
            AstKind::NewTarget(_) => {
                tags.insert("new.target");
            }
            AstKind::Super(_) => {
                tags.insert("super");
            }
            AstKind::BinaryExpression(b) if b.operator == BinaryOperator::Exponential => {
                tags.insert("exponentiation");
            }
            AstKind::AssignmentExpression(a) => {
                use oxc_ast::ast::AssignmentOperator as Op;
                match a.operator {
                    Op::Exponential => {
                        tags.insert("exponentiation");
                    }
                    Op::LogicalAnd | Op::LogicalOr | Op::LogicalNullish => {
                        tags.insert("logical-assignment-operators");
                    }
                    _ => {}
                }
            }
            AstKind::LogicalExpression(l) if l.operator == LogicalOperator::Coalesce => {
                tags.insert("coalesce-expression");
            }
            AstKind::SpreadElement(_) => {
                let parent = built.semantic.nodes().parent_kind(node.id());
                if matches!(parent, AstKind::ObjectExpression(_)) {
                    tags.insert("object-spread");
                }
            }
            AstKind::BindingRestElement(_) => {
                let parent = built.semantic.nodes().parent_kind(node.id());
                if matches!(parent, AstKind::ObjectPattern(_)) {
                    tags.insert("object-rest");
                }
            }
            AstKind::CatchClause(c) if c.param.is_none() => {
                tags.insert("optional-catch-binding");
            }
            AstKind::ChainExpression(_) => {
                tags.insert("optional-chaining");
            }
            AstKind::BigIntLiteral(_) => {
                tags.insert("BigInt");
            }
            AstKind::NumericLiteral(n) if n.raw.is_some_and(|r| r.contains('_')) => {
                tags.insert("numeric-separator-literal");
            }
            AstKind::RegExpLiteral(r) => {
                let flags = r.regex.flags.to_string();
                let pattern = r.regex.pattern.text.as_str();
                if flags.contains('s') {
                    tags.insert("regexp-dotall");
                }
                if flags.contains('d') {
                    tags.insert("regexp-match-indices");
                }
                if flags.contains('v') {
                    tags.insert("regexp-v-flag");
                }
                if pattern.contains("(?<=") || pattern.contains("(?<!") {
                    tags.insert("regexp-lookbehind");
                }
                if pattern.contains("(?<") && pattern.replace("(?<=", "").replace("(?<!", "").contains("(?<") {
                    tags.insert("regexp-named-groups");
                }
            }
            AstKind::IdentifierReference(id) => {
                for (_, tag) in GLOBALS.iter().filter(|(n, _)| *n == id.name.as_str()) {
                    tags.insert(tag);
                }
            }
            AstKind::StaticMemberExpression(m) => {
                let name = m.property.name.as_str();
                if let Some((_, tag)) = MEMBERS.iter().find(|(n, _)| *n == name) {
                    tags.insert(tag);
                }
                if m.object.is_specific_id("Symbol")
                    && let Some(w) = WELL_KNOWN.iter().find(|w| **w == name)
                {
                    tags.insert(match *w {
                        "asyncIterator" => "Symbol.asyncIterator",
                        "hasInstance" => "Symbol.hasInstance",
                        "isConcatSpreadable" => "Symbol.isConcatSpreadable",
                        "iterator" => "Symbol.iterator",
                        "match" => "Symbol.match",
                        "matchAll" => "Symbol.matchAll",
                        "replace" => "Symbol.replace",
                        "search" => "Symbol.search",
                        "species" => "Symbol.species",
                        "split" => "Symbol.split",
                        "toPrimitive" => "Symbol.toPrimitive",
                        "toStringTag" => "Symbol.toStringTag",
                        _ => "Symbol.unscopables",
                    });
                }
            }
            _ => {}
        }
    }
    // A symbol may be a weak target since ES2023: a program naming both a
    // weak collection and Symbol may use one (a campaign's false candidates
    // of SpiderMonkey and Boa on `new WeakRef(Symbol())`).
    if tags.contains("Symbol")
        && ["WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry"]
            .iter()
            .any(|w| tags.contains(w))
    {
        tags.insert("symbols-as-weakmap-keys");
    }
    tags.into_iter().map(String::from).collect()
}

#[cfg(test)]
mod tests {
    use super::of_program;

    #[test]
    fn syntax_and_built_ins_give_their_tags() {
        let tags = of_program("let a = () => 1; class C {}");
        for t in ["let", "arrow-function", "class"] {
            assert!(tags.iter().any(|x| x == t), "{t}: {tags:?}");
        }
        // An ES2020 typed array needs BigInt and BigInt64Array itself:
        // Duktape, njs and Rhino have ES2015's typed arrays and no
        // BigInt64Array (a campaign's 23 false engine-bug candidates).
        let tags = of_program("var t = BigInt64Array;");
        assert_eq!(tags, ["BigInt", "BigInt64Array", "TypedArray"]);
        assert_eq!(of_program("var e = AggregateError('1', 2);"), ["AggregateError"]);
        assert!(of_program("var x = 1 + 2;").is_empty());
        // A campaign's false candidates of engines without these ES2023-25
        // library features or import attributes.
        assert_eq!(
            of_program("var r = Array.prototype.with.call([]);"),
            ["change-array-by-copy"]
        );
        assert_eq!(of_program("var r = Promise.try();"), ["Promise", "promise-try"]);
        assert_eq!(of_program("import(0);"), ["dynamic-import"]);
        assert_eq!(
            of_program("result = new WeakRef(Symbol());"),
            ["Symbol", "WeakRef", "symbols-as-weakmap-keys"]
        );
        assert_eq!(of_program("new WeakMap();"), ["WeakMap"]);
        assert_eq!(of_program("import(0, 0);"), ["dynamic-import", "import-attributes"]);
        assert_eq!(
            of_program("var r = ArrayBuffer.prototype.transferToFixedLength.call(new ArrayBuffer());"),
            ["TypedArray", "arraybuffer-transfer"]
        );
        assert!(of_program("new ArrayBuffer(1).detached;").contains(&"arraybuffer-transfer".to_string()));
        assert!(
            of_program("new ArrayBuffer(1, { maxByteLength: 2 }).resizable;")
                .contains(&"resizable-arraybuffer".to_string())
        );
    }
}
