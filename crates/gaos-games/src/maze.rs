//! `gaos/maze`: a seeded maze with fog of war, for single-agent benchmarks.
//!
//! One seat (`player`) starts in the top-left cell of a perfect maze (every
//! cell reachable, exactly one path between any two cells) generated from the
//! session seed with `mulberry32`. The exit is the cell farthest from the
//! start. The seat sees only the cells within `radius` of its position
//! (Chebyshev distance), its own position and, once it has come within
//! `radius` of it, the exit. Each window takes one move
//! (`{"move": "n" | "e" | "s" | "w"}`); moving into a wall is refused as an
//! illegal command.
//!
//! The level ends `won` when the seat reaches the exit (stars: 3 on a
//! shortest path, 2 within twice its length, else 1) or `failed` when
//! `maxSteps` moves are used up. `actionsUsed` is the number of moves. The
//! final view's `outcome` reports `moves` and `shortestPath`, so scorers can
//! rate efficiency without knowing the maze.
//!
//! ```
//! use gaos_games::maze::{MazeReducer, SEAT};
//! use gaos_kernel::TickReducer;
//!
//! let level = gaos_json::parse(r#"{"width": 5, "height": 4, "radius": 1, "maxSteps": 50}"#).unwrap();
//! let state = MazeReducer.init(&level, 7).unwrap();
//! assert_eq!(state, MazeReducer.init(&level, 7).unwrap(), "the seed decides the maze");
//! let view = MazeReducer.view_for(&state, SEAT);
//! assert!(view.get("maze").is_none(), "the seat never sees the whole maze");
//! assert_eq!(view.get("status").unwrap().as_str(), Some("playing"));
//! ```

use std::collections::VecDeque;

use gaos_json::{Map, Value, obj};
use gaos_kernel::seed::Mulberry32;
use gaos_kernel::{
    CommandContext, DynReducer, Game, GameError, GameRef, LevelSpec, ReplayMetrics, SubmittedAction, TickReducer,
    erase_reducer,
};

use crate::common::{can_act, command_object, level_object, level_uint, ongoing};

/// Game id of the maze.
pub const GAME_ID: &str = "gaos/maze";

/// The only seat.
pub const SEAT: &str = "player";

/// Largest width or height a level may ask for.
pub const MAX_SIDE: u64 = 64;

/// Largest vision radius.
pub const MAX_RADIUS: u64 = 16;

/// Largest move budget.
pub const MAX_STEPS: u64 = 1_000_000;

/// Level keys the maze understands.
const LEVEL_KEYS: [&str; 4] = ["width", "height", "radius", "maxSteps"];

/// A compass direction, with its wall bit in a cell's open mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Up (y − 1).
    North,
    /// Right (x + 1).
    East,
    /// Down (y + 1).
    South,
    /// Left (x − 1).
    West,
}

impl Direction {
    /// Every direction, in the order views list them.
    pub const ALL: [Direction; 4] = [Direction::North, Direction::East, Direction::South, Direction::West];

    /// The command letter (`n`, `e`, `s`, `w`).
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::North => "n",
            Direction::East => "e",
            Direction::South => "s",
            Direction::West => "w",
        }
    }

    /// The direction of a command letter.
    pub fn parse(text: &str) -> Option<Direction> {
        Direction::ALL.into_iter().find(|d| d.as_str() == text)
    }

    fn bit(self) -> u8 {
        match self {
            Direction::North => 1,
            Direction::East => 2,
            Direction::South => 4,
            Direction::West => 8,
        }
    }

    fn opposite(self) -> Direction {
        match self {
            Direction::North => Direction::South,
            Direction::East => Direction::West,
            Direction::South => Direction::North,
            Direction::West => Direction::East,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Direction::North => "north",
            Direction::East => "east",
            Direction::South => "south",
            Direction::West => "west",
        }
    }
}

/// Reducer state: the maze (one open-passage mask per cell, row-major), the
/// seat's position, the exit and the move count.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MazeState {
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Vision radius (Chebyshev distance).
    pub radius: u32,
    /// Move budget.
    pub max_steps: u64,
    /// Open passages of each cell (bit 1 north, 2 east, 4 south, 8 west).
    pub open: Vec<u8>,
    /// The seat's cell (row-major index).
    pub position: usize,
    /// The exit's cell.
    pub exit: usize,
    /// Whether the seat has come within `radius` of the exit.
    pub exit_seen: bool,
    /// Moves made.
    pub moves: u64,
    /// Length of the shortest path from the start to the exit.
    pub shortest: u64,
}

