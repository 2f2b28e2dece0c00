//! `conformance/hilo`: two seats hold hidden hands dealt by an LCG and play
//! one card each per simultaneous round; the higher card scores.

use gaos_json::{MAX_SAFE_INTEGER, Map, Value, obj};
use gaos_kernel::{
    CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, ReplayMetrics, SubmittedAction, TickReducer,
    TimeoutContext, TimeoutInput, erase_reducer,
};

use crate::common::{
    can_act, command_object, decided_by_score, input_seat, level_uint, ongoing, simultaneous, timeout_seat,
};

/// Game id of hilo.
pub const GAME_ID: &str = "conformance/hilo";

/// The game's own seats, in game order (alice is dealt first).
pub const SEATS: [&str; 2] = ["alice", "bob"];

/// Largest `handSize` a level may ask for (hands are materialized).
pub const MAX_HAND_SIZE: u64 = 100_000;

/// One resolved round: both cards and the winning seat (`None` on a tie).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HiloRound {
    /// alice's card.
    pub alice: u64,
    /// bob's card.
    pub bob: u64,
    /// Index into [`SEATS`] of the seat with the higher card.
    pub winner: Option<usize>,
}

/// Reducer state: `{handSize, round, hands, score, history, actionsUsed}`.
/// Per-seat arrays are indexed like [`SEATS`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HiloState {
    /// Cards dealt to each seat (`level.handSize`); the game ends after this many rounds.
    pub hand_size: u64,
    /// Rounds resolved so far.
    pub round: u64,
    /// The cards each seat still holds, in dealt order.
    pub hands: [Vec<u64>; 2],
    /// Rounds won by each seat.
    pub score: [u64; 2],
    /// Every resolved round, oldest first.
    pub history: Vec<HiloRound>,
    /// Inputs consumed so far.
    pub actions_used: u64,
}

/// Index of `seat` in [`SEATS`].
pub fn seat_index(seat: &str) -> Option<usize> {
    SEATS.iter().position(|s| *s == seat)
}

/// The dealing LCG: `s = s × 1664525 + 1013904223` in u32 arithmetic.
#[derive(Debug, Clone)]
pub struct HiloLcg(u32);

impl HiloLcg {
    /// A generator starting at `seed`.
    pub fn new(seed: u32) -> Self {
        HiloLcg(seed)
    }

    /// Step and return the new state.
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        self.0
    }
}

/// The hilo reducer (hidden hands: `viewFor` adds the seat's own cards).
#[derive(Debug, Clone, Copy, Default)]
pub struct HiloReducer;

impl HiloReducer {
    fn ended(state: &HiloState) -> bool {
        state.round >= state.hand_size
    }
}

impl TickReducer for HiloReducer {
    type State = HiloState;

    fn encode_state(&self, state: &HiloState) -> Option<Value> {
        crate::common::encode_state(state)
    }

    fn decode_state(&self, value: &Value) -> Result<HiloState, GameError> {
        crate::common::decode_state(value, GAME_ID)
    }

    fn init(&self, level: &Value, seed: u32) -> Result<HiloState, GameError> {
        let hand_size = level_uint(level, "handSize", GAME_ID, 0, MAX_HAND_SIZE)?;
        let max_card = level_uint(level, "maxCard", GAME_ID, 1, MAX_SAFE_INTEGER as u64)?;
        let mut lcg = HiloLcg::new(seed);
        let mut deal = || (0..hand_size).map(|_| 1 + u64::from(lcg.next_u32()) % max_card).collect();
        let alice: Vec<u64> = deal();
        let bob: Vec<u64> = deal();
        Ok(HiloState { hand_size, round: 0, hands: [alice, bob], score: [0, 0], history: Vec::new(), actions_used: 0 })
    }

    fn advance(&self, mut state: HiloState, inputs: &[SubmittedAction]) -> Result<HiloState, GameError> {
        let mut picks: [Option<usize>; 2] = [None, None];
        for input in inputs {
            let seat = input_seat(input, GAME_ID)?;
            let i = seat_index(seat).ok_or_else(|| GameError::new(format!("{GAME_ID}: unknown seat {seat:?}")))?;
            if picks[i].is_some() {
                return Err(GameError::new(format!("{GAME_ID}: {seat} played twice in one round")));
            }
            let index = input.index_usize().filter(|&index| index < state.hands[i].len()).ok_or_else(|| {
                GameError::new(format!("{GAME_ID}: {seat}: {}", not_in_hand(input, state.hands[i].len())))
            })?;
            picks[i] = Some(index);
        }
        let [Some(a), Some(b)] = picks else {
            return Err(GameError::new(format!(
                "{GAME_ID}: a round needs exactly one input per seat, got {}",
                inputs.len()
            )));
        };
        let alice = state.hands[0].remove(a);
        let bob = state.hands[1].remove(b);
        let winner = match alice.cmp(&bob) {
            std::cmp::Ordering::Greater => Some(0),
            std::cmp::Ordering::Less => Some(1),
            std::cmp::Ordering::Equal => None,
        };
        if let Some(w) = winner {
            state.score[w] += 1;
        }
        state.history.push(HiloRound { alice, bob, winner });
        state.round += 1;
        state.actions_used += inputs.len() as u64;
        Ok(state)
    }

