//! Finding and preparing subjects for debugger campaigns: C files are built
//! into the content-addressed build cache ([`crate::c::BuildCache`]),
//! JavaScript files get their prelude and epilogue scripts in the JavaScript
//! cache ([`crate::js::JsCache`]); each line's AST node type is precomputed
//! for the equivalence classes (DBDB section 3.4). A file that cannot be a
//! subject is kept with its reason ([`Prepared::error`]).

use crate::c::{BuildCache, BuildRecipe, CSyntax, discover};
use crate::js::{JsCache, JsSyntax, discover_js};
use anyhow::Context;
use doppel_core::Language;
use doppel_core::Subject;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A subject ready for runs: built (or with the reason it could not be), with
/// the AST node type of every line precomputed.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The subject (for one that could not be built: no binary, and a hash
    /// over the source and build recipe).
    pub subject: Subject,
    /// The source text (stored with each run so that it can be replayed).
    pub source_text: String,
    /// AST node type per line (index = line - 1).
    pub node_types: Vec<String>,
    /// Node type for "no line" (the translation unit).
    pub root_node: String,
    /// Why the subject cannot be run (compile error), if so: an outcome of
    /// the subject, recorded as such. (A failure of the environment, such
    /// as an unwritable cache, is an error of preparation instead.)
    pub error: Option<String>,
}

impl Prepared {
    /// The node type of a line, the root node for `None` or out-of-range lines.
    pub fn node_type(&self, line: Option<u32>) -> String {
        line.and_then(|l| self.node_types.get((l as usize).wrapping_sub(1)))
            .cloned()
            .unwrap_or_else(|| self.root_node.clone())
    }
}

/// The bundled corpus of `language`: `./corpus/c` (or `js`), else the one
/// next to the source tree.
pub fn default_corpus_for(language: Language) -> PathBuf {
    let dir = match language {
        Language::C => "corpus/c",
        Language::JavaScript => "corpus/js",
        // Rust programs are `doppel debuginfo` seeds only.
        Language::Rust => "corpus/debuginfo",
    };
    let here = PathBuf::from(dir);
    if here.is_dir() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir)
}

/// The JavaScript cache directory (next to the C build cache).
pub fn js_cache_dir(db: &str) -> PathBuf {
    cache_dir(db).join("js")
}

/// Which of the discovered programs (sorted by path) a campaign uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Selection {
    /// Every program.
    #[default]
    All,
    /// The first `n` in path order (`--limit`).
    First(usize),
    /// `n` programs spread evenly over the path order (`--sample`): program
    /// `floor(i * total / n)` for `i` in `0..n`, so a large suite such as
    /// test262 is sampled from every directory, deterministically.
    Spread(usize),
}

impl Selection {
    /// From the `--limit` and `--sample` flags (`--sample` wins).
    pub fn from_flags(limit: Option<usize>, sample: Option<usize>) -> Self {
        match (sample, limit) {
            (Some(n), _) => Selection::Spread(n),
            (None, Some(n)) => Selection::First(n),
            (None, None) => Selection::All,
        }
    }

    /// Keeps the selected files of `files` (sorted), in order.
    pub fn apply<T>(self, files: Vec<T>) -> Vec<T> {
        let total = files.len();
        match self {
            Selection::All => files,
            Selection::First(n) => files.into_iter().take(n).collect(),
            Selection::Spread(n) if n >= total => files,
            Selection::Spread(n) => {
                let mut keep = (0..n).map(|i| i * total / n).peekable();
                files
                    .into_iter()
                    .enumerate()
                    .filter_map(|(j, f)| {
                        if keep.peek() == Some(&j) {
                            keep.next();
                            Some(f)
                        } else {
                            None
                        }
                    })
                    .collect()
            }
        }
    }
}

/// Discovers and prepares the subjects of `language` under `paths`:
/// C through [`prepare`], JavaScript through [`prepare_js`].
pub async fn prepare_for(
    language: Language,
    paths: &[PathBuf],
    db: &str,
    recipe: &BuildRecipe,
    limit: Selection,
) -> anyhow::Result<Vec<Arc<Prepared>>> {
    match language {
        Language::C => prepare(paths, &cache_dir(db), recipe, limit).await,
        Language::JavaScript => prepare_js(paths, &js_cache_dir(db), limit),
        Language::Rust => anyhow::bail!("Rust programs are checked by `doppel debuginfo` only"),
    }
}

