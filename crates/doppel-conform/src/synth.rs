//! Non-recursive seed synthesis and syntax coverage (JEST, ICSE 2021,
//! section III-A): one program per reachable alternative of the syntactic
//! grammar, the alternative's symbols at their shortest strings, placed in
//! the shortest context that derives it from the goal symbol.
//!
//! Contexts are found by a second fixpoint (shortest total length, each
//! instance remembering the parent alternative and position it was reached
//! through); a program is rebuilt bottom-up along that chain with the real
//! hole content, re-checking every lookahead on the way. An alternative
//! whose program breaks a lookahead is reachable but not reached.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::grammar::{Grammar, Symbol};
use crate::shortest::{Instance, Shortest, joined_len};

/// One synthesized program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seed {
    /// The program text (tokens joined by one space).
    pub program: String,
    /// The production whose alternative it covers.
    pub production: String,
    /// The parameters true for the instance used.
    pub params: Vec<String>,
    /// The alternative's index in the production.
    pub alternative: usize,
}

/// Alternatives reached over alternatives reachable (JEST reports 97.78%
/// for ES2019 through its grammar; doppel counts syntactic productions,
/// alternative = production name + index, parameters merged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyntaxCoverage {
    /// Alternatives for which a program was synthesized.
    pub reached: usize,
    /// Alternatives enabled in some instance reachable from the goal.
    pub reachable: usize,
    /// The reachable alternatives not reached, as `Production#index`.
    pub missed: Vec<String>,
}

impl SyntaxCoverage {
    /// `reached / reachable` (1 when nothing is reachable).
    pub fn ratio(&self) -> f64 {
        if self.reachable == 0 {
            1.0
        } else {
            self.reached as f64 / self.reachable as f64
        }
    }
}

/// The seeds and their coverage.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Synthesis {
    /// One program per reached alternative, in grammar order.
    pub seeds: Vec<Seed>,
    /// The syntax coverage of `seeds`.
    pub coverage: SyntaxCoverage,
}

/// How an instance is reached from the goal: its parent instance, the
/// parent's alternative index and the symbol position; total length.
#[derive(Debug, Clone, Copy)]
struct Context {
    parent: Option<Edge>,
    len: usize,
}

/// Synthesizes one program per reachable syntactic alternative from `goal`
/// (`Script` or `Module`), by the grammar alone. Errors name an unknown goal.
pub fn synthesize(grammar: &Grammar, goal: &str) -> Result<Synthesis, String> {
    synthesize_accepted(grammar, goal, &|_| true)
}

/// [`synthesize`] keeping only programs oxc accepts as a Script, without
/// syntax or early errors ([`crate::seed_check::oxc_check`]; JEST §III-A);
/// a rejected program is retried in other contexts and instances. The
/// coverage is then JEST's figure: alternatives with an accepted program
/// over reachable alternatives.
pub fn synthesize_checked(grammar: &Grammar, goal: &str) -> Result<Synthesis, String> {
    synthesize_accepted(grammar, goal, &|p| crate::seed_check::oxc_check(p).is_ok())
}

/// [`synthesize`] keeping only programs `accept` takes; a rejected program
/// is retried in other contexts (parent edges, depth first, within the
/// budget) and other instances of its production.
pub fn synthesize_accepted(grammar: &Grammar, goal: &str, accept: &dyn Fn(&str) -> bool) -> Result<Synthesis, String> {
    let shortest = Shortest::compute(grammar, &[goal])?;
    let root = Instance {
        production: grammar.index_of(goal).expect("checked by compute"),
        mask: 0,
    };
    let contexts = contexts(&shortest, root);
    let parents = parents(&shortest, &contexts);
    let mut seeds = Vec::new();
    let mut reachable = BTreeSet::new();
    let mut reached = BTreeSet::new();
    let syntactic: Vec<Instance> = shortest
        .reachable
        .iter()
        .copied()
        .filter(|i| !grammar.productions[i.production].is_lexical())
        .collect();
    for i in &syntactic {
        for (a, alt) in grammar.productions[i.production].alternatives.iter().enumerate() {
            if shortest.is_enabled(*i, alt) {
                reachable.insert((i.production, a));
            }
        }
    }
    for &(p, a) in &reachable {
        // The first instance (lowest mask) whose program builds.
        let built = syntactic
            .iter()
            .filter(|i| i.production == p && shortest.is_enabled(**i, &grammar.productions[p].alternatives[a]))
            .find_map(|i| build(&shortest, &parents, root, *i, a, accept).map(|prog| (*i, prog)));
        if let Some((i, tokens)) = built {
            reached.insert((p, a));
            seeds.push(Seed {
                program: tokens.join(" "),
                production: grammar.productions[p].name.clone(),
                params: shortest.true_params(i),
                alternative: a,
            });
        }
    }
    let missed = reachable
        .difference(&reached)
        .map(|(p, a)| format!("{}#{a}", grammar.productions[*p].name))
        .collect();
    Ok(Synthesis {
        seeds,
        coverage: SyntaxCoverage {
            reached: reached.len(),
            reachable: reachable.len(),
            missed,
        },
    })
}

