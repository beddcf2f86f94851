//! SMT solving behind a trait that takes SMT-LIB2 text, with the default
//! backend: the `z3` binary as a child process (`z3 -smt2 -in`, Debian
//! package `z3`), driven incrementally (`push`/`pop`) with a per-query
//! timeout. The in-process z3 crate is deliberately not used: with Debian's
//! libz3 4.8.12 it answered `unknown` on satisfiable queries
//! (darwin-measured.md §2).
//!
//! [`Session`] couples a [`Solver`] with an [`SmtWriter`] so callers assert
//! [`ExprId`]s and read models back as input bytes.

use crate::expr::{ExprArena, ExprId, InputVar};
use crate::smt::SmtWriter;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// Answer of a satisfiability check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SatResult {
    /// Satisfiable: a model exists.
    Sat,
    /// Unsatisfiable.
    Unsat,
    /// The solver gave up (its own timeout or incompleteness).
    Unknown,
}

/// A solver failure; the session cannot go on after it (start a new one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolverError {
    /// The solver binary could not be started.
    #[error("solver {program} could not be started: {reason}")]
    Missing {
        /// Program name.
        program: String,
        /// OS error.
        reason: String,
    },
    /// The solver exited or closed its pipes.
    #[error("solver exited unexpectedly: {0}")]
    Crashed(String),
    /// No answer within the query timeout plus grace; the process was killed.
    #[error("solver did not answer within {0:?}; killed")]
    Timeout(Duration),
    /// The solver reported an error for our input, or answered something unparsable.
    #[error("solver protocol error: {0}")]
    Protocol(String),
}

/// An SMT-LIB2 solver driven by text.
pub trait Solver {
    /// Sends commands that produce no output (declarations, definitions, assertions).
    fn send(&mut self, smtlib: &str) -> Result<(), SolverError>;
    /// `(push 1)`.
    fn push(&mut self) -> Result<(), SolverError>;
    /// `(pop 1)`.
    fn pop(&mut self) -> Result<(), SolverError>;
    /// `(check-sat)` with a timeout for this query.
    fn check(&mut self, timeout: Duration) -> Result<SatResult, SolverError>;
    /// `(get-value ...)` of bit-vector constants after a `Sat` check.
    fn values(&mut self, names: &[String]) -> Result<Vec<(String, u64)>, SolverError>;
}

/// `z3 -smt2 -in` as a child process (own process group, killed on drop,
/// and by the kernel when doppel dies: `PR_SET_PDEATHSIG`).
pub struct Z3Process {
    child: Child,
    /// Commands go through a writer thread, so a solver that stops reading
    /// cannot block the caller (the next check times out instead).
    stdin: Sender<Vec<u8>>,
    lines: Receiver<String>,
    /// Extra wall-clock time beyond a query's timeout before the process is killed.
    pub grace: Duration,
}

impl Z3Process {
    /// Starts `z3` from `PATH`.
    pub fn new() -> Result<Self, SolverError> {
        Self::with_program("z3")
    }

    /// Starts `program` with `-smt2 -in`.
    pub fn with_program(program: &str) -> Result<Self, SolverError> {
        let mut cmd = Command::new(program);
        cmd.args(["-smt2", "-in"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        // SAFETY: prctl is async-signal-safe; nothing else runs in the child before exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| SolverError::Missing {
            program: program.into(),
            reason: e.to_string(),
        })?;
        let mut pipe = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (stdin, commands) = channel::<Vec<u8>>();
        std::thread::spawn(move || {
            for c in commands {
                if pipe.write_all(&c).and_then(|_| pipe.flush()).is_err() {
                    break;
                }
            }
        });
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            loop {
                line.clear();
                // Lines are capped: a flooding solver cannot exhaust memory.
                match r.by_ref().take(1 << 20).read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line.trim_end().to_string()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let mut z = Z3Process {
            child,
            stdin,
            lines: rx,
            grace: Duration::from_secs(2),
        };
        z.send("(set-option :print-success false)\n(set-option :produce-models true)\n(set-logic ALL)\n")?;
        Ok(z)
    }

    fn line(&mut self, deadline: Instant, budget: Duration) -> Result<String, SolverError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(l) => Ok(l),
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(SolverError::Timeout(budget))
            }
            Err(RecvTimeoutError::Disconnected) => {
                // Stdout closed: the solver exited, or closed it and lives on;
                // either way it is done (never wait on a live process here).
                let status = match self.child.try_wait() {
                    Ok(Some(s)) => s.to_string(),
                    _ => {
                        let _ = self.child.kill();
                        "closed its output".to_string()
                    }
                };
                Err(SolverError::Crashed(status))
            }
        }
    }
}

impl Drop for Z3Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Solver for Z3Process {
    fn send(&mut self, smtlib: &str) -> Result<(), SolverError> {
        self.stdin
            .send(smtlib.as_bytes().to_vec())
            .map_err(|_| SolverError::Crashed("the solver's input is closed".into()))
    }

    fn push(&mut self) -> Result<(), SolverError> {
        self.send("(push 1)\n")
    }

    fn pop(&mut self) -> Result<(), SolverError> {
        self.send("(pop 1)\n")
    }

