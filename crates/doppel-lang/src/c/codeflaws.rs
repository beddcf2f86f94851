//! Regression pairs in the Codeflaws layout (Tan et al., ICSE 2017 poster;
//! ../shared/corpus/regressions/*/README.md) and the output comparison of
//! Codeflaws' own test script.
//!
//! A directory `<contest>-<problem>-bug-<buggy>-<accepted>/` holds the
//! accepted program `<contest>-<problem>-<accepted>.c` (the reference P),
//! the same author's wrong-answer program `<contest>-<problem>-<buggy>.c`
//! (the modified P'), passing tests `input-posN`/`output-posN` and failing
//! tests `input-negN`/`output-negN`; any of these files may be stored
//! gzipped (`.gz`). A `defects.tsv` next to the directories gives each its
//! defect class. Cross-author pairs (codeflaws-cross) take P from one
//! directory and P' from another directory of the same problem
//! ([`cross_pairs`]); the tests of a directory are the problem's tests.

use flate2::read::GzDecoder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest test file read, in bytes (Codeflaws inputs are at most a few MB).
pub const MAX_TEST_BYTES: u64 = 64 << 20;

/// One test: stdin and the expected stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCase {
    /// `pos3`, `neg1`, ...
    pub name: String,
    /// The input file (possibly `.gz`).
    pub input: PathBuf,
    /// The expected-output file (possibly `.gz`).
    pub expected: PathBuf,
}

/// A regression pair: P, P', and tests P passes and P' fails.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegressionPair {
    /// The pair's name (the directory name; for cross pairs
    /// `<P's directory>+<P''s directory>`).
    pub name: String,
    /// `<contest>-<problem>`, e.g. `71-A`.
    pub problem: String,
    /// The reference (accepted) program P (possibly `.c.gz`).
    pub reference: PathBuf,
    /// The modified (wrong-answer) program P' (possibly `.c.gz`).
    pub modified: PathBuf,
    /// For cross pairs: the accepted program of P''s own author, whose diff
    /// against P' is the ground-truth fault. Same-author pairs: `None`
    /// (P itself is the fix).
    pub modified_fix: Option<PathBuf>,
    /// Tests both programs pass (`input-posN`), by N.
    pub passing: Vec<TestCase>,
    /// Failing tests (`input-negN`), by N.
    pub failing: Vec<TestCase>,
    /// The defect class from `defects.tsv` (DCCR, ORRN, OILN, HIMS, DRVA),
    /// if listed.
    pub class: Option<String>,
}

/// Reads the pair in `dir` (class from `class`).
///
/// Errors: the name is not `<contest>-<problem>-bug-<buggy>-<accepted>`,
/// a program is missing, or there is no failing test.
pub fn read_pair(dir: &Path, class: Option<String>) -> Result<RegressionPair, String> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{}: no directory name", dir.display()))?;
    let (problem, ids) = name
        .split_once("-bug-")
        .ok_or_else(|| format!("{name}: not <contest>-<problem>-bug-<buggy>-<accepted>"))?;
    let (buggy, accepted) = ids
        .split_once('-')
        .ok_or_else(|| format!("{name}: not <contest>-<problem>-bug-<buggy>-<accepted>"))?;
    let program = |id: &str| -> Result<PathBuf, String> {
        let plain = dir.join(format!("{problem}-{id}.c"));
        let gz = dir.join(format!("{problem}-{id}.c.gz"));
        if plain.is_file() {
            Ok(plain)
        } else if gz.is_file() {
            Ok(gz)
        } else {
            Err(format!("{name}: {} is missing", plain.display()))
        }
    };
    let reference = program(accepted)?;
    let modified = program(buggy)?;
    let (passing, failing) = tests(dir)?;
    if failing.is_empty() {
        return Err(format!("{name}: no failing test (input-negN)"));
    }
    Ok(RegressionPair {
        name: name.clone(),
        problem: problem.to_string(),
        reference,
        modified,
        modified_fix: None,
        passing,
        failing,
        class,
    })
}

fn tests(dir: &Path) -> Result<(Vec<TestCase>, Vec<TestCase>), String> {
    let mut pos = BTreeMap::new();
    let mut neg = BTreeMap::new();
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in rd.flatten() {
        let f = e.file_name().to_string_lossy().into_owned();
        let base = f.strip_suffix(".gz").unwrap_or(&f);
        let Some(rest) = base.strip_prefix("input-") else {
            continue;
        };
        let (kind, n) = if let Some(n) = rest.strip_prefix("pos") {
            (&mut pos, n)
        } else if let Some(n) = rest.strip_prefix("neg") {
            (&mut neg, n)
        } else {
            continue;
        };
        let Ok(n) = n.parse::<u32>() else { continue };
        let out = ["", ".gz"]
            .iter()
            .map(|s| dir.join(format!("output-{rest}{s}")))
            .find(|p| p.is_file());
        if let Some(expected) = out {
            kind.insert(
                n,
                TestCase {
                    name: rest.to_string(),
                    input: e.path(),
                    expected,
                },
            );
        }
    }
    Ok((pos.into_values().collect(), neg.into_values().collect()))
}

