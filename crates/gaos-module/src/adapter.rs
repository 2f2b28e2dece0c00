//! [`ReplayAdapter`]: what `gaos replay verify --adapter FILE` runs — a game
//! module, or the reference verifier-adapter shape (game-module.md §2):
//! `resolveReplayReducer(context)` (or a default export function) returning
//! the reducer for one level, plus optional `semanticAdapterForLevel(context)`
//! with `commandToAction`/`timeoutToAction` for the semantic checks.

use std::path::Path;
use std::sync::Arc;

use gaos_json::Value;
use gaos_kernel::replay::{GameResolver, LevelContext};
use gaos_kernel::{
    CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, SubmittedAction, TimeoutContext, TimeoutInput,
    erase_reducer,
};

use crate::ModuleLimits;
use crate::engine::{Arg, Binding, CallFailure, Engine, HostFn};
use crate::error::ModuleError;
use crate::game::{ModuleGame, action_from_value, command_args, timeout_context};
use crate::module_core::{At, ModuleCore};
use crate::pool::Pool;
use crate::realm::SHARED;
use crate::reducer::{ModuleReducer, ReducerMeta};
use crate::sources::{ModuleIdentity, Sources};

/// A replay verifier backed by a module file; implements
/// [`GameResolver`] (level-aware for the verifier-adapter shape).
#[derive(Clone)]
pub struct ReplayAdapter {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    /// A game module: the game verifies replays of itself.
    Game(ModuleGame),
    /// The verifier-adapter shape: reducers resolved per level.
    Reducers(Arc<ModuleCore>),
}

impl std::fmt::Debug for ReplayAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayAdapter").field("sha256", &self.identity().sha256).finish()
    }
}

/// Load `path` as a game module, or else as a verifier adapter. A file that
/// is neither is refused with the game-module error (which names what is
/// missing).
pub fn load_replay_adapter(path: &Path, limits: &ModuleLimits) -> Result<ReplayAdapter, ModuleError> {
    let game_error = match ModuleGame::load(path, limits) {
        Ok(game) => return Ok(ReplayAdapter { inner: Inner::Game(game) }),
        Err(e @ ModuleError::Shape { .. }) => e,
        Err(e) => return Err(e),
    };
    let sources = Sources::discover(path)?;
    let engine = match Engine::new(&sources, limits, Binding::Adapter) {
        Ok((engine, _)) => engine,
        Err(ModuleError::Shape { .. }) => return Err(game_error),
        Err(e) => return Err(e),
    };
    let identity = sources.identity();
    let label = sources.entry().file_name().map_or_else(|| sources.entry_name(), |n| n.to_string_lossy().into_owned());
    let pool = Pool::new(engine, &sources, limits, Binding::Adapter);
    Ok(ReplayAdapter { inner: Inner::Reducers(Arc::new(ModuleCore { identity, pool, label })) })
}

impl ReplayAdapter {
    /// The module's files and digest.
    pub fn identity(&self) -> &ModuleIdentity {
        match &self.inner {
            Inner::Game(game) => game.identity(),
            Inner::Reducers(core) => &core.identity,
        }
    }

    /// The game, when the file is a game module.
    pub fn game(&self) -> Option<&ModuleGame> {
        match &self.inner {
            Inner::Game(game) => Some(game),
            Inner::Reducers(_) => None,
        }
    }
}

impl GameResolver for ReplayAdapter {
    fn resolve(&self, game: &GameRef) -> Option<Arc<dyn Game>> {
        match &self.inner {
            // Always the module's own game: a replay of another game or
            // version is then reported as such by the verifier.
            Inner::Game(module) => Some(Arc::new(module.clone())),
            // The adapter serves whatever game the replay names; each level
            // gets its reducer from `resolve_level`.
            Inner::Reducers(core) => Some(Arc::new(LevelGame::unbound(Arc::clone(core), game.clone()))),
        }
    }

