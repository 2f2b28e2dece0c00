//! [`ModuleGame`]: a loaded game module behind [`gaos_kernel::Game`].

use std::path::Path;
use std::sync::Arc;

use gaos_json::{Map, Value};
use gaos_kernel::{
    Cadence, CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, SubmittedAction, TimeoutContext,
    TimeoutInput, erase_reducer,
};

use crate::ModuleLimits;
use crate::engine::{Arg, Binding, Engine, HostFn};
use crate::error::ModuleError;
use crate::module_core::{At, ModuleCore};
use crate::pool::Pool;
use crate::realm::{RealmKey, SHARED, fresh_key};
use crate::reducer::{ModuleReducer, ReducerMeta};
use crate::sources::{ModuleIdentity, Sources};

/// The most markup one `render(view, seat)` call may return: a picture of
/// one position, not a page (the pages ask for it at every transition).
pub const MAX_RENDER_BYTES: usize = 256 * 1024;

/// What the module's default export declares (read once, at load).
#[derive(Debug, Clone)]
pub(crate) struct GameMeta {
    pub(crate) game_ref: GameRef,
    pub(crate) description: String,
    pub(crate) seats: Vec<String>,
    pub(crate) levels: Vec<LevelSpec>,
    pub(crate) cadence: Cadence,
    pub(crate) reducer: ReducerMeta,
    pub(crate) has_timeout_to_action: bool,
    pub(crate) has_legal_actions: bool,
    pub(crate) has_render: bool,
}

