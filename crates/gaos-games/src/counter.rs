//! `conformance/counter`: two seats add numbers to a shared total, one
//! simultaneous window per round, for a fixed number of rounds.

use gaos_json::{Value, obj};
use gaos_kernel::{
    CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, ReplayMetrics, SubmittedAction, TickReducer,
    erase_reducer,
};

use crate::common::{can_act, command_object, level_uint, simultaneous};

/// Game id of counter.
pub const GAME_ID: &str = "conformance/counter";

/// The game's own seats, in game order.
pub const SEATS: [&str; 2] = ["a", "b"];

/// Largest `rounds` a level may ask for (keeps every counter a safe integer).
pub const MAX_ROUNDS: u64 = 1 << 40;

/// Reducer state: `{rounds, round, total, actionsUsed}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CounterState {
    /// Rounds to play (`level.rounds`).
    pub rounds: u64,
    /// Rounds resolved so far.
    pub round: u64,
    /// Sum of every input's `index`; a JavaScript number, so fractions are kept.
    pub total: f64,
    /// Inputs consumed so far.
    pub actions_used: u64,
}

/// The counter reducer (perfect information plus a `seat` echo in `viewFor`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CounterReducer;

impl CounterReducer {
    fn status(state: &CounterState) -> &'static str {
        if state.round >= state.rounds { "ended" } else { "playing" }
    }
}

impl TickReducer for CounterReducer {
    type State = CounterState;

    fn encode_state(&self, state: &CounterState) -> Option<Value> {
        crate::common::encode_state(state)
    }

    fn decode_state(&self, value: &Value) -> Result<CounterState, GameError> {
        crate::common::decode_state(value, GAME_ID)
    }

    fn init(&self, level: &Value, _seed: u32) -> Result<CounterState, GameError> {
        let rounds = level_uint(level, "rounds", GAME_ID, 0, MAX_ROUNDS)?;
        Ok(CounterState { rounds, round: 0, total: 0.0, actions_used: 0 })
    }

    fn advance(&self, mut state: CounterState, inputs: &[SubmittedAction]) -> Result<CounterState, GameError> {
        // A JavaScript sum: a total that leaves the value domain (past 2^53)
        // is the kernel's `invalid_view` when it shows up in the view.
        let total = inputs.iter().filter_map(|input| input.index).fold(state.total, |t, i| t + i);
        state.total = total;
        state.round += 1;
        state.actions_used += inputs.len() as u64;
        Ok(state)
    }

    fn view(&self, state: &CounterState) -> Value {
        obj! {
            "status" => Self::status(state),
            "participation" => simultaneous(&SEATS),
            "round" => state.round,
            "total" => Value::Number(state.total),
        }
        .into()
    }

    fn view_for(&self, state: &CounterState, seat: &str) -> Value {
        let mut view = self.view(state);
        if let Some(map) = view.as_object_mut() {
            map.insert("seat".into(), seat.into());
        }
        view
    }

    fn has_view_for(&self) -> bool {
        true
    }

    fn replay_metrics(&self, state: &CounterState) -> Option<ReplayMetrics> {
        Some(ReplayMetrics { actions_used: state.actions_used })
    }
}

/// The counter game: command `{n: k}` becomes `{id: "Action 1", index: k}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CounterGame;

impl Game for CounterGame {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional(GAME_ID)
    }

    fn description(&self) -> &str {
        "Two seats add numbers to a shared total, simultaneously, for a fixed number of rounds."
    }

    fn seats(&self) -> Vec<String> {
        SEATS.iter().map(|s| (*s).to_owned()).collect()
    }

    fn levels(&self) -> Vec<LevelSpec> {
        vec![
            LevelSpec { id: "default".into(), version: None, level: obj! { "rounds" => 3u32 }.into() },
            LevelSpec { id: "long".into(), version: None, level: obj! { "rounds" => 6u32 }.into() },
        ]
    }

    fn reducer(&self) -> DynReducer {
        erase_reducer(CounterReducer)
    }

    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        let map = command_object(command, GAME_ID, r#"{"n": 1}"#)?;
        let n = map
            .get("n")
            .ok_or_else(|| GameError::new(format!(r#"{GAME_ID}: the command needs "n", e.g. {{"n": 1}}"#)))?;
        let k = n
            .as_f64()
            .ok_or_else(|| GameError::new(format!("{GAME_ID}: \"n\" must be a number, not {}", n.type_name())))?;
        Ok(SubmittedAction::new("Action 1").with_index(k).with_seat(ctx.participant_id))
    }

    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        if !can_act(view, seat) {
            return Vec::new();
        }
        (0..=3u32).map(|n| obj! { "n" => n }.into()).collect()
    }
}
