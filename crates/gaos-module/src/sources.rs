//! The files a module is made of: import resolution, the bytes each engine
//! compiles, and the module's identity digest.
//!
//! The first engine of a module reads its files from disk and records them;
//! every later engine of the same module compiles exactly those recorded
//! bytes, so a file edited on disk after loading can never make two engines
//! of one `ModuleGame` disagree (and the recorded bytes are what the digest
//! covers).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::{Ctx, Module};
use sha2::{Digest, Sha256};

use crate::error::ModuleError;
use crate::realm::split_name;

/// Extensions the engine refuses with the bundling hint.
const TYPESCRIPT: [&str; 4] = ["ts", "mts", "cts", "tsx"];

/// A module's identity: its entry file and one SHA-256 over every local file
/// it is made of.
///
/// The digest is SHA-256 over the UTF-8 text formed by one line per file,
/// files sorted by relative path (byte order):
/// `<relative path> NUL <lowercase hex SHA-256 of the file's bytes> LF`.
/// The relative path is taken from the entry file's directory, with `/`
/// separators and `..` for files above it (so moving the whole directory
/// keeps the digest, renaming a file changes it). The construction does not
/// depend on import order, and any change to any byte of any file changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleIdentity {
    /// The entry file (absolute, normalised).
    pub entry: PathBuf,
    /// The digest described above, lowercase hex.
    pub sha256: String,
    /// Every file, sorted by relative path.
    pub files: Vec<ModuleFile>,
}

/// One file of a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleFile {
    /// Path relative to the entry's directory, `/`-separated.
    pub path: String,
    /// SHA-256 of the file's bytes, lowercase hex.
    pub sha256: String,
}

/// Why resolving or loading a file failed; JavaScript only sees a generic
/// exception, so the precise reason is kept here for the load error.
#[derive(Debug)]
pub(crate) enum SourceProblem {
    Read(PathBuf, std::io::Error),
    NotUtf8(PathBuf),
    TypeScript(PathBuf),
    BareImport { importer: PathBuf, specifier: String },
    DynamicImport { specifier: String },
}

impl SourceProblem {
    pub(crate) fn into_error(self) -> Result<ModuleError, String> {
        Ok(match self {
            SourceProblem::Read(path, source) => ModuleError::Read { path, source },
            SourceProblem::NotUtf8(path) => ModuleError::NotUtf8 { path },
            SourceProblem::TypeScript(path) => ModuleError::TypeScript { path },
            SourceProblem::BareImport { importer, specifier } => ModuleError::BareImport { importer, specifier },
            SourceProblem::DynamicImport { specifier } => return Err(dynamic_import_message(&specifier)),
        })
    }
}

pub(crate) fn dynamic_import_message(specifier: &str) -> String {
    format!("import({specifier:?}): dynamic import is not available to game modules (import local files statically)")
}

#[derive(Debug, Default)]
struct Book {
    /// Module name (absolute normalised path) → source text.
    files: BTreeMap<String, Arc<str>>,
    /// Set once the module graph is loaded: later imports are dynamic.
    sealed: bool,
    /// Read from disk (first engine) or only from `files` (later engines).
    from_disk: bool,
    problem: Option<SourceProblem>,
}

/// The shared record of a module's files.
#[derive(Debug, Clone)]
pub(crate) struct Sources {
    entry: PathBuf,
    book: Arc<Mutex<Book>>,
}

impl Sources {
    /// Sources for `entry`, read from disk as the first engine imports them.
    pub(crate) fn discover(entry: &Path) -> Result<Sources, ModuleError> {
        let absolute = std::path::absolute(entry).map_err(|source| ModuleError::Read { path: entry.into(), source })?;
        let entry = normalise(&absolute);
        let book = Book { from_disk: true, ..Book::default() };
        Ok(Sources { entry, book: Arc::new(Mutex::new(book)) })
    }

    /// The same recorded files for another engine (no disk access).
    pub(crate) fn replay(&self) -> Sources {
        let book = self.lock();
        let copy = Book { files: book.files.clone(), sealed: false, from_disk: false, problem: None };
        Sources { entry: self.entry.clone(), book: Arc::new(Mutex::new(copy)) }
    }

    fn lock(&self) -> MutexGuard<'_, Book> {
        // A panic while holding the lock leaves the map intact.
        self.book.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn entry(&self) -> &Path {
        &self.entry
    }

    pub(crate) fn entry_name(&self) -> String {
        self.entry.to_string_lossy().into_owned()
    }

    /// The entry's source, read (and recorded) like any import.
    pub(crate) fn entry_source(&self) -> Result<Arc<str>, ModuleError> {
        let name = self.entry_name();
        self.source(&name).map_err(|problem| match problem.into_error() {
            Ok(error) => error,
            Err(message) => ModuleError::Evaluate { path: self.entry.clone(), message },
        })
    }

