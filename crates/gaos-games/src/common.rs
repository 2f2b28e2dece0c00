//! Helpers shared by the conformance games: level parsing, view fragments,
//! rankings and participation checks.

use gaos_json::{Map, Value, obj};
use gaos_kernel::GameStatus;
use gaos_kernel::{GameError, TimeoutInput};

/// The level as an object, or a clear error naming the game.
pub(crate) fn level_object<'a>(level: &'a Value, game: &str) -> Result<&'a Map, GameError> {
    level
        .as_object()
        .ok_or_else(|| GameError::new(format!("{game}: the level must be an object, not {}", level.type_name())))
}

/// Level field `key` as an integer in `min..=max`.
pub(crate) fn level_uint(level: &Value, key: &str, game: &str, min: u64, max: u64) -> Result<u64, GameError> {
    let map = level_object(level, game)?;
    let value = map.get(key).ok_or_else(|| GameError::new(format!("{game}: the level needs a numeric `{key}`")))?;
    match value.as_u64() {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(GameError::new(format!("{game}: level `{key}` must be an integer in {min}..={max}, found {value}"))),
    }
}

/// The command as an object, or a clear error showing the expected shape.
pub(crate) fn command_object<'a>(command: &'a Value, game: &str, example: &str) -> Result<&'a Map, GameError> {
    command.as_object().ok_or_else(|| {
        GameError::new(format!("{game}: a command must be an object like {example}, not {}", command.type_name()))
    })
}

/// `{"mode": "simultaneous", "seats": [...]}`.
pub(crate) fn simultaneous(seats: &[&str]) -> Value {
    let seats: Vec<Value> = seats.iter().map(|s| Value::from(*s)).collect();
    obj! { "mode" => "simultaneous", "seats" => seats }.into()
}

/// `{"kind": "ongoing"}`.
pub(crate) fn ongoing() -> Value {
    obj! { "kind" => "ongoing" }.into()
}

/// `{"kind": "decided", "ranking": [{seat, rank, score}...]}` with entries
/// ordered by score descending then seat id ascending, and `rank = 1 +` the
/// number of seats with a strictly higher score.
pub(crate) fn decided_by_score(scores: &[(&str, u64)]) -> Value {
    let mut order: Vec<(&str, u64)> = scores.to_vec();
    order.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let ranking: Vec<Value> = order
        .iter()
        .map(|(seat, score)| {
            let higher = scores.iter().filter(|(_, other)| other > score).count();
            obj! { "seat" => *seat, "rank" => higher + 1, "score" => *score }.into()
        })
        .collect();
    obj! { "kind" => "decided", "ranking" => ranking }.into()
}

/// The window participants a view declares (`participation`, then
/// `activeSeat`), as the kernel reads them.
pub(crate) fn view_participants(view: &Value) -> Vec<&str> {
    if let Some(participation) = view.get("participation") {
        match participation.get("mode").and_then(Value::as_str) {
            Some("sequential") => {
                return participation.get("activeSeat").and_then(Value::as_str).into_iter().collect();
            }
            Some("simultaneous") => {
                return participation
                    .get("seats")
                    .and_then(Value::as_array)
                    .map(|seats| seats.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
            }
            _ => {}
        }
    }
    view.get("activeSeat").and_then(Value::as_str).into_iter().collect()
}

/// True when the view is `playing` and `seat` participates in its window.
pub(crate) fn can_act(view: &Value, seat: &str) -> bool {
    GameStatus::of_view(view) == Some(GameStatus::Playing) && view_participants(view).contains(&seat)
}

/// The named seat of a per-seat timeout; window-wide timeouts are refused
/// because the conformance mappers only define per-seat actions.
pub(crate) fn timeout_seat(timeout: &TimeoutInput, game: &str) -> Result<String, GameError> {
    timeout.participant_id.clone().ok_or_else(|| {
        GameError::new(format!(
            "{game}: the timeout mapper only handles a named seat; window-wide timeouts need a forced input"
        ))
    })
}

/// The `seat` of an input, or an error naming the game.
pub(crate) fn input_seat<'a>(input: &'a gaos_kernel::SubmittedAction, game: &str) -> Result<&'a str, GameError> {
    input.seat.as_deref().ok_or_else(|| GameError::new(format!("{game}: an input carries no seat")))
}

/// A reducer state as checkpoint JSON (`TickReducer::encode_state`): the
/// state's fields, camelCase, as the serde derive writes them.
pub(crate) fn encode_state<S: serde::Serialize>(state: &S) -> Option<Value> {
    gaos_json::to_value(state).ok()
}

/// The inverse of [`encode_state`]; unknown or missing fields are refused.
pub(crate) fn decode_state<S: serde::de::DeserializeOwned>(value: &Value, game: &str) -> Result<S, GameError> {
    gaos_json::from_value(value.clone()).map_err(|e| GameError::new(format!("{game}: malformed checkpoint state: {e}")))
}
