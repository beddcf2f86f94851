//! Source edits and the location map they induce.
//!
//! A program transformation (ISSTA'19 section 3.2.2) changes a program by a
//! few text edits; the debugging actions and the expected trace must move with
//! the code. [`apply`] performs the edits and returns a [`LocationMap`] from
//! positions in the old text to positions in the new one.
//!
//! Positions are 1-based lines and 1-based columns counted in characters
//! (Unicode scalar values), as everywhere in doppel's model.

use serde::{Deserialize, Serialize};

/// A position in a source text: 1-based line, 1-based column (characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters (not bytes).
    pub column: u32,
}

impl Pos {
    /// The position at `line`, `column` (both 1-based).
    pub fn new(line: u32, column: u32) -> Self {
        Self { line, column }
    }
}

/// Replace the text in `[start, end)` by `text` (an insertion when
/// `start == end`, a removal when `text` is empty). Positions refer to the
/// text before any edit of the same [`apply`] call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceEdit {
    /// First position replaced (inclusive).
    pub start: Pos,
    /// First position kept after the replaced text (exclusive).
    pub end: Pos,
    /// The replacement.
    pub text: String,
}

impl SourceEdit {
    /// Inserts `text` at `at`.
    pub fn insert(at: Pos, text: impl Into<String>) -> Self {
        Self {
            start: at,
            end: at,
            text: text.into(),
        }
    }

    /// Replaces `[start, end)` by `text`.
    pub fn replace(start: Pos, end: Pos, text: impl Into<String>) -> Self {
        Self {
            start,
            end,
            text: text.into(),
        }
    }
}

/// One applied edit, as the map needs it: the replaced range and the shape
/// (newlines, length of the last line) of the text that replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct MappedEdit {
    start: Pos,
    end: Pos,
    /// Newlines in the inserted text.
    newlines: u32,
    /// Characters after the last newline of the inserted text (all of it
    /// when it has none).
    tail: u32,
}

/// Maps positions of a program to the positions of its transformed version.
///
/// Built by [`apply`]; maps compose with [`LocationMap::then`] (iterated
/// transformations). A position inside replaced or removed text maps to
/// `None`, except the first position of a replacement, which stays where it
/// was (a statement that starts at a replaced literal still starts there).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocationMap {
    /// Edits in application order, each in the coordinates left by the
    /// previous ones.
    edits: Vec<MappedEdit>,
}

impl LocationMap {
    /// The identity map.
    pub fn identity() -> Self {
        Self::default()
    }

    /// Whether the map changes nothing.
    pub fn is_identity(&self) -> bool {
        self.edits.is_empty()
    }

    /// The new position of `p`, or `None` when the text at `p` was removed.
    pub fn map(&self, p: Pos) -> Option<Pos> {
        self.edits.iter().try_fold(p, |p, e| e.map(p))
    }

    /// The old position that maps to the new position `p` (the inverse of
    /// [`LocationMap::map`]), or `None` when `p` lies in inserted or
    /// replacing text (except a replacement's first position, which is
    /// kept: it maps back to the start of the replaced text).
    pub fn unmap(&self, p: Pos) -> Option<Pos> {
        self.edits.iter().rev().try_fold(p, |p, e| e.unmap(p))
    }

    /// The new line of a whole line: where its first column goes if that
    /// survives, else the first surviving column of the line. `None` when the
    /// whole line was removed.
    pub fn map_line(&self, line: u32) -> Option<u32> {
        self.edits.iter().try_fold(line, |l, e| e.map_line(l))
    }

    /// This map followed by `next` (positions go through `self`, then `next`).
    pub fn then(mut self, next: &LocationMap) -> Self {
        self.edits.extend(next.edits.iter().copied());
        self
    }

