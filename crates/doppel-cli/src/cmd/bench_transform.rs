//! `doppel bench transform`: preparation time of the C program
//! transformations (ISSTA'19 Table 1, `doppel_lang::c::transform`) against
//! program size, with the per-program scope index and with the original
//! per-statement walk, in the same run (issue 17 part 6: at most linear
//! growth; a Csmith program's preparation under a second). Programs:
//! generated Csmith-shaped programs of the requested sizes, and real Csmith
//! programs. Every kind is applied at every seed with both indexings, and
//! their results are compared (they must be equal). Prints figures;
//! asserts nothing.

use doppel_lang::c::transform;
use doppel_lang::transform::{ProgramInput, ScopeIndexing, Transformed};
use rand::SeedableRng;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

/// What `bench transform` measures.
pub struct Options {
    /// Lines of the generated programs.
    pub sizes: Vec<usize>,
    /// Csmith seeds of the real programs.
    pub csmith: Vec<u64>,
    /// Generator seeds per transformation kind.
    pub seeds: u64,
    /// The per-statement walk is skipped for programs after the first whose
    /// measurement took longer than this.
    pub old_budget: Duration,
}

/// One program's figures with one indexing.
struct Measured {
    time: Duration,
    /// Per kind, in `transform::all()` order.
    per_kind: Vec<Duration>,
    results: Vec<Result<Transformed, String>>,
}

/// Every C transformation kind at seeds `0..seeds` (ChaCha8, as the
/// metamorphic rounds), no coverage (dead-code removal then declines at once).
fn measure(src: &str, seeds: u64, indexing: ScopeIndexing) -> Measured {
    let mut results = Vec::new();
    let mut per_kind = Vec::new();
    let start = thread_cpu();
    for t in transform::all() {
        let k = thread_cpu();
        for seed in 0..seeds {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut input = ProgramInput::new(src, None);
            input.scope_indexing = indexing;
            results.push(t.apply(input, &mut rng).map_err(|s| s.reason));
        }
        per_kind.push(thread_cpu().saturating_sub(k));
    }
    Measured {
        time: thread_cpu().saturating_sub(start),
        per_kind,
        results,
    }
}

/// CPU time of the calling thread (user + system, from
/// `/proc/thread-self/stat`, in clock ticks of 10 ms): what the benchmark
/// reports, so that other load on the machine does not inflate it. Zero
/// when the file cannot be read.
fn thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): state is 3rd,
    // utime the 14th and stime the 15th field of the whole line.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    Duration::from_millis(f.iter().sum::<u64>() * 10)
}

/// A C program of about `lines` lines shaped like Csmith's output: one
/// file-scope variable per 13 lines (a 2,000-line Csmith program has ~150
/// top-level declarations), some of them structs, then functions of ~40
/// lines with 8 locals each that read and write globals in nested blocks
/// and loops, and a `main` calling them. Deterministic.
pub fn csmith_shaped(lines: usize) -> String {
    let globals = (lines / 13).max(4);
    let functions = ((lines.saturating_sub(globals + 12)) / 50).max(1);
    let mut s =
        String::from("#include <stdint.h>\n#include <stdio.h>\nstruct S0 {\n    int32_t f0;\n    uint8_t f1;\n};\n");
    for g in 0..globals {
        if g % 7 == 3 {
            let _ = writeln!(s, "static struct S0 g_{g} = {{{g}, 1}};");
        } else {
            let _ = writeln!(s, "static int32_t g_{g} = {};", g % 11);
        }
    }
    // A small LCG picks globals (no dependency, same program everywhere).
    let mut x: u64 = 12345;
    let mut pick = |n: usize| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((x >> 33) as usize) % n
    };
    let int_global = |k: usize| {
        if k % 7 == 3 {
            format!("g_{k}.f0")
        } else {
            format!("g_{k}")
        }
    };
    for f in 0..functions {
        let _ = writeln!(s, "static int32_t func_{f}(int32_t p_0, int32_t p_1)\n{{");
        for l in 0..7 {
            let _ = writeln!(s, "    int32_t l_{l} = {};", (f + l) % 5);
        }
        s.push_str("    struct S0 l_s = {0, 0};\n");
        for r in 0..3 {
            let (a, b, c) = (pick(globals), pick(globals), pick(globals));
            let _ = writeln!(s, "    for (l_{r} = 0; l_{r} < 3; l_{r}++)\n    {{");
            let _ = writeln!(s, "        {} = l_{} + {};", int_global(a), r + 1, int_global(b));
            let _ = writeln!(s, "        if ({} > l_{})\n        {{", int_global(c), r + 2);
            let _ = writeln!(s, "            l_{} = {} ^ p_0;", r + 3, int_global(a));
            s.push_str("            l_s.f0 = l_s.f0 + p_1;\n        }\n        else\n        {\n");
            let _ = writeln!(s, "            l_{} = 7;\n        }}\n    }}", r + 4);
        }
        let _ = writeln!(
            s,
            "    return l_0 + l_5 + l_6 + l_s.f0 + {};\n}}",
            int_global(pick(globals))
        );
    }
    s.push_str("int main(void)\n{\n    int32_t crc = 0;\n");
    for f in 0..functions {
        let _ = writeln!(s, "    crc += func_{f}({f}, 1);");
    }
    s.push_str("    printf(\"%d\\n\", (int) crc);\n    return 0;\n}\n");
    s
}

