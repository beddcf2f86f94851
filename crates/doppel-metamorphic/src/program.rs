//! Programs of metamorphic tests: the text of each round's program, its
//! subject (C: compiled with the original's recipe through the build cache;
//! JavaScript: the original's prelude and epilogue around the new source),
//! its lines' AST node types, and its coverage for dead-code removal.

use doppel_core::process::Limits;
use doppel_core::{Language, Subject};
use doppel_lang::c::{BuildCache, BuildRecipe, CSyntax};
use doppel_lang::js::JsSyntax;
use doppel_lang::transform::{Coverage, ProgramTransformation, ProgramTransformationKind};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::time::Duration;

/// A program of a metamorphic test, ready for a debugger.
#[derive(Debug, Clone)]
pub struct Program {
    /// The built program (source path, binary, hash).
    pub subject: Subject,
    /// Its source text.
    pub text: String,
    /// AST node type per line (index = line - 1).
    pub node_types: Vec<String>,
    /// Node type of lines without code (the root).
    pub root_node: String,
}

impl Program {
    /// Reads the node types of `text` for `subject`.
    pub fn new(subject: Subject, text: String) -> Self {
        let (node_types, root_node) = node_types(subject.language, &text);
        Self {
            subject,
            text,
            node_types,
            root_node,
        }
    }

    /// The node type of a line (the root for `None` or out of range).
    pub fn node_type(&self, line: Option<u32>) -> String {
        line.and_then(|l| self.node_types.get((l as usize).wrapping_sub(1)))
            .cloned()
            .unwrap_or_else(|| self.root_node.clone())
    }

    /// Lines with code (whose node type is not the root's), 1-based.
    pub fn code_lines(&self) -> Vec<u32> {
        self.node_types
            .iter()
            .enumerate()
            .filter(|(_, t)| **t != self.root_node)
            .map(|(i, _)| i as u32 + 1)
            .collect()
    }
}

fn node_types(language: Language, text: &str) -> (Vec<String>, String) {
    match language {
        Language::C => {
            let s = CSyntax::parse(text);
            (
                (1..=s.line_count()).map(|l| s.ast_node_type(l)).collect(),
                s.ast_node_type(0),
            )
        }
        Language::JavaScript => {
            let s = JsSyntax::parse(text);
            (
                (1..=s.line_count()).map(|l| s.ast_node_type(l)).collect(),
                s.ast_node_type(0),
            )
        }
        // Not a metamorphic language (Rust is `doppel debuginfo` only): no
        // line counts as code.
        Language::Rust => (
            vec!["source_file".to_string(); text.lines().count()],
            "source_file".to_string(),
        ),
    }
}

/// The program transformations of `language`, one per kind.
pub fn transformations(language: Language) -> Vec<Box<dyn ProgramTransformation>> {
    match language {
        Language::C => doppel_lang::c::transform::all(),
        Language::JavaScript => doppel_lang::js::transform::all(),
        Language::Rust => Vec::new(),
    }
}

/// The transformation of `kind` for `language`, if it has one.
pub fn transformation(language: Language, kind: ProgramTransformationKind) -> Option<Box<dyn ProgramTransformation>> {
    transformations(language).into_iter().find(|t| t.kind() == kind)
}

/// Builds the programs of follow-up runs and takes coverage.
#[derive(Debug, Clone)]
pub struct Builder {
    /// The C build cache.
    cache: BuildCache,
    /// Where transformed sources are written (one directory per content hash).
    sources: PathBuf,
    /// Limits for the coverage run of a program.
    pub limits: Limits,
    /// Longest coverage run.
    pub timeout: Duration,
}

impl Builder {
    /// A builder that writes transformed sources under `sources` and builds
    /// C programs into the build cache at `c_cache`. Pass the cache the
    /// original programs were built in: a C program sees its own path
    /// (`argv[0]`) on its stack, so a binary at a path of another length
    /// shifts every stack address and the garbage in uninitialized locals
    /// (false warnings seen with a separate cache).
    pub fn new(sources: PathBuf, c_cache: PathBuf, limits: Limits) -> Self {
        // Debuggers and loaders run elsewhere: paths must not be relative
        // (a relative store path gave follow-up programs node could not find).
        let absolute = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
        Self {
            cache: BuildCache::new(absolute(c_cache)),
            sources: absolute(sources),
            limits,
            timeout: Duration::from_secs(10),
        }
    }

    /// The program `text` in place of `original`'s source: same file name,
    /// same build recipe (C) or the same prelude and epilogue (JavaScript).
    ///
    /// Errors: the file cannot be written, or (C) the program does not
    /// compile, with the compiler's diagnostics.
    pub async fn build(&self, original: &Subject, text: &str) -> Result<Program, String> {
        let hash = hex::encode(Sha256::digest(format!("{}\0{}", original.hash, text).as_bytes()));
        let dir = self.sources.join(&hash[..32]);
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let path = dir.join(&original.source_name);
        tokio::fs::write(&path, text)
            .await
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        let line_count = doppel_lang::js::count_lines(text);
        let subject = match original.language {
            Language::C => {
                let recipe = BuildRecipe::parse(&original.build)?;
                self.cache
                    .build(&path, &original.name, &recipe)
                    .await
                    .map_err(|e| format!("the transformed program does not build: {e}"))?
            }
            Language::JavaScript => {
                let errors = doppel_lang::js::syntax_errors(text);
                if !errors.is_empty() {
                    return Err(format!("the transformed program does not parse: {}", errors.join("; ")));
                }
                Subject {
                    source: path,
                    line_count,
                    hash,
                    ..original.clone()
                }
            }
            Language::Rust => return Err("metamorphic testing does not support Rust programs".into()),
        };
        Ok(Program::new(subject, text.to_string()))
    }

    /// The code `program` leaves unexecuted when it runs on its own (C:
    /// gcov of a `--coverage` build; JavaScript: V8's block coverage in node).
    ///
    /// Errors: the coverage run failed (does not build, crashed without
    /// writing coverage, timed out), with the reason.
    pub async fn coverage(&self, program: &Program) -> Result<Coverage, String> {
        match program.subject.language {
            Language::C => doppel_lang::c::coverage::collect(&program.subject.source, self.timeout, self.limits).await,
            Language::JavaScript => {
                doppel_lang::js::coverage::collect(&program.subject, self.timeout, self.limits).await
            }
            Language::Rust => Err("metamorphic testing does not support Rust programs".into()),
        }
    }
}
