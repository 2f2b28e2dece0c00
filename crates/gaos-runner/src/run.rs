//! [`run_session`]: the one session runner of RFC-018 §8 (lifecycle spec §4).
//!
//! It drives one seat of one session through a [`SessionHandle`] with an
//! [`AgentDriver`] until the game ends, then (by policy) finalizes. Pacing
//! decides only whether presentation blocks gameplay; it never changes the
//! commands, their order, the transcript or the outcome.

use std::sync::Arc;
use std::time::Duration;

use gaos_json::Value;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::clock::{Clock, MonotonicClock};
use crate::control::{ControlChange, Controller, RunInput, RunInputs};
use crate::driver::{AgentDriver, Decision, DriverContext, InterruptOutcome, InterruptRequest};
use crate::error::{RunError, SessionError};
use crate::reconnect::{Reattached, ReconnectPolicy, Reconnecting};
use gaos_session::AttachReceipt;
use gaos_session::{
    ActOptions, BoxFuture, EpisodeIdentity, FinalizeRequest, HandleState, Observation, SessionHandle, SessionResult,
};

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

/// Presentations of one run: awaited (paced) or in the background (unpaced).
struct Presentations {
    presenter: Option<Arc<dyn Presenter>>,
    pacing: Pacing,
    max_pending: usize,
    cancel: CancellationToken,
    background: JoinSet<Result<(), String>>,
}

fn joined(result: Result<Result<(), String>, tokio::task::JoinError>) -> Result<(), RunError> {
    match result {
        Ok(Ok(())) => Ok(()),
        Ok(Err(message)) => Err(RunError::Presentation(message)),
        Err(e) if e.is_cancelled() => Ok(()),
        Err(e) => Err(RunError::Presentation(format!("the presentation task failed: {e}"))),
    }
}

impl Presentations {
    /// Rethrow a background failure that already happened.
    fn surface(&mut self) -> Result<(), RunError> {
        while let Some(result) = self.background.try_join_next() {
            joined(result)?;
        }
        Ok(())
    }

    async fn present(&mut self, observation: &Observation) -> Result<(), RunError> {
        let Some(presenter) = &self.presenter else { return Ok(()) };
        match self.pacing {
            Pacing::Paced => {
                let cancel = self.cancel.clone();
                tokio::select! {
                    result = presenter.present(observation, &cancel) => result.map_err(RunError::Presentation),
                    () = cancel.cancelled() => Err(RunError::Cancelled),
                }
            }
            Pacing::Unpaced => {
                while self.background.len() >= self.max_pending {
                    let next = tokio::select! {
                        next = self.background.join_next() => next,
                        () = self.cancel.cancelled() => return Err(RunError::Cancelled),
                    };
                    if let Some(result) = next {
                        joined(result)?;
                    }
                }
                let presenter = Arc::clone(presenter);
                let observation = observation.clone();
                let cancel = self.cancel.clone();
                self.background.spawn(async move { presenter.present(&observation, &cancel).await });
                Ok(())
            }
        }
    }

    /// Await every background presentation (surfacing the first failure).
    async fn finish(&mut self) -> Result<(), RunError> {
        while let Some(result) = self.background.join_next().await {
            joined(result)?;
        }
        Ok(())
    }
}

async fn cancellable<T>(
    cancel: &CancellationToken,
    future: impl Future<Output = Result<T, SessionError>>,
) -> Result<T, RunError> {
    tokio::select! {
        result = future => result.map_err(RunError::Session),
        () = cancel.cancelled() => Err(RunError::Cancelled),
    }
}

/// The seat's deciders: the run's agent and, after a takeover, a person.
struct Seat<'d> {
    agent: &'d mut dyn AgentDriver,
    person: Option<Box<dyn AgentDriver>>,
    /// Guidance for the next decision.
    guidance: Vec<String>,
}

