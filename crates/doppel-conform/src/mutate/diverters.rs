//! Statement insertion with control diverters (JEST §III-C, "statement
//! insertion"): a `break`, `continue`, `return` or `throw` statement
//! (ECMA-262 §14.8, 14.9, 14.10, 14.14), bare or under `if (value)`, is
//! inserted before a statement or at the start of a block, choosing only
//! diverters legal there: `continue` inside a loop, `break` inside a loop or
//! `switch`, `return` inside a function, `throw` anywhere (drawn only when
//! nothing else is legal or one time in four).

use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::{Mutant, MutationContext, Mutator, pick_parent, retry, splice};
use crate::seed_builtins::SEED_VALUES;
use crate::seed_check::{Context, NodeKind, SyntaxTree};

/// The statement-insertion mutator.
pub struct StatementInsertion;

/// The diverters legal in `c`, `throw` last.
pub fn legal(c: &Context) -> Vec<&'static str> {
    let mut v = Vec::new();
    if c.iteration {
        v.push("continue");
    }
    if c.iteration || c.switch {
        v.push("break");
    }
    if c.function {
        v.push("return");
    }
    v.push("throw");
    v
}

impl Mutator for StatementInsertion {
    fn name(&self) -> &'static str {
        "diverter"
    }

    fn mutate(&self, ctx: &MutationContext<'_>, rng: &mut ChaCha8Rng) -> Option<Mutant> {
        let parent = pick_parent(ctx, rng)?;
        retry(ctx, parent, rng, |source, rng| {
            let tree = SyntaxTree::parse(source)?;
            // Insertion points: before a listed statement, or after a block's `{`.
            let points: Vec<(usize, Context)> = tree
                .nodes
                .iter()
                .filter_map(|n| match n.kind {
                    NodeKind::ListStatement => Some((n.start, n.context)),
                    NodeKind::Block if source[n.start..].starts_with('{') => Some((n.start + 1, n.context)),
                    _ => None,
                })
                .collect();
            let (at, context) = *points.choose(rng)?;
            let kinds = legal(&context);
            let kind = if kinds.len() > 1 && rng.random_range(0..4) != 0 {
                kinds[..kinds.len() - 1].choose(rng)?
            } else {
                kinds.last()?
            };
            let stmt = match *kind {
                "return" | "throw" => format!("{kind} {};", SEED_VALUES.choose(rng)?),
                k => format!("{k};"),
            };
            let stmt = if rng.random_bool(0.5) {
                format!("if ({}) {stmt}", SEED_VALUES.choose(rng)?)
            } else {
                stmt
            };
            let detail = format!("insert `{stmt}` at byte {at}");
            Some((splice(source, at, at, &format!(" {stmt} ")), detail))
        })
    }
}
