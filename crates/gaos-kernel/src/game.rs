//! Game identity, command/timeout mapping contexts and the [`Game`] trait a
//! product implements so hosts, runners and verifiers can use it by id.

use std::sync::Arc;

pub use crate::game_ref::{AdapterRef, GameRef};
use gaos_json::Value;

use crate::action::SubmittedAction;
use crate::cadence::Cadence;
use crate::error::GameError;
use crate::reducer::DynReducer;

/// `timeoutPolicyRef` of timeouts governed by `header.timeoutPolicy`.
pub const TIMEOUT_POLICY_REF: &str = "header.timeoutPolicy";

/// `CommandContext` passed to `commandToAction` (borrowed: it is built on
/// every ingest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandContext<'a> {
    pub session_id: &'a str,
    pub participant_id: &'a str,
    pub submission_id: &'a str,
    pub cursor: u64,
    pub tick: u64,
}

/// `TimeoutInput`: a host's decision that a window (or one seat) timed out.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeoutInput {
    pub timeout_id: String,
    /// A JS number (compared with the open tick).
    pub tick: f64,
    /// `None` is a window-wide timeout (`participantId: null`).
    pub participant_id: Option<String>,
    pub reason: String,
    pub timeout_policy_ref: Option<String>,
}

impl TimeoutInput {
    /// A timeout for `seat` (or the whole window) at `tick`.
    pub fn new(timeout_id: &str, tick: u64, participant_id: Option<&str>, reason: &str) -> Self {
        TimeoutInput {
            timeout_id: timeout_id.into(),
            tick: tick as f64,
            participant_id: participant_id.map(Into::into),
            reason: reason.into(),
            timeout_policy_ref: None,
        }
    }

    /// The timeout as the JSON object a caller passes to `prepareTimeout`.
    pub fn to_value(&self) -> Value {
        let mut map = gaos_json::Map::new();
        map.insert("timeoutId".into(), self.timeout_id.clone().into());
        map.insert("tick".into(), Value::Number(self.tick));
        map.insert("participantId".into(), self.participant_id.clone().map_or(Value::Null, Value::String));
        map.insert("reason".into(), self.reason.clone().into());
        if let Some(policy_ref) = &self.timeout_policy_ref {
            map.insert("timeoutPolicyRef".into(), policy_ref.clone().into());
        }
        Value::Object(map)
    }

    /// Read a timeout object; malformed shapes are argument (type) errors.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let map = value.as_object().ok_or("a timeout must be an object")?;
        let timeout_id = map
            .get("timeoutId")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or("timeoutId must be a non-empty string")?;
        let tick = map.get("tick").and_then(Value::as_f64).ok_or("timeout tick must be a number")?;
        let participant_id = match map.get("participantId") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("timeout participantId must be a string or null".into()),
        };
        let reason = map
            .get("reason")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or("timeout reason must be a non-empty string")?;
        let timeout_policy_ref = match map.get("timeoutPolicyRef") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("timeoutPolicyRef must be a string".into()),
        };
        Ok(TimeoutInput {
            timeout_id: timeout_id.into(),
            tick,
            participant_id,
            reason: reason.into(),
            timeout_policy_ref,
        })
    }
}

/// Context of `timeoutToAction`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeoutContext {
    pub session_id: String,
    pub game: GameRef,
    pub level_id: String,
    pub level_version: Option<Value>,
    pub level: Value,
    /// The level seed (derived when the seed policy is derived).
    pub seed: u32,
    pub participant_id: Option<String>,
    /// The cursor of the window that timed out.
    pub window_ref: u64,
}

/// A level a game offers by default or by id.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelSpec {
    pub id: String,
    pub version: Option<Value>,
    pub level: Value,
}