fn csmith(seed: u64) -> anyhow::Result<String> {
    let dir = tempfile::tempdir()?;
    let f = dir.path().join("p.c");
    let out = std::process::Command::new("csmith")
        .arg("--seed")
        .arg(seed.to_string())
        .arg("-o")
        .arg(&f)
        // csmith writes platform.info into its working directory.
        .current_dir(dir.path())
        .output()
        .map_err(|e| anyhow::anyhow!("csmith could not run (Debian package csmith): {e}"))?;
    anyhow::ensure!(
        out.status.success(),
        "csmith --seed {seed} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(std::fs::read_to_string(&f)?)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs the benchmark (CPU-bound, on a blocking thread).
pub async fn run(o: Options) -> anyhow::Result<ExitCode> {
    tokio::task::spawn_blocking(move || bench(o)).await?
}

fn bench(o: Options) -> anyhow::Result<ExitCode> {
    let mut programs: Vec<(String, String)> = o
        .sizes
        .iter()
        .map(|&n| (format!("generated {n}"), csmith_shaped(n)))
        .collect();
    for &seed in &o.csmith {
        programs.push((format!("csmith --seed {seed}"), csmith(seed)?));
    }
    programs.sort_by_key(|(_, p)| p.lines().count());
    let kinds: Vec<&str> = transform::all().iter().map(|t| t.kind().as_str()).collect();
    println!(
        "bench transform: {} C transformation kinds x {} seeds per program; \
         per-statement walk (original) vs per-program index (default); CPU time of the thread; \
         the per-statement walk is skipped after a program over {:.0} s",
        kinds.len(),
        o.seeds,
        o.old_budget.as_secs_f64()
    );
    println!(
        "{:<22} {:>6} {:>8} {:>14} {:>14} {:>9} {:>14} {:>6}   indexed ms per kind ({})",
        "program",
        "lines",
        "applied",
        "per-stmt ms",
        "indexed ms",
        "speed-up",
        "indexed us/ln",
        "same",
        kinds.join(", ")
    );
    let mut old_over_budget = false;
    let mut all_same = true;
    for (name, src) in &programs {
        let lines = src.lines().count();
        let new = measure(src, o.seeds, ScopeIndexing::PerProgram);
        let applied = new.results.iter().filter(|r| r.is_ok()).count();
        // Programs in order of size: once the original took too long, it
        // would take longer still on every later one.
        let old =
            (!old_over_budget && !o.old_budget.is_zero()).then(|| measure(src, o.seeds, ScopeIndexing::PerStatement));
        if old.as_ref().is_some_and(|m| m.time > o.old_budget) {
            old_over_budget = true;
        }
        let same = old.as_ref().map(|m| m.results == new.results);
        all_same &= same != Some(false);
        let per_kind: Vec<String> = new.per_kind.iter().map(|d| format!("{:.0}", ms(*d))).collect();
        println!(
            "{:<22} {:>6} {:>8} {:>14} {:>14.1} {:>9} {:>14.1} {:>6}   {}",
            name,
            lines,
            applied,
            old.as_ref().map_or("skipped".into(), |m| format!("{:.1}", ms(m.time))),
            ms(new.time),
            old.as_ref().map_or("-".into(), |m| format!(
                "{:.1}x",
                m.time.as_secs_f64() / new.time.as_secs_f64().max(1e-9)
            )),
            ms(new.time) * 1000.0 / lines.max(1) as f64,
            match same {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            },
            per_kind.join(" ")
        );
    }
    println!(
        "(times: all {} kinds x {} seeds; one metamorphic round applies one kind once)",
        kinds.len(),
        o.seeds
    );
    Ok(if all_same { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_programs_have_about_the_requested_size_and_compile() {
        for n in [100, 1000] {
            let src = csmith_shaped(n);
            let lines = src.lines().count();
            assert!(lines * 10 >= n * 6 && lines * 10 <= n * 14, "{n}: {lines}");
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("g.c");
            std::fs::write(&f, &src).unwrap();
            let out = std::process::Command::new("gcc")
                .args(["-fsyntax-only", "-Wall", "-Werror"])
                .arg(&f)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
    }
}
