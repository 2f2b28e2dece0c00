//! JavaScript game modules (`game-module.md`): a game written as one ES
//! module, run by an embedded QuickJS engine behind [`gaos_kernel::Game`].
//!
//! ```no_run
//! use gaos_module::{ModuleGame, ModuleLimits};
//! use gaos_kernel::Game;
//!
//! let game = ModuleGame::load("game.mjs".as_ref(), &ModuleLimits::default())?;
//! println!("{} ({})", game.game_ref().id, game.identity().sha256);
//! # Ok::<(), gaos_module::ModuleError>(())
//! ```
//!
//! The engine is a sandbox: no clock (`Date` throws), no randomness
//! (`Math.random` throws), no timers, no I/O, no network, no packages, no
//! dynamic `import()`; `TextEncoder`/`TextDecoder`, `structuredClone`,
//! `atob`/`btoa` and a bounded `console` (to `tracing`, target
//! `gaos_module::console`) are provided. Each call runs under
//! [`ModuleLimits::call_time_limit`], each engine instance under
//! [`ModuleLimits::memory_limit_bytes`] and each value read out of it under
//! [`ModuleLimits::max_value_bytes`]; crossing any is a
//! [`gaos_kernel::GameError`] naming the module and the call (after a time
//! or memory limit the instance is replaced).
//!
//! Sessions share nothing the module can observe: the built-ins are frozen
//! before any module code runs, and a game isolated for a session
//! ([`gaos_kernel::Game::isolate`]) calls its own instance of the module's
//! files (`realm.rs`).
//!
//! Values cross the boundary as JSON text: Rust hands JavaScript canonical
//! JSON (`JSON.parse`); JavaScript hands back `JSON.stringify` output after
//! checking the reference value domain (kernel.md §1.1) with the path of the
//! first offending part (`view(state) of acme/duel: .hand[2] is undefined`).
//!
//! Identity: see [`ModuleIdentity`] for the exact digest construction.

mod adapter;
mod crossing;
mod engine;
mod error;
mod game;
mod module_core;
mod pool;
mod realm;
mod reducer;
mod sources;

use std::path::Path;
use std::time::Duration;

pub use adapter::{ReplayAdapter, load_replay_adapter};
pub use error::{BUNDLE_HINT, ModuleError};
pub use game::{MAX_ACTION_NUMBER, MAX_RENDER_BYTES, ModuleGame};
pub use reducer::ModuleState;
pub use sources::{ModuleFile, ModuleIdentity};

/// The sandbox prelude (see `prelude.js`).
pub(crate) const PRELUDE: &str = include_str!("prelude.js");

/// Resource limits of a module's engine instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleLimits {
    /// Wall-clock time one call (and the module's top level at load) may run.
    pub call_time_limit: Duration,
    /// Memory one engine instance may allocate (its heap, every state
    /// and view it builds during a call included).
    pub memory_limit_bytes: usize,
    /// The most one value read out of the engine may take, as JSON text:
    /// each view, `viewFor`, `replayMetrics`, mapped action, legal-action
    /// list and `render` answer. Charged while the value is read (a part the
    /// engine shares counts each time it appears); a larger value fails the
    /// call like any other limit.
    pub max_value_bytes: usize,
}

/// [`ModuleLimits::max_value_bytes`] by default: 4 MiB.
pub const DEFAULT_MAX_VALUE_BYTES: usize = 4 * 1024 * 1024;

impl Default for ModuleLimits {
    /// 1000 ms per call, 64 MiB per engine instance, 4 MiB per value.
    fn default() -> Self {
        ModuleLimits {
            call_time_limit: Duration::from_millis(1000),
            memory_limit_bytes: 64 * 1024 * 1024,
            max_value_bytes: DEFAULT_MAX_VALUE_BYTES,
        }
    }
}

/// The identity of the module at `path` (its files and digest), without
/// binding or calling any export. Finding the files a module imports means
/// compiling and linking them, which also runs their top level (in the
/// sandbox, under `limits`).
pub fn module_digest(path: &Path) -> Result<ModuleIdentity, ModuleError> {
    let sources = sources::Sources::discover(path)?;
    engine::Engine::new(&sources, &ModuleLimits::default(), engine::Binding::Digest)?;
    Ok(sources.identity())
}
