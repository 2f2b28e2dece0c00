//! Replays the durable event logs of the reference outputs
//! (`conformance/expected/*/events.N.jsonl`) through the games: every accepted
//! command must map to the recorded action and pass validation, every
//! resolution must reproduce the recorded result, every checkpoint the
//! recorded kernel digest, and the end state the recorded final views.

use std::path::Path;

use gaos_games::GameRegistry;
use gaos_json::{Map, Value, canonical_fnv1a32, obj};
use gaos_kernel::{CommandContext, DynReducer, GameRef, SubmittedAction, TimeoutContext, TimeoutInput, run_level_seed};
use gaos_testkit::{array_field, conformance_dir, read_conformance_json, str_field};

fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| gaos_json::parse(line).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .collect()
}

fn u64_of(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or_else(|| panic!("missing integer {key} in {value}"))
}

fn kernel_digest(reducer: &DynReducer, state: &gaos_kernel::AnyState, seats: &[String], cursor: u64, tick: u64) -> u32 {
    let views: Map = seats.iter().map(|seat| (seat.clone(), reducer.view_for(state, seat))).collect();
    canonical_fnv1a32(&obj! { "cursor" => cursor, "tick" => tick, "views" => views }.into())
}

/// The kernel specs of a script's sessions: the top-level one, then one per
/// `session` step.
fn script_sessions(script: &Value) -> Vec<Value> {
    let mut sessions = vec![script.get("kernel").expect("kernel").clone()];
    for step in array_field(script, "steps") {
        if step.get("op").and_then(Value::as_str) == Some("session") {
            sessions.push(step.get("kernel").expect("session kernel").clone());
        }
    }
    sessions
}

#[derive(Default)]
struct Tally {
    checks: usize,
    mapped_timeouts: usize,
}

