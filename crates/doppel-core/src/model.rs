//! The debugger model shared by every technique.
//!
//! Source: DBDB (Lehmann & Pradel, FSE 2018), section 3.1 and Figure 4 (states,
//! actions, outputs), and the trace grammar of Tolksdorf et al. (ISSTA 2019),
//! Figure 3. A debugger is *not running*, *running* or *paused*; doppel drives it
//! with [`Action`]s and records what it answers as [`Output`]s. Both go into a
//! [`Trace`] as [`Event`]s, which is plain serde data (see `docs/trace-format.md`).
//!
//! Conventions that hold everywhere inside doppel:
//! - lines and columns are **1-based**; backends convert from their protocol;
//! - a file is named by the path the subject was compiled from, relative to the
//!   subject's directory where possible (`prog.c`), absolute otherwise;
//! - a failure of a tool under test is an [`Output::Failed`], never an error of doppel.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A source position. `line` is 1-based; `column` is 1-based when the debugger
/// reports one (GDB/MI does not, DAP and CDP do).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Location {
    /// Source file, relative to the subject's directory where possible.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, if the debugger reports columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

impl Location {
    /// A location without a column.
    pub fn line(file: impl Into<String>, line: u32) -> Self {
        Self {
            file: file.into(),
            line,
            column: None,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(c) => write!(f, "{}:{}:{}", self.file, self.line, c),
            None => write!(f, "{}:{}", self.file, self.line),
        }
    }
}

/// An execution action: what a user does to a paused debugger (DBDB Figure 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecAction {
    /// Continue until the next breakpoint or the end of the program.
    Resume,
    /// Step into the next call, or to the next line.
    StepIn,
    /// Step to the next line of the current function, over calls.
    StepOver,
    /// Run until the current function returns to its caller.
    StepOut,
}

impl ExecAction {
    /// All execution actions, in a fixed order (used for weighted choice).
    pub const ALL: [ExecAction; 4] = [
        ExecAction::Resume,
        ExecAction::StepIn,
        ExecAction::StepOver,
        ExecAction::StepOut,
    ];

    /// The field's name for the action (`resume`, `step in`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ExecAction::Resume => "resume",
            ExecAction::StepIn => "step in",
            ExecAction::StepOver => "step over",
            ExecAction::StepOut => "step out",
        }
    }
}

/// An action doppel issues to a debugger.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Set a breakpoint at a requested location (before start or while paused).
    SetBreakpoint {
        /// The requested location (file and 1-based line), before any sliding.
        at: Location,
    },
    /// Remove the breakpoint that was requested at `at`.
    RemoveBreakpoint {
        /// The location the breakpoint was requested at (not where it resolved).
        at: Location,
    },
    /// Start the program under the debugger.
    Start,
    /// Resume or step the paused program.
    Exec {
        /// Which resume or step.
        exec: ExecAction,
    },
}

impl Action {
    /// The kind of the action, the first component of DBDB's class key.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::SetBreakpoint { .. } => ActionKind::SetBreakpoint,
            Action::RemoveBreakpoint { .. } => ActionKind::RemoveBreakpoint,
            Action::Start => ActionKind::Start,
            Action::Exec { exec } => match exec {
                ExecAction::Resume => ActionKind::Resume,
                ExecAction::StepIn => ActionKind::StepIn,
                ExecAction::StepOver => ActionKind::StepOver,
                ExecAction::StepOut => ActionKind::StepOut,
            },
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::SetBreakpoint { at } => write!(f, "set breakpoint @ {at}"),
            Action::RemoveBreakpoint { at } => write!(f, "remove breakpoint @ {at}"),
            Action::Start => write!(f, "start"),
            Action::Exec { exec } => write!(f, "{}", exec.name()),
        }
    }
}

/// The kind of an action, without its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// [`Action::SetBreakpoint`].
    SetBreakpoint,
    /// [`Action::RemoveBreakpoint`].
    RemoveBreakpoint,
    /// [`Action::Start`].
    Start,
    /// [`ExecAction::Resume`] (continue to the next breakpoint or the end).
    Resume,
    /// [`ExecAction::StepIn`].
    StepIn,
    /// [`ExecAction::StepOver`].
    StepOver,
    /// [`ExecAction::StepOut`].
    StepOut,
}

