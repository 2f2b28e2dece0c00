//! `POST /v1/replays/frames`: re-simulate a replay (JSONL body) with the
//! registered game and answer every frame — the full (public) view and each
//! seat's view after each resolution, with the inputs that led to it — plus
//! the verifier's verdict. The host does the work, so the replay viewer shows
//! any registered game, module games included, exactly as they ran.
//!
//! The frames come from the reducer the verifier uses (init, then one
//! `advance` per resolution record); the verdict comes from
//! [`verify_replay`] itself, so a frame list never implies a replay is valid.
//!
//! The work and the answer are bounded: a replay must play the game's own
//! levels (a replay names its level, so a level far larger than any the
//! game ships would make every view of every frame as large; only the
//! operator may re-simulate other levels), and frames are added while the
//! answer stays under a byte budget, then cut (`truncated`). The route runs
//! a bounded number of re-simulations at once (`frames_route.rs`).

use std::sync::Arc;

use gaos_games::GameRegistry;
use gaos_json::{Map, Value, canonical_json};
use gaos_kernel::replay::{RecordBody, VerifyOptions, read_replay, verify_replay};
use gaos_kernel::{Game, GameRef};

/// Frames answered at most (a frame per resolution); the rest are cut and
/// the answer says so.
pub(crate) const MAX_FRAMES: usize = 5_000;

/// The most the frames of one answer may take as JSON text; the rest are
/// cut and the answer says so (`truncated`).
pub(crate) const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// Why a replay has no frames (answered as `{"error","code"}`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FramesError {
    #[error("the body is not a readable replay: {0}")]
    Malformed(String),
    #[error("no registered game plays {0} (adapter {1}); start the host with that game")]
    UnknownGame(String, String),
    #[error(
        "level {level:?} of the replay is not one of the levels {game} ships (same id and level); only the operator may re-simulate other levels"
    )]
    ForeignLevel { level: String, game: String },
}

impl FramesError {
    pub(crate) fn code(&self) -> &'static str {
        match self {
            FramesError::Malformed(_) => "malformed_replay",
            FramesError::UnknownGame(..) => "unknown_game",
            FramesError::ForeignLevel { .. } => "foreign_level",
        }
    }

    pub(crate) fn status(&self) -> axum::http::StatusCode {
        match self {
            FramesError::Malformed(_) | FramesError::UnknownGame(..) => axum::http::StatusCode::UNPROCESSABLE_ENTITY,
            FramesError::ForeignLevel { .. } => axum::http::StatusCode::FORBIDDEN,
        }
    }
}

/// Counts canonical JSON bytes without keeping them.
struct ByteCount(usize);

impl gaos_json::CanonicalSink for ByteCount {
    fn push_str(&mut self, s: &str) {
        self.0 += s.len();
    }
}

fn json_bytes(value: &Value) -> usize {
    let mut count = ByteCount(0);
    gaos_json::write_canonical(value, &mut count);
    count.0
}

fn resolve(registry: &GameRegistry, game: &GameRef) -> Option<Arc<dyn Game>> {
    registry.by_adapter(&game.adapter.id).or_else(|| registry.get(&game.id))
}

