//! The reproducer of a localization case (`doppel repro`): a directory
//! with `P.c` (the reference), `P2.c` (the modified program), `input` (the
//! failing test t), `witness-N` (Darwin's alternate inputs, one per root
//! cause, in rank order), `README.md` (the ranked report) and `run.sh`,
//! which builds both programs natively with gcc (the flags of doppel's
//! native builds: `-O0`, lenient warnings, the force-included headers,
//! retried without them) and prints both outputs on t and on every
//! witness, saying whether they differ, each run with the case's
//! command-line arguments (`args`, one per line, when the case has any).
//! `run.sh` exits 0 when P and P'
//! differ on t (the case's premise), 1 when they agree, 2 when a build fails.

use crate::record::LocalizeRecord;
use crate::view::source_line;
use doppel_core::technique::Reproducer;
use std::fmt::Write as _;
use std::path::Path;

const RUN_SH: &str = r#"#!/bin/sh
# Builds P.c and P2.c natively and shows both outputs on t (input) and on
# every witness. Exit status: 0 when P and P' differ on t, 1 when they
# agree, 2 when a build fails.
cd "$(dirname "$0")" || exit 2
CC=${CC:-gcc}
build() {
  $CC -O0 -g -w -include stdio.h -include stdlib.h -include string.h -include math.h -include ctype.h \
      -o "$2" "$1" -lm 2>/dev/null || $CC -O0 -g -w -o "$2" "$1" -lm || { echo "$1 does not build"; exit 2; }
}
build P.c ./p
build P2.c ./p2
set --
if [ -f args ]; then
  while IFS= read -r a; do set -- "$@" "$a"; done < args
fi
premise=1
for f in input witness-*; do
  [ -e "$f" ] || continue
  a=$(timeout 10 ./p "$@" < "$f"; echo "[exit $?]")
  b=$(timeout 10 ./p2 "$@" < "$f"; echo "[exit $?]")
  echo "== $f: $(head -c 200 "$f" | tr '\n' ' ')"
  echo "P  prints: $a"
  echo "P' prints: $b"
  if [ "$a" = "$b" ]; then echo "-> agree"; else echo "-> DIFFER"; [ "$f" = input ] && premise=0; fi
done
exit $premise
"#;

/// Writes the reproducer of `rec` into `out` (created if missing).
///
/// Errors: the directory or a file cannot be written.
pub fn write(rec: &LocalizeRecord, out: &Path) -> anyhow::Result<Reproducer> {
    std::fs::create_dir_all(out)?;
    let mut files = Vec::new();
    let mut put = |name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        let p = out.join(name);
        std::fs::write(&p, bytes)?;
        files.push(p);
        Ok(())
    };
    put("P.c", rec.case.reference.1.as_bytes())?;
    put("P2.c", rec.case.modified.1.as_bytes())?;
    let t = rec.result.failing_test.as_deref();
    if let Some(input) = t.and_then(|t| rec.case.test_input(t)) {
        put("input", input)?;
    }
    if !rec.case.args.is_empty() {
        let lines: String = rec.case.args.iter().map(|a| format!("{a}\n")).collect();
        put("args", lines.as_bytes())?;
    }
    let mut readme = String::new();
    let _ = writeln!(readme, "# Localization case {}\n", rec.case.name);
    let _ = writeln!(
        readme,
        "P = `P.c` (was {}), P' = `P2.c` (was {}), t = `input` (test {}).\n",
        rec.case.reference.0,
        rec.case.modified.0,
        t.unwrap_or("-")
    );
    let _ = writeln!(
        readme,
        "Outcome: {} {}\n",
        crate::record::outcome_name(&rec.result),
        crate::record::outcome_reason(&rec.result)
    );
    let _ = writeln!(readme, "Darwin's root causes, ranked (each with its witness input):\n");
    if let Some(d) = &rec.result.darwin {
        for (i, e) in d.report.entries.iter().enumerate() {
            let Some(c) = d.causes.iter().find(|c| c.line == e.line) else {
                continue;
            };
            let name = format!("witness-{}", i + 1);
            put(&name, &c.witness.input)?;
            let _ = writeln!(
                readme,
                "{}. {} `{}` ({}, in {}): `{name}`, P and P' {} on it",
                i + 1,
                e.line,
                source_line(rec, e.line),
                c.kind(),
                c.function,
                if c.witness.successful { "agree" } else { "differ" }
            );
        }
    }
    let _ = writeln!(
        readme,
        "\nRun `sh run.sh` to build both programs with gcc and compare their outputs."
    );
    put("README.md", readme.as_bytes())?;
    put("run.sh", RUN_SH.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(out.join("run.sh"), std::fs::Permissions::from_mode(0o755));
    }
    Ok(Reproducer {
        files,
        how: format!(
            "run sh {}/run.sh: builds P.c and P2.c and shows their outputs on t and on each witness",
            out.display()
        ),
    })
}
