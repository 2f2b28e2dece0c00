//! `example/duel`: a two-seat game with simultaneous moves and hidden
//! information, written as a crate outside `gaos-games` to show what a game
//! needs to be served, played, benchmarked and verified by `gaos`.
//!
//! Each seat starts with the same budget of points. Every round both seats
//! bid at once, in secret, part of what they have left; the higher bid wins
//! the round and both bids are spent. A seat's remaining budget is in its
//! own view only, and a bid is revealed to the other seat only once the
//! round resolves. After the last round, the seat with more rounds won wins.
//!
//! The rules are a [`TickReducer`] ([`DuelReducer`]); [`DuelGame`] adds the
//! identity, seats, levels and the mapping from `{"bid": N}` commands to
//! actions. `src/main.rs` hands the game to `gaos_cli::App`.

use gaos_json::{Map, Value, obj};
use gaos_kernel::{
    CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, ReplayMetrics, SubmittedAction, TickReducer,
    erase_reducer,
};

/// Game id of the duel.
pub const GAME_ID: &str = "example/duel";

/// The seats, in game order.
pub const SEATS: [&str; 2] = ["red", "blue"];

/// The largest number of rounds or budget a level may ask for: it keeps
/// every score and legal-action list small.
pub const MAX_LEVEL_VALUE: u64 = 1_000;

/// One resolved round: both bids, and who won (`None` on a tie).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    pub bids: [u64; 2],
    pub winner: Option<usize>,
}

/// The whole game state (the kernel clones it into drafts, so it is plain data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuelState {
    pub rounds: u64,
    /// Points each seat has left, by seat index.
    pub budgets: [u64; 2],
    /// Rounds won, by seat index.
    pub wins: [u64; 2],
    pub history: Vec<Round>,
}

impl DuelState {
    fn ended(&self) -> bool {
        self.history.len() as u64 >= self.rounds
    }
}

fn seat_index(seat: &str) -> Option<usize> {
    SEATS.iter().position(|s| *s == seat)
}

fn level_field(level: &Value, key: &str) -> Result<u64, GameError> {
    match level.get(key).and_then(Value::as_u64) {
        Some(n) if (1..=MAX_LEVEL_VALUE).contains(&n) => Ok(n),
        _ => Err(GameError::new(format!("{GAME_ID}: the level needs `{key}`, an integer in 1..={MAX_LEVEL_VALUE}"))),
    }
}

/// The bid an action carries (`payload.points`).
fn points_of(action: &SubmittedAction) -> Option<u64> {
    action.payload_field("points").and_then(Value::as_u64)
}

/// The duel's rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct DuelReducer;

impl TickReducer for DuelReducer {
    type State = DuelState;

    fn init(&self, level: &Value, _seed: u32) -> Result<DuelState, GameError> {
        let rounds = level_field(level, "rounds")?;
        let budget = level_field(level, "budget")?;
        Ok(DuelState { rounds, budgets: [budget; 2], wins: [0; 2], history: Vec::new() })
    }

    /// One round: exactly one bid from each seat (the kernel hands them over
    /// in canonical order, so the result never depends on arrival order).
    fn advance(&self, mut state: DuelState, inputs: &[SubmittedAction]) -> Result<DuelState, GameError> {
        if state.ended() {
            return Err(GameError::new(format!("{GAME_ID}: the duel is over")));
        }
        let mut bids: [Option<u64>; 2] = [None, None];
        for input in inputs {
            let seat = input.seat.as_deref().unwrap_or("");
            let i = seat_index(seat).ok_or_else(|| GameError::new(format!("{GAME_ID}: unknown seat {seat:?}")))?;
            let points = points_of(input)
                .filter(|&p| p <= state.budgets[i])
                .ok_or_else(|| GameError::new(format!("{GAME_ID}: {seat} bid more than it has")))?;
            if bids[i].replace(points).is_some() {
                return Err(GameError::new(format!("{GAME_ID}: {seat} bid twice in one round")));
            }
        }
        let [Some(red), Some(blue)] = bids else {
            return Err(GameError::new(format!("{GAME_ID}: a round needs one bid from each seat")));
        };
        let winner = match red.cmp(&blue) {
            std::cmp::Ordering::Greater => Some(0),
            std::cmp::Ordering::Less => Some(1),
            std::cmp::Ordering::Equal => None,
        };
        if let Some(w) = winner {
            state.wins[w] += 1;
        }
        state.budgets[0] -= red;
        state.budgets[1] -= blue;
        state.history.push(Round { bids: [red, blue], winner });
        Ok(state)
    }

