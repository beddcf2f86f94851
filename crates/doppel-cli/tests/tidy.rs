//! The map stays true by itself (issue 13, part 6): checks of the
//! repository's shape that run with the default tests.
//!
//! - every crate under `crates/` and every source file under its `src/` is
//!   on ARCHITECTURE.md's map (the convention is in ARCHITECTURE.md, "Reading
//!   the map");
//! - layers point down: every crate declares its layer in its Cargo.toml
//!   (`[package.metadata.doppel] layer = "..."`), and depends only on crates
//!   of lower layers, except the named exception (doppel-metamorphic uses
//!   doppel-differential's run generator);
//! - every `#[ignore]` has the reason "needs ../shared" (so `cargo test --
//!   --ignored`, run by `scripts/test --shared`, is exactly the tests over the
//!   shared corpora);
//! - no `.rs` file is over 1,000 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: a crate may depend only on crates of a lower
/// rank (ARCHITECTURE.md, "Layers").
const LAYERS: [(&str, u32); 6] = [
    ("core", 0),
    ("driver", 1),
    ("language", 1),
    ("analysis", 1),
    ("technique", 2),
    ("cli", 3),
];

/// Dependencies allowed against the layering, each named in ARCHITECTURE.md.
const EXCEPTIONS: [(&str, &str); 1] = [
    // The initial runs of metamorphic testing come from DBDB's run generator
    // (Algorithm 1), which lives in the differential technique.
    ("doppel-metamorphic", "doppel-differential"),
];

/// The longest a source file may be.
const MAX_LINES: usize = 1000;

/// Files allowed over [`MAX_LINES`] until a split that is under way lands;
/// an entry must name an existing file that is really over the limit (a
/// stale entry fails the test), so remove it when its split lands.
const OVER_MAX_LINES: &[&str] = &[];

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The crate directories under `crates/` (those with a Cargo.toml).
fn crates() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// ARCHITECTURE.md's sections by the crate their heading names
/// (`## Core (`doppel-core`)`): crate -> the backticked names in the
/// section's text.
fn sections(map: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in map.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            current = heading
                .rsplit_once("(`")
                .and_then(|(_, rest)| rest.strip_suffix("`)"))
                .filter(|c| c.starts_with("doppel-"))
                .map(str::to_string);
            if let Some(c) = &current {
                out.entry(c.clone()).or_default();
            }
            continue;
        }
        if let Some(c) = &current {
            let names = out.get_mut(c).unwrap();
            // Odd pieces between backticks are code spans.
            for (i, piece) in line.split('`').enumerate() {
                if i % 2 == 1 {
                    names.insert(piece.trim().to_string());
                }
            }
        }
    }
    out
}

