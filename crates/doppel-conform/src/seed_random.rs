//! Random bounded derivations of one nonterminal (JEST, ICSE 2021, §III-B:
//! the random mutator replaces a subtree by a freshly synthesized one of the
//! same nonterminal).
//!
//! A derivation picks, at each syntactic nonterminal, a uniformly random
//! enabled alternative whose shortest string still fits the remaining
//! budget (characters, tokens joined by one space), gives each symbol the
//! budget left after reserving the shortest strings of the symbols after
//! it, and falls back to the shortest string ([`crate::shortest`]) for
//! lexical productions, constrained alternatives (`but not`, `but only if`)
//! and past a depth limit. Leaf productions named in the [`Palette`]
//! (identifiers, numeric and string literals) draw from it instead. So a
//! derivation is at most `budget` characters plus the palette's excess, and
//! the same RNG state gives the same string. Lookaheads are not checked:
//! the caller runs the oxc check on the result.
//!
//! To keep most derivations valid where they are spliced: cover grammars
//! are refined as the spec's supplemental syntax does (ECMA-262 §13.2.1.1,
//! §13.3.1.1, §15.3.1, §15.9.1: a parenthesized expression, arrow
//! parameters, a call, an async arrow head); alternatives that need an
//! enclosing construct (`super`, `new.target`, `import.meta`, private
//! names, `yield`/`await` used as names) are not drawn; assignment and
//! update targets are names from the palette; and a production's
//! first alternative, when it is a single nonterminal (the pass-through of
//! an expression precedence chain), is drawn with weight 3 against 1, so
//! assignments and operators do not pile up.

use rand::Rng;
use rand::seq::IndexedRandom;

use crate::grammar::{NonterminalRef, Symbol};
use crate::shortest::{Instance, Shortest, joined_len};

/// Leaf strings used instead of the grammar's shortest ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    /// For `Identifier` (ECMA-262 §13.1): variable and function names.
    pub identifiers: Vec<String>,
    /// For `NumericLiteral` (§12.9.3).
    pub numbers: Vec<String>,
    /// For `StringLiteral` (§12.9.4), quoted.
    pub strings: Vec<String>,
}

impl Default for Palette {
    /// A few names (`x`, `y`, `f`, `o`), boundary numbers (0, 1, 2^31,
    /// 2^32, 2^53, 1e21, 0.5, 0x10) and short strings.
    fn default() -> Self {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect();
        Palette {
            identifiers: s(&["x", "y", "f", "o", "a"]),
            numbers: s(&[
                "0",
                "1",
                "2",
                "0.5",
                "0x10",
                "2147483648",
                "4294967296",
                "9007199254740992",
                "1e21",
            ]),
            strings: s(&["''", "'a'", "'0'", "'-1'", "'length'", "'\\u0000'"]),
        }
    }
}

/// How deep a derivation may nest before it takes shortest strings.
const DEPTH: usize = 200;

/// A random derivation of `production` under the parameters `params` (names
/// of the true ones), at most about `budget` characters; `None` when the
/// production is unknown or derives nothing.
pub fn derive<R: Rng>(
    s: &Shortest<'_>,
    palette: &Palette,
    production: &str,
    params: &[&str],
    budget: usize,
    rng: &mut R,
) -> Option<String> {
    let g = s.grammar();
    let p = g.index_of(production)?;
    let mut mask = 0;
    for (b, name) in g.productions[p].params.iter().enumerate() {
        if params.contains(&name.as_str()) {
            mask |= 1 << b;
        }
    }
    let i = Instance { production: p, mask };
    let tokens = expand(s, palette, i, budget.max(joined_len(s.value(i)?)), rng, 0)?;
    Some(tokens.join(" "))
}