impl Seat<'_> {
    fn active(&mut self) -> &mut dyn AgentDriver {
        match self.person.as_mut() {
            Some(person) => person.as_mut(),
            None => &mut *self.agent,
        }
    }

    /// Apply one input; `in_flight` when it stopped a decision.
    fn apply(&mut self, input: RunInput, in_flight: bool, step: u64, events: &mut Option<&mut dyn RunEvents>) {
        match input {
            RunInput::Guidance(text) => self.guidance.push(text),
            RunInput::Interrupt(request) => {
                let outcome = self.active().interrupt(&request, in_flight);
                if let Some(events) = events.as_deref_mut() {
                    events.on_interrupted(&outcome);
                }
            }
            RunInput::TakeOver(person) => {
                // Only the agent is interrupted: a person replaced by
                // another person just stops deciding.
                let interrupt =
                    self.person.is_none().then(|| self.agent.interrupt(&InterruptRequest::default(), in_flight));
                let controller = Controller::Person { driver: person.id().to_owned() };
                self.person = Some(person);
                if let Some(events) = events.as_deref_mut() {
                    events.on_control_change(&ControlChange { step, controller, interrupt });
                }
            }
            RunInput::HandBack => {
                if self.person.take().is_some()
                    && let Some(events) = events.as_deref_mut()
                {
                    let controller = Controller::Agent { driver: self.agent.id().to_owned() };
                    events.on_control_change(&ControlChange { step, controller, interrupt: None });
                }
            }
        }
    }
}

/// How a decision in flight ended.
enum Decided {
    Done(Result<Decision, crate::error::DriverError>),
    Cancelled,
    /// An input stopped it (an interrupt or a change of hands).
    Stopped(RunInput),
}

/// Observe; after a transport loss, re-attach ([`reattach`]).
async fn observe(
    handle: &dyn SessionHandle,
    cancel: &CancellationToken,
    reconnect: &ReconnectPolicy,
    events: &mut Option<&mut dyn RunEvents>,
) -> Result<Observation, RunError> {
    match cancellable(cancel, handle.observe()).await {
        Err(RunError::Session(error)) if error.is_transient() => {
            reattach(handle, cancel, reconnect, events, error, None).await
        }
        other => other,
    }
}

/// After `error` (a transport loss), observe the seat again with bounded
/// exponential backoff until the host answers: the answer is the durable
/// head the run goes on from. `resending` names a submission whose answer
/// was lost (the caller resends it with the same id).
async fn reattach(
    handle: &dyn SessionHandle,
    cancel: &CancellationToken,
    reconnect: &ReconnectPolicy,
    events: &mut Option<&mut dyn RunEvents>,
    mut error: SessionError,
    resending: Option<&str>,
) -> Result<Observation, RunError> {
    if reconnect.max_attempts == 0 {
        // Reconnecting is off: the loss is the run's error as it was.
        return Err(RunError::Session(error));
    }
    for attempt in 1..=reconnect.max_attempts {
        let delay = reconnect.delay(attempt);
        if let Some(events) = events.as_deref_mut() {
            events.on_reconnecting(&Reconnecting { attempt, delay, error: error.clone() });
        }
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = cancel.cancelled() => return Err(RunError::Cancelled),
        }
        match cancellable(cancel, handle.observe()).await {
            Ok(head) => {
                if let Some(events) = events.as_deref_mut() {
                    let resending = resending.map(str::to_owned);
                    events.on_reattached(&Reattached { attempts: attempt, revision: head.revision(), resending });
                }
                return Ok(head);
            }
            Err(RunError::Session(next)) if next.is_transient() => error = next,
            Err(other) => return Err(other),
        }
    }
    Err(RunError::Unreachable { attempts: reconnect.max_attempts, error })
}

/// True when the seat has nothing to decide now: a pending window that
/// does not await it, or a resolved one whose view says another seat's turn
/// ([`Observation::seat_in_window`]). [P] The reference busy-polls only the
/// first case; gaos-host answers a seat outside a sequential window with a
/// resolved envelope, so the second waits instead of asking the driver.
fn must_wait(observation: &Observation, seat: &str) -> bool {
    if observation.is_pending() {
        return !observation.awaits(seat);
    }
    !observation.seat_in_window(seat)
}

