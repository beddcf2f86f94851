//! The program transformations of interactive metamorphic debugger testing
//! (ISSTA'19 section 3.2.2, Table 1) for C programs debugged at `gcc -O0 -g`.
//!
//! One file per kind, all on a tree-sitter-c parse of the program:
//! - [`dead_code`]: insert `if (0) { v = <literal>; }` before a statement;
//! - [`remove_dead_code`]: empty a never-executed block, or remove a
//!   never-called, never-referenced function (needs the initial run's coverage);
//! - [`unused_parameter`]: add `int <fresh>` to a function and pass a constant
//!   at every call;
//! - [`no_op`]: insert `v = v;` before a statement;
//! - [`literal`]: replace an integer literal by `(n-1+1)`, `(n+1-1)`, `(n/1)`
//!   or `(n*1)`, and `true`/`false` by `(v == v)`/`(v != v)`.
//!
//! [`scope`] answers which variables are visible before a statement.
//!
//! A false warning (a transformation that changes what the program does)
//! costs users time, so every kind is conservative: a candidate it cannot
//! prove safe from the syntax alone is not a candidate. Each kind shuffles its
//! candidates with the caller's generator (so a seed determines the result),
//! tries at most [`MAX_ATTEMPTS`] of them, and keeps the first whose result
//! re-parses without `ERROR` or `MISSING` nodes; otherwise it returns a
//! [`Skip`] with the reason.

pub mod dead_code;
pub mod literal;
pub mod no_op;
pub mod remove_dead_code;
pub mod scope;
pub mod unused_parameter;

use crate::edit::{self, LocationMap, Pos, SourceEdit};
use crate::transform::{ExpectedVariable, ProgramTransformation, ProgramTransformationKind, Skip, Transformed};
use rand::seq::SliceRandom;
use tree_sitter::{Node, Parser, Tree};

/// The C transformations, one per [`ProgramTransformationKind`], in
/// [`ProgramTransformationKind::ALL`] order.
pub fn all() -> Vec<Box<dyn ProgramTransformation>> {
    vec![
        Box::new(dead_code::InsertDeadCode),
        Box::new(remove_dead_code::RemoveDeadCode),
        Box::new(unused_parameter::AddUnusedParameter),
        Box::new(no_op::InsertNoOp),
        Box::new(literal::LiteralToExpression),
    ]
}

/// How many candidates a transformation tries before it gives up.
pub const MAX_ATTEMPTS: usize = 20;

/// Parses C source with tree-sitter-c. `None` only if the parser fails
/// outright (it recovers from syntax errors with `ERROR` nodes).
pub(crate) fn parse(src: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_c::LANGUAGE.into()).ok()?;
    parser.parse(src, None)
}

/// Computes something in new numbering from the edits' location map.
pub(crate) type AfterEdit<T> = Box<dyn Fn(&LocationMap) -> T>;

/// One way to transform the program, before it is applied.
pub(crate) struct Attempt {
    pub edits: Vec<SourceEdit>,
    pub description: String,
    /// Where the change is, in new numbering, given the map.
    pub at: AfterEdit<Pos>,
    pub node: String,
    pub expect_variable: Option<AfterEdit<ExpectedVariable>>,
    /// [`Transformed::breakability_may_change`], given the map (`None`: no line).
    pub breakability_may_change: Option<AfterEdit<Vec<u32>>>,
}