#[test]
fn every_crate_and_source_file_is_on_the_map() {
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let layers_block = map
        .split("## Layers")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("ARCHITECTURE.md has a Layers section");
    let sections = sections(&map);
    let mut missing = Vec::new();
    for krate in crates() {
        if !layers_block
            .lines()
            .any(|l| l.split_whitespace().next() == Some(&format!("crates/{krate}")))
        {
            missing.push(format!("crate {krate}: no line `crates/{krate}` in the Layers block"));
        }
        let Some(names) = sections.get(&krate) else {
            missing.push(format!("crate {krate}: no section whose heading ends in (`{krate}`)"));
            continue;
        };
        let src = root().join("crates").join(&krate).join("src");
        for f in rust_files(&src) {
            let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            if rel == "lib.rs" || rel == "main.rs" {
                continue;
            }
            let parent = rel.rsplit_once('/').map_or("", |(d, _)| d);
            let named = names.contains(&rel)
                || names.iter().any(|n| n.ends_with('/') && rel.starts_with(n.as_str()))
                || names.contains(&format!("{parent}/*.rs"));
            if !named {
                missing.push(format!(
                    "crates/{krate}/src/{rel}: not named as `{rel}` in the (`{krate}`) section"
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's map misses (see its \"Reading the map\"):\n{}",
        missing.join("\n")
    );
}

/// `cargo metadata` of the workspace, without dependencies' own packages.
fn metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn layers_point_down_and_techniques_do_not_use_each_other() {
    let meta = metadata();
    let rank: BTreeMap<&str, u32> = LAYERS.into_iter().collect();
    let mut layer_of: BTreeMap<String, String> = BTreeMap::new();
    let mut problems = Vec::new();
    let packages = meta["packages"].as_array().unwrap();
    for p in packages {
        let name = p["name"].as_str().unwrap().to_string();
        match p["metadata"]["doppel"]["layer"].as_str() {
            Some(l) if rank.contains_key(l) => {
                layer_of.insert(name, l.to_string());
            }
            other => problems.push(format!(
                "{name}: [package.metadata.doppel] layer is {other:?}, not one of {:?}",
                LAYERS.map(|(l, _)| l)
            )),
        }
    }
    for p in packages {
        let name = p["name"].as_str().unwrap();
        let Some(own) = layer_of.get(name) else { continue };
        for d in p["dependencies"].as_array().unwrap() {
            let dep = d["name"].as_str().unwrap();
            let Some(theirs) = layer_of.get(dep) else { continue };
            if rank[theirs.as_str()] < rank[own.as_str()] || EXCEPTIONS.contains(&(name, dep)) {
                continue;
            }
            problems.push(format!(
                "{name} ({own}) depends on {dep} ({theirs}){}",
                d["kind"]
                    .as_str()
                    .map(|k| format!(" as a {k} dependency"))
                    .unwrap_or_default()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The checks see the crates: at least one of each kind that exists now.
    for l in ["core", "driver", "language", "technique", "cli"] {
        assert!(layer_of.values().any(|x| x == l), "no crate of layer {l}: {layer_of:?}");
    }
    // The exception is named where the map names the layers.
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let map = map.split_whitespace().collect::<Vec<_>>().join(" ");
    for (a, b) in EXCEPTIONS {
        assert!(
            map.contains(&format!("`{a}` uses `{b}`")),
            "ARCHITECTURE.md does not name the exception as \"`{a}` uses `{b}`\""
        );
    }
}

#[test]
fn every_ignored_test_needs_the_shared_corpora_and_says_so() {
    let mut bad = Vec::new();
    let mut ignored = 0;
    for f in rust_files(&root().join("crates")) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let l = line.trim();
            if !l.starts_with("#[ignore") {
                continue;
            }
            ignored += 1;
            if l != "#[ignore = \"needs ../shared\"]" {
                bad.push(format!("{}:{}: {l}", f.display(), n + 1));
            }
        }
    }
    assert!(ignored > 0, "the scan finds the shared-corpus tests");
    assert!(
        bad.is_empty(),
        "an #[ignore] must read exactly #[ignore = \"needs ../shared\"] (scripts/test --shared runs every ignored test):\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let root = root();
    let mut long = Vec::new();
    let mut over = Vec::new();
    for f in rust_files(&root.join("crates")) {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
        let n = std::fs::read_to_string(&f).unwrap().lines().count();
        if n > MAX_LINES {
            over.push(rel.clone());
            if !OVER_MAX_LINES.contains(&rel.as_str()) {
                long.push(format!("{rel}: {n} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split files along their seams (at most {MAX_LINES} lines):\n{}",
        long.join("\n")
    );
    let stale: Vec<&str> = OVER_MAX_LINES
        .iter()
        .copied()
        .filter(|f| !over.iter().any(|o| o == f))
        .collect();
    assert!(
        stale.is_empty(),
        "stale entries in OVER_MAX_LINES (missing or at most {MAX_LINES} lines now; remove them):\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_library_crate_denies_missing_docs() {
    let mut lax = Vec::new();
    let mut libraries = 0;
    for krate in crates() {
        let lib = root().join("crates").join(&krate).join("src/lib.rs");
        let Ok(text) = std::fs::read_to_string(&lib) else {
            continue;
        };
        libraries += 1;
        if !text.lines().any(|l| l.trim() == "#![deny(missing_docs)]") {
            lax.push(krate);
        }
    }
    assert!(libraries > 5, "the scan finds the library crates");
    assert!(
        lax.is_empty(),
        "library crates without #![deny(missing_docs)] in src/lib.rs: {lax:?}"
    );
}
