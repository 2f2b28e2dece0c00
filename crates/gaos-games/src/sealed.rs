//! `conformance/sealed`: a sealed-bid auction over commit–reveal
//! (`gaos.commit.sha256.v1`): both seats commit, then both reveal.

use gaos_json::{MAX_SAFE_INTEGER, Map, Value, obj};
use gaos_kernel::{
    COMMIT_SCHEME, CommandContext, CommitEnvelope, DynReducer, Game, GameError, GameRef, LevelSpec, ReplayMetrics,
    RevealEnvelope, SubmittedAction, TickReducer, erase_reducer,
};

use crate::common::{command_object, decided_by_score, level_uint, ongoing, simultaneous};

/// Game id of sealed.
pub const GAME_ID: &str = "conformance/sealed";

/// The game's own seats, in game order (also code-point order).
pub const SEATS: [&str; 2] = ["north", "south"];

/// Reducer state: `{maxBid, round, committed, bids, actionsUsed}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SealedState {
    /// Highest valid bid (`level.maxBid`); anything else counts as 0.
    pub max_bid: u64,
    /// 0 = commit phase, 1 = reveal phase, 2 = done.
    pub round: u64,
    /// Seats that committed (both, after round 0).
    pub committed: Vec<String>,
    /// Bids of `[north, south]`, once revealed (round 2).
    pub bids: Option<[u64; 2]>,
    /// Inputs consumed so far.
    pub actions_used: u64,
}

/// The sealed reducer (perfect information; the bids stay hidden in the
/// commitments until the reveal window resolves).
#[derive(Debug, Clone, Copy, Default)]
pub struct SealedReducer;

impl SealedReducer {
    fn bid_of(state: &SealedState, input: &SubmittedAction) -> u64 {
        input
            .verified_payload
            .as_ref()
            .and_then(|payload| payload.get("bid"))
            .and_then(Value::as_u64)
            .filter(|&bid| bid <= state.max_bid)
            .unwrap_or(0)
    }
}

impl TickReducer for SealedReducer {
    type State = SealedState;

    fn encode_state(&self, state: &SealedState) -> Option<Value> {
        crate::common::encode_state(state)
    }

    fn decode_state(&self, value: &Value) -> Result<SealedState, GameError> {
        crate::common::decode_state(value, GAME_ID)
    }

    fn init(&self, level: &Value, _seed: u32) -> Result<SealedState, GameError> {
        let max_bid = level_uint(level, "maxBid", GAME_ID, 0, MAX_SAFE_INTEGER as u64)?;
        Ok(SealedState { max_bid, round: 0, committed: Vec::new(), bids: None, actions_used: 0 })
    }

    fn advance(&self, mut state: SealedState, inputs: &[SubmittedAction]) -> Result<SealedState, GameError> {
        let mut seats: Vec<&str> = inputs.iter().map(|i| i.seat.as_deref().unwrap_or("")).collect();
        seats.sort_unstable();
        if seats != SEATS {
            return Err(GameError::new(format!(
                "{GAME_ID}: a window needs exactly one input from north and one from south, got seats [{}]",
                seats.join(", ")
            )));
        }
        match state.round {
            0 => {
                state.round = 1;
                state.committed = SEATS.iter().map(|s| (*s).to_owned()).collect();
            }
            1 => {
                let mut bids = [0u64; 2];
                for input in inputs {
                    let i = usize::from(input.seat.as_deref() == Some(SEATS[1]));
                    bids[i] = Self::bid_of(&state, input);
                }
                state.bids = Some(bids);
                state.round = 2;
            }
            _ => {
                return Err(GameError::new(format!("{GAME_ID}: the auction is already settled")));
            }
        }
        state.actions_used += 2;
        Ok(state)
    }

    fn view(&self, state: &SealedState) -> Value {
        let ended = state.round >= 2;
        let phase = match state.round {
            0 => "commit",
            1 => "reveal",
            _ => "done",
        };
        let (outcome, bids) = match (ended, state.bids) {
            (true, Some([north, south])) => {
                (decided_by_score(&[(SEATS[0], north), (SEATS[1], south)]), obj! { "north" => north, "south" => south })
            }
            (true, None) => (decided_by_score(&[(SEATS[0], 0), (SEATS[1], 0)]), Map::new()),
            (false, _) => (ongoing(), Map::new()),
        };
        let committed: Vec<Value> = state.committed.iter().map(Value::from).collect();
        obj! {
            "status" => if ended { "ended" } else { "playing" },
            "participation" => simultaneous(&SEATS),
            "outcome" => outcome,
            "phase" => phase,
            "round" => state.round,
            "committed" => committed,
            "bids" => bids,
        }
        .into()
    }

