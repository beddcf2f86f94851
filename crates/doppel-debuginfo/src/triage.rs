//! Triage of wrong values (beyond PLDI'20, which reported every mismatch
//! by hand): who is suspect, and the dedup signature of a finding.
//!
//! Cross-debugger triage runs the *same binary* in GDB and LLDB (the idea of
//! DTD, FSE'24, see `notes/debuginfo-prior-art.md` section 4):
//! - both show the same wrong value: the debug information itself is wrong,
//!   the suspect is the **compiler**;
//! - the other debugger shows the reference value: the debug information
//!   can be read correctly, the suspect is the **debugger** that did not;
//! - both show wrong values, but different ones: **disagree** (both may be
//!   at fault);
//! - the debuggers paused at *different addresses* of line s (each picked
//!   another `is_stmt` row): **different_stop**. The debug information is
//!   then wrong at the address where the wrong value shows (the variable's
//!   location does not hold its value yet or any more there), a compiler
//!   issue that only the debugger choosing that address exposes;
//! - the other debugger shows nothing comparable (optimized out, not
//!   available, not hit) or was not run: **unconfirmed**.

use crate::CheckVerdict;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Who a wrong value points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Suspect {
    /// The other debugger shows the same wrong value: the debug information
    /// (the compiler) is wrong.
    Compiler,
    /// The other debugger shows the right value: this debugger is wrong.
    Debugger,
    /// The other debugger shows another wrong value.
    Disagree,
    /// The other debugger paused at another address of the line: the debug
    /// information is wrong where this one paused.
    DifferentStop,
    /// No other debugger could confirm either way.
    Unconfirmed,
}

impl Suspect {
    /// Stable name (`compiler`, `debugger`, `disagree`, `unconfirmed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Suspect::Compiler => "compiler",
            Suspect::Debugger => "debugger",
            Suspect::Disagree => "disagree",
            Suspect::DifferentStop => "different_stop",
            Suspect::Unconfirmed => "unconfirmed",
        }
    }
}

impl fmt::Display for Suspect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The suspect for a wrong value `mine` (a [`CheckVerdict::WrongValue`])
/// given the verdicts of the *other* debuggers on the same binary and pair,
/// each with the address it paused at (`None`: unknown).
pub fn suspect(mine: (&CheckVerdict, Option<u64>), others: &[(&CheckVerdict, Option<u64>)]) -> Suspect {
    let (mine, my_pc) = mine;
    let CheckVerdict::WrongValue { actual, .. } = mine else {
        return Suspect::Unconfirmed;
    };
    let mut result = Suspect::Unconfirmed;
    for (o, pc) in others {
        let elsewhere = matches!((my_pc, pc), (Some(a), Some(b)) if a != *b);
        match o {
            CheckVerdict::Match | CheckVerdict::WrongValue { .. } if elsewhere && result == Suspect::Unconfirmed => {
                result = Suspect::DifferentStop
            }
            CheckVerdict::Match | CheckVerdict::WrongValue { .. } if elsewhere => {}
            CheckVerdict::Match => return Suspect::Debugger,
            CheckVerdict::WrongValue { actual: a, .. } if a == actual => result = Suspect::Compiler,
            CheckVerdict::WrongValue { .. } if result != Suspect::Compiler => result = Suspect::Disagree,
            _ => {}
        }
    }
    result
}

/// The dedup signature (ARCHITECTURE.md "Equivalence classes": compiler,
/// version, level, debugger verdict, culprit pass, variable kind), joined by
/// `,`: `clang-19.1.7,O2,compiler,SROAPass,int`. The culprit is `-` when not
/// bisected; commas and `|` in it are replaced (the class key's separators).
pub fn signature(compiler_tag: &str, level: &str, suspect: Suspect, culprit: Option<&str>, kind: &str) -> String {
    let culprit = culprit.unwrap_or("-").replace([',', '|'], ";");
    format!("{compiler_tag},{level},{suspect},{culprit},{kind}")
}

/// The parts of a debug-information class key, in `Display` order
/// (`debuginfo:gcc-12.2.0,Os,different_stop,-fschedule-insns2,int,gdb|wrong_value|resume|expression_statement`):
/// the dedup signature ([`signature`] plus the debugger), what the check
/// found ([`FindingKind`]), how the debugger reached the line (always
/// `resume`: it continued to the line's breakpoint), and the line's AST node.
pub const CLASS_PARTS: [doppel_core::ClassPartSpec; 4] = [
    doppel_core::ClassPartSpec {
        name: "signature",
        prefix: Some("debuginfo"),
        optional: false,
        header: "signature",
    },
    doppel_core::ClassPartSpec {
        name: "finding",
        prefix: None,
        optional: false,
        header: "finding",
    },
    doppel_core::ClassPartSpec {
        name: "reached_by",
        prefix: None,
        optional: false,
        header: "reached by",
    },
    doppel_core::ClassPartSpec {
        name: "node",
        prefix: None,
        optional: false,
        header: "AST node",
    },
];

