//! The ECMAScript grammar as extracted by ESMeta (`grammar.json`, ES2025):
//! productions with parameters, alternatives with conditions, lookaheads,
//! "but not" exclusions, lexical vs syntactic productions (ECMA-262 clause
//! 5.1, "Syntactic and Lexical Grammars", and 5.1.5 "Grammar Notation").
//!
//! The file is read from a path the caller gives (default
//! [`DEFAULT_GRAMMAR_PATH`], relative to the repository); nothing of it is
//! copied into the repository.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where the ESMeta grammar lives, relative to the repository root.
pub const DEFAULT_GRAMMAR_PATH: &str = "../shared/data/ecmascript-grammar/grammar.json";

/// A grammar that could not be loaded.
#[derive(Debug)]
pub enum GrammarError {
    /// The file could not be read (missing, unreadable).
    Read {
        /// The path tried.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The file is not JSON, or not in ESMeta's shape; `at` names the
    /// production (and alternative) where the shape broke.
    Malformed {
        /// The path read (empty when parsing text given in memory).
        path: PathBuf,
        /// What was wrong and where.
        message: String,
    },
}

impl fmt::Display for GrammarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrammarError::Read { path, error } => write!(
                f,
                "cannot read the ECMAScript grammar {}: {error} (pass its path with --grammar; \
                 the default is {DEFAULT_GRAMMAR_PATH} relative to the repository)",
                path.display()
            ),
            GrammarError::Malformed { path, message } => {
                write!(f, "malformed ECMAScript grammar {}: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for GrammarError {}

/// Whether a production belongs to the syntactic grammar (tokens separated by
/// white space) or a lexical one (code points concatenated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProductionKind {
    /// The syntactic grammar (ECMA-262 5.1.4, `:`).
    Syntactic,
    /// The lexical and RegExp grammars (5.1.2, 5.1.3, `::`).
    Lexical,
    /// The numeric string grammar (7.1.4.1, `:::`); treated like lexical.
    NumericString,
}

/// How a nonterminal reference sets one parameter of the referenced
/// production (5.1.5: `[+In]`, `[~In]`, `[?In]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ArgKind {
    /// `?P`: the caller's value of `P`.
    Pass,
    /// `+P`.
    True,
    /// `~P`.
    False,
}

/// One argument of a nonterminal reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Argument {
    /// The parameter name (`Yield`, `Await`, `In`, `Return`, `Tagged`, ...).
    pub name: String,
    /// How it is set.
    pub kind: ArgKind,
}

/// A nonterminal with its arguments, e.g. `Expression[+In, ?Yield]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NonterminalRef {
    /// The production name.
    pub name: String,
    /// Its arguments; a parameter with no argument is false.
    pub args: Vec<Argument>,
}

/// One symbol on a right-hand side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Symbol {
    /// A literal terminal (`;`, `function`, a code point in lexical rules).
    Terminal(String),
    /// A nonterminal.
    Nonterminal(NonterminalRef),
    /// An optional symbol (`X?`, also `,?`).
    Optional(Box<Symbol>),
    /// `[lookahead ∈ {...}]` (`contains`) or `[lookahead ∉ {...}]`; each case
    /// is a sequence of symbols (terminals, nonterminals, no-LineTerminator).
    Lookahead {
        /// True for `∈`, false for `∉`.
        contains: bool,
        /// The cases.
        cases: Vec<Vec<Symbol>>,
    },
    /// `base but not one of ...` (5.1.5).
    ButNot {
        /// The nonterminal constrained.
        base: NonterminalRef,
        /// The excluded symbols.
        excluded: Vec<Symbol>,
    },
    /// `base but only if the <method> of base <condition>` (e.g. `HexDigits`
    /// whose MV is ≤ 0x10FFFF).
    ButOnlyIf {
        /// The nonterminal constrained.
        base: NonterminalRef,
        /// The syntax-directed operation named (`MV`).
        method: String,
        /// The condition as the spec writes it (`≤ 0x10FFFF`).
        condition: String,
    },
    /// `[no LineTerminator here]`.
    NoLineTerminator,
    /// A code point named by its abbreviation (`<LF>`, `<TAB>`, `<USP>`).
    Abbreviation(String),
    /// `[empty]`.
    Empty,
    /// Any code point, optionally with a condition (`with the Unicode
    /// property “ID_Start”`).
    CodePoint(Option<String>),
}

