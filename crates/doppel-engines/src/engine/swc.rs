//! SWC (@swc/core): a transpiler as a tool under test (issue 15 part 7c): each script
//! transpiled to ES5, then run in node's V8 in a fresh `vm` context
//! (`crate::transpile`).

use crate::registry::{EngineEntry, HostTraits};
use crate::transpile::{self, Transpiler};
use crate::{Engine, EngineError, EnginesConfig, Family};

const T: Transpiler = Transpiler {
    name: "swc",
    family: Family::Swc,
    package: "@swc/core",
    target: "ES5",
};

/// The registry entry.
pub fn entry() -> EngineEntry {
    EngineEntry {
        name: T.name,
        family: T.family,
        about: "SWC (@swc/core) (transpiler, target ES5; V8 of node 20 runs the output), scripts/deps/setup-transpilers.sh",
        traits: HostTraits {
            conformant_global: false,
            ..HostTraits::EXACT
        },
        probe,
        create,
    }
}

fn probe(cfg: &EnginesConfig) -> Result<String, EngineError> {
    transpile::probe(cfg, &T)
}

fn create(cfg: &EnginesConfig) -> Result<Box<dyn Engine>, EngineError> {
    transpile::host(cfg, &T)
}
