//! Semantics-preserving program transformations, the program half of
//! interactive metamorphic debugger testing (Tolksdorf, Lehmann & Pradel,
//! ISSTA 2019, section 3.2.2, Table 1).
//!
//! Each language implements the same kinds ([`ProgramTransformationKind`]) in
//! its own module (`c::transform`, `js::transform`), one file per kind. A
//! transformation reads the program's text (and, for dead-code removal, the
//! initial run's coverage), picks a place with the caller's random
//! generator, and returns the new text with a [`LocationMap`] and what the
//! follow-up trace must show besides the mapped initial trace
//! ([`Transformed::expect_variable`]) or need not show
//! ([`Transformed::breakability_may_change`]). When a kind cannot apply to a program
//! (no literal, no variable in scope, nothing dead), it says why
//! ([`Skip`]); that is an outcome, not an error.

use crate::edit::{LocationMap, Pos};
use serde::{Deserialize, Serialize};

/// The program transformations of ISSTA'19 Table 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramTransformationKind {
    /// Insert statically dead code: `if (false) { v = literal; }` (C: `if (0)`).
    InsertDeadCode,
    /// Remove code the initial run never executed (by its coverage).
    RemoveDeadCode,
    /// Add a parameter with a fresh name (JS: call sites unchanged, expect
    /// `undefined`; C: a constant passed at every call site, expect it).
    AddUnusedParameter,
    /// Insert `x = x;` for a non-const variable in scope.
    InsertNoOp,
    /// Replace a literal by an equivalent expression (`n` -> `(n-1+1)`, ...).
    LiteralToExpression,
}

impl ProgramTransformationKind {
    /// Every kind, in declaration order.
    pub const ALL: [ProgramTransformationKind; 5] = [
        Self::InsertDeadCode,
        Self::RemoveDeadCode,
        Self::AddUnusedParameter,
        Self::InsertNoOp,
        Self::LiteralToExpression,
    ];

    /// Stable snake_case name (CLI `--transformations`, class keys).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InsertDeadCode => "insert_dead_code",
            Self::RemoveDeadCode => "remove_dead_code",
            Self::AddUnusedParameter => "add_unused_parameter",
            Self::InsertNoOp => "insert_no_op",
            Self::LiteralToExpression => "literal_to_expression",
        }
    }

    /// Parses [`Self::as_str`] back.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Code the initial run executed, for [`ProgramTransformationKind::RemoveDeadCode`].
///
/// `dead` lists source ranges (`[start, end)`, positions in the program's
/// text) that were never executed. No coverage at all is `None` in
/// [`ProgramInput::coverage`] (then nothing may be removed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Never-executed `[start, end)` ranges, in text order.
    pub dead: Vec<(Pos, Pos)>,
}

impl Coverage {
    /// Whether `[start, end)` lies inside one never-executed range.
    pub fn is_dead(&self, start: Pos, end: Pos) -> bool {
        self.dead.iter().any(|&(s, e)| s <= start && end <= e)
    }
}

/// What the caller hands a transformation.
#[derive(Debug, Clone, Copy)]
pub struct ProgramInput<'a> {
    /// The program's text.
    pub source: &'a str,
    /// The initial run's coverage, when taken.
    pub coverage: Option<&'a Coverage>,
}

/// A variable the follow-up run must show that the initial run did not
/// (ISSTA'19 Figure 11): in the top frame of `function` whenever the pause
/// location lies in `lines` (inclusive, new numbering).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedVariable {
    /// The function's name as debuggers show it (`""` for an anonymous one).
    pub function: String,
    /// First and last line of the function (new numbering, inclusive).
    pub lines: (u32, u32),
    /// The variable's name.
    pub name: String,
    /// The value as debuggers render it (`undefined`, `7`).
    pub value: String,
}

/// A transformed program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transformed {
    /// Which transformation made it.
    pub kind: ProgramTransformationKind,
    /// The new program text.
    pub text: String,
    /// Old positions to new positions.
    pub map: LocationMap,
    /// What changed, for people: ``inserted `if (false) { x = 1; }` before 12:5``.
    pub description: String,
    /// Where (new numbering): the first changed position.
    pub at: Pos,
    /// The AST node type at that place (ESTree names for JS, tree-sitter
    /// names for C), for class keys.
    pub node: String,
    /// A variable the follow-up must show in addition (added parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_variable: Option<ExpectedVariable>,
    /// Lines of the new program (new numbering, ascending) whose breakable
    /// positions may differ from those the same code had before, because
    /// code on them, or in the statement they head, was removed: the line
    /// of an `if` or loop whose body was emptied (`if (c) {}`: the header
    /// and the `{`, which now also holds the `}`), and a line where a
    /// removal joined code ([`crate::edit::LocationMap::joined_lines`]).
    /// Set by [`ProgramTransformationKind::RemoveDeadCode`] only.
    ///
    /// A debugger may resolve a breakpoint requested on such a line
    /// differently (SpiderMonkey accepts one on `if (c) {}` that it
    /// rejected on the `}` line before), so the relation does not compare
    /// breakpoint resolution there (docs/metamorphic.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breakability_may_change: Vec<u32>,
}

/// Why a transformation does not apply to a program: recorded, then the
/// test goes on with another transformation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind:?} does not apply: {reason}")]
pub struct Skip {
    /// The transformation that did not apply.
    pub kind: ProgramTransformationKind,
    /// Why, for people (`no literal outside a declaration`).
    pub reason: String,
}

impl Skip {
    /// A skip of `kind` for `reason`.
    pub fn new(kind: ProgramTransformationKind, reason: impl Into<String>) -> Self {
        Self {
            kind,
            reason: reason.into(),
        }
    }
}

/// The random choices a transformation makes come from the caller's seeded
/// generator (one metamorphic test is determined by its seed).
pub type Rng<'a> = &'a mut dyn rand::RngCore;

/// One program transformation of one language.
pub trait ProgramTransformation: Send + Sync {
    /// Which kind of transformation this is.
    fn kind(&self) -> ProgramTransformationKind;

    /// Transforms `input`, choosing the place with `rng`.
    ///
    /// Errors: [`Skip`] when the kind cannot apply (nothing to transform, or
    /// every candidate would make the program invalid or change what it does).
    fn apply(&self, input: ProgramInput<'_>, rng: Rng<'_>) -> Result<Transformed, Skip>;
}
