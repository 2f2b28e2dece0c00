//! Game identity, command/timeout mapping contexts and the [`Game`] trait a
//! product implements so hosts, runners and verifiers can use it by id.

use gaos_json::Value;
use serde::{Deserialize, Serialize};

use crate::action::SubmittedAction;
use crate::error::GameError;
use crate::options::Cadence;
use crate::reducer::DynReducer;

/// `{id, version}` of a game's adapter (its reducer implementation).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterRef {
    pub id: String,
    pub version: String,
}

/// `ReplayGameRef`: `{id, version, adapter: {id, version}}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRef {
    pub id: String,
    pub version: String,
    pub adapter: AdapterRef,
}

impl GameRef {
    /// The conformance convention: version "1", adapter `<id>/reducer` "1".
    pub fn conventional(id: &str) -> Self {
        GameRef {
            id: id.into(),
            version: "1".into(),
            adapter: AdapterRef { id: format!("{id}/reducer"), version: "1".into() },
        }
    }
}

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
}
