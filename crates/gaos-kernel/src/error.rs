//! Typed kernel errors. Each maps one-to-one onto a neutral `{kind, code}`
//! pair of the conformance pack (SCRIPT-FORMAT.md §4.1).

use std::fmt;

use thiserror::Error;

/// `IntentErrorCode` of the reference protocol layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntentErrorCode {
    InvalidProtocol,
    WrongSession,
    StaleTick,
    UnknownParticipant,
    InvalidSubmission,
    IllegalCommand,
    ConflictingIntent,
}

impl IntentErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            IntentErrorCode::InvalidProtocol => "invalid_protocol",
            IntentErrorCode::WrongSession => "wrong_session",
            IntentErrorCode::StaleTick => "stale_tick",
            IntentErrorCode::UnknownParticipant => "unknown_participant",
            IntentErrorCode::InvalidSubmission => "invalid_submission",
            IntentErrorCode::IllegalCommand => "illegal_command",
            IntentErrorCode::ConflictingIntent => "conflicting_intent",
        }
    }
}

/// A submission refused by intent collection.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct IntentError {
    pub code: IntentErrorCode,
    pub message: String,
    /// The game's reason, for `illegal_command`.
    pub cause: Option<String>,
}

impl IntentError {
    pub fn new(code: IntentErrorCode, message: impl Into<String>) -> Self {
        IntentError { code, message: message.into(), cause: None }
    }
}

/// `SessionConflictError` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConflictCode {
    /// A submission identity reused with different bytes, tick or revision,
    /// an impersonating action, or a malformed commitment.
    Conflict,
    /// An identity that was accepted before and can never be applied again.
    UnknownSubmission,
}

/// `SessionAdvanceError` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdvanceCode {
    NotReady,
    StaleTarget,
    InvalidTarget,
    InvalidView,
    Terminal,
}

/// `PreparedTransitionError` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LifecycleCode {
    /// The prepared transition belongs to another kernel instance.
    Foreign,
    /// Something else committed since it was prepared; it was aborted.
    Stale,
    /// It was already committed or aborted.
    AlreadyCompleted,
}

/// Malformed (TypeError) or out-of-range (RangeError) arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgumentCode {
    Type,
    Range,
}

/// Why a kernel checkpoint was refused (on read, restore or compaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckpointCode {
    /// Not a `gaos.kernel-checkpoint` 1.0 document of the expected shape.
    Malformed,
    /// `integrityDigest` does not hash the document.
    Integrity,
    /// The header differs from the kernel options' header.
    Header,
    /// A reducer-state codec this kernel does not speak.
    Codec,
    /// The watermark contradicts itself or the rest of the document.
    Watermark,
    /// The open window is not the one the watermark implies.
    Window,
    /// A recorded seat view differs from the view of the restored state.
    Views,
    /// The restored kernel's state digest differs from `stateDigest`.
    StateDigest,
    /// The events after the checkpoint do not follow its watermark.
    Tail,
    /// The reducer cannot encode or decode its state.
    Unsupported,
    /// Compaction was asked for without durable checkpoint and history.
    Durability,
}

impl CheckpointCode {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointCode::Malformed => "malformed",
            CheckpointCode::Integrity => "integrity",
            CheckpointCode::Header => "header",
            CheckpointCode::Codec => "codec",
            CheckpointCode::Watermark => "watermark",
            CheckpointCode::Window => "window",
            CheckpointCode::Views => "views",
            CheckpointCode::StateDigest => "state_digest",
            CheckpointCode::Tail => "tail",
            CheckpointCode::Unsupported => "unsupported",
            CheckpointCode::Durability => "durability",
        }
    }
}

/// `{status:"resync_required", ...}`: the caller asked for history below the
/// retention floor; it must resynchronize from a full snapshot
/// (`snapshot(seat, None)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResyncRequired {
    pub requested_transition_revision: u64,
    pub retention_floor: u64,
    pub current_transition_revision: u64,
}

impl ResyncRequired {
    /// The reference's answer object.
    pub fn to_value(&self) -> gaos_json::Value {
        let mut map = gaos_json::Map::new();
        map.insert("status".into(), "resync_required".into());
        map.insert("requestedTransitionRevision".into(), self.requested_transition_revision.into());
        map.insert("retentionFloor".into(), self.retention_floor.into());
        map.insert("currentTransitionRevision".into(), self.current_transition_revision.into());
        gaos_json::Value::Object(map)
    }
}

