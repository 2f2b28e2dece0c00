//! Typed host errors: every failure a caller can see has an HTTP status and a
//! stable `code`, answered as `{"error": message, "code": code}` (the HTTP
//! layer's `IntoResponse`; in-process handles read status and code directly).

use axum::http::StatusCode;
use gaos_json::{Map, Value};
use gaos_kernel::{AdvanceCode, ConflictCode, KernelError};
use gaos_session::ErrorCode;

use crate::lease::LeaseError;

/// An error answered to a caller.
#[derive(Debug, Clone, PartialEq)]
pub struct HostError {
    /// The code's status from [`ErrorCode::http_status`], unless a route's
    /// contract answers it with another ([`HostError::with_status`]).
    pub status: StatusCode,
    pub code: ErrorCode,
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

/// The status a host answers `code` with (the one table in gaos-session).
pub fn status_of(code: &ErrorCode) -> StatusCode {
    code.http_status().and_then(|status| StatusCode::from_u16(status).ok()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

impl HostError {
    /// An error with `code`'s status.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        debug_assert!(code.http_status().is_some(), "{code} is not a code a host answers");
        HostError { status: status_of(&code), code, message: message.into(), details: Map::new() }
    }

    /// The same error answered with another status, where a route's
    /// contract says so (e.g. `manifest_mismatch` at finalize is a 409).
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.into(), value.into());
        self
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message)
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unauthorized, message)
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }
    pub fn unknown_session(id: &str) -> Self {
        Self::new(ErrorCode::UnknownSession, format!("no session {id:?} on this host"))
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unavailable, message)
    }
    /// The 410 answered for every call once a session is revoked.
    pub fn revoked(reason: &str) -> Self {
        Self::new(ErrorCode::Revoked, format!("the session was revoked ({reason}); nothing can act on it again"))
    }

    /// The JSON body `{"error", "code", ...details}`.
    pub fn body(&self) -> Value {
        let mut map = self.details.clone();
        map.insert("error".into(), self.message.clone().into());
        map.insert("code".into(), self.code.as_str().into());
        Value::Object(map)
    }
}

/// Map a kernel refusal of caller input onto the wire (lifecycle.md §1).
pub fn from_kernel(e: KernelError) -> HostError {
    let message = e.to_string();
    match &e {
        KernelError::Intent(intent) => HostError::new(ErrorCode::from(intent.code), message),
        KernelError::Conflict { code, .. } => {
            let detail = match code {
                ConflictCode::Conflict => "conflict",
                ConflictCode::UnknownSubmission => "unknown_submission",
            };
            HostError::new(ErrorCode::ConflictingIntent, message).with_detail("reason", detail)
        }
        KernelError::Advance { code, .. } => HostError::new(
            match code {
                AdvanceCode::Terminal => ErrorCode::Terminal,
                AdvanceCode::NotReady => ErrorCode::NotReady,
                AdvanceCode::StaleTarget => ErrorCode::StaleTarget,
                AdvanceCode::InvalidTarget => ErrorCode::InvalidTarget,
                AdvanceCode::InvalidView => ErrorCode::InvalidView,
            },
            message,
        ),
        KernelError::Argument { .. } => HostError::invalid_request(message),
        KernelError::Signature { .. } => HostError::new(ErrorCode::InvalidSignature, message),
        KernelError::ResyncRequired(_) => HostError::new(ErrorCode::ResyncRequired, message),
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
            LeaseError::Expired { seat, epoch } => HostError::new(
                ErrorCode::LeaseExpired,
                format!("the lease of seat {seat:?} lapsed; renew it (POST .../lease/renew) and retry"),
            )
            .with_detail("seat", seat)
            .with_detail("epoch", epoch),
            LeaseError::WriterConflict { seat, holder_id, epoch } => HostError::new(
                ErrorCode::WriterConflict,
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
            LeaseError::Paused { seat, reasons, .. } => HostError::new(
                ErrorCode::SessionPaused,
                format!("seat {seat:?} is paused ({}); resume it first", reasons.join(", ")),
            )
            .with_detail("seat", seat),
            LeaseError::Revoked { reason } => HostError::revoked(&reason),
            LeaseError::CapabilityRejected(message) => HostError::new(ErrorCode::CapabilityRejected, message),
        }
    }
}
