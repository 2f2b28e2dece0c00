//! The seat tools, written once over [`SeatSession`]: `observe`, `act`,
//! `pause`, `resume`, `status`, `finalize`, `replay`, and the agent-CLI
//! recipe tools `reset` and `transcript` ([`crate::recipe`]).
//!
//! Every call answers a [`ToolOutput`]: text a model reads plus structured
//! content (JSON). Failures are [`ToolError`]s rendered as tool errors
//! (`isError: true`) with the host's code and message. Bad input is refused
//! here before anything is sent, and host refusals change nothing on the
//! host, so a failed call never changes the session.

use gaos_session::ErrorCode;
use std::time::Duration;

use gaos_json::{Map, Value, sha256_hex};
use gaos_session::FinalizeRequest;
use serde_json::json;

use crate::error::ToolError;
use crate::render::{self, Turn};
use crate::seat::SeatSession;
pub use crate::tool_output::ToolOutput;
use crate::tool_output::{Arguments, observation_output, only_known, uint_argument};

/// Longest wait `observe` accepts (`waitMs`).
pub const MAX_WAIT_MS: u64 = 60_000;
/// Longest pause reason (the host's limit).
pub const MAX_REASON_BYTES: usize = 1024;
/// Most replay text put into the text content (the structured content has all of it).
pub const REPLAY_TEXT_LIMIT: usize = 64 * 1024;

/// One tool as `tools/list` describes it.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The tool name.
    pub name: &'static str,
    /// A short human title.
    pub title: &'static str,
    /// What the tool does, for the model.
    pub description: &'static str,
    /// The JSON Schema of its arguments (an object schema).
    pub input_schema: serde_json::Map<String, serde_json::Value>,
    /// Reads only (observe, status, replay).
    pub read_only: bool,
}

fn schema(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    value.as_object().cloned().expect("tool schemas are written as JSON objects")
}

fn no_arguments() -> serde_json::Map<String, serde_json::Value> {
    schema(json!({"type": "object", "properties": {}, "additionalProperties": false}))
}

/// The nine tools, in the order `tools/list` answers them.
pub fn tool_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "observe",
            title: "Observe your seat",
            description: "Your seat's current view of the game: what you can see, whose move it is, the game status \
                and the legal actions (with their parameters) you may submit now. Reading never changes anything. \
                With waitMs, waits up to that long for your move (or the end of the game) before answering.",
            input_schema: schema(json!({
                "type": "object",
                "properties": {
                    "waitMs": {
                        "type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS,
                        "description": "Wait up to this many milliseconds until it is your move or the game is over."
                    }
                },
                "additionalProperties": false
            })),
            read_only: true,
        },
        ToolSpec {
            name: "act",
            title: "Submit your move",
            description: "Submit one command for your seat. Give one of {\"action\": {...}} or {\"command\": ...}, the \
                game's command form (normally one of the legal action objects observe lists, e.g. {\"card\": 0}), or \
                {\"index\": n}, the position of a legal action in observe's list (from 0). Answers your new \
                observation, or the pending state when other seats still have to move. A refused command changes \
                nothing. If your seat's lease lapsed while you were thinking, it is renewed and the command retried \
                once, transparently.",
            input_schema: schema(json!({
                "type": "object",
                "properties": {
                    "action": {
                        "type": "object",
                        "description": "The game's command as an object (the agent-CLI recipes' form): normally one \
                            of the legalActions objects, as listed."
                    },
                    "command": {
                        "description": "The game's command: normally one of the legalActions objects, as listed."
                    },
                    "index": {
                        "type": "integer", "minimum": 0,
                        "description": "Position (from 0) of a legal action in the list observe returned."
                    }
                },
                "additionalProperties": false
            })),
            read_only: false,
        },
        ToolSpec {
            name: "pause",
            title: "Pause your seat",
            description: "Set a deliberate safety pause on your seat (for example when the state looks uncertain): \
                no command is accepted and no turn timer runs against you until resume. Pausing is always allowed.",
            input_schema: schema(json!({
                "type": "object",
                "properties": {
                    "reason": {
                        "type": "string", "minLength": 1, "maxLength": MAX_REASON_BYTES,
                        "description": "Why you pause (recorded in the session's event log)."
                    }
                },
                "additionalProperties": false
            })),
            read_only: false,
        },
        ToolSpec {
            name: "resume",
            title: "Resume your seat",
            description: "Clear your seat's safety pause so commands flow again. Resuming is driving: it needs your \
                seat's claim (a lapsed lease is renewed first).",
            input_schema: no_arguments(),
            read_only: false,
        },
        ToolSpec {
            name: "status",
            title: "Seat and lease status",
            description: "Your seat's controller lease (state, epoch, expiry, holder), pause reasons, the session \
                cursor this server submits at, and the handle's lifecycle state. Reading never changes anything.",
            input_schema: no_arguments(),
            read_only: true,
        },
        ToolSpec {
            name: "finalize",
            title: "Finalize the session",
            description: "Once the game is over, fix the session's result (idempotent: calling it again, from any \
                seat, answers the same result, also when another client of the session finalized first). Refused \
                while the game is still running.",
            input_schema: no_arguments(),
            read_only: false,
        },
        ToolSpec {
            name: "replay",
            title: "Download the replay",
            description: "The session's portable gaos.replay record (JSONL), available once the game is over \
                (finalize first to fix the result). Anyone can re-verify it with `gaos replay verify`.",
            input_schema: no_arguments(),
            read_only: true,
        },
        ToolSpec {
            name: "reset",
            title: "Start a new episode",
            description: "Start a new episode where the session allows one: the next level of a run created with \
                \"advanceOn\": \"reset\", once the level being played has ended. Answers the new level's \
                observation. A session of one episode answers reset_not_allowed; a run fixes its level seeds, so a \
                seed is refused (reset_seed_fixed).",
            input_schema: schema(json!({
                "type": "object",
                "properties": {
                    "seed": {
                        "type": "integer", "minimum": 0, "maximum": u32::MAX,
                        "description": "A seed for the new episode, where the host lets a seat choose one."
                    }
                },
                "additionalProperties": false
            })),
            read_only: false,
        },
        ToolSpec {
            name: "transcript",
            title: "Your decisions so far",
            description: "The decisions your seat submitted through this server, in order (the action, the revision \
                it was sent at, accepted or the refusal's code), and whether the game is over. Reading never \
                changes anything.",
            input_schema: no_arguments(),
            read_only: true,
        },
    ]
}