impl fmt::Display for ResyncRequired {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "transition revision {} is below the retention floor {} (live revision {}); resync from a full snapshot",
            self.requested_transition_revision, self.retention_floor, self.current_transition_revision
        )
    }
}

/// Every error the kernel raises.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum KernelError {
    #[error("{0}")]
    Intent(IntentError),
    #[error("{message}")]
    Conflict { code: ConflictCode, message: String },
    #[error("{message}")]
    Advance { code: AdvanceCode, message: String },
    #[error("{message}")]
    Lifecycle { code: LifecycleCode, message: String },
    #[error("invalid gaos.replay 1.4 artifact: {}", problems.join("; "))]
    ReplayFormat { problems: Vec<String> },
    #[error("{message}")]
    Argument { code: ArgumentCode, message: String },
    /// Game code (reducer or mapper) failed; hosts treat this as a revocation.
    #[error("game code failed: {message}")]
    Reducer { message: String },
    /// A kernel checkpoint was refused.
    #[error("kernel checkpoint refused ({}): {message}", code.as_str())]
    Checkpoint { code: CheckpointCode, message: String },
    /// History below the retention floor was asked for.
    #[error("{0}")]
    ResyncRequired(ResyncRequired),
    /// The embedder's [`HistoryLookup`](crate::history::HistoryLookup) failed.
    #[error("history lookup failed: {message}")]
    History { message: String },
    /// A signed session refused a submission or seat signature whose chain or
    /// signature would not verify (RFC-010; beyond the reference kernel,
    /// which checks only shapes).
    #[error("{message}")]
    Signature { message: String },
}

impl From<IntentError> for KernelError {
    fn from(e: IntentError) -> Self {
        KernelError::Intent(e)
    }
}

impl KernelError {
    pub fn conflict(message: impl Into<String>) -> Self {
        KernelError::Conflict { code: ConflictCode::Conflict, message: message.into() }
    }
    pub fn unknown_submission(message: impl Into<String>) -> Self {
        KernelError::Conflict { code: ConflictCode::UnknownSubmission, message: message.into() }
    }
    pub fn advance(code: AdvanceCode, message: impl Into<String>) -> Self {
        KernelError::Advance { code, message: message.into() }
    }
    pub fn lifecycle(code: LifecycleCode, message: impl Into<String>) -> Self {
        KernelError::Lifecycle { code, message: message.into() }
    }
    pub fn type_error(message: impl Into<String>) -> Self {
        KernelError::Argument { code: ArgumentCode::Type, message: message.into() }
    }
    pub fn range_error(message: impl Into<String>) -> Self {
        KernelError::Argument { code: ArgumentCode::Range, message: message.into() }
    }
    pub fn intent(code: IntentErrorCode, message: impl Into<String>) -> Self {
        KernelError::Intent(IntentError::new(code, message))
    }
    pub fn replay(problems: Vec<String>) -> Self {
        KernelError::ReplayFormat { problems }
    }
    pub fn signature(message: impl Into<String>) -> Self {
        KernelError::Signature { message: message.into() }
    }
    pub fn checkpoint(code: CheckpointCode, message: impl Into<String>) -> Self {
        KernelError::Checkpoint { code, message: message.into() }
    }

    /// The neutral error kind of the conformance pack.
    pub fn kind(&self) -> &'static str {
        match self {
            KernelError::Intent(_) => "intent",
            KernelError::Conflict { .. } => "conflict",
            KernelError::Advance { .. } => "advance",
            KernelError::Lifecycle { .. } => "lifecycle",
            KernelError::ReplayFormat { .. } => "replay-format",
            KernelError::Argument { .. } => "argument",
            KernelError::Reducer { .. } => "reducer",
            KernelError::Checkpoint { .. } => "checkpoint",
            KernelError::ResyncRequired(_) => "resync",
            KernelError::History { .. } => "history",
            KernelError::Signature { .. } => "signature",
        }
    }

    /// The neutral error code of the conformance pack.
    pub fn code(&self) -> &'static str {
        match self {
            KernelError::Intent(e) => e.code.as_str(),
            KernelError::Conflict { code: ConflictCode::Conflict, .. } => "conflict",
            KernelError::Conflict { code: ConflictCode::UnknownSubmission, .. } => "unknown_submission",
            KernelError::Advance { code, .. } => match code {
                AdvanceCode::NotReady => "not_ready",
                AdvanceCode::StaleTarget => "stale_target",
                AdvanceCode::InvalidTarget => "invalid_target",
                AdvanceCode::InvalidView => "invalid_view",
                AdvanceCode::Terminal => "terminal",
            },
            KernelError::Lifecycle { code, .. } => match code {
                LifecycleCode::Foreign => "foreign",
                LifecycleCode::Stale => "stale",
                LifecycleCode::AlreadyCompleted => "already_completed",
            },
            KernelError::ReplayFormat { .. } => "invalid",
            KernelError::Argument { code: ArgumentCode::Type, .. } => "type",
            KernelError::Argument { code: ArgumentCode::Range, .. } => "range",
            KernelError::Reducer { .. } => "reducer_failed",
            KernelError::Checkpoint { code, .. } => code.as_str(),
            KernelError::ResyncRequired(_) => "resync_required",
            KernelError::History { .. } => "history_unavailable",
            KernelError::Signature { .. } => "invalid_signature",
        }
    }
}

