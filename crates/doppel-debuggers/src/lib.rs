//! Debugger drivers: one [`Debugger`] trait, protocol clients, and backends.
//!
//! Layout (one file per protocol and per backend; a new backend is one file in
//! `backend/` plus one line in [`registry`]):
//! - `protocol/gdbmi.rs`: GDB/MI output parser (records, tuples, lists, C strings);
//! - `protocol/dap.rs`: Debug Adapter Protocol client (framing, seq matching, events);
//! - `protocol/cdp.rs`: Chrome DevTools Protocol client (websocket, id matching,
//!   events per target session);
//! - `backend/gdb.rs`: GDB over MI 3;
//! - `backend/lldb.rs`: LLDB over DAP (`lldb-dap-N` / `lldb-vscode-N`);
//! - `backend/v8.rs`: what the V8 backends share (pause state, values, script URLs);
//! - `backend/node.rs`: V8 in Node.js over CDP (`node --inspect-brk`);
//! - `protocol/rdp.rs`: Firefox Remote Debugging Protocol client (length-prefixed
//!   JSON, replies matched FIFO per actor, events by type);
//! - `backend/chromium.rs`: V8 in headless Chromium over CDP (one browser, a page per run);
//! - `backend/firefox.rs`: SpiderMonkey in headless Firefox ESR over RDP (one browser,
//!   a navigation per run, the DevTools front end's breakpoint choice emulated).
//!
//!
//! Shared debugger knowledge above the protocols, used by every technique:
//! - `normalize.rs`: switchable rules that remove differences of rendering;
//! - `compare.rs`: output comparison and divergence types (DBDB section 3.4);
//! - `control.rs`: the control run (a program with no breakpoint) and its comparison;
//! - `repro/`: stand-alone reproducers in each debugger's own command
//!   language (GDB and LLDB command files, a CDP script for node).
//!
//! Protocol details (MI records, DAP `seq`, thread ids, 0/1-based columns)
//! never leave their backend: the trait speaks only the core model.

#![deny(missing_docs)]

use async_trait::async_trait;
use doppel_core::process::{Limits, Sandbox};
use doppel_core::{ExecAction, Location, Output, RawMessage, Subject, ToolInfo};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub mod backend;
pub mod compare;
pub mod control;
pub mod normalize;
pub mod protocol;
pub mod record;
pub mod registry;
pub mod repro;

/// What a backend can and cannot do; shown by `doppel backends` and in reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Breakpoint locations carry columns.
    pub columns: bool,
    /// One debugger process serves many runs (reset between runs).
    pub warm_reuse: bool,
    /// The backend can tell arguments from locals.
    pub argument_flags: bool,
    /// Free-text limitations, one sentence each.
    pub notes: Vec<String>,
}

/// Settings every backend takes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DebuggerConfig {
    /// Longest wait for one answer of the debugger (one action), after which
    /// the action's output is `Failed { kind: Timeout }` and the debugger is killed.
    pub action_timeout: Duration,
    /// Reuse one debugger process across runs (`reset`) instead of a fresh one per run.
    pub warm: bool,
    /// Limits applied to the program under test (not to the debugger).
    pub limits: Limits,
    /// Confinement of the debugger process (and so of its inferior).
    pub sandbox: Sandbox,
    /// Expand aggregates (structs, arrays) to this depth when reading variables.
    pub value_depth: u32,
    /// Override the executable (for example `/usr/bin/lldb-dap-22`).
    pub executable: Option<String>,
    /// Load separate debug info of system libraries (libc6-dbg's files under
    /// `/usr/lib/debug`). Off by default: the program under test is the
    /// subject, stepping into an optimized C library only adds divergences of
    /// its own, and GDB re-reads that debug info on every run (~170 ms of CPU
    /// per run with libc6-dbg). Both native backends honour it alike.
    #[serde(default)]
    pub system_debug_info: bool,
    /// Absorb LLDB's re-stop at a breakpoint a step ended on (LLDB 20 and
    /// later; honoured by the `lldb` backend, ignored by the others, whose
    /// debuggers report the breakpoint at the end of the step or never stop
    /// twice there). LLDB counts a breakpoint as hit only when it executes
    /// the breakpoint's trap: a step that ends on the address of an enabled
    /// breakpoint is reported as a step (reason `step`), and the next
    /// continue or step then stops at once at the same address, now
    /// reporting the breakpoint, without moving (llvm/llvm-project PRs
    /// #96260 and #126988). With this option that action is issued once
    /// more and its second answer is returned, as if the first stop had
    /// been the breakpoint's; the raw transcript keeps both stops and says
    /// so. Off by default: differential testing reports the behaviour as
    /// the policy `breakpoint_hit_after_step_onto_it`; metamorphic testing
    /// (one debugger against itself, ISSTA'19 section 3) turns it on for
    /// every run it drives. lldb-dap 22 has no setting for this (its
    /// `settings list` offers none).
    #[serde(default)]
    pub absorb_breakpoint_restop: bool,
}

impl Default for DebuggerConfig {
    fn default() -> Self {
        Self {
            action_timeout: Duration::from_secs(10),
            warm: true,
            limits: Limits::default(),
            sandbox: Sandbox::default(),
            value_depth: 2,
            executable: None,
            system_debug_info: false,
            absorb_breakpoint_restop: false,
        }
    }
}

