//! [`SessionError`]: everything a [`crate::SessionHandle`] call can fail with.

use thiserror::Error;

use crate::error_code::ErrorCode;
use crate::state::HandleState;

/// Everything a [`crate::SessionHandle`] call can fail with. In-process and
/// remote handles map their host's answers onto the same variants, so code
/// on top of a handle never needs to know which one it has.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The host refused the request. `status` is the HTTP status the host
    /// answers (an in-process host uses the same numbers) and `code` its
    /// stable error code: e.g. 422 `illegal_command`, 409 `stale_tick`,
    /// `not_terminal`, `session_finalized`, `finalize_conflict`,
    /// `lease_expired`, `writer_conflict`; 410 `revoked`.
    #[error("the host refused the request (HTTP {status}{}): {message}", code_suffix(.code.as_ref()))]
    Host {
        /// HTTP status.
        status: u16,
        /// The host's stable error code, when it sent one.
        code: Option<ErrorCode>,
        /// The host's message.
        message: String,
    },
    /// The request got no answer (connection refused or reset, timeout).
    /// It may or may not have reached the host; an exact resend is safe.
    #[error("no answer from the host: {0}")]
    Transport(String),
    /// An answer that breaks the `gaos.ticks` contract (wrong session,
    /// invalid envelope or result, bad receipt).
    #[error("the host's answer breaks the gaos.ticks contract: {0}")]
    Protocol(String),
    /// The handle was closed; it makes no more requests.
    #[error("the handle of session {session_id} is closed")]
    Closed {
        /// The session.
        session_id: String,
    },
    /// The operation is not allowed in the handle's state (e.g. `act` after
    /// the game ended, `observe` after finalize).
    #[error("{operation} is not allowed while the handle is {}", .state.as_str())]
    InvalidState {
        /// The refused operation (`observe`, `act`, ...).
        operation: &'static str,
        /// The handle's state.
        state: HandleState,
    },
    /// This handle already finalized the session with a different request;
    /// only an exact repeat returns the (cached) result.
    #[error(
        "session {session_id} was already finalized by this handle with a different request; repeat the original request to get its result"
    )]
    FinalizeConflict {
        /// The session.
        session_id: String,
    },
    /// `create_session_handle_from_existing` refused the existing head.
    #[error("cannot adopt the existing session head: {0}")]
    InvalidExisting(String),
    /// The call itself is wrong; nothing was sent.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The call's own timeout ([`crate::ActOptions::timeout`]) passed
    /// before the host answered. Like [`SessionError::Transport`], a
    /// submission may have landed: resend it with the same id.
    #[error("{operation} got no answer within {after:?}")]
    Timeout {
        /// The call (`act`, `observe`).
        operation: &'static str,
        /// The timeout.
        after: std::time::Duration,
    },
    /// The call's cancellation token fired before the host answered.
    #[error("{operation} was cancelled")]
    Cancelled {
        /// The call (`act`, `observe`).
        operation: &'static str,
    },
    /// This handle's kind of host offers no such operation; nothing was sent.
    #[error("{operation} is not offered by this handle: {why}")]
    Unsupported {
        /// The operation (`reset`).
        operation: &'static str,
        /// What the caller can do instead.
        why: String,
    },
}

fn code_suffix(code: Option<&ErrorCode>) -> String {
    code.map(|c| format!(", code {c}")).unwrap_or_default()
}

impl SessionError {
    /// A host refusal with a code.
    pub fn host(status: u16, code: impl Into<ErrorCode>, message: impl Into<String>) -> Self {
        SessionError::Host { status, code: Some(code.into()), message: message.into() }
    }

    /// The HTTP status of a host refusal.
    pub fn status(&self) -> Option<u16> {
        match self {
            SessionError::Host { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The host's error code of a host refusal.
    pub fn code(&self) -> Option<&ErrorCode> {
        match self {
            SessionError::Host { code, .. } => code.as_ref(),
            _ => None,
        }
    }

    /// The host could not be reached or was briefly unavailable (no
    /// answer, or HTTP 503): the same call may succeed later, and an exact
    /// resend of a submission is safe. A runner reconnects on these.
    pub fn is_transient(&self) -> bool {
        matches!(self, SessionError::Transport(_)) || self.status() == Some(503)
    }

    /// The host refused the credential (HTTP 401).
    pub fn is_unauthorized(&self) -> bool {
        self.status() == Some(401)
    }

    /// The host refused a command as illegal (HTTP 422).
    pub fn is_illegal_action(&self) -> bool {
        self.status() == Some(422)
    }

    /// The seat's controller lease lapsed (HTTP 409 `lease_expired`): renew
    /// and resend the same submission (lease spec rule 8; handles do this).
    pub fn is_lease_expired(&self) -> bool {
        self.code() == Some(&ErrorCode::LeaseExpired)
    }
}
