//! The errors of handles ([`SessionError`]), drivers ([`DriverError`]) and
//! [`crate::run_session`] ([`RunError`]).

use thiserror::Error;

use crate::handle::HandleState;

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
    #[error("the host refused the request (HTTP {status}{}): {message}", code_suffix(.code.as_deref()))]
    Host {
        /// HTTP status.
        status: u16,
        /// The host's stable error code, when it sent one.
        code: Option<String>,
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
}

fn code_suffix(code: Option<&str>) -> String {
    code.map(|c| format!(", code {c}")).unwrap_or_default()
}

impl SessionError {
    /// A host refusal with a code.
    pub fn host(status: u16, code: impl Into<String>, message: impl Into<String>) -> Self {
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
    pub fn code(&self) -> Option<&str> {
        match self {
            SessionError::Host { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    /// The host refused a command as illegal (HTTP 422).
    pub fn is_illegal_action(&self) -> bool {
        self.status() == Some(422)
    }

    /// The seat's controller lease lapsed (HTTP 409 `lease_expired`): renew
    /// and resend the same submission (lease spec rule 8; handles do this).
    pub fn is_lease_expired(&self) -> bool {
        self.code() == Some("lease_expired")
    }
}

/// Why a driver could not decide.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DriverError {
    /// The observation lists no legal action, and this driver only picks
    /// from the list.
    #[error("the observation lists no legal action to choose from")]
    NoLegalActions,
    /// A scripted driver ran out of commands.
    #[error("the script has no command left (it held {commands})")]
    Exhausted {
        /// Commands the script held.
        commands: usize,
    },
    /// Reading the driver's input failed (terminal closed, file unreadable).
    #[error("driver input failed: {0}")]
    Input(String),
    /// A model provider call failed (HTTP error, unreadable answer).
    #[error("the model provider failed: {0}")]
    Provider(String),
    /// The model kept answering with no legal action.
    #[error("no legal action after {attempts} attempts; last problem: {last_problem}")]
    GaveUp {
        /// Requests made for this decision.
        attempts: u32,
        /// Why the last answer was refused.
        last_problem: String,
    },
    /// The driver is misconfigured (bad file, missing API key, ...).
    #[error("driver configuration: {0}")]
    Config(String),
}

/// Why [`crate::run_session`] stopped before the session's game ended.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RunError {
    /// A handle call failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The driver could not decide (decision number `step`, from 0).
    #[error("driver {driver} failed at decision {step}: {error}")]
    Driver {
        /// The driver's id.
        driver: String,
        /// The decision number.
        step: u64,
        /// What failed.
        error: DriverError,
    },
    /// A presentation failed (paced: at once; unpaced: surfaced at the next
    /// loop turn or at the end).
    #[error("presentation failed: {0}")]
    Presentation(String),
    /// The cancellation token fired.
    #[error("the run was cancelled")]
    Cancelled,
    /// The run policy is invalid (e.g. `max_pending_presentations == 0`).
    #[error("invalid run policy: {0}")]
    InvalidPolicy(String),
    /// The handle must be active or terminal to run.
    #[error("run_session needs an active or terminal handle; this one is {}", .0.as_str())]
    InvalidState(HandleState),
    /// [`crate::RunOptions::max_decisions`] was reached before the game ended.
    #[error("the run reached its limit of {0} decisions before the game ended")]
    DecisionLimit(u64),
}
