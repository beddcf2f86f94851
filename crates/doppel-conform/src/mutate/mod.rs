//! The five mutators of JEST (ICSE 2021, §III-B and §III-C), one file each,
//! registered in [`registry`]:
//!
//! - [`random`]: a random subtree replaced by a random derivation of the
//!   same nonterminal (expression or statement);
//! - [`nearest`]: target selection (an uncovered step of a covered
//!   algorithm) and the pool program nearest to it, mutated;
//! - [`strings`]: a string literal replaced by a spec string;
//! - [`objects`]: a property name or expression replaced by spec property
//!   keys, well-known symbols and objects built from them;
//! - [`diverters`]: `break`/`continue`/`return`/`throw` inserted where legal;
//! - [`activate`] (beyond JEST): values of the right shape, drivers that
//!   call what the program defines, the program as eval code.
//!
//! A mutator edits source text at spans of oxc's syntax tree
//! ([`crate::seed_check::SyntaxTree`]) and returns only programs oxc accepts
//! (it retries up to [`ATTEMPTS`] times). Given the same context and RNG
//! state it returns the same mutant.

use doppel_engines::coverage::{Catalogue, CoverageUnion};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::pool::Kept;
use crate::seed_builtins::SpecVocabulary;
use crate::seed_check::oxc_check;
use crate::seed_random::Palette;
use crate::shortest::Shortest;

pub mod activate;
pub mod diverters;
pub mod nearest;
pub mod objects;
pub mod random;
pub mod strings;

/// How many candidate edits a mutator tries before giving up.
pub const ATTEMPTS: usize = 24;

/// Everything a mutator may read: the pool and what it covers, the spec
/// vocabulary and (when a grammar is loaded) shortest strings for random
/// derivations.
pub struct MutationContext<'a> {
    /// The programs kept so far (parents are drawn from them).
    pub pool: &'a [Kept],
    /// The union of the pool's semantics coverage.
    pub covered: &'a CoverageUnion,
    /// engine262's algorithms and steps.
    pub catalogue: &'a Catalogue,
    /// Built-ins, property keys, symbols and spec strings.
    pub vocabulary: &'a SpecVocabulary,
    /// Shortest strings of the ES2025 grammar, for random derivations; `None`
    /// without a grammar (random mutation then splices subtrees between pool programs).
    pub grammar: Option<&'a Shortest<'a>>,
    /// Leaf strings for random derivations.
    pub palette: &'a Palette,
}

/// One mutant: the new program, the index of its parent in the pool, and
/// what was done (for the record: `expression -> (x = 1)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// The mutated program (accepted by oxc).
    pub source: String,
    /// Index of the parent in [`MutationContext::pool`].
    pub parent: usize,
    /// A one-line description of the edit.
    pub detail: String,
}

/// A mutator (JEST §III-C).
pub trait Mutator: Send + Sync {
    /// Its registry name (`random`, `nearest`, `string`, `object`, `diverter`, `activate`).
    fn name(&self) -> &'static str;

    /// One mutant of a pool program, or `None` when no accepted edit was
    /// found in [`ATTEMPTS`] tries (or the pool is empty).
    fn mutate(&self, ctx: &MutationContext<'_>, rng: &mut ChaCha8Rng) -> Option<Mutant>;
}

/// Every mutator, in a fixed order (one line each).
pub fn registry() -> Vec<Box<dyn Mutator>> {
    vec![
        Box::new(random::RandomMutation),
        Box::new(nearest::NearestSyntaxTree),
        Box::new(strings::StringSubstitution),
        Box::new(objects::ObjectSubstitution),
        Box::new(diverters::StatementInsertion),
        Box::new(activate::Activation),
    ]
}

/// `source` with bytes `start..end` replaced by `text`.
pub fn splice(source: &str, start: usize, end: usize, text: &str) -> String {
    let mut out = String::with_capacity(source.len() + text.len());
    out.push_str(&source[..start]);
    out.push_str(text);
    out.push_str(&source[end..]);
    out
}

/// A uniformly drawn pool index, `None` for an empty pool.
pub fn pick_parent(ctx: &MutationContext<'_>, rng: &mut ChaCha8Rng) -> Option<usize> {
    (!ctx.pool.is_empty()).then(|| rng.random_range(0..ctx.pool.len()))
}

/// Whether a candidate is a real mutant: oxc accepts it and it differs from its parent.
pub fn accepted(candidate: &str, parent: &str) -> bool {
    candidate != parent && oxc_check(candidate).is_ok()
}

/// Tries `edit` on pool program `parent` up to [`ATTEMPTS`] times; the first
/// accepted result wins.
pub fn retry(
    ctx: &MutationContext<'_>,
    parent: usize,
    rng: &mut ChaCha8Rng,
    mut edit: impl FnMut(&str, &mut ChaCha8Rng) -> Option<(String, String)>,
) -> Option<Mutant> {
    let source = &ctx.pool.get(parent)?.source;
    for _ in 0..ATTEMPTS {
        if let Some((candidate, detail)) = edit(source, rng)
            && accepted(&candidate, source)
        {
            return Some(Mutant {
                source: candidate,
                parent,
                detail,
            });
        }
    }
    None
}

/// The first `n` characters of `s` on one line, for details.
pub fn short(s: &str, n: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= n {
        one
    } else {
        format!("{}...", one.chars().take(n).collect::<String>())
    }
}
