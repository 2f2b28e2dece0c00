//! The one error type of the client: what failed, and what to do about it.

use std::time::Duration;

use gaos_session::ErrorCode;
use thiserror::Error;

/// Everything a [`crate::SessionClient`] call can fail with.
///
/// HTTP answers map as the reference clients map them (lifecycle spec §1):
/// a 422 is [`ClientError::IllegalActionRejected`], every other non-2xx is
/// [`ClientError::Api`] with the `{"error", "code"}` body decoded. Only
/// [`ClientError::Transport`] and [`ClientError::Timeout`] are retried, and
/// only for requests the host makes idempotent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ClientError {
    /// HTTP 422: the game refused the command (`illegal_command`). Nothing
    /// changed on the host; pick another action from `legalActions`.
    #[error("the host refused the command as illegal (HTTP 422{}): {message}", code_suffix(.code.as_ref()))]
    IllegalActionRejected {
        /// The host's `error` text (or the raw body when it was not JSON).
        message: String,
        /// The host's `code`, normally `illegal_command`.
        code: Option<ErrorCode>,
    },
    /// Any other non-2xx answer.
    #[error("the host answered HTTP {status}{}: {message}", code_suffix(.code.as_ref()))]
    Api {
        /// The HTTP status.
        status: u16,
        /// The host's stable `code` (e.g. `stale_tick`, `session_finalized`), when it sent one.
        code: Option<ErrorCode>,
        /// The host's `error` text, the raw body, or the status text.
        message: String,
    },
    /// The request never got an answer: connection refused or reset, DNS,
    /// TLS, or the body broke off. Check that the host runs at the base URL.
    #[error("{method} {url} got no answer from the host: {message}; check that the host is running and reachable")]
    Transport {
        /// The HTTP method.
        method: String,
        /// The full request URL.
        url: String,
        /// What the HTTP stack reported (with its causes).
        message: String,
    },
    /// No complete answer within the client's timeout.
    #[error(
        "{method} {url} did not complete within {:.1} s; the host may be overloaded (raise the client timeout or retry later)",
        .timeout.as_secs_f64()
    )]
    Timeout {
        /// The HTTP method.
        method: String,
        /// The full request URL.
        url: String,
        /// The timeout in force.
        timeout: Duration,
    },
    /// A 2xx answer that breaks the `gaos.ticks` contract (not JSON, empty,
    /// wrong session, invalid envelope, unverifiable receipt, ...). The host
    /// is not a conforming `gaos.ticks` v1 host, or the base URL is wrong.
    #[error("the answer to {url} breaks the gaos.ticks v1 contract: {reason}")]
    ProtocolMismatch {
        /// The full request URL.
        url: String,
        /// Which rule was broken.
        reason: String,
    },
    /// The answer is larger than the client's response cap; the rest of it
    /// was not read.
    #[error(
        "the answer to {url} is larger than the client's {limit}-byte response cap; raise max_response_bytes if the host is trusted"
    )]
    ResponseTooLarge {
        /// The full request URL.
        url: String,
        /// The cap in force, in bytes.
        limit: usize,
    },
    /// The call itself is wrong (bad seat id, explicit submission id without
    /// a cursor, bad header, ...); nothing was sent.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

fn code_suffix(code: Option<&ErrorCode>) -> String {
    code.map(|c| format!(", code {c}")).unwrap_or_default()
}

impl ClientError {
    /// The HTTP status of an answered error (422 for an illegal action).
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::IllegalActionRejected { .. } => Some(422),
            ClientError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The host's error `code`, when the host answered with one.
    pub fn code(&self) -> Option<&ErrorCode> {
        match self {
            ClientError::IllegalActionRejected { code, .. } | ClientError::Api { code, .. } => code.as_ref(),
            _ => None,
        }
    }

    /// True for failures where the host may or may not have seen the
    /// request ([`ClientError::Transport`], [`ClientError::Timeout`]): the
    /// only ones an exact resend may fix.
    pub fn is_transport_failure(&self) -> bool {
        matches!(self, ClientError::Transport { .. } | ClientError::Timeout { .. })
    }

    /// A short stable label for counting errors (`code` for answered
    /// errors, else the variant): `stale_tick`, `http_503`, `transport`, ...
    pub fn label(&self) -> String {
        match self {
            ClientError::IllegalActionRejected { code, .. } => {
                code.as_ref().map_or_else(|| ErrorCode::IllegalCommand.to_string(), ErrorCode::to_string)
            }
            ClientError::Api { status, code, .. } => {
                code.as_ref().map_or_else(|| format!("http_{status}"), ErrorCode::to_string)
            }
            ClientError::Transport { .. } => "transport".into(),
            ClientError::Timeout { .. } => "timeout".into(),
            ClientError::ProtocolMismatch { .. } => "protocol_mismatch".into(),
            ClientError::ResponseTooLarge { .. } => "response_too_large".into(),
            ClientError::InvalidArgument(_) => "invalid_argument".into(),
        }
    }
}