    /// The text that replaced old text, as spans `[start, end)` of the new
    /// text (new coordinates), in the order the edits were applied.
    ///
    /// A replacement keeps its first position ([`LocationMap::map`]), so an
    /// old position at the start of replaced text maps to a span's `start`;
    /// every other position of the span holds new code that stands for the
    /// replaced text (ISSTA'19 section 3.2.2: `2` became `(1+1)`, and a
    /// debugger may position the expression at its first inner token).
    ///
    /// Only replacements of a non-empty old range by non-empty text have a
    /// span: an insertion's text is new code that no old position maps to,
    /// and a removal leaves no text. Spans are composed across
    /// [`LocationMap::then`]: a later edit before a span moves it, one inside
    /// it (an iterated replacement) grows or shrinks it, one that removes
    /// it removes it, and one that cuts across its border drops it (the
    /// text no longer stands for the old text as a whole). Nested
    /// replacements give nested spans, so a position may lie in several.
    pub fn replacements(&self) -> Vec<(Pos, Pos)> {
        let mut spans: Vec<(Pos, Pos)> = Vec::new();
        for e in &self.edits {
            spans = spans.into_iter().filter_map(|s| e.carry(s)).collect();
            if e.start < e.end && (e.newlines > 0 || e.tail > 0) {
                spans.push((e.start, e.shift_after(e.end)));
            }
        }
        spans
    }

    /// The innermost replacement span ([`LocationMap::replacements`]) that
    /// contains the new position `p_new`, or `None` when `p_new` is not in
    /// replacement text.
    pub fn replacement_containing(&self, p_new: Pos) -> Option<(Pos, Pos)> {
        self.replacements()
            .into_iter()
            .filter(|&(s, e)| s <= p_new && p_new < e)
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
    }

    /// Lines of the new text on which a removal joined what was before it
    /// with what was after it (new numbering, ascending): removals of text
    /// that did not take whole lines (they start or end after a line's
    /// first column). A removal of whole lines joins nothing: the line
    /// after it is unchanged. Such a line holds the same code as before,
    /// minus the removed part, and a debugger may offer other breakable
    /// positions on it.
    pub fn joined_lines(&self) -> Vec<u32> {
        let mut lines = std::collections::BTreeSet::new();
        for (i, e) in self.edits.iter().enumerate() {
            let removal = e.start < e.end && e.newlines == 0 && e.tail == 0;
            if !removal || (e.start.column == 1 && e.end.column == 1) {
                continue;
            }
            if let Some(p) = self.edits[i + 1..].iter().try_fold(e.start, |p, later| later.map(p)) {
                lines.insert(p.line);
            }
        }
        lines.into_iter().collect()
    }
}

impl MappedEdit {
    fn map(&self, p: Pos) -> Option<Pos> {
        // Text inserted at a position goes before what was there; a
        // replacement keeps its first position.
        if p < self.start || (p == self.start && self.start != self.end) {
            return Some(p);
        }
        if p < self.end {
            return None;
        }
        Some(self.shift_after(p))
    }

    /// The inverse of [`MappedEdit::map`].
    fn unmap(&self, p: Pos) -> Option<Pos> {
        if p < self.start || (p == self.start && self.start != self.end) {
            return Some(p);
        }
        let after = self.shift_after(self.end);
        if p < after {
            return None;
        }
        let line = self.start.line + self.newlines;
        if p.line == line {
            Some(Pos::new(self.end.line, p.column - after.column + self.end.column))
        } else {
            Some(Pos::new(p.line - line + self.end.line, p.column))
        }
    }

    /// The span `[s, t)` of earlier replacement text after this edit (see
    /// [`LocationMap::replacements`]); `None` when this edit removes it or
    /// cuts across its border.
    fn carry(&self, (s, t): (Pos, Pos)) -> Option<(Pos, Pos)> {
        if t <= self.start {
            // Before the edit (text inserted at `t` goes after the span).
            Some((s, t))
        } else if self.end <= s {
            // After it (text inserted at `s` goes before the span).
            Some((self.shift_after(s), self.shift_after(t)))
        } else if s <= self.start && self.end <= t {
            // Inside it: the span keeps its start and its end moves.
            Some((s, self.shift_after(t)))
        } else {
            None
        }
    }

