//! doppel's language front ends.
//!
//! - [`c`]: C subjects: the AST node type of a line (for DBDB's equivalence
//!   classes), build recipes and a content-addressed build cache.
//!
//! JavaScript (oxc) joins here as `js` with the JavaScript debuggers.

pub mod c;
pub mod js;