impl ActionKind {
    /// Stable snake_case name, as stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::SetBreakpoint => "set_breakpoint",
            ActionKind::RemoveBreakpoint => "remove_breakpoint",
            ActionKind::Start => "start",
            ActionKind::Resume => "resume",
            ActionKind::StepIn => "step_in",
            ActionKind::StepOver => "step_over",
            ActionKind::StepOut => "step_out",
        }
    }

    /// Parses [`ActionKind::as_str`] back.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "set_breakpoint" => ActionKind::SetBreakpoint,
            "remove_breakpoint" => ActionKind::RemoveBreakpoint,
            "start" => ActionKind::Start,
            "resume" => ActionKind::Resume,
            "step_in" => ActionKind::StepIn,
            "step_over" => ActionKind::StepOver,
            "step_out" => ActionKind::StepOut,
            _ => return None,
        })
    }
}

/// A value as a debugger renders it.
///
/// `text` is the debugger's own rendering (GDB's `value`, DAP's `value`).
/// `children` holds the members of an aggregate (struct fields, array
/// elements) when the backend expanded it, named as the debugger names them
/// (`x`, `[0]`); backends expand to a bounded depth and say so in their docs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Value {
    /// The debugger's rendering of the value, verbatim (`42`, `0x7ffc... "abc"`,
    /// `{x = 1, y = 2}`); compared after normalization (`doppel-debuggers`'
    /// `normalize.rs`).
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// Members of an aggregate, when the backend expanded it (empty for scalars
    /// and for aggregates left collapsed).
    pub children: Vec<Variable>,
}

impl Value {
    /// A scalar value.
    pub fn scalar(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            children: Vec::new(),
        }
    }
}

/// How a variable is bound in its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum VariableKind {
    /// A formal parameter of the frame's function.
    Argument,
    /// A local variable (including block-scoped and static locals).
    #[default]
    Local,
    /// A global or file-static variable.
    Global,
    /// The debugger did not say.
    Unknown,
}

/// A variable visible in a frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variable {
    /// The name as the debugger shows it (`i`, `p`; `x`, `[0]` for members).
    pub name: String,
    /// The type as the debugger prints it (`int`, `struct point *`), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// Its value in the paused state.
    pub value: Value,
    #[serde(default)]
    /// How it is bound (argument, local, global); [`VariableKind::Local`] for
    /// records written before the field existed.
    pub kind: VariableKind,
}

/// One frame of the call stack, innermost first in [`ProgramState::call_stack`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// Function name as the debugger shows it (`main`, `square`).
    pub function: String,
    /// Source location of the frame, if it has debug information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
}

/// Why the debuggee paused, as far as the debugger says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseReason {
    /// A breakpoint was hit.
    Breakpoint,
    /// A step (in, over or out) completed.
    Step,
    /// The program paused at its entry (a stop-on-entry launch).
    Entry,
    /// A signal or exception stopped the program (`SIGSEGV`, an uncaught
    /// JavaScript exception).
    Signal,
    /// Any other reason, or the debugger gave none.
    Other,
}

/// The state of a paused program: pause location, call stack and the
/// variables of the top frame (DBDB's `(line, callStack, vars)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramState {
    /// Where execution paused (top frame).
    pub location: Location,
    /// Why it paused, as the debugger reported it.
    pub reason: PauseReason,
    /// Innermost frame first.
    pub call_stack: Vec<Frame>,
    /// Arguments and locals of the top frame, in the debugger's order.
    pub variables: Vec<Variable>,
    /// A signal that caused the pause (`SIGSEGV`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The value the function just stepped out of returned, when the
    /// debugger reports it (GDB/MI: `return-value` of a `function-finished`
    /// stop; lldb-dap 22: the `(Return Value)` entry of the locals after a
    /// step out). Its `name` is `(return)`; `type_name` is known only where
    /// the debugger gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_value: Option<Variable>,
}

