//! JavaScript: syntax (oxc: AST node type per line, syntax errors), the
//! determinism prelude, and corpus files as subjects (plain programs,
//! test262 tests with their harness, SunSpider programs with a `run();`
//! epilogue) in a content-addressed cache, the program transformations of
//! metamorphic debugger testing ([`transform`], ISSTA'19 section 3.2.2) and
//! the block coverage they need ([`coverage`]).

mod corpus;
pub mod coverage;
mod prelude;
mod strict;
mod syntax;
pub mod transform;

pub use corpus::{
    JsCache, JsKind, JsSubjectError, Negative, RUN_EPILOGUE_FILE_NAME, Test262Meta, discover_js, find_test262_harness,
};
pub use prelude::{FIXED_EPOCH_MS, PRELUDE_FILE_NAME, RANDOM_SEED, determinism_prelude};
pub use syntax::{JsSyntax, ROOT, count_lines, syntax_errors};

/// Running scripts under real node, as the node backend does, for tests.
#[cfg(test)]
pub(crate) mod testutil {
    use std::path::Path;
    use std::process::Command;

    /// node program: runs each file named on the command line as a classic
    /// script in this one global (`vm.runInThisContext`), with node's own
    /// loader for dynamic `import()` (as `node file.js` has).
    pub const RUN_SCRIPTS: &str = "const fs = require('fs'), vm = require('vm');\
        for (const f of process.argv.slice(1)) vm.runInThisContext(fs.readFileSync(f, 'utf8'), \
        { filename: f, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });";

    /// Runs `scripts` in order under node with `TZ=UTC`; returns (exit code,
    /// stdout, stderr). An unhandled promise rejection is a warning, not an
    /// exit, as in a test262 host (test262's dynamic-import syntax tests
    /// leave rejected `import('')` promises behind).
    pub fn run_node<P: AsRef<Path>>(scripts: &[P]) -> (Option<i32>, String, String) {
        let out = Command::new("node")
            .env("TZ", "UTC")
            .arg("--unhandled-rejections=warn")
            .arg("--no-warnings")
            .arg("-e")
            .arg(RUN_SCRIPTS)
            .args(scripts.iter().map(|p| p.as_ref()))
            .output()
            .expect("node is installed");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}
