//! DAP
