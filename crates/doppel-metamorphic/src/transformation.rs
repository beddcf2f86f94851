//! The transformations of ISSTA'19 Table 1 by name: three action
//! transformations (section 3.2.1) and five program transformations
//! (section 3.2.2, implemented per language in `doppel_lang`).

use doppel_lang::transform::ProgramTransformationKind;
use serde::{Deserialize, Serialize};

/// One metamorphic transformation. Serialized as its name
/// ([`Transformation::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Transformation {
    /// Add a breakpoint at a random line; pauses there are ignored, and a
    /// step it interrupts is completed (Figure 7).
    AddBreakpoint,
    /// Replace a continue by a step, then continue if the step paused
    /// somewhere new (Table 2: continue ⊂ step out ⊂ step over ⊂ step in).
    ReplaceContinue,
    /// Request every slid breakpoint at its resolved location (Figure 10).
    BreakpointSliding,
    /// A program transformation.
    Program(ProgramTransformationKind),
}

impl Transformation {
    /// Every transformation, action transformations first.
    pub fn all() -> Vec<Transformation> {
        let mut v = vec![
            Transformation::AddBreakpoint,
            Transformation::ReplaceContinue,
            Transformation::BreakpointSliding,
        ];
        v.extend(ProgramTransformationKind::ALL.map(Transformation::Program));
        v
    }

    /// Stable snake_case name (`add_breakpoint`, `insert_no_op`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Transformation::AddBreakpoint => "add_breakpoint",
            Transformation::ReplaceContinue => "replace_continue",
            Transformation::BreakpointSliding => "breakpoint_sliding",
            Transformation::Program(k) => k.as_str(),
        }
    }

    /// Parses [`Self::as_str`] back.
    pub fn parse(s: &str) -> Option<Self> {
        Self::all().into_iter().find(|t| t.as_str() == s)
    }

    /// Parses a comma-separated list (`add_breakpoint,insert_no_op`); `all`
    /// is every transformation.
    ///
    /// Errors: an unknown name, with the known ones.
    pub fn parse_list(s: &str) -> Result<Vec<Self>, String> {
        if s.trim() == "all" {
            return Ok(Self::all());
        }
        s.split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| {
                Self::parse(n).ok_or_else(|| {
                    format!(
                        "unknown transformation '{n}' (known: {})",
                        Self::all().iter().map(|t| t.as_str()).collect::<Vec<_>>().join(", ")
                    )
                })
            })
            .collect()
    }

    /// The program transformation, if this is one.
    pub fn program(self) -> Option<ProgramTransformationKind> {
        match self {
            Transformation::Program(k) => Some(k),
            _ => None,
        }
    }
}

impl From<Transformation> for String {
    fn from(t: Transformation) -> String {
        t.as_str().to_string()
    }
}

impl TryFrom<String> for Transformation {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Transformation::parse(&s).ok_or_else(|| format!("unknown transformation '{s}'"))
    }
}

impl std::fmt::Display for Transformation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_errors() {
        for t in Transformation::all() {
            assert_eq!(Transformation::parse(t.as_str()), Some(t));
        }
        assert_eq!(Transformation::all().len(), 8);
        assert_eq!(
            Transformation::parse_list("add_breakpoint, insert_no_op").unwrap(),
            vec![
                Transformation::AddBreakpoint,
                Transformation::Program(ProgramTransformationKind::InsertNoOp)
            ]
        );
        assert!(Transformation::parse_list("frobnicate").unwrap_err().contains("known:"));
        let t = Transformation::Program(ProgramTransformationKind::InsertNoOp);
        assert_eq!(serde_json::to_value(t).unwrap(), serde_json::json!("insert_no_op"));
        assert_eq!(
            serde_json::from_value::<Transformation>(serde_json::json!("insert_no_op")).unwrap(),
            t
        );
    }
}
