//! Configuration of metamorphic testing (`doppel.toml` table `[meta]`).

use crate::transformation::Transformation;
use doppel_differential::DiffConfig;
use serde::{Deserialize, Serialize};

/// Configuration of one metamorphic test sequence. Together with the
/// program and the seed it determines the sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetaConfig {
    /// Metamorphic tests per sequence: each follow-up input is the next
    /// test's initial input, until a relation breaks (ISSTA'19 section 3.3;
    /// the paper used 5).
    pub rounds: usize,
    /// The transformations a test chooses from (ISSTA'19 Table 1).
    pub transformations: Vec<Transformation>,
    /// The initial run's actions come from DBDB's generator with these knobs;
    /// its normalization and column rules are the relation's too.
    pub initial: DiffConfig,
    /// Run the initial program (twice) and every follow-up program once
    /// with no breakpoint in the debugger under test before the tests, and
    /// record a test whose programs end differently (exit status, signal,
    /// output) as not comparable, never as a broken relation (issue 17
    /// item 2; [`crate::sequence`]). Off (`--control-run=false`,
    /// `control_run = false` in `[meta]`): the tests of before. On by
    /// default for new campaigns; serialized only when on, as the
    /// differential technique's `control_run`, so old sequence keys stay
    /// and `--resume` never mixes the behaviours.
    #[serde(skip_serializing_if = "is_false")]
    pub control_run: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for MetaConfig {
    fn default() -> Self {
        Self {
            rounds: 5,
            transformations: Transformation::all(),
            // One debugger: the switch is moot; off keeps the run keys.
            initial: DiffConfig {
                continue_past_policies: false,
                ..DiffConfig::default()
            },
            control_run: true,
        }
    }
}

impl MetaConfig {
    /// Errors: no round or no transformation, or a bad generator knob.
    pub fn validate(&self) -> Result<(), String> {
        if self.rounds == 0 {
            return Err("rounds must be at least 1".into());
        }
        if self.transformations.is_empty() {
            return Err("no transformation enabled".into());
        }
        self.initial.validate()
    }

    /// The transformation chain as stored in class keys (`a+b+c`).
    pub fn chain_key(chain: &[Transformation]) -> String {
        chain.iter().map(|t| t.as_str()).collect::<Vec<_>>().join("+")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_run_is_on_by_default_and_serialized_only_when_on() {
        let on = MetaConfig::default();
        assert!(on.control_run);
        assert_eq!(serde_json::to_value(&on).unwrap()["control_run"], true);
        let off = MetaConfig {
            control_run: false,
            ..MetaConfig::default()
        };
        let v = serde_json::to_value(&off).unwrap();
        assert!(v.get("control_run").is_none(), "{v}");
    }
}