fn replay_session(registry: &GameRegistry, script_name: &str, dir: &Path, n: usize, spec: &Value, tally: &mut Tally) {
    let label = format!("{script_name}#{n}");
    let header = read_conformance_json(&format!("expected/{script_name}/header.{n}.json"));
    let game_ref: GameRef = gaos_json::from_value(header.get("game").expect("game").clone()).expect("game ref");
    let game = registry.get(&game_ref.id).unwrap_or_else(|| panic!("{label}: no game {}", game_ref.id));
    assert_eq!(game.game_ref(), game_ref, "{label}");
    let reducer = game.reducer();
    let session_id = str_field(&header, "sessionId").to_owned();
    let seed = u32::try_from(u64_of(&header, "seed")).expect("u32 seed");
    let level_seed = match str_field(&header, "seedPolicy") {
        "explicit" => seed,
        _ => run_level_seed(seed, 0).expect("level 0"),
    };
    let level = header.get("level").expect("level").clone();
    let seats: Vec<String> =
        array_field(&header, "seats").iter().map(|s| s.as_str().expect("seat").to_owned()).collect();
    let mapper_configured = spec.get("timeoutToAction") == Some(&Value::Bool(true));

    let mut state = reducer.init(&level, level_seed).unwrap_or_else(|e| panic!("{label}: init: {e}"));
    let mut cursor = 0u64;
    let mut pending_timeout: Option<Value> = None;
    for event in read_jsonl(&dir.join(format!("events.{n}.jsonl"))) {
        let kind = str_field(&event, "kind");
        match kind {
            "intent-accepted" => {
                let seat = str_field(&event, "participantId");
                let ctx = CommandContext {
                    session_id: &session_id,
                    participant_id: seat,
                    submission_id: str_field(&event, "submissionId"),
                    cursor: u64_of(&event, "revision"),
                    tick: u64_of(&event, "tick"),
                };
                let action = game
                    .command_to_action(event.get("command").expect("command"), &ctx)
                    .unwrap_or_else(|e| panic!("{label}: mapper refused {event}: {e}"));
                assert_eq!(&action.to_value(), event.get("action").expect("action"), "{label}: mapped action");
                reducer
                    .validate_command(&state, seat, &action)
                    .unwrap_or_else(|e| panic!("{label}: validation refused an accepted action {event}: {e}"));
                tally.checks += 2;
            }
            "timeout" => pending_timeout = Some(event.clone()),
            "resolution" => {
                let inputs: Vec<SubmittedAction> = array_field(&event, "inputs")
                    .iter()
                    .map(|input| SubmittedAction::from_value(input.get("action").expect("action")).expect("action"))
                    .collect();
                let timeout = pending_timeout.take();
                if let (Some(timeout), Some(system), true) = (timeout, event.get("systemInput"), mapper_configured) {
                    let timeout_input = TimeoutInput::from_value(&timeout).expect("timeout");
                    let ctx = TimeoutContext {
                        session_id: session_id.clone(),
                        game: game_ref.clone(),
                        level_id: str_field(&header, "levelId").to_owned(),
                        level_version: header.get("levelVersion").cloned(),
                        level: level.clone(),
                        seed: level_seed,
                        participant_id: timeout_input.participant_id.clone(),
                        window_ref: cursor,
                    };
                    let mapped = game
                        .timeout_to_action(&ctx, &timeout_input)
                        .expect("the game has a timeout mapper")
                        .unwrap_or_else(|e| panic!("{label}: timeout mapper failed: {e}"));
                    assert_eq!(&mapped.to_value(), system.get("action").expect("action"), "{label}: mapper");
                    tally.mapped_timeouts += 1;
                }
                state = reducer
                    .advance(state, &inputs)
                    .unwrap_or_else(|e| panic!("{label}: advance failed on {event}: {e}"));
                cursor += 1;
                let result = event.get("result").expect("result");
                let view = reducer.view(&state);
                let metrics = reducer.replay_metrics(&state).expect("metrics");
                assert_eq!(metrics.actions_used, u64_of(result, "actionsUsed"), "{label}: actionsUsed at {cursor}");
                assert_eq!(view.get("status"), result.get("status"), "{label}: status at {cursor}");
                assert_eq!(view.get("stars").unwrap_or(&Value::Null), result.get("stars").expect("stars"), "{label}");
                tally.checks += 3;
            }
            "checkpoint" => {
                let tick = u64_of(&event, "tick");
                let digest = kernel_digest(&reducer, &state, &seats, cursor, tick);
                assert_eq!(u64::from(digest), u64_of(&event, "digest"), "{label}: checkpoint at tick {tick}");
                tally.checks += 1;
            }
            _ => {}
        }
    }

    let final_state = read_conformance_json(&format!("expected/{script_name}/final.{n}.json"));
    let views = final_state.get("views").and_then(Value::as_object).expect("final views");
    assert_eq!(views.len(), seats.len(), "{label}");
    for seat in &seats {
        assert_eq!(Some(&reducer.view_for(&state, seat)), views.get(seat), "{label}: final view of {seat}");
    }
    assert_eq!(u64_of(&final_state, "cursor"), cursor, "{label}: cursor");
    let digest = kernel_digest(&reducer, &state, &seats, cursor, u64_of(&final_state, "tick"));
    assert_eq!(u64::from(digest), u64_of(&final_state, "digest"), "{label}: final digest");
    tally.checks += seats.len() + 1;
}

#[test]
fn reference_event_logs_replay_through_the_games() {
    let registry = GameRegistry::builtin();
    let expected = conformance_dir().join("expected");
    let mut scripts: Vec<String> = std::fs::read_dir(&expected)
        .expect("expected/ is readable")
        .map(|entry| entry.expect("dir entry").file_name().to_string_lossy().into_owned())
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 12, "suspiciously few reference outputs: {scripts:?}");
    let mut games = std::collections::BTreeSet::new();
    let mut tally = Tally::default();
    for name in &scripts {
        let script = read_conformance_json(&format!("scripts/{name}.json"));
        games.insert(str_field(&script, "game").to_owned());
        let dir = expected.join(name);
        for (n, spec) in script_sessions(&script).iter().enumerate() {
            replay_session(&registry, name, &dir, n, spec, &mut tally);
        }
    }
    assert_eq!(games.len(), 5, "every game is exercised: {games:?}");
    assert!(tally.checks > 200, "only {} checks ran", tally.checks);
    assert!(tally.mapped_timeouts >= 4, "only {} mapped timeouts", tally.mapped_timeouts);
    eprintln!("{} checks, {} mapped timeouts", tally.checks, tally.mapped_timeouts);
}
