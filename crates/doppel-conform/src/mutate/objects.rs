//! Object substitution (JEST §III-C, "object substitution"): a property
//! access `o.name` becomes `o.key` or `o[Symbol.wellKnown]` with a spec
//! property key or well-known symbol (ECMA-262 §6.1.5.1), or an expression
//! becomes an object literal whose properties have spec keys: data
//! properties, methods and getters returning seed values, so that the
//! spec's protocol hooks (`Symbol.toPrimitive`, `valueOf`, `length`,
//! `Symbol.iterator`, `then`, ...) get called.

use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::{Mutant, MutationContext, Mutator, pick_parent, retry, short, splice};
use crate::seed_builtins::{SEED_VALUES, SpecVocabulary};
use crate::seed_check::{NodeKind, SyntaxTree};

/// The object-substitution mutator.
pub struct ObjectSubstitution;

fn is_identifier(k: &str) -> bool {
    let mut c = k.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_' || f == '$')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == '$')
}

/// A spec key as it is written in a property definition (`length`, `[Symbol.iterator]`, `'0'`).
fn key(v: &SpecVocabulary, rng: &mut ChaCha8Rng) -> Option<String> {
    if !v.symbols.is_empty() && (v.property_keys.is_empty() || rng.random_bool(0.4)) {
        return v.symbols.choose(rng).map(|s| format!("[{s}]"));
    }
    let k = v.property_keys.choose(rng)?;
    Some(if is_identifier(k) {
        k.clone()
    } else {
        crate::seed_builtins::quote(k)
    })
}

/// An object literal with one to three spec-keyed properties.
pub fn spec_object(v: &SpecVocabulary, rng: &mut ChaCha8Rng) -> Option<String> {
    let n = rng.random_range(1..=3);
    let mut props = Vec::new();
    for _ in 0..n {
        let k = key(v, rng)?;
        let value = SEED_VALUES.choose(rng)?;
        props.push(match rng.random_range(0..3) {
            0 => format!("{k}: {value}"),
            1 => format!("{k}() {{ return {value}; }}"),
            _ => format!("get {k}() {{ return {value}; }}"),
        });
    }
    Some(format!("({{ {} }})", props.join(", ")))
}

impl Mutator for ObjectSubstitution {
    fn name(&self) -> &'static str {
        "object"
    }

    fn mutate(&self, ctx: &MutationContext<'_>, rng: &mut ChaCha8Rng) -> Option<Mutant> {
        let parent = pick_parent(ctx, rng)?;
        let v = ctx.vocabulary;
        if v.symbols.is_empty() && v.property_keys.is_empty() {
            return None;
        }
        retry(ctx, parent, rng, |source, rng| {
            let tree = SyntaxTree::parse(source)?;
            let names: Vec<_> = tree.of(NodeKind::MemberName).collect();
            if let Some(n) = names.choose(rng)
                && rng.random_bool(0.5)
            {
                // `o.name` -> `o.key` / `o[Symbol.x]`: replace from the dot.
                let dot = source[..n.start].trim_end().len().checked_sub(1)?;
                if source.as_bytes()[dot] != b'.' || source[..dot].ends_with('?') {
                    return None;
                }
                let k = key(v, rng)?;
                let text = if k.starts_with('[') || k.starts_with('\'') {
                    if k.starts_with('[') {
                        k.clone()
                    } else {
                        format!("[{k}]")
                    }
                } else {
                    format!(".{k}")
                };
                let detail = format!("property `.{}` -> `{text}`", &source[n.start..n.end]);
                return Some((splice(source, dot, n.end, &text), detail));
            }
            let exprs: Vec<_> = tree.of(NodeKind::Expression).collect();
            let e = exprs.choose(rng)?;
            let obj = spec_object(v, rng)?;
            let detail = format!(
                "object `{}` -> `{}`",
                short(&source[e.start..e.end], 40),
                short(&obj, 60)
            );
            Some((splice(source, e.start, e.end, &obj), detail))
        })
    }
}