/// True for the names [`tool_specs`] lists.
pub fn is_tool(name: &str) -> bool {
    tool_specs().iter().any(|t| t.name == name)
}

/// Run tool `name` for `seat` with `arguments` (`None`: no arguments).
pub async fn call_tool(seat: &dyn SeatSession, name: &str, arguments: Option<&Arguments>) -> ToolOutput {
    let empty = Arguments::new();
    let arguments = arguments.unwrap_or(&empty);
    let result = match name {
        "observe" => observe(seat, arguments).await,
        "act" => act(seat, arguments).await,
        "pause" => pause(seat, arguments).await,
        "resume" => resume(seat, arguments).await,
        "status" => status(seat, arguments).await,
        "finalize" => finalize(seat, arguments).await,
        "replay" => replay(seat, arguments).await,
        "reset" => crate::recipe::reset(seat, arguments).await,
        "transcript" => crate::recipe::transcript(seat, arguments).await,
        other => Err(ToolError::new(ErrorCode::UnknownTool, format!("there is no tool {other:?}"))),
    };
    result.unwrap_or_else(|error| ToolOutput::error(&error))
}

async fn observe(seat: &dyn SeatSession, arguments: &Arguments) -> Result<ToolOutput, ToolError> {
    only_known("observe", arguments, &["waitMs"])?;
    let wait_ms = match arguments.get("waitMs") {
        None => 0,
        Some(value) => {
            let ms = uint_argument("observe", "waitMs", value)?;
            if ms > MAX_WAIT_MS {
                return Err(ToolError::invalid_argument(format!(
                    "observe: \"waitMs\" must be at most {MAX_WAIT_MS}, not {ms}"
                )));
            }
            ms
        }
    };
    let handle = seat.handle();
    let mut observation = seat.observe().await?;
    let deadline = tokio::time::Instant::now() + Duration::from_millis(wait_ms);
    let mut attempt = 0u32;
    while wait_ms > 0 && matches!(render::turn(&observation, handle.seat()), Turn::Waiting { .. }) {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            break;
        }
        // Bounded by the deadline; a spurious return just looks again.
        let _ = tokio::time::timeout(deadline - now, handle.wait_for_change(observation.revision(), attempt)).await;
        let next = seat.observe().await?;
        attempt = if next.revision() == observation.revision() { attempt.saturating_add(1) } else { 0 };
        observation = next;
    }
    Ok(observation_output(seat, &observation, None))
}