/// `defects.tsv` in `root`: directory name -> class (empty when absent).
pub fn read_classes(root: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root.join("defects.tsv")).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(d, c)| (d.trim().to_string(), c.trim().to_string()))
        .collect()
}

/// Every pair directory under `root` (names containing `-bug-`), sorted by
/// name, each read or the reason it cannot be.
pub fn discover_pairs(root: &Path) -> Vec<Result<RegressionPair, String>> {
    let classes = read_classes(root);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().contains("-bug-")))
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| {
            let name = d.file_name().unwrap_or_default().to_string_lossy().into_owned();
            read_pair(d, classes.get(&name).cloned())
        })
        .collect()
}

/// Cross-author pairs from same-author pairs (codeflaws-cross README): for
/// every problem with two or more directories, every ordered pair (A, B),
/// A != B, gives P = A's accepted program, P' = B's wrong-answer program,
/// its ground-truth fix = B's accepted program, and the tests of both
/// directories (passing tests of both, failing tests of B; the problem's
/// tests apply to every program of it; the caller checks that P passes a
/// test before using it). The class is B's.
pub fn cross_pairs(pairs: &[RegressionPair]) -> Vec<RegressionPair> {
    let mut by_problem: BTreeMap<&str, Vec<&RegressionPair>> = BTreeMap::new();
    for p in pairs {
        by_problem.entry(&p.problem).or_default().push(p);
    }
    let mut out = Vec::new();
    for group in by_problem.values() {
        for a in group {
            for b in group {
                if a.name == b.name {
                    continue;
                }
                let mut passing = b.passing.clone();
                for t in &a.passing {
                    let mut t = t.clone();
                    t.name = format!("{}:{}", a.name, t.name);
                    passing.push(t);
                }
                out.push(RegressionPair {
                    name: format!("{}+{}", a.name, b.name),
                    problem: b.problem.clone(),
                    reference: a.reference.clone(),
                    modified: b.modified.clone(),
                    modified_fix: Some(b.reference.clone()),
                    passing,
                    failing: b.failing.clone(),
                    class: b.class.clone(),
                });
            }
        }
    }
    out
}

/// The bytes of a corpus file, gunzipped if its name ends in `.gz`, at most
/// [`MAX_TEST_BYTES`].
///
/// Errors: unreadable, not gzip, or too large.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    let res = if path.extension().is_some_and(|e| e == "gz") {
        GzDecoder::new(f).take(MAX_TEST_BYTES + 1).read_to_end(&mut out)
    } else {
        f.take(MAX_TEST_BYTES + 1).read_to_end(&mut out)
    };
    res.map_err(|e| format!("{}: {e}", path.display()))?;
    if out.len() as u64 > MAX_TEST_BYTES {
        return Err(format!("{}: larger than {MAX_TEST_BYTES} bytes", path.display()));
    }
    Ok(out)
}

/// Whether a test input is Codeforces' display truncation of a longer
/// input: it ends in `...` with no trailing newline (darwin-measured.md
/// trap 7; `...\n` endings are legitimate grids).
pub fn is_truncated(input: &[u8]) -> bool {
    input.ends_with(b"...")
}

/// Codeflaws' output comparison (`test-genprog.sh`): empty lines dropped,
/// leading blanks stripped, trailing white space ignored. Here a line that
/// is only white space counts as empty.
pub fn outputs_match(expected: &[u8], actual: &[u8]) -> bool {
    normalized_lines(expected) == normalized_lines(actual)
}

fn normalized_lines(text: &[u8]) -> Vec<&[u8]> {
    normalized_spans(text).into_iter().map(|(_, l)| l).collect()
}

/// The normalized lines of `text` with the byte offset each starts at.
fn normalized_spans(text: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut start = 0;
    for l in text.split(|&b| b == b'\n') {
        let t = l.trim_ascii();
        if !t.is_empty() {
            out.push((start + (l.len() - l.trim_ascii_start().len()), t));
        }
        start += l.len() + 1;
    }
    out
}

