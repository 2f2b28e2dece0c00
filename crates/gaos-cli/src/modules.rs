//! Game modules on the command line: `--game FILE.mjs`, `--games DIR`,
//! `--adapter FILE`, `--game-module FILE` load JavaScript games into the
//! command's registry, under the limits of `--module-call-ms`,
//! `--module-memory-mb` and `--module-max-value-bytes`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use gaos_games::{GameOrigin, GameRegistry, replacement_notice};
use gaos_kernel::Game;
use gaos_module::{ModuleGame, ModuleLimits};

/// The bounds of every game module a command loads.
#[derive(Debug, Clone, clap::Args)]
pub struct ModuleLimitArgs {
    /// Longest one call into a game module may run, in milliseconds; a
    /// call that runs longer fails (and a host revokes its session).
    #[arg(long, default_value_t = 1_000)]
    pub module_call_ms: u64,
    /// Memory one game module engine may allocate, in MiB.
    #[arg(long, default_value_t = 64)]
    pub module_memory_mb: u64,
    /// The most one value a game module answers (a view, a seat's view,
    /// replayMetrics, a mapped action, legal actions, a picture) may take as
    /// JSON text, in bytes, counted while it is read out of the engine; a
    /// larger one fails the call (a host revokes the session).
    #[arg(long, default_value_t = gaos_module::DEFAULT_MAX_VALUE_BYTES)]
    pub module_max_value_bytes: usize,
}

impl ModuleLimitArgs {
    /// The limits, refusing zero (a module could not even load).
    pub fn limits(&self) -> Result<ModuleLimits, String> {
        if self.module_call_ms == 0 || self.module_memory_mb == 0 || self.module_max_value_bytes == 0 {
            return Err("--module-call-ms, --module-memory-mb and --module-max-value-bytes must be at least 1".into());
        }
        let memory = usize::try_from(self.module_memory_mb.saturating_mul(1024 * 1024))
            .map_err(|_| format!("--module-memory-mb {} is too large for this machine", self.module_memory_mb))?;
        Ok(ModuleLimits {
            call_time_limit: Duration::from_millis(self.module_call_ms),
            memory_limit_bytes: memory,
            max_value_bytes: self.module_max_value_bytes,
        })
    }
}

/// True when `name` names a game module file rather than a game id.
pub fn is_module_path(name: &str) -> bool {
    let path = Path::new(name);
    matches!(path.extension().and_then(|e| e.to_str()), Some("mjs" | "js" | "ts" | "mts")) || path.is_file()
}

/// Load the module at `path` into `registry` (replacing a game of the same
/// id, with the one-line notice on stderr) and return its game id.
pub fn add_module(registry: &mut GameRegistry, path: &Path, limits: &ModuleLimits) -> Result<String, String> {
    let game = ModuleGame::load(path, limits).map_err(|e| e.to_string())?;
    let id = game.game_ref().id;
    let sha256 = game.identity().sha256.clone();
    let module = GameOrigin::Module { path: path.to_path_buf(), sha256: sha256.clone() };
    match registry.register_module(Arc::new(game), path.to_path_buf(), sha256) {
        Ok(Some(replaced)) => eprintln!("{}", replacement_notice(&id, &module, &replaced.origin)),
        Ok(None) => {}
        Err(e) => return Err(format!("{}: {e}", path.display())),
    }
    Ok(id)
}

/// [`add_module`], returning the game id and the module's SHA-256.
pub fn add_module_with_sha(
    registry: &mut GameRegistry,
    path: &Path,
    limits: &ModuleLimits,
) -> Result<(String, Option<String>), String> {
    let id = add_module(registry, path, limits)?;
    let sha256 = registry.origin(&id).and_then(GameOrigin::module_sha256).map(str::to_owned);
    Ok((id, sha256))
}

/// True when a benchmark manifest's `benchmark.adapter` names a game module
/// file (a relative or absolute path, or a `.mjs`/`.js` name) instead of a game id.
pub fn is_module_reference(adapter: &str) -> bool {
    adapter.starts_with("./") || adapter.starts_with("../") || adapter.starts_with('/') || {
        matches!(Path::new(adapter).extension().and_then(|e| e.to_str()), Some("mjs" | "js"))
    }
}

/// The game module that verifies a bundle whose manifest names `adapter`:
/// `--adapter FILE` when given, else the module `adapter` names beside the
/// independent `--manifest FILE`; `None` for a game id. A module adapter
/// with neither is a usage error (`what`: "benchmark", "tournament").
pub fn verifier_module(
    adapter: &str,
    adapter_file: Option<&Path>,
    manifest_file: Option<&Path>,
    what: &str,
) -> Result<Option<PathBuf>, String> {
    match (adapter_file, manifest_file) {
        (Some(file), _) => Ok(Some(file.to_path_buf())),
        (None, Some(path)) if is_module_reference(adapter) => {
            Ok(Some(path.parent().unwrap_or(Path::new("")).join(adapter)))
        }
        (None, None) if is_module_reference(adapter) => Err(format!(
            "this {what}'s game is the game module {adapter:?}: pass --adapter FILE (or --manifest FILE beside it)"
        )),
        (None, _) => Ok(None),
    }
}

/// The module files of `dir` (`*.mjs` and `*.js`, not in subdirectories:
/// those are the modules' own imports), in name order.
pub fn modules_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read --games {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("cannot read --games {}: {e}", dir.display()))?.path();
        let module = matches!(path.extension().and_then(|e| e.to_str()), Some("mjs" | "js"));
        if module && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// `registry` plus the modules `files` and those of `dirs`.
pub fn with_modules(
    registry: &GameRegistry,
    files: &[PathBuf],
    dirs: &[PathBuf],
    limits: &ModuleLimitArgs,
) -> Result<GameRegistry, String> {
    if files.is_empty() && dirs.is_empty() {
        return Ok(registry.clone());
    }
    let limits = limits.limits()?;
    let mut registry = registry.clone();
    let mut all = files.to_vec();
    for dir in dirs {
        all.extend(modules_in(dir)?);
    }
    for file in &all {
        add_module(&mut registry, file, &limits)?;
    }
    Ok(registry)
}