impl GameMeta {
    fn parse(text: &str) -> Result<GameMeta, String> {
        let value = gaos_json::parse(text).map_err(|e| format!("the module's description is not JSON: {e}"))?;
        let game_ref: GameRef = gaos_json::from_value(value.get("game").cloned().unwrap_or(Value::Null))
            .map_err(|e| format!("export default.game: {e}"))?;
        let strings = |key: &str| -> Vec<String> {
            value
                .get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default()
        };
        let levels = value
            .get("levels")
            .and_then(Value::as_array)
            .map(|levels| {
                levels
                    .iter()
                    .map(|l| LevelSpec {
                        id: l.get("id").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        version: l.get("version").cloned(),
                        level: l.get("level").cloned().unwrap_or(Value::Null),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let cadence = Cadence::from_value(value.get("cadence").unwrap_or(&Value::Null))
            .map_err(|e| format!("export default.cadence: {e}"))?;
        let flag = |v: &Value, key: &str| v.get(key).and_then(Value::as_bool).unwrap_or(false);
        let reducer = ReducerMeta::parse(value.get("reducer").unwrap_or(&Value::Null));
        Ok(GameMeta {
            game_ref,
            description: value.get("description").and_then(Value::as_str).unwrap_or_default().to_owned(),
            seats: strings("seats"),
            levels,
            cadence,
            reducer,
            has_timeout_to_action: flag(&value, "hasTimeoutToAction"),
            has_legal_actions: flag(&value, "hasLegalActions"),
            has_render: flag(&value, "hasRender"),
        })
    }
}

/// A game module loaded into the embedded engine.
///
/// Cloning is cheap (one `Arc`); clones share the module's engine pool.
#[derive(Clone)]
pub struct ModuleGame {
    core: Arc<ModuleCore>,
    meta: Arc<GameMeta>,
    /// The module instance this game's calls run in: shared until the game
    /// is isolated for a session ([`Game::isolate`]).
    realm: RealmKey,
}

impl std::fmt::Debug for ModuleGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModuleGame")
            .field("game", &self.meta.game_ref.id)
            .field("entry", &self.core.identity.entry)
            .field("sha256", &self.core.identity.sha256)
            .finish()
    }
}

impl ModuleGame {
    /// Load the module at `path`: compile it and every local file it
    /// imports, run its top level, and check the default export's shape.
    pub fn load(path: &Path, limits: &ModuleLimits) -> Result<ModuleGame, ModuleError> {
        let sources = Sources::discover(path)?;
        let (engine, meta_text) = Engine::new(&sources, limits, Binding::Game)?;
        let meta = GameMeta::parse(&meta_text)
            .map_err(|message| ModuleError::Shape { path: sources.entry().to_path_buf(), message })?;
        let identity = sources.identity();
        let pool = Pool::new(engine, &sources, limits, Binding::Game);
        let core = ModuleCore { identity, pool, label: meta.game_ref.id.clone() };
        Ok(ModuleGame { core: Arc::new(core), meta: Arc::new(meta), realm: SHARED })
    }

    /// The module's files and digest.
    pub fn identity(&self) -> &ModuleIdentity {
        &self.core.identity
    }

    pub(crate) fn mapped_action(&self, function: HostFn, value: Value) -> Result<SubmittedAction, GameError> {
        let action = action_from_value(value).map_err(|e| {
            GameError::new(format!(
                "{} of {} must return a SubmittedAction ({{id, index?, payload?, ...}}): {e}",
                function.export(),
                self.meta.game_ref.id
            ))
        })?;
        check_action_id(&action.id).map_err(|rule| {
            GameError::new(format!(
                "{} of {} returned action id {:?}: {rule}",
                function.export(),
                self.meta.game_ref.id,
                action.id
            ))
        })?;
        Ok(action)
    }
}

/// The largest `N` of an `Action N` id: the replay header's permutation
/// covers every N a session used, so N bounds its length.
pub const MAX_ACTION_NUMBER: u64 = 4096;

/// kernel.md §5.5: product action ids must be `Action N` within the
/// replay's permutation (N written in decimal without leading zeros,
/// 1 ≤ N ≤ [`MAX_ACTION_NUMBER`]); any other id would make the finalized
/// replay invalid. `Err`: the rule, in words.
pub(crate) fn check_action_id(id: &str) -> Result<(), String> {
    let number = id
        .strip_prefix("Action ")
        .filter(|digits| !digits.is_empty() && !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|digits| digits.parse::<u64>().ok());
    match number {
        Some(n) if n <= MAX_ACTION_NUMBER => Ok(()),
        _ => Err(format!(
            "a game's action ids must be \"Action N\" with N in 1..={MAX_ACTION_NUMBER} (kernel.md §5.5: replays \
             name actions within their permutation); carry the move in index or payload instead"
        )),
    }
}

/// A mapped action. A `commit` or `reveal` that is not a well-typed envelope
/// travels in `extra` under its own name (as the built-in games do), so the
/// kernel's envelope check refuses it as the `conflict` the reference
/// reports, instead of the mapper failing.
pub(crate) fn action_from_value(value: Value) -> Result<SubmittedAction, String> {
    let Value::Object(mut map) = value else {
        return Err(format!("an action must be an object, not {}", value.type_name()));
    };
    let mut malformed = Vec::new();
    for key in ["commit", "reveal"] {
        let typed = match map.get(key) {
            None => true,
            Some(envelope) if key == "commit" => {
                gaos_json::from_value::<gaos_kernel::CommitEnvelope>(envelope.clone()).is_ok()
            }
            Some(envelope) => gaos_json::from_value::<gaos_kernel::RevealEnvelope>(envelope.clone()).is_ok(),
        };
        if !typed && let Some(envelope) = map.remove(key) {
            malformed.push((key, envelope));
        }
    }
    let mut action = SubmittedAction::from_value(&Value::Object(map))?;
    for (key, envelope) in malformed {
        action.extra.insert(key.into(), envelope);
    }
    Ok(action)
}

/// `commandToAction`'s arguments: the command, then the context's fields
/// (`{sessionId, participantId, submissionId, cursor, tick}`, built in JS).
pub(crate) fn command_args<'a>(command: &'a str, ctx: &CommandContext<'a>) -> [Arg<'a>; 6] {
    [
        Arg::Text(command),
        Arg::Text(ctx.session_id),
        Arg::Text(ctx.participant_id),
        Arg::Text(ctx.submission_id),
        Arg::Number(ctx.cursor as f64),
        Arg::Number(ctx.tick as f64),
    ]
}

/// `timeoutToAction`'s context (kernel.md §4.10).
pub(crate) fn timeout_context(ctx: &TimeoutContext) -> String {
    let mut map = Map::new();
    map.insert("sessionId".into(), ctx.session_id.clone().into());
    map.insert("game".into(), gaos_json::to_value(&ctx.game).expect("a game reference is JSON"));
    map.insert("levelId".into(), ctx.level_id.clone().into());
    if let Some(version) = &ctx.level_version {
        map.insert("levelVersion".into(), version.clone());
    }
    map.insert("level".into(), ctx.level.clone());
    map.insert("seed".into(), Value::Number(f64::from(ctx.seed)));
    map.insert("participantId".into(), ctx.participant_id.clone().map_or(Value::Null, Value::String));
    map.insert("windowRef".into(), Value::Number(ctx.window_ref as f64));
    Value::Object(map).to_string()
}

impl Game for ModuleGame {
    fn game_ref(&self) -> GameRef {
        self.meta.game_ref.clone()
    }

