//! Root causes (issue 17, "What must exist" items 3 and 7): findings
//! grouped by what caused them, not only by their class key.
//!
//! A class key says what a finding looks like (DBDB section 3.4: divergence,
//! last action, AST node; PLDI'20: compiler, level, culprit, variable kind);
//! many classes can share one cause (one LLDB bug in DWARF expression
//! evaluation shows at every level, in every program, on every line). Each
//! technique says what a run's cause is
//! ([`crate::technique::Technique::root_cause`]): a [`RootCause`], plain
//! named facts. Debug-information validation: compiler, debugger, suspect
//! and the DWARF situation at the pause address; differential and
//! metamorphic testing: the shape of the action sequence that led to the
//! divergence. The default is the class key itself.
//!
//! [`group`] collects the root causes of the divergent runs of a store,
//! [`known::KnownBugs`] marks those already reported upstream, and the
//! store's triage table ([`crate::store::triage`]) holds what a person
//! decided about one (`doppel triage`). [`Standing`] combines the three:
//! what a maintainer sees first.

pub mod known;

use crate::model::ClassKey;
use crate::run::RunRecord;
use crate::store::triage::{Triage, TriageVerdict};
use crate::store::{RunFilter, Store};
use crate::technique::Technique;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::collections::{BTreeMap, BTreeSet};

/// One named fact of a [`RootCause`]: `("debugger", "lldb")`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RootPart {
    /// The fact's name (`compiler`, `location`, `shape`, ...).
    pub name: String,
    /// Its value (no `|`, which separates parts in [`RootCause::key`]).
    pub value: String,
}

/// What caused a finding, as its technique reads it: the technique's tag,
/// ordered named facts, and the known intended policy difference it is, if
/// any. Two runs with the same key share one root cause.
///
/// JSON: `{"technique": "debuginfo", "parts": [{"name": "compiler",
/// "value": "gcc-12.2.0"}, ...], "policy": null}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RootCause {
    /// The technique's tag ([`crate::technique::Technique::tag`]).
    pub technique: String,
    /// The facts, in the order the key reads them.
    pub parts: Vec<RootPart>,
    /// The known, intended policy difference this cause is (differential
    /// `slide_vs_reject`, ...), shown apart from candidate bugs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

impl RootCause {
    /// A cause of `technique` without facts yet.
    pub fn new(technique: impl Into<String>) -> Self {
        RootCause {
            technique: technique.into(),
            parts: Vec::new(),
            policy: None,
        }
    }

    /// This cause with one more fact (`|` in the value becomes `/`).
    pub fn with(mut self, name: &str, value: impl Into<String>) -> Self {
        self.parts.push(RootPart {
            name: name.into(),
            value: value.into().replace('|', "/"),
        });
        self
    }

    /// The default root cause: the class key's parts as facts, its `policy`
    /// part as the policy.
    pub fn from_class(key: &ClassKey) -> Self {
        let mut r = RootCause::new(key.technique.clone());
        for p in &key.parts {
            r = r.with(&p.name, p.value.clone());
        }
        r.policy = key.part("policy").map(str::to_string);
        r
    }

    /// The value of fact `name`, if the cause has it.
    pub fn part(&self, name: &str) -> Option<&str> {
        self.parts.iter().find(|p| p.name == name).map(|p| p.value.as_str())
    }

    /// Who is suspect, for people: the `suspect` fact (with the debugger
    /// when it is `debugger`: `lldb (debugger)`), else one of the `tools`,
    /// else `-`.
    pub fn suspect(&self) -> String {
        match (self.part("suspect"), self.part("debugger"), self.part("tools")) {
            (Some("debugger"), Some(d), _) => format!("{d} (debugger)"),
            (Some(s), _, _) => s.to_string(),
            (None, _, Some(t)) if t.contains(',') => format!("one of {t}"),
            (None, _, Some(t)) => t.to_string(),
            (None, _, None) => "-".into(),
        }
    }

