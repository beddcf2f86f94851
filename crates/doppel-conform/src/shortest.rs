//! Shortest strings per nonterminal and parameter combination (JEST,
//! ICSE 2021, section III-A), by a worklist fixpoint: a production's value
//! is the shortest of its enabled alternatives with every symbol replaced by
//! its current value; a change re-queues the productions that use it.
//!
//! Values are token lists: a syntactic string is its tokens (joined by one
//! space in programs), a lexical string is one token (its code points
//! concatenated). Lookaheads are checked against the tokens (syntactic) or
//! code points (lexical) that follow inside the alternative.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use crate::grammar::{Alternative, ArgKind, Grammar, NonterminalRef, Symbol};

/// A production under one parameter combination: the production's index
/// and a bit mask over its parameters (bit i = `params[i]` is true).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instance {
    /// Index into [`Grammar::productions`].
    pub production: usize,
    /// Bit i set = the i-th parameter is true.
    pub mask: u32,
}

/// Representative code points tried for "any code point" symbols, in order.
const PROBES: &[&str] = &["a", "b", "x", "0", "1", "_", "$", "!", "#", "%", "~", " "];

/// Shortest strings of every instance reachable from the goals.
#[derive(Debug, Clone)]
pub struct Shortest<'g> {
    grammar: &'g Grammar,
    /// Every instance reachable from the goals (through any symbol).
    pub reachable: BTreeSet<Instance>,
    values: Arc<BTreeMap<Instance, Vec<String>>>,
}

/// The grammar-independent result of [`Shortest::compute`], to keep beside
/// an owned grammar and view again with [`Shortest::from_parts`] (values are
/// shared, not copied).
#[derive(Debug, Clone)]
pub struct ShortestParts {
    /// As [`Shortest::reachable`].
    pub reachable: BTreeSet<Instance>,
    values: Arc<BTreeMap<Instance, Vec<String>>>,
}

/// The length of tokens joined by single spaces.
pub fn joined_len(tokens: &[String]) -> usize {
    tokens.iter().map(String::len).sum::<usize>() + tokens.len().saturating_sub(1)
}