    fn description(&self) -> &str {
        &self.meta.description
    }

    fn seats(&self) -> Vec<String> {
        self.meta.seats.clone()
    }

    fn levels(&self) -> Vec<LevelSpec> {
        self.meta.levels.clone()
    }

    fn reducer(&self) -> DynReducer {
        erase_reducer(ModuleReducer::new(
            Arc::clone(&self.core),
            self.meta.reducer,
            self.meta.seats.clone(),
            self.realm,
            None,
        ))
    }

    fn cadence(&self) -> Cadence {
        self.meta.cadence
    }

    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        let command = command.to_string();
        let value = self.core.call_value(At::realm(self.realm), HostFn::Command, &command_args(&command, ctx))?;
        self.mapped_action(HostFn::Command, value)
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
        Some(
            self.core
                .call_value(At::realm(self.realm), HostFn::Timeout, &[Arg::Text(&ctx), Arg::Text(&timeout)])
                .and_then(|value| self.mapped_action(HostFn::Timeout, value)),
        )
    }

    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        if !self.meta.has_legal_actions {
            return Vec::new();
        }
        let view = view.to_string();
        let listed = self
            .core
            .call_value(At::realm(self.realm), HostFn::Legal, &[Arg::Text(&view), Arg::Text(seat)])
            .and_then(|value| match value {
                Value::Array(commands) => Ok(commands),
                other => Err(GameError::new(format!(
                    "legalActions(view, seat) of {} must return an array of commands, not {}",
                    self.meta.game_ref.id,
                    other.type_name()
                ))),
            });
        // Legal actions are advice for agents; a failing enumerator means
        // "no enumerated moves", and the author sees why in the log.
        listed.unwrap_or_else(|e| {
            tracing::warn!(target: "gaos_module", module = %self.core.identity.entry.display(), "{e}");
            Vec::new()
        })
    }

    fn render(&self, view: &Value, seat: Option<&str>) -> Option<Result<String, GameError>> {
        if !self.meta.has_render {
            return None;
        }
        let view = view.to_string();
        Some(
            self.core
                .call_text(At::realm(self.realm), HostFn::Render, &[Arg::Text(&view), Arg::Text(seat.unwrap_or(""))])
                .and_then(|html| {
                    if html.len() > MAX_RENDER_BYTES {
                        return Err(GameError::new(format!(
                            "render(view, seat) of {} returned {} bytes; at most {MAX_RENDER_BYTES} are shown",
                            self.meta.game_ref.id,
                            html.len()
                        )));
                    }
                    Ok(html)
                }),
        )
    }

    /// A module instance of its own (a fresh realm, `realm.rs`): nothing the
    /// module's code keeps between calls reaches another session.
    fn isolate(&self) -> Option<Arc<dyn Game>> {
        (self.realm == SHARED).then(|| Arc::new(ModuleGame { realm: fresh_key(), ..self.clone() }) as Arc<dyn Game>)
    }
}