    /// Where a position at or after `end` goes.
    fn shift_after(&self, p: Pos) -> Pos {
        let line = self.start.line + self.newlines;
        if p.line == self.end.line {
            let base = if self.newlines == 0 {
                self.start.column + self.tail
            } else {
                1 + self.tail
            };
            Pos::new(line, base + (p.column - self.end.column))
        } else {
            Pos::new(p.line - self.end.line + line, p.column)
        }
    }

    fn map_line(&self, line: u32) -> Option<u32> {
        if line < self.start.line || (line == self.start.line && self.start.column > 1) {
            return Some(line);
        }
        if line == self.start.line && self.start == self.end {
            // An insertion at the start of the line: the line's code follows it.
            return Some(self.shift_after(Pos::new(line, 1)).line);
        }
        if line == self.start.line {
            // The line's start is replaced; its code goes on after the edit
            // when the replaced range ends on this line.
            return (self.end.line == line).then_some(self.start.line + self.newlines);
        }
        if line < self.end.line {
            return None;
        }
        Some(self.shift_after(Pos::new(line, self.end.column.max(1))).line)
    }
}

/// Why edits cannot be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EditError {
    #[error("edit position {0:?} is outside the text")]
    /// An edit position lies outside the text.
    OutOfRange(Pos),
    #[error("edits overlap at {0:?}")]
    /// Two edits overlap, at this position.
    Overlap(Pos),
}

/// Applies non-overlapping `edits` (in old-text positions, any order) to
/// `text` and returns the new text and the map from old to new positions.
///
/// Errors: a position outside the text, overlapping edits, or `end < start`.
pub fn apply(text: &str, edits: &[SourceEdit]) -> Result<(String, LocationMap), EditError> {
    let mut sorted: Vec<&SourceEdit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    for w in sorted.windows(2) {
        if w[1].start < w[0].end {
            return Err(EditError::Overlap(w[1].start));
        }
    }
    let offsets = LineIndex::new(text);
    let mut out = String::with_capacity(text.len() + 64);
    let mut cursor = 0usize;
    for e in &sorted {
        if e.end < e.start {
            return Err(EditError::Overlap(e.start));
        }
        let s = offsets.offset(text, e.start).ok_or(EditError::OutOfRange(e.start))?;
        let t = offsets.offset(text, e.end).ok_or(EditError::OutOfRange(e.end))?;
        out.push_str(&text[cursor..s]);
        out.push_str(&e.text);
        cursor = t;
    }
    out.push_str(&text[cursor..]);
    // Map edits applied last-to-first need no coordinate adjustment: each
    // later (higher) edit is described in old coordinates, which equal the
    // coordinates left after applying the edits that follow it.
    let edits = sorted
        .iter()
        .rev()
        .map(|e| {
            let newlines = e.text.matches('\n').count() as u32;
            let tail = e.text.rsplit('\n').next().unwrap_or("").chars().count() as u32;
            MappedEdit {
                start: e.start,
                end: e.end,
                newlines,
                tail,
            }
        })
        .collect();
    Ok((out, LocationMap { edits }))
}

/// Byte offsets of line starts, for converting between byte offsets and
/// 1-based character positions ([`Pos`]).
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { starts }
    }

    /// The byte offset of `p`; the column may point just past the line's
    /// last character (before its newline, or at the end of the text).
    fn offset(&self, text: &str, p: Pos) -> Option<usize> {
        let start = *self.starts.get(p.line.checked_sub(1)? as usize)?;
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = &text[start..line_end];
        let col = p.column.checked_sub(1)? as usize;
        let chars = line.chars().count();
        if col > chars {
            return None;
        }
        Some(start + line.char_indices().nth(col).map_or(line.len(), |(i, _)| i))
    }

    /// The position of byte `byte` of `text` (clamped to its end).
    pub(crate) fn pos(&self, text: &str, byte: usize) -> Pos {
        let byte = byte.min(text.len());
        let line = self.starts.partition_point(|&s| s <= byte).saturating_sub(1);
        let start = self.starts[line];
        let column = text.get(start..byte).map_or(byte - start, |s| s.chars().count());
        Pos::new(line as u32 + 1, column as u32 + 1)
    }
}

