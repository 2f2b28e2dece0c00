//! [`run_session`] as a small [`Run`]: one seat's run in progress, in steps
//! that each do one thing (take the next observation, decide, submit,
//! finish), and one retry helper every handle call shares.

use std::sync::Arc;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{Conversation, FinalizeMode, Pacing, Presenter, RunEvents, RunOptions, RunOutcome, RunStatus};
use crate::clock::Stopwatch;
use crate::control::{ControlChange, Controller, RunInput, RunInputs};
use crate::driver::{AgentDriver, Decision, DriverContext, InterruptRequest};
use crate::error::{RunError, SessionError};
use crate::reconnect::{Reattached, ReconnectPolicy, Reconnecting};
use gaos_json::Value;
use gaos_session::{ActOptions, EpisodeIdentity, FinalizeRequest, HandleState, Observation, SessionHandle};

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

/// What the seat does after an observation.
enum Next {
    /// The game is over.
    Done,
    /// Nothing to decide now: wait for a change.
    Wait,
    /// Ask the driver.
    Decide,
}

/// One seat's run in progress (see [`run_session`]).
struct Run<'h, 'a, 'd> {
    handle: &'h dyn SessionHandle,
    seat: String,
    cancel: CancellationToken,
    reconnect: ReconnectPolicy,
    events: Option<&'a mut dyn RunEvents>,
    inputs: Option<RunInputs>,
    system_prompt: Option<String>,
    max_decisions: Option<u64>,
    fresh: bool,
    finalize: FinalizeMode,
    presentations: Presentations,
    deciders: Seat<'d>,
    observations: Vec<Observation>,
    decisions: Vec<Decision>,
    person_decisions: Vec<u64>,
    episode: Option<EpisodeIdentity>,
    waits: u32,
}

impl<'h, 'a, 'd> Run<'h, 'a, 'd> {
    /// Check the policy and the handle, reset a fresh-per-episode driver,
    /// report the attach receipt.
    fn start(
        handle: &'h dyn SessionHandle,
        driver: &'d mut dyn AgentDriver,
        options: RunOptions<'a>,
    ) -> Result<(Self, Box<dyn Stopwatch>), RunError> {
        let RunOptions { policy, events, presenter, cancel, max_decisions, reconnect, inputs, system_prompt, clock } =
            options;
        policy.validate()?;
        match handle.state() {
            HandleState::Active | HandleState::Terminal => {}
            state => return Err(RunError::InvalidState(state)),
        }
        let fresh = policy.conversation == Conversation::FreshPerEpisode;
        if fresh {
            driver.reset();
        }
        let mut run = Run {
            handle,
            seat: handle.seat().to_owned(),
            presentations: Presentations {
                presenter,
                pacing: policy.pacing,
                max_pending: policy.max_pending_presentations,
                cancel: cancel.clone(),
                background: JoinSet::new(),
            },
            cancel,
            reconnect,
            events,
            inputs,
            system_prompt,
            max_decisions,
            fresh,
            finalize: policy.finalize,
            deciders: Seat { agent: driver, person: None, guidance: Vec::new() },
            observations: Vec::new(),
            decisions: Vec::new(),
            person_decisions: Vec::new(),
            episode: None,
            waits: 0,
        };
        if let (Some(receipt), Some(events)) = (handle.receipt(), run.events.as_deref_mut()) {
            events.on_attached(&receipt);
        }
        if run.cancel.is_cancelled() {
            return Err(RunError::Cancelled);
        }
        Ok((run, clock.stopwatch()))
    }

    /// One handle call, and after a transport loss: re-attach (bounded
    /// backoff) and call again, at most `reconnect.max_attempts` times.
    /// Returns the answer and the head the last re-attach saw. `resending`
    /// names a submission resent under its own id.
    async fn with_resends<T, F, Fut>(
        &mut self,
        resending: Option<&str>,
        call: F,
    ) -> Result<(T, Option<Observation>), RunError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, SessionError>>,
    {
        let mut answer = call().await;
        let mut head = None;
        let mut resends = 0;
        while let Err(error) = &answer
            && error.is_transient()
            && resends < self.reconnect.max_attempts
        {
            let error = error.clone();
            head =
                Some(reattach(self.handle, &self.cancel, &self.reconnect, &mut self.events, error, resending).await?);
            answer = call().await;
            resends += 1;
        }
        Ok((answer.map_err(RunError::Session)?, head))
    }

    /// Observe (re-attaching after a transport loss).
    async fn observe(&mut self) -> Result<Observation, RunError> {
        observe(self.handle, &self.cancel, &self.reconnect, &mut self.events).await
    }

    /// Take `observation`: report and present it when it is new, note an
    /// episode change, and say what the seat does next.
    async fn next_observation(&mut self, observation: &Observation) -> Result<Next, RunError> {
        self.presentations.surface()?;
        if self.cancel.is_cancelled() {
            return Err(RunError::Cancelled);
        }
        if self.observations.last() != Some(observation) {
            self.waits = 0;
            if let Some(events) = self.events.as_deref_mut() {
                events.on_observation(observation);
            }
            self.observations.push(observation.clone());
            self.presentations.present(observation).await?;
            if let Some(current) = observation.episode() {
                let changed = self.episode.as_ref().is_none_or(|previous| current.differs_from(previous));
                if changed {
                    if self.fresh && self.episode.is_some() {
                        self.deciders.agent.reset();
                    }
                    if let Some(events) = self.events.as_deref_mut() {
                        events.on_episode_change(&current);
                    }
                    self.episode = Some(current);
                }
            }
        }
        Ok(if observation.is_done() {
            Next::Done
        } else if must_wait(observation, &self.seat) {
            Next::Wait
        } else {
            Next::Decide
        })
    }

