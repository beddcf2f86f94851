//! String substitution (JEST §III-C, "string substitution"): a string
//! literal of a pool program is replaced by a string the spec uses
//! (engine262's string constants, algorithm names and the built-ins'
//! property keys, [`crate::seed_builtins::SpecVocabulary`]). A program
//! without string literals gets one in place of a random expression.

use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::{Mutant, MutationContext, Mutator, pick_parent, retry, short, splice};
use crate::seed_builtins::quote;
use crate::seed_check::{Node, NodeKind, SyntaxTree};

/// The string-substitution mutator.
pub struct StringSubstitution;

impl Mutator for StringSubstitution {
    fn name(&self) -> &'static str {
        "string"
    }

    fn mutate(&self, ctx: &MutationContext<'_>, rng: &mut ChaCha8Rng) -> Option<Mutant> {
        let parent = pick_parent(ctx, rng)?;
        let v = ctx.vocabulary;
        if v.strings.is_empty() && v.property_keys.is_empty() {
            return None;
        }
        retry(ctx, parent, rng, |source, rng| {
            let tree = SyntaxTree::parse(source)?;
            let literals: Vec<&Node> = tree.of(NodeKind::StringLiteral).collect();
            let node = match literals.choose(rng) {
                Some(n) => *n,
                None => *tree.of(NodeKind::Expression).collect::<Vec<_>>().choose(rng)?,
            };
            let pool = if v.property_keys.is_empty() || (!v.strings.is_empty() && rand::Rng::random_bool(rng, 0.5)) {
                &v.strings
            } else {
                &v.property_keys
            };
            let text = quote(pool.choose(rng)?);
            let detail = format!("string `{}` -> {text}", short(&source[node.start..node.end], 40));
            Some((splice(source, node.start, node.end, &text), detail))
        })
    }
}