/// Failure inside game code (reducer, mapper, validator).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameError {
    pub message: String,
}

impl GameError {
    pub fn new(message: impl Into<String>) -> Self {
        GameError { message: message.into() }
    }
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GameError {}

impl From<GameError> for KernelError {
    fn from(e: GameError) -> Self {
        KernelError::Reducer { message: e.message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every error variant and code maps to the conformance pack's
    /// `{kind, code}` pair (SCRIPT-FORMAT.md §4.1); scripts compare these strings.
    #[test]
    fn every_error_maps_to_its_neutral_kind_and_code() {
        use IntentErrorCode::*;
        let intent = [
            (InvalidProtocol, "invalid_protocol"),
            (WrongSession, "wrong_session"),
            (StaleTick, "stale_tick"),
            (UnknownParticipant, "unknown_participant"),
            (InvalidSubmission, "invalid_submission"),
            (IllegalCommand, "illegal_command"),
            (ConflictingIntent, "conflicting_intent"),
        ];
        for (code, expected) in intent {
            let error = KernelError::intent(code, "m");
            assert_eq!((error.kind(), error.code()), ("intent", expected));
            assert_eq!(code.as_str(), expected);
        }
        let cases = [
            (KernelError::conflict("m"), "conflict", "conflict"),
            (KernelError::unknown_submission("m"), "conflict", "unknown_submission"),
            (KernelError::advance(AdvanceCode::NotReady, "m"), "advance", "not_ready"),
            (KernelError::advance(AdvanceCode::StaleTarget, "m"), "advance", "stale_target"),
            (KernelError::advance(AdvanceCode::InvalidTarget, "m"), "advance", "invalid_target"),
            (KernelError::advance(AdvanceCode::InvalidView, "m"), "advance", "invalid_view"),
            (KernelError::advance(AdvanceCode::Terminal, "m"), "advance", "terminal"),
            (KernelError::lifecycle(LifecycleCode::Foreign, "m"), "lifecycle", "foreign"),
            (KernelError::lifecycle(LifecycleCode::Stale, "m"), "lifecycle", "stale"),
            (KernelError::lifecycle(LifecycleCode::AlreadyCompleted, "m"), "lifecycle", "already_completed"),
            (KernelError::replay(vec!["p".into()]), "replay-format", "invalid"),
            (KernelError::type_error("m"), "argument", "type"),
            (KernelError::range_error("m"), "argument", "range"),
            (KernelError::from(GameError::new("m")), "reducer", "reducer_failed"),
            (KernelError::checkpoint(CheckpointCode::Integrity, "m"), "checkpoint", "integrity"),
            (KernelError::checkpoint(CheckpointCode::Tail, "m"), "checkpoint", "tail"),
            (
                KernelError::ResyncRequired(ResyncRequired {
                    requested_transition_revision: 1,
                    retention_floor: 5,
                    current_transition_revision: 9,
                }),
                "resync",
                "resync_required",
            ),
            (KernelError::History { message: "m".into() }, "history", "history_unavailable"),
            (KernelError::signature("m"), "signature", "invalid_signature"),
        ];
        for (error, kind, code) in cases {
            assert_eq!((error.kind(), error.code()), (kind, code), "{error:?}");
        }
    }

    #[test]
    fn messages_say_what_failed() {
        let illegal = IntentError { code: IntentErrorCode::IllegalCommand, message: "no card 7".into(), cause: None };
        assert_eq!(KernelError::from(illegal).to_string(), "no card 7");
        assert_eq!(KernelError::from(GameError::new("boom")).to_string(), "game code failed: boom");
        let replay = KernelError::replay(vec!["a".into(), "b".into()]);
        assert_eq!(replay.to_string(), "invalid gaos.replay 1.4 artifact: a; b");
    }
}
