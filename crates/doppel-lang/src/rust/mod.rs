//! Rust, for debug-information validation (PLDI 2020, section 6.1): the
//! lines where a statement can be inserted (`statements`, tree-sitter-rust),
//! which is where line augmentation puts the barrier call, and the syntax
//! node a line starts (for the dedup signature).

pub mod statements;