    fn replay_metrics(&self, state: &SealedState) -> Option<ReplayMetrics> {
        Some(ReplayMetrics { actions_used: state.actions_used })
    }

    fn validate_command(&self, state: &SealedState, _seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        if action.id != "Action 1" {
            return Err(GameError::new(format!(
                r#"{GAME_ID}: that is not a move of sealed: commit {{"commit": HASH}}, then reveal {{"reveal": {{"salt": SALT, "bid": N}}}}"#
            )));
        }
        match state.round {
            0 if action.commit.is_none() => {
                Err(GameError::new(format!("{GAME_ID}: the commit phase needs a commitment")))
            }
            1 if action.reveal.is_none() => Err(GameError::new(format!("{GAME_ID}: the reveal phase needs a reveal"))),
            0 | 1 => Ok(()),
            _ => Err(GameError::new(format!("{GAME_ID}: the auction is already settled"))),
        }
    }
}

/// The sealed game: `{commit: HASH}` commits and `{reveal: {salt, bid}}`
/// reveals commitment 0 of the seat.
#[derive(Debug, Clone, Copy, Default)]
pub struct SealedGame;

impl Game for SealedGame {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional(GAME_ID)
    }

    fn description(&self) -> &str {
        "A sealed-bid auction: both seats commit to a bid, then reveal it; the higher bid wins."
    }

    fn seats(&self) -> Vec<String> {
        SEATS.iter().map(|s| (*s).to_owned()).collect()
    }

    fn levels(&self) -> Vec<LevelSpec> {
        vec![LevelSpec { id: "default".into(), version: None, level: obj! { "maxBid" => 100u32 }.into() }]
    }

    fn reducer(&self) -> DynReducer {
        erase_reducer(SealedReducer)
    }

    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        let map = command_object(command, GAME_ID, r#"{"commit": HASH} or {"reveal": {"salt": SALT, "bid": N}}"#)?;
        let mut action = SubmittedAction::new("Action 1").with_seat(ctx.participant_id);
        // `commit` and `reveal.salt`/`reveal.bid` pass through as given
        // (SCRIPT-FORMAT.md §4): a value the typed envelope cannot hold
        // travels in `extra` under the envelope's name, so the kernel's
        // envelope checks refuse it (`conflict`), as the reference does.
        match (map.get("commit"), map.get("reveal")) {
            (Some(Value::String(hash)), None) => {
                action.commit =
                    Some(CommitEnvelope { commitment_id: 0, scheme: COMMIT_SCHEME.into(), hash: hash.clone() });
            }
            (Some(hash), None) => {
                let envelope = obj! { "commitmentId" => 0u32, "scheme" => COMMIT_SCHEME, "hash" => hash.clone() };
                action.extra.insert("commit".into(), envelope.into());
            }
            (None, Some(Value::Null)) => {
                return Err(GameError::new(format!("{GAME_ID}: \"reveal\" must be an object")));
            }
            (None, Some(reveal)) => match (reveal.get("salt"), reveal.get("bid")) {
                (Some(Value::String(salt)), Some(bid)) => {
                    action.reveal = Some(RevealEnvelope {
                        commitment_id: 0,
                        salt: salt.clone(),
                        payload: obj! { "bid" => bid.clone() }.into(),
                    });
                }
                (salt, bid) => {
                    let mut envelope = obj! { "commitmentId" => 0u32 };
                    if let Some(salt) = salt {
                        envelope.insert("salt".into(), salt.clone());
                    }
                    let mut payload = Map::new();
                    if let Some(bid) = bid {
                        payload.insert("bid".into(), bid.clone());
                    }
                    envelope.insert("payload".into(), payload.into());
                    action.extra.insert("reveal".into(), envelope.into());
                }
            },
            (Some(_), Some(_)) => {
                return Err(GameError::new(format!("{GAME_ID}: a command either commits or reveals, not both")));
            }
            (None, None) => {
                return Err(GameError::new(format!(r#"{GAME_ID}: the command needs "commit" or "reveal""#)));
            }
        }
        Ok(action)
    }

    /// Always empty: a commitment hash needs the client's secret salt and the
    /// session binding, and a reveal needs the same salt, so no command can be
    /// derived from the view alone. Clients build them with
    /// `gaos_kernel::commitment::commitment_hash`.
    fn legal_actions(&self, _view: &Value, _seat: &str) -> Vec<Value> {
        Vec::new()
    }
}
