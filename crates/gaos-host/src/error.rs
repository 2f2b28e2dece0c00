//! Typed host errors: every failure a caller can see has an HTTP status and a
//! stable `code`, answered as `{"error": message, "code": code}` (the HTTP
//! layer's `IntoResponse`; in-process handles read status and code directly).

use axum::http::StatusCode;
use gaos_json::{Map, Value};
use gaos_kernel::{ConflictCode, IntentErrorCode, KernelError};

use crate::lease::LeaseError;

/// An error answered to a caller.
#[derive(Debug, Clone, PartialEq)]
pub struct HostError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
    /// Extra fields merged into the error body (e.g. `seat`, `epoch`).
    pub details: Map,
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.status.as_u16(), self.code, self.message)
    }
}

impl std::error::Error for HostError {}

impl HostError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        HostError { status, code: code.into(), message: message.into(), details: Map::new() }
    }

    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.into(), value.into());
        self
    }

    pub fn bad_request(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::bad_request("invalid_request", message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }
    pub fn not_found(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }
    pub fn unknown_session(id: &str) -> Self {
        Self::not_found("unknown_session", format!("no session {id:?} on this host"))
    }
    pub fn conflict(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }
    /// The 410 answered for every call once a session is revoked.
    pub fn revoked(reason: &str) -> Self {
        Self::new(
            StatusCode::GONE,
            "revoked",
            format!("the session was revoked ({reason}); nothing can act on it again"),
        )
    }

    /// The JSON body `{"error", "code", ...details}`.
    pub fn body(&self) -> Value {
        let mut map = self.details.clone();
        map.insert("error".into(), self.message.clone().into());
        map.insert("code".into(), self.code.clone().into());
        Value::Object(map)
    }
}

/// Map a kernel refusal of caller input onto the wire (lifecycle.md §1).
pub fn from_kernel(e: KernelError) -> HostError {
    let message = e.to_string();
    match &e {
        KernelError::Intent(intent) => {
            let status = match intent.code {
                IntentErrorCode::InvalidProtocol
                | IntentErrorCode::WrongSession
                | IntentErrorCode::InvalidSubmission => StatusCode::BAD_REQUEST,
                IntentErrorCode::StaleTick
                | IntentErrorCode::ConflictingIntent
                | IntentErrorCode::UnknownParticipant => StatusCode::CONFLICT,
                IntentErrorCode::IllegalCommand => StatusCode::UNPROCESSABLE_ENTITY,
            };
            HostError::new(status, intent.code.as_str(), message)
        }
        KernelError::Conflict { code, .. } => {
            let detail = match code {
                ConflictCode::Conflict => "conflict",
                ConflictCode::UnknownSubmission => "unknown_submission",
            };
            HostError::conflict("conflicting_intent", message).with_detail("reason", detail)
        }
        KernelError::Advance { .. } => match e.code() {
            "terminal" => HostError::conflict("terminal", message),
            "not_ready" => HostError::conflict("not_ready", message),
            code => HostError::conflict(code, message),
        },
        KernelError::Argument { .. } => HostError::invalid_request(message),
        KernelError::ResyncRequired(_) => HostError::conflict("resync_required", message),
        KernelError::Lifecycle { .. }
        | KernelError::ReplayFormat { .. }
        | KernelError::Reducer { .. }
        | KernelError::Checkpoint { .. }
        | KernelError::History { .. } => HostError::internal(message),
    }
}

/// A refused lease dispatch on the wire (spec/lease.md §5).
impl From<LeaseError> for HostError {
    fn from(e: LeaseError) -> Self {
        match e {
            LeaseError::Expired { seat, epoch } => HostError::conflict(
                "lease_expired",
                format!("the lease of seat {seat:?} lapsed; renew it (POST .../lease/renew) and retry"),
            )
            .with_detail("seat", seat)
            .with_detail("epoch", epoch),
            LeaseError::WriterConflict { seat, holder_id, epoch } => HostError::conflict(
                "writer_conflict",
                format!(
                    "seat {seat:?} is held by another writer{} at epoch {epoch}: wait until its lease lapses \
                     (GET /lease shows expiresAt; a holder that stops renewing loses the seat then), ask the holder \
                     to release it (POST /lease/release), or drive under that claim by presenting its lease token \
                     (Gaos-Lease)",
                    holder_id.as_deref().map(|h| format!(" ({h})")).unwrap_or_default()
                ),
            )
            .with_detail("seat", seat)
            .with_detail("epoch", epoch)
            .with_detail("holderId", holder_id),
            LeaseError::Paused { seat, reasons, .. } => HostError::conflict(
                "session_paused",
                format!("seat {seat:?} is paused ({}); resume it first", reasons.join(", ")),
            )
            .with_detail("seat", seat),
            LeaseError::Revoked { reason } => HostError::revoked(&reason),
            LeaseError::CapabilityRejected(message) => {
                HostError::new(StatusCode::FORBIDDEN, "capability_rejected", message)
            }
        }
    }
}
