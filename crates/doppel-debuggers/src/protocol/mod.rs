//! Protocol clients and parsers: one file per protocol.

pub mod cdp;
pub mod dap;
pub mod gdbmi;
pub mod rdp;
