//! `conformance/tictactoe`: sequential noughts and crosses from a given
//! board; x wins with stars, an o line fails the level, a full board ends it.

use gaos_json::{Value, obj};
use gaos_kernel::{
    CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, ReplayMetrics, SubmittedAction, TickReducer,
    TimeoutContext, TimeoutInput, erase_reducer, mulberry32,
};

use crate::common::{can_act, level_object, ongoing, timeout_seat};

/// Game id of tictactoe.
pub const GAME_ID: &str = "conformance/tictactoe";

/// The game's own seats, in game order.
pub const SEATS: [&str; 2] = ["x", "o"];

/// Replay wire permutation the scripts use: wire `Action k` is canonical `Action 10-k`.
pub const PERM: [usize; 9] = [8, 7, 6, 5, 4, 3, 2, 1, 0];

/// The 3 rows, 3 columns and 2 diagonals.
pub const LINES: [[usize; 3]; 8] =
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

/// A player's mark (also its seat id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mark {
    /// Seat `x`.
    X,
    /// Seat `o`.
    O,
}

impl Mark {
    /// The seat id, which is also the board character.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::X => "x",
            Mark::O => "o",
        }
    }

    /// The mark of seat `seat`.
    pub fn from_seat(seat: &str) -> Option<Mark> {
        match seat {
            "x" => Some(Mark::X),
            "o" => Some(Mark::O),
            _ => None,
        }
    }

    /// The other player.
    pub fn other(self) -> Mark {
        match self {
            Mark::X => Mark::O,
            Mark::O => Mark::X,
        }
    }

    fn byte(self) -> u8 {
        match self {
            Mark::X => b'x',
            Mark::O => b'o',
        }
    }
}

/// Reducer state: `{board, toMove, moves, passes}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TicTacToeState {
    /// Row-major cells, each `b'x'`, `b'o'` or `b'.'`.
    pub board: [u8; 9],
    /// The seat whose window is open.
    pub to_move: Mark,
    /// Windows resolved (moves and passes).
    pub moves: u64,
    /// Windows resolved by a pass.
    pub passes: u64,
}

/// Where a board stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// x has a line (checked first).
    XLine,
    /// o has a line and x does not.
    OLine,
    /// No line and no empty cell.
    Draw,
    /// Still playing.
    Open,
}

impl TicTacToeState {
    /// The board as its 9-character string.
    pub fn board_str(&self) -> String {
        self.board.iter().map(|&b| char::from(b)).collect()
    }

    /// Lines first (x before o), then a full board.
    pub fn standing(&self) -> Standing {
        let has_line = |m: u8| LINES.iter().any(|line| line.iter().all(|&c| self.board[c] == m));
        if has_line(b'x') {
            Standing::XLine
        } else if has_line(b'o') {
            Standing::OLine
        } else if !self.board.contains(&b'.') {
            Standing::Draw
        } else {
            Standing::Open
        }
    }
}

/// The cell (0..9) of an action id `"Action 1"`..`"Action 9"`.
pub fn action_cell(id: &str) -> Option<usize> {
    match id.strip_prefix("Action ")?.as_bytes() {
        [d @ b'1'..=b'9'] => Some(usize::from(d - b'1')),
        _ => None,
    }
}

/// Why an action that names no cell is refused, in the command's terms:
/// every command but `{"cell": c}` with c in 0..=8 maps to `Action 0`.
const NOT_A_CELL: &str = r#"that is not a cell on the board: a move is {"cell": C} with C a free cell from 0 to 8"#;

fn is_pass(action: &SubmittedAction) -> bool {
    action.payload_field("pass") == Some(&Value::Bool(true))
}

/// The tictactoe reducer (perfect information, sequential windows).
#[derive(Debug, Clone, Copy, Default)]
pub struct TicTacToeReducer;

impl TickReducer for TicTacToeReducer {
    type State = TicTacToeState;

    fn encode_state(&self, state: &TicTacToeState) -> Option<Value> {
        crate::common::encode_state(state)
    }

    fn decode_state(&self, value: &Value) -> Result<TicTacToeState, GameError> {
        crate::common::decode_state(value, GAME_ID)
    }

    fn init(&self, level: &Value, seed: u32) -> Result<TicTacToeState, GameError> {
        let map = level_object(level, GAME_ID)?;
        let board_text = map
            .get("board")
            .and_then(Value::as_str)
            .ok_or_else(|| GameError::new(format!("{GAME_ID}: the level needs a string \"board\"")))?;
        let board: [u8; 9] = board_text
            .as_bytes()
            .try_into()
            .ok()
            .filter(|cells: &[u8; 9]| cells.iter().all(|c| matches!(c, b'x' | b'o' | b'.')))
            .ok_or_else(|| {
                GameError::new(format!(
                    "{GAME_ID}: \"board\" must be 9 characters over x, o and '.', found {board_text:?}"
                ))
            })?;
        let to_move = match map.get("first").and_then(Value::as_str) {
            Some("x") => Mark::X,
            Some("o") => Mark::O,
            Some("seed") => {
                if mulberry32(seed).next_f64() < 0.5 {
                    Mark::X
                } else {
                    Mark::O
                }
            }
            _ => {
                return Err(GameError::new(format!("{GAME_ID}: \"first\" must be \"x\", \"o\" or \"seed\"")));
            }
        };
        Ok(TicTacToeState { board, to_move, moves: 0, passes: 0 })
    }

