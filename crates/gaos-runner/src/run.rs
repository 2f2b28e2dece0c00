//! [`run_session`]: the one session runner of RFC-018 §8 (lifecycle spec §4).
//!
//! It drives one seat of one session through a [`SessionHandle`](gaos_session::SessionHandle) with an
//! [`AgentDriver`](crate::AgentDriver) until the game ends, then (by policy) finalizes. Pacing
//! decides only whether presentation blocks gameplay; it never changes the
//! commands, their order, the transcript or the outcome.

use std::sync::Arc;
use std::time::Duration;

use gaos_json::Value;
use tokio_util::sync::CancellationToken;

use crate::clock::{Clock, MonotonicClock};
use crate::control::{ControlChange, RunInputs};
use crate::driver::{Decision, InterruptOutcome};
use crate::error::RunError;
use crate::reconnect::{Reattached, ReconnectPolicy, Reconnecting};
use gaos_session::AttachReceipt;
use gaos_session::{BoxFuture, EpisodeIdentity, Observation, SessionResult};

/// Default bound on unpaced presentations in flight.
pub const DEFAULT_MAX_PENDING_PRESENTATIONS: usize = 32;

/// Whether presentation blocks gameplay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Pacing {
    /// Await each presentation before the next decision (Desktop, Coach,
    /// watched arenas).
    Paced,
    /// Present in the background; gameplay never waits for it (CLI,
    /// headless benchmarks), except when the in-flight bound is reached.
    #[default]
    Unpaced,
}

/// What happens to the driver's context at episode transitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Conversation {
    /// One context for the whole run.
    #[default]
    Continuous,
    /// `driver.reset()` at the start and at every episode transition (never
    /// for the first episode); the session itself is unchanged.
    FreshPerEpisode,
}

/// Who finalizes once the game ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FinalizeMode {
    /// `run_session` finalizes with the default request and returns the result.
    #[default]
    Automatic,
    /// `run_session` stops at the terminal observation; the caller finalizes.
    Caller,
}

/// `SessionRunPolicy` plus the unpaced presentation bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunPolicy {
    /// Paced or unpaced presentation.
    pub pacing: Pacing,
    /// Continuous or fresh-per-episode driver context.
    pub conversation: Conversation,
    /// Automatic or caller finalization.
    pub finalize: FinalizeMode,
    /// Unpaced presentations in flight before the runner waits (≥ 1; default 32).
    pub max_pending_presentations: usize,
}

impl Default for RunPolicy {
    /// `{unpaced, continuous, automatic, 32}`: the CLI and benchmark default.
    fn default() -> Self {
        RunPolicy {
            pacing: Pacing::Unpaced,
            conversation: Conversation::Continuous,
            finalize: FinalizeMode::Automatic,
            max_pending_presentations: DEFAULT_MAX_PENDING_PRESENTATIONS,
        }
    }
}

impl RunPolicy {
    /// Check the policy (`max_pending_presentations ≥ 1`).
    pub fn validate(&self) -> Result<(), RunError> {
        if self.max_pending_presentations == 0 {
            return Err(RunError::InvalidPolicy("max_pending_presentations must be at least 1".into()));
        }
        Ok(())
    }
}

/// Callbacks of a run (`SessionRunEvents`). All are optional (default:
/// nothing) and synchronous; asynchronous display work belongs in a
/// [`Presenter`].
pub trait RunEvents: Send {
    /// The handle carries an attach receipt (called once, before the first observe).
    fn on_attached(&mut self, receipt: &AttachReceipt) {
        let _ = receipt;
    }

    /// A new observation (an observation equal to the previous one, seen
    /// while waiting for other seats, is not repeated).
    fn on_observation(&mut self, observation: &Observation) {
        let _ = observation;
    }

    /// The driver decided; called before the command is submitted.
    fn on_decision(&mut self, decision: &Decision) {
        let _ = decision;
    }

    /// The episode identity changed (also called for the first episode seen).
    fn on_episode_change(&mut self, episode: &EpisodeIdentity) {
        let _ = episode;
    }

    /// The runner finalized the session (automatic finalization only).
    fn on_finalized(&mut self, result: &SessionResult) {
        let _ = result;
    }

    /// The host stopped answering; the runner pauses, then tries to
    /// re-attach ([`RunOptions::reconnect`]).
    fn on_reconnecting(&mut self, reconnecting: &Reconnecting) {
        let _ = reconnecting;
    }

    /// The runner re-attached at the durable head after a transport loss
    /// and goes on with the same run.
    fn on_reattached(&mut self, reattached: &Reattached) {
        let _ = reattached;
    }