/// The frames of `text` as canonical JSON, the frames cut once they would
/// take more than `max_bytes`. `any_level`: the caller may re-simulate
/// levels the game does not ship (the operator).
pub(crate) fn frames(
    registry: &GameRegistry,
    text: &str,
    any_level: bool,
    max_bytes: usize,
) -> Result<String, FramesError> {
    let replay = read_replay(text).map_err(|e| FramesError::Malformed(e.to_string()))?;
    let game = resolve(registry, &replay.game)
        .ok_or_else(|| FramesError::UnknownGame(replay.game.id.clone(), replay.game.adapter.id.clone()))?;
    if !any_level {
        let shipped = game.levels();
        if let Some(foreign) =
            replay.levels.iter().find(|l| !shipped.iter().any(|s| s.id == l.id && s.level == l.level))
        {
            return Err(FramesError::ForeignLevel { level: foreign.id.clone(), game: replay.game.id.clone() });
        }
    }
    let report = verify_replay(text, &|g: &GameRef| resolve(registry, g), &VerifyOptions::of_record());
    // A request's re-simulation shares nothing with another's.
    let game = gaos_kernel::isolated(&game);
    let reducer = game.reducer();
    let seats = game.seats();
    let view_of = |state: &_| -> Value {
        let mut frame = Map::new();
        frame.insert("public".into(), reducer.view(state));
        let mut by_seat = Map::new();
        for seat in &seats {
            by_seat.insert(seat.clone(), reducer.view_for(state, seat));
        }
        frame.insert("seats".into(), by_seat.into());
        frame.into()
    };
    let mut total = 0usize;
    let mut bytes = 0usize;
    let mut truncated = false;
    let mut levels = Vec::new();
    for level in &replay.levels {
        let mut frames = Vec::new();
        let mut problem = None;
        match reducer.init(&level.level, level.seed) {
            Err(e) => problem = Some(format!("the game cannot start this level: {e}")),
            Ok(mut state) => {
                let first = frame(0, None, None, Vec::new(), view_of(&state));
                bytes += json_bytes(&first) + 1;
                if bytes > max_bytes {
                    truncated = true;
                } else {
                    frames.push(first);
                }
                for record in replay.level_records(level.index) {
                    let (RecordBody::Resolution(res) | RecordBody::Action(res)) = &record.body else { continue };
                    if truncated || total >= MAX_FRAMES {
                        truncated = true;
                        break;
                    }
                    let mut actions = Vec::with_capacity(res.inputs.len());
                    let mut inputs = Vec::with_capacity(res.inputs.len());
                    for input in &res.inputs {
                        let mut action = input.action();
                        // The verifier sets a reveal's payload once the
                        // commitment checks out; its verdict says whether it did.
                        if let Some(reveal) = input.reveal() {
                            action.verified_payload = Some(reveal.payload.clone());
                        }
                        let mut shown = Map::new();
                        if let Some(seat) = input.seat() {
                            shown.insert("seat".into(), seat.into());
                        }
                        shown.insert("action".into(), action.to_value());
                        if let Some(command) = input.canonical_command() {
                            shown.insert("command".into(), command.into());
                        }
                        inputs.push(Value::from(shown));
                        actions.push(action);
                    }
                    state = match reducer.advance(state, &actions) {
                        Ok(next) => next,
                        Err(e) => {
                            problem = Some(format!("line {}: the game refuses this resolution: {e}", record.line));
                            break;
                        }
                    };
                    total += 1;
                    let next = frame(frames.len(), Some(record.line), res.tick, inputs, view_of(&state));
                    bytes += json_bytes(&next) + 1;
                    if bytes > max_bytes {
                        truncated = true;
                        break;
                    }
                    frames.push(next);
                }
            }
        }
        let mut entry = Map::new();
        entry.insert("index".into(), (level.index as u64).into());
        entry.insert("id".into(), level.id.clone().into());
        entry.insert("seed".into(), level.seed.into());
        entry.insert("frames".into(), frames.into());
        if let Some(problem) = problem {
            entry.insert("problem".into(), problem.into());
        }
        levels.push(Value::from(entry));
        if truncated {
            break;
        }
    }
    let mut answer = Map::new();
    answer.insert("game".into(), replay.game.id.clone().into());
    answer.insert("sessionId".into(), replay.session_id.clone().into());
    answer.insert("seats".into(), seats.iter().map(|s| Value::from(s.as_str())).collect::<Vec<_>>().into());
    answer.insert("verdict".into(), report.verdict.as_str().into());
    answer.insert(
        "problems".into(),
        report.problems.problems().iter().map(|p| Value::from(p.to_string())).collect::<Vec<_>>().into(),
    );
    answer.insert("notes".into(), report.notes.iter().map(Value::from).collect::<Vec<_>>().into());
    answer.insert("levels".into(), levels.into());
    answer.insert("truncated".into(), truncated.into());
    Ok(canonical_json(&answer.into()))
}

