//! The knobs of a differential run (DBDB Algorithm 1), as read from
//! `doppel.toml` (table `[diff]`) and overridden by CLI flags.

use crate::normalize::NormalizationConfig;
use doppel_core::ExecAction;
use serde::{Deserialize, Serialize};

/// Relative weights of the execution actions chosen after each pause.
/// DBDB's implementation draws uniformly (all 1.0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ActionWeights {
    /// Relative weight of `resume` (continue to the next breakpoint).
    pub resume: f64,
    /// Relative weight of `step in`.
    pub step_in: f64,
    /// Relative weight of `step over`.
    pub step_over: f64,
    /// Relative weight of `step out`.
    pub step_out: f64,
}

impl Default for ActionWeights {
    fn default() -> Self {
        Self {
            resume: 1.0,
            step_in: 1.0,
            step_over: 1.0,
            step_out: 1.0,
        }
    }
}

impl ActionWeights {
    /// The weight of one action.
    pub fn weight(&self, a: ExecAction) -> f64 {
        match a {
            ExecAction::Resume => self.resume,
            ExecAction::StepIn => self.step_in,
            ExecAction::StepOver => self.step_over,
            ExecAction::StepOut => self.step_out,
        }
    }

    /// Parses `resume=1,step_in=2,step_over=2,step_out=1` (missing keys keep
    /// their default). Errors: an unknown key or a value that is not a
    /// non-negative number, or all weights zero.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut w = Self::default();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, got '{part}'"))?;
            let v: f64 = v.trim().parse().map_err(|_| format!("weight '{v}' is not a number"))?;
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("weight {v} must be a non-negative number"));
            }
            match k.trim() {
                "resume" => w.resume = v,
                "step_in" => w.step_in = v,
                "step_over" => w.step_over = v,
                "step_out" => w.step_out = v,
                other => {
                    return Err(format!(
                        "unknown action '{other}' (resume, step_in, step_over, step_out)"
                    ));
                }
            }
        }
        if ExecAction::ALL.iter().all(|a| w.weight(*a) == 0.0) {
            return Err("all action weights are zero".into());
        }
        Ok(w)
    }
}