/// Run one seat of a session to the end of its game (lifecycle spec §4).
///
/// 1. Under fresh-per-episode, `driver.reset()`. If the handle carries an
///    attach receipt, `on_attached`. Then observe.
/// 2. Loop: surface background presentation failures and cancellation;
///    report a new observation (`on_observation`); present it (paced: await;
///    unpaced: background, bounded by `max_pending_presentations`); on an
///    episode change reset the driver under fresh-per-episode (never for
///    the first episode) and call `on_episode_change`; stop when the
///    observation is done ([`Observation::is_done`]; the driver's
///    [`AgentDriver::end`] is told the outcome first); when the seat has
///    nothing to decide, wait for a change ([`SessionHandle::wait_for_change`],
///    no busy polling) and observe again; otherwise ask the driver, call
///    `on_decision`, and `act` with the decision's action unchanged (under
///    the id `<tag>:<default id>` when the decision carries a
///    [`Decision::submission_tag`]).
/// 3. Await the presentations. `Caller` returns `Terminal`; `Automatic`
///    finalizes with the default request, calls `on_finalized` and returns
///    `Finalized` with the result.
///
/// Beyond the reference: a transport loss on any handle call re-attaches
/// ([`RunOptions::reconnect`]) and resends an interrupted submission under
/// its own id; inputs ([`RunOptions::inputs`]) are applied before each
/// decision, and an interrupt or takeover stops the decision in flight.
///
/// The handle must be active or terminal. The runner never checks legality.
pub async fn run_session(
    handle: &dyn SessionHandle,
    driver: &mut dyn AgentDriver,
    options: RunOptions<'_>,
) -> Result<RunOutcome, RunError> {
    let RunOptions {
        policy,
        mut events,
        presenter,
        cancel,
        max_decisions,
        reconnect,
        mut inputs,
        system_prompt,
        clock,
    } = options;
    policy.validate()?;
    match handle.state() {
        HandleState::Active | HandleState::Terminal => {}
        state => return Err(RunError::InvalidState(state)),
    }
    let mut presentations = Presentations {
        presenter,
        pacing: policy.pacing,
        max_pending: policy.max_pending_presentations,
        cancel: cancel.clone(),
        background: JoinSet::new(),
    };
    let fresh = policy.conversation == Conversation::FreshPerEpisode;
    let seat = handle.seat().to_owned();

    if fresh {
        driver.reset();
    }
    if let (Some(receipt), Some(events)) = (handle.receipt(), events.as_deref_mut()) {
        events.on_attached(&receipt);
    }
    if cancel.is_cancelled() {
        return Err(RunError::Cancelled);
    }
    let mut stopwatch = clock.stopwatch();
    let mut observation = observe(handle, &cancel, &reconnect, &mut events).await?;
    let mut observations: Vec<Observation> = Vec::new();
    let mut decisions: Vec<Decision> = Vec::new();
    let mut episode: Option<EpisodeIdentity> = None;
    let mut waits: u32 = 0;
    let mut person_decisions: Vec<u64> = Vec::new();
    let mut deciders = Seat { agent: driver, person: None, guidance: Vec::new() };

    loop {
        presentations.surface()?;
        if cancel.is_cancelled() {
            return Err(RunError::Cancelled);
        }
        let is_new = observations.last() != Some(&observation);
        if is_new {
            waits = 0;
            if let Some(events) = events.as_deref_mut() {
                events.on_observation(&observation);
            }
            observations.push(observation.clone());
            presentations.present(&observation).await?;
            if let Some(current) = observation.episode() {
                let changed = episode.as_ref().is_none_or(|previous| current.differs_from(previous));
                if changed {
                    if fresh && episode.is_some() {
                        deciders.agent.reset();
                    }
                    if let Some(events) = events.as_deref_mut() {
                        events.on_episode_change(&current);
                    }
                    episode = Some(current);
                }
            }
        }
        if observation.is_done() {
            let outcome = observation.tick().get("outcome").cloned().unwrap_or(Value::Null);
            deciders.agent.end(&outcome).await;
            break;
        }
        if must_wait(&observation, &seat) {
            cancellable(&cancel, handle.wait_for_change(observation.revision(), waits)).await?;
            waits = waits.saturating_add(1);
            observation = observe(handle, &cancel, &reconnect, &mut events).await?;
            continue;
        }
        let step = decisions.len() as u64;
        if max_decisions.is_some_and(|limit| step >= limit) {
            return Err(RunError::DecisionLimit(step));
        }
        while let Some(input) = inputs.as_mut().and_then(RunInputs::ready) {
            deciders.apply(input, false, step, &mut events);
        }
        let by_person = deciders.person.is_some();
        let mut later_guidance: Vec<String> = Vec::new();
        let decided = {
            let guidance = std::mem::take(&mut deciders.guidance);
            let active = deciders.active();
            let driver_id = active.id().to_owned();
            let context = DriverContext {
                observation: observation.tick(),
                legal_actions: observation.legal_actions(),
                step,
                session_id: handle.session_id(),
                seat: &seat,
                system_actions: observation.system_actions(),
                action_definitions: observation.action_definitions(),
                system_prompt: system_prompt.as_deref(),
                guidance: &guidance,
            };
            let mut act = active.act(context);
            let decided = loop {
                let next_input = async {
                    match inputs.as_mut() {
                        Some(inputs) => inputs.next().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    decided = &mut act => break Decided::Done(decided),
                    () = cancel.cancelled() => break Decided::Cancelled,
                    input = next_input => match input {
                        // Guidance does not stop a decision; it waits for the next.
                        RunInput::Guidance(text) => later_guidance.push(text),
                        other => break Decided::Stopped(other),
                    },
                }
            };
            drop(act);
            // Guidance of a decision that did not finish stays for the next try.
            if !matches!(decided, Decided::Done(Ok(_))) {
                deciders.guidance = guidance;
            }
            (decided, driver_id)
        };
        deciders.guidance.append(&mut later_guidance);
        let decision = match decided {
            (Decided::Cancelled, _) => return Err(RunError::Cancelled),
            (Decided::Stopped(input), _) => {
                deciders.apply(input, true, step, &mut events);
                continue;
            }
            (Decided::Done(Err(error)), driver) => return Err(RunError::Driver { driver, step, error }),
            (Decided::Done(Ok(decision)), _) => decision,
        };
        if let Some(events) = events.as_deref_mut() {
            events.on_decision(&decision);
        }
        let action = decision.action.clone();
        // Named explicitly so that a resend after a lost answer carries the
        // same id (the handle resends the identical submission).
        let submission_id = match &decision.submission_tag {
            Some(tag) => format!("{tag}:{}", handle.next_submission_id()),
            None => handle.next_submission_id(),
        };
        let send = || handle.act_with(action.clone(), ActOptions::new().submission_id(submission_id.clone()));
        let mut answer = send().await;
        let mut head: Option<Observation> = None;
        let mut resends = 0;
        while let Err(error) = &answer
            && error.is_transient()
            && resends < reconnect.max_attempts
        {
            let error = error.clone();
            head = Some(reattach(handle, &cancel, &reconnect, &mut events, error, Some(&submission_id)).await?);
            answer = send().await;
            resends += 1;
        }
        match answer {
            Ok(next) => {
                if by_person {
                    person_decisions.push(decisions.len() as u64);
                }
                decisions.push(decision);
                // A resent submission the host had accepted before the loss
                // is answered with its first answer, which may be older than
                // the head seen on re-attach.
                observation = match head {
                    Some(head) if head.revision() > next.revision() => head,
                    _ => next,
                };
            }
            // Refused as illegal: the session did not move, so the driver
            // may decide again for the same observation.
            Err(error) if error.is_illegal_action() && deciders.active().retry_after_illegal(&action, &error) => {}
            Err(error) => return Err(error.into()),
        }
    }

    presentations.finish().await?;
    match policy.finalize {
        FinalizeMode::Caller => Ok(RunOutcome {
            status: RunStatus::Terminal,
            observations,
            decisions,
            result: None,
            person_decisions,
            wall_clock: stopwatch.elapsed(),
        }),
        FinalizeMode::Automatic => {
            // Finalize is idempotent for one request id: resend it after a loss.
            let mut result = handle.finalize(FinalizeRequest::default()).await;
            let mut resends = 0;
            while let Err(error) = &result
                && error.is_transient()
                && resends < reconnect.max_attempts
            {
                let error = error.clone();
                reattach(handle, &cancel, &reconnect, &mut events, error, None).await?;
                result = handle.finalize(FinalizeRequest::default()).await;
                resends += 1;
            }
            let result = result?;
            let wall_clock = stopwatch.elapsed();
            if let Some(events) = events {
                events.on_finalized(&result);
            }
            Ok(RunOutcome {
                status: RunStatus::Finalized,
                observations,
                decisions,
                result: Some(result),
                person_decisions,
                wall_clock,
            })
        }
    }
}
