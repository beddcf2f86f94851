//! Random mutation (JEST §III-C, "random mutation"): a random expression or
//! statement of a pool program is replaced by a fresh random derivation of
//! the same nonterminal ([`crate::seed_random::derive`]):
//! `AssignmentExpression[+In]` (parenthesized, so it fits any expression
//! position) or `Statement` with `Return`, `Yield` and `Await` as legal at
//! the spot, its identifiers drawn from the names the program declares and
//! a few global built-ins. Without a grammar, the replacement is a subtree of the same
//! kind taken from another pool program (splicing).

use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::{Mutant, MutationContext, Mutator, pick_parent, retry, short, splice};
use crate::seed_check::{Node, NodeKind, SyntaxTree};
use crate::seed_random::{Palette, derive};

/// The random mutator.
pub struct RandomMutation;

/// Characters a derived expression may take.
const EXPRESSION_BUDGET: usize = 40;
/// Characters a derived statement may take.
const STATEMENT_BUDGET: usize = 60;

impl Mutator for RandomMutation {
    fn name(&self) -> &'static str {
        "random"
    }

    fn mutate(&self, ctx: &MutationContext<'_>, rng: &mut ChaCha8Rng) -> Option<Mutant> {
        let parent = pick_parent(ctx, rng)?;
        mutate_program(ctx, parent, rng)
    }
}

fn replaceable(n: &Node) -> bool {
    matches!(
        n.kind,
        NodeKind::Expression | NodeKind::ListStatement | NodeKind::BodyStatement
    )
}

/// How many global built-in names join the program's own names as
/// identifiers of a derivation.
const GLOBALS: usize = 3;

/// The palette for a derivation inside `tree`'s program: the names it
/// declares and a few global built-ins (`Array`, `Math`), so that most
/// identifiers resolve instead of throwing a ReferenceError; the default
/// names when there are none.
fn palette_for(ctx: &MutationContext<'_>, tree: &SyntaxTree, rng: &mut ChaCha8Rng) -> Palette {
    let mut p = ctx.palette.clone();
    let globals: Vec<&str> = ctx
        .vocabulary
        .builtins
        .iter()
        .map(|b| b.path.as_str())
        .filter(|b| b.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let mut names = tree.bindings.clone();
    for _ in 0..GLOBALS {
        if let Some(g) = globals.choose(rng) {
            names.push(g.to_string());
        }
    }
    if !names.is_empty() {
        p.identifiers = names;
    }
    p
}

/// A random replacement for `node`: a derivation, or a donor subtree.
fn replacement(ctx: &MutationContext<'_>, tree: &SyntaxTree, node: &Node, rng: &mut ChaCha8Rng) -> Option<String> {
    let expression = node.kind == NodeKind::Expression;
    if let Some(s) = ctx.grammar {
        let palette = palette_for(ctx, tree, rng);
        let mut params: Vec<&str> = Vec::new();
        if node.context.generator {
            params.push("Yield");
        }
        if node.context.asynchronous {
            params.push("Await");
        }
        return if expression {
            params.push("In");
            derive(s, &palette, "AssignmentExpression", &params, EXPRESSION_BUDGET, rng).map(|e| format!("({e})"))
        } else {
            if node.context.function {
                params.push("Return");
            }
            derive(s, &palette, "Statement", &params, STATEMENT_BUDGET, rng)
        };
    }
    // Splicing: a node of the same kind from a random pool program.
    let donor = &ctx.pool.choose(rng)?.source;
    let tree = SyntaxTree::parse(donor)?;
    let same: Vec<&Node> = tree
        .nodes
        .iter()
        .filter(|n| (n.kind == NodeKind::Expression) == expression && replaceable(n))
        .collect();
    let d = same.choose(rng)?;
    let text = &donor[d.start..d.end];
    Some(if expression {
        format!("({text})")
    } else {
        text.to_string()
    })
}

/// One random mutation of pool program `parent`.
pub fn mutate_program(ctx: &MutationContext<'_>, parent: usize, rng: &mut ChaCha8Rng) -> Option<Mutant> {
    retry(ctx, parent, rng, |source, rng| {
        let tree = SyntaxTree::parse(source)?;
        let nodes: Vec<&Node> = tree.nodes.iter().filter(|n| replaceable(n)).collect();
        let node = *nodes.choose(rng)?;
        let text = replacement(ctx, &tree, node, rng)?;
        let what = if node.kind == NodeKind::Expression {
            "expression"
        } else {
            "statement"
        };
        let detail = format!(
            "{what} `{}` -> `{}`",
            short(&source[node.start..node.end], 40),
            short(&text, 40)
        );
        Some((splice(source, node.start, node.end, &text), detail))
    })
}