/// Configuration of one differential run. Together with the subject and the
/// seed it determines the run (every random choice comes from the seed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiffConfig {
    /// Breakpoints per source line: the run sets `max(1, floor(lines * this))`
    /// breakpoints, capped by `max_breakpoints` (DBDB: 0.1).
    pub breakpoints_per_line: f64,
    /// Upper bound on the number of breakpoints of a run (0: none, the
    /// program runs to its end or to a crash).
    pub max_breakpoints: usize,
    /// Probability of removing a breakpoint right after setting it (DBDB: 0.2).
    pub removal_probability: f64,
    /// Maximum number of execution actions after start (DBDB: 20).
    pub max_actions: usize,
    /// Weights of resume / step in / step over / step out.
    pub weights: ActionWeights,
    /// Per-action timeout in milliseconds; a debugger that does not answer in
    /// time is a tool failure (timeout).
    pub action_timeout_ms: u64,
    /// Compare columns of pause and breakpoint locations when all debuggers report them.
    pub compare_columns: bool,
    /// Normalization rules (see `docs/normalization.md`).
    pub normalization: NormalizationConfig,
    /// Which lines breakpoints are drawn from (DBDB: all). Left out of the
    /// serialized form (and so of run keys) when it is the default.
    #[serde(skip_serializing_if = "BreakpointLines::is_all")]
    pub breakpoint_lines: BreakpointLines,
    /// Go on past a divergence that a known policy explains, when the
    /// debuggers can be brought back to one state (`slide_vs_reject`: the
    /// accepted breakpoint is removed again), recording it as a policy note
    /// (issue 17 item 1; [`crate::continuation`]). Off: DBDB's stop at the
    /// first divergence. On by default for new campaigns. Serialized only
    /// when on, so that the run keys of the old behaviour are unchanged and
    /// differ from the new one's; a stored record without it ran the old
    /// behaviour ([`crate::record::DiffRecord::of`] reads it so).
    #[serde(skip_serializing_if = "is_false")]
    pub continue_past_policies: bool,
    /// With `continue_past_policies`: also go on past
    /// `return_lands_mid_line` and `resume_completes_interrupted_step` by
    /// issuing the diverging action once more to the debuggers that stopped
    /// short, when that brings every debugger to one state
    /// ([`crate::continuation::lagging`]). Off: those policies end the run
    /// (the continuation of 2026-11-28). On by default; serialized only when
    /// on, like `continue_past_policies`.
    #[serde(skip_serializing_if = "is_false")]
    pub realign_steps: bool,
    /// With `continue_past_policies`: step out is not drawn while the agreed
    /// state is paused in `main` itself (the top frame), where stepping out
    /// leaves the program (GDB refuses, LLDB stops in the C library's
    /// start-up code): any divergence there is the `step_out_of_main` policy,
    /// which ends the run, so the draw could only end it. The other actions
    /// keep their weights. On by default; serialized only when on.
    #[serde(skip_serializing_if = "is_false")]
    pub avoid_step_out_of_main: bool,
    /// Run the program once in every tool with no breakpoint before the
    /// run's actions, and record a run whose control runs end differently
    /// as not comparable instead of driving the debuggers (issue 17 item 2;
    /// [`crate::control`]). Off: the runs of before. On by default for new
    /// campaigns; serialized only when on, like `continue_past_policies`,
    /// so old run keys stay and `--resume` never mixes the behaviours.
    #[serde(skip_serializing_if = "is_false")]
    pub control_run: bool,
    /// With `continue_past_policies`: a run ends at its
    /// `findings_per_run`-th finding (a divergence no
    /// policy explains), or at the first one after which the debuggers do
    /// not stand in one state; the findings before it are noted in the
    /// traces ([`doppel_core::EventKind::FindingNote`]) and stored as run
    /// records of their own ([`crate::going_on`], issue 17 item 1: more
    /// classes per run). 1: DBDB's end at the first finding. Default 5;
    /// serialized only when not 1, so a stored record without it ran the
    /// end at the first finding ([`crate::record::DiffRecord::of`]).
    #[serde(skip_serializing_if = "is_one")]
    pub findings_per_run: usize,
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The lines the breakpoint phase draws from.
///
/// DBDB (Algorithm 1, line 3) draws from every line of the program. On long,
/// commented programs (SunSpider, test262 with its frontmatter) nearly every
/// run then meets a blank or comment line, where debuggers with different
/// sliding policies diverge at once (`slide_vs_reject`), and the run ends
/// before the program starts. `Code` draws only from lines with at least one
/// token (whose AST node type is not the root's: not `Program` or
/// `translation_unit`), so that runs reach the stepping phase; sliding is
/// still tested on lines with code that is not a statement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakpointLines {
    /// Every line (DBDB).
    #[default]
    All,
    /// Lines with at least one token.
    Code,
}

impl BreakpointLines {
    /// Whether this is the default, [`BreakpointLines::All`].
    pub fn is_all(&self) -> bool {
        *self == BreakpointLines::All
    }

    /// Parses `all` or `code`. Errors: any other word.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(Self::All),
            "code" => Ok(Self::Code),
            _ => Err(format!("breakpoint lines: expected all or code, got {s:?}")),
        }
    }
}

impl Default for DiffConfig {
    fn default() -> Self {
        Self {
            breakpoints_per_line: 0.1,
            max_breakpoints: 10,
            removal_probability: 0.2,
            max_actions: 20,
            weights: ActionWeights::default(),
            action_timeout_ms: 10_000,
            compare_columns: false,
            normalization: NormalizationConfig::default(),
            breakpoint_lines: BreakpointLines::All,
            continue_past_policies: true,
            realign_steps: true,
            avoid_step_out_of_main: true,
            control_run: true,
            findings_per_run: 5,
        }
    }
}

impl DiffConfig {
    /// Number of breakpoints a run keeps for a program of `lines` lines.
    pub fn breakpoint_count(&self, lines: u32) -> usize {
        let n = (f64::from(lines) * self.breakpoints_per_line).floor() as usize;
        n.max(1).min(self.max_breakpoints)
    }

