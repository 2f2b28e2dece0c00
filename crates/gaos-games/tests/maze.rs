//! `gaos/maze`: generation determinism, perfect mazes, fog of war, winning,
//! running out of moves, legal actions and refusals.

use std::collections::{BTreeSet, VecDeque};

use gaos_games::GameRegistry;
use gaos_games::maze::{Direction, GAME_ID, MazeGame, MazeReducer, MazeState, SEAT};
use gaos_json::{Value, canonical_json, parse};
use gaos_kernel::{CommandContext, Game, SubmittedAction, TickReducer};

fn level(width: u32, height: u32, radius: u32, max_steps: u32) -> Value {
    parse(&format!(r#"{{"width":{width},"height":{height},"radius":{radius},"maxSteps":{max_steps}}}"#))
        .expect("level JSON")
}

fn ctx() -> CommandContext<'static> {
    CommandContext { session_id: "s", participant_id: SEAT, submission_id: "sub", cursor: 0, tick: 0 }
}

fn action(direction: Direction) -> SubmittedAction {
    let command = parse(&format!(r#"{{"move":"{}"}}"#, direction.as_str())).expect("JSON");
    MazeGame.command_to_action(&command, &ctx()).expect("a well-formed move")
}

fn go(state: MazeState, direction: Direction) -> MazeState {
    MazeReducer.advance(state, &[action(direction)]).expect("an open passage")
}

fn xy(state: &MazeState, cell: usize) -> (i64, i64) {
    ((cell % state.width as usize) as i64, (cell / state.width as usize) as i64)
}

fn neighbour(state: &MazeState, cell: usize, direction: Direction) -> usize {
    let (x, y) = xy(state, cell);
    let (x, y) = match direction {
        Direction::North => (x, y - 1),
        Direction::East => (x + 1, y),
        Direction::South => (x, y + 1),
        Direction::West => (x - 1, y),
    };
    (y * i64::from(state.width) + x) as usize
}

fn bit(direction: Direction) -> u8 {
    match direction {
        Direction::North => 1,
        Direction::East => 2,
        Direction::South => 4,
        Direction::West => 8,
    }
}

/// Directions of a shortest path from the seat to the exit (BFS over the full maze).
fn shortest_path(state: &MazeState) -> Vec<Direction> {
    let mut previous: Vec<Option<(usize, Direction)>> = vec![None; state.open.len()];
    let mut seen = vec![false; state.open.len()];
    seen[state.position] = true;
    let mut queue = VecDeque::from([state.position]);
    while let Some(cell) = queue.pop_front() {
        for direction in Direction::ALL {
            if state.open[cell] & bit(direction) != 0 {
                let next = neighbour(state, cell, direction);
                if !seen[next] {
                    seen[next] = true;
                    previous[next] = Some((cell, direction));
                    queue.push_back(next);
                }
            }
        }
    }
    let mut path = Vec::new();
    let mut cell = state.exit;
    while let Some((from, direction)) = previous[cell] {
        path.push(direction);
        cell = from;
    }
    path.reverse();
    path
}

fn open_directions(state: &MazeState) -> Vec<Direction> {
    Direction::ALL.into_iter().filter(|d| state.open[state.position] & bit(*d) != 0).collect()
}

#[test]
fn generation_is_deterministic_per_seed_and_differs_between_seeds() {
    let level = level(9, 7, 1, 100);
    let mazes: BTreeSet<Vec<u8>> = (0..20u32)
        .map(|seed| {
            let a = MazeReducer.init(&level, seed).expect("valid level");
            let b = MazeReducer.init(&level, seed).expect("valid level");
            assert_eq!(a, b, "seed {seed}");
            assert_eq!(canonical_json(&MazeReducer.view(&a)), canonical_json(&MazeReducer.view(&b)));
            a.open
        })
        .collect();
    assert!(mazes.len() >= 18, "20 seeds gave only {} distinct mazes", mazes.len());
    // A pinned maze (checked against an independent implementation of the
    // rule): generation must never change, or published benchmarks stop verifying.
    let pinned = MazeReducer.init(&self::level(4, 3, 1, 10), 42).expect("valid level");
    assert_eq!(MazeReducer.view(&pinned).get("maze").map(canonical_json).as_deref(), Some(r#"["42e8","3c3c","2ba9"]"#));
}

#[test]
fn every_maze_is_perfect_and_the_exit_is_the_farthest_cell() {
    for seed in 0..50u32 {
        let state = MazeReducer.init(&level(8, 5, 1, 100), seed).expect("valid level");
        let cells = state.open.len();
        // Passages are symmetric and never leave the maze.
        let mut edges = 0;
        for cell in 0..cells {
            for direction in Direction::ALL {
                if state.open[cell] & bit(direction) == 0 {
                    continue;
                }
                let (x, y) = xy(&state, cell);
                let inside = match direction {
                    Direction::North => y > 0,
                    Direction::East => x + 1 < i64::from(state.width),
                    Direction::South => y + 1 < i64::from(state.height),
                    Direction::West => x > 0,
                };
                assert!(inside, "seed {seed}: cell {cell} opens {direction:?} out of the maze");
                let back = match direction {
                    Direction::North => Direction::South,
                    Direction::East => Direction::West,
                    Direction::South => Direction::North,
                    Direction::West => Direction::East,
                };
                assert_ne!(state.open[neighbour(&state, cell, direction)] & bit(back), 0, "seed {seed}");
                edges += 1;
            }
        }
        // A spanning tree: cells − 1 passages (each counted from both ends).
        assert_eq!(edges, 2 * (cells - 1), "seed {seed}");
        assert_eq!(state.position, 0);
        let path = shortest_path(&state);
        assert_eq!(path.len() as u64, state.shortest, "seed {seed}");
        assert!(state.shortest >= 1);
        assert_ne!(state.exit, 0);
    }
}

#[test]
fn the_seat_view_shows_only_cells_within_the_radius_and_never_the_whole_maze() {
    let level = level(13, 13, 2, 600);
    for seed in 0..10u32 {
        let mut state = MazeReducer.init(&level, seed).expect("valid level");
        let mut rng = gaos_kernel::mulberry32(seed);
        loop {
            let view = MazeReducer.view_for(&state, SEAT);
            let text = canonical_json(&view);
            assert!(view.get("maze").is_none() && view.get("shortestPath").is_none(), "seed {seed}: {text}");
            let (px, py) = xy(&state, state.position);
            let visible = view.get("visible").and_then(Value::as_array).expect("visible cells");
            assert!(visible.len() <= 25, "at most (2r+1)² cells");
            for cell in visible {
                let x = cell.get("x").and_then(Value::as_i64).expect("x");
                let y = cell.get("y").and_then(Value::as_i64).expect("y");
                assert!((x - px).abs() <= 2 && (y - py).abs() <= 2, "seed {seed}: ({x},{y}) is out of sight");
            }
            // The exit appears once it has been in sight, and not before.
            let (ex, ey) = xy(&state, state.exit);
            match view.get("exit") {
                Some(exit) => {
                    assert!(state.exit_seen);
                    assert_eq!(canonical_json(exit), format!(r#"{{"x":{ex},"y":{ey}}}"#));
                }
                None => assert!(!state.exit_seen && ((ex - px).abs() > 2 || (ey - py).abs() > 2)),
            }
            if state.status() != "playing" {
                assert!(view.get("outcome").and_then(|o| o.get("shortestPath")).is_some(), "revealed at the end");
                break;
            }
            assert_eq!(view.get("outcome").map(canonical_json).as_deref(), Some(r#"{"kind":"ongoing"}"#));
            let open = open_directions(&state);
            let pick = open[(rng.next_f64() * open.len() as f64) as usize];
            state = go(state, pick);
        }
    }
    // The exit of a large maze starts out of sight.
    let state = MazeReducer.init(&level, 3).expect("valid level");
    assert!(MazeReducer.view_for(&state, SEAT).get("exit").is_none());
    // The full view (spectators, replays) has the whole maze.
    let full = MazeReducer.view(&state);
    assert_eq!(full.get("maze").and_then(Value::as_array).map(Vec::len), Some(13));
}

#[test]
fn reaching_the_exit_wins_with_stars_by_efficiency() {
    let level = level(7, 6, 1, 200);
    let start = MazeReducer.init(&level, 11).expect("valid level");
    let path = shortest_path(&start);
    // The shortest path: three stars.
    let mut state = start.clone();
    for (i, &direction) in path.iter().enumerate() {
        assert_eq!(state.status(), "playing", "step {i}");
        state = go(state, direction);
    }
    assert_eq!(state.status(), "won");
    assert_eq!(state.stars(), Some(3));
    assert_eq!(MazeReducer.replay_metrics(&state).map(|m| m.actions_used), Some(path.len() as u64));
    let view = MazeReducer.view(&state);
    assert_eq!(view.get("stars").and_then(Value::as_u64), Some(3));
    assert_eq!(
        view.get("outcome").map(canonical_json),
        Some(format!(r#"{{"kind":"decided","moves":{0},"reason":"exit","shortestPath":{0}}}"#, path.len()))
    );
    assert!(MazeGame.legal_actions(&MazeReducer.view_for(&state, SEAT), SEAT).is_empty(), "no moves after the end");
    // A detour of one step back and forth: still within twice the shortest path, two stars.
    let mut state = start.clone();
    let first = open_directions(&state)[0];
    state = go(state, first);
    let back =
        open_directions(&state).into_iter().find(|&d| neighbour(&state, state.position, d) == 0).expect("the way back");
    state = go(state, back);
    for &direction in &shortest_path(&state) {
        state = go(state, direction);
    }
    assert_eq!(state.status(), "won");
    let expected = if state.moves <= 2 * state.shortest { 2 } else { 1 };
    assert_eq!(state.stars(), Some(expected));
}

#[test]
fn running_out_of_moves_fails_without_stars() {
    let mut state = MazeReducer.init(&level(9, 9, 1, 6), 5).expect("valid level");
    assert!(state.shortest > 6, "the exit is farther than the budget");
    // Back and forth between the start and its first neighbour.
    for _ in 0..6 {
        let direction = open_directions(&state)[0];
        state = go(state, direction);
    }
    assert_eq!(state.moves, 6);
    assert_eq!(state.status(), "failed");
    assert_eq!(state.stars(), None);
    let view = MazeReducer.view_for(&state, SEAT);
    assert!(view.get("stars").is_none());
    assert_eq!(view.get("outcome").and_then(|o| o.get("reason")).and_then(Value::as_str), Some("budget"));
    let err = MazeReducer.validate_command(&state, SEAT, &action(Direction::North)).expect_err("the level is over");
    assert!(err.to_string().contains("over"), "{err}");
}

#[test]
fn legal_actions_are_the_open_directions_and_walls_are_refused() {
    for seed in 0..20u32 {
        let state = MazeReducer.init(&level(5, 5, 1, 50), seed).expect("valid level");
        let view = MazeReducer.view_for(&state, SEAT);
        let legal: Vec<String> = MazeGame.legal_actions(&view, SEAT).iter().map(canonical_json).collect();
        let open = open_directions(&state);
        let expected: Vec<String> = open.iter().map(|d| format!(r#"{{"move":"{}"}}"#, d.as_str())).collect();
        assert_eq!(legal, expected, "seed {seed}");
        assert!(!legal.is_empty());
        for direction in Direction::ALL {
            let verdict = MazeReducer.validate_command(&state, SEAT, &action(direction));
            assert_eq!(verdict.is_ok(), open.contains(&direction), "seed {seed} {direction:?}");
            if let Err(e) = verdict {
                assert!(e.to_string().contains("wall"), "{e}");
            }
        }
        assert!(MazeGame.legal_actions(&view, "someone-else").is_empty());
        assert!(MazeReducer.validate_command(&state, "someone-else", &action(open[0])).is_err());
    }
    // Commands that are not moves are refused with the expected shape.
    for bad in [r#"{"move":"up"}"#, r#"{"go":"n"}"#, r#""n""#] {
        let err = MazeGame.command_to_action(&parse(bad).expect("JSON"), &ctx()).expect_err(bad);
        assert!(err.to_string().contains("move"), "{bad}: {err}");
    }
    // Two inputs in one window are refused.
    let state = MazeReducer.init(&level(5, 5, 1, 50), 1).expect("valid level");
    let open = open_directions(&state)[0];
    assert!(MazeReducer.advance(state, &[action(open), action(open)]).is_err());
}

#[test]
fn bad_levels_are_refused_with_the_field_named() {
    for (text, field) in [
        (r#"{"width":1,"height":5,"radius":1,"maxSteps":5}"#, "width"),
        (r#"{"width":5,"height":99,"radius":1,"maxSteps":5}"#, "height"),
        (r#"{"width":5,"height":5,"radius":1,"maxSteps":0}"#, "maxSteps"),
        (r#"{"width":5,"height":5,"maxSteps":5}"#, "radius"),
        (r#"{"width":5,"height":5,"radius":1,"maxSteps":5,"walls":3}"#, "walls"),
    ] {
        let err = MazeReducer.init(&parse(text).expect("JSON"), 1).expect_err(text);
        assert!(err.to_string().contains(field), "{text}: {err}");
    }
}

#[test]
fn the_maze_is_registered_with_its_levels() {
    let registry = GameRegistry::builtin();
    let game = registry.get(GAME_ID).expect("registered");
    assert_eq!(game.game_ref().adapter.id, "gaos/maze/reducer");
    assert_eq!(game.seats(), [SEAT]);
    let levels: Vec<String> = game.levels().into_iter().map(|l| l.id).collect();
    assert_eq!(levels, ["tiny", "small", "medium", "large"]);
    for spec in game.levels() {
        MazeReducer.init(&spec.level, 0).expect("shipped levels are valid");
    }
}
