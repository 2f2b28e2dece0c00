//! [`RefereeDriver`]: one seat's entrant under the manifest's `illegalMoves`.
//!
//! A decision fails when the driver gives no usable answer (a process that
//! wrote garbage, missed its deadline, exited or crashed) or the host
//! refuses its move as illegal. The referee re-asks up to `retries` times
//! per decision; then, under `random`, it plays a random legal move for the
//! seat this once, and under `forfeit` the seat loses the match and every
//! move it has left is a random legal one, so the game and its replay
//! still reach the end. The tournament never stops for an agent.
//!
//! The moves the referee plays are submitted under tagged ids
//! ([`crate::Decision::submission_tag`]: [`RANDOM_TAG`], [`FORFEIT_TAG`]).
//! Replays keep submission ids, so substitutions and forfeits are facts a
//! verifier recomputes from the replay, not claims of the organizer.

use std::sync::{Arc, Mutex, PoisonError};

use gaos_json::Value;

use crate::arena::manifest::{AfterRetries, IllegalMoves};
use crate::driver::{AgentDriver, Decision, DriverContext, InterruptOutcome, InterruptRequest};
use crate::drivers::RandomDriver;
use crate::error::{DriverError, SessionError};
use gaos_session::BoxFuture;

/// The tag of a move played for a seat under `then: random`.
pub const RANDOM_TAG: &str = "arena-random";

/// The tag of every move played for a seat after it forfeited.
pub const FORFEIT_TAG: &str = "arena-forfeit";

/// What a seat's referee saw in one run (shared with the orchestrator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeatConduct {
    /// Failed answers and refused moves (self-reported: refused moves leave
    /// no trace in the replay).
    pub faults: u64,
}

/// Applies `illegalMoves` to one seat's entrant (see the module docs).
pub struct RefereeDriver {
    inner: Box<dyn AgentDriver>,
    rules: IllegalMoves,
    substitute: RandomDriver,
    /// The decision strikes count for, and how many it has.
    strikes: (u64, u32),
    /// The retries ran out on a refused move; the next `act` applies `then`.
    exhausted: bool,
    forfeited: bool,
    /// The last decision was the referee's own (a refusal of it is not the agent's).
    substituted: bool,
    conduct: Arc<Mutex<SeatConduct>>,
}

impl RefereeDriver {
    /// `inner` under `rules`; substitute moves are drawn from
    /// `mulberry32(substitute_seed)`.
    pub fn new(inner: Box<dyn AgentDriver>, rules: IllegalMoves, substitute_seed: u32) -> Self {
        RefereeDriver {
            inner,
            rules,
            substitute: RandomDriver::new(substitute_seed),
            strikes: (u64::MAX, 0),
            exhausted: false,
            forfeited: false,
            substituted: false,
            conduct: Arc::default(),
        }
    }

    /// A seat attached mid-match: the session already holds `own` moves of
    /// the agent and `substituted` moves of the referee, and the seat
    /// forfeited if any was tagged [`FORFEIT_TAG`]. Drivers that can skip
    /// ahead do, so the match goes on as if it had never stopped.
    pub fn resumed(mut self, own: u64, substituted: u64, forfeited: bool) -> Self {
        self.inner.resume_after(own);
        self.substitute.resume_after(substituted);
        self.forfeited = forfeited;
        self
    }

    /// What this referee saw, readable after the run.
    pub fn conduct(&self) -> Arc<Mutex<SeatConduct>> {
        Arc::clone(&self.conduct)
    }

    fn fault(&self) {
        self.conduct.lock().unwrap_or_else(PoisonError::into_inner).faults += 1;
    }

    /// A random legal move, tagged.
    async fn substitute(&mut self, context: DriverContext<'_>, tag: &str) -> Result<Decision, DriverError> {
        self.substituted = true;
        let mut decision = self.substitute.act(context).await?;
        decision.submission_tag = Some(tag.to_owned());
        Ok(decision)
    }

    /// The retries are used up: apply `then`.
    async fn give_up(&mut self, context: DriverContext<'_>) -> Result<Decision, DriverError> {
        match self.rules.then {
            AfterRetries::Random => self.substitute(context, RANDOM_TAG).await,
            AfterRetries::Forfeit => {
                self.forfeited = true;
                self.substitute(context, FORFEIT_TAG).await
            }
        }
    }

    async fn decide(&mut self, context: DriverContext<'_>) -> Result<Decision, DriverError> {
        if context.step != self.strikes.0 {
            self.strikes = (context.step, 0);
        }
        if self.forfeited {
            return self.substitute(context, FORFEIT_TAG).await;
        }
        if std::mem::take(&mut self.exhausted) {
            return self.give_up(context).await;
        }
        self.substituted = false;
        loop {
            match self.inner.act(context).await {
                // An agent cannot tag its own moves: tags are the referee's.
                Ok(decision) => return Ok(Decision { submission_tag: None, ..decision }),
                Err(_) => {
                    self.fault();
                    self.strikes.1 += 1;
                    if self.strikes.1 > self.rules.retries {
                        return self.give_up(context).await;
                    }
                }
            }
        }
    }
}

impl AgentDriver for RefereeDriver {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn label(&self) -> &str {
        self.inner.label()
    }

    fn provider(&self) -> Option<&str> {
        self.inner.provider()
    }

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn resume_after(&mut self, decisions: u64) {
        self.inner.resume_after(decisions);
    }

    /// The agent's move was refused: re-ask while retries remain and the
    /// agent is willing (a built-in driver would repeat itself, so it is
    /// not); else the next decision applies `then`. A refused move of the
    /// referee's own ends the match with the refusal (the game listed a
    /// legal action it does not accept).
    fn retry_after_illegal(&mut self, action: &Value, error: &SessionError) -> bool {
        if self.substituted {
            return false;
        }
        self.fault();
        self.strikes.1 += 1;
        if self.strikes.1 <= self.rules.retries && self.inner.retry_after_illegal(action, error) {
            return true;
        }
        self.exhausted = true;
        true
    }

    fn interrupt(&mut self, request: &InterruptRequest, in_flight: bool) -> InterruptOutcome {
        self.inner.interrupt(request, in_flight)
    }

    fn end<'a>(&'a mut self, outcome: &'a Value) -> BoxFuture<'a, ()> {
        self.inner.end(outcome)
    }

    fn act<'a>(&'a mut self, context: DriverContext<'a>) -> BoxFuture<'a, Result<Decision, DriverError>> {
        Box::pin(self.decide(context))
    }
}