    fn resolve_level(&self, game: &Arc<dyn Game>, context: &LevelContext<'_>) -> Option<Arc<dyn Game>> {
        let Inner::Reducers(core) = &self.inner else {
            return Some(Arc::clone(game));
        };
        let text: Arc<str> = context.to_value().to_string().into();
        let bound = core.pool.run(|engine| engine.bind_level(&text, "[]"));
        match bound {
            Ok(Some(meta)) => {
                let meta = LevelMeta::parse(&meta);
                Some(Arc::new(LevelGame {
                    core: Arc::clone(core),
                    game_ref: context.game.clone(),
                    level: Some(text),
                    meta,
                }))
            }
            Ok(None) => None,
            Err(failure) => {
                let message = match failure {
                    CallFailure::Module(m) | CallFailure::Sandbox(m) => m,
                    CallFailure::TimeLimit => "resolveReplayReducer exceeded the call time limit".into(),
                    CallFailure::MemoryLimit => "resolveReplayReducer exceeded the memory limit".into(),
                    CallFailure::ValueLimit(what) => format!("resolveReplayReducer: {what} exceeded the value limit"),
                };
                tracing::warn!(target: "gaos_module", module = %core.label, "{message}");
                None
            }
        }
    }
}

/// What an adapter offers for one level.
#[derive(Debug, Clone, Copy, Default)]
struct LevelMeta {
    reducer: ReducerMeta,
    has_command_to_action: bool,
    has_timeout_to_action: bool,
}

impl LevelMeta {
    fn parse(text: &str) -> LevelMeta {
        let value = gaos_json::parse(text).unwrap_or(Value::Null);
        let flag = |key: &str| value.get(key).and_then(Value::as_bool).unwrap_or(false);
        LevelMeta {
            reducer: ReducerMeta::parse(value.get("reducer").unwrap_or(&Value::Null)),
            has_command_to_action: flag("hasCommandToAction"),
            has_timeout_to_action: flag("hasTimeoutToAction"),
        }
    }
}

/// One level's reducer and semantic adapter, as a [`Game`] the verifier
/// can run. It declares no seats: the verifier then checks against the
/// seats the replay names.
struct LevelGame {
    core: Arc<ModuleCore>,
    game_ref: GameRef,
    /// The level context (JSON text); `None` before a level is bound.
    level: Option<Arc<str>>,
    meta: LevelMeta,
}

impl LevelGame {
    fn unbound(core: Arc<ModuleCore>, game_ref: GameRef) -> LevelGame {
        LevelGame { core, game_ref, level: None, meta: LevelMeta::default() }
    }

    fn mapped(&self, function: HostFn, args: &[Arg<'_>]) -> Result<SubmittedAction, GameError> {
        let value = self.core.call_value(At { realm: SHARED, level: self.level.as_deref() }, function, args)?;
        action_from_value(value).map_err(|e| {
            GameError::new(format!("{} of {} must return a SubmittedAction: {e}", function.export(), self.core.label))
        })
    }
}

impl Game for LevelGame {
    fn game_ref(&self) -> GameRef {
        self.game_ref.clone()
    }

    fn description(&self) -> &str {
        ""
    }

    fn seats(&self) -> Vec<String> {
        Vec::new()
    }

    fn levels(&self) -> Vec<LevelSpec> {
        Vec::new()
    }

    fn reducer(&self) -> DynReducer {
        erase_reducer(ModuleReducer::new(
            Arc::clone(&self.core),
            self.meta.reducer,
            Vec::new(),
            SHARED,
            self.level.clone(),
        ))
    }

    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        let command = command.to_string();
        self.mapped(HostFn::Command, &command_args(&command, ctx))
    }

    fn has_command_mapper(&self) -> bool {
        self.meta.has_command_to_action
    }

    fn has_timeout_mapper(&self) -> bool {
        self.meta.has_timeout_to_action
    }

    fn timeout_to_action(
        &self,
        ctx: &TimeoutContext,
        timeout: &TimeoutInput,
    ) -> Option<Result<SubmittedAction, GameError>> {
        if !self.meta.has_timeout_to_action {
            return None;
        }
        let ctx = timeout_context(ctx);
        let timeout = timeout.to_value().to_string();
        Some(self.mapped(HostFn::Timeout, &[Arg::Text(&ctx), Arg::Text(&timeout)]))
    }

    fn legal_actions(&self, _view: &Value, _seat: &str) -> Vec<Value> {
        Vec::new()
    }
}