/// How a tool under test failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The debugger process died.
    Crash,
    /// The debugger did not answer within the timeout.
    Timeout,
    /// The debugger sent something doppel cannot read, or an error reply.
    Protocol,
    /// The debugger could not be started or could not load the program.
    Launch,
}

/// What a debugger answered to an action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "output", rename_all = "snake_case")]
pub enum Output {
    /// Answer to [`Action::SetBreakpoint`]. `resolved` is where the debugger
    /// actually put it (after breakpoint sliding); `None` means the debugger
    /// rejected it or left it pending, with its reason in `message`.
    BreakpointSet {
        /// The location the breakpoint was requested at.
        requested: Location,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// Where the debugger put it (after sliding to a line with code).
        resolved: Option<Location>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// The debugger's reason when it rejected or deferred the breakpoint.
        message: Option<String>,
    },
    /// Answer to [`Action::RemoveBreakpoint`].
    BreakpointRemoved {
        /// Whether the debugger removed it.
        ok: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// The debugger's message when it did not.
        message: Option<String>,
    },
    /// The program paused.
    Paused(ProgramState),
    /// The program ended. `exit_code` for a normal exit, `signal` when it was killed.
    Finished {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// The exit status of a normal exit.
        exit_code: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// The signal that ended the program (`SIGSEGV`, `SIGABRT`), by name.
        signal: Option<String>,
    },
    /// The debugger failed (crash, hang, protocol error, launch failure).
    Failed {
        /// What failed (crash, hang, protocol error, launch failure).
        kind: FailureKind,
        /// The cause, for people (the debugger's error message, the signal).
        detail: String,
    },
}

impl Output {
    /// A failure output.
    pub fn failed(kind: FailureKind, detail: impl Into<String>) -> Self {
        Output::Failed {
            kind,
            detail: detail.into(),
        }
    }

    /// The paused state, if this output is a pause.
    pub fn paused(&self) -> Option<&ProgramState> {
        match self {
            Output::Paused(s) => Some(s),
            _ => None,
        }
    }
}

/// One raw protocol message, kept for reproduction and for `doppel show`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawMessage {
    /// `"->"` for what doppel sent, `"<-"` for what the debugger sent.
    pub dir: String,
    /// The message as text (an MI line, a DAP JSON body).
    pub text: String,
}

impl RawMessage {
    /// A message doppel sent (`dir` `->`).
    pub fn sent(text: impl Into<String>) -> Self {
        Self {
            dir: "->".into(),
            text: text.into(),
        }
    }
    /// A message the debugger sent (`dir` `<-`).
    pub fn received(text: impl Into<String>) -> Self {
        Self {
            dir: "<-".into(),
            text: text.into(),
        }
    }
}

/// What one event of a trace records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// An action doppel issued.
    Action(Action),
    /// The debugger's answer to the action before it.
    Output(Output),
    /// A divergence that a known, intended policy explains and that the run
    /// went on past (differential testing with `continue_past_policies`,
    /// issue 17 item 1): the finding the run would have ended with, its class
    /// key naming the policy. Recorded in every trace, after the outputs of
    /// the action it follows.
    PolicyNote(Finding),
    /// An action issued to this debugger alone to bring it back to the
    /// others' state after a policy divergence (differential testing with
    /// `continue_past_policies`, issue 17 item 1: one more step in a debugger
    /// that stopped back on the call line, `return_lands_mid_line`). Recorded
    /// only in the realigned debugger's trace, after the outputs of the
    /// action it follows and before the policy note; its output follows it.
    /// It is not one of [`Trace::actions`]: the next action of the run has
    /// the same index in every trace.
    Realignment(Action),
    /// A divergence that no policy explains and that the run went on past
    /// (differential testing with `findings_per_run` above 1, issue 17 item
    /// 1: every debugger still in one state, or brought back to one by a
    /// realignment). Recorded in every trace after the outputs (and any
    /// realignment) of the action it follows. `repeat`: the run had already
    /// noted this difference (the same class, the same variables differing,
    /// or the same pause places or stacks); only the first of each is a
    /// finding of its own
    /// (`doppel_differential::going_on::finding_records`).
    FindingNote {
        /// The finding, as the run would have ended with it.
        finding: Finding,
        /// Whether it repeats a difference noted before in the run.
        repeat: bool,
    },
}