impl MazeState {
    fn xy(&self, cell: usize) -> (u32, u32) {
        let width = self.width as usize;
        ((cell % width) as u32, (cell / width) as u32)
    }

    /// The neighbour of `cell` in `direction`, when it is inside the maze.
    fn step(&self, cell: usize, direction: Direction) -> Option<usize> {
        let (x, y) = self.xy(cell);
        let (x, y) = match direction {
            Direction::North => (x, y.checked_sub(1)?),
            Direction::East => (x.checked_add(1).filter(|&x| x < self.width)?, y),
            Direction::South => (x, y.checked_add(1).filter(|&y| y < self.height)?),
            Direction::West => (x.checked_sub(1)?, y),
        };
        Some(y as usize * self.width as usize + x as usize)
    }

    /// True when `cell` is within the vision radius of the seat.
    fn in_sight(&self, cell: usize) -> bool {
        let (px, py) = self.xy(self.position);
        let (x, y) = self.xy(cell);
        px.abs_diff(x).max(py.abs_diff(y)) <= self.radius
    }

    /// `won`, `failed` or `playing`.
    pub fn status(&self) -> &'static str {
        if self.position == self.exit {
            "won"
        } else if self.moves >= self.max_steps {
            "failed"
        } else {
            "playing"
        }
    }

    /// Stars of a won level: 3 on a shortest path, 2 within twice its length, else 1.
    pub fn stars(&self) -> Option<u32> {
        (self.status() == "won").then(|| {
            if self.moves <= self.shortest {
                3
            } else if self.moves <= 2 * self.shortest {
                2
            } else {
                1
            }
        })
    }

    fn open_directions(&self, cell: usize) -> Vec<Value> {
        Direction::ALL.into_iter().filter(|d| self.open[cell] & d.bit() != 0).map(|d| Value::from(d.as_str())).collect()
    }

    fn point(&self, cell: usize) -> Value {
        let (x, y) = self.xy(cell);
        obj! { "x" => x, "y" => y }.into()
    }

    fn outcome(&self) -> Value {
        match self.status() {
            "playing" => ongoing(),
            status => obj! {
                "kind" => "decided",
                "reason" => if status == "won" { "exit" } else { "budget" },
                "moves" => self.moves,
                "shortestPath" => self.shortest,
            }
            .into(),
        }
    }

    /// Fields every view shares.
    fn common_view(&self) -> Map {
        let mut view = obj! {
            "status" => self.status(),
            "participation" => obj! { "mode" => "sequential", "activeSeat" => SEAT },
            "width" => self.width,
            "height" => self.height,
            "radius" => self.radius,
            "position" => self.point(self.position),
            "open" => self.open_directions(self.position),
            "moves" => self.moves,
            "maxSteps" => self.max_steps,
            "outcome" => self.outcome(),
        };
        if let Some(stars) = self.stars() {
            view.insert("stars".into(), stars.into());
        }
        view
    }

    fn update_sight(&mut self) {
        if !self.exit_seen && self.in_sight(self.exit) {
            self.exit_seen = true;
        }
    }

    /// Refuse a move the rules do not allow (wrong seat, game over, wall).
    fn check_move(&self, seat: Option<&str>, action: &SubmittedAction) -> Result<Direction, GameError> {
        if seat != Some(SEAT) {
            return Err(GameError::new(format!("{GAME_ID}: only seat {SEAT:?} moves, not {seat:?}")));
        }
        if self.status() != "playing" {
            return Err(GameError::new(format!("{GAME_ID}: the level is over ({})", self.status())));
        }
        let direction = action
            .payload_field("move")
            .and_then(Value::as_str)
            .and_then(Direction::parse)
            .ok_or_else(|| GameError::new(format!("{GAME_ID}: a move is one of n, e, s, w")))?;
        if self.open[self.position] & direction.bit() == 0 {
            let (x, y) = self.xy(self.position);
            return Err(GameError::new(format!(
                "{GAME_ID}: a wall blocks the way {} from ({x}, {y}); open: {}",
                direction.name(),
                self.open_directions(self.position).iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
            )));
        }
        Ok(direction)
    }
}

