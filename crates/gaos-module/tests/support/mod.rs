//! Shared helpers of the gaos-module tests: fixtures by name, kernels built
//! from a loaded module, and the submit/advance/commit steps a host takes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use gaos_json::Value;
use gaos_kernel::{CommandSubmission, DynReducer, Game, KernelError, KernelOptions, SeedPolicy, SessionKernel};
use gaos_module::{ModuleGame, ModuleLimits};

/// A fixture under `tests/modules/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/modules").join(name)
}

/// Small limits, so the bound tests finish quickly.
pub fn test_limits() -> ModuleLimits {
    ModuleLimits {
        call_time_limit: Duration::from_millis(200),
        memory_limit_bytes: 16 * 1024 * 1024,
        ..ModuleLimits::default()
    }
}

pub fn load(name: &str) -> ModuleGame {
    ModuleGame::load(&fixture(name), &test_limits()).unwrap_or_else(|e| panic!("{name} loads: {e}"))
}

pub fn json(text: &str) -> Value {
    gaos_json::parse(text).expect("test JSON")
}

/// Options for a session of `game` at its first level.
pub fn options(game: &ModuleGame, session: &str) -> KernelOptions<DynReducer> {
    let shared: Arc<dyn Game> = Arc::new(game.clone());
    let level = game.levels().into_iter().next().expect("a module declares a level");
    KernelOptions::builder(&shared, session)
        .level(&level.id, level.level)
        .seed(7, SeedPolicy::Explicit)
        .cadence(game.cadence())
        .build()
}

pub fn kernel(game: &ModuleGame, session: &str) -> SessionKernel<DynReducer> {
    SessionKernel::new(options(game, session)).expect("the kernel starts")
}

/// Prepare and commit one submission.
pub fn submit(kernel: &mut SessionKernel<DynReducer>, seat: &str, id: &str, command: &str) -> Result<(), KernelError> {
    let sub = CommandSubmission::new(&kernel_session(kernel), kernel.cursor(), seat, id, json(command));
    let mut prepared = kernel.prepare_ingest(&sub)?;
    kernel.commit(&mut prepared)
}

/// Prepare and commit the advance of the open window.
pub fn advance(kernel: &mut SessionKernel<DynReducer>) -> Result<(), KernelError> {
    let mut prepared = kernel.prepare_advance(None)?;
    kernel.commit(&mut prepared)
}

pub fn kernel_session(kernel: &SessionKernel<DynReducer>) -> String {
    kernel.session_header().session_id.clone()
}