/// The shortest context of every syntactic instance reachable from `root`.
fn contexts(s: &Shortest<'_>, root: Instance) -> BTreeMap<Instance, Context> {
    let g = s.grammar();
    let mut ctx = BTreeMap::new();
    ctx.insert(root, Context { parent: None, len: 0 });
    let mut work = VecDeque::from([root]);
    while let Some(x) = work.pop_front() {
        let base = ctx[&x].len;
        for (a, alt) in g.productions[x.production].alternatives.iter().enumerate() {
            if !s.is_enabled(x, alt) {
                continue;
            }
            for (pos, sym) in alt.symbols.iter().enumerate() {
                let r = match sym {
                    Symbol::Nonterminal(r) => r,
                    Symbol::Optional(inner) => match inner.as_ref() {
                        Symbol::Nonterminal(r) => r,
                        _ => continue,
                    },
                    _ => continue,
                };
                let Some(y) = s.resolve(x, r) else { continue };
                if g.productions[y.production].is_lexical() {
                    continue;
                }
                let Some(hole) = s.value(y) else { continue };
                let Some(tokens) = s.evaluate(x, alt, Some((pos, hole))) else {
                    continue;
                };
                let len = base + joined_len(&tokens) - joined_len(hole)
                    + cover_penalty(&g.productions[x.production].name, alt);
                if ctx.get(&y).is_none_or(|c: &Context| len < c.len) {
                    ctx.insert(
                        y,
                        Context {
                            parent: Some((x, a, pos)),
                            len,
                        },
                    );
                    work.push_back(y);
                }
            }
        }
    }
    ctx
}

/// Extra context length for going through an arrow function's cover
/// alternative (ESMeta ids `parencover` in ArrowParameters, `callcover` in
/// AsyncArrowFunction): there the cover must refine to parameters
/// (ECMA-262 15.3, 15.9), which shortest strings do not honour, so these
/// contexts are used only when nothing else reaches an instance.
const COVER_PENALTY: usize = 1000;

fn cover_penalty(production: &str, alt: &crate::grammar::Alternative) -> usize {
    match (production, alt.id.as_deref()) {
        ("ArrowParameters", Some("parencover")) | ("AsyncArrowFunction", Some("callcover")) => COVER_PENALTY,
        _ => 0,
    }
}

/// Every syntactic edge (parent instance, its alternative, the position)
/// into each instance that has a context, best context first.
type Parents = BTreeMap<Instance, Vec<Edge>>;

/// A parent instance, its alternative index and the symbol position.
type Edge = (Instance, usize, usize);

fn parents(s: &Shortest<'_>, ctx: &BTreeMap<Instance, Context>) -> Parents {
    let g = s.grammar();
    let mut out: BTreeMap<Instance, Vec<(usize, Edge)>> = BTreeMap::new();
    for (&x, c) in ctx {
        for (a, alt) in g.productions[x.production].alternatives.iter().enumerate() {
            if !s.is_enabled(x, alt) {
                continue;
            }
            for (pos, sym) in alt.symbols.iter().enumerate() {
                let r = match sym {
                    Symbol::Nonterminal(r) => r,
                    Symbol::Optional(inner) => match inner.as_ref() {
                        Symbol::Nonterminal(r) => r,
                        _ => continue,
                    },
                    _ => continue,
                };
                let Some(y) = s.resolve(x, r) else { continue };
                if !ctx.contains_key(&y) {
                    continue;
                }
                // Parents by their own context length; arrow covers last.
                let len = c.len + cover_penalty(&g.productions[x.production].name, alt);
                out.entry(y).or_default().push((len, (x, a, pos)));
            }
        }
    }
    out.into_iter()
        .map(|(y, mut v)| {
            // The recorded shortest-context edge first, then by context length.
            let best = ctx[&y].parent;
            v.sort_by_key(|(len, e)| (Some(*e) != best, *len, *e));
            (y, v.into_iter().map(|(_, e)| e).collect())
        })
        .collect()
}

