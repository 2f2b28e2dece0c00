//! What a model reads: a compact text rendering of a seat's observation
//! (e.g. `Your hand: 4 4 5 · round: 1` and `Legal: card 0|1|2`) and the
//! structured JSON beside it.
//!
//! Both are built only from the seat's own envelope, which the host already
//! cut to the seat's view (the information boundary holds here because
//! nothing else is read).

use gaos_json::{Map, Value, canonical_json};
use gaos_session::{HandleState, Observation};

/// Longest rendering of one view field in the text (the structured content
/// has it whole).
pub const FIELD_TEXT_LIMIT: usize = 400;
/// Most legal actions spelled out in the text (the structured content lists all).
pub const LEGAL_TEXT_LIMIT: usize = 40;

/// View fields the text shows in its own words or not at all.
const SPECIAL_FIELDS: [&str; 7] = ["legalActions", "done", "hand", "seat", "status", "participation", "outcome"];

/// Whose move it is, as one seat sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// The seat may submit now.
    Yours,
    /// The seat waits for these seats (empty: the view does not say).
    Waiting {
        /// The seats the window waits for.
        seats: Vec<String>,
        /// This seat already submitted in the open window.
        submitted: bool,
    },
    /// The game is over.
    Over,
}

impl Turn {
    /// `yours`, `waiting` or `over`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Turn::Yours => "yours",
            Turn::Waiting { .. } => "waiting",
            Turn::Over => "over",
        }
    }
}

/// Whose move it is for `seat` in `observation`.
pub fn turn(observation: &Observation, seat: &str) -> Turn {
    if observation.is_done() || observation.announces_terminal() {
        return Turn::Over;
    }
    if observation.is_pending() {
        if observation.awaits(seat) {
            return Turn::Yours;
        }
        let submitted = observation.submitted().iter().any(|s| s == seat);
        return Turn::Waiting { seats: observation.awaiting().to_vec(), submitted };
    }
    match observation.window_participants() {
        Some(seats) if !seats.iter().any(|s| s == seat) => Turn::Waiting { seats, submitted: false },
        _ => Turn::Yours,
    }
}

/// Canonical JSON, cut at `limit` characters (on a char boundary).
pub fn compact(value: &Value, limit: usize) -> String {
    let text = canonical_json(value);
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) | Value::Null => Some(canonical_json(value)),
        _ => None,
    }
}

/// The legal actions in few words: `card 0|1|2` when every action is a
/// one-key object with the same key and a scalar value, else
/// `[0] {...} · [1] {...}`.
pub fn legal_text(legal: &[Value]) -> String {
    if legal.is_empty() {
        return "none listed".into();
    }
    let shown = &legal[..legal.len().min(LEGAL_TEXT_LIMIT)];
    let more = legal.len() - shown.len();
    let tail = if more > 0 { format!(" (and {more} more)") } else { String::new() };
    let single = |v: &Value| -> Option<(String, String)> {
        let map = v.as_object().filter(|m| m.len() == 1)?;
        let (key, value) = map.iter().next()?;
        Some((key.clone(), scalar_text(value)?))
    };
    let singles: Option<Vec<(String, String)>> = shown.iter().map(single).collect();
    if let Some(singles) = singles
        && let Some((key, _)) = singles.first()
        && singles.iter().all(|(k, _)| k == key)
    {
        let values: Vec<&str> = singles.iter().map(|(_, v)| v.as_str()).collect();
        return format!("{key} {}{tail}", values.join("|"));
    }
    let entries: Vec<String> =
        shown.iter().enumerate().map(|(i, v)| format!("[{i}] {}", compact(v, FIELD_TEXT_LIMIT))).collect();
    format!("{}{tail}", entries.join(" · "))
}

fn seats_text(seats: &[String]) -> String {
    if seats.is_empty() { "the other seats".into() } else { seats.join(", ") }
}