/// Discovers the `.js` files under `paths` and prepares each (determinism
/// prelude; test262 harness; SunSpider `run()` epilogue). A file that cannot
/// be a subject (syntax error, unsupported test262 test) is kept with its
/// reason, so that its runs are recorded as subject errors.
///
/// Errors: no `.js` file found.
pub fn prepare_js(paths: &[PathBuf], cache: &Path, limit: Selection) -> anyhow::Result<Vec<Arc<Prepared>>> {
    let files = discover_js(paths);
    if files.is_empty() {
        anyhow::bail!("no .js files under {}", show_paths(paths));
    }
    let files = limit.apply(files);
    let cache = JsCache::new(cache.to_path_buf());
    let mut out = Vec::new();
    for f in files {
        let name = subject_name(paths, &f);
        out.push(Arc::new(prepare_js_one(&cache, &f, &name)?));
    }
    Ok(out)
}

/// Prepares one JavaScript subject (or records why it cannot be one).
///
/// Errors: the source file cannot be read, or the JavaScript cache cannot
/// be written ([`crate::js::JsSubjectError::is_environment`]: not the
/// file's outcome).
pub fn prepare_js_one(cache: &JsCache, file: &Path, name: &str) -> anyhow::Result<Prepared> {
    // Not UTF-8 is the subject's outcome (`JsCache::prepare` says so), not
    // an abort of the campaign: the text is read lossily for the line types.
    let source_text = read_lossy(file)?;
    let syntax = JsSyntax::parse(&source_text);
    let node_types = (1..=syntax.line_count()).map(|l| syntax.ast_node_type(l)).collect();
    let root_node = syntax.ast_node_type(0);
    let (subject, error) = match cache.prepare(file, name) {
        Ok(subject) => (subject, None),
        Err(e) if e.is_environment() => {
            return Err(anyhow::Error::new(e).context(format!("preparing {}", file.display())));
        }
        Err(e) => (unprepared_js(file, name, &syntax, &source_text), Some(e.to_string())),
    };
    Ok(Prepared {
        subject,
        source_text,
        node_types,
        root_node,
        error,
    })
}

/// The subject of a JavaScript file that could not be prepared: no
/// scripts, hashed over its source.
fn unprepared_js(file: &Path, name: &str, syntax: &JsSyntax, source_text: &str) -> Subject {
    Subject {
        name: name.to_string(),
        language: Language::JavaScript,
        source: file.to_path_buf(),
        source_name: file_name(file),
        line_count: syntax.line_count(),
        binary: None,
        prelude: Vec::new(),
        epilogue: Vec::new(),
        hash: hex::encode(Sha256::digest(source_text.as_bytes())),
        build: "js".into(),
    }
}

fn file_name(file: &Path) -> String {
    file.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn show_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
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
    limit: Selection,
) -> anyhow::Result<Vec<Arc<Prepared>>> {
    let files = discover(paths);
    if files.is_empty() {
        anyhow::bail!("no .c files under {}", show_paths(paths));
    }
    let files = limit.apply(files);
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

/// The text of `file`, with bytes that are not UTF-8 replaced by U+FFFD
/// (a Latin-1 C file compiles with gcc; a binary renamed `.c` fails to
/// compile; neither may abort a campaign).
///
/// Errors: the file cannot be read.
fn read_lossy(file: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Builds one subject (or records why it cannot be built).
///
/// Errors: the source file cannot be read, or the build environment failed
/// ([`crate::c::BuildError::is_environment`]: an unwritable cache is
/// not the program's outcome).
pub async fn prepare_one(
    cache: &BuildCache,
    file: &Path,
    name: &str,
    recipe: &BuildRecipe,
) -> anyhow::Result<Prepared> {
    let source_text = read_lossy(file)?;
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
        Err(e) if e.is_environment() => Err(anyhow::Error::new(e).context(format!("building {}", file.display()))),
        Err(e) => {
            let hash = hex::encode(Sha256::digest(format!("{}\0{}", source_text, recipe).as_bytes()));
            let subject = Subject {
                name: name.to_string(),
                language: doppel_core::Language::C,
                source: file.to_path_buf(),
                source_name: file_name(file),
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

#[cfg(test)]
mod tests {
    use super::Selection;

    #[test]
    fn spread_sample_is_even_and_deterministic() {
        let files: Vec<u32> = (0..10).collect();
        assert_eq!(Selection::Spread(3).apply(files.clone()), vec![0, 3, 6]);
        assert_eq!(Selection::Spread(5).apply(files.clone()), vec![0, 2, 4, 6, 8]);
        assert_eq!(Selection::Spread(20).apply(files.clone()), files);
        assert_eq!(Selection::First(2).apply(files.clone()), vec![0, 1]);
        assert_eq!(Selection::All.apply(files.clone()), files);
        assert_eq!(Selection::from_flags(Some(2), Some(3)), Selection::Spread(3));
    }
}