/// Shuffles `candidates` with `rng`, builds an [`Attempt`] from each in turn
/// (a builder may decline with `None`), applies it and returns the first
/// result that re-parses cleanly. At most [`MAX_ATTEMPTS`] attempts.
/// Errors: `none_reason` when there is no candidate or every builder declined.
pub(crate) fn try_candidates<C>(
    kind: ProgramTransformationKind,
    src: &str,
    mut candidates: Vec<C>,
    rng: &mut dyn rand::RngCore,
    none_reason: &str,
    mut build: impl FnMut(&C, &mut dyn rand::RngCore) -> Option<Attempt>,
) -> Result<Transformed, Skip> {
    if candidates.is_empty() {
        return Err(Skip::new(kind, none_reason));
    }
    candidates.shuffle(rng);
    let mut tried = 0;
    for c in &candidates {
        if tried == MAX_ATTEMPTS {
            break;
        }
        let Some(a) = build(c, rng) else { continue };
        tried += 1;
        let Ok((text, map)) = edit::apply(src, &a.edits) else {
            continue;
        };
        if parse(&text).is_none_or(|t| t.root_node().has_error()) {
            continue;
        }
        let at = (a.at)(&map);
        let expect_variable = a.expect_variable.as_ref().map(|f| f(&map));
        let breakability_may_change = a.breakability_may_change.as_ref().map_or_else(Vec::new, |f| f(&map));
        return Ok(Transformed {
            kind,
            text,
            map,
            description: a.description,
            at,
            node: a.node,
            expect_variable,
            breakability_may_change,
        });
    }
    if tried == 0 {
        return Err(Skip::new(kind, none_reason));
    }
    Err(Skip::new(
        kind,
        format!(
            "{} candidate(s), none gave a program that parses without errors ({tried} tried)",
            candidates.len()
        ),
    ))
}

/// The source text of `node`.
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    &src[node.byte_range()]
}

/// The 1-based position (character columns) of a byte offset.
pub(crate) fn pos(src: &str, byte: usize) -> Pos {
    edit::pos_of_offset(src, byte)
}

/// Whether the tree has a syntax error; transformations refuse such programs.
pub(crate) fn broken(kind: ProgramTransformationKind, tree: &Tree) -> Result<(), Skip> {
    if tree.root_node().has_error() {
        Err(Skip::new(kind, "the program does not parse without errors"))
    } else {
        Ok(())
    }
}

/// Every node of the tree, in document order.
pub(crate) fn descendants(root: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    'outer: loop {
        out.push(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'outer;
            }
            if !cursor.goto_parent() {
                break 'outer;
            }
        }
    }
    out
}

/// The ancestors of `node`, nearest first.
pub(crate) fn ancestors(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    std::iter::successors(node.parent(), |n| n.parent())
}

/// Every node's parent, from one walk of the tree. tree-sitter's
/// `Node::parent` searches down from the root each time, past every earlier
/// sibling on the way (all earlier top-level items of a large file), so
/// asking it for every statement or literal of a program is quadratic.
pub(crate) struct Parents<'t> {
    map: std::collections::HashMap<usize, Node<'t>>,
}

impl<'t> Parents<'t> {
    /// Walks the tree under `root` once.
    pub(crate) fn new(root: Node<'t>) -> Self {
        let mut map = std::collections::HashMap::new();
        let mut stack = vec![root];
        let mut cursor = root.walk();
        while let Some(n) = stack.pop() {
            for c in n.children(&mut cursor) {
                map.insert(c.id(), n);
                stack.push(c);
            }
        }
        Self { map }
    }

    /// The parent of `node` (`None` for the root).
    pub(crate) fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        self.map.get(&node.id()).copied()
    }

    /// The ancestors of `node`, nearest first (as [`ancestors`]).
    pub(crate) fn ancestors(&self, node: Node<'t>) -> impl Iterator<Item = Node<'t>> + '_ {
        std::iter::successors(self.parent(node), |n| self.parent(*n))
    }
}

/// Whether byte `at` lies on a preprocessor directive's logical line (a line
/// whose first token is `#`, or a backslash continuation of one).
pub(crate) fn on_directive_line(src: &str, at: usize) -> bool {
    let mut line_start = src[..at].rfind('\n').map_or(0, |i| i + 1);
    loop {
        if src[line_start..].trim_start_matches([' ', '\t']).starts_with('#') {
            return true;
        }
        // Go to the previous line while it ends with a backslash.
        if line_start == 0 {
            return false;
        }
        let prev_end = line_start - 1;
        let prev_start = src[..prev_end].rfind('\n').map_or(0, |i| i + 1);
        if !src[prev_start..prev_end].trim_end_matches('\r').ends_with('\\') {
            return false;
        }
        line_start = prev_start;
    }
}

