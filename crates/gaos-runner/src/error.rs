//! The errors of drivers ([`DriverError`]) and [`crate::run_session`]
//! ([`RunError`]). Handle errors ([`SessionError`]) are the session
//! contract's (`gaos-session`).

use thiserror::Error;

pub use gaos_session::SessionError;

use gaos_session::HandleState;

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
    /// An agent process gave no usable answer: unreadable, late, or it
    /// exited (the `process` driver).
    #[error("the agent process: {0}")]
    Process(String),
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
    /// The host stayed unreachable through every re-attach attempt of
    /// [`crate::RunOptions::reconnect`].
    #[error("the host stayed unreachable after {attempts} re-attach attempts: {error}")]
    Unreachable {
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        error: SessionError,
    },
    /// [`crate::RunOptions::max_decisions`] was reached before the game ended.
    #[error("the run reached its limit of {0} decisions before the game ended")]
    DecisionLimit(u64),
}

/// Why a session factory (a benchmark episode's, an arena match's) could not
/// create or attach its sessions.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct FactoryError(pub String);

impl From<SessionError> for FactoryError {
    fn from(error: SessionError) -> Self {
        FactoryError(error.to_string())
    }
}

impl From<DriverError> for FactoryError {
    fn from(error: DriverError) -> Self {
        FactoryError(error.to_string())
    }
}

impl From<String> for FactoryError {
    fn from(message: String) -> Self {
        FactoryError(message)
    }
}
