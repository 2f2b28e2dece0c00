//! A module's engine instances, shared by all its sessions.
//!
//! A session's state lives in Rust between calls, so a small pool (at most
//! one engine per core, created on demand) serves any number of sessions.
//! Each engine keeps a bounded number of module instances (one per session
//! it served recently, `realm.rs`) and is replaced after making many, so
//! memory is bounded by the pool, never by the number of sessions.

use std::sync::{Condvar, Mutex, MutexGuard};

use crate::ModuleLimits;
use crate::engine::{Binding, CallFailure, Engine};
use crate::sources::Sources;

pub(crate) struct Pool {
    /// The recorded files every new instance compiles.
    sources: Sources,
    limits: ModuleLimits,
    binding: Binding,
    max: usize,
    state: Mutex<PoolState>,
    freed: Condvar,
}

struct PoolState {
    idle: Vec<Engine>,
    /// Instances in existence (idle or in a call).
    live: usize,
    /// Callers waiting for an instance (a notify is a syscall: skip it
    /// when nobody waits).
    waiting: usize,
}

impl Pool {
    /// A pool starting with the instance that loaded the module.
    pub(crate) fn new(first: Engine, sources: &Sources, limits: &ModuleLimits, binding: Binding) -> Pool {
        let max = std::thread::available_parallelism().map_or(2, |n| n.get()).max(1);
        Pool {
            sources: sources.replay(),
            limits: *limits,
            binding,
            max,
            state: Mutex::new(PoolState { idle: vec![first], live: 1, waiting: 0 }),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` on an idle instance (or a new one). An instance whose call
    /// crossed a limit is dropped instead of returned: its module objects
    /// may be half-updated. So is one that made enough module instances
    /// (`realm.rs`): a fresh one takes its place when needed.
    pub(crate) fn run<T>(&self, f: impl FnOnce(&mut Engine) -> Result<T, CallFailure>) -> Result<T, CallFailure> {
        let mut engine = self.checkout()?;
        let result = f(&mut engine);
        let mut state = self.lock();
        let limit_crossed = matches!(&result, Err(CallFailure::TimeLimit | CallFailure::MemoryLimit));
        let discarded = match limit_crossed || engine.spent() {
            true => {
                state.live -= 1;
                Some(engine)
            }
            false => {
                state.idle.push(engine);
                None
            }
        };
        let notify = state.waiting > 0;
        drop(state);
        if notify {
            self.freed.notify_one();
        }
        drop(discarded);
        result
    }

    fn checkout(&self) -> Result<Engine, CallFailure> {
        let mut state = self.lock();
        loop {
            if let Some(engine) = state.idle.pop() {
                return Ok(engine);
            }
            if state.live < self.max {
                state.live += 1;
                drop(state);
                return match Engine::new(&self.sources.replay(), &self.limits, self.binding) {
                    Ok((engine, _meta)) => Ok(engine),
                    Err(e) => {
                        let mut state = self.lock();
                        state.live -= 1;
                        let notify = state.waiting > 0;
                        drop(state);
                        if notify {
                            self.freed.notify_one();
                        }
                        Err(CallFailure::Module(format!("a fresh engine for the module failed to start: {e}")))
                    }
                };
            }
            state.waiting += 1;
            state = self.freed.wait(state).unwrap_or_else(|p| p.into_inner());
            state.waiting -= 1;
        }
    }
}

impl Pool {
    pub(crate) fn limits(&self) -> &ModuleLimits {
        &self.limits
    }
}
