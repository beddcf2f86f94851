//! Building C subjects: a build recipe (`gcc -O0 -g`) and a
//! content-addressed build cache.
//!
//! The cache key is the SHA-256 of the source bytes, the compiler's resolved
//! path and `--version` line, and the flags. Each entry is a directory
//! `<cache>/<key>/` holding a copy of the source under its own file name (the
//! binary is compiled *from that copy*, so the paths in the debug information
//! are stable and never point into a corpus somewhere else), the binary
//! `prog`, and the compiler's diagnostics `build.log`. Entries are built in a
//! temporary directory and renamed into place, so concurrent builds of the
//! same key cannot corrupt each other.

use doppel_core::process::{self, Sandbox};
use doppel_core::{Language, Subject};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::process::Command;

/// How to compile a subject: a compiler and its flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildRecipe {
    /// The compiler executable (`gcc`, `clang-19`), looked up on `PATH`.
    pub compiler: String,
    /// Its flags, in order (`-O0 -g`); the source and `-o` are added.
    pub flags: Vec<String>,
}

impl Default for BuildRecipe {
    fn default() -> Self {
        Self {
            compiler: "gcc".into(),
            flags: vec!["-O0".into(), "-g".into()],
        }
    }
}

impl BuildRecipe {
    /// Parses `"gcc -O0 -g"` (whitespace-separated; the first word is the compiler).
    ///
    /// Errors: an empty string.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut words = s.split_whitespace().map(str::to_string);
        let compiler = words.next().ok_or("empty build recipe: expected e.g. 'gcc -O0 -g'")?;
        Ok(Self {
            compiler,
            flags: words.collect(),
        })
    }
}

impl fmt::Display for BuildRecipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.compiler)?;
        for fl in &self.flags {
            write!(f, " {fl}")?;
        }
        Ok(())
    }
}