/// The position of byte `offset` in `text` (1-based line and character column).
pub fn pos_of_offset(text: &str, offset: usize) -> Pos {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Pos::new(line, before[line_start..].chars().count() as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmap_inverts_map_and_has_no_image_in_new_text() {
        let text = "int a;\nint b = 2;\nint c;\n";
        let (_, first) = apply(text, &[SourceEdit::insert(Pos::new(2, 1), "x = x;\n")]).unwrap();
        // `2` at 3:9 (new numbering) becomes `(1+1)`.
        let (_, second) = apply(
            "int a;\nx = x;\nint b = 2;\nint c;\n",
            &[SourceEdit::replace(Pos::new(3, 9), Pos::new(3, 10), "(1+1)")],
        )
        .unwrap();
        let map = first.then(&second);
        for line in 1..=3 {
            for column in 1..=9 {
                let p = Pos::new(line, column);
                if let Some(q) = map.map(p) {
                    assert_eq!(map.unmap(q), Some(p), "{p:?} -> {q:?}");
                }
            }
        }
        assert_eq!(map.unmap(Pos::new(2, 1)), None, "the inserted line");
        assert_eq!(map.unmap(Pos::new(3, 10)), None, "inside the replacement");
        assert_eq!(map.unmap(Pos::new(3, 9)), Some(Pos::new(2, 9)), "its first position");
        assert_eq!(map.unmap(Pos::new(3, 14)), Some(Pos::new(2, 10)), "the `;` after it");
        assert_eq!(map.unmap(Pos::new(4, 1)), Some(Pos::new(3, 1)));
        assert_eq!(LocationMap::identity().unmap(Pos::new(7, 3)), Some(Pos::new(7, 3)));
    }

    #[test]
    fn inserted_lines_shift_later_lines_only() {
        let text = "a;\nb;\nc;\n";
        let (out, map) = apply(text, &[SourceEdit::insert(Pos::new(2, 1), "if (0) { x = 1; }\n")]).unwrap();
        assert_eq!(out, "a;\nif (0) { x = 1; }\nb;\nc;\n");
        assert_eq!(map.map(Pos::new(1, 1)), Some(Pos::new(1, 1)));
        assert_eq!(map.map(Pos::new(2, 1)), Some(Pos::new(3, 1)));
        assert_eq!(map.map(Pos::new(3, 2)), Some(Pos::new(4, 2)));
        assert_eq!(map.map_line(2), Some(3));
        assert_eq!(map.map_line(1), Some(1));
    }

    #[test]
    fn a_replaced_literal_shifts_columns_after_it_on_its_line() {
        let text = "x = 12 + y;\nz;\n";
        let (out, map) = apply(text, &[SourceEdit::replace(Pos::new(1, 5), Pos::new(1, 7), "(11+1)")]).unwrap();
        assert_eq!(out, "x = (11+1) + y;\nz;\n");
        assert_eq!(map.map(Pos::new(1, 1)), Some(Pos::new(1, 1)));
        assert_eq!(
            map.map(Pos::new(1, 5)),
            Some(Pos::new(1, 5)),
            "start of the literal stays"
        );
        assert_eq!(map.map(Pos::new(1, 6)), None, "inside the literal");
        assert_eq!(map.map(Pos::new(1, 10)), Some(Pos::new(1, 14)), "y moves by 4");
        assert_eq!(map.map(Pos::new(2, 1)), Some(Pos::new(2, 1)));
        assert_eq!(map.map_line(1), Some(1));
    }

    #[test]
    fn removed_lines_map_to_none_and_later_lines_move_up() {
        let text = "a;\nfunction f() {\n  g();\n}\nb;\n";
        let (out, map) = apply(text, &[SourceEdit::replace(Pos::new(2, 1), Pos::new(5, 1), "")]).unwrap();
        assert_eq!(out, "a;\nb;\n");
        assert_eq!(map.map_line(3), None);
        assert_eq!(map.map_line(4), None);
        assert_eq!(map.map(Pos::new(3, 3)), None);
        assert_eq!(map.map_line(5), Some(2));
        assert_eq!(map.map(Pos::new(5, 1)), Some(Pos::new(2, 1)));
    }

    #[test]
    fn several_edits_in_any_order_and_composition() {
        let text = "1;\n2;\n3;\n";
        let edits = [
            SourceEdit::insert(Pos::new(3, 1), "i;\n"),
            SourceEdit::replace(Pos::new(1, 1), Pos::new(1, 2), "(1*1)"),
        ];
        let (out, map) = apply(text, &edits).unwrap();
        assert_eq!(out, "(1*1);\n2;\ni;\n3;\n");
        assert_eq!(map.map(Pos::new(1, 2)), Some(Pos::new(1, 6)));
        assert_eq!(map.map(Pos::new(3, 1)), Some(Pos::new(4, 1)));
        let (out2, map2) = apply(&out, &[SourceEdit::insert(Pos::new(1, 1), "x;\n")]).unwrap();
        assert_eq!(out2, "x;\n(1*1);\n2;\ni;\n3;\n");
        let both = map.then(&map2);
        assert_eq!(both.map(Pos::new(3, 1)), Some(Pos::new(5, 1)));
        assert_eq!(both.map_line(2), Some(3));
    }

    #[test]
    fn a_replaced_literal_has_a_span_of_new_text_starting_where_the_literal_did() {
        // The Firefox case (docs/results/metamorphic.md): `2` at 15:13.
        let text = format!("{}    let v = 2;\n", "\n".repeat(14));
        let (out, map) = apply(
            &text,
            &[SourceEdit::replace(Pos::new(15, 13), Pos::new(15, 14), "(1+1)")],
        )
        .unwrap();
        assert!(out.ends_with("\n    let v = (1+1);\n"));
        assert_eq!(map.map(Pos::new(15, 13)), Some(Pos::new(15, 13)));
        assert_eq!(map.replacements(), vec![(Pos::new(15, 13), Pos::new(15, 18))]);
        let span = Some((Pos::new(15, 13), Pos::new(15, 18)));
        assert_eq!(
            map.replacement_containing(Pos::new(15, 14)),
            span,
            "inside the parentheses"
        );
        assert_eq!(map.replacement_containing(Pos::new(15, 13)), span);
        assert_eq!(map.replacement_containing(Pos::new(15, 18)), None, "the `;` after it");
        assert_eq!(map.replacement_containing(Pos::new(15, 12)), None);
        assert_eq!(map.replacement_containing(Pos::new(16, 1)), None);
    }

    #[test]
    fn insertions_and_removals_have_no_replacement_span() {
        let text = "a;\nif (c) {\n  b;\n}\n";
        let (_, insert) = apply(text, &[SourceEdit::insert(Pos::new(2, 1), "x = x;\n")]).unwrap();
        assert!(insert.replacements().is_empty());
        let (_, remove) = apply(text, &[SourceEdit::replace(Pos::new(2, 9), Pos::new(4, 1), "")]).unwrap();
        assert!(remove.replacements().is_empty());
    }

    #[test]
    fn replacement_spans_compose_across_iterated_transformations() {
        let (t1, m1) = apply(
            "x = 2;\n",
            &[SourceEdit::replace(Pos::new(1, 5), Pos::new(1, 6), "(1+1)")],
        )
        .unwrap();
        assert_eq!(t1, "x = (1+1);\n");
        // The next round replaces the `1` inside, then a line is inserted above.
        let (t2, m2) = apply(&t1, &[SourceEdit::replace(Pos::new(1, 6), Pos::new(1, 7), "(0+1)")]).unwrap();
        assert_eq!(t2, "x = ((0+1)+1);\n");
        let (t3, m3) = apply(&t2, &[SourceEdit::insert(Pos::new(1, 1), "y;\n")]).unwrap();
        assert_eq!(t3, "y;\nx = ((0+1)+1);\n");
        let all = m1.clone().then(&m2).then(&m3);
        let outer = (Pos::new(2, 5), Pos::new(2, 14));
        let inner = (Pos::new(2, 6), Pos::new(2, 11));
        assert_eq!(all.replacements(), vec![outer, inner]);
        assert_eq!(
            all.map(Pos::new(1, 5)),
            Some(outer.0),
            "the old literal's start is the outer span's start"
        );
        assert_eq!(all.replacement_containing(Pos::new(2, 7)), Some(inner), "the innermost");
        assert_eq!(all.replacement_containing(Pos::new(2, 12)), Some(outer));
        // Text inserted right after a span is not part of it.
        let (_, after) = apply(&t1, &[SourceEdit::insert(Pos::new(1, 10), " + 0")]).unwrap();
        assert_eq!(
            m1.clone().then(&after).replacements(),
            vec![(Pos::new(1, 5), Pos::new(1, 10))]
        );
        // An edit across the span's border drops it, and so does one that
        // replaces it whole: only their own spans are left.
        let (_, across) = apply(&t1, &[SourceEdit::replace(Pos::new(1, 1), Pos::new(1, 7), "z")]).unwrap();
        assert_eq!(
            m1.clone().then(&across).replacements(),
            vec![(Pos::new(1, 1), Pos::new(1, 2))]
        );
        let (_, whole) = apply(&t1, &[SourceEdit::replace(Pos::new(1, 1), Pos::new(1, 11), "z = 3;")]).unwrap();
        assert_eq!(m1.then(&whole).replacements(), vec![(Pos::new(1, 1), Pos::new(1, 7))]);
    }

    #[test]
    fn joined_lines_are_the_lines_where_a_partial_removal_left_code() {
        let text = "a;\nif (c) {\n  b;\n}\nfunction f() {\n}\nd;\n";
        // Emptying the block joins the `if` line with its `}`.
        let (emptied, block) = apply(text, &[SourceEdit::replace(Pos::new(2, 9), Pos::new(4, 1), "")]).unwrap();
        assert_eq!(emptied, "a;\nif (c) {}\nfunction f() {\n}\nd;\n");
        assert_eq!(block.joined_lines(), vec![2]);
        // Removing whole lines joins nothing.
        let (out, lines) = apply(text, &[SourceEdit::replace(Pos::new(5, 1), Pos::new(7, 1), "")]).unwrap();
        assert_eq!(out, "a;\nif (c) {\n  b;\n}\nd;\n");
        assert!(lines.joined_lines().is_empty());
        // Later edits move the line; insertions and replacements join nothing.
        let (_, insert) = apply(&emptied, &[SourceEdit::insert(Pos::new(1, 1), "x;\n")]).unwrap();
        assert!(insert.joined_lines().is_empty());
        assert_eq!(block.then(&insert).joined_lines(), vec![3]);
    }

    #[test]
    fn bad_edits_are_errors() {
        let text = "ab\n";
        assert_eq!(
            apply(text, &[SourceEdit::insert(Pos::new(5, 1), "x")]).unwrap_err(),
            EditError::OutOfRange(Pos::new(5, 1))
        );
        let overlapping = [
            SourceEdit::replace(Pos::new(1, 1), Pos::new(1, 3), "x"),
            SourceEdit::replace(Pos::new(1, 2), Pos::new(1, 3), "y"),
        ];
        assert!(matches!(apply(text, &overlapping), Err(EditError::Overlap(_))));
    }

    #[test]
    fn offsets_and_positions_agree_on_non_ascii_text() {
        let text = "é = 1;\nxé;\n";
        assert_eq!(pos_of_offset(text, text.find('1').unwrap()), Pos::new(1, 5));
        let (out, _) = apply(text, &[SourceEdit::replace(Pos::new(1, 5), Pos::new(1, 6), "(1*1)")]).unwrap();
        assert_eq!(out, "é = (1*1);\nxé;\n");
    }
}
