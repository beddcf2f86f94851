//! Known bugs: signatures of already-reported upstream issues, with their
//! links, matched against root causes, so a maintainer is not handed a
//! duplicate (issue 17, "What must exist" item 3).
//!
//! The list is `known-bugs.toml` at the repository's root, versioned with
//! the code and compiled into doppel ([`KnownBugs::bundled`]). Format
//! (`version = 1`):
//!
//! ```toml
//! version = 1
//! [[bug]]
//! id = "lldb-dw-op-shra"            # unique, stable
//! technique = "debuginfo"           # the root cause's technique tag
//! title = "LLDB evaluates DW_OP_shra as a logical shift"
//! link = "https://github.com/llvm/llvm-project/issues/207497"
//! [bug.match]                       # every fact must match
//! debugger = "lldb"
//! location = "*DW_OP_shra*"         # `*` matches any text
//! ```
//!
//! An entry matches a [`RootCause`] of its technique when every fact it
//! names is present in the cause and matches its pattern (`*` any text,
//! everything else literally). Entries are only added for issues someone
//! verified upstream; every entry must have an `https://` link.

use super::RootCause;
use anyhow::Context;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};

/// The bundled list (`known-bugs.toml` at the repository's root).
pub const BUNDLED: &str = include_str!("../../../../known-bugs.toml");

/// The version of the format this doppel reads.
pub const FORMAT_VERSION: u32 = 1;

/// One already-reported upstream issue.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownBug {
    /// A unique, stable name.
    pub id: String,
    /// The technique tag of the root causes it can match.
    pub technique: String,
    /// The issue's title or a summary, for people.
    pub title: String,
    /// The upstream issue (`https://...`).
    pub link: String,
    /// Fact name -> pattern (`*` matches any text); all must match.
    #[serde(rename = "match")]
    pub matches: BTreeMap<String, String>,
    /// Anything else worth knowing (fixed in which version, ...).
    #[serde(default)]
    pub note: String,
}

/// The list of known bugs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownBugs {
    /// Format version ([`FORMAT_VERSION`]).
    pub version: u32,
    /// The entries, in file order.
    #[serde(default, rename = "bug")]
    pub bugs: Vec<KnownBug>,
}

impl KnownBugs {
    /// Parses and checks a list: the format version, unique ids, an
    /// `https://` link and at least one fact per entry.
    ///
    /// Errors: TOML or field errors (serde's message), or a check that fails.
    pub fn parse(text: &str) -> anyhow::Result<KnownBugs> {
        let list: KnownBugs = toml::from_str(text).context("known bugs: not a valid list")?;
        anyhow::ensure!(
            list.version == FORMAT_VERSION,
            "known bugs: format version {} (this doppel reads {FORMAT_VERSION})",
            list.version
        );
        let mut ids = HashSet::new();
        for b in &list.bugs {
            anyhow::ensure!(ids.insert(b.id.as_str()), "known bugs: id {:?} twice", b.id);
            anyhow::ensure!(
                b.link.starts_with("https://") && b.link.len() > "https://".len(),
                "known bugs: {} has no https:// link",
                b.id
            );
            anyhow::ensure!(!b.matches.is_empty(), "known bugs: {} matches every root cause", b.id);
        }
        Ok(list)
    }

    /// The list compiled into this doppel ([`BUNDLED`]).
    ///
    /// Errors: as [`KnownBugs::parse`] (a test keeps the bundled list valid).
    pub fn bundled() -> anyhow::Result<KnownBugs> {
        KnownBugs::parse(BUNDLED)
    }

    /// The first entry matching `cause`, if any.
    pub fn find(&self, cause: &RootCause) -> Option<&KnownBug> {
        self.bugs.iter().find(|b| b.matches_cause(cause))
    }
}

impl KnownBug {
    /// Whether every fact the entry names is in `cause` and matches.
    pub fn matches_cause(&self, cause: &RootCause) -> bool {
        self.technique == cause.technique
            && self
                .matches
                .iter()
                .all(|(name, pattern)| cause.part(name).is_some_and(|v| glob(pattern, v)))
    }
}

/// `*` matches any text (also none); every other character itself.
fn glob(pattern: &str, text: &str) -> bool {
    let pieces: Vec<&str> = pattern.split('*').collect();
    if pieces.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for p in &pieces[1..pieces.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_literally_except_stars() {
        assert!(glob("lldb", "lldb"));
        assert!(!glob("lldb", "lldb-22"));
        assert!(glob("*DW_OP_shra*", "DW_OP_breg7 K; DW_OP_shra; DW_OP_stack_value"));
        assert!(glob("DW_OP_piece*", "DW_OP_piece K; DW_OP_reg0"));
        assert!(!glob("DW_OP_piece*", "DW_OP_reg0; DW_OP_piece K"));
        assert!(glob("a*b*c", "abc") && glob("a*b*c", "a-b-c") && !glob("a*b*c", "acb"));
        assert!(!glob("ab*ba", "aba"));
    }

    #[test]
    fn the_bundled_list_parses_and_every_entry_has_a_link_and_matches_its_own_signature() {
        let list = KnownBugs::bundled().unwrap();
        assert!(!list.bugs.is_empty());
        for b in &list.bugs {
            assert!(b.link.starts_with("https://github.com/"), "{}: {}", b.id, b.link);
            // A cause with the entry's facts (stars read as nothing) matches it.
            let mut cause = RootCause::new(b.technique.clone());
            for (name, pattern) in &b.matches {
                cause = cause.with(name, pattern.replace('*', ""));
            }
            assert!(b.matches_cause(&cause), "{}", b.id);
            cause.technique = "other".into();
            assert!(!b.matches_cause(&cause), "{}", b.id);
        }
    }

    #[test]
    fn bad_lists_are_refused() {
        let one = |extra: &str| format!("version = 1\n[[bug]]\nid = \"x\"\ntechnique = \"t\"\ntitle = \"t\"\n{extra}");
        assert!(KnownBugs::parse(&one("link = \"https://e.org/1\"\n[bug.match]\na = \"b\"\n")).is_ok());
        assert!(KnownBugs::parse(&one("link = \"\"\n[bug.match]\na = \"b\"\n")).is_err());
        assert!(KnownBugs::parse(&one("link = \"https://e.org/1\"\n")).is_err());
        assert!(KnownBugs::parse("version = 2").is_err());
        assert!(KnownBugs::parse("version = 1\nbugs = 3").is_err());
    }
}
