//! `conformance/race`: two seats advance along a course every tick; an input
//! that does not coast moves its seat one extra cell.

use gaos_json::{Map, Value, obj};
use gaos_kernel::{
    Cadence, CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, ReplayMetrics, SubmittedAction, TickRate,
    TickReducer, TimeoutContext, TimeoutInput, erase_reducer,
};

use crate::common::{can_act, decided_by_score, input_seat, level_uint, ongoing, simultaneous, timeout_seat};

/// Game id of race.
pub const GAME_ID: &str = "conformance/race";

/// The game's own seats, in game order.
pub const SEATS: [&str; 2] = ["p1", "p2"];

/// Longest course a level may ask for (every view lists every cell).
pub const MAX_LENGTH: u64 = 10_000;

/// Reducer state: `{length, pos, tick, actionsUsed}`; `pos` is indexed like [`SEATS`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RaceState {
    /// Course length (`level.length`); reaching it ends the race.
    pub length: u64,
    /// Each seat's position.
    pub pos: [u64; 2],
    /// Windows resolved so far.
    pub tick: u64,
    /// Inputs consumed so far.
    pub actions_used: u64,
}

/// Index of `seat` in [`SEATS`].
pub fn seat_index(seat: &str) -> Option<usize> {
    SEATS.iter().position(|s| *s == seat)
}

/// The race reducer (perfect information).
#[derive(Debug, Clone, Copy, Default)]
pub struct RaceReducer;

impl TickReducer for RaceReducer {
    type State = RaceState;

    fn encode_state(&self, state: &RaceState) -> Option<Value> {
        crate::common::encode_state(state)
    }

    fn decode_state(&self, value: &Value) -> Result<RaceState, GameError> {
        crate::common::decode_state(value, GAME_ID)
    }

    fn init(&self, level: &Value, _seed: u32) -> Result<RaceState, GameError> {
        let length = level_uint(level, "length", GAME_ID, 0, MAX_LENGTH)?;
        Ok(RaceState { length, pos: [0, 0], tick: 0, actions_used: 0 })
    }

    fn advance(&self, mut state: RaceState, inputs: &[SubmittedAction]) -> Result<RaceState, GameError> {
        state.pos[0] += 1;
        state.pos[1] += 1;
        for input in inputs {
            if input.payload_field("coast") == Some(&Value::Bool(true)) {
                continue;
            }
            let seat = input_seat(input, GAME_ID)?;
            let i = seat_index(seat).ok_or_else(|| GameError::new(format!("{GAME_ID}: unknown seat {seat:?}")))?;
            state.pos[i] += 1;
        }
        state.tick += 1;
        state.actions_used += inputs.len() as u64;
        Ok(state)
    }

    fn view(&self, state: &RaceState) -> Value {
        let ended = state.pos.iter().any(|&p| p >= state.length);
        let outcome =
            if ended { decided_by_score(&[(SEATS[0], state.pos[0]), (SEATS[1], state.pos[1])]) } else { ongoing() };
        let mut course = Map::new();
        for i in 0..state.length {
            let cell = if i == 0 {
                "start"
            } else if i == state.length - 1 {
                "finish"
            } else {
                "track"
            };
            course.insert(format!("cell-{i:02}"), cell.into());
        }
        obj! {
            "status" => if ended { "ended" } else { "playing" },
            "participation" => simultaneous(&SEATS),
            "outcome" => outcome,
            "pos" => obj! { "p1" => state.pos[0], "p2" => state.pos[1] },
            "tick" => state.tick,
            "course" => course,
        }
        .into()
    }

    fn replay_metrics(&self, state: &RaceState) -> Option<ReplayMetrics> {
        Some(ReplayMetrics { actions_used: state.actions_used })
    }

    fn validate_command(&self, _state: &RaceState, _seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        if action.id == "Action 1" {
            Ok(())
        } else {
            Err(GameError::new(format!("{GAME_ID}: that is not a move of race: every command is a boost")))
        }
    }
}

/// The race game: any command boosts (`{id: "Action 1"}`); a timed-out seat
/// coasts.
#[derive(Debug, Clone, Copy, Default)]
pub struct RaceGame;

impl Game for RaceGame {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional(GAME_ID)
    }

    fn description(&self) -> &str {
        "Two seats race along a course every tick; submitting an input moves a seat one extra cell."
    }

    fn seats(&self) -> Vec<String> {
        SEATS.iter().map(|s| (*s).to_owned()).collect()
    }

    fn levels(&self) -> Vec<LevelSpec> {
        vec![
            LevelSpec { id: "default".into(), version: None, level: obj! { "length" => 12u32 }.into() },
            LevelSpec { id: "sprint".into(), version: None, level: obj! { "length" => 5u32 }.into() },
        ]
    }

    fn reducer(&self) -> DynReducer {
        erase_reducer(RaceReducer)
    }

    /// GAMES.md: race is meant for ticks cadence (a window resolves with the
    /// inputs that arrived by its tick); ten ticks a second by default.
    fn cadence(&self) -> Cadence {
        Cadence::Ticks(TickRate::new(10.0).expect("10 ticks per second is a valid rate"))
    }

    /// Every command, whatever its shape, becomes `{id: "Action 1", seat}`.
    fn command_to_action(&self, _command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        Ok(SubmittedAction::new("Action 1").with_seat(ctx.participant_id))
    }

    fn has_timeout_mapper(&self) -> bool {
        true
    }

    fn timeout_to_action(
        &self,
        _ctx: &TimeoutContext,
        timeout: &TimeoutInput,
    ) -> Option<Result<SubmittedAction, GameError>> {
        Some(
            timeout_seat(timeout, GAME_ID).map(|seat| {
                SubmittedAction::new("Action 1").with_payload(obj! { "coast" => true }.into()).with_seat(seat)
            }),
        )
    }

    /// `[{"boost": true}]`: the mapper ignores the command's content, so a
    /// submitted `{"coast": true}` would boost too and is not offered.
    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        if !can_act(view, seat) {
            return Vec::new();
        }
        vec![obj! { "boost" => true }.into()]
    }
}