    /// A person took the seat over or handed it back ([`crate::RunControl`]).
    fn on_control_change(&mut self, change: &ControlChange) {
        let _ = change;
    }

    /// The active driver was interrupted ([`crate::RunControl::interrupt`]).
    fn on_interrupted(&mut self, outcome: &InterruptOutcome) {
        let _ = outcome;
    }
}

/// `SessionPresentation`: shows observations to people. Paced runs await
/// it; unpaced runs spawn it on the tokio runtime (so the future must be
/// `Send` and the presenter shared). A failure stops the run.
pub trait Presenter: Send + Sync {
    /// Present one observation. `cancel` fires when the run is cancelled.
    fn present<'a>(
        &'a self,
        observation: &'a Observation,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<(), String>>;
}

/// Everything [`run_session`] takes besides the handle and the driver.
pub struct RunOptions<'a> {
    /// Pacing, conversation and finalize policy.
    pub policy: RunPolicy,
    /// Run callbacks.
    pub events: Option<&'a mut dyn RunEvents>,
    /// The presentation hook.
    pub presenter: Option<Arc<dyn Presenter>>,
    /// Cancel the run (checked every loop turn; interrupts waits, driver
    /// decisions and presentations, never a submission in flight).
    pub cancel: CancellationToken,
    /// Stop with [`RunError::DecisionLimit`] instead of making more than
    /// this many decisions (e.g. a benchmark task's `maxSteps`).
    pub max_decisions: Option<u64>,
    /// How long to keep re-attaching after a transport loss.
    pub reconnect: ReconnectPolicy,
    /// Guidance, interrupts and takeovers from people ([`crate::run_control`]).
    pub inputs: Option<RunInputs>,
    /// The system prompt every decision's context carries.
    pub system_prompt: Option<String>,
    /// What [`RunOutcome::wall_clock`] is measured with (default: the
    /// monotonic clock; tests and reproducible benchmarks pass a simulated one).
    pub clock: Arc<dyn Clock>,
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        RunOptions::new(RunPolicy::default())
    }
}

impl<'a> RunOptions<'a> {
    /// Options with `policy`, no events, no presenter, a fresh token, no limit.
    pub fn new(policy: RunPolicy) -> Self {
        RunOptions {
            policy,
            events: None,
            presenter: None,
            cancel: CancellationToken::new(),
            max_decisions: None,
            reconnect: ReconnectPolicy::default(),
            inputs: None,
            system_prompt: None,
            clock: Arc::new(MonotonicClock),
        }
    }

    /// Set the callbacks.
    pub fn events(mut self, events: &'a mut dyn RunEvents) -> Self {
        self.events = Some(events);
        self
    }

    /// Set the presenter.
    pub fn presenter(mut self, presenter: Arc<dyn Presenter>) -> Self {
        self.presenter = Some(presenter);
        self
    }

    /// Use this cancellation token.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Limit the number of decisions.
    pub fn max_decisions(mut self, limit: u64) -> Self {
        self.max_decisions = Some(limit);
        self
    }

    /// Take people's inputs from `inputs`.
    pub fn inputs(mut self, inputs: RunInputs) -> Self {
        self.inputs = Some(inputs);
        self
    }

    /// Give every decision this system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Measure the run's wall-clock time with `clock`.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Re-attach after a transport loss under this policy.
    pub fn reconnect(mut self, reconnect: ReconnectPolicy) -> Self {
        self.reconnect = reconnect;
        self
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunStatus {
    /// The game ended; the caller finalizes ([`FinalizeMode::Caller`]).
    Terminal,
    /// The game ended and the runner finalized.
    Finalized,
}

/// `SessionRunResult`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Terminal or finalized.
    pub status: RunStatus,
    /// The distinct observations of the run, in order (the last is terminal).
    pub observations: Vec<Observation>,
    /// The driver's accepted decisions, in submission order (an action the
    /// host refused and the driver chose to replace is not among them).
    pub decisions: Vec<Decision>,
    /// The session result (automatic finalization only).
    pub result: Option<SessionResult>,
    /// The decisions (indexes into `decisions`) a person made after taking
    /// the seat over; empty when the agent decided all.
    pub person_decisions: Vec<u64>,
    /// From just before the first observe until the terminal observation
    /// (caller finalization) or the finalize answer (automatic), on
    /// [`RunOptions::clock`].
    pub wall_clock: Duration,
}

impl RunOutcome {
    /// The last observation (the terminal one).
    pub fn final_observation(&self) -> Option<&Observation> {
        self.observations.last()
    }

    /// The accepted commands, in order.
    pub fn commands(&self) -> Vec<Value> {
        self.decisions.iter().map(|d| d.action.clone()).collect()
    }
}

mod session;

pub use session::run_session;