/// Carve a perfect maze with an iterative randomized depth-first search from
/// cell 0: at each step a uniformly drawn unvisited neighbour (listed north,
/// east, south, west) is opened, `index = floor(draw × count)`.
fn carve(width: u32, height: u32, seed: u32) -> Vec<u8> {
    let cells = width as usize * height as usize;
    let mut probe = MazeState {
        width,
        height,
        radius: 0,
        max_steps: 1,
        open: vec![0; cells],
        position: 0,
        exit: 0,
        exit_seen: false,
        moves: 0,
        shortest: 0,
    };
    let mut visited = vec![false; cells];
    let mut rng = Mulberry32::new(seed);
    let mut stack = vec![0usize];
    visited[0] = true;
    while let Some(&cell) = stack.last() {
        let options: Vec<(Direction, usize)> = Direction::ALL
            .into_iter()
            .filter_map(|d| probe.step(cell, d).map(|next| (d, next)))
            .filter(|&(_, next)| !visited[next])
            .collect();
        if options.is_empty() {
            stack.pop();
            continue;
        }
        let pick = ((rng.next_f64() * options.len() as f64) as usize).min(options.len() - 1);
        let (direction, next) = options[pick];
        probe.open[cell] |= direction.bit();
        probe.open[next] |= direction.opposite().bit();
        visited[next] = true;
        stack.push(next);
    }
    probe.open
}

/// Breadth-first distances from `from` over open passages.
fn distances(state: &MazeState, from: usize) -> Vec<Option<u64>> {
    let mut distance = vec![None; state.open.len()];
    distance[from] = Some(0);
    let mut queue = VecDeque::from([from]);
    while let Some(cell) = queue.pop_front() {
        let here = distance[cell].unwrap_or(0);
        for direction in Direction::ALL {
            if state.open[cell] & direction.bit() == 0 {
                continue;
            }
            if let Some(next) = state.step(cell, direction)
                && distance[next].is_none()
            {
                distance[next] = Some(here + 1);
                queue.push_back(next);
            }
        }
    }
    distance
}

/// The maze reducer: hidden information (the seat's view is fogged).
#[derive(Debug, Clone, Copy, Default)]
pub struct MazeReducer;

impl TickReducer for MazeReducer {
    type State = MazeState;

    fn encode_state(&self, state: &MazeState) -> Option<Value> {
        crate::common::encode_state(state)
    }

    fn decode_state(&self, value: &Value) -> Result<MazeState, GameError> {
        crate::common::decode_state(value, GAME_ID)
    }

    fn init(&self, level: &Value, seed: u32) -> Result<MazeState, GameError> {
        if let Some(key) = level_object(level, GAME_ID)?.keys().find(|k| !LEVEL_KEYS.contains(&k.as_str())) {
            return Err(GameError::new(format!(
                "{GAME_ID}: unknown level field {key:?} (known: {})",
                LEVEL_KEYS.join(", ")
            )));
        }
        let width = level_uint(level, "width", GAME_ID, 2, MAX_SIDE)? as u32;
        let height = level_uint(level, "height", GAME_ID, 2, MAX_SIDE)? as u32;
        let radius = level_uint(level, "radius", GAME_ID, 0, MAX_RADIUS)? as u32;
        let max_steps = level_uint(level, "maxSteps", GAME_ID, 1, MAX_STEPS)?;
        let mut state = MazeState {
            width,
            height,
            radius,
            max_steps,
            open: carve(width, height, seed),
            position: 0,
            exit: 0,
            exit_seen: false,
            moves: 0,
            shortest: 0,
        };
        // The exit is the cell farthest from the start (the first such cell
        // in row-major order); a perfect maze reaches every cell.
        let distance = distances(&state, 0);
        let (exit, shortest) = distance
            .iter()
            .enumerate()
            .filter_map(|(cell, d)| d.map(|d| (cell, d)))
            .fold((0, 0), |best, (cell, d)| if d > best.1 { (cell, d) } else { best });
        state.exit = exit;
        state.shortest = shortest;
        state.update_sight();
        Ok(state)
    }

    fn advance(&self, mut state: MazeState, inputs: &[SubmittedAction]) -> Result<MazeState, GameError> {
        let [input] = inputs else {
            return Err(GameError::new(format!("{GAME_ID}: a window takes exactly one move, got {}", inputs.len())));
        };
        let direction = state.check_move(input.seat.as_deref(), input)?;
        state.position = state.step(state.position, direction).expect("an open passage leads to a cell in the maze");
        state.moves += 1;
        state.update_sight();
        Ok(state)
    }

