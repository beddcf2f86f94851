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
    let false_constraints = run
        .path
        .iter()
        .filter(|c| run.arena.eval(c.expr, &|v| config.inputs.byte(v).unwrap_or(0)) != 1)
        .count();
    let selects = (1..run.arena.len() as u32)
        .filter(|&i| {
            matches!(
                run.arena.get(doppel_concolic::ExprId(i)),
                doppel_concolic::Expr::Select { .. }
            )
        })
        .count();
    let origins = run.path.iter().fold(std::collections::BTreeMap::new(), |mut m, c| {
        *m.entry(format!("{:?}", c.origin)).or_insert(0) += 1;
        m
    });
    eprintln!("false constraints: {false_constraints}, select nodes: {selects}, origins: {origins:?}");
    for b in run
        .branches
        .iter()
        .filter(|b| module.source_loc(b.offset).is_some_and(|l| !l.file.contains("libc")))
        .take(40)
    {
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
