//! Interpreter throughput, for `doppel bench concolic`: instructions per
//! second of one module on one input, concretely and with every input byte
//! symbolic. Measured here, never asserted by tests (developers' guide).

use crate::{Module, RunConfig, Symbolic};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Throughput of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Runs timed.
    pub runs: u32,
    /// Instructions per run.
    pub instructions: u64,
    /// Total wall-clock seconds of all runs.
    pub seconds: f64,
    /// Instructions per second.
    pub per_second: f64,
    /// Path-condition entries per run (0 when concrete).
    pub constraints: usize,
}

/// Concrete and symbolic throughput of `module` on `config`'s inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// No shadow state.
    pub concrete: Throughput,
    /// Every input byte symbolic (stdin, argv, files).
    pub symbolic: Throughput,
}

fn time(module: &Module, config: &RunConfig, runs: u32) -> Throughput {
    let start = Instant::now();
    let mut instructions = 0;
    let mut constraints = 0;
    for _ in 0..runs.max(1) {
        let r = crate::run(module, config);
        instructions = r.instructions;
        constraints = r.path.len();
    }
    let seconds = start.elapsed().as_secs_f64();
    let total = instructions as f64 * runs.max(1) as f64;
    Throughput {
        runs: runs.max(1),
        instructions,
        seconds,
        per_second: total / seconds.max(1e-9),
        constraints,
    }
}

/// Runs `module` `runs` times concretely and `runs` times with every input
/// byte symbolic (the `symbolic` field of `config` is overridden).
pub fn measure(module: &Module, config: &RunConfig, runs: u32) -> Measurement {
    let concrete = RunConfig {
        symbolic: Symbolic::NONE,
        ..config.clone()
    };
    let symbolic = RunConfig {
        symbolic: Symbolic::ALL,
        ..config.clone()
    };
    Measurement {
        concrete: time(module, &concrete, runs),
        symbolic: time(module, &symbolic, runs),
    }
}