async fn act(seat: &dyn SeatSession, arguments: &Arguments) -> Result<ToolOutput, ToolError> {
    only_known("act", arguments, &["action", "command", "index"])?;
    let given = ["action", "command", "index"].iter().filter(|k| arguments.contains_key(**k)).count();
    if given > 1 {
        return Err(ToolError::invalid_argument(
            "act: give one of \"action\", \"command\" or \"index\", not several".to_owned(),
        ));
    }
    // The recipes' `{"action": {...}}` is the game's command, as an object.
    let command = match arguments.get("action") {
        Some(action @ serde_json::Value::Object(_)) => Some(action),
        Some(other) => {
            return Err(ToolError::invalid_argument(format!(
                "act: \"action\" must be an object (one of the legal actions), not {other}"
            )));
        }
        None => arguments.get("command"),
    };
    // At most one of the three is given (checked above).
    let command = match (command, arguments.get("index")) {
        (None, None) => {
            return Err(ToolError::invalid_argument(
                "act needs {\"action\": {...}} or {\"command\": ...} (the game's command form, e.g. one of the \
                 legal actions) or {\"index\": n} (a position in the legal action list)"
                    .to_owned(),
            ));
        }
        (Some(serde_json::Value::Null), _) => {
            return Err(ToolError::invalid_argument("act: \"command\" must not be null".to_owned()));
        }
        (Some(command), _) => gaos_json::to_value(command)
            .map_err(|e| ToolError::invalid_argument(format!("act: \"command\" is not usable JSON: {e}")))?,
        (None, Some(index)) => {
            let index = uint_argument("act", "index", index)?;
            let observation = seat.observe().await?;
            let legal = observation.legal_actions();
            if legal.is_empty() {
                let why = match render::turn(&observation, seat.handle().seat()) {
                    Turn::Over => "the game is over".to_owned(),
                    Turn::Waiting { seats, .. } if !seats.is_empty() => format!("waiting for {}", seats.join(", ")),
                    _ => "the game lists none now; send the command form with {\"command\": ...}".to_owned(),
                };
                return Err(ToolError::new(
                    ErrorCode::NoLegalActions,
                    format!("act: no legal actions are listed ({why})"),
                ));
            }
            let position = usize::try_from(index).ok().filter(|i| *i < legal.len()).ok_or_else(|| {
                ToolError::invalid_argument(format!(
                    "act: index {index} is out of range: the legal actions are numbered 0 to {} ({})",
                    legal.len() - 1,
                    render::legal_text(legal)
                ))
            })?;
            legal[position].clone()
        }
    };
    let cursor = seat.handle().binding();
    let answer = seat.handle().act(command.clone()).await;
    match &answer {
        Ok(observation) => seat.log().record(&command, &cursor.tick_id, cursor.revision, Ok(observation)),
        Err(e) => seat.log().record(&command, &cursor.tick_id, cursor.revision, Err(&ToolError::from_session(e))),
    }
    match answer {
        Ok(observation) => {
            let lead = if observation.is_pending() { "Accepted (pending)." } else { "Accepted." };
            Ok(observation_output(seat, &observation, Some(lead)))
        }
        Err(e) => {
            let error = ToolError::from_session(&e);
            let mut output = ToolOutput::error(&error);
            // A refused command changed nothing: show the state to decide again.
            if matches!(error.status, Some(409 | 422 | 400))
                && let Ok(current) = seat.observe().await
            {
                let handle = seat.handle();
                output.text.push_str("\nCurrent state:\n");
                output.text.push_str(&render::observation_text(&current, handle.seat(), handle.state()));
                output.structured.insert(
                    "observation".into(),
                    Value::Object(render::observation_json(&current, handle.seat(), handle.state())),
                );
            }
            Ok(output)
        }
    }
}

fn lease_text(lease: &Value) -> String {
    let state = lease.get("state").and_then(Value::as_str).unwrap_or("none");
    let mut parts = vec![format!("Lease: {state}")];
    if let Some(epoch) = lease.get("epoch").and_then(Value::as_u64) {
        parts.push(format!("epoch {epoch}"));
    }
    if let Some(expires) = lease.get("expiresAt").and_then(Value::as_i64) {
        parts.push(format!("expiresAt {expires} (ms)"));
    }
    if let Some(holder) = lease.get("holderId").and_then(Value::as_str) {
        parts.push(format!("holder {holder}"));
    }
    let reasons: Vec<&str> = lease
        .get("pauseReasons")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    parts.push(if reasons.is_empty() { "no pause".to_owned() } else { format!("paused: {}", reasons.join(", ")) });
    if let Some(reason) = lease.get("revokedReason").and_then(Value::as_str) {
        parts.push(format!("revoked: {reason}"));
    }
    parts.join(" · ")
}

fn lease_output(seat: &dyn SeatSession, lead: &str, lease: Value) -> ToolOutput {
    let mut structured = Map::new();
    structured.insert("seat".into(), seat.handle().seat().into());
    structured.insert("lease".into(), lease.clone());
    ToolOutput::ok(format!("{lead}\n{}", lease_text(&lease)), structured)
}

