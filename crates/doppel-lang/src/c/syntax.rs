//! The AST node type of a source line, for DBDB's equivalence classes
//! (Lehmann & Pradel, FSE 2018, section 3.4: "the lowest AST node that
//! includes all tokens in l").
//!
//! Implementation: tree-sitter-c. For line `l`, take the first and the last
//! byte of the line's tokens (comments excluded), and ask for the lowest
//! *named* node covering that byte range. Empty lines, lines holding only a
//! comment and lines inside a block comment have no tokens; they map to the
//! root, `translation_unit` (DBDB uses `Program` for JavaScript).

use tree_sitter::{Node, Parser, Tree};

/// A parsed C source file.
pub struct CSyntax {
    source: String,
    tree: Option<Tree>,
    /// Byte offset where each line starts (index = line - 1).
    line_starts: Vec<usize>,
    /// Per line: byte range of comment text on that line, to exclude.
    comments: Vec<(usize, usize)>,
}

/// The node type used for lines without tokens, and when parsing failed.
pub const ROOT: &str = "translation_unit";

impl CSyntax {
    /// Parses `source`. Never fails: a file tree-sitter cannot parse yields
    /// `translation_unit` for every line (tree-sitter recovers locally, so in
    /// practice only the broken lines get `ERROR` nodes).
    pub fn parse(source: &str) -> Self {
        let mut parser = Parser::new();
        let tree = parser
            .set_language(&tree_sitter_c::LANGUAGE.into())
            .ok()
            .and_then(|_| parser.parse(source, None));
        let mut line_starts = vec![0];
        line_starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
        if source.ends_with('\n') {
            line_starts.pop();
        }
        let mut comments = Vec::new();
        if let Some(t) = &tree {
            collect_comments(t.root_node(), &mut comments);
        }
        Self {
            source: source.to_string(),
            tree,
            line_starts,
            comments,
        }
    }

    /// Number of lines (a final line without newline counts).
    pub fn line_count(&self) -> u32 {
        if self.source.is_empty() {
            0
        } else {
            self.line_starts.len() as u32
        }
    }

    /// Whether the parse contains syntax errors (`ERROR` or missing nodes).
    pub fn has_errors(&self) -> bool {
        self.tree.as_ref().is_some_and(|t| t.root_node().has_error())
    }

    /// The AST node type of 1-based `line` (tree-sitter kind, e.g.
    /// `for_statement`, `expression_statement`, `declaration`);
    /// [`ROOT`] for line 0, lines out of range, and lines without tokens.
    pub fn ast_node_type(&self, line: u32) -> String {
        self.node_for_line(line)
            .map(|n| n.kind().to_string())
            .unwrap_or_else(|| ROOT.to_string())
    }

    fn node_for_line(&self, line: u32) -> Option<Node<'_>> {
        let tree = self.tree.as_ref()?;
        let idx = (line as usize).checked_sub(1)?;
        let start = *self.line_starts.get(idx)?;
        let end = self.line_starts.get(idx + 1).copied().unwrap_or(self.source.len());
        let bytes = self.source.as_bytes();
        // Token bytes of the line: not whitespace, not inside a comment.
        let in_comment = |i: usize| self.comments.iter().any(|&(s, e)| i >= s && i < e);
        let tokens: Vec<usize> = (start..end)
            .filter(|&i| !bytes[i].is_ascii_whitespace() && !in_comment(i))
            .collect();
        let (&first, &last) = (tokens.first()?, tokens.last()?);
        let node = tree.root_node().named_descendant_for_byte_range(first, last + 1)?;
        // tree-sitter may return a node ending exactly at `first` when the
        // range is empty of nodes; fall back to the root in that case.
        if node.start_byte() > first || node.end_byte() < last + 1 {
            return Some(tree.root_node());
        }
        Some(node)
    }
}

fn collect_comments(node: Node<'_>, out: &mut Vec<(usize, usize)>) {
    if node.kind() == "comment" {
        out.push((node.start_byte(), node.end_byte()));
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect_comments(child, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROG: &str = r#"#include <stdio.h>
/* a block
   comment */
int square(int x) {
    return x * x; // trailing comment
}

int main(void) {
    int total = 0;
    for (int i = 0; i < 3; i++) {
        // a comment line
        total += square(i);
    }
    switch (total) {
    case 5:
        total = 1; total = 2;
        break;
    }
done:
    if (total > 1)
        goto done2;
done2:
    return 0;
}
"#;

    fn types() -> Vec<String> {
        let s = CSyntax::parse(PROG);
        (1..=s.line_count()).map(|l| s.ast_node_type(l)).collect()
    }

    #[test]
    fn lines_map_to_the_lowest_covering_named_node() {
        let t = types();
        let at = |l: usize| t[l - 1].as_str();
        assert_eq!(at(1), "preproc_include");
        assert_eq!(at(2), ROOT, "block comment start");
        assert_eq!(at(3), ROOT, "inside a block comment");
        assert_eq!(at(5), "return_statement", "trailing comment does not widen the range");
        assert_eq!(at(6), "compound_statement", "closing brace");
        assert_eq!(at(7), ROOT, "empty line");
        assert_eq!(at(9), "declaration");
        assert_eq!(at(10), "for_statement");
        assert_eq!(at(11), ROOT, "comment line");
        assert_eq!(at(12), "expression_statement");
        assert_eq!(at(15), "case_statement");
        assert_eq!(at(16), "case_statement", "two statements on a line: their parent");
        assert_eq!(at(19), "labeled_statement");
        assert_eq!(at(20), "if_statement");
        assert_eq!(at(21), "goto_statement");
        assert_eq!(at(22), "labeled_statement");
        assert_eq!(at(23), "return_statement");
        assert_eq!(at(24), "compound_statement");
    }

    #[test]
    fn out_of_range_and_empty_sources_are_the_root() {
        let s = CSyntax::parse(PROG);
        assert_eq!(s.ast_node_type(0), ROOT);
        assert_eq!(s.ast_node_type(999), ROOT);
        assert_eq!(CSyntax::parse("").line_count(), 0);
        assert_eq!(CSyntax::parse("int x;").line_count(), 1);
        assert!(!s.has_errors());
        assert!(CSyntax::parse("int main( {").has_errors());
    }
}