/// One entry of a [`Trace`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Milliseconds since the start of the run.
    pub t_ms: f64,
    #[serde(flatten)]
    /// The action or output (serialized flat, tagged by `event`).
    pub kind: EventKind,
    /// The protocol messages exchanged for this event (may be empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw: Vec<RawMessage>,
}

/// Name, version and protocol of a tool under test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// Short name used on the command line (`gdb`, `lldb`).
    pub name: String,
    /// The version line the tool printed (`GNU gdb (Debian 13.1-3) 13.1`).
    pub version: String,
    /// The protocol doppel speaks with it (`GDB/MI 3`, `DAP`).
    pub protocol: String,
    /// The executable that was run.
    pub executable: String,
}

/// The trace of one debugger in one run: its actions and outputs in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The debugger that produced the trace.
    pub debugger: ToolInfo,
    /// Actions and outputs in the order they happened (an action, then its
    /// output).
    pub events: Vec<Event>,
}

impl Trace {
    /// The outputs of the trace, in order.
    pub fn outputs(&self) -> impl Iterator<Item = &Output> {
        self.events.iter().filter_map(|e| match &e.kind {
            EventKind::Output(o) => Some(o),
            _ => None,
        })
    }

    /// The actions of the trace, in order.
    pub fn actions(&self) -> impl Iterator<Item = &Action> {
        self.events.iter().filter_map(|e| match &e.kind {
            EventKind::Action(a) => Some(a),
            _ => None,
        })
    }

    /// The realignments of the trace ([`EventKind::Realignment`]): per
    /// realignment, the index (as of [`Trace::actions`]) of the action it
    /// followed and the action issued.
    pub fn realignments(&self) -> Vec<(usize, &Action)> {
        let mut index = None::<usize>;
        let mut out = Vec::new();
        for e in &self.events {
            match &e.kind {
                EventKind::Action(_) => index = Some(index.map_or(0, |i| i + 1)),
                EventKind::Realignment(a) => {
                    if let Some(i) = index {
                        out.push((i, a));
                    }
                }
                EventKind::Output(_) | EventKind::PolicyNote(_) | EventKind::FindingNote { .. } => {}
            }
        }
        out
    }

    /// The policy notes of the trace (divergences a known policy explains
    /// that the run went on past), in order.
    pub fn policy_notes(&self) -> impl Iterator<Item = &Finding> {
        self.events.iter().filter_map(|e| match &e.kind {
            EventKind::PolicyNote(f) => Some(f),
            _ => None,
        })
    }

    /// Every finding the run went on past ([`EventKind::FindingNote`]),
    /// with whether it repeats one noted before, in order.
    pub fn findings_gone_past(&self) -> impl Iterator<Item = (&Finding, bool)> {
        self.events.iter().filter_map(|e| match &e.kind {
            EventKind::FindingNote { finding, repeat } => Some((finding, *repeat)),
            _ => None,
        })
    }

    /// The findings the run went on past that were new to it (the first
    /// of each difference; [`EventKind::FindingNote`] without `repeat`), in order.
    pub fn finding_notes(&self) -> impl Iterator<Item = &Finding> {
        self.findings_gone_past().filter(|(_, repeat)| !repeat).map(|(f, _)| f)
    }
}

/// The type of a divergence (DBDB section 3.4, plus tool failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// Breakpoints set at different locations (Algorithm 1, line 8).
    BreakpointLocation,
    /// Breakpoints not removed consistently (line 11).
    BreakpointRemoval,
    /// One debugger finished the program and another did not (line 18).
    Termination,
    /// Paused at different locations (line 19).
    PauseLocation,
    /// Different function names on the call stack (line 19).
    CallStack,
    /// Different variables, types or values in the top frame (line 19).
    Variables,
    /// A debugger crashed, hung or broke the protocol.
    ToolFailure,
}