/// One alternative of a production.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alternative {
    /// `[+P]` / `[~P]` guards: (parameter, required value).
    pub conditions: Vec<(String, bool)>,
    /// The right-hand side.
    pub symbols: Vec<Symbol>,
    /// ESMeta's optional id for the alternative (e.g. `parencover`).
    pub id: Option<String>,
}

/// A production: `lhs[params] : alternatives`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Production {
    /// The nonterminal defined.
    pub name: String,
    /// Its parameters, in declaration order.
    pub params: Vec<String>,
    /// Syntactic or lexical.
    pub kind: ProductionKind,
    /// Whether written `one of` (every alternative one terminal).
    pub one_of: bool,
    /// The alternatives, in the spec's order.
    pub alternatives: Vec<Alternative>,
}

impl Production {
    /// Whether its strings are concatenated code points (not tokens).
    pub fn is_lexical(&self) -> bool {
        self.kind != ProductionKind::Syntactic
    }
}

/// The grammar: the normative productions and Annex B's web-compatibility
/// replacements (kept apart; synthesis uses the normative ones).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Grammar {
    /// The normative productions.
    pub productions: Vec<Production>,
    /// Annex B (`prodsForWeb`) productions.
    pub web_productions: Vec<Production>,
    index: BTreeMap<String, usize>,
}

impl Grammar {
    /// Reads and parses an ESMeta `grammar.json`.
    ///
    /// Errors: [`GrammarError::Read`] naming the path and the `--grammar`
    /// flag when the file cannot be read, [`GrammarError::Malformed`] when it
    /// is not in ESMeta's shape.
    pub fn load(path: &Path) -> Result<Grammar, GrammarError> {
        let text = std::fs::read_to_string(path).map_err(|error| GrammarError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Grammar::parse(&text).map_err(|e| match e {
            GrammarError::Malformed { message, .. } => GrammarError::Malformed {
                path: path.to_path_buf(),
                message,
            },
            other => other,
        })
    }

    /// Parses the JSON text of an ESMeta grammar (`{"prods": [...],
    /// "prodsForWeb": [...]}`).
    pub fn parse(text: &str) -> Result<Grammar, GrammarError> {
        let value: Value = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
        let productions = productions_of(value.get("prods"), "prods")?;
        let web_productions = match value.get("prodsForWeb") {
            None => Vec::new(),
            some => productions_of(some, "prodsForWeb")?,
        };
        let mut index = BTreeMap::new();
        for (i, p) in productions.iter().enumerate() {
            if index.insert(p.name.clone(), i).is_some() {
                return Err(malformed(format!("production {} defined twice", p.name)));
            }
        }
        Ok(Grammar {
            productions,
            web_productions,
            index,
        })
    }

    /// The index of the production named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The production named `name`.
    pub fn production(&self, name: &str) -> Option<&Production> {
        self.index_of(name).map(|i| &self.productions[i])
    }
}

fn malformed(message: String) -> GrammarError {
    GrammarError::Malformed {
        path: PathBuf::new(),
        message,
    }
}

fn productions_of(v: Option<&Value>, what: &str) -> Result<Vec<Production>, GrammarError> {
    let list = v
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(format!("`{what}` is not a list of productions")))?;
    list.iter()
        .enumerate()
        .map(|(i, p)| production(p).map_err(|m| malformed(format!("{what}[{i}]: {m}"))))
        .collect()
}