/// Errors that stop a backend from being created at all (not failures of a
/// run, which are [`Output::Failed`]).
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The debugger's executable was not found; `hint` says how to install it.
    #[error("{name} is not installed: {hint}")]
    NotInstalled {
        /// The backend's name (`gdb`, `firefox`).
        name: String,
        /// How to install it (`apt-get install gdb`).
        hint: String,
    },
    /// No backend of that name is registered.
    #[error("unknown debugger '{0}' (known: {1})")]
    Unknown(String, String),
    /// Any other reason the backend cannot be created (its version cannot be
    /// probed, its configuration is unusable), with the cause.
    #[error("{0}")]
    Other(String),
}

/// The answer to [`Debugger::evaluate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "evaluation", rename_all = "snake_case")]
pub enum Evaluation {
    /// The debugger's rendering (`42`, `-5 '\373'`, `<optimized out>`,
    /// `{1, 2, 3}`; aggregates with children where the protocol gives them).
    Value(doppel_core::Value),
    /// The debugger answered with an error (`No symbol "x" in current context.`).
    Refused(String),
    /// The debugger failed (crash, timeout, protocol error): an
    /// [`Output::Failed`].
    Failed(Output),
    /// The backend cannot evaluate expressions.
    Unsupported,
}

/// One debugger under test, driven through its machine interface.
///
/// A run is `load`, any number of `set_breakpoint`/`remove_breakpoint`,
/// `start`, then `exec` while the output is [`Output::Paused`], then `reset`.
/// Every method returns within [`DebuggerConfig::action_timeout`] (plus the
/// time to kill the debugger); a crash, hang or protocol error is an
/// [`Output::Failed`], after which the backend restarts its process on the
/// next `load`.
#[async_trait]
pub trait Debugger: Send {
    /// Name, version, protocol and executable.
    fn info(&self) -> &ToolInfo;

    /// What this backend supports.
    fn capabilities(&self) -> Capabilities;

    /// Prepares a run of `subject`: starts the debugger process if none is
    /// warm and loads the program, not yet running. `Failed` on error.
    async fn load(&mut self, subject: &Subject) -> Output;

    /// A hint that a later `load` (usually the one after the next) will be
    /// of `subject`: a warm backend may launch it in the background while
    /// the current run goes on, so that `load` only adopts it. A wrong hint
    /// costs background work, never a result: a `load` of another subject
    /// discards what was prepared. The default ignores the hint.
    fn preload(&mut self, subject: &Subject) {
        let _ = subject;
    }

    /// Sets a breakpoint at `at` (file and line; column if the backend
    /// supports columns). Answers `BreakpointSet` with the resolved location,
    /// or `resolved: None` with the debugger's message when it rejected it.
    async fn set_breakpoint(&mut self, at: &Location) -> Output;

    /// Removes the breakpoint that was requested at `at`. Answers `BreakpointRemoved`.
    async fn remove_breakpoint(&mut self, at: &Location) -> Output;

    /// Starts the program. Answers `Paused`, `Finished` or `Failed`.
    async fn start(&mut self) -> Output;

    /// Resumes or steps the paused program. Answers `Paused`, `Finished` or `Failed`.
    async fn exec(&mut self, action: ExecAction) -> Output;

    /// Ends the current run (kills the inferior) and keeps the debugger warm
    /// if the backend supports it; otherwise shuts the debugger down.
    async fn reset(&mut self);

    /// Shuts the debugger process down.
    async fn shutdown(&mut self);

    /// The protocol messages exchanged since the last call, oldest first.
    fn take_transcript(&mut self) -> Vec<RawMessage>;

    /// Prints `expression` (a variable name) in the top frame of the paused
    /// program, as the debugger's own print command does: the "print v" of
    /// PLDI'20 Algorithm 1. A variable list can miss what print shows: GDB/MI's
    /// `-stack-list-variables` leaves out locals whose DWARF holds a constant
    /// value (`DW_AT_const_value`) or no location at all, `info locals` and
    /// `print` do not. `$pc` is the top frame's program counter in every
    /// native backend (a text holding `0x...`). Backends that cannot evaluate answer
    /// [`Evaluation::Unsupported`] (the default).
    async fn evaluate(&mut self, expression: &str) -> Evaluation {
        let _ = expression;
        Evaluation::Unsupported
    }

    /// The inferior's stdout and stderr since `load`, as far as captured.
    fn program_output(&self) -> String {
        String::new()
    }
}

/// [`Debugger::load`], confirmed: a load that fails is followed by
/// [`Debugger::shutdown`] and one more load, whose output is the answer. A
/// debugger's cold start on a loaded machine (Chromium after a cold page
/// cache) can miss the action timeout once; a debugger that cannot load this
/// program fails again. Both attempts stay in the transcript. Every
/// technique loads through this, so a transient launch failure is never
/// reported as the debugger's.
pub async fn load_confirmed(debugger: &mut (dyn Debugger + '_), subject: &Subject) -> Output {
    let first = debugger.load(subject).await;
    let Output::Failed { kind, detail } = &first else {
        return first;
    };
    tracing::warn!(
        "{} could not load {} ({kind:?}: {detail}); loading once more",
        debugger.info().name,
        subject.name
    );
    debugger.shutdown().await;
    debugger.load(subject).await
}