async fn pause(seat: &dyn SeatSession, arguments: &Arguments) -> Result<ToolOutput, ToolError> {
    only_known("pause", arguments, &["reason"])?;
    let reason = match arguments.get("reason") {
        None => "paused by the agent".to_owned(),
        Some(serde_json::Value::String(r)) if !r.trim().is_empty() && r.len() <= MAX_REASON_BYTES => r.clone(),
        Some(serde_json::Value::String(r)) => {
            return Err(ToolError::invalid_argument(format!(
                "pause: \"reason\" must be a non-blank string of at most {MAX_REASON_BYTES} bytes (got {} bytes)",
                r.len()
            )));
        }
        Some(other) => {
            return Err(ToolError::invalid_argument(format!("pause: \"reason\" must be a string, not {other}")));
        }
    };
    let lease = seat.pause(reason).await?;
    Ok(lease_output(seat, "Paused: no command is accepted for this seat until resume.", lease))
}

async fn resume(seat: &dyn SeatSession, arguments: &Arguments) -> Result<ToolOutput, ToolError> {
    only_known("resume", arguments, &[])?;
    let lease = seat.resume().await?;
    Ok(lease_output(seat, "Resumed.", lease))
}

async fn status(seat: &dyn SeatSession, arguments: &Arguments) -> Result<ToolOutput, ToolError> {
    only_known("status", arguments, &[])?;
    let handle = seat.handle();
    let lease = seat.lease_info().await?;
    let binding = handle.binding();
    let mut cursor = Map::new();
    cursor.insert("tickId".into(), binding.tick_id.clone().into());
    cursor.insert("revision".into(), binding.revision.into());
    let mut structured = Map::new();
    structured.insert("sessionId".into(), handle.session_id().into());
    structured.insert("seat".into(), handle.seat().into());
    structured.insert("handle".into(), handle.state().as_str().into());
    structured.insert("cursor".into(), Value::Object(cursor));
    structured.insert("lease".into(), lease.clone());
    let text = format!(
        "Seat {} · session {} · handle {} · cursor {} (revision {})\n{}",
        handle.seat(),
        handle.session_id(),
        handle.state().as_str(),
        binding.tick_id,
        binding.revision,
        lease_text(&lease)
    );
    Ok(ToolOutput::ok(text, structured))
}

async fn finalize(seat: &dyn SeatSession, arguments: &Arguments) -> Result<ToolOutput, ToolError> {
    only_known("finalize", arguments, &[])?;
    let result = match seat.handle().finalize(FinalizeRequest::default()).await {
        Ok(result) => result,
        // Another request fixed the result first (another client of the
        // session, with its own request id): read the result it fixed.
        Err(e) if e.code() == Some(&ErrorCode::FinalizeConflict) => seat.result().await?,
        Err(e) => return Err(e.into()),
    };
    let mut structured = result.to_value().as_object().cloned().unwrap_or_default();
    // The replay has its own tool; keep the answer small.
    if structured.remove("replay").is_some() {
        structured.insert("replayIncluded".into(), true.into());
    }
    let digest = result.artifacts.iter().flatten().find(|a| a.kind == "replay").and_then(|a| a.digest.clone());
    let text = format!(
        "Finalized. Outcome: {}.{}",
        render::compact(&result.outcome, render::FIELD_TEXT_LIMIT),
        digest.map(|d| format!(" Replay sha256 {d}: call replay to read it.")).unwrap_or_default()
    );
    Ok(ToolOutput::ok(text, structured))
}

async fn replay(seat: &dyn SeatSession, arguments: &Arguments) -> Result<ToolOutput, ToolError> {
    only_known("replay", arguments, &[])?;
    let replay = seat.replay().await?;
    let lines = replay.lines().count();
    let digest = sha256_hex(replay.as_bytes());
    let mut structured = Map::new();
    structured.insert("sessionId".into(), seat.handle().session_id().into());
    structured.insert("sha256".into(), digest.clone().into());
    structured.insert("lines".into(), lines.into());
    let mut shown = replay.as_str();
    let mut note = String::new();
    if shown.len() > REPLAY_TEXT_LIMIT {
        let mut end = REPLAY_TEXT_LIMIT;
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        shown = &shown[..end];
        note = format!("\n… (cut at {REPLAY_TEXT_LIMIT} bytes; the structured content has all of it)");
    }
    let text = format!("gaos.replay, {lines} lines, sha256 {digest}:\n{shown}{note}");
    structured.insert("replay".into(), replay.into());
    Ok(ToolOutput::ok(text, structured))
}