impl DivergenceKind {
    /// Stable snake_case name, as stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::BreakpointLocation => "breakpoint_location",
            DivergenceKind::BreakpointRemoval => "breakpoint_removal",
            DivergenceKind::Termination => "termination",
            DivergenceKind::PauseLocation => "pause_location",
            DivergenceKind::CallStack => "call_stack",
            DivergenceKind::Variables => "variables",
            DivergenceKind::ToolFailure => "tool_failure",
        }
    }

    /// Parses [`DivergenceKind::as_str`] back.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "breakpoint_location" => DivergenceKind::BreakpointLocation,
            "breakpoint_removal" => DivergenceKind::BreakpointRemoval,
            "termination" => DivergenceKind::Termination,
            "pause_location" => DivergenceKind::PauseLocation,
            "call_stack" => DivergenceKind::CallStack,
            "variables" => DivergenceKind::Variables,
            "tool_failure" => DivergenceKind::ToolFailure,
            _ => return None,
        })
    }
}

/// One named part of a [`ClassKey`]: `("divergence", "pause_location")`.
///
/// `prefix` decides how the part reads in the key's `Display` form: without
/// one the value stands alone (`pause_location`), with one it reads
/// `prefix:value` (`policy:slide_vs_reject`, `meta:insert_no_op`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClassPart {
    /// The part's name, as the technique's [`ClassPartSpec`] names it.
    pub name: String,
    /// The part's value (no `|`: it separates parts in the `Display` form).
    pub value: String,
    /// Label written before the value in the `Display` form, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}

/// How a technique's class keys are laid out: one entry per part, in
/// `Display` order (see [`ClassKey::parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassPartSpec {
    /// The part's name.
    pub name: &'static str,
    /// Its `Display` label (`Some("policy")` reads `policy:value`).
    pub prefix: Option<&'static str>,
    /// Whether keys may lack the part (only prefixed parts may be optional).
    pub optional: bool,
    /// Column header in `doppel classes` tables.
    pub header: &'static str,
}

/// An equivalence class of findings: the technique that made the finding
/// (its tag, [`crate::technique::Technique::tag`]) and the technique's
/// ordered, named parts.
///
/// Differential testing (DBDB Definition 4): `divergence`, `last_action`,
/// `node` (the AST node type of the line where the last action was issued)
/// and `policy` (an intended policy difference a normalization rule
/// recognised; it stays visible, in its own class). Metamorphic testing
/// (ISSTA'19) puts its transformation chain first (`meta:`). Debug-info
/// validation (PLDI'20) keys by its dedup signature (`debuginfo:`), the
/// check's finding, how the debugger reached the line and the AST node.
///
/// `Display` joins the parts with `|`, prefixed parts as `prefix:value`
/// (`meta:insert_no_op+add_breakpoint|pause_location|step_over|for_statement`);
/// it is what the store groups classes by, so classes of different
/// techniques must not share a form (the prefixes keep them apart).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClassKey {
    /// The technique's tag (`differential`, `metamorphic`, `debuginfo`).
    pub technique: String,
    /// The parts in `Display` order.
    pub parts: Vec<ClassPart>,
}

impl fmt::Display for ClassKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str("|")?;
            }
            if let Some(prefix) = &p.prefix {
                write!(f, "{prefix}:")?;
            }
            f.write_str(&p.value)?;
        }
        Ok(())
    }
}

impl ClassKey {
    /// A key of `technique` without parts yet.
    pub fn new(technique: impl Into<String>) -> Self {
        Self {
            technique: technique.into(),
            parts: Vec::new(),
        }
    }

    /// Appends a part that reads as its bare value.
    pub fn with(mut self, name: &str, value: impl Into<String>) -> Self {
        self.parts.push(ClassPart {
            name: name.to_string(),
            value: value.into(),
            prefix: None,
        });
        self
    }

    /// Appends a part that reads `prefix:value`.
    pub fn with_prefixed(mut self, name: &str, prefix: &str, value: impl Into<String>) -> Self {
        self.parts.push(ClassPart {
            name: name.to_string(),
            value: value.into(),
            prefix: Some(prefix.to_string()),
        });
        self
    }