    fn source(&self, name: &str) -> Result<Arc<str>, SourceProblem> {
        let mut book = self.lock();
        if let Some(text) = book.files.get(name) {
            return Ok(Arc::clone(text));
        }
        let path = PathBuf::from(name);
        if path.extension().and_then(|e| e.to_str()).is_some_and(|e| TYPESCRIPT.contains(&e)) {
            return Err(SourceProblem::TypeScript(path));
        }
        if !book.from_disk {
            // Later engines only ever import what the first one recorded.
            return Err(SourceProblem::Read(path, std::io::Error::other("not part of the module as first loaded")));
        }
        let bytes = std::fs::read(&path).map_err(|e| SourceProblem::Read(path.clone(), e))?;
        let text: Arc<str> = String::from_utf8(bytes).map_err(|_| SourceProblem::NotUtf8(path))?.into();
        book.files.insert(name.to_owned(), Arc::clone(&text));
        Ok(text)
    }

    /// After the module graph loaded: every further import is a dynamic one.
    pub(crate) fn seal(&self) {
        self.lock().sealed = true;
    }

    /// Let static imports resolve again while a new module instance of a
    /// realm loads (`realm.rs`); sealed again right after.
    pub(crate) fn unseal(&self) {
        self.lock().sealed = false;
    }

    /// The reason the last resolve or load failed, if one did.
    pub(crate) fn take_problem(&self) -> Option<SourceProblem> {
        self.lock().problem.take()
    }

    fn record(&self, problem: SourceProblem) {
        let mut book = self.lock();
        if book.problem.is_none() {
            book.problem = Some(problem);
        }
    }

    /// The identity of the files recorded so far (call after loading).
    pub(crate) fn identity(&self) -> ModuleIdentity {
        let book = self.lock();
        let base = self.entry.parent().unwrap_or(Path::new("/"));
        let mut files: Vec<ModuleFile> = book
            .files
            .iter()
            .map(|(name, text)| ModuleFile {
                path: relative(base, Path::new(name)),
                sha256: hex(&Sha256::digest(text.as_bytes())),
            })
            .collect();
        files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        let mut hasher = Sha256::new();
        for file in &files {
            hasher.update(file.path.as_bytes());
            hasher.update([0]);
            hasher.update(file.sha256.as_bytes());
            hasher.update(b"\n");
        }
        ModuleIdentity { entry: self.entry.clone(), sha256: hex(&hasher.finalize()), files }
    }

    pub(crate) fn resolver(&self) -> SourceResolver {
        SourceResolver(self.clone())
    }

    pub(crate) fn loader(&self) -> SourceLoader {
        SourceLoader(self.clone())
    }
}

fn hex(bytes: &[u8]) -> String {
    gaos_json::hex_encode(bytes)
}

/// Lexical normalisation (`a/./b/../c` → `a/c`); symlinks are not followed.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` relative to the directory `base`, `/`-separated, `..` above it.
fn relative(base: &Path, path: &Path) -> String {
    let base: Vec<Component> = base.components().collect();
    let target: Vec<Component> = path.components().collect();
    let common = base.iter().zip(&target).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); base.len() - common];
    parts.extend(target[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}

fn is_relative_specifier(specifier: &str) -> bool {
    specifier.starts_with("./") || specifier.starts_with("../") || specifier.starts_with('/')
}

/// Resolves `./x.mjs` against the importing file; refuses everything else.
pub(crate) struct SourceResolver(Sources);

impl Resolver for SourceResolver {
    fn resolve<'js>(
        &mut self,
        _ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        let sources = &self.0;
        if sources.lock().sealed {
            sources.record(SourceProblem::DynamicImport { specifier: name.to_owned() });
            return Err(rquickjs::Error::new_resolving_message(base, name, dynamic_import_message(name)));
        }
        if !is_relative_specifier(name) {
            sources.record(SourceProblem::BareImport { importer: PathBuf::from(base), specifier: name.to_owned() });
            return Err(rquickjs::Error::new_resolving_message(base, name, "package imports must be bundled first"));
        }
        // An import resolves within the importer's realm instance.
        let (realm, base) = split_name(base);
        let importer = Path::new(base);
        let joined = match importer.parent() {
            Some(dir) if !name.starts_with('/') => dir.join(name),
            _ => PathBuf::from(name),
        };
        Ok(format!("{realm}{}", normalise(&joined).to_string_lossy()))
    }
}

/// Compiles a resolved file from the recorded (or freshly read) source.
pub(crate) struct SourceLoader(Sources);

impl Loader for SourceLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, rquickjs::module::Declared>> {
        match self.0.source(split_name(name).1) {
            Ok(text) => Module::declare(ctx.clone(), name, text.as_bytes()),
            Err(problem) => {
                self.0.record(problem);
                Err(rquickjs::Error::new_loading_message(name, "cannot load this file"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise_and_relativise() {
        assert_eq!(normalise(Path::new("/a/./b/../c.mjs")), PathBuf::from("/a/c.mjs"));
        assert_eq!(relative(Path::new("/a/b"), Path::new("/a/b/c.mjs")), "c.mjs");
        assert_eq!(relative(Path::new("/a/b"), Path::new("/a/lib/x.mjs")), "../lib/x.mjs");
        assert_eq!(relative(Path::new("/a/b"), Path::new("/a/b/d/e.mjs")), "d/e.mjs");
    }

    #[test]
    fn only_relative_specifiers_are_local_files() {
        assert!(is_relative_specifier("./x.mjs"));
        assert!(is_relative_specifier("../x.mjs"));
        assert!(!is_relative_specifier("lodash"));
        assert!(!is_relative_specifier("node:fs"));
        assert!(!is_relative_specifier(".hidden"));
    }
}
