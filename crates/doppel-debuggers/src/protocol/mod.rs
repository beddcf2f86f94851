//! Protocol clients and parsers: one file per protocol.

pub mod cdp;
pub mod dap;
pub mod gdbmi;
pub mod rdp;

/// Why an exchange with a debugger through one of the protocol clients
/// failed. Each client names it after its protocol ([`dap::DapError`],
/// [`cdp::CdpError`], [`rdp::RdpError`]); a backend turns it into the run's
/// [`doppel_core::Output::Failed`] (timeout, crash, protocol error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// No matching message before the deadline.
    Timeout(String),
    /// The connection or pipe closed: the debugger exited, crashed or hung up.
    Closed(String),
    /// A message that is not of the protocol (bad frame, invalid JSON, a
    /// shape the protocol does not have).
    Protocol(String),
    /// The debugger answered the request with an error, with its message.
    Failed(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Timeout(s) => write!(f, "timeout: {s}"),
            ClientError::Closed(s) => write!(f, "connection closed: {s}"),
            ClientError::Protocol(s) => write!(f, "protocol error: {s}"),
            ClientError::Failed(s) => write!(f, "request failed: {s}"),
        }
    }
}

impl std::error::Error for ClientError {}