    /// The value of the part named `name`.
    pub fn part(&self, name: &str) -> Option<&str> {
        self.parts.iter().find(|p| p.name == name).map(|p| p.value.as_str())
    }

    /// Replaces the value of the part named `name`; false if there is none.
    pub fn set_part(&mut self, name: &str, value: impl Into<String>) -> bool {
        match self.parts.iter_mut().find(|p| p.name == name) {
            Some(p) => {
                p.value = value.into();
                true
            }
            None => false,
        }
    }

    /// Parses the `Display` form back, given the technique's layout:
    /// segments split at `|` are matched to `spec` in order; an optional
    /// prefixed part is taken when its segment starts with `prefix:`.
    /// `None` when a required part is missing or segments are left over.
    pub fn parse(technique: &str, s: &str, spec: &[ClassPartSpec]) -> Option<Self> {
        let segments: Vec<&str> = s.split('|').collect();
        let mut i = 0;
        let mut key = ClassKey::new(technique);
        for p in spec {
            let seg = segments.get(i).copied();
            match (p.prefix, seg) {
                (Some(prefix), Some(seg)) => match seg.strip_prefix(prefix).and_then(|r| r.strip_prefix(':')) {
                    Some(v) => {
                        key = key.with_prefixed(p.name, prefix, v);
                        i += 1;
                    }
                    None if p.optional => {}
                    None => return None,
                },
                (None, Some(seg)) => {
                    key = key.with(p.name, seg);
                    i += 1;
                }
                (_, None) if p.optional => {}
                (_, None) => return None,
            }
        }
        (i == segments.len()).then_some(key)
    }
}

/// A finding of a run: its class, where, and what, for people. Debugger
/// techniques say after which action of the trace it showed
/// (`action_index`, `last_action`); a technique without actions (debug-info
/// validation checks a pair at a breakpoint) leaves both out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The class: a technique tag plus named parts (DBDB section 4.3 for
    /// debuggers: divergence, last action, AST node).
    pub class: ClassKey,
    /// Index (0-based) of the action after which the debuggers diverged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_index: Option<usize>,
    /// The action after which they diverged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_action: Option<Action>,
    /// The line of the finding (debuggers: where that action was issued, the
    /// pause location before it or the requested breakpoint line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// One sentence per debugger saying what it did, for people.
    pub detail: String,
}

impl Finding {
    /// `3` and `step over` for a finding after action 3, a step over; `?`
    /// for a finding without actions (shown as is by debugger reproducers,
    /// which only see debugger findings).
    pub fn action_parts(&self) -> (String, String) {
        (
            self.action_index.map(|i| i.to_string()).unwrap_or_else(|| "?".into()),
            self.last_action
                .as_ref()
                .map(|a| a.to_string())
                .unwrap_or_else(|| "?".into()),
        )
    }
}

/// How a program ended in one tool when run with no breakpoint: the
/// control run before a differential run's actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlRun {
    /// The tool's name (`node`, `chromium`, `gdb`).
    pub debugger: String,
    /// How the program ended: `Finished` with its exit status, or the
    /// tool's `Failed`, or the last `Paused` if it never ended.
    pub end: Output,
    /// The program's stdout and stderr as far as the tool captures them
    /// (empty for tools that capture none), capped by the backend.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub program_output: String,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// All debuggers agreed until the program finished.
    ProgramFinished {
        /// Actions issued to each debugger.
        actions: usize,
    },
    /// All debuggers agreed for the maximum number of actions.
    MaxActions {
        /// Actions issued to each debugger (the configured maximum).
        actions: usize,
    },
    /// The debuggers diverged.
    Divergence(Finding),
    /// Every debugger timed out on the same action: the program runs longer
    /// than the action timeout (or never terminates). No divergence is claimed.
    Inconclusive {
        /// Actions issued before the common timeout.
        actions: usize,
        /// Why, for people (which action timed out, after how long).
        reason: String,
    },
    /// The input could not be used (does not compile, no lines); no debugger ran.
    SubjectError {
        /// The cause (the compiler's diagnostics, "no executable lines").
        reason: String,
    },
    /// The control run (the program run once in every tool with no
    /// breakpoint) ended differently in the tools: the program itself
    /// behaves differently there (node 20 lacks an ES2025 built-in that
    /// Chromium has), so the run's actions would say nothing about the
    /// debuggers and none were issued (issue 17, "What must exist" item 2).
    NotComparable {
        /// What differed, for people (exit statuses, output).
        reason: String,
        /// Each tool's control run, in the order of the debuggers.
        controls: Vec<ControlRun>,
    },
    /// A technique that checks properties ran its checks and found nothing
    /// to report (debug-information validation: a session's or a program's
    /// pairs); `checks` counts them.
    Checked {
        /// Checks run (debug-information validation: the (line, variable)
        /// pairs checked in a session, summed over a program's builds).
        checks: usize,
    },
}

