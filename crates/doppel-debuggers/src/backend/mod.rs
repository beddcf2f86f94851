//! Backends: one file per debugger.

pub mod gdb;
pub mod lldb;