    /// Checks the ranges. Errors: a message naming the bad knob.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.removal_probability) {
            return Err("removal_probability must be within 0..=1".into());
        }
        if self.breakpoints_per_line.is_nan() || self.breakpoints_per_line < 0.0 {
            return Err("breakpoints_per_line must be non-negative".into());
        }
        if self.findings_per_run == 0 {
            return Err("findings_per_run must be at least 1".into());
        }
        if self.action_timeout_ms == 0 {
            return Err("action_timeout_ms must be positive".into());
        }
        if ExecAction::ALL.iter().all(|a| self.weights.weight(*a) == 0.0) {
            return Err("all action weights are zero".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_parse_and_reject_nonsense() {
        let w = ActionWeights::parse("step_in=2, step_out=0").unwrap();
        assert_eq!((w.resume, w.step_in, w.step_over, w.step_out), (1.0, 2.0, 1.0, 0.0));
        assert!(ActionWeights::parse("jump=1").is_err());
        assert!(ActionWeights::parse("resume=-1").is_err());
        assert!(ActionWeights::parse("resume=0,step_in=0,step_over=0,step_out=0").is_err());
    }

    #[test]
    fn breakpoint_count_follows_dbdb_with_a_floor_of_one() {
        let c = DiffConfig::default();
        assert_eq!(c.breakpoint_count(5), 1);
        assert_eq!(c.breakpoint_count(45), 4);
        assert_eq!(c.breakpoint_count(1000), 10);
        let none = DiffConfig {
            max_breakpoints: 0,
            ..Default::default()
        };
        assert_eq!(
            none.breakpoint_count(1000),
            0,
            "max_breakpoints 0 runs without breakpoints"
        );
    }

    #[test]
    fn config_reads_from_partial_toml() {
        let c: DiffConfig = toml_like(r#"{"max_actions": 5, "weights": {"step_in": 3.0}}"#);
        assert_eq!(c.max_actions, 5);
        assert_eq!(c.weights.step_in, 3.0);
        assert_eq!(c.weights.resume, 1.0);
        assert_eq!(c.removal_probability, 0.2);
    }

    #[test]
    fn continuation_is_on_by_default_and_serialized_only_when_on() {
        let on = DiffConfig::default();
        assert!(on.continue_past_policies);
        assert!(
            toml_like("{}").continue_past_policies,
            "a new campaign's [diff] without it"
        );
        let json = serde_json::to_string(&on).unwrap();
        assert!(json.contains("\"continue_past_policies\":true"), "{json}");
        let off = DiffConfig {
            continue_past_policies: false,
            ..Default::default()
        };
        // Off: the serialized form (and so the run key) of the old behaviour.
        assert!(!serde_json::to_string(&off).unwrap().contains("continue_past_policies"));
    }

    #[test]
    fn realignment_and_avoiding_step_out_of_main_are_on_by_default_and_serialized_only_when_on() {
        let on = DiffConfig::default();
        assert!(on.realign_steps && on.avoid_step_out_of_main);
        let t = toml_like("{}");
        assert!(t.realign_steps && t.avoid_step_out_of_main);
        let json = serde_json::to_string(&on).unwrap();
        assert!(json.contains("\"realign_steps\":true") && json.contains("\"avoid_step_out_of_main\":true"));
        let off = DiffConfig {
            realign_steps: false,
            avoid_step_out_of_main: false,
            ..Default::default()
        };
        let json = serde_json::to_string(&off).unwrap();
        assert!(
            !json.contains("realign_steps") && !json.contains("avoid_step_out_of_main"),
            "{json}"
        );
    }

    #[test]
    fn the_control_run_is_on_by_default_and_serialized_only_when_on() {
        let on = DiffConfig::default();
        assert!(on.control_run && toml_like("{}").control_run);
        assert!(serde_json::to_string(&on).unwrap().contains("\"control_run\":true"));
        let off = DiffConfig {
            control_run: false,
            ..Default::default()
        };
        assert!(!serde_json::to_string(&off).unwrap().contains("control_run"));
    }

    fn toml_like(json: &str) -> DiffConfig {
        serde_json::from_str(json).unwrap()
    }
}