    /// The text form runs are grouped by:
    /// `debuginfo:compiler=gcc-12.2.0|debugger=lldb|suspect=debugger|...`.
    /// A policy that is not already a fact is written last (`|policy=...`),
    /// so a policy difference never shares a root cause with a run that
    /// no policy explains.
    pub fn key(&self) -> String {
        let mut facts: Vec<String> = self.parts.iter().map(|p| format!("{}={}", p.name, p.value)).collect();
        if let Some(p) = self.policy.as_ref().filter(|_| self.part("policy").is_none()) {
            facts.push(format!("policy={p}"));
        }
        format!("{}:{}", self.technique, facts.join("|"))
    }

    /// A short stable name of [`RootCause::key`] for the command line:
    /// `rc-` and the first 10 hex digits of its SHA-256.
    pub fn id(&self) -> String {
        id_of(&self.key())
    }
}

/// The short name [`RootCause::id`] of a root-cause key.
pub fn id_of(key: &str) -> String {
    let digest = sha2::Sha256::digest(key.as_bytes());
    format!("rc-{}", &hex::encode(digest)[..10])
}

/// The runs of one root cause in a store.
#[derive(Debug, Clone, PartialEq)]
pub struct RootGroup {
    /// The cause.
    pub cause: RootCause,
    /// Its divergent runs.
    pub size: u64,
    /// The `Display` forms of the classes its runs are in.
    pub classes: BTreeSet<String>,
    /// The representative run: the first (smallest id) with a reduced
    /// reproducer, else the first.
    pub representative: i64,
    /// The representative's reduced reproducer
    /// ([`crate::technique::Technique::reduced_reproducer`]), if stored.
    pub reduced: Option<String>,
}

/// The root causes of the divergent runs matching `filter`, each run's cause
/// read by the technique of its tag in `techniques` (runs of other tags are
/// an error, as in every command). Largest first, then by key. Records are
/// read one at a time.
///
/// Errors: database errors, a stored record that does not parse, a run of an
/// unknown technique.
pub async fn group(store: &Store, filter: &RunFilter, techniques: &[&dyn Technique]) -> anyhow::Result<Vec<RootGroup>> {
    let mut by_key: BTreeMap<String, RootGroup> = BTreeMap::new();
    for id in store.divergent_run_ids(filter).await? {
        let Some(run) = store.run(id).await? else { continue };
        let technique = technique_of(techniques, &run)?;
        let Some(cause) = technique.root_cause(&run) else {
            continue;
        };
        let class = run.verdict.finding().map(|f| f.class.to_string()).unwrap_or_default();
        let reduced = technique.reduced_reproducer(&run);
        let g = by_key.entry(cause.key()).or_insert_with(|| RootGroup {
            cause,
            size: 0,
            classes: BTreeSet::new(),
            representative: id,
            reduced: None,
        });
        g.size += 1;
        g.classes.insert(class);
        // Ids come in ascending order: the first run is the representative
        // unless a later one has a reduced reproducer and it has none.
        if g.reduced.is_none() && reduced.is_some() {
            g.representative = id;
            g.reduced = reduced;
        }
    }
    let mut groups: Vec<RootGroup> = by_key.into_values().collect();
    groups.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.cause.key().cmp(&b.cause.key())));
    Ok(groups)
}

fn technique_of<'a>(techniques: &[&'a dyn Technique], run: &RunRecord) -> anyhow::Result<&'a dyn Technique> {
    techniques
        .iter()
        .copied()
        .find(|t| t.tag() == run.technique)
        .ok_or_else(|| anyhow::anyhow!("run {:?}: technique {:?} is not known", run.id, run.technique))
}

/// Where a root cause stands, for a maintainer: the first page of the
/// report lists [`Standing::New`] and [`Standing::Bug`] (candidate and
/// confirmed bugs) and collapses the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "standing", rename_all = "snake_case")]
pub enum Standing {
    /// Not known upstream, not a policy, not triaged: a candidate bug.
    New,
    /// Triaged as a bug (`doppel triage ROOT --as bug`).
    Bug {
        /// The person's note.
        note: String,
    },
    /// A known upstream issue ([`known::KnownBugs`]).
    Known {
        /// The entry's id.
        id: String,
        /// The upstream issue.
        link: String,
    },
    /// A known, intended policy difference (the technique's, or triaged so).
    Policy {
        /// The policy's name, or the triage note.
        name: String,
    },
    /// Triaged as a false positive of the method.
    FalsePositive {
        /// The person's note.
        note: String,
    },
}

