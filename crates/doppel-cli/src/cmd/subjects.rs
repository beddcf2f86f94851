//! Finding and preparing C subjects: discover `.c` files, build them into the
//! content-addressed cache, and precompute each line's AST node type.

use anyhow::Context;
use doppel_differential::campaign::Prepared;
use doppel_lang::c::{BuildCache, BuildRecipe, CSyntax, discover};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bundled corpus: `./corpus/c`, else the one next to the source tree.
pub fn default_corpus() -> PathBuf {
    let here = PathBuf::from("corpus/c");
    if here.is_dir() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/c")
}

/// The build cache directory (next to a SQLite store, else `doppel-out/cache`).
pub fn cache_dir(db: &str) -> PathBuf {
    let path = db.strip_prefix("sqlite:").unwrap_or(db);
    if (!db.contains("://") || db.starts_with("sqlite:"))
        && let Some(parent) = Path::new(path.split('?').next().unwrap_or(path)).parent()
        && !parent.as_os_str().is_empty()
    {
        return parent.join("cache");
    }
    PathBuf::from("doppel-out/cache")
}

/// Discovers and builds the subjects under `paths` (files or directories).
/// A program that does not compile is kept, with its reason, so that its runs
/// are recorded as subject errors.
///
/// Errors: no `.c` file found.
pub async fn prepare(
    paths: &[PathBuf],
    cache: &Path,
    recipe: &BuildRecipe,
    limit: Option<usize>,
) -> anyhow::Result<Vec<Arc<Prepared>>> {
    let mut files = discover(paths);
    if files.is_empty() {
        anyhow::bail!(
            "no .c files under {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(n) = limit {
        files.truncate(n);
    }
    let cache = BuildCache::new(cache.to_path_buf());
    let mut out = Vec::new();
    for f in files {
        let name = subject_name(paths, &f);
        out.push(Arc::new(prepare_one(&cache, &f, &name, recipe).await?));
    }
    Ok(out)
}

fn subject_name(roots: &[PathBuf], file: &Path) -> String {
    for r in roots {
        if let Ok(rel) = file.strip_prefix(r)
            && !rel.as_os_str().is_empty()
        {
            let root = r
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            return if root.is_empty() {
                rel.display().to_string()
            } else {
                format!("{root}/{}", rel.display())
            };
        }
    }
    file.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string())
}

/// Builds one subject (or records why it cannot be built).
///
/// Errors: the source file cannot be read.
pub async fn prepare_one(
    cache: &BuildCache,
    file: &Path,
    name: &str,
    recipe: &BuildRecipe,
) -> anyhow::Result<Prepared> {
    let source_text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let syntax = CSyntax::parse(&source_text);
    let lines = syntax.line_count();
    let node_types = (1..=lines).map(|l| syntax.ast_node_type(l)).collect();
    let root_node = syntax.ast_node_type(0);
    match cache.build(file, name, recipe).await {
        Ok(subject) => Ok(Prepared {
            subject,
            source_text,
            node_types,
            root_node,
            error: None,
        }),
        Err(e) => {
            let hash = hex::encode(Sha256::digest(format!("{}\0{}", source_text, recipe).as_bytes()));
            let subject = doppel_core::Subject {
                name: name.to_string(),
                language: doppel_core::Language::C,
                source: file.to_path_buf(),
                source_name: file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                line_count: lines,
                binary: None,
                prelude: Vec::new(),
                epilogue: Vec::new(),
                hash,
                build: recipe.to_string(),
            };
            Ok(Prepared {
                subject,
                source_text,
                node_types,
                root_node,
                error: Some(format!("{e}")),
            })
        }
    }
}
