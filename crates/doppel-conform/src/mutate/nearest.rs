//! Nearest syntax tree mutation (JEST §III-B, target selection, and §III-C):
//! pick an uncovered spec step whose algorithm the pool already reaches,
//! take the pool program nearest to it, and mutate that program at random.
//!
//! Nearness: a program covering the target's algorithm scores the depth of
//! the longest step-label prefix it shares with the target (a program that
//! took step `6.a` is nearer to `6.a.ii` than one that took only `6`);
//! ties go to the program covering fewer steps in all (the smaller one),
//! then to the earlier one. Without any uncovered step of a covered
//! algorithm, the target is an uncovered algorithm and any program is as
//! near as another (a uniformly drawn parent).

use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::random::mutate_program;
use super::{Mutant, MutationContext, Mutator, pick_parent};

/// The nearest-syntax-tree mutator.
pub struct NearestSyntaxTree;

impl Mutator for NearestSyntaxTree {
    fn name(&self) -> &'static str {
        "nearest"
    }

    fn mutate(&self, ctx: &MutationContext<'_>, rng: &mut ChaCha8Rng) -> Option<Mutant> {
        let (parent, target) = match select_target(ctx, rng) {
            Some(t) => (nearest_program(ctx, t)?, ctx.catalogue.steps[t].id.clone()),
            None => (pick_parent(ctx, rng)?, "any uncovered algorithm".into()),
        };
        let mut m = mutate_program(ctx, parent, rng)?;
        m.detail = format!("toward {target}: {}", m.detail);
        Some(m)
    }
}

/// A uniformly drawn uncovered step (index into the catalogue) whose
/// algorithm is covered, if any.
pub fn select_target(ctx: &MutationContext<'_>, rng: &mut ChaCha8Rng) -> Option<usize> {
    let candidates: Vec<usize> = ctx
        .catalogue
        .steps
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            !ctx.covered.steps.contains(&(*i as u32)) && ctx.covered.algorithms.contains(&(s.algorithm as u32))
        })
        .map(|(i, _)| i)
        .collect();
    candidates.choose(rng).copied()
}

/// How many leading label components two step labels share (`6.a.i` and `6.a.ii`: 2).
pub fn shared_depth(a: &str, b: &str) -> usize {
    a.split('.').zip(b.split('.')).take_while(|(x, y)| x == y).count()
}

/// The pool index of the program nearest to step `target` (see the module
/// doc), `None` when no program covers its algorithm.
pub fn nearest_program(ctx: &MutationContext<'_>, target: usize) -> Option<usize> {
    let cat = ctx.catalogue;
    let step = &cat.steps[target];
    let algorithm = step.algorithm as u32;
    ctx.pool
        .iter()
        .enumerate()
        .filter(|(_, k)| k.coverage.algorithms.binary_search(&algorithm).is_ok())
        .map(|(i, k)| {
            let depth = k
                .coverage
                .steps
                .iter()
                .filter_map(|s| cat.steps.get(*s as usize))
                .filter(|s| s.algorithm == step.algorithm)
                .map(|s| shared_depth(&s.label, &step.label))
                .max()
                .unwrap_or(0);
            (std::cmp::Reverse(depth), k.coverage.steps.len(), i)
        })
        .min()
        .map(|(_, _, i)| i)
}
