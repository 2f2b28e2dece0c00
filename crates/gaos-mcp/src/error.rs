//! [`ToolError`]: what a failed tool call tells the model — a stable code,
//! the host's message, and a hint of what to do next.

use gaos_json::{Map, Value};
use gaos_session::{ErrorCode, HandleState, SessionError};

/// A failed tool call. It travels as an MCP *tool* error (`isError: true`),
/// never as a protocol failure, so the model reads it and can recover.
///
/// Host refusals keep the host's code and message (`illegal_command`,
/// `stale_tick`, `conflicting_intent`, `session_paused`, `writer_conflict`,
/// `lease_expired`, `not_terminal`, `revoked`, ...); problems this server
/// finds itself use its own codes (`invalid_argument`, `session_finalized`,
/// `game_over`, `host_unreachable`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// Stable machine-readable code.
    pub code: ErrorCode,
    /// What went wrong, for the model.
    pub message: String,
    /// The host's HTTP status, when the host refused.
    pub status: Option<u16>,
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ToolError {}

impl ToolError {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError { code, message: message.into(), status: None }
    }

    /// The tool's input is wrong (nothing was sent to the host).
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        ToolError::new(ErrorCode::InvalidArgument, message)
    }

    /// A handle or host error as the model should read it.
    pub fn from_session(error: &SessionError) -> Self {
        match error {
            SessionError::Host { status, code, message } => ToolError {
                code: code.clone().unwrap_or_else(|| ErrorCode::Unknown(format!("http_{status}"))),
                message: message.clone(),
                status: Some(*status),
            },
            SessionError::Transport(message) => ToolError::new(ErrorCode::HostUnreachable, message.clone()),
            SessionError::Protocol(message) => ToolError::new(ErrorCode::ProtocolError, message.clone()),
            SessionError::Closed { .. } => ToolError::new(ErrorCode::Closed, error.to_string()),
            SessionError::InvalidState { operation, state } => match state {
                HandleState::Finalized => ToolError::new(
                    ErrorCode::SessionFinalized,
                    format!("{operation} is not possible: this seat already finalized the session"),
                ),
                HandleState::Terminal => ToolError::new(
                    ErrorCode::GameOver,
                    format!("{operation} is not possible: the game is over (finalize fixes the result)"),
                ),
                HandleState::Closed => ToolError::new(ErrorCode::Closed, error.to_string()),
                HandleState::Active => ToolError::new(ErrorCode::InvalidState, error.to_string()),
            },
            SessionError::FinalizeConflict { .. } => ToolError::new(ErrorCode::FinalizeConflict, error.to_string()),
            SessionError::InvalidArgument(message) => ToolError::invalid_argument(message.clone()),
            SessionError::Unsupported { .. } => ToolError::new(ErrorCode::Unsupported, error.to_string()),
            other => ToolError::new(ErrorCode::Error, other.to_string()),
        }
    }

    /// What to do about it, for the codes a playing model meets.
    pub fn hint(&self) -> Option<&'static str> {
        Some(match &self.code {
            ErrorCode::IllegalCommand | ErrorCode::InvalidSubmission => {
                "The game refused that command and nothing changed. Pick one of the legal actions (observe lists them)."
            }
            ErrorCode::InvalidArgument => "Nothing was sent. Fix the tool input and call the tool again.",
            ErrorCode::StaleTick => "The game moved on since your last observation; read the new state and act again.",
            ErrorCode::UnknownParticipant => "It is not your move in this window; wait for it (observe with waitMs).",
            ErrorCode::ConflictingIntent => {
                "You already submitted a command in this window; wait for the other seats (observe with waitMs)."
            }
            ErrorCode::SessionPaused => "This seat is paused; call resume to act again.",
            ErrorCode::WriterConflict => "Another controller holds this seat; this server cannot drive it.",
            ErrorCode::LeaseExpired => "The seat's lease lapsed and could not be renewed; call status.",
            ErrorCode::NotTerminal => "The game is not over yet; keep playing.",
            ErrorCode::GameOver => {
                "The game is over; call finalize, then replay (a run that advances on reset: call reset for its next level)."
            }
            ErrorCode::ResetNotAllowed => "This session offers no new episode; play on, or finalize it.",
            ErrorCode::ResetSeedFixed => "The run fixes its seeds; call reset without a seed.",
            ErrorCode::LevelInPlay => "This level is still being played; keep playing and reset once it has ended.",
            ErrorCode::RunOver => "The run is over; call finalize, then replay.",
            ErrorCode::SessionFinalized => "The session is finalized; call replay for the record.",
            ErrorCode::Revoked => "The session was stopped for good; nothing can act in it any more.",
            ErrorCode::HostUnreachable => "The GAOS host did not answer; try again shortly.",
            _ => return None,
        })
    }

    /// The error as structured content: `{"error", "code", "status"?}`
    /// (the host's error body shape).
    pub fn to_map(&self) -> Map {
        let mut map = Map::new();
        map.insert("error".into(), self.message.clone().into());
        map.insert("code".into(), self.code.as_str().into());
        if let Some(status) = self.status {
            map.insert("status".into(), Value::from(u64::from(status)));
        }
        if let Some(hint) = self.hint() {
            map.insert("hint".into(), hint.into());
        }
        map
    }

    /// The error as text: `error [code]: message`, and the hint.
    pub fn to_text(&self) -> String {
        let mut text = format!("error [{}]: {}", self.code, self.message);
        if let Some(hint) = self.hint() {
            text.push('\n');
            text.push_str(hint);
        }
        text
    }
}

impl From<SessionError> for ToolError {
    fn from(error: SessionError) -> Self {
        ToolError::from_session(&error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_refusals_keep_code_status_and_message() {
        let error = ToolError::from_session(&SessionError::host(422, ErrorCode::IllegalCommand, "no card at index 9"));
        assert_eq!((error.code.as_str(), error.status), ("illegal_command", Some(422)));
        assert!(error.to_text().starts_with("error [illegal_command]: no card at index 9\n"));
        let map = error.to_map();
        assert_eq!(map.get("status").and_then(Value::as_u64), Some(422));
        assert!(map.contains_key("hint"));
    }

    #[test]
    fn local_refusals_get_their_own_codes() {
        let finalized = SessionError::InvalidState { operation: "act", state: HandleState::Finalized };
        assert_eq!(ToolError::from_session(&finalized).code, "session_finalized");
        let over = SessionError::InvalidState { operation: "act", state: HandleState::Terminal };
        assert_eq!(ToolError::from_session(&over).code, "game_over");
        assert_eq!(ToolError::from_session(&SessionError::Transport("reset".into())).code, "host_unreachable");
        let uncoded = SessionError::Host { status: 502, code: None, message: "bad gateway".into() };
        assert_eq!(ToolError::from_session(&uncoded).code, "http_502");
    }
}
