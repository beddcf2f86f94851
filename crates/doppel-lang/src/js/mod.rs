//! JavaScript: syntax (oxc: AST node type per line, syntax errors).

mod syntax;

pub use syntax::{JsSyntax, ROOT, count_lines, syntax_errors};