/// The seat's observation as structured content: `{sessionId, seat,
/// revision, tickId, kind, turn, waitingFor, status, done, legalActions,
/// view, handle, finalization}` (the view without `legalActions`/`done`).
pub fn observation_json(observation: &Observation, seat: &str, state: HandleState) -> Map {
    let tick = observation.tick();
    let view = match tick.as_object() {
        Some(map) => {
            let mut view = map.clone();
            view.remove("legalActions");
            view.remove("done");
            Value::Object(view)
        }
        None => tick.clone(),
    };
    let turn = turn(observation, seat);
    let mut out = Map::new();
    out.insert("sessionId".into(), observation.session_id().into());
    out.insert("seat".into(), seat.into());
    out.insert("revision".into(), observation.revision().into());
    out.insert("tickId".into(), observation.tick_id().into());
    out.insert("kind".into(), observation.envelope.kind.clone().into());
    out.insert("turn".into(), turn.as_str().into());
    let waiting: Vec<Value> = match &turn {
        Turn::Waiting { seats, .. } => seats.iter().map(Value::from).collect(),
        _ => Vec::new(),
    };
    out.insert("waitingFor".into(), Value::Array(waiting));
    out.insert("status".into(), tick.get("status").cloned().unwrap_or(Value::Null));
    out.insert("done".into(), observation.is_done().into());
    out.insert("legalActions".into(), Value::Array(observation.legal_actions().to_vec()));
    out.insert("view".into(), view);
    out.insert("handle".into(), state.as_str().into());
    out.insert("finalization".into(), observation.finalization_status().map_or(Value::Null, Value::from));
    out.insert("awaitingReset".into(), awaits_reset(observation).into());
    out
}

