//! doppel's core: the debugger model, process handling, the store, and reports.
//!
//! Layering (see ARCHITECTURE.md): this crate is the bottom layer. It knows no
//! protocol, no language and no technique; it holds the plain data that crosses
//! layer boundaries and the services every technique shares.

#![deny(missing_docs)]

pub mod campaign;
pub mod cgroup;
pub mod faults;
pub mod model;
pub mod partition;
pub mod process;
pub mod report;
pub mod rootcause;
pub mod run;
pub mod store;
pub mod subject;
pub mod technique;

pub use model::*;
pub use run::RunRecord;
pub use subject::{Language, Subject};