/// Byte ranges where a word is not an identifier: comments, string and
/// character literals, `<header>` names.
fn non_code_ranges(root: Node<'_>) -> Vec<(usize, usize)> {
    descendants(root)
        .into_iter()
        .filter(|n| {
            matches!(
                n.kind(),
                "comment" | "string_literal" | "char_literal" | "system_lib_string" | "concatenated_string"
            )
        })
        .map(|n| (n.start_byte(), n.end_byte()))
        .collect()
}

/// How often each whole word (a maximal run of ASCII letters, digits and
/// `_`) occurs outside comments, strings and character literals (macro
/// bodies included, as raw text): one pass over `src`, so that checking
/// every function's name costs one lookup each, not one scan each.
pub(crate) fn word_counts<'s>(src: &'s str, root: Node<'_>) -> std::collections::HashMap<&'s str, usize> {
    let mut skip = non_code_ranges(root);
    skip.sort_unstable();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = src.as_bytes();
    let mut counts = std::collections::HashMap::new();
    let (mut i, mut r) = (0, 0);
    while i < bytes.len() {
        if !is_word(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_word(bytes[i]) {
            i += 1;
        }
        // Ranges are sorted by start; those ended before this word end
        // before every later word too.
        while r < skip.len() && skip[r].1 <= start {
            r += 1;
        }
        let inside = skip[r..]
            .iter()
            .take_while(|&&(s, _)| s <= start)
            .any(|&(_, e)| start < e);
        if !inside {
            *counts.entry(&src[start..i]).or_insert(0) += 1;
        }
    }
    counts
}

/// A name not occurring anywhere in `src`: `doppel_p1`, `doppel_p2`, ...
pub(crate) fn fresh_name(src: &str, prefix: &str) -> String {
    (1..)
        .map(|i| format!("{prefix}{i}"))
        .find(|n| !src.contains(n.as_str()))
        .expect("some name is fresh")
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;
    use crate::transform::ProgramInput;
    use rand::SeedableRng;

    /// Applies `t` with a fixed seed.
    pub fn run(t: &dyn ProgramTransformation, src: &str, seed: u64) -> Result<Transformed, Skip> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        t.apply(ProgramInput::new(src, None), &mut rng)
    }

    /// Whether `gcc -fsyntax-only` accepts `src` (errors printed on failure).
    pub fn compiles(src: &str) -> bool {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.c");
        std::fs::write(&f, src).unwrap();
        let out = std::process::Command::new("gcc")
            .args(["-fsyntax-only", "-w"])
            .arg(&f)
            .output()
            .expect("gcc runs");
        if !out.status.success() {
            eprintln!("{}\n---\n{}", src, String::from_utf8_lossy(&out.stderr));
        }
        out.status.success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directive_lines_include_continuations() {
        let src = "#define A 1 + \\\n  2\nint x = 3;\n";
        assert!(on_directive_line(src, src.find('1').unwrap()));
        assert!(on_directive_line(src, src.find('2').unwrap()));
        assert!(!on_directive_line(src, src.find('3').unwrap()));
    }

    #[test]
    fn words_outside_comments_and_strings() {
        let src = "int f(int); /* f */ char *s = \"f\"; int g(void) { return f(1) + ff; }\n";
        let tree = parse(src).unwrap();
        let counts = word_counts(src, tree.root_node());
        assert_eq!(counts.get("f"), Some(&2));
        assert_eq!(counts.get("ff"), Some(&1));
        assert_eq!(counts.get("s"), Some(&1), "the `s` of `*s`, not the one in the comment");
        assert_eq!(counts.get("int"), Some(&3));
        let nested = "int x; char *t = \"x\" \"x\"; // x x\nint y = x;\n";
        assert_eq!(
            word_counts(nested, parse(nested).unwrap().root_node()).get("x"),
            Some(&2)
        );
        assert_eq!(fresh_name("int doppel_p1;", "doppel_p"), "doppel_p2");
    }

    #[test]
    fn all_kinds_are_registered_once_in_order() {
        let kinds: Vec<_> = all().iter().map(|t| t.kind()).collect();
        assert_eq!(kinds, ProgramTransformationKind::ALL.to_vec());
    }
}
