//! JavaScript: syntax (oxc: AST node type per line, syntax errors) and the
//! determinism prelude.

mod prelude;
mod syntax;

pub use prelude::{FIXED_EPOCH_MS, PRELUDE_FILE_NAME, RANDOM_SEED, determinism_prelude};
pub use syntax::{JsSyntax, ROOT, count_lines, syntax_errors};