fn expand<R: Rng>(
    s: &Shortest<'_>,
    palette: &Palette,
    i: Instance,
    budget: usize,
    rng: &mut R,
    depth: usize,
) -> Option<Vec<String>> {
    let g = s.grammar();
    let prod = &g.productions[i.production];
    let leaf = match prod.name.as_str() {
        "Identifier" => Some(&palette.identifiers),
        "NumericLiteral" => Some(&palette.numbers),
        "StringLiteral" => Some(&palette.strings),
        _ => None,
    };
    if let Some(choices) = leaf
        && let Some(c) = choices.choose(rng)
    {
        return Some(vec![c.clone()]);
    }
    let shortest = s.value(i)?.to_vec();
    if prod.is_lexical() || depth > DEPTH {
        return Some(shortest);
    }
    // Alternatives that fit, with each symbol's shortest length.
    let fitting: Vec<(usize, Vec<usize>)> = prod
        .alternatives
        .iter()
        .enumerate()
        .filter(|(_, a)| s.is_enabled(i, a))
        .filter(|(_, a)| !a.symbols.iter().any(needs_context))
        .filter_map(|(k, a)| {
            let mins: Option<Vec<usize>> = a
                .symbols
                .iter()
                .map(|x| match x {
                    Symbol::Optional(_) | Symbol::Lookahead { .. } | Symbol::NoLineTerminator | Symbol::Empty => {
                        Some(0)
                    }
                    other => s.symbol_value(i, other).map(|t| joined_len(&t) + 1),
                })
                .collect();
            let mins = mins?;
            (mins.iter().sum::<usize>() <= budget + 1).then_some((k, mins))
        })
        .collect();
    if fitting.is_empty() {
        return Some(shortest);
    }
    let weights: Vec<u32> = fitting
        .iter()
        .map(|(k, _)| {
            let a = &prod.alternatives[*k];
            let unit = *k == 0 && a.symbols.len() == 1 && matches!(a.symbols[0], Symbol::Nonterminal(_));
            if unit { 3 } else { 1 }
        })
        .collect();
    let mut r = rng.random_range(0..weights.iter().sum::<u32>());
    let at = weights
        .iter()
        .position(|w| {
            let hit = r < *w;
            r = r.saturating_sub(*w);
            hit
        })
        .unwrap_or(0);
    let (k, mins) = &fitting[at];
    let alt = &prod.alternatives[*k];
    let mut out: Vec<String> = Vec::new();
    let mut used = 0usize;
    for (pos, sym) in alt.symbols.iter().enumerate() {
        let rest: usize = mins[pos + 1..].iter().sum();
        let avail = budget.saturating_sub(used + rest);
        let piece = match sym {
            Symbol::Terminal(t) => vec![t.clone()],
            // An assignment or update target: a name (ECMA-262 §13.15.1, §13.4.1 early errors).
            Symbol::Nonterminal(r)
                if r.name == "LeftHandSideExpression"
                    && matches!(prod.name.as_str(), "AssignmentExpression" | "UpdateExpression") =>
            {
                vec![palette.identifiers.choose(rng)?.clone()]
            }
            Symbol::Nonterminal(r) => {
                // The refinement when its shortest string is known, else the cover.
                let y = refine(&prod.name, r)
                    .and_then(|rr| s.resolve(i, &rr))
                    .filter(|y| s.value(*y).is_some())
                    .or_else(|| s.resolve(i, r))?;
                expand(s, palette, y, avail, rng, depth + 1)?
            }
            Symbol::Optional(inner) => {
                let fits = s.symbol_value(i, inner).is_some_and(|t| joined_len(&t) < avail);
                if fits && rng.random_bool(0.5) {
                    match inner.as_ref() {
                        Symbol::Nonterminal(r) => {
                            let y = s.resolve(i, r)?;
                            expand(s, palette, y, avail, rng, depth + 1)?
                        }
                        other => s.symbol_value(i, other)?,
                    }
                } else {
                    Vec::new()
                }
            }
            Symbol::Lookahead { .. } | Symbol::NoLineTerminator | Symbol::Empty => Vec::new(),
            other => s.symbol_value(i, other)?,
        };
        if !piece.is_empty() {
            used += joined_len(&piece) + 1;
        }
        out.extend(piece);
    }
    Some(out)
}

/// Whether an alternative with this symbol is left out of random
/// derivations (see the module doc).
fn needs_context(x: &Symbol) -> bool {
    match x {
        Symbol::ButNot { .. } | Symbol::ButOnlyIf { .. } | Symbol::CodePoint(_) => true,
        Symbol::Terminal(t) => matches!(t.as_str(), "super" | "target" | "meta" | "yield" | "await"),
        Symbol::Nonterminal(r) => matches!(
            r.name.as_str(),
            "PrivateIdentifier" | "SuperProperty" | "SuperCall" | "MetaProperty" | "NewTarget" | "ImportMeta"
        ),
        Symbol::Optional(inner) => needs_context(inner),
        _ => false,
    }
}

/// The productions cover grammars refine to: give them as extra goals to
/// [`Shortest::compute`] (see [`shortest_for_derivations`]), since the
/// grammar reaches them only through the spec's supplemental syntax.
pub const REFINEMENTS: &[&str] = &[
    "ParenthesizedExpression",
    "ArrowFormalParameters",
    "CallMemberExpression",
    "AsyncArrowHead",
];

/// Shortest strings from `goal` and the [`REFINEMENTS`]. Errors: unknown goal.
pub fn shortest_for_derivations<'g>(g: &'g crate::Grammar, goal: &str) -> Result<Shortest<'g>, String> {
    let mut goals = vec![goal];
    goals.extend(REFINEMENTS.iter().filter(|r| g.index_of(r).is_some()));
    Shortest::compute(g, &goals)
}

/// The refinement of a cover grammar nonterminal used inside `parent`
/// (ECMA-262 §13.2.1.1, §13.3.1.1, §15.3.1, §15.9.1), same arguments.
fn refine(parent: &str, r: &NonterminalRef) -> Option<NonterminalRef> {
    let name = match (parent, r.name.as_str()) {
        ("PrimaryExpression", "CoverParenthesizedExpressionAndArrowParameterList") => "ParenthesizedExpression",
        ("ArrowParameters", "CoverParenthesizedExpressionAndArrowParameterList") => "ArrowFormalParameters",
        ("CallExpression", "CoverCallExpressionAndAsyncArrowHead") => "CallMemberExpression",
        ("AsyncArrowFunction", "CoverCallExpressionAndAsyncArrowHead") => "AsyncArrowHead",
        _ => return None,
    };
    Some(NonterminalRef {
        name: name.into(),
        args: r.args.clone(),
    })
}
