//! Runs a wasm32-wasi module under the concolic interpreter:
//! `concolic_run MODULE [--sym] [args...] < stdin`; prints stdout, then a
//! summary (outcome, instructions, path-condition size) on stderr.
use std::io::{Read, Write};

fn main() {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    let sym = argv.iter().position(|a| a == "--sym").map(|i| argv.remove(i)).is_some();
    let path = argv.remove(0);
    let bytes = std::fs::read(&path).expect("module");
    let t = std::time::Instant::now();
    let module = doppel_concolic::Module::decode(&bytes).expect("decode");
    let decode = t.elapsed();
    let mut stdin = Vec::new();
    std::io::stdin().read_to_end(&mut stdin).expect("stdin");
    let config = doppel_concolic::RunConfig {
        inputs: doppel_concolic::Inputs {
            stdin,
            args: argv.into_iter().map(String::into_bytes).collect(),
            ..Default::default()
        },
        symbolic: if sym {
            doppel_concolic::Symbolic::ALL
        } else {
            doppel_concolic::Symbolic::NONE
        },
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let run = doppel_concolic::run(&module, &config);
    let el = t.elapsed();
    std::io::stdout().write_all(&run.stdout).unwrap();
    eprintln!(
        "{:?} instructions={} decode={:?} run={:?} path={} branches={} exprs={}",
        run.outcome,
        run.instructions,
        decode,
        el,
        run.path.len(),
        run.branches.len(),
        run.arena.len()
    );
    for b in run.branches.iter().take(40) {
        let loc = module.source_loc(b.offset);
        eprintln!(
            "  {:?} {:?} taken={} {:?}",
            b.kind,
            loc.map(|l| format!("{}:{} {}", l.file, l.line, l.function)),
            b.taken,
            b.constraint
        );
    }
}