    fn view(&self, state: &HiloState) -> Value {
        let ended = Self::ended(state);
        let outcome =
            if ended { decided_by_score(&[(SEATS[0], state.score[0]), (SEATS[1], state.score[1])]) } else { ongoing() };
        let history: Vec<Value> = state
            .history
            .iter()
            .map(|r| {
                obj! {
                    "alice" => r.alice,
                    "bob" => r.bob,
                    "winner" => r.winner.map(|w| SEATS[w]),
                }
                .into()
            })
            .collect();
        obj! {
            "status" => if ended { "ended" } else { "playing" },
            "participation" => simultaneous(&SEATS),
            "outcome" => outcome,
            "round" => state.round,
            "score" => per_seat(state.score[0], state.score[1]),
            "history" => history,
            "handCounts" => per_seat(state.hands[0].len() as u64, state.hands[1].len() as u64),
        }
        .into()
    }

    /// The full view plus `seat` and the seat's own `hand` (empty for a seat
    /// that is not alice or bob).
    fn view_for(&self, state: &HiloState, seat: &str) -> Value {
        let mut view = self.view(state);
        let hand: Vec<Value> =
            seat_index(seat).map(|i| state.hands[i].iter().map(|&c| Value::from(c)).collect()).unwrap_or_default();
        if let Some(map) = view.as_object_mut() {
            map.insert("seat".into(), seat.into());
            map.insert("hand".into(), hand.into());
        }
        view
    }

    fn has_view_for(&self) -> bool {
        true
    }

    fn replay_metrics(&self, state: &HiloState) -> Option<ReplayMetrics> {
        Some(ReplayMetrics { actions_used: state.actions_used })
    }

    fn validate_command(&self, state: &HiloState, seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        if action.id != "Action 1" {
            return Err(GameError::new(format!(
                r#"{GAME_ID}: that is not a move of hilo: play a card, {{"card": i}}"#
            )));
        }
        let i = seat_index(seat).ok_or_else(|| GameError::new(format!("{GAME_ID}: seat {seat} holds no hand")))?;
        let held = state.hands[i].len();
        match action.index_usize() {
            Some(index) if index < held => Ok(()),
            _ => Err(GameError::new(format!("{GAME_ID}: {}", not_in_hand(action, held)))),
        }
    }
}

/// Why `action`'s card cannot be played from a hand of `held` cards, with
/// the card as the command named it.
fn not_in_hand(action: &SubmittedAction, held: usize) -> String {
    let card = action.index.map_or_else(|| "no card".to_owned(), |i| format!("card {}", Value::Number(i)));
    match held {
        0 => format!("{card} cannot be played: the hand is empty"),
        _ => format!("{card} is not in the hand: play a card from 0 to {}", held - 1),
    }
}

fn per_seat(alice: u64, bob: u64) -> Map {
    obj! { "alice" => alice, "bob" => bob }
}

/// The hilo game: command `{card: i}` plays the card at index `i`; a timed-out
/// seat plays its first card.
#[derive(Debug, Clone, Copy, Default)]
pub struct HiloGame;

impl Game for HiloGame {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional(GAME_ID)
    }

    fn description(&self) -> &str {
        "Two seats play one card from a hidden hand each round; the higher card scores."
    }

    fn seats(&self) -> Vec<String> {
        SEATS.iter().map(|s| (*s).to_owned()).collect()
    }

    fn levels(&self) -> Vec<LevelSpec> {
        vec![
            LevelSpec {
                id: "default".into(),
                version: None,
                level: obj! { "handSize" => 3u32, "maxCard" => 9u32 }.into(),
            },
            LevelSpec {
                id: "long".into(),
                version: None,
                level: obj! { "handSize" => 4u32, "maxCard" => 13u32 }.into(),
            },
        ]
    }

    fn reducer(&self) -> DynReducer {
        erase_reducer(HiloReducer)
    }

    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        let map = command_object(command, GAME_ID, r#"{"card": 0}"#)?;
        let card = map
            .get("card")
            .ok_or_else(|| GameError::new(format!(r#"{GAME_ID}: the command needs "card", e.g. {{"card": 0}}"#)))?;
        let index = card
            .as_f64()
            .ok_or_else(|| GameError::new(format!("{GAME_ID}: \"card\" must be a number, not {}", card.type_name())))?;
        Ok(SubmittedAction::new("Action 1").with_index(index).with_seat(ctx.participant_id))
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
            timeout_seat(timeout, GAME_ID).map(|seat| SubmittedAction::new("Action 1").with_index(0.0).with_seat(seat)),
        )
    }

    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        if !can_act(view, seat) {
            return Vec::new();
        }
        let held = view.get("hand").and_then(Value::as_array).map_or(0, Vec::len);
        (0..held).map(|i| obj! { "card" => i }.into()).collect()
    }
}