    fn advance(&self, mut state: TicTacToeState, inputs: &[SubmittedAction]) -> Result<TicTacToeState, GameError> {
        let [input] = inputs else {
            return Err(GameError::new(format!("{GAME_ID}: a window takes exactly one input, got {}", inputs.len())));
        };
        let mover = state.to_move;
        if input.seat.as_deref() != Some(mover.as_str()) {
            let seat = input.seat.as_deref().map_or_else(|| "a seatless input's".to_owned(), |s| format!("{s}'s"));
            return Err(GameError::new(format!("{GAME_ID}: it is {}'s turn, not {seat}", mover.as_str())));
        }
        if is_pass(input) {
            state.passes += 1;
        } else {
            let cell = action_cell(&input.id).ok_or_else(|| GameError::new(format!("{GAME_ID}: {NOT_A_CELL}")))?;
            if state.board[cell] != b'.' {
                return Err(GameError::new(format!("{GAME_ID}: cell {cell} is taken")));
            }
            state.board[cell] = mover.byte();
        }
        state.to_move = mover.other();
        state.moves += 1;
        Ok(state)
    }

    fn view(&self, state: &TicTacToeState) -> Value {
        let rank = |seat: &str, rank: u32| -> Value { obj! { "seat" => seat, "rank" => rank }.into() };
        let decided = |ranking: Vec<Value>, reason: &str| -> Value {
            obj! { "kind" => "decided", "ranking" => ranking, "reason" => reason }.into()
        };
        let (status, stars, outcome) = match state.standing() {
            Standing::XLine => {
                let stars: u32 = match state.moves {
                    0..=5 => 3,
                    6..=7 => 2,
                    _ => 1,
                };
                ("won", Some(stars), decided(vec![rank("x", 1), rank("o", 2)], "line"))
            }
            Standing::OLine => ("failed", None, decided(vec![rank("o", 1), rank("x", 2)], "line")),
            Standing::Draw => ("ended", None, decided(vec![rank("o", 1), rank("x", 1)], "draw")),
            Standing::Open => ("playing", None, ongoing()),
        };
        let mut view = obj! {
            "status" => status,
            "participation" => obj! { "mode" => "sequential", "activeSeat" => state.to_move.as_str() },
            "outcome" => outcome,
            "board" => state.board_str(),
            "toMove" => state.to_move.as_str(),
            "moves" => state.moves,
            "passes" => state.passes,
        };
        if let Some(stars) = stars {
            view.insert("stars".into(), stars.into());
        }
        view.into()
    }

    fn replay_metrics(&self, state: &TicTacToeState) -> Option<ReplayMetrics> {
        Some(ReplayMetrics { actions_used: state.moves })
    }

    fn validate_command(&self, state: &TicTacToeState, seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        if seat != state.to_move.as_str() {
            return Err(GameError::new(format!("{GAME_ID}: it is {}'s turn, not {seat}'s", state.to_move.as_str())));
        }
        if is_pass(action) {
            return Ok(());
        }
        match action_cell(&action.id) {
            Some(cell) if state.board[cell] == b'.' => Ok(()),
            Some(cell) => Err(GameError::new(format!("{GAME_ID}: cell {cell} is taken: choose a free cell"))),
            None => Err(GameError::new(format!("{GAME_ID}: {NOT_A_CELL}"))),
        }
    }
}

/// The tictactoe game: `{cell: c}` (c in 0..=8) becomes `"Action c+1"`, any
/// other command `"Action 0"` (which validation refuses); a timed-out seat
/// passes.
#[derive(Debug, Clone, Copy, Default)]
pub struct TicTacToeGame;

impl Game for TicTacToeGame {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional(GAME_ID)
    }

    fn description(&self) -> &str {
        "Noughts and crosses in sequential windows; x wins with up to three stars, an o line fails."
    }

    fn seats(&self) -> Vec<String> {
        SEATS.iter().map(|s| (*s).to_owned()).collect()
    }

    fn levels(&self) -> Vec<LevelSpec> {
        vec![
            LevelSpec {
                id: "default".into(),
                version: None,
                level: obj! { "board" => ".........", "first" => "x" }.into(),
            },
            LevelSpec {
                id: "seeded".into(),
                version: None,
                level: obj! { "board" => ".........", "first" => "seed" }.into(),
            },
        ]
    }

    fn reducer(&self) -> DynReducer {
        erase_reducer(TicTacToeReducer)
    }

    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        let cell = command.get("cell").and_then(Value::as_f64).filter(|c| c.fract() == 0.0 && (0.0..=8.0).contains(c));
        let id = match cell {
            Some(c) => format!("Action {}", c as u8 + 1),
            None => "Action 0".to_owned(),
        };
        Ok(SubmittedAction::new(id).with_seat(ctx.participant_id))
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
                SubmittedAction::new("Action 1").with_payload(obj! { "pass" => true }.into()).with_seat(seat)
            }),
        )
    }

    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        if !can_act(view, seat) {
            return Vec::new();
        }
        let Some(board) = view.get("board").and_then(Value::as_str) else {
            return Vec::new();
        };
        board
            .bytes()
            .take(9)
            .enumerate()
            .filter(|&(_, b)| b == b'.')
            .map(|(cell, _)| obj! { "cell" => cell }.into())
            .collect()
    }
}
