//! [`ModuleError`]: why a game module could not be loaded.

use std::path::PathBuf;

use thiserror::Error;

/// The one-line bundling step a module with package imports (or TypeScript)
/// needs before the engine can run it.
pub const BUNDLE_HINT: &str = "npx esbuild game.ts --bundle --format=esm --outfile=game.mjs";

/// A module that cannot be loaded. Each message names the file and, where
/// one is at fault, the export or field.
#[derive(Debug, Error)]
pub enum ModuleError {
    /// The entry or an imported file cannot be read.
    #[error("{path}: cannot read the game module: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file is not UTF-8 text.
    #[error("{path}: a game module must be UTF-8 text")]
    NotUtf8 { path: PathBuf },
    /// A TypeScript file (the engine runs JavaScript only).
    #[error("{path}: TypeScript is not run directly; bundle it to one JavaScript module first: {BUNDLE_HINT}")]
    TypeScript { path: PathBuf },
    /// `import … from "some-package"` (or `node:fs`): only local files resolve.
    #[error(
        "{importer}: imports {specifier:?}, which is a package, not a local file; only relative imports (\"./rules.mjs\") resolve, so bundle packages into the module first: {BUNDLE_HINT}"
    )]
    BareImport { importer: PathBuf, specifier: String },
    /// The module does not compile (syntax error) or its top level threw.
    #[error("{path}: {message}")]
    Evaluate { path: PathBuf, message: String },
    /// A missing or mistyped export or field (`export default.reducer.advance must be a function`).
    #[error("{path}: {message}")]
    Shape { path: PathBuf, message: String },
    /// Loading ran past a limit (an endless top-level loop, a huge allocation).
    #[error("{path}: loading the module {message}")]
    Limit { path: PathBuf, message: String },
    /// The engine itself failed (cannot create a runtime).
    #[error("{path}: the JavaScript engine failed: {message}")]
    Engine { path: PathBuf, message: String },
}
