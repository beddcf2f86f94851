//! Ground truth of a regression pair: the lines the fix changed
//! (darwin-measured.md section 4.2). Lines are compared with all white
//! space removed (a whitespace-insensitive line diff, Myers' algorithm via
//! the `similar` crate).
//!
//! - Same-author pairs (P is the fix of P'): the faulty lines are the lines
//!   of P' the diff deletes or replaces, and the lines of P it inserts or
//!   replaces. A report hits if it names one of them on its side; pairs
//!   whose fix only inserts (code missing in P') have no P' line, so only
//!   a report naming P's lines can hit them.
//! - Cross-author pairs (P from another author): the faulty lines are those
//!   of P' that its own author's fix deletes or replaces; a pure insertion
//!   blames the P' line before the insertion point (where the missing code
//!   goes). P's lines have no ground truth.

use serde::{Deserialize, Serialize};
use similar::{DiffOp, capture_diff_slices};
use std::collections::BTreeSet;

/// Which program a line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The modified (failing) program P'.
    Modified,
    /// The reference program P.
    Reference,
}

/// A 1-based line of P or P'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Line {
    /// The program.
    pub side: Side,
    /// 1-based line number.
    pub line: u32,
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self.side {
            Side::Modified => "P'",
            Side::Reference => "P",
        };
        write!(f, "{s}:{}", self.line)
    }
}

/// The faulty lines of a pair.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truth {
    /// Faulty lines (either side).
    pub lines: BTreeSet<Line>,
}

impl Truth {
    /// Whether `line` is faulty.
    pub fn contains(&self, line: &Line) -> bool {
        self.lines.contains(line)
    }

    /// The faulty lines of P'.
    pub fn modified_lines(&self) -> BTreeSet<u32> {
        self.lines
            .iter()
            .filter(|l| l.side == Side::Modified)
            .map(|l| l.line)
            .collect()
    }
}

fn squeeze(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect())
        .collect()
}

/// The changed lines between `modified` (P') and `fixed` (its fix): (lines
/// of P' deleted or replaced, lines of the fix inserted or replaced, P'
/// lines before a pure insertion), each 1-based.
pub fn changed_lines(modified: &str, fixed: &str) -> (BTreeSet<u32>, BTreeSet<u32>, BTreeSet<u32>) {
    let (a, b) = (squeeze(modified), squeeze(fixed));
    let mut old = BTreeSet::new();
    let mut new = BTreeSet::new();
    let mut anchors = BTreeSet::new();
    for op in capture_diff_slices(similar::Algorithm::Myers, &a, &b) {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete { old_index, old_len, .. } => {
                old.extend((old_index..old_index + old_len).map(|i| i as u32 + 1));
            }
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => {
                new.extend((new_index..new_index + new_len).map(|i| i as u32 + 1));
                // The line before the insertion point (1-based old_index), or line 1.
                anchors.insert((old_index as u32).max(1));
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                old.extend((old_index..old_index + old_len).map(|i| i as u32 + 1));
                new.extend((new_index..new_index + new_len).map(|i| i as u32 + 1));
            }
        }
    }
    (old, new, anchors)
}

/// Ground truth of a same-author pair: `modified` = P', `reference` = P.
pub fn same_author(modified: &str, reference: &str) -> Truth {
    let (old, new, _) = changed_lines(modified, reference);
    let mut lines: BTreeSet<Line> = old
        .into_iter()
        .map(|line| Line {
            side: Side::Modified,
            line,
        })
        .collect();
    lines.extend(new.into_iter().map(|line| Line {
        side: Side::Reference,
        line,
    }));
    Truth { lines }
}

/// Ground truth of a cross-author pair: `modified` = P', `fix` = its own
/// author's accepted program.
pub fn cross_author(modified: &str, fix: &str) -> Truth {
    let (old, _, anchors) = changed_lines(modified, fix);
    let chosen = if old.is_empty() { anchors } else { old };
    Truth {
        lines: chosen
            .into_iter()
            .map(|line| Line {
                side: Side::Modified,
                line,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaced_inserted_and_whitespace_only_changes() {
        let p2 = "int main() {\n  if (x >= 0)\n    y++;\n  return 0;\n}\n";
        let p = "int main() {\n  if (x > 0)\n    y++;\n  z++;\n    return   0;\n}\n";
        let t = same_author(p2, p);
        let got: Vec<String> = t.lines.iter().map(|l| l.to_string()).collect();
        // P' line 2 replaced by P line 2; P line 4 inserted; the re-indented return is equal.
        assert_eq!(got, ["P':2", "P:2", "P:4"]);
        assert_eq!(t.modified_lines().into_iter().collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn cross_author_insertion_blames_the_line_before() {
        let p2 = "a\nb\nc\n";
        let fix = "a\nb\nnew\nc\n";
        let t = cross_author(p2, fix);
        assert_eq!(t.modified_lines().into_iter().collect::<Vec<_>>(), [2]);
        let t = cross_author("a\nX\nc\n", "a\nb\nc\n");
        assert_eq!(t.modified_lines().into_iter().collect::<Vec<_>>(), [2]);
    }
}