/// Everything a host, runner or verifier needs to know about one game.
///
/// A game is a deterministic [`TickReducer`](crate::TickReducer) (rules)
/// plus this trait (identity, seats, levels and how protocol commands map
/// to actions). Registered in a `gaos_games::GameRegistry` (for example
/// with `gaos_cli::App::new().game(..)`), it is served, played, benchmarked
/// and verified like a built-in game.
///
/// A one-seat game: the player names a number and the game ends.
///
/// ```
/// use std::sync::Arc;
///
/// use gaos_json::{Value, obj};
/// use gaos_kernel::{
///     Cadence, CommandContext, CommandSubmission, DynReducer, Game, GameError, GameRef, KernelOptions, LevelSpec,
///     ReplayMetrics, SeedPolicy, SessionKernel, SubmittedAction, TickReducer, erase_reducer,
/// };
///
/// struct Pick;
///
/// impl TickReducer for Pick {
///     /// The number picked, once picked.
///     type State = Option<u64>;
///     fn init(&self, _level: &Value, _seed: u32) -> Result<Self::State, GameError> {
///         Ok(None)
///     }
///     fn advance(&self, _state: Self::State, inputs: &[SubmittedAction]) -> Result<Self::State, GameError> {
///         let pick = inputs.first().and_then(|a| a.payload_field("n")).and_then(Value::as_u64);
///         pick.map(Some).ok_or_else(|| GameError::new("pick: one input with a number"))
///     }
///     fn view(&self, state: &Self::State) -> Value {
///         let seats: Vec<Value> = vec!["player".into()];
///         let participation = obj! { "mode" => "simultaneous", "seats" => seats };
///         match state {
///             None => obj! { "status" => "playing", "participation" => participation }.into(),
///             Some(n) => obj! { "status" => "ended", "picked" => *n }.into(),
///         }
///     }
///     /// A game that ends reports how many actions it used (results and replays carry it).
///     fn replay_metrics(&self, state: &Self::State) -> Option<ReplayMetrics> {
///         Some(ReplayMetrics { actions_used: u64::from(state.is_some()) })
///     }
/// }
///
/// struct PickGame;
///
/// impl Game for PickGame {
///     fn game_ref(&self) -> GameRef {
///         GameRef::conventional("example/pick")
///     }
///     fn description(&self) -> &str {
///         "Name a number; that is the whole game."
///     }
///     fn seats(&self) -> Vec<String> {
///         vec!["player".into()]
///     }
///     fn levels(&self) -> Vec<LevelSpec> {
///         vec![LevelSpec { id: "default".into(), version: None, level: obj! {}.into() }]
///     }
///     fn reducer(&self) -> DynReducer {
///         erase_reducer(Pick)
///     }
///     fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
///         let n = command.get("n").and_then(Value::as_u64).ok_or_else(|| GameError::new(r#"send {"n": N}"#))?;
///         // Replays name actions "Action N"; the number travels as payload.
///         Ok(SubmittedAction::new("Action 1").with_seat(ctx.participant_id).with_payload(obj! { "n" => n }.into()))
///     }
///     fn legal_actions(&self, view: &Value, _seat: &str) -> Vec<Value> {
///         let playing = view.get("status").and_then(Value::as_str) == Some("playing");
///         if playing { (0..3u64).map(|n| obj! { "n" => n }.into()).collect() } else { Vec::new() }
///     }
/// }
///
/// // The kernel runs it like any game: one window, one input, resolved.
/// let game: Arc<dyn Game> = Arc::new(PickGame);
/// let options = KernelOptions::builder(&game, "s1")
///     .level("default", obj! {}.into())
///     .seed(1, SeedPolicy::Explicit)
///     .seats(game.seats())
///     .cadence(game.cadence())
///     .build();
/// let mut kernel = SessionKernel::new(options).unwrap();
/// let command = game.legal_actions(kernel.full_view(), "player").remove(2);
/// let mut prepared = kernel.prepare_ingest(&CommandSubmission::new("s1", 0, "player", "p-1", command)).unwrap();
/// kernel.commit(&mut prepared).unwrap();
/// kernel.commit(&mut kernel.prepare_advance(None).unwrap()).unwrap();
/// assert!(kernel.is_terminal());
/// assert_eq!(kernel.full_view().get("picked").and_then(Value::as_u64), Some(2));
/// ```
pub trait Game: Send + Sync {
    /// Game and adapter identity (recorded in headers and replays).
    fn game_ref(&self) -> GameRef;

    /// One sentence for listings.
    fn description(&self) -> &str;

    /// The game's declared seats, in declared order.
    fn seats(&self) -> Vec<String>;

    /// Levels the game ships; the first is the default.
    fn levels(&self) -> Vec<LevelSpec>;

    /// A fresh reducer.
    fn reducer(&self) -> DynReducer;

    /// The cadence a host offers by default (a create request may choose
    /// another the reducer supports). Turn-based unless the game says so.
    fn cadence(&self) -> Cadence {
        Cadence::Turns
    }

    /// `commandToAction`: map a protocol command to the reducer's action.
    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError>;

    /// False for a game known only by its reducers (the reference
    /// verifier-adapter shape without `commandToAction`): a verifier then
    /// cannot re-map recorded commands and says so instead of failing them.
    fn has_command_mapper(&self) -> bool {
        true
    }

    /// Whether the game has a timeout mapper.
    fn has_timeout_mapper(&self) -> bool {
        false
    }

    /// `timeoutToAction`, when the game has one.
    fn timeout_to_action(
        &self,
        _ctx: &TimeoutContext,
        _timeout: &TimeoutInput,
    ) -> Option<Result<SubmittedAction, GameError>> {
        None
    }

    /// The concrete commands `seat` may submit now, given its own view.
    /// Each entry is a command the game's `command_to_action` accepts.
    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value>;

    /// A picture of `view` (HTML or SVG text) for people watching or playing:
    /// `seat` is the seat whose view it is, `None` for the public view. It
    /// must be a pure function of its arguments; the web pages show it in a
    /// sandboxed frame (no scripts), next to their own generic layout.
    /// `None`: the game has no renderer (the default).
    fn render(&self, _view: &Value, _seat: Option<&str>) -> Option<Result<String, GameError>> {
        None
    }

    /// This game for one session (or one replay, or one request) of its
    /// own, when calls on behalf of different sessions must not share
    /// anything the game's code can observe (a game module's module-level
    /// variables). `None` (the default, and for a game already isolated):
    /// the game itself serves every session. Use [`isolated`].
    fn isolate(&self) -> Option<Arc<dyn Game>> {
        None
    }
}

/// `game` for one session of its own ([`Game::isolate`]): every call a
/// session makes (reducer, mappers, legal actions) goes through the game
/// this returns, so nothing of it reaches another session's calls.
pub fn isolated(game: &Arc<dyn Game>) -> Arc<dyn Game> {
    game.isolate().unwrap_or_else(|| Arc::clone(game))
}