impl Standing {
    /// Where `cause` stands: a triage decides first (a person looked at it),
    /// then a known upstream issue, then the technique's policy; else new.
    pub fn of(cause: &RootCause, known: &known::KnownBugs, triage: Option<&Triage>) -> Standing {
        if let Some(t) = triage {
            return match t.verdict {
                TriageVerdict::Bug => match known.find(cause) {
                    Some(k) => Standing::Known {
                        id: k.id.clone(),
                        link: k.link.clone(),
                    },
                    None => Standing::Bug { note: t.note.clone() },
                },
                TriageVerdict::Policy => Standing::Policy { name: t.note.clone() },
                TriageVerdict::FalsePositive => Standing::FalsePositive { note: t.note.clone() },
            };
        }
        if let Some(k) = known.find(cause) {
            return Standing::Known {
                id: k.id.clone(),
                link: k.link.clone(),
            };
        }
        match &cause.policy {
            Some(p) => Standing::Policy { name: p.clone() },
            None => Standing::New,
        }
    }

    /// Whether the first page lists it (new or confirmed bugs).
    pub fn is_candidate(&self) -> bool {
        matches!(self, Standing::New | Standing::Bug { .. })
    }

    /// For people: `new`, `known (https://...)`, `triaged bug: note`,
    /// `policy: slide_vs_reject`, `false positive: note`.
    pub fn describe(&self) -> String {
        let noted = |what: &str, note: &str| {
            if note.is_empty() {
                what.to_string()
            } else {
                format!("{what}: {note}")
            }
        };
        match self {
            Standing::New => "new".into(),
            Standing::Bug { note } => noted("triaged bug", note),
            Standing::Known { link, .. } => format!("known ({link})"),
            Standing::Policy { name } => noted("policy", name),
            Standing::FalsePositive { note } => noted("false positive", note),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cause_is_the_class_key_and_keys_and_ids_are_stable() {
        let k = ClassKey::new("differential")
            .with("divergence", "breakpoint_location")
            .with_prefixed("policy", "policy", "slide_vs_reject");
        let r = RootCause::from_class(&k);
        assert_eq!(
            r.key(),
            "differential:divergence=breakpoint_location|policy=slide_vs_reject"
        );
        assert_eq!(r.policy.as_deref(), Some("slide_vs_reject"));
        assert_eq!(r.id(), id_of(&r.key()));
        assert!(r.id().starts_with("rc-") && r.id().len() == 13, "{}", r.id());
        assert_ne!(r.id(), RootCause::new("differential").id());
        assert_eq!(RootCause::new("x").with("a", "b|c").part("a"), Some("b/c"));
        let mut p = RootCause::new("x").with("a", "b");
        let plain = p.key();
        p.policy = Some("slide_vs_reject".into());
        assert_eq!(p.key(), format!("{plain}|policy=slide_vs_reject"));
    }

    #[test]
    fn standing_puts_triage_first_then_known_then_policy() {
        let known = known::KnownBugs::parse(
            r#"version = 1
[[bug]]
id = "b1"
technique = "t"
title = "a bug"
link = "https://example.org/1"
[bug.match]
debugger = "lldb"
"#,
        )
        .unwrap();
        let cause = RootCause::new("t").with("debugger", "lldb");
        assert!(matches!(Standing::of(&cause, &known, None), Standing::Known { .. }));
        let mut policy = RootCause::new("t").with("debugger", "gdb");
        assert_eq!(Standing::of(&policy, &known, None), Standing::New);
        policy.policy = Some("p".into());
        assert_eq!(Standing::of(&policy, &known, None).describe(), "policy: p");
        let t = Triage {
            root_cause: policy.key(),
            root_id: policy.id(),
            technique: "t".into(),
            verdict: TriageVerdict::FalsePositive,
            note: "loop rotation".into(),
            at_ms: 0,
        };
        let s = Standing::of(&policy, &known, Some(&t));
        assert_eq!(s.describe(), "false positive: loop rotation");
        assert!(!s.is_candidate());
    }
}
