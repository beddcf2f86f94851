//! Activation (doppel's addition to JEST's five mutators): a pool program
//! with a value of the right shape in its value positions, or with drivers
//! that call the functions, generators and classes it defines, or run as
//! the code of a direct `eval` ([`crate::seed_activate::activate`]). The
//! other mutators insert functions and loops that nothing calls or that
//! never iterate; this one makes their bodies run, so that mutating the
//! body can add coverage.

use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::{Mutant, MutationContext, Mutator, pick_parent};
use crate::seed_activate::activate;

/// The activation mutator.
pub struct Activation;

impl Mutator for Activation {
    fn name(&self) -> &'static str {
        "activate"
    }

    fn mutate(&self, ctx: &MutationContext<'_>, rng: &mut ChaCha8Rng) -> Option<Mutant> {
        let parent = pick_parent(ctx, rng)?;
        let variants = activate(&ctx.pool[parent].source);
        let (i, source) = variants.iter().enumerate().collect::<Vec<_>>().choose(rng).copied()?;
        Some(Mutant {
            source: source.clone(),
            parent,
            detail: format!("activated variant {} of {}", i + 1, variants.len()),
        })
    }
}