impl Verdict {
    /// Stable short name (`program_finished`, `max_actions`, `divergence`,
    /// `inconclusive`, `subject_error`, `checked`, `not_comparable`).
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::ProgramFinished { .. } => "program_finished",
            Verdict::MaxActions { .. } => "max_actions",
            Verdict::Divergence(_) => "divergence",
            Verdict::Inconclusive { .. } => "inconclusive",
            Verdict::SubjectError { .. } => "subject_error",
            Verdict::Checked { .. } => "checked",
            Verdict::NotComparable { .. } => "not_comparable",
        }
    }

    /// The finding, if the run diverged.
    pub fn finding(&self) -> Option<&Finding> {
        match self {
            Verdict::Divergence(f) => Some(f),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: [ClassPartSpec; 4] = [
        ClassPartSpec {
            name: "chain",
            prefix: Some("meta"),
            optional: true,
            header: "transformations",
        },
        ClassPartSpec {
            name: "divergence",
            prefix: None,
            optional: false,
            header: "divergence",
        },
        ClassPartSpec {
            name: "node",
            prefix: None,
            optional: false,
            header: "AST node",
        },
        ClassPartSpec {
            name: "policy",
            prefix: Some("policy"),
            optional: true,
            header: "policy",
        },
    ];

    #[test]
    fn class_key_round_trips_through_its_display_form() {
        let k = ClassKey::new("t")
            .with("divergence", "pause_location")
            .with("node", "for_statement")
            .with_prefixed("policy", "policy", "step_out_lands_mid_line");
        assert_eq!(
            k.to_string(),
            "pause_location|for_statement|policy:step_out_lands_mid_line"
        );
        assert_eq!(ClassKey::parse("t", &k.to_string(), &SPEC), Some(k.clone()));
        let meta = ClassKey::new("t")
            .with_prefixed("chain", "meta", "insert_no_op+add_breakpoint")
            .with("divergence", "pause_location")
            .with("node", "for_statement");
        assert_eq!(
            meta.to_string(),
            "meta:insert_no_op+add_breakpoint|pause_location|for_statement"
        );
        assert_eq!(ClassKey::parse("t", &meta.to_string(), &SPEC), Some(meta.clone()));
        assert_eq!(meta.part("chain"), Some("insert_no_op+add_breakpoint"));
        assert_eq!(meta.part("policy"), None);
        assert_eq!(ClassKey::parse("t", "a|b|c|d", &SPEC), None, "segments left over");
        assert_eq!(ClassKey::parse("t", "a", &SPEC), None, "a required part missing");
        let mut m = meta;
        assert!(m.set_part("node", "if_statement"));
        assert!(!m.set_part("nope", "x"));
        assert_eq!(
            m.to_string(),
            "meta:insert_no_op+add_breakpoint|pause_location|if_statement"
        );
    }

    #[test]
    fn events_serialize_with_a_tag_and_flattened_kind() {
        let e = Event {
            t_ms: 1.5,
            kind: EventKind::Action(Action::Exec {
                exec: ExecAction::StepIn,
            }),
            raw: vec![],
        };
        let j = serde_json::to_value(&e).unwrap();
        assert_eq!(j["event"], "action");
        assert_eq!(j["action"], "exec");
        assert_eq!(j["exec"], "step_in");
        let back: Event = serde_json::from_value(j).unwrap();
        assert_eq!(back, e);
    }
}