impl<'g> Shortest<'g> {
    /// Computes the fixpoint for the instances reachable from `goals`
    /// (production names without parameters, e.g. `Script`). Unknown goal
    /// names are an error naming them.
    pub fn compute(grammar: &'g Grammar, goals: &[&str]) -> Result<Shortest<'g>, String> {
        let mut start = Vec::new();
        for g in goals {
            let production = grammar
                .index_of(g)
                .ok_or_else(|| format!("goal symbol {g} is not in the grammar"))?;
            start.push(Instance { production, mask: 0 });
        }
        let mut s = Shortest {
            grammar,
            reachable: BTreeSet::new(),
            values: Arc::new(BTreeMap::new()),
        };
        // Reachability and the reverse dependency edges.
        let mut users: BTreeMap<Instance, BTreeSet<Instance>> = BTreeMap::new();
        let mut queue: VecDeque<Instance> = start.into_iter().collect();
        while let Some(i) = queue.pop_front() {
            if !s.reachable.insert(i) {
                continue;
            }
            for alt in s.enabled(i) {
                for callee in s.callees(i, &alt.symbols) {
                    users.entry(callee).or_default().insert(i);
                    queue.push_back(callee);
                }
            }
        }
        // The fixpoint: a value only ever gets strictly shorter.
        let mut work: VecDeque<Instance> = s.reachable.iter().copied().collect();
        let mut queued: BTreeSet<Instance> = s.reachable.clone();
        while let Some(i) = work.pop_front() {
            queued.remove(&i);
            let best = s
                .enabled(i)
                .filter_map(|alt| s.evaluate(i, alt, None))
                .min_by_key(|t| joined_len(t));
            let Some(best) = best else { continue };
            let better = s.values.get(&i).is_none_or(|old| joined_len(&best) < joined_len(old));
            if better {
                // The only reference while computing: no copy.
                Arc::make_mut(&mut s.values).insert(i, best);
                for u in users.get(&i).into_iter().flatten() {
                    if queued.insert(*u) {
                        work.push_back(*u);
                    }
                }
            }
        }
        Ok(s)
    }

    /// The result without the grammar borrow (shares the values).
    pub fn parts(&self) -> ShortestParts {
        ShortestParts {
            reachable: self.reachable.clone(),
            values: Arc::clone(&self.values),
        }
    }

    /// A view of `parts` (from [`Shortest::parts`] on the same grammar) over `grammar`.
    pub fn from_parts(grammar: &'g Grammar, parts: &ShortestParts) -> Shortest<'g> {
        Shortest {
            grammar,
            reachable: parts.reachable.clone(),
            values: Arc::clone(&parts.values),
        }
    }

    /// The grammar.
    pub fn grammar(&self) -> &'g Grammar {
        self.grammar
    }

    /// The shortest tokens of an instance, if it derives any string.
    pub fn value(&self, i: Instance) -> Option<&[String]> {
        self.values.get(&i).map(Vec::as_slice)
    }

    /// The true parameters of an instance, by name.
    pub fn true_params(&self, i: Instance) -> Vec<String> {
        let p = &self.grammar.productions[i.production];
        p.params
            .iter()
            .enumerate()
            .filter(|(b, _)| i.mask & (1 << b) != 0)
            .map(|(_, n)| n.clone())
            .collect()
    }

    fn param(&self, i: Instance, name: &str) -> bool {
        let p = &self.grammar.productions[i.production];
        p.params
            .iter()
            .position(|n| n == name)
            .is_some_and(|b| i.mask & (1 << b) != 0)
    }

    /// Whether alternative `alt` is enabled under `i`'s parameters.
    pub fn is_enabled(&self, i: Instance, alt: &Alternative) -> bool {
        alt.conditions.iter().all(|(n, v)| self.param(i, n) == *v)
    }

    /// The alternatives of `i` whose conditions hold.
    pub fn enabled(&self, i: Instance) -> impl Iterator<Item = &'g Alternative> + '_ {
        self.grammar.productions[i.production]
            .alternatives
            .iter()
            .filter(move |a| self.is_enabled(i, a))
    }

    /// The instance a reference denotes when used inside `caller`; `None`
    /// for a production the grammar lacks.
    pub fn resolve(&self, caller: Instance, r: &NonterminalRef) -> Option<Instance> {
        let production = self.grammar.index_of(&r.name)?;
        let mut mask = 0;
        for (b, name) in self.grammar.productions[production].params.iter().enumerate() {
            let on = match r.args.iter().find(|a| &a.name == name).map(|a| a.kind) {
                Some(ArgKind::True) => true,
                Some(ArgKind::Pass) => self.param(caller, name),
                Some(ArgKind::False) | None => false,
            };
            if on {
                mask |= 1 << b;
            }
        }
        Some(Instance { production, mask })
    }

    /// The instances a right-hand side refers to (nonterminals, optionals,
    /// constrained bases, lookahead and exclusion nonterminals).
    pub fn callees(&self, caller: Instance, symbols: &[Symbol]) -> Vec<Instance> {
        let mut out = Vec::new();
        for s in symbols {
            match s {
                Symbol::Nonterminal(r) | Symbol::ButOnlyIf { base: r, .. } => out.extend(self.resolve(caller, r)),
                Symbol::Optional(inner) => out.extend(self.callees(caller, std::slice::from_ref(inner))),
                Symbol::ButNot { base, excluded } => {
                    out.extend(self.resolve(caller, base));
                    out.extend(self.callees(caller, excluded));
                }
                Symbol::Lookahead { cases, .. } => {
                    for c in cases {
                        out.extend(self.callees(caller, c));
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn is_lexical(&self, i: Instance) -> bool {
        self.grammar.productions[i.production].is_lexical()
    }

    /// The tokens of one alternative of `i` with every symbol at its
    /// shortest (optionals absent), except position `hole.0`, which gets
    /// `hole.1`; `None` when a symbol has no value yet or a lookahead fails.
    pub fn evaluate(&self, i: Instance, alt: &Alternative, hole: Option<(usize, &[String])>) -> Option<Vec<String>> {
        match hole {
            Some(h) => self.evaluate_holes(i, alt, &[h]),
            None => self.evaluate_holes(i, alt, &[]),
        }
    }

    /// [`Shortest::evaluate`] with several positions given (an optional
    /// given a value is present).
    pub fn evaluate_holes(&self, i: Instance, alt: &Alternative, holes: &[(usize, &[String])]) -> Option<Vec<String>> {
        let mut pieces: Vec<Vec<String>> = Vec::with_capacity(alt.symbols.len());
        for (k, s) in alt.symbols.iter().enumerate() {
            if let Some((_, tokens)) = holes.iter().find(|(pos, _)| *pos == k) {
                pieces.push(tokens.to_vec());
                continue;
            }
            pieces.push(self.symbol_value(i, s)?);
        }
        let lexical = self.is_lexical(i);
        for (k, s) in alt.symbols.iter().enumerate() {
            if let Symbol::Lookahead { contains, cases } = s {
                let following: Vec<String> = pieces[k + 1..].iter().flatten().cloned().collect();
                let hit = cases.iter().any(|c| self.case_matches(i, c, &following, lexical));
                if hit != *contains {
                    return None;
                }
            }
        }
        let tokens: Vec<String> = pieces.into_iter().flatten().collect();
        if lexical {
            let s = tokens.concat();
            return Some(if s.is_empty() { Vec::new() } else { vec![s] });
        }
        Some(tokens)
    }

    /// Other short strings of instance `i` besides its shortest: each enabled
    /// alternative at its shortest, following single-nonterminal
    /// alternatives down to `depth` levels; distinct, shortest first, at most `cap`.
    pub fn variants(&self, i: Instance, depth: usize, cap: usize) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        self.collect_variants(i, depth, &mut out);
        out.sort_by_key(|t| joined_len(t));
        out.dedup();
        out.truncate(cap);
        out
    }

    fn collect_variants(&self, i: Instance, depth: usize, out: &mut Vec<Vec<String>>) {
        if self.is_lexical(i) || out.len() > 64 {
            return;
        }
        for alt in self.enabled(i) {
            if let Some(t) = self.evaluate(i, alt, None)
                && !out.contains(&t)
            {
                out.push(t);
            }
            let real: Vec<&Symbol> = alt
                .symbols
                .iter()
                .filter(|s| !matches!(s, Symbol::Lookahead { .. } | Symbol::NoLineTerminator))
                .collect();
            if depth > 0
                && let [Symbol::Nonterminal(r)] = real.as_slice()
                && let Some(y) = self.resolve(i, r)
            {
                self.collect_variants(y, depth - 1, out);
            }
        }
    }

    /// The shortest tokens of one symbol inside instance `i` (optionals
    /// and lookaheads empty); `None` when it derives nothing.
    pub fn symbol_value(&self, i: Instance, s: &Symbol) -> Option<Vec<String>> {
        match s {
            Symbol::Terminal(t) => Some(vec![t.clone()]),
            Symbol::Nonterminal(r) => self.values.get(&self.resolve(i, r)?).cloned(),
            Symbol::Optional(_) | Symbol::Lookahead { .. } | Symbol::NoLineTerminator | Symbol::Empty => {
                Some(Vec::new())
            }
            Symbol::Abbreviation(a) => abbreviation(a).map(|c| vec![c.to_string()]),
            Symbol::CodePoint(cond) => PROBES
                .iter()
                .find(|p| code_point_matches(cond.as_deref(), p))
                .map(|p| vec![p.to_string()]),
            Symbol::ButNot { base, excluded } => {
                let b = self.resolve(i, base)?;
                let shortest = self.values.get(&b)?.concat();
                std::iter::once(shortest.as_str())
                    .chain(PROBES.iter().copied())
                    .filter(|c| *c == shortest || self.derives_single(b, c, 8))
                    .find(|c| !excluded.iter().any(|e| self.symbol_derives(i, e, c, 8)))
                    .map(|c| vec![c.to_string()])
            }
            Symbol::ButOnlyIf { base, condition, .. } => {
                let b = self.resolve(i, base)?;
                let shortest = self.values.get(&b)?.concat();
                let candidates = [shortest.clone(), "D800".into(), "DC00".into(), "110000".into()];
                candidates
                    .into_iter()
                    .filter(|c| c.len() >= shortest.len() && c.chars().all(|d| d.is_ascii_hexdigit()))
                    .find(|c| mv_condition_holds(c, condition))
                    .map(|c| vec![c])
            }
        }
    }

    /// Whether symbol `s` (inside `caller`) derives exactly the string `c`
    /// through single-symbol alternatives (enough for the exclusions and
    /// lookahead sets of ECMA-262: code points, keywords, digits).
    fn symbol_derives(&self, caller: Instance, s: &Symbol, c: &str, depth: usize) -> bool {
        match s {
            Symbol::Terminal(t) => t == c,
            Symbol::Abbreviation(a) => abbreviation(a).is_some_and(|x| x.to_string() == c),
            Symbol::CodePoint(cond) => c.chars().count() == 1 && code_point_matches(cond.as_deref(), c),
            Symbol::Nonterminal(r) => self
                .resolve(caller, r)
                .is_some_and(|n| self.derives_single(n, c, depth)),
            Symbol::ButNot { base, excluded } => {
                self.resolve(caller, base)
                    .is_some_and(|n| self.derives_single(n, c, depth))
                    && !excluded.iter().any(|e| self.symbol_derives(caller, e, c, depth))
            }
            _ => false,
        }
    }

    fn derives_single(&self, i: Instance, c: &str, depth: usize) -> bool {
        if depth == 0 {
            return false;
        }
        self.enabled(i).any(|alt| {
            let real: Vec<&Symbol> = alt
                .symbols
                .iter()
                .filter(|s| !matches!(s, Symbol::Lookahead { .. } | Symbol::NoLineTerminator))
                .collect();
            real.len() == 1 && self.symbol_derives(i, real[0], c, depth - 1)
        })
    }

    fn case_matches(&self, i: Instance, case: &[Symbol], following: &[String], lexical: bool) -> bool {
        let case: Vec<&Symbol> = case.iter().filter(|s| !matches!(s, Symbol::NoLineTerminator)).collect();
        if lexical {
            let text = following.concat();
            if let [s] = case.as_slice()
                && !matches!(s, Symbol::Terminal(_))
            {
                // A nonterminal case (`DecimalDigit`): some prefix derives from it.
                return (1..=text.chars().count().min(4)).any(|n| {
                    let prefix: String = text.chars().take(n).collect();
                    self.symbol_derives(i, s, &prefix, 8)
                });
            }
            let mut want = String::new();
            for s in case {
                match s {
                    Symbol::Terminal(t) => want.push_str(t),
                    Symbol::Abbreviation(a) => want.extend(abbreviation(a)),
                    _ => return false,
                }
            }
            return text.starts_with(&want);
        }
        case.len() <= following.len()
            && case.iter().zip(following).all(|(s, tok)| match s {
                Symbol::Terminal(t) => t == tok,
                other => self.symbol_derives(i, other, tok, 8),
            })
    }
}

/// The code point an abbreviation names (ECMA-262 tables 33-35).
pub fn abbreviation(a: &str) -> Option<char> {
    Some(match a {
        "TAB" => '\t',
        "VT" => '\u{000B}',
        "FF" => '\u{000C}',
        "ZWNBSP" => '\u{FEFF}',
        "USP" => '\u{00A0}',
        "SP" => ' ',
        "LF" => '\n',
        "CR" => '\r',
        "LS" => '\u{2028}',
        "PS" => '\u{2029}',
        "ZWNJ" => '\u{200C}',
        "ZWJ" => '\u{200D}',
        _ => return None,
    })
}

/// Whether one code point satisfies a `cpCond` (none = any code point).
/// ID_Start/ID_Continue are approximated by Unicode Alphabetic (+ digits,
/// `_` for continue); surrogate code points cannot occur in Rust strings.
fn code_point_matches(cond: Option<&str>, c: &str) -> bool {
    let mut chars = c.chars();
    let (Some(ch), None) = (chars.next(), chars.next()) else {
        return false;
    };
    match cond {
        None => true,
        Some(c) if c.contains("ID_Start") => ch.is_alphabetic(),
        Some(c) if c.contains("ID_Continue") => ch.is_alphanumeric() || ch == '_',
        Some(_) => false,
    }
}

/// Whether the mathematical value of hex digits `digits` satisfies an MV
/// condition as the spec writes it (`≤ 0x10FFFF`, `> 0x10FFFF`, `is (not) in
/// the inclusive interval from 0xD800 to 0xDBFF`); unknown conditions hold.
fn mv_condition_holds(digits: &str, condition: &str) -> bool {
    let Ok(mv) = u64::from_str_radix(digits, 16) else {
        return false;
    };
    let hex: Vec<u64> = condition
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|w| w.strip_prefix("0x"))
        .filter_map(|h| u64::from_str_radix(h, 16).ok())
        .collect();
    match hex.as_slice() {
        [lo, hi] => {
            let inside = (*lo..=*hi).contains(&mv);
            if condition.contains("not") { !inside } else { inside }
        }
        [x] if condition.contains('≤') => mv <= *x,
        [x] if condition.contains('>') => mv > *x,
        _ => true,
    }
}