fn frame(step: usize, line: Option<usize>, tick: Option<u64>, inputs: Vec<Value>, views: Value) -> Value {
    let mut frame = match views {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    frame.insert("step".into(), (step as u64).into());
    frame.insert("line".into(), line.map_or(Value::Null, |l| (l as u64).into()));
    frame.insert("tick".into(), tick.map_or(Value::Null, Value::from));
    frame.insert("inputs".into(), inputs.into());
    frame.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `expected/NAME/replay.gaos-replay.jsonl`, or `NAME` itself when it names a file.
    fn expected_replay(name: &str) -> String {
        let file = if name.ends_with(".jsonl") { name.to_owned() } else { format!("{name}/replay.gaos-replay.jsonl") };
        let path = gaos_testkit::conformance_dir().join("expected").join(file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    /// The operator's answer (the reference replays play the scripts' own levels).
    fn answer(name: &str) -> serde_json::Value {
        let json = frames(&GameRegistry::builtin(), &expected_replay(name), true, MAX_ANSWER_BYTES).expect("frames");
        serde_json::from_str(&json).expect("the answer is JSON")
    }

    #[test]
    fn a_reference_replay_has_one_frame_per_resolution_and_ends_at_its_recorded_result() {
        for name in [
            "sealed-commit-reveal",
            "tictactoe-timeout-mapper",
            "hilo-ingest",
            "counter-ticks-window-timeout",
            "counter-run-play-all/run.gaos-replay.jsonl",
        ] {
            let text = expected_replay(name);
            let view = read_replay(&text).unwrap();
            let answer = answer(name);
            assert_eq!(answer["verdict"], "accepted-unsigned", "{name}: {}", answer["problems"]);
            let frames: usize =
                answer["levels"].as_array().unwrap().iter().map(|l| l["frames"].as_array().unwrap().len()).sum();
            assert_eq!(
                frames,
                view.resolution_count() + view.levels.len(),
                "{name}: the start of each level, then one frame per resolution"
            );
            for (level, recorded) in answer["levels"].as_array().unwrap().iter().zip(&view.levels) {
                assert!(level.get("problem").is_none(), "{name}: {}", level["problem"]);
                let last = level["frames"].as_array().unwrap().last().unwrap();
                assert_eq!(
                    last["public"]["status"],
                    recorded.result.status.as_str(),
                    "{name}: the last frame is the recorded result"
                );
                for seat in answer["seats"].as_array().unwrap() {
                    assert!(
                        last["seats"][seat.as_str().unwrap()].is_object(),
                        "{name}: every seat's view is in each frame"
                    );
                }
            }
        }
    }

    #[test]
    fn the_sealed_auction_reveals_its_bids_only_in_the_reveal_frames() {
        let answer = answer("sealed-commit-reveal");
        let frames = answer["levels"][0]["frames"].as_array().unwrap();
        assert_eq!(frames[0]["public"]["phase"], "commit");
        assert!(
            frames[1]["inputs"][0]["action"]["commit"].is_object(),
            "a commit input is shown as committed: {}",
            frames[1]["inputs"]
        );
        let last = frames.last().unwrap();
        assert_eq!(
            last["public"]["bids"].as_object().map(|b| b.len()),
            Some(2),
            "both bids are revealed at the end: {}",
            last["public"]
        );
    }

    #[test]
    fn only_the_operator_re_simulates_levels_the_game_does_not_ship() {
        let text = expected_replay("sealed-commit-reveal");
        let err = frames(&GameRegistry::builtin(), &text, false, MAX_ANSWER_BYTES).unwrap_err();
        assert_eq!((err.code(), err.status().as_u16()), ("foreign_level", 403));
        assert!(err.to_string().contains("one-lot") && err.to_string().contains("operator"), "{err}");
    }

    #[test]
    fn frames_are_cut_at_the_byte_budget() {
        let text = expected_replay("hilo-ingest");
        let whole: serde_json::Value =
            serde_json::from_str(&frames(&GameRegistry::builtin(), &text, true, MAX_ANSWER_BYTES).unwrap()).unwrap();
        let count = |answer: &serde_json::Value| answer["levels"][0]["frames"].as_array().map_or(0, Vec::len);
        assert_eq!(whole["truncated"], false);
        let one = serde_json::to_string(&whole["levels"][0]["frames"][0]).unwrap().len();
        let cut: serde_json::Value =
            serde_json::from_str(&frames(&GameRegistry::builtin(), &text, true, one * 2 + 2).unwrap()).unwrap();
        assert_eq!(cut["truncated"], true);
        assert!(count(&cut) >= 1 && count(&cut) < count(&whole), "{} of {}", count(&cut), count(&whole));
        assert_eq!(cut["verdict"], whole["verdict"], "the verdict is the whole replay's");
    }

    #[test]
    fn an_unknown_game_or_a_malformed_body_is_refused_in_words() {
        let text = expected_replay("tictactoe-timeout-mapper");
        let err = frames(&GameRegistry::new(), &text, false, MAX_ANSWER_BYTES).unwrap_err();
        assert_eq!(err.code(), "unknown_game");
        assert!(err.to_string().contains("conformance/tictactoe"), "{err}");
        let err = frames(&GameRegistry::builtin(), "{\"not\":\"a replay\"}\n", false, MAX_ANSWER_BYTES).unwrap_err();
        assert_eq!(err.code(), "malformed_replay");
    }
}