/// What a stored debug-information finding is about (the `finding` part of
/// its class key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// The debugger showed another value than the -O0 reference.
    WrongValue,
    /// The debugger failed while checking the pair.
    ToolFailure,
}

impl FindingKind {
    /// Stable name (`wrong_value`, `tool_failure`).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::WrongValue => "wrong_value",
            FindingKind::ToolFailure => "tool_failure",
        }
    }
}

/// The class key of a finding: `signature` (with the debugger), what was
/// found, and the AST node type of the checked line.
pub fn class_key(signature: &str, finding: FindingKind, node: &str) -> doppel_core::ClassKey {
    doppel_core::ClassKey::new(crate::campaign::TECHNIQUE)
        .with_prefixed("signature", "debuginfo", signature)
        .with("finding", finding.as_str())
        .with("reached_by", "resume")
        .with("node", node)
}

/// The root cause of a finding (issue 17 item 3): the compiler family and
/// version (`gcc-12.2.0`), the debugger (`any` when the suspect is the
/// compiler: both debuggers showed the same wrong value), the suspect, what was found, and
/// the DWARF situation at the pause address ([`crate::record::DwarfSituation`]:
/// the location's operator pattern, the line-table situation); a record
/// without one (written before it existed, or a binary that could not be
/// read) falls back to the variable kind and the line's AST node (from
/// `class`). Not the level, program, line or culprit: one cause shows at
/// many levels, in many programs and lines, and bisection may name
/// different passes for it.
pub fn root_cause(
    rec: &crate::record::FindingRecord,
    class: &doppel_core::ClassKey,
) -> doppel_core::rootcause::RootCause {
    // Both debuggers show the same wrong value: the DWARF is wrong whichever
    // reads it, and the two findings are one cause.
    let debugger = match rec.suspect {
        Some(Suspect::Compiler) => "any".to_string(),
        _ => rec.debugger_name.clone(),
    };
    let r = doppel_core::rootcause::RootCause::new(crate::campaign::TECHNIQUE)
        .with("compiler", rec.compiler.tag())
        .with("debugger", debugger)
        .with("suspect", rec.suspect.map_or("unknown", Suspect::as_str))
        .with("finding", class.part("finding").unwrap_or("-"));
    match &rec.dwarf {
        Some(d) => r
            .with("location", d.location_pattern.clone())
            .with("line", d.line_situation.clone()),
        None => r
            .with("kind", rec.reference.pair.variable.kind.name())
            .with("node", class.part("node").unwrap_or("-")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_keys_read_as_before_and_parse_back() {
        let k = class_key(
            "gcc-12.2.0,Os,different_stop,-fschedule-insns2,int,gdb",
            FindingKind::WrongValue,
            "expression_statement",
        );
        assert_eq!(
            k.to_string(),
            "debuginfo:gcc-12.2.0,Os,different_stop,-fschedule-insns2,int,gdb|wrong_value|resume|expression_statement"
        );
        assert_eq!(
            doppel_core::ClassKey::parse("debuginfo", &k.to_string(), &CLASS_PARTS),
            Some(k)
        );
    }

    fn wrong(a: &str) -> CheckVerdict {
        CheckVerdict::WrongValue {
            expected: "1".into(),
            actual: a.into(),
        }
    }

    #[test]
    fn the_same_wrong_value_in_both_debuggers_points_at_the_compiler() {
        assert_eq!(suspect((&wrong("7"), None), &[(&wrong("7"), None)]), Suspect::Compiler);
    }

    #[test]
    fn a_debugger_that_reads_the_right_value_makes_the_other_suspect() {
        assert_eq!(
            suspect((&wrong("7"), None), &[(&CheckVerdict::Match, None)]),
            Suspect::Debugger
        );
    }

    #[test]
    fn different_wrong_values_disagree_and_no_comparison_is_unconfirmed() {
        assert_eq!(suspect((&wrong("7"), None), &[(&wrong("8"), None)]), Suspect::Disagree);
        assert_eq!(
            suspect((&wrong("7"), None), &[(&CheckVerdict::OptimizedOut, None)]),
            Suspect::Unconfirmed
        );
        assert_eq!(suspect((&wrong("7"), None), &[]), Suspect::Unconfirmed);
    }

    #[test]
    fn a_verdict_at_another_address_is_a_different_stop() {
        assert_eq!(
            suspect((&wrong("7"), Some(0x10)), &[(&CheckVerdict::Match, Some(0x20))]),
            Suspect::DifferentStop
        );
        assert_eq!(
            suspect((&wrong("7"), Some(0x10)), &[(&CheckVerdict::Match, Some(0x10))]),
            Suspect::Debugger
        );
    }

    #[test]
    fn signatures_keep_the_class_key_separators_out() {
        assert_eq!(
            signature("gcc-12.2.0", "O2", Suspect::Compiler, None, "int"),
            "gcc-12.2.0,O2,compiler,-,int"
        );
        assert_eq!(
            signature("clang-19.1.7", "O3", Suspect::Debugger, Some("a,b|c"), "array"),
            "clang-19.1.7,O3,debugger,a;b;c,array"
        );
    }

    fn finding(level: &str, line: u32, debugger: &str, dwarf: Option<(&str, &str)>) -> crate::record::FindingRecord {
        use crate::toolchain::{Compiler, Family};
        let kind = doppel_lang::c::clang_scope::VarKind::Integer { signed: true, bits: 8 };
        crate::record::FindingRecord {
            debuginfo: Default::default(),
            program: crate::program::Program {
                name: format!("p{line}.c"),
                source: format!("p{line}.c").into(),
                hash: "h".into(),
                csmith: None,
            },
            source_text: String::new(),
            augmented_text: None,
            compiler: Compiler {
                name: "gcc".into(),
                path: "/usr/bin/gcc".into(),
                family: Family::Gcc,
                version: "gcc (Debian 12.2.0-14) 12.2.0".into(),
                version_number: "12.2.0".into(),
            },
            level: level.into(),
            recipe: String::new(),
            augmented: vec![],
            debugger_name: debugger.into(),
            reference: crate::Reference::new(
                crate::Pair {
                    line,
                    variable: crate::ScopedVariable {
                        name: "l".into(),
                        type_name: "char".into(),
                        kind,
                        parameter: false,
                        declared_at: 1,
                    },
                },
                "-1".into(),
            ),
            verdict: crate::check::PairVerdict {
                line,
                variable: "l".into(),
                verdict: wrong("255"),
                shown: None,
                pc: None,
                dwarf: None,
                rerun: false,
            },
            others: vec![],
            suspect: Some(Suspect::Debugger),
            culprit: None,
            reduced: None,
            dwarf: dwarf.map(|(l, s)| crate::record::DwarfSituation {
                location_pattern: l.into(),
                line_situation: s.into(),
            }),
        }
    }

    #[test]
    fn root_causes_ignore_level_line_and_program_and_match_known_bugs() {
        use doppel_core::rootcause::known::KnownBugs;
        let shra = Some((
            "DW_OP_breg7 K; DW_OP_deref_size K; DW_OP_const1u K; DW_OP_shl; DW_OP_const1u K; DW_OP_shra; DW_OP_stack_value",
            "is_stmt",
        ));
        let k1 = class_key(
            "gcc-12.2.0,O1,debugger,-,int,lldb",
            FindingKind::WrongValue,
            "expression_statement",
        );
        let k2 = class_key(
            "gcc-12.2.0,Og,debugger,-,int,lldb",
            FindingKind::WrongValue,
            "for_statement",
        );
        let a = root_cause(&finding("O1", 6, "lldb", shra), &k1);
        let b = root_cause(&finding("Og", 40, "lldb", shra), &k2);
        assert_ne!(k1, k2);
        assert_eq!(a, b, "two classes, one root cause");
        assert_eq!(a.part("compiler"), Some("gcc-12.2.0"));
        assert_eq!(a.part("suspect"), Some("debugger"));
        assert!(a.part("location").unwrap().contains("DW_OP_shra"));
        // The bundled list knows this LLDB bug, and only for LLDB.
        let known = KnownBugs::bundled().unwrap();
        let hit = known.find(&a).expect("the DW_OP_shra cause is known");
        assert_eq!(hit.link, "https://github.com/llvm/llvm-project/issues/207497");
        assert!(known.find(&root_cause(&finding("O1", 6, "gdb", shra), &k1)).is_none());
        // Without a DWARF situation: the variable kind and the AST node.
        let old = root_cause(&finding("O1", 6, "lldb", None), &k1);
        assert_eq!(old.part("kind"), Some("int"));
        assert_eq!(old.part("node"), Some("expression_statement"));
        assert!(old.part("location").is_none() && known.find(&old).is_none());
        // A compiler suspect: both debuggers saw it, one cause for both.
        let mut gdb = finding("O2", 6, "gdb", shra);
        let mut lldb = finding("O2", 6, "lldb", shra);
        gdb.suspect = Some(Suspect::Compiler);
        lldb.suspect = Some(Suspect::Compiler);
        assert_eq!(root_cause(&gdb, &k1), root_cause(&lldb, &k1));
        assert_eq!(root_cause(&gdb, &k1).part("debugger"), Some("any"));
    }
}