    /// The public view (spectators): rounds won and the bids of resolved
    /// rounds, never a remaining budget.
    fn view(&self, state: &DuelState) -> Value {
        let ended = state.ended();
        let outcome = if ended {
            let mut ranking: Vec<(usize, u64)> = vec![(0, state.wins[0]), (1, state.wins[1])];
            ranking.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let entries: Vec<Value> = ranking
                .iter()
                .map(|&(i, score)| {
                    let rank = 1 + state.wins.iter().filter(|&&other| other > score).count();
                    obj! { "seat" => SEATS[i], "rank" => rank, "score" => score }.into()
                })
                .collect();
            obj! { "kind" => "decided", "ranking" => entries }
        } else {
            obj! { "kind" => "ongoing" }
        };
        let history: Vec<Value> = state
            .history
            .iter()
            .map(|round| {
                obj! {
                    "red" => round.bids[0],
                    "blue" => round.bids[1],
                    "winner" => round.winner.map(|w| SEATS[w]),
                }
                .into()
            })
            .collect();
        let seats: Vec<Value> = SEATS.iter().map(|s| Value::from(*s)).collect();
        obj! {
            "status" => if ended { "ended" } else { "playing" },
            "participation" => obj! { "mode" => "simultaneous", "seats" => seats },
            "outcome" => outcome,
            "round" => state.history.len() as u64,
            "rounds" => state.rounds,
            "wins" => obj! { "red" => state.wins[0], "blue" => state.wins[1] },
            "history" => history,
        }
        .into()
    }

    /// A seat's view: the public one plus its own remaining budget.
    fn view_for(&self, state: &DuelState, seat: &str) -> Value {
        let mut view = self.view(state);
        if let (Some(map), Some(i)) = (view.as_object_mut(), seat_index(seat)) {
            map.insert("seat".into(), seat.into());
            map.insert("budget".into(), state.budgets[i].into());
        }
        view
    }

    fn has_view_for(&self) -> bool {
        true
    }

    fn replay_metrics(&self, state: &DuelState) -> Option<ReplayMetrics> {
        Some(ReplayMetrics { actions_used: 2 * state.history.len() as u64 })
    }

    /// Refused bids never reach `advance`: the submitter gets
    /// `illegal_command` with this message and the window stays open.
    fn validate_command(&self, state: &DuelState, seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        let i = seat_index(seat).ok_or_else(|| GameError::new(format!("{GAME_ID}: {seat:?} is not a seat")))?;
        match points_of(action) {
            Some(points) if points <= state.budgets[i] => Ok(()),
            _ => Err(GameError::new(format!("{GAME_ID}: bid an integer from 0 to {} (your budget)", state.budgets[i]))),
        }
    }
}

/// The duel as a [`Game`]: `{"bid": N}` commands.
#[derive(Debug, Clone, Copy, Default)]
pub struct DuelGame;

impl Game for DuelGame {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional(GAME_ID)
    }

    fn description(&self) -> &str {
        "Two seats bid in secret from a shrinking budget each round; the higher bid wins the round."
    }

    fn seats(&self) -> Vec<String> {
        SEATS.iter().map(|s| (*s).to_owned()).collect()
    }

    fn levels(&self) -> Vec<LevelSpec> {
        vec![
            LevelSpec {
                id: "default".into(),
                version: None,
                level: obj! { "rounds" => 3u32, "budget" => 10u32 }.into(),
            },
            LevelSpec { id: "long".into(), version: None, level: obj! { "rounds" => 7u32, "budget" => 30u32 }.into() },
        ]
    }

    fn reducer(&self) -> DynReducer {
        erase_reducer(DuelReducer)
    }

    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        let points = command
            .get("bid")
            .and_then(Value::as_u64)
            .ok_or_else(|| GameError::new(format!(r#"{GAME_ID}: a command is {{"bid": N}} with N a whole number"#)))?;
        let mut payload = Map::new();
        payload.insert("points".into(), points.into());
        // Replays name actions "Action N" (N indexes the header's `perm`);
        // the duel has one kind of action, and the bid travels as payload.
        Ok(SubmittedAction::new("Action 1").with_seat(ctx.participant_id).with_payload(payload.into()))
    }

    /// Every bid the seat can still afford, from its own view's `budget`.
    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        let playing = view.get("status").and_then(Value::as_str) == Some("playing");
        let budget = view.get("budget").and_then(Value::as_u64);
        match budget {
            Some(budget) if playing && seat_index(seat).is_some() => {
                (0..=budget).map(|points| obj! { "bid" => points }.into()).collect()
            }
            _ => Vec::new(),
        }
    }
}