    fn check(&mut self, timeout: Duration) -> Result<SatResult, SolverError> {
        self.send(&format!(
            "(set-option :timeout {})\n(check-sat)\n",
            timeout.as_millis().max(1)
        ))?;
        let deadline = Instant::now() + timeout + self.grace;
        loop {
            let l = self.line(deadline, timeout)?;
            match l.as_str() {
                "sat" => return Ok(SatResult::Sat),
                "unsat" => return Ok(SatResult::Unsat),
                "unknown" | "timeout" => return Ok(SatResult::Unknown),
                "" | "success" => continue,
                _ => return Err(SolverError::Protocol(l)),
            }
        }
    }

    fn values(&mut self, names: &[String]) -> Result<Vec<(String, u64)>, SolverError> {
        if names.is_empty() {
            return Ok(vec![]);
        }
        self.send(&format!("(get-value ({}))\n", names.join(" ")))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut text = String::new();
        let mut depth = 0i64;
        loop {
            let l = self.line(deadline, Duration::from_secs(10))?;
            if text.is_empty() && l.starts_with("(error") {
                return Err(SolverError::Protocol(l));
            }
            depth += l.matches('(').count() as i64 - l.matches(')').count() as i64;
            text.push_str(&l);
            text.push(' ');
            if depth <= 0 && !text.trim().is_empty() {
                break;
            }
            if text.len() > 64 << 20 {
                return Err(SolverError::Protocol("get-value answer too long".into()));
            }
        }
        parse_values(&text)
    }
}

/// Parses `((name #x41) (name2 (_ bv7 8)) ...)`.
fn parse_values(text: &str) -> Result<Vec<(String, u64)>, SolverError> {
    let err = || SolverError::Protocol(format!("unparsable get-value answer: {}", &text[..text.len().min(200)]));
    let tokens: Vec<String> = text
        .replace('(', " ( ")
        .replace(')', " ) ")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    // Skip the outer "(".
    if tokens.first().map(String::as_str) != Some("(") {
        return Err(err());
    }
    i += 1;
    while i < tokens.len() && tokens[i] != ")" {
        if tokens[i] != "(" {
            return Err(err());
        }
        let name = tokens.get(i + 1).ok_or_else(err)?.clone();
        i += 2;
        let value = if tokens.get(i).map(String::as_str) == Some("(") {
            // (_ bvN W)
            let v = tokens
                .get(i + 2)
                .and_then(|t| t.strip_prefix("bv"))
                .and_then(|n| n.parse().ok())
                .ok_or_else(err)?;
            i += 5;
            v
        } else {
            let t = tokens.get(i).ok_or_else(err)?;
            i += 1;
            if let Some(h) = t.strip_prefix("#x") {
                u64::from_str_radix(h, 16).map_err(|_| err())?
            } else if let Some(b) = t.strip_prefix("#b") {
                u64::from_str_radix(b, 2).map_err(|_| err())?
            } else {
                return Err(err());
            }
        };
        if tokens.get(i).map(String::as_str) != Some(")") {
            return Err(err());
        }
        i += 1;
        out.push((name, value));
    }
    Ok(out)
}

/// A solver plus the bookkeeping of what it has been told.
pub struct Session<S: Solver> {
    /// The solver.
    pub solver: S,
    writer: SmtWriter,
}

impl Session<Z3Process> {
    /// A session on a fresh `z3` process.
    pub fn z3() -> Result<Self, SolverError> {
        Ok(Session::new(Z3Process::new()?))
    }
}

impl<S: Solver> Session<S> {
    /// A session on `solver` (fresh: nothing asserted yet).
    pub fn new(solver: S) -> Self {
        Session {
            solver,
            writer: SmtWriter::new(),
        }
    }

    /// Asserts Boolean `expr` of `arena` in the current scope.
    pub fn assert(&mut self, arena: &ExprArena, expr: ExprId) -> Result<(), SolverError> {
        let text = self.writer.assert(arena, expr);
        self.solver.send(&text)
    }

    /// Declares `vars` so that [`Session::model`] reports them even when no
    /// assertion mentions them.
    pub fn declare(&mut self, vars: &[InputVar]) -> Result<(), SolverError> {
        let mut text = String::new();
        for v in vars {
            self.writer.declare(*v, &mut text);
        }
        self.solver.send(&text)
    }

    /// Opens a scope.
    pub fn push(&mut self) -> Result<(), SolverError> {
        self.writer.push();
        self.solver.push()
    }

    /// Closes the innermost scope.
    pub fn pop(&mut self) -> Result<(), SolverError> {
        self.writer.pop();
        self.solver.pop()
    }

    /// Checks satisfiability of everything asserted in open scopes.
    pub fn check(&mut self, timeout: Duration) -> Result<SatResult, SolverError> {
        self.solver.check(timeout)
    }

    /// After a `Sat` check: the value of every declared input byte.
    pub fn model(&mut self) -> Result<Vec<(InputVar, u8)>, SolverError> {
        let vars = self.writer.declared();
        let names: Vec<String> = vars.iter().map(InputVar::name).collect();
        let values = self.solver.values(&names)?;
        values
            .into_iter()
            .map(|(n, v)| {
                InputVar::parse(&n)
                    .map(|var| (var, v as u8))
                    .ok_or_else(|| SolverError::Protocol(format!("unknown variable {n} in model")))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn get_value_answers_parse() {
        let v = super::parse_values("((stdin_0 #x41) (stdin_1 #b00000010) (arg0_2 (_ bv7 8)))").unwrap();
        assert_eq!(
            v,
            vec![("stdin_0".into(), 0x41), ("stdin_1".into(), 2), ("arg0_2".into(), 7)]
        );
        assert!(super::parse_values("(error \"x\")").is_err());
    }
}