/// How many alternative evaluations one program may cost while searching
/// for a context whose lookaheads accept it.
const BUDGET: usize = 4000;

/// The program for alternative `a` of `i`: the alternative at its shortest,
/// wrapped in a context up to the goal (the shortest first; on a lookahead
/// failure, other parent edges, depth first, within [`BUDGET`]).
fn build(
    s: &Shortest<'_>,
    parents: &Parents,
    root: Instance,
    i: Instance,
    a: usize,
    accept: &dyn Fn(&str) -> bool,
) -> Option<Vec<String>> {
    let g = s.grammar();
    let alt = &g.productions[i.production].alternatives[a];
    // Each form of the alternative gets its own search budget.
    for tokens in alternative_variants(s, i, alt, None) {
        let mut budget = BUDGET;
        let mut path = BTreeSet::from([i]);
        if let Some(done) = wrap(s, parents, root, i, tokens, &mut path, &mut budget, accept) {
            return Some(done);
        }
    }
    None
}

/// How many other strings of a symbol [`alternative_variants`] tries.
const VARIANTS: usize = 6;

/// The alternative at its shortest (with the hole), then with one other
/// symbol at a variant ([`Shortest::variants`]) or one optional present:
/// when a program is rejected (an early error such as `0 = 0` or `const $;`),
/// a sibling's other short form often fixes it.
fn alternative_variants(
    s: &Shortest<'_>,
    i: Instance,
    alt: &crate::grammar::Alternative,
    hole: Option<(usize, &[String])>,
) -> Vec<Vec<String>> {
    let holes: Vec<(usize, &[String])> = hole.into_iter().collect();
    let mut out: Vec<Vec<String>> = s.evaluate_holes(i, alt, &holes).into_iter().collect();
    for (pos, sym) in alt.symbols.iter().enumerate() {
        if hole.is_some_and(|(h, _)| h == pos) {
            continue;
        }
        let r = match sym {
            Symbol::Nonterminal(r) => r,
            Symbol::Optional(inner) => match inner.as_ref() {
                Symbol::Nonterminal(r) => r,
                _ => continue,
            },
            _ => continue,
        };
        let Some(y) = s.resolve(i, r) else { continue };
        for v in s.variants(y, 6, VARIANTS) {
            let mut with = holes.clone();
            with.push((pos, &v));
            if let Some(t) = s.evaluate_holes(i, alt, &with)
                && !out.contains(&t)
            {
                out.push(t);
            }
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn wrap(
    s: &Shortest<'_>,
    parents: &Parents,
    root: Instance,
    at: Instance,
    tokens: Vec<String>,
    path: &mut BTreeSet<Instance>,
    budget: &mut usize,
    accept: &dyn Fn(&str) -> bool,
) -> Option<Vec<String>> {
    if at == root {
        return accept(&tokens.join(" ")).then_some(tokens);
    }
    for &(p, pa, pos) in parents.get(&at).into_iter().flatten() {
        if *budget == 0 {
            return None;
        }
        *budget -= 1;
        if path.contains(&p) {
            continue;
        }
        let alt = &s.grammar().productions[p.production].alternatives[pa];
        path.insert(p);
        // Siblings' other forms only in the direct parent (`const $ = 0`).
        let ups = if path.len() == 2 {
            alternative_variants(s, p, alt, Some((pos, &tokens)))
        } else {
            s.evaluate(p, alt, Some((pos, &tokens))).into_iter().collect()
        };
        let fresh = ups.len() > 1;
        for up in ups {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            // Each sibling form gets its own search budget.
            let mut own = BUDGET;
            let b = if fresh { &mut own } else { &mut *budget };
            let done = wrap(s, parents, root, p, up, path, b, accept);
            if done.is_some() {
                path.remove(&p);
                return done;
            }
        }
        path.remove(&p);
    }
    None
}
