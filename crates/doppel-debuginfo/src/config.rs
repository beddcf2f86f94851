//! The configuration of a debug-information campaign (`doppel debuginfo`
//! flags and the `[debuginfo]` table of `doppel.toml`).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Everything that determines a campaign besides its inputs. Stored with
/// every record, so a finding can be re-checked (`doppel replay`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DebuginfoConfig {
    /// Compilers under test, by command name (`gcc`, `clang`, `clang-19`).
    pub compilers: Vec<String>,
    /// Optimization levels without the dash (`O1`, `O2`, `O3`, `Og`, `Os`).
    pub levels: Vec<String>,
    /// Debuggers (registered backends `gdb`, `lldb`).
    pub debuggers: Vec<String>,
    /// Variable kinds checked: `int`, `pointer`, `array`, `struct` (PLDI'20 checked
    /// integers only).
    pub kinds: Vec<String>,
    /// At most this many actionable pairs per program, drawn with the seed
    /// (0: all).
    pub max_pairs: usize,
    /// Also run valgrind memcheck on seeds (slow; the shadow programs are
    /// always checked with MSan and memcheck).
    pub seed_memcheck: bool,
    /// Bisect the culprit pass of every new wrong-value class.
    pub bisect: bool,
    /// Seed of the pair sampling (and, with `--csmith`, of the first Csmith
    /// program).
    pub seed: u64,
    /// Record a wrong value that the DWARF at the pause address explains
    /// as a false positive of the method as `not_comparable` with the
    /// reason, not as a finding (issue 17 part 4; [`crate::accuracy`]): a
    /// pause row in a `for` header's increment or condition clause, a first
    /// pause at a `for` line after one inside its body, a row without
    /// `is_stmt`. Off: every wrong value is a finding, as before. On by
    /// default; serialized only when on, so the run keys of the old
    /// behaviour are unchanged (like the differential technique's
    /// `continue_past_policies`).
    #[serde(skip_serializing_if = "is_false")]
    pub not_comparable: bool,
    /// Read a non-null pointer the debugger showed as symbol plus offset
    /// with the load bias removed, so that an unrelocated file address of a
    /// global (LLDB on `DW_OP_addr X; DW_OP_stack_value`) is a wrong value
    /// (issue 17 part 4; [`crate::accuracy`]). Off: pointers compare as
    /// null or non-null only, as before. On by default; serialized only
    /// when on.
    #[serde(skip_serializing_if = "is_false")]
    pub pointer_symbols: bool,
    /// Bisect (and put in the signature) the culprit of compiler suspects
    /// only (`compiler`, `different_stop`): a culprit pass says nothing
    /// about a debugger's bug (issue 17 part 4). Off: every wrong value is
    /// bisected, as before. On by default; serialized only when on.
    #[serde(skip_serializing_if = "is_false")]
    pub compiler_culprits_only: bool,
    /// Before a wrong value is left `unconfirmed` because the other
    /// debugger's session did not reach its line, run the other debugger
    /// once more on the same binary with only that pair's breakpoint and
    /// take the suspect from it (issue 17 part 4; [`crate::accuracy`]). Off:
    /// as before. On by default; serialized only when on.
    #[serde(skip_serializing_if = "is_false")]
    pub rerun_unconfirmed: bool,
    /// Longest wait for one debugger answer.
    #[serde(with = "secs")]
    pub action_timeout: Duration,
    /// Longest run of a program (sanitizer, shadow and coverage runs).
    #[serde(with = "secs")]
    pub run_timeout: Duration,
}

impl Default for DebuginfoConfig {
    fn default() -> Self {
        Self {
            compilers: vec!["gcc".into(), "clang".into()],
            levels: crate::LEVELS.iter().map(|s| s.to_string()).collect(),
            debuggers: vec!["gdb".into(), "lldb".into()],
            kinds: vec!["int".into(), "pointer".into(), "array".into(), "struct".into()],
            max_pairs: 300,
            seed_memcheck: false,
            bisect: true,
            seed: 1,
            not_comparable: true,
            pointer_symbols: true,
            compiler_culprits_only: true,
            rerun_unconfirmed: true,
            action_timeout: Duration::from_secs(20),
            run_timeout: Duration::from_secs(10),
        }
    }
}

impl DebuginfoConfig {
    /// Checks the lists against what doppel knows.
    ///
    /// Errors: an unknown level or kind, or an empty list.
    pub fn validate(&self) -> Result<(), String> {
        for (what, list) in [
            ("compilers", &self.compilers),
            ("levels", &self.levels),
            ("debuggers", &self.debuggers),
            ("kinds", &self.kinds),
        ] {
            if list.is_empty() {
                return Err(format!("no {what} given"));
            }
        }
        for l in &self.levels {
            if !matches!(l.as_str(), "O0" | "O1" | "O2" | "O3" | "Og" | "Os" | "Oz" | "Ofast") {
                return Err(format!("unknown optimization level '{l}' (O1, O2, O3, Og, Os)"));
            }
        }
        for k in &self.kinds {
            if !matches!(k.as_str(), "int" | "pointer" | "array" | "struct") {
                return Err(format!("unknown variable kind '{k}' (int, pointer, array, struct)"));
            }
        }
        Ok(())
    }

    /// Whether pairs of variables of `kind` ([`crate::VarKind::name`]) are checked.
    pub fn checks_kind(&self, kind: &str) -> bool {
        self.kinds.iter().any(|k| k == kind)
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_secs_f64(f64::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_bad_lists_do_not() {
        assert!(DebuginfoConfig::default().validate().is_ok());
        let bad = DebuginfoConfig {
            levels: vec!["O9".into()],
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().contains("O9"));
        let none = DebuginfoConfig {
            debuggers: vec![],
            ..Default::default()
        };
        assert!(none.validate().is_err());
        let structs = DebuginfoConfig {
            kinds: vec!["struct".into()],
            ..Default::default()
        };
        assert!(structs.validate().is_ok());
        assert!(DebuginfoConfig::default().checks_kind("struct"));
        let bad = DebuginfoConfig {
            kinds: vec!["float".into()],
            ..Default::default()
        };
        assert_eq!(
            bad.validate().unwrap_err(),
            "unknown variable kind 'float' (int, pointer, array, struct)"
        );
    }

    #[test]
    fn accuracy_switches_are_written_only_when_on() {
        let on = DebuginfoConfig::default();
        assert!(on.not_comparable && on.pointer_symbols && on.compiler_culprits_only && on.rerun_unconfirmed);
        let json = serde_json::to_string(&on).unwrap();
        assert!(json.contains("\"not_comparable\":true"), "{json}");
        let off = DebuginfoConfig {
            not_comparable: false,
            pointer_symbols: false,
            compiler_culprits_only: false,
            rerun_unconfirmed: false,
            ..Default::default()
        };
        let json = serde_json::to_string(&off).unwrap();
        for k in [
            "not_comparable",
            "pointer_symbols",
            "compiler_culprits_only",
            "rerun_unconfirmed",
        ] {
            assert!(!json.contains(k), "{json}");
        }
    }

    #[test]
    fn round_trips_through_json() {
        let c = DebuginfoConfig::default();
        let j = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<DebuginfoConfig>(&j).unwrap(), c);
    }
}