/// Why a subject could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The compiler is not on `PATH`.
    #[error("compiler '{compiler}' not found (apt-get install {compiler})")]
    CompilerMissing {
        /// The compiler as the recipe names it.
        compiler: String,
    },
    /// The compiler rejected the program (a subject error, not the environment's).
    #[error("does not compile:\n{stderr}")]
    CompileFailed {
        /// The compiler's diagnostics.
        stderr: String,
    },
    /// The compiler did not finish within the build timeout.
    #[error("the compiler did not finish within {0:?}")]
    Timeout(Duration),
    /// The build environment failed (the cache cannot be written, the
    /// source cannot be read, the compiler cannot be started): not the
    /// program's fault. `doing` names the operation and its path.
    #[error("build environment: {doing}: {source}")]
    Io {
        /// The operation and its path (`writing the cache entry /x/y`).
        doing: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl BuildError {
    /// Whether the failure is the build environment's rather than the
    /// program's or the compiler's: [`BuildError::Io`] (the cache cannot be
    /// written, ...), or a compiler that could not write its output (a full
    /// disk, a read-only or unwritable directory: [`ENVIRONMENT_MESSAGES`]).
    /// Such a failure is an error of the campaign; a program that does not
    /// compile (or makes the compiler hang) is an outcome of the subject.
    pub fn is_environment(&self) -> bool {
        match self {
            BuildError::Io { .. } => true,
            BuildError::CompileFailed { stderr } => ENVIRONMENT_MESSAGES.iter().any(|m| stderr.contains(m)),
            BuildError::CompilerMissing { .. } | BuildError::Timeout(_) => false,
        }
    }
}

/// Names the operation and path of an I/O failure of the build.
fn io(doing: impl FnOnce() -> String) -> impl FnOnce(std::io::Error) -> BuildError {
    move |source| BuildError::Io { doing: doing(), source }
}

/// Messages (strerror texts) with which a compiler or linker reports that
/// it could not write its output: the environment's failure.
pub const ENVIRONMENT_MESSAGES: &[&str] = &[
    "No space left on device",
    "Disk quota exceeded",
    "Read-only file system",
    "Permission denied",
    "cannot create temporary file",
];

/// A directory of built subjects, keyed by content.
#[derive(Debug, Clone)]
pub struct BuildCache {
    dir: PathBuf,
}

/// Longest a compilation may take.
pub const COMPILE_TIMEOUT: Duration = Duration::from_secs(60);

impl BuildCache {
    /// A cache rooted at `dir` (created on first build).
    /// A relative `dir` is made absolute against the current directory: the
    /// paths in the subjects and in the binaries' debug information must not
    /// depend on where a debugger runs (a relative cache left every
    /// breakpoint pending, because `-fdebug-prefix-map` did not match the
    /// compiler's absolute working directory).
    /// The directory is created here and canonicalized (no `..`, no
    /// symbolic links), as the compiler sees its working directory.
    pub fn new(dir: PathBuf) -> Self {
        Self { dir: cache_root(dir) }
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Builds `source` with `recipe` (or finds it in the cache) and returns
    /// the subject, named `name`.
    ///
    /// Errors: [`BuildError`]: the compiler is missing, the program does not
    /// compile (with the compiler's first 40 lines of diagnostics), the
    /// compiler timed out, or the cache cannot be written.
    pub async fn build(&self, source: &Path, name: &str, recipe: &BuildRecipe) -> Result<Subject, BuildError> {
        let text = tokio::fs::read(source)
            .await
            .map_err(io(|| format!("reading {}", source.display())))?;
        let file_name = source
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| "prog.c".into());
        let compiler = process::which(&recipe.compiler).ok_or_else(|| BuildError::CompilerMissing {
            compiler: recipe.compiler.clone(),
        })?;
        let version = compiler_version(&compiler).await;
        let mut h = Sha256::new();
        h.update(&text);
        h.update([0]);
        h.update(compiler.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(version.as_bytes());
        for f in &recipe.flags {
            h.update([0]);
            h.update(f.as_bytes());
        }
        let key = hex::encode(h.finalize());
        let entry = self.dir.join(&key);
        let line_count = count_lines(&text);
        let subject = |entry: &Path| Subject {
            name: name.to_string(),
            language: Language::C,
            source: entry.join(&file_name),
            source_name: file_name.clone(),
            line_count,
            binary: Some(entry.join("prog")),
            prelude: Vec::new(),
            epilogue: Vec::new(),
            hash: key.clone(),
            build: recipe.to_string(),
        };
        if entry.join("prog").is_file() && entry.join(&file_name).is_file() {
            return Ok(subject(&entry));
        }
        tokio::fs::create_dir_all(&self.dir)
            .await
            .map_err(io(|| format!("creating the build cache {}", self.dir.display())))?;
        let tmp = self.dir.join(format!(".tmp-{key}-{}", std::process::id()));
        let _ = tokio::fs::remove_dir_all(&tmp).await;
        tokio::fs::create_dir_all(&tmp)
            .await
            .map_err(io(|| format!("creating the build directory {}", tmp.display())))?;
        let result = self.compile(&tmp, &entry, &file_name, &text, &compiler, recipe).await;
        match result {
            Ok(()) => {
                // Whoever renames first wins; an existing entry is as good as ours.
                if tokio::fs::rename(&tmp, &entry).await.is_err() {
                    let _ = tokio::fs::remove_dir_all(&tmp).await;
                }
                Ok(subject(&entry))
            }
            Err(e) => {
                let _ = tokio::fs::remove_dir_all(&tmp).await;
                Err(e)
            }
        }
    }

    /// Compiles in `dir`, which is renamed to `entry` afterwards; the debug
    /// information is told so (`-fdebug-prefix-map`), so that it names the
    /// source at its final path (debuggers set breakpoints by that path).
    #[allow(clippy::too_many_arguments)]
    async fn compile(
        &self,
        dir: &Path,
        entry: &Path,
        file_name: &str,
        text: &[u8],
        compiler: &Path,
        recipe: &BuildRecipe,
    ) -> Result<(), BuildError> {
        let src = dir.join(file_name);
        tokio::fs::write(&src, text)
            .await
            .map_err(io(|| format!("writing {}", src.display())))?;
        let mut cmd = Command::new(compiler);
        cmd.current_dir(dir)
            .args(&recipe.flags)
            .arg(format!("-fdebug-prefix-map={}={}", dir.display(), entry.display()))
            .arg("-o")
            .arg("prog")
            .arg(file_name)
            .arg("-lm");
        let done = process::run(cmd, COMPILE_TIMEOUT, Sandbox::default())
            .await
            .map_err(io(|| format!("running {} in {}", compiler.display(), dir.display())))?;
        if done.timed_out {
            return Err(BuildError::Timeout(COMPILE_TIMEOUT));
        }
        tokio::fs::write(dir.join("build.log"), &done.stderr)
            .await
            .map_err(io(|| format!("writing {}", dir.join("build.log").display())))?;
        if done.code != Some(0) || !dir.join("prog").is_file() {
            // The lines that say what failed: a compiler's diagnostics can be
            // buried under pages of other output (Clang's opt-bisect log).
            // A linker's error is on the line before its summary
            // (`undefined reference to `main'` before `ld returned 1 exit
            // status`): its lines are kept too.
            let errors: Vec<&str> = done
                .stderr
                .lines()
                .filter(|l| l.contains("error") || l.contains("undefined reference") || l.contains("ld: "))
                .take(40)
                .collect();
            let stderr = if errors.is_empty() {
                let all: Vec<&str> = done.stderr.lines().collect();
                all[all.len().saturating_sub(40)..].join("\n")
            } else {
                errors.join("\n")
            };
            return Err(BuildError::CompileFailed { stderr });
        }
        Ok(())
    }
}

/// `dir` created, absolute and canonical (no `..`, no symbolic links), as
/// a compiler sees its working directory: the root of a build cache, whose
/// paths end up in debug information.
pub fn cache_root(dir: PathBuf) -> PathBuf {
    let _ = std::fs::create_dir_all(&dir);
    std::fs::canonicalize(&dir)
        .or_else(|_| std::path::absolute(&dir))
        .unwrap_or(dir)
}

fn count_lines(text: &[u8]) -> u32 {
    if text.is_empty() {
        return 0;
    }
    let n = text.iter().filter(|&&b| b == b'\n').count() as u32;
    if text.ends_with(b"\n") { n } else { n + 1 }
}

async fn compiler_version(compiler: &Path) -> String {
    let mut cmd = Command::new(compiler);
    cmd.arg("--version");
    match process::run(cmd, Duration::from_secs(10), Sandbox::NONE).await {
        Ok(done) => done.stdout.lines().next().unwrap_or("").to_string(),
        Err(_) => String::new(),
    }
}

/// The `.c` files under `paths` (files are taken as they are if they end in
/// `.c`; directories are searched recursively), sorted and deduplicated.
pub fn discover(paths: &[PathBuf]) -> Vec<PathBuf> {
    discover_where(paths, &|p| p.extension().is_some_and(|e| e == "c"))
}

/// The files under `paths` that `keep` accepts (files taken as they are,
/// directories searched recursively), sorted and deduplicated.
pub fn discover_where(paths: &[PathBuf], keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    fn walk(p: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
        if p.is_dir() {
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    walk(&e.path(), keep, out);
                }
            }
        } else if keep(p) {
            out.push(p.to_path_buf());
        }
    }
    let mut out = Vec::new();
    for p in paths {
        walk(p, keep, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn builds_once_then_hits_the_cache() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("hello.c");
        std::fs::write(
            &src,
            "#include <stdio.h>\nint main(void) {\n  puts(\"hi\");\n  return 0;\n}\n",
        )
        .unwrap();
        let cache = BuildCache::new(d.path().join("cache"));
        let s = cache.build(&src, "hello.c", &BuildRecipe::default()).await.unwrap();
        assert_eq!(s.line_count, 5);
        assert_eq!(s.source_name, "hello.c");
        assert!(s.binary.as_ref().unwrap().is_file());
        assert!(
            s.source.starts_with(d.path().join("cache")),
            "compiled from the cached copy"
        );
        // The debug information names the source at its final path, not the
        // temporary build directory.
        let bin = std::fs::read(s.binary.as_ref().unwrap()).unwrap();
        let final_dir = s.source.parent().unwrap().to_string_lossy().into_owned();
        assert!(
            bin.windows(final_dir.len()).any(|w| w == final_dir.as_bytes()),
            "DW_AT_comp_dir is the cache entry"
        );
        assert!(
            !bin.windows(5).any(|w| w == b".tmp-"),
            "no temporary path in the debug info"
        );
        let mtime = std::fs::metadata(s.binary.as_ref().unwrap())
            .unwrap()
            .modified()
            .unwrap();
        let again = cache.build(&src, "hello.c", &BuildRecipe::default()).await.unwrap();
        assert_eq!(again, s);
        assert_eq!(
            std::fs::metadata(again.binary.as_ref().unwrap())
                .unwrap()
                .modified()
                .unwrap(),
            mtime
        );
        let o2 = cache
            .build(&src, "hello.c", &BuildRecipe::parse("gcc -O2 -g").unwrap())
            .await
            .unwrap();
        assert_ne!(o2.hash, s.hash, "flags are part of the key");
    }

    #[tokio::test]
    async fn a_relative_cache_directory_still_gives_absolute_paths_in_debug_info() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("rel.c");
        std::fs::write(&src, "int main(void) {\n  return 0;\n}\n").unwrap();
        // A relative path that resolves into the temporary directory.
        let cwd = std::env::current_dir().unwrap();
        let rel = pathdiff(&d.path().join("relcache"), &cwd);
        let s = BuildCache::new(rel)
            .build(&src, "rel.c", &BuildRecipe::default())
            .await
            .unwrap();
        assert!(s.source.is_absolute() && s.binary.as_ref().unwrap().is_absolute());
        let bin = std::fs::read(s.binary.as_ref().unwrap()).unwrap();
        assert!(
            !bin.windows(5).any(|w| w == b".tmp-"),
            "no temporary path in the debug info"
        );
    }

    /// `target` relative to `base` (both absolute), with `..` as needed.
    fn pathdiff(target: &Path, base: &Path) -> PathBuf {
        let (t, b): (Vec<_>, Vec<_>) = (target.components().collect(), base.components().collect());
        let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let mut p = PathBuf::new();
        for _ in common..b.len() {
            p.push("..");
        }
        for c in &t[common..] {
            p.push(c);
        }
        p
    }

    #[tokio::test]
    async fn compile_errors_and_missing_compilers_are_reported() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("bad.c");
        std::fs::write(&src, "int main(void) { return undefined_name; }\n").unwrap();
        let cache = BuildCache::new(d.path().join("cache"));
        match cache.build(&src, "bad.c", &BuildRecipe::default()).await {
            Err(BuildError::CompileFailed { stderr }) => {
                assert!(stderr.contains("undefined_name"), "{stderr}")
            }
            other => panic!("{other:?}"),
        }
        match cache
            .build(&src, "bad.c", &BuildRecipe::parse("no-such-cc -g").unwrap())
            .await
        {
            Err(BuildError::CompilerMissing { compiler }) => assert_eq!(compiler, "no-such-cc"),
            other => panic!("{other:?}"),
        }
        assert!(BuildRecipe::parse("  ").is_err());
        assert_eq!(BuildRecipe::parse("clang -O1 -g").unwrap().to_string(), "clang -O1 -g");
    }

    #[tokio::test]
    async fn an_empty_file_keeps_the_linker_s_reason() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("empty.c");
        std::fs::write(&src, "").unwrap();
        let cache = BuildCache::new(d.path().join("cache"));
        match cache.build(&src, "empty.c", &BuildRecipe::default()).await {
            Err(BuildError::CompileFailed { stderr }) => {
                assert!(stderr.contains("undefined reference to `main'"), "{stderr}");
                assert!(stderr.contains("ld returned 1 exit status"), "{stderr}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn latin1_compiles_and_a_binary_named_c_is_a_compile_failure() {
        let d = tempfile::tempdir().unwrap();
        let cache = BuildCache::new(d.path().join("cache"));
        // "café" in Latin-1: 0xE9 is not UTF-8; gcc takes it.
        let latin1 = d.path().join("latin1.c");
        let mut text =
            b"/* caf\xe9 */\nint main(void) { const char *s = \"caf\xe9\"; return s[3] == '\\xe9' ? 0 : 1; }\n"
                .to_vec();
        text.push(b'\n');
        std::fs::write(&latin1, &text).unwrap();
        assert!(std::str::from_utf8(&text).is_err());
        let subject = cache.build(&latin1, "latin1.c", &BuildRecipe::default()).await.unwrap();
        let ran = std::process::Command::new(subject.binary.unwrap()).status().unwrap();
        assert!(ran.success());
        let binary = d.path().join("true.c");
        std::fs::copy("/bin/true", &binary).unwrap();
        match cache.build(&binary, "true.c", &BuildRecipe::default()).await {
            Err(BuildError::CompileFailed { stderr }) => assert!(!stderr.is_empty()),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_build_environment_failure_names_the_operation_and_path() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("ok.c");
        std::fs::write(&src, "int main(void) { return 0; }\n").unwrap();
        // The cache root is a regular file: nothing can be created under it.
        let cache = BuildCache::new(d.path().join("cache"));
        std::fs::remove_dir(cache.dir()).unwrap();
        std::fs::write(cache.dir(), "not a directory").unwrap();
        let e = cache.build(&src, "ok.c", &BuildRecipe::default()).await.unwrap_err();
        assert!(e.is_environment(), "{e}");
        let msg = e.to_string();
        assert!(msg.starts_with("build environment: creating the build cache "), "{msg}");
        assert!(msg.contains(&cache.dir().display().to_string()), "{msg}");
        let missing = cache
            .build(&d.path().join("gone.c"), "gone.c", &BuildRecipe::default())
            .await
            .unwrap_err();
        assert!(missing.to_string().contains("reading "), "{missing}");
        assert!(missing.to_string().contains("gone.c"), "{missing}");
    }

    #[test]
    fn discover_finds_c_files_sorted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        for f in ["b.c", "a.c", "sub/c.c", "notes.txt", "x.h"] {
            std::fs::write(d.path().join(f), "").unwrap();
        }
        let found = discover(&[d.path().to_path_buf(), d.path().join("a.c")]);
        let names: Vec<_> = found
            .iter()
            .map(|p| p.strip_prefix(d.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["a.c", "b.c", "sub/c.c"]);
    }
}
