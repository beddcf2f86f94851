//! C: syntax (tree-sitter-c), compilation (gcc/clang into a build cache),
//! line coverage of a run (gcov), the ISSTA'19 program transformations and
//! the definite assignment of locals they and the relation need (`assignment`);
//! for debug-information validation (PLDI'20): the scope oracle from clang's
//! JSON AST (`clang_scope`, with `ts_scope` from tree-sitter-c as its
//! fallback), statement-start lines (`statements`) and the
//! `is_stmt` lines of a binary's line table (`linetable`); for regression
//! root-causing: wasm32-wasi and native reference builds (`wasm`), concrete
//! runs with stdin (`run`, `wasi_node`).

pub mod assignment;
pub mod clang_scope;
pub mod codeflaws;
mod compile;
pub mod coverage;
mod dwarf_file;
pub mod linetable;
pub mod location;
pub mod run;
pub mod statements;
mod syntax;
pub mod test_coverage;
pub mod transform;
pub mod ts_scope;
pub mod wasi_node;
pub mod wasm;
pub mod writes;

pub use compile::{BuildCache, BuildError, BuildRecipe, cache_root, discover, discover_where};
pub use syntax::CSyntax;