fn production(v: &Value) -> Result<Production, String> {
    let lhs = v.get("lhs").ok_or("no `lhs`")?;
    let name = string(lhs.get("name"), "lhs.name")?;
    let params = lhs
        .get("params")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{name}: no `lhs.params`"))?
        .iter()
        .map(|p| string(Some(p), "param"))
        .collect::<Result<Vec<_>, _>>()?;
    if params.len() > 16 {
        // Instances keep parameter values as bits of a u32 (shortest.rs).
        return Err(format!("{name}: more than 16 parameters"));
    }
    let kind = match v.get("kind").and_then(Value::as_object) {
        Some(o) if o.contains_key("Syntactic") => ProductionKind::Syntactic,
        Some(o) if o.contains_key("Lexical") => ProductionKind::Lexical,
        Some(o) if o.contains_key("NumericString") => ProductionKind::NumericString,
        _ => return Err(format!("{name}: unknown `kind`")),
    };
    let one_of = v.get("oneof").and_then(Value::as_bool).unwrap_or(false);
    let alternatives = v
        .get("rhsVec")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{name}: no `rhsVec`"))?
        .iter()
        .enumerate()
        .map(|(i, a)| alternative(a).map_err(|m| format!("{name}, alternative {i}: {m}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Production {
        name,
        params,
        kind,
        one_of,
        alternatives,
    })
}

fn string(v: Option<&Value>, what: &str) -> Result<String, String> {
    v.and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("`{what}` is not a string"))
}

fn alternative(v: &Value) -> Result<Alternative, String> {
    let conditions = v
        .get("conditions")
        .and_then(Value::as_array)
        .ok_or("no `conditions`")?
        .iter()
        .map(|c| {
            let name = string(c.get("name"), "condition name")?;
            let pass = c
                .get("pass")
                .and_then(Value::as_bool)
                .ok_or("condition without `pass`")?;
            Ok((name, pass))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let symbols = symbols(v.get("symbols"))?;
    let id = v.get("id").and_then(Value::as_str).map(str::to_string);
    Ok(Alternative {
        conditions,
        symbols,
        id,
    })
}

fn symbols(v: Option<&Value>) -> Result<Vec<Symbol>, String> {
    v.and_then(Value::as_array)
        .ok_or("symbols are not a list")?
        .iter()
        .map(symbol)
        .collect()
}

fn nonterminal(v: &Value) -> Result<NonterminalRef, String> {
    let name = string(v.get("name"), "nonterminal name")?;
    let args = v
        .get("args")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{name}: no `args`"))?
        .iter()
        .map(|a| {
            let name = string(a.get("name"), "argument name")?;
            let kind = match a.get("kind").and_then(Value::as_object) {
                Some(o) if o.contains_key("Pass") => ArgKind::Pass,
                Some(o) if o.contains_key("True") => ArgKind::True,
                Some(o) if o.contains_key("False") => ArgKind::False,
                _ => return Err(format!("argument {name}: unknown kind")),
            };
            Ok(Argument { name, kind })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(NonterminalRef { name, args })
}

fn symbol(v: &Value) -> Result<Symbol, String> {
    let o = v.as_object().ok_or("a symbol is not an object")?;
    if let Some(t) = o.get("term") {
        return Ok(Symbol::Terminal(string(Some(t), "term")?));
    }
    if o.contains_key("name") {
        return Ok(Symbol::Nonterminal(nonterminal(v)?));
    }
    if let Some(s) = o.get("symbol") {
        return Ok(Symbol::Optional(Box::new(symbol(s)?)));
    }
    if let Some(cases) = o.get("cases") {
        let contains = o.get("contains").and_then(Value::as_bool).unwrap_or(false);
        let cases = cases
            .as_array()
            .ok_or("lookahead cases are not a list")?
            .iter()
            .map(|c| symbols(Some(c)))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Symbol::Lookahead { contains, cases });
    }
    if let Some(base) = o.get("base") {
        let base = nonterminal(base)?;
        if let Some(excluded) = o.get("notCases") {
            let excluded = symbols(Some(excluded))?;
            return Ok(Symbol::ButNot { base, excluded });
        }
        return Ok(Symbol::ButOnlyIf {
            base,
            method: string(o.get("methodName"), "methodName")?,
            condition: string(o.get("cond"), "cond")?,
        });
    }
    if o.contains_key("nlt") {
        return Ok(Symbol::NoLineTerminator);
    }
    if let Some(a) = o.get("abbr") {
        return Ok(Symbol::Abbreviation(string(Some(a), "abbr")?));
    }
    if o.contains_key("empty") {
        return Ok(Symbol::Empty);
    }
    if let Some(c) = o.get("cpCond") {
        return Ok(Symbol::CodePoint(c.as_str().map(str::to_string)));
    }
    Err(format!("unknown symbol shape {v}"))
}