    /// The full view (spectators, replays): the whole maze as rows of hex
    /// digits (one open-passage mask per cell), the exit and the shortest path.
    fn view(&self, state: &MazeState) -> Value {
        let mut view = state.common_view();
        let rows: Vec<Value> = state
            .open
            .chunks(state.width as usize)
            .map(|row| Value::from(row.iter().map(|mask| format!("{mask:x}")).collect::<String>()))
            .collect();
        view.insert("maze".into(), Value::Array(rows));
        view.insert("exit".into(), state.point(state.exit));
        view.insert("shortestPath".into(), state.shortest.into());
        view.into()
    }

    /// The seat's view: only the cells within `radius` of its position, with
    /// their open directions, and the exit once it has been in sight.
    fn view_for(&self, state: &MazeState, _seat: &str) -> Value {
        let mut view = state.common_view();
        let visible: Vec<Value> = (0..state.open.len())
            .filter(|&cell| state.in_sight(cell))
            .map(|cell| {
                let (x, y) = state.xy(cell);
                obj! { "x" => x, "y" => y, "open" => state.open_directions(cell) }.into()
            })
            .collect();
        view.insert("visible".into(), Value::Array(visible));
        if state.exit_seen {
            view.insert("exit".into(), state.point(state.exit));
        }
        view.into()
    }

    fn has_view_for(&self) -> bool {
        true
    }

    fn replay_metrics(&self, state: &MazeState) -> Option<ReplayMetrics> {
        Some(ReplayMetrics { actions_used: state.moves })
    }

    fn validate_command(&self, state: &MazeState, seat: &str, action: &SubmittedAction) -> Result<(), GameError> {
        state.check_move(Some(seat), action).map(|_| ())
    }
}

/// The maze game: `{"move": d}` becomes `"Action 1"` with payload `{"move": d}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MazeGame;

fn level(width: u32, height: u32, radius: u32, max_steps: u32) -> Value {
    obj! { "width" => width, "height" => height, "radius" => radius, "maxSteps" => max_steps }.into()
}

impl Game for MazeGame {
    fn game_ref(&self) -> GameRef {
        GameRef::conventional(GAME_ID)
    }

    fn description(&self) -> &str {
        "A seeded maze with fog of war: find the exit within the move budget, seeing only nearby cells."
    }

    fn seats(&self) -> Vec<String> {
        vec![SEAT.to_owned()]
    }

    /// `tiny` 3×3 (60 moves), `small` 4×4 (120), `medium` 6×6 (300, radius 2)
    /// and `large` 10×10 (1000, radius 2). Mazes are depth-first carved, so
    /// paths wind: a uniformly random walker wins most tiny mazes, few
    /// medium ones and almost no large ones.
    fn levels(&self) -> Vec<LevelSpec> {
        [
            ("tiny", level(3, 3, 1, 60)),
            ("small", level(4, 4, 1, 120)),
            ("medium", level(6, 6, 2, 300)),
            ("large", level(10, 10, 2, 1000)),
        ]
        .into_iter()
        .map(|(id, level)| LevelSpec { id: id.into(), version: None, level })
        .collect()
    }

    fn reducer(&self) -> DynReducer {
        erase_reducer(MazeReducer)
    }

    fn command_to_action(&self, command: &Value, ctx: &CommandContext<'_>) -> Result<SubmittedAction, GameError> {
        let map = command_object(command, GAME_ID, r#"{"move": "n"}"#)?;
        let direction = map.get("move").and_then(Value::as_str).and_then(Direction::parse).ok_or_else(|| {
            GameError::new(format!(r#"{GAME_ID}: the command must be {{"move": "n" | "e" | "s" | "w"}}"#))
        })?;
        Ok(SubmittedAction::new("Action 1")
            .with_payload(obj! { "move" => direction.as_str() }.into())
            .with_seat(ctx.participant_id))
    }

    /// The open directions at the seat's position (`view.open`).
    fn legal_actions(&self, view: &Value, seat: &str) -> Vec<Value> {
        if !can_act(view, seat) {
            return Vec::new();
        }
        view.get("open")
            .and_then(Value::as_array)
            .map(|open| {
                open.iter()
                    .filter_map(Value::as_str)
                    .filter(|d| Direction::parse(d).is_some())
                    .map(|d| obj! { "move" => d }.into())
                    .collect()
            })
            .unwrap_or_default()
    }
}