/// The envelope says the run waits for a reset to start its next level
/// (`gaos.session.episode.awaitingReset`).
pub fn awaits_reset(observation: &Observation) -> bool {
    observation
        .extensions()
        .and_then(|e| e.get("gaos.session.episode"))
        .and_then(|e| e.get("awaitingReset"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn level_over_text(level: u64, outcome: Option<String>) -> String {
    format!(
        "Level {level} of the run is over.{} Call reset to start the next level, or finalize to end the run here.",
        outcome.unwrap_or_default()
    )
}

/// The seat's observation as text a model reads at a glance.
pub fn observation_text(observation: &Observation, seat: &str, state: HandleState) -> String {
    let tick = observation.tick();
    let status =
        tick.get("status").and_then(Value::as_str).unwrap_or(if observation.is_done() { "over" } else { "in play" });
    let mut lines = vec![format!(
        "Seat {seat} · session {} · revision {} · {status}",
        observation.session_id(),
        observation.revision()
    )];
    let legal = observation.legal_actions();
    lines.push(match turn(observation, seat) {
        Turn::Yours if legal.is_empty() => {
            "Your move (no legal actions are listed: send the game's command form with act {\"command\": ...}).".into()
        }
        Turn::Yours => "Your move.".into(),
        Turn::Waiting { seats, submitted: true } => {
            format!("Your command is in; waiting for {} to move.", seats_text(&seats))
        }
        Turn::Waiting { seats, submitted: false } => format!("Waiting for {} to move.", seats_text(&seats)),
        Turn::Over => {
            let outcome = tick.get("outcome").map(|o| format!(" Outcome: {}.", compact(o, FIELD_TEXT_LIMIT)));
            if awaits_reset(observation) && state != HandleState::Finalized {
                let level = observation.episode().and_then(|e| e.index).unwrap_or(0);
                level_over_text(level, outcome)
            } else {
                let next = if state == HandleState::Finalized {
                    " This seat finalized the session; call replay for the record."
                } else {
                    " Call finalize to fix the result, then replay."
                };
                format!("The game is over.{}{next}", outcome.unwrap_or_default())
            }
        }
    });
    let mut fields = Vec::new();
    if let Some(hand) = tick.get("hand").and_then(Value::as_array) {
        let cards: Option<Vec<String>> = hand.iter().map(scalar_text).collect();
        match cards {
            Some(cards) if cards.is_empty() => fields.push("Your hand: (empty)".to_owned()),
            Some(cards) => fields.push(format!("Your hand: {}", cards.join(" "))),
            None => fields.push(format!("Your hand: {}", compact(&Value::Array(hand.clone()), FIELD_TEXT_LIMIT))),
        }
    }
    match tick.as_object() {
        Some(map) => {
            for (key, value) in map.iter().filter(|(k, _)| !SPECIAL_FIELDS.contains(&k.as_str())) {
                let text = scalar_text(value).unwrap_or_else(|| compact(value, FIELD_TEXT_LIMIT));
                fields.push(format!("{key}: {text}"));
            }
        }
        None if !tick.is_null() => fields.push(format!("view: {}", compact(tick, FIELD_TEXT_LIMIT))),
        None => {}
    }
    if !fields.is_empty() {
        lines.push(fields.join(" · "));
    }
    if !legal.is_empty() {
        lines.push(format!(
            "Legal: {} — act with {{\"index\": n}} (position in this list, from 0) or {{\"command\": <one of them>}}.",
            legal_text(legal)
        ));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observation(kind_extra: &str, tick: &str) -> Observation {
        let text = format!(
            r#"{{"protocol":"gaos.ticks","protocolVersion":"1.0","sessionId":"s-1","tickId":"s-1:2","revision":2,{kind_extra},"tick":{tick}}}"#
        );
        Observation::from_value(&gaos_json::parse(&text).expect("JSON"), None).expect("envelope")
    }

    const HILO: &str = r#"{"status":"playing","participation":{"mode":"simultaneous","seats":["alice","bob"]},
        "outcome":{"kind":"ongoing"},"round":1,"score":{"alice":0,"bob":1},"seat":"alice","hand":[4,4,5],
        "legalActions":[{"card":0},{"card":1},{"card":2}],"done":false}"#;

    #[test]
    fn a_hilo_view_reads_in_one_glance() {
        let obs = observation(r#""kind":"tick""#, HILO);
        let text = observation_text(&obs, "alice", HandleState::Active);
        assert!(text.contains("Your move."), "{text}");
        assert!(text.contains("Your hand: 4 4 5 · round: 1 · score: {\"alice\":0,\"bob\":1}"), "{text}");
        assert!(text.contains("Legal: card 0|1|2 — act with"), "{text}");
        let json = observation_json(&obs, "alice", HandleState::Active);
        assert_eq!(json.get("turn").and_then(Value::as_str), Some("yours"));
        assert_eq!(json.get("legalActions").and_then(Value::as_array).map(Vec::len), Some(3));
        assert!(json.get("view").and_then(|v| v.get("legalActions")).is_none());
    }

    #[test]
    fn pending_windows_say_who_is_awaited() {
        let pending = r#""kind":"pending","submittedParticipants":["alice"],"awaitingParticipants":["bob"]"#;
        let obs = observation(pending, HILO);
        assert_eq!(turn(&obs, "alice"), Turn::Waiting { seats: vec!["bob".into()], submitted: true });
        assert_eq!(turn(&obs, "bob"), Turn::Yours);
        let text = observation_text(&obs, "alice", HandleState::Active);
        assert!(text.contains("Your command is in; waiting for bob to move."), "{text}");
    }

    #[test]
    fn legal_actions_fall_back_to_numbered_json() {
        let legal: Vec<Value> =
            ["{\"cell\":0}", "{\"x\":1,\"y\":2}"].iter().map(|t| gaos_json::parse(t).expect("JSON")).collect();
        assert_eq!(legal_text(&legal), "[0] {\"cell\":0} · [1] {\"x\":1,\"y\":2}");
        assert_eq!(legal_text(&[]), "none listed");
        let many: Vec<Value> = (0..45u32).map(|n| gaos_json::obj! { "n" => n }.into()).collect();
        assert!(legal_text(&many).ends_with("|39 (and 5 more)"));
    }

    #[test]
    fn compact_cuts_on_char_boundaries() {
        let long = Value::from("é".repeat(300));
        let text = compact(&long, 11);
        assert!(text.ends_with('…') && text.len() <= 11 + '…'.len_utf8());
    }
}
