//! The paused state of the LLDB backend (step 5 of `mod.rs`): stack,
//! scopes, variables and argument names; helpers for re-stops and signals.

use super::*;

impl Lldb {
    pub(super) async fn state(&mut self, reason: PauseReason, signal: Option<String>) -> Result<ProgramState, Fail> {
        let thread = self.thread.unwrap_or(0);
        let st = self
            .request(
                "stackTrace",
                json!({"threadId": thread, "startFrame": 0, "levels": MAX_FRAMES}),
            )
            .await?;
        let frames = st["stackFrames"].as_array().cloned().unwrap_or_default();
        let call_stack: Vec<Frame> = frames
            .iter()
            .take(MAX_FRAMES)
            .map(|f| Frame {
                function: f["name"].as_str().unwrap_or("??").to_string(),
                location: f["line"].as_u64().filter(|l| *l > 0).map(|line| Location {
                    file: self.map_file(f["source"]["path"].as_str(), f["source"]["name"].as_str()),
                    line: line as u32,
                    column: f["column"].as_u64().filter(|c| *c > 0).map(|c| c as u32),
                }),
            })
            .collect();
        let location = call_stack
            .first()
            .and_then(|f| f.location.clone())
            .unwrap_or_else(|| Location::line("??", 0));
        let mut variables = Vec::new();
        self.top_frame = frames.first().and_then(|f| f["id"].as_i64());
        self.top_pc = frames
            .first()
            .and_then(|f| f["instructionPointerReference"].as_str())
            .map(str::to_string);
        self.stack_pcs = frames
            .iter()
            .map(|f| f["instructionPointerReference"].as_str().and_then(address).unwrap_or(0))
            .collect();
        if let Some(frame_id) = self.top_frame {
            let scopes = self.request("scopes", json!({"frameId": frame_id})).await?;
            let locals = scopes["scopes"]
                .as_array()
                .and_then(|s| {
                    s.iter()
                        .find(|x| x["presentationHint"] == "locals" || x["name"] == "Locals")
                })
                .and_then(|s| s["variablesReference"].as_i64());
            if let Some(r) = locals {
                variables = self.variables(r, self.cfg.value_depth).await?;
            }
            let args = self.argument_names(frame_id).await?;
            for v in &mut variables {
                v.kind = if args.contains(&v.name) {
                    VariableKind::Argument
                } else {
                    VariableKind::Local
                };
            }
        }
        Ok(ProgramState {
            location,
            reason,
            call_stack,
            return_value: variables.iter().position(|v| v.name == "(Return Value)").map(|i| {
                let mut r = variables.remove(i);
                r.name = "(return)".into();
                r.kind = VariableKind::Unknown;
                r
            }),
            variables,
            signal,
        })
    }

    pub(super) async fn variables(&mut self, reference: i64, depth: u32) -> Result<Vec<Variable>, Fail> {
        let body = self
            .request("variables", json!({"variablesReference": reference}))
            .await?;
        let mut out = Vec::new();
        for v in body["variables"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .take(MAX_CHILDREN)
        {
            let text = v["value"].as_str().unwrap_or("").to_string();
            let child_ref = v["variablesReference"].as_i64().unwrap_or(0);
            // A string's summary stands for its characters, and a pointer's
            // only child is its pointee (GDB/MI shows neither): expand only
            // aggregates (structs, unions, arrays).
            let is_string = text.contains('"');
            let is_pointer = v["type"]
                .as_str()
                .is_some_and(|t| t.trim_end().ends_with('*') || t.contains("(*)"));
            let children = if child_ref > 0 && depth > 0 && !is_string && !is_pointer {
                Box::pin(self.variables(child_ref, depth - 1)).await?
            } else {
                Vec::new()
            };
            out.push(Variable {
                name: v["name"].as_str().unwrap_or("?").to_string(),
                type_name: v["type"].as_str().map(str::to_string),
                value: Value { text, children },
                kind: VariableKind::Unknown,
            });
        }
        Ok(out)
    }

    /// Names of the frame's arguments, from the REPL command
    /// `frame variable --no-locals` (DAP itself does not flag arguments).
    pub(super) async fn argument_names(&mut self, frame_id: i64) -> Result<HashSet<String>, Fail> {
        let r = self
            .request(
                "evaluate",
                json!({"expression": "`frame variable --no-locals", "context": "repl", "frameId": frame_id}),
            )
            .await;
        let text = match r {
            Ok(b) => b["result"].as_str().unwrap_or("").to_string(),
            Err(Fail::Protocol(_)) => String::new(),
            Err(f) => return Err(f),
        };
        Ok(text
            .lines()
            .filter_map(|l| {
                let rest = l.strip_prefix('(')?;
                let close = rest.find(") ")?;
                let name = rest[close + 2..].split(" = ").next()?;
                Some(name.trim().to_string())
            })
            .collect())
    }
}

/// An address as lldb-dap writes it (`0x555555555177`, `0x7FFFF7DFB24A`).
pub(super) fn address(text: &str) -> Option<u64> {
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"))?;
    u64::from_str_radix(hex, 16).ok()
}

/// At a pause with `reason` and frame pcs `pcs` (innermost first): the pcs
/// to expect again when the next action will stop at once at the same
/// place (LLDB 20+: the pause is not a breakpoint hit, and the pc is the
/// address of a breakpoint already set), else `None`.
pub(super) fn arms<'a>(
    reason: PauseReason,
    pcs: &[u64],
    breakpoints: impl IntoIterator<Item = &'a u64>,
) -> Option<Vec<u64>> {
    let pc = *pcs.first()?;
    (reason != PauseReason::Breakpoint && pc != 0 && breakpoints.into_iter().any(|a| *a == pc)).then(|| pcs.to_vec())
}

/// Whether a pause with `reason` and frame pcs `now` is LLDB's re-stop at
/// the breakpoint the pause with frame pcs `armed` (see [`arms`]) sat on:
/// a breakpoint hit that did not move in any frame.
pub(super) fn is_restop(armed: &[u64], reason: PauseReason, now: &[u64]) -> bool {
    reason == PauseReason::Breakpoint && !armed.is_empty() && armed == now
}

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || std::fs::canonicalize(a)
            .ok()
            .zip(std::fs::canonicalize(b).ok())
            .is_some_and(|(x, y)| x == y)
}

/// `signal SIGSEGV: invalid address (fault address: 0x0)` → `SIGSEGV`.
pub(super) fn signal_name(text: &str) -> Option<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| w.starts_with("SIG") && w.len() > 3)
        .map(str::to_string)
}

/// lldb's console line for a death by signal:
/// `Process N exited with status = -1 (0xffffffff) ... signal SIGSEGV` or
/// `Process N exited with status = 11 ... (signal ...)`.
pub(super) fn console_signal(text: &str) -> Option<String> {
    text.lines()
        .find(|l| l.contains("exited") && l.contains("SIG"))
        .and_then(signal_name)
}
