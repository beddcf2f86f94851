//! Every engine on an evenly spread sample of ../shared's test262
//! `test/language` tests, run as a test262 host would (harness `assert.js`,
//! `sta.js` and the `includes` prepended; `negative` tests expect their error
//! type; `features` gate through the probe), so the hosts are checked on real
//! conformance tests, not only on hand-written scripts. Prints the matrix;
//! asserts that the engines whose hosts see everything pass almost all.

use doppel_engines::registry::{self, HostTraits};
use doppel_engines::{EnginesConfig, Outcome, RunOptions, Script};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn shared() -> PathBuf {
    std::env::var_os("DOPPEL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

struct Test {
    path: PathBuf,
    source: String,
    features: Vec<String>,
    /// The error constructor a `negative` test expects.
    negative: Option<String>,
}

/// The YAML list or flow sequence under `key` in the front matter.
fn list(front: &str, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = front
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(&format!("{key}:")));
    if let Some(first) = lines.next() {
        let rest = first.split_once(':').map_or("", |(_, r)| r).trim();
        if let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            out.extend(inner.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()));
        } else {
            for l in lines {
                match l.trim().strip_prefix("- ") {
                    Some(item) => out.push(item.trim().to_string()),
                    None => break,
                }
            }
        }
    }
    out
}

fn load(path: &Path, harness: &Path) -> Option<Test> {
    let text = std::fs::read_to_string(path).ok()?;
    let front = text.split_once("/*---")?.1.split_once("---*/")?.0;
    let flags = list(front, "flags");
    // Hosts without $262, modules, async and raw tests are out of this sample.
    if flags
        .iter()
        .any(|f| matches!(f.as_str(), "module" | "async" | "raw" | "onlyStrict" | "CanBlockIsTrue"))
        || text.contains("$262")
    {
        return None;
    }
    let negative = front.contains("negative:").then(|| {
        let after = front.split_once("negative:").unwrap().1;
        after
            .lines()
            .find_map(|l| l.trim().strip_prefix("type:").map(|t| t.trim().to_string()))
            .unwrap_or_default()
    });
    let mut source = String::new();
    for inc in ["assert.js", "sta.js"]
        .into_iter()
        .map(String::from)
        .chain(list(front, "includes"))
    {
        source.push_str(&std::fs::read_to_string(harness.join(&inc)).ok()?);
        source.push('\n');
    }
    source.push_str(&text);
    Some(Test {
        path: path.to_path_buf(),
        source,
        features: list(front, "features"),
        negative,
    })
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "js") && !p.to_string_lossy().contains("_FIXTURE") {
            out.push(p);
        }
    }
}

/// About `n` tests spread evenly over test262's `test/language`, with the root.
fn sample(n: usize) -> (PathBuf, Vec<Test>) {
    let root = shared().join("corpus/js/test262");
    assert!(
        root.is_dir(),
        "the shared test262 corpus is missing: {}",
        root.display()
    );
    let mut files = Vec::new();
    walk(&root.join("test/language"), &mut files);
    let step = (files.len() / n).max(1);
    let tests: Vec<Test> = files
        .iter()
        .step_by(step)
        .filter_map(|p| load(p, &root.join("harness")))
        .collect();
    assert!(tests.len() >= n / 2, "{} tests sampled", tests.len());
    (root, tests)
}

/// engine262's semantics coverage over real test262 tests: every test adds
/// to the union, and the same tests give the same coverage again.
#[tokio::test]
#[ignore = "needs ../shared"]
async fn engine262_coverage_of_a_test262_sample() {
    use doppel_engines::coverage::CoverageUnion;
    use doppel_engines::engine::engine262::Engine262;
    let (_, tests) = sample(120);
    let mut e = Engine262::with_coverage(&EnginesConfig::default()).expect("engine262 installed");
    let cat = e.catalogue().await.expect("catalogue");
    let opts = RunOptions {
        timeout: Duration::from_secs(30),
        output_cap: 16 * 1024,
    };
    let mut union = CoverageUnion::default();
    let mut first = Vec::new();
    for t in &tests {
        let (r, cov) = e.run_with_coverage(&Script::new(t.source.clone()), &opts).await;
        let cov = cov.unwrap_or_else(|| panic!("{}: no coverage ({})", t.path.display(), r.outcome.label()));
        union.add(&cov);
        if first.len() < 10 {
            first.push(cov);
        }
    }
    for (t, want) in tests.iter().zip(&first) {
        let (_, again) = e.run_with_coverage(&Script::new(t.source.clone()), &opts).await;
        assert_eq!(
            again.as_ref(),
            Some(want),
            "{}: coverage differs on a re-run",
            t.path.display()
        );
    }
    let [alg, steps, top] = union.ratios(&cat);
    println!(
        "{} test262 tests: algorithms {}/{}, steps {}/{}, top-level steps {}/{}",
        tests.len(),
        alg.0,
        alg.1,
        steps.0,
        steps.1,
        top.0,
        top.1
    );
    assert!(
        alg.0 * 5 > alg.1 && top.0 * 5 > top.1,
        "a test262 sample reaches over a fifth"
    );
}

#[tokio::test]
#[ignore = "needs ../shared"]
async fn engines_on_a_test262_sample() {
    let (root, tests) = sample(60);

    let cfg = EnginesConfig::default();
    let opts = RunOptions {
        timeout: Duration::from_secs(20),
        output_cap: 16 * 1024,
    };
    for entry in registry::all() {
        let mut e = (entry.create)(&cfg).unwrap_or_else(|err| panic!("{}: {err}", entry.name));
        let (mut pass, mut unsupported, mut failed) = (0, 0, Vec::new());
        for t in &tests {
            let r = e
                .run(
                    &Script {
                        source: t.source.clone(),
                        features: t.features.clone(),
                    },
                    &opts,
                )
                .await;
            let ok = match (&r.outcome, &t.negative) {
                (Outcome::Unsupported { .. }, _) => {
                    unsupported += 1;
                    continue;
                }
                (Outcome::Normal, None) => true,
                (Outcome::Exception { constructor, .. }, Some(want)) => {
                    !entry.traits.exact_constructor || constructor.as_deref() == Some(want.as_str())
                }
                _ => false,
            };
            if ok {
                pass += 1;
            } else {
                failed.push(format!(
                    "{} ({})",
                    t.path.strip_prefix(&root).unwrap().display(),
                    r.outcome.label()
                ));
            }
        }
        e.shutdown().await;
        println!(
            "{:16} pass {pass:3}  fail {:3}  unsupported {unsupported:3}  {}",
            entry.name,
            failed.len(),
            failed.iter().take(3).cloned().collect::<Vec<_>>().join("; ")
        );
        // Modern engines whose host sees everything (jsc's `$` caveat aside)
        // pass nine in ten; ES5-level ones (Rhino) run what their probe
        // allows and fail ES2015 semantics no feature tag names.
        let modern = e.features().await.is_ok_and(|f| f.level().is_some());
        let exact = HostTraits {
            dollar_removed: false,
            ..entry.traits
        } == HostTraits::EXACT;
        if exact && modern && entry.name != "sm102" {
            let ran = pass + failed.len();
            assert!(ran > 0 && failed.len() * 10 <= ran, "{}: {failed:#?}", entry.name);
        }
    }
}