/// Where two outputs first differ under [`outputs_match`]'s comparison:
/// for each output, the byte offset of its first character that the
/// comparison finds different, `None` for an output that ran out of lines
/// there (the other one has more). Inside a differing line that is a
/// prefix of the other, the shorter one's offset is its last character
/// (what was written last before the difference). `None` overall when the
/// outputs match.
pub fn first_difference(expected: &[u8], actual: &[u8]) -> Option<(Option<usize>, Option<usize>)> {
    let (a, b) = (normalized_spans(expected), normalized_spans(actual));
    for i in 0..a.len().max(b.len()) {
        match (a.get(i), b.get(i)) {
            (Some((_, x)), Some((_, y))) if x == y => continue,
            (Some(&(sa, x)), Some(&(sb, y))) => {
                let j = x.iter().zip(y.iter()).take_while(|(u, v)| u == v).count();
                return Some((Some(sa + j.min(x.len() - 1)), Some(sb + j.min(y.len() - 1))));
            }
            (Some(&(sa, _)), None) => return Some((Some(sa), None)),
            (None, Some(&(sb, _))) => return Some((None, Some(sb))),
            (None, None) => break,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codeflaws_comparison() {
        assert!(outputs_match(b"1 5\n", b"1 5"));
        assert!(outputs_match(b"  1 5  \n\n\nYES\n", b"1 5\r\nYES \n"));
        assert!(!outputs_match(b"1 5\n", b"2 5\n"));
        assert!(!outputs_match(b"1 5\n", b"1  5\n"), "inner blanks matter");
        assert!(!outputs_match(b"YES\n", b"YES\nNO\n"));
        assert!(is_truncated(b"5\n1 2 3..."));
        assert!(!is_truncated(b"5\n...\n"));
    }

    #[test]
    fn first_difference_points_at_the_first_differing_character() {
        assert_eq!(first_difference(b"1 5\n", b"1  5\n"), Some((Some(2), Some(2))));
        assert_eq!(first_difference(b"  1 5  \n\nYES\n", b"1 5\r\nYES \n"), None);
        // After blank and indented lines: offsets in each output's own bytes.
        assert_eq!(first_difference(b"\n  No\n", b"NO\n"), Some((Some(4), Some(1))));
        // A line that is a prefix of the other: its last character.
        assert_eq!(
            first_difference(b"GOTO Vasilisa.", b"GOTO Vasilisa"),
            Some((Some(13), Some(12)))
        );
        // One output has more lines.
        assert_eq!(first_difference(b"YES\nNA\n", b"YES\n"), Some((Some(4), None)));
        assert_eq!(first_difference(b"", b"0\n"), Some((None, Some(0))));
    }

    #[test]
    fn reads_the_bundled_pair() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/regressions");
        let pairs: Vec<_> = discover_pairs(&root).into_iter().collect::<Result<_, _>>().unwrap();
        let p = pairs.iter().find(|p| p.name == "1-A-bug-10-11").unwrap();
        assert_eq!(p.problem, "1-A");
        assert!(p.reference.ends_with("1-A-11.c") && p.modified.ends_with("1-A-10.c"));
        assert_eq!(p.passing.len(), 3);
        assert_eq!(p.failing.len(), 1);
        assert_eq!(p.failing[0].name, "neg1");
        assert_eq!(p.class.as_deref(), Some("ORRN"));
        assert_eq!(read_bytes(&p.failing[0].input).unwrap(), b"3\n0 5 -2\n");
    }

    #[test]
    fn cross_pairs_take_p_from_one_author_and_p_prime_from_another() {
        let t = |n: &str| TestCase {
            name: n.into(),
            input: PathBuf::from(format!("in-{n}")),
            expected: PathBuf::from(format!("out-{n}")),
        };
        let mk = |name: &str, problem: &str| RegressionPair {
            name: name.into(),
            problem: problem.into(),
            reference: PathBuf::from(format!("{name}/P.c")),
            modified: PathBuf::from(format!("{name}/P2.c")),
            modified_fix: None,
            passing: vec![t("pos1")],
            failing: vec![t("neg1")],
            class: None,
        };
        let pairs = [mk("a", "1-A"), mk("b", "1-A"), mk("c", "2-B")];
        let cross = cross_pairs(&pairs);
        let names: Vec<_> = cross.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a+b", "b+a"]);
        assert_eq!(cross[0].reference, PathBuf::from("a/P.c"));
        assert_eq!(cross[0].modified, PathBuf::from("b/P2.c"));
        assert_eq!(cross[0].modified_fix, Some(PathBuf::from("b/P.c")));
        assert_eq!(cross[0].passing.len(), 2);
    }
}