    /// Wait for the session to move past `observation`, then observe.
    async fn wait_for_change(&mut self, observation: &Observation) -> Result<Observation, RunError> {
        cancellable(&self.cancel, self.handle.wait_for_change(observation.revision(), self.waits)).await?;
        self.waits = self.waits.saturating_add(1);
        self.observe().await
    }

    /// Ask the seat's decider (the agent, or a person after a takeover)
    /// for a decision, applying the inputs that arrived first. `None` when
    /// an input stopped the decision: decide again.
    async fn decide(&mut self, observation: &Observation) -> Result<Option<(Decision, bool)>, RunError> {
        let step = self.decisions.len() as u64;
        if self.max_decisions.is_some_and(|limit| step >= limit) {
            return Err(RunError::DecisionLimit(step));
        }
        while let Some(input) = self.inputs.as_mut().and_then(RunInputs::ready) {
            self.deciders.apply(input, false, step, &mut self.events);
        }
        let by_person = self.deciders.person.is_some();
        let mut later_guidance: Vec<String> = Vec::new();
        let guidance = std::mem::take(&mut self.deciders.guidance);
        let active = self.deciders.active();
        let driver = active.id().to_owned();
        let context = DriverContext {
            observation: observation.tick(),
            legal_actions: observation.legal_actions(),
            step,
            session_id: self.handle.session_id(),
            seat: &self.seat,
            system_actions: observation.system_actions(),
            action_definitions: observation.action_definitions(),
            system_prompt: self.system_prompt.as_deref(),
            guidance: &guidance,
        };
        let mut act = active.act(context);
        let decided = loop {
            let next_input = async {
                match self.inputs.as_mut() {
                    Some(inputs) => inputs.next().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                decided = &mut act => break Decided::Done(decided),
                () = self.cancel.cancelled() => break Decided::Cancelled,
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
            self.deciders.guidance = guidance;
        }
        self.deciders.guidance.append(&mut later_guidance);
        match decided {
            Decided::Cancelled => Err(RunError::Cancelled),
            Decided::Stopped(input) => {
                self.deciders.apply(input, true, step, &mut self.events);
                Ok(None)
            }
            Decided::Done(Err(error)) => Err(RunError::Driver { driver, step, error }),
            Decided::Done(Ok(decision)) => {
                if let Some(events) = self.events.as_deref_mut() {
                    events.on_decision(&decision);
                }
                Ok(Some((decision, by_person)))
            }
        }
    }

    /// Submit the decision's action unchanged (resent under its own id after
    /// a transport loss). The next observation, or `None` when the host
    /// refused it as illegal and the decider decides again.
    async fn submit(&mut self, decision: Decision, by_person: bool) -> Result<Option<Observation>, RunError> {
        let action = decision.action.clone();
        // Named explicitly so that a resend after a lost answer carries the
        // same id (the handle resends the identical submission).
        let submission_id = match &decision.submission_tag {
            Some(tag) => format!("{tag}:{}", self.handle.next_submission_id()),
            None => self.handle.next_submission_id(),
        };
        let handle = self.handle;
        let send = || handle.act_with(action.clone(), ActOptions::new().submission_id(submission_id.clone()));
        match self.with_resends(Some(&submission_id), send).await {
            Ok((next, head)) => {
                if by_person {
                    self.person_decisions.push(self.decisions.len() as u64);
                }
                self.decisions.push(decision);
                // A resent submission the host had accepted before the loss
                // is answered with its first answer, which may be older than
                // the head seen on re-attach.
                Ok(Some(match head {
                    Some(head) if head.revision() > next.revision() => head,
                    _ => next,
                }))
            }
            // Refused as illegal: the session did not move, so the decider
            // may decide again for the same observation.
            Err(RunError::Session(error))
                if error.is_illegal_action() && self.deciders.active().retry_after_illegal(&action, &error) =>
            {
                Ok(None)
            }
            Err(error) => Err(error),
        }
    }

    /// The game is over: await the presentations, then finalize by policy.
    async fn finish(mut self, mut stopwatch: Box<dyn Stopwatch>) -> Result<RunOutcome, RunError> {
        self.presentations.finish().await?;
        let result = match self.finalize {
            FinalizeMode::Caller => None,
            FinalizeMode::Automatic => {
                // Finalize is idempotent for one request id: resend it after a loss.
                let handle = self.handle;
                let (result, _) = self.with_resends(None, || handle.finalize(FinalizeRequest::default())).await?;
                if let Some(events) = self.events.as_deref_mut() {
                    events.on_finalized(&result);
                }
                Some(result)
            }
        };
        Ok(RunOutcome {
            status: if result.is_some() { RunStatus::Finalized } else { RunStatus::Terminal },
            observations: self.observations,
            decisions: self.decisions,
            result,
            person_decisions: self.person_decisions,
            wall_clock: stopwatch.elapsed(),
        })
    }
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
    let (mut run, stopwatch) = Run::start(handle, driver, options)?;
    let mut observation = run.observe().await?;
    loop {
        match run.next_observation(&observation).await? {
            Next::Done => {
                let outcome = observation.tick().get("outcome").cloned().unwrap_or(Value::Null);
                run.deciders.agent.end(&outcome).await;
                break;
            }
            Next::Wait => observation = run.wait_for_change(&observation).await?,
            Next::Decide => {
                let Some((decision, by_person)) = run.decide(&observation).await? else { continue };
                if let Some(next) = run.submit(decision, by_person).await? {
                    observation = next;
                }
            }
        }
    }
    run.finish(stopwatch).await
}
