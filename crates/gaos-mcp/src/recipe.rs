//! The agent-CLI recipe tools of `spec/lifecycle.md` §6, beside the seat
//! tools: `observe {}` (the seat tool, which takes `{}`), `act {"action":
//! {...}}` (in [`crate::tools`]: the action object is the game's command),
//! `reset {"seed"?}` and `transcript {}`, so recipes written for the
//! reference's `gaos-agent spawn` drive this server unchanged.
//!
//! `transcript` answers with the seat's [`SeatLog`](crate::seat_log::SeatLog): the host's own
//! transcript holds every seat's hidden state and is the operator's to
//! read, and the replay exists only once the game is over.

use gaos_json::{Map, Value};
use gaos_session::Observation;

use crate::error::ToolError;
use crate::render::{self, Turn};
use crate::seat::SeatSession;

use crate::tool_output::{ToolOutput, observation_output, only_known, uint_argument};

/// The largest seed `reset` takes (the kernel's seeds are uint32).
const MAX_SEED: u64 = u32::MAX as u64;

/// `reset {"seed"?}`: a new episode, where the session allows one (the
/// next level of a run that advances on reset, `POST .../reset`). The seed
/// is checked here for shape and passed on; the host judges it.
pub async fn reset(
    seat: &dyn SeatSession,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Result<ToolOutput, ToolError> {
    only_known("reset", arguments, &["seed"])?;
    let seed = match arguments.get("seed") {
        None => None,
        Some(seed) => {
            let seed = uint_argument("reset", "seed", seed)?;
            if seed > MAX_SEED {
                return Err(ToolError::invalid_argument(format!(
                    "reset: \"seed\" must be at most {MAX_SEED}, not {seed}"
                )));
            }
            Some(seed as u32)
        }
    };
    let observation = seat.handle().reset(seed).await.map_err(|e| ToolError::from_session(&e))?;
    let lead = match episode_index(&observation) {
        Some(index) => format!("Reset: level {index} of the run started."),
        None => "Reset: a new episode started.".to_owned(),
    };
    Ok(observation_output(seat, &observation, Some(&lead)))
}

/// `gaos.session.episode.index` of an envelope, when it names one.
fn episode_index(observation: &Observation) -> Option<u64> {
    observation.extensions()?.get("gaos.session.episode")?.get("index")?.as_u64()
}

/// `transcript {}`: the seat's decisions through this server, with the
/// current turn; once the game is over the replay tool has the full record.
pub async fn transcript(
    seat: &dyn SeatSession,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Result<ToolOutput, ToolError> {
    only_known("transcript", arguments, &[])?;
    let handle = seat.handle();
    let observation = seat.observe().await?;
    let decisions = seat.log().decisions();
    let over = matches!(render::turn(&observation, handle.seat()), Turn::Over);
    let mut structured = Map::new();
    structured.insert("sessionId".into(), handle.session_id().into());
    structured.insert("seat".into(), handle.seat().into());
    structured.insert("revision".into(), observation.revision().into());
    structured.insert("gameOver".into(), over.into());
    structured.insert("decisions".into(), Value::Array(decisions.clone()));
    let mut lines = vec![format!(
        "Seat {} · session {} · {} decision{} through this server{}",
        handle.seat(),
        handle.session_id(),
        decisions.len(),
        if decisions.len() == 1 { "" } else { "s" },
        if over { " · the game is over (replay has the full record)" } else { "" }
    )];
    for decision in &decisions {
        let action = decision.get("action").map(|a| render::compact(a, render::FIELD_TEXT_LIMIT)).unwrap_or_default();
        let step = decision.get("step").and_then(Value::as_u64).unwrap_or(0);
        let revision = decision.get("revision").and_then(Value::as_u64).unwrap_or(0);
        let answer = match decision.get("code").and_then(Value::as_str) {
            Some(code) => format!("refused ({code})"),
            None => "accepted".to_owned(),
        };
        lines.push(format!("{step}. at revision {revision}: {action} → {answer}"));
    }
    Ok(ToolOutput::ok(lines.join("\n"), structured))
}
