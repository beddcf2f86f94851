//! C: syntax (tree-sitter-c) and compilation (gcc/clang into a build cache).

mod compile;
mod syntax;

pub use compile::{BuildCache, BuildError, BuildRecipe, discover};
pub use syntax::CSyntax;
