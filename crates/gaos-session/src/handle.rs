//! The one live-session handle of RFC-018 (lifecycle spec §4).
//!
//! [`SessionHandle`] is the object-safe contract every kind of play uses:
//! normal, guided, autonomous, watched and headless benchmark play all go
//! through `observe ↔ act → finalize → close`. [`LifecycleHandle`] implements
//! its state machine once, over a [`SessionTransport`] (the wire operations
//! of one host: in-process in `gaos-host`, HTTP in `gaos-client`), so every
//! handle has the same states, errors, submission ids and finalize cache.
//!
//! States: `active → terminal → finalized`, and any state `→ closed`. A handle
//! turns terminal when an envelope's `gaos.session.finalization` extension
//! says `terminal` (or `finalized`); finalized after its own `finalize`.
//!
//! | call | active | terminal | finalized | closed |
//! |---|---|---|---|---|
//! | `observe` | yes | yes | `InvalidState` | `Closed` |
//! | `act` | yes | `InvalidState` | `InvalidState` | `Closed` |
//! | `finalize` | yes | yes | cached result (exact repeat) | `Closed` |
//! | `close` | yes | yes | yes | no-op |

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use gaos_json::{Value, canonical_json};
use gaos_kernel::protocol::{PROTOCOL_ID, PROTOCOL_VERSION};
use gaos_kernel::{CommandSubmission, SessionBinding};

use crate::signing::{ChainSigner, SeatSigningKey, client_time_now};

use crate::adopt::{adopt_existing, check_receipt};
use crate::answers::SessionResult;
use crate::error::SessionError;
use crate::observation::Observation;
use crate::options::{ActOptions, ObserveOptions};
use crate::policy::SessionPolicy;
use crate::receipts::AttachReceipt;
use crate::requests::{AttachRequest, FinalizeRequest, SubmissionCounter};
use crate::state::HandleState;

/// A boxed, `Send` future: what the object-safe traits of this crate return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// First pause of the default wait for a change (doubles per wait).
pub const WAIT_BACKOFF_START: Duration = Duration::from_millis(5);
/// Longest pause of the default wait for a change.
pub const WAIT_BACKOFF_MAX: Duration = Duration::from_millis(250);

/// The pause before looking again, after `attempt` consecutive waits that
/// saw no change: 5 ms doubling to at most 250 ms.
pub fn wait_backoff(attempt: u32) -> Duration {
    WAIT_BACKOFF_START.saturating_mul(1u32 << attempt.min(16)).min(WAIT_BACKOFF_MAX)
}

/// The live-session handle every kind of play uses (RFC-018 §5.2).
///
/// Object-safe: `Box<dyn SessionHandle>` and `&dyn SessionHandle` work, and
/// every future is `Send`. All methods take `&self` (handles are internally
/// synchronized), so one task may run a session while another closes it.
pub trait SessionHandle: Send + Sync {
    /// The session.
    fn session_id(&self) -> &str;

    /// The seat this handle acts for (the binding's `participantId`).
    fn seat(&self) -> &str;

    /// The policy the handle was created or attached under.
    fn policy(&self) -> &SessionPolicy;

    /// The handle's lifecycle state.
    fn state(&self) -> HandleState;

    /// The latest cursor this handle knows for its seat (what the next `act`
    /// submits against). Persist it to resume after a restart.
    fn binding(&self) -> SessionBinding;

    /// The attach receipt this handle was attached with, if the host issued one.
    fn receipt(&self) -> Option<AttachReceipt>;

    /// The latest authoritative observation of the seat. Consumes an adopted
    /// initial tick without a request; otherwise asks the host. Fails once
    /// the handle is closed or finalized.
    fn observe(&self) -> BoxFuture<'_, Result<Observation, SessionError>> {
        self.observe_with(ObserveOptions::default())
    }

    /// [`SessionHandle::observe`] with a timeout and a cancellation token.
    fn observe_with(&self, options: ObserveOptions) -> BoxFuture<'_, Result<Observation, SessionError>>;

    /// Submit one command for the seat at the handle's cursor, with the
    /// reference default submission id `"<seat>:<tickId>:<n>"`. Only while
    /// active; drops an unconsumed initial tick.
    fn act(&self, command: Value) -> BoxFuture<'_, Result<Observation, SessionError>> {
        self.act_with(command, ActOptions::default())
    }

    /// [`SessionHandle::act`] with an explicit submission id, a timeout and
    /// a cancellation token ([`ActOptions`]). An explicit id equal to
    /// [`SessionHandle::next_submission_id`] uses up that default id; an id
    /// this handle sent without seeing an answer (transport loss, timeout,
    /// cancellation) resends that identical submission.
    fn act_with(&self, command: Value, options: ActOptions) -> BoxFuture<'_, Result<Observation, SessionError>>;

    /// The default submission id the next `act` would send (nothing is used
    /// up). A runner that may have to resend after a lost answer names it
    /// explicitly, so the resend carries the same id.
    fn next_submission_id(&self) -> String;

    /// Finalize the session (any state but closed). The first result is
    /// cached: an exact repeat returns it without a request, a different
    /// request fails with [`SessionError::FinalizeConflict`].
    fn finalize(&self, request: FinalizeRequest) -> BoxFuture<'_, Result<SessionResult, SessionError>>;

    /// Start the next episode where the session's policy allows one (a run
    /// that advances on reset, once its live level ended): the envelope of
    /// the level it started. A terminal handle turns active again. `seed` is
    /// passed through for the host to judge (a host that fixes its seeds
    /// refuses it). The default offers no reset.
    fn reset(&self, seed: Option<u32>) -> BoxFuture<'_, Result<Observation, SessionError>> {
        let _ = seed;
        Box::pin(async move {
            Err(SessionError::Unsupported {
                operation: "reset",
                why: "this handle plays one episode; create another session to play again".into(),
            })
        })
    }

    /// Release local resources. Idempotent; never touches the authoritative
    /// session (no delete, finalize or abandon).
    fn close(&self);

    /// Wait until the session may have moved past `after_revision`, or a
    /// bounded time passed (spurious returns are fine: the caller observes
    /// again). `attempt` counts consecutive waits that saw no change. The
    /// default sleeps [`wait_backoff`]`(attempt)`; a handle with a change
    /// feed (the in-process one) returns as soon as something happens.
    fn wait_for_change(&self, after_revision: u64, attempt: u32) -> BoxFuture<'_, Result<(), SessionError>> {
        let _ = after_revision;
        Box::pin(async move {
            if self.state() == HandleState::Closed {
                return Err(SessionError::Closed { session_id: self.session_id().to_owned() });
            }
            tokio::time::sleep(wait_backoff(attempt)).await;
            Ok(())
        })
    }
}

/// Implement [`SessionHandle`] for a wrapper whose field `inner` is a
/// [`LifecycleHandle`]: every method forwards to it. The remote and the
/// in-process handles are such wrappers (their own constructors, the same
/// lifecycle).
#[macro_export]
macro_rules! forward_session_handle {
    ($wrapper:ty) => {
        impl $crate::SessionHandle for $wrapper {
            fn session_id(&self) -> &str {
                self.inner.session_id()
            }
            fn seat(&self) -> &str {
                self.inner.seat()
            }
            fn policy(&self) -> &$crate::SessionPolicy {
                self.inner.policy()
            }
            fn state(&self) -> $crate::HandleState {
                self.inner.state()
            }
            fn binding(&self) -> $crate::SessionBinding {
                self.inner.binding()
            }
            fn receipt(&self) -> ::std::option::Option<$crate::AttachReceipt> {
                self.inner.receipt()
            }
            fn observe_with(
                &self,
                options: $crate::ObserveOptions,
            ) -> $crate::BoxFuture<'_, ::std::result::Result<$crate::Observation, $crate::SessionError>> {
                self.inner.observe_with(options)
            }
            fn act_with(
                &self,
                command: $crate::__json::Value,
                options: $crate::ActOptions,
            ) -> $crate::BoxFuture<'_, ::std::result::Result<$crate::Observation, $crate::SessionError>> {
                self.inner.act_with(command, options)
            }
            fn next_submission_id(&self) -> ::std::string::String {
                self.inner.next_submission_id()
            }
            fn finalize(
                &self,
                request: $crate::FinalizeRequest,
            ) -> $crate::BoxFuture<'_, ::std::result::Result<$crate::SessionResult, $crate::SessionError>> {
                self.inner.finalize(request)
            }
            fn reset(
                &self,
                seed: ::std::option::Option<u32>,
            ) -> $crate::BoxFuture<'_, ::std::result::Result<$crate::Observation, $crate::SessionError>> {
                self.inner.reset(seed)
            }
            fn close(&self) {
                self.inner.close()
            }
            fn wait_for_change(
                &self,
                after_revision: u64,
                attempt: u32,
            ) -> $crate::BoxFuture<'_, ::std::result::Result<(), $crate::SessionError>> {
                self.inner.wait_for_change(after_revision, attempt)
            }
        }
    };
}

/// The wire operations of one host for one seat's credentials. Implement it
/// to give a new kind of host the full [`SessionHandle`] contract through
/// [`LifecycleHandle`]; the state machine, cursors, submission ids and the
/// finalize cache are not the transport's business.
pub trait SessionTransport: Send + Sync {
    /// `GET /v1/sessions/{id}/tick`: the seat's current envelope.
    fn observe<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Observation, SessionError>>;

    /// `POST /v1/sessions/{id}/actions` with this exact submission. A
    /// transport that holds a controller lease renews it on `lease_expired`
    /// and resends the identical submission once (lease spec rule 8).
    fn submit<'a>(&'a self, submission: &'a CommandSubmission) -> BoxFuture<'a, Result<Observation, SessionError>>;

    /// `POST /v1/sessions/{id}/finalize` with this body; the answer as JSON.
    fn finalize<'a>(&'a self, session_id: &'a str, request: &'a Value) -> BoxFuture<'a, Result<Value, SessionError>>;

    /// `POST /v1/sessions/{id}/attach` with this request: the host's answer
    /// as JSON ([`LifecycleHandle::attach`] checks it). The default offers
    /// none.
    fn attach<'a>(
        &'a self,
        session_id: &'a str,
        request: &'a AttachRequest,
    ) -> BoxFuture<'a, Result<Value, SessionError>> {
        let _ = (session_id, request);
        Box::pin(async move {
            Err(SessionError::Unsupported { operation: "attach", why: "this transport has no attach route".into() })
        })
    }

    /// Present `token` as the seat's controller lease from now on (`None`:
    /// present none): the lease a create or attach answer granted. The
    /// default holds no lease.
    fn present_lease(&self, token: Option<String>) -> Result<(), SessionError> {
        let _ = token;
        Ok(())
    }

    /// `POST /v1/sessions/{id}/reset` (`{"seed"?, "revision"}`, `revision`
    /// the one the seat saw the level end at): the seat's envelope of the
    /// level the reset started. The default offers none.
    fn reset<'a>(
        &'a self,
        session_id: &'a str,
        seed: Option<u32>,
        revision: u64,
    ) -> BoxFuture<'a, Result<Observation, SessionError>> {
        let _ = (session_id, seed, revision);
        Box::pin(async move {
            Err(SessionError::Unsupported { operation: "reset", why: "this transport has no reset route".into() })
        })
    }

    /// See [`SessionHandle::wait_for_change`]; the default sleeps
    /// [`wait_backoff`]`(attempt)`.
    fn wait_for_change<'a>(
        &'a self,
        session_id: &'a str,
        after_revision: u64,
        attempt: u32,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        let _ = (session_id, after_revision);
        Box::pin(async move {
            tokio::time::sleep(wait_backoff(attempt)).await;
            Ok(())
        })
    }

    /// Release local resources (streams, connections). Called once by
    /// [`SessionHandle::close`].
    fn close(&self) {}
}

struct Core {
    state: HandleState,
    binding: SessionBinding,
    initial: Option<Observation>,
    /// Canonical request and result of this handle's accepted finalize.
    finalized: Option<(String, SessionResult)>,
    /// Default submission ids.
    counter: SubmissionCounter,
    /// The last submission sent without an answer (transport loss,
    /// timeout, cancellation): an `act_with` naming its id resends it
    /// byte for byte, which the host answers idempotently.
    unanswered: Option<CommandSubmission>,
}

/// The [`SessionHandle`] state machine over a [`SessionTransport`]. The
/// in-process handle (`gaos-host`) and the remote one (`gaos-client`) are
/// this type over their transports, so they cannot drift apart.
pub struct LifecycleHandle<T> {
    transport: T,
    session_id: String,
    seat: String,
    policy: SessionPolicy,
    receipt: Option<AttachReceipt>,
    core: Mutex<Core>,
    /// RFC-010: signs every submission this handle sends.
    signer: Option<Mutex<ChainSigner>>,
}

impl<T> std::fmt::Debug for LifecycleHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LifecycleHandle")
            .field("session_id", &self.session_id)
            .field("seat", &self.seat)
            .field("state", &self.lock().state)
            .finish_non_exhaustive()
    }
}

impl<T> LifecycleHandle<T> {
    fn lock(&self) -> MutexGuard<'_, Core> {
        self.core.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn closed(&self) -> SessionError {
        SessionError::Closed { session_id: self.session_id.clone() }
    }

    /// The transport.
    pub fn transport(&self) -> &T {
        &self.transport
    }
}

impl<T: SessionTransport> LifecycleHandle<T> {
    /// A handle at the durable head a create or attach answered: `binding`
    /// is the seat's cursor there, `receipt` the attach receipt (checked
    /// against the binding), `terminal` whether that answer announced the
    /// end of the game. The first `observe` asks the host.
    pub fn new(
        transport: T,
        binding: SessionBinding,
        policy: SessionPolicy,
        receipt: Option<AttachReceipt>,
        terminal: bool,
    ) -> Result<Self, SessionError> {
        binding.validate().map_err(|e| SessionError::Protocol(format!("invalid binding: {e}")))?;
        if let Some(r) = &receipt {
            let value = r.to_value().map_err(|e| SessionError::Protocol(e.to_string()))?;
            check_receipt(&value, &binding).map_err(SessionError::Protocol)?;
        }
        let state = if terminal { HandleState::Terminal } else { HandleState::Active };
        Ok(Self::build(transport, binding, policy, receipt, None, state))
    }

    /// `createSessionHandleFromExisting`: adopt a durable head handed over
    /// by a product route (see [`adopt_existing`] for the checks). No
    /// request is made; the first `observe` returns the adopted tick.
    pub fn from_existing(transport: T, existing: &Value, policy: &SessionPolicy) -> Result<Self, SessionError> {
        let head = adopt_existing(existing, policy)?;
        let state = if head.initial.announces_terminal() { HandleState::Terminal } else { HandleState::Active };
        Ok(Self::build(transport, head.binding, policy.clone(), head.receipt, Some(head.initial), state))
    }

    fn build(
        transport: T,
        binding: SessionBinding,
        policy: SessionPolicy,
        receipt: Option<AttachReceipt>,
        initial: Option<Observation>,
        state: HandleState,
    ) -> Self {
        LifecycleHandle {
            transport,
            session_id: binding.session_id.clone(),
            seat: binding.participant_id.clone(),
            policy,
            receipt,
            signer: None,
            core: Mutex::new(Core {
                state,
                binding,
                initial,
                finalized: None,
                counter: SubmissionCounter::default(),
                unanswered: None,
            }),
        }
    }

    /// Sign every submission with `key` (RFC-010 signed play): the session
    /// must have been created with this seat's public key in `seatKeys`. The
    /// chain starts where the host's envelope says (checked against the
    /// genesis when the seat has not moved yet). `None` leaves the handle
    /// as it is (an unsigned seat).
    pub fn with_signing_key(mut self, key: impl Into<Option<SeatSigningKey>>) -> Self {
        if let Some(key) = key.into() {
            self.signer = Some(Mutex::new(ChainSigner::new(key)));
        }
        self
    }

    fn signer(&self) -> Option<MutexGuard<'_, ChainSigner>> {
        self.signer.as_ref().map(|s| s.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Sign `submission` unless it is a resend that carries its signature.
    async fn sign(&self, submission: &mut CommandSubmission) -> Result<(), SessionError> {
        if self.signer.is_none() || submission.sig.is_some() {
            return Ok(());
        }
        if !self.signer().is_some_and(|s| s.has_head()) {
            let observation = self.transport.observe(&self.session_id).await?;
            self.note(&observation)?;
            if let Some(mut signer) = self.signer() {
                signer.adopt(&self.session_id, &self.seat, observation.extensions())?;
            }
        }
        match self.signer() {
            Some(mut signer) => signer.sign(submission, client_time_now()),
            None => Ok(()),
        }
    }

    /// Take in an authoritative envelope: move the cursor forward and turn
    /// terminal when the envelope says so.
    fn note(&self, observation: &Observation) -> Result<(), SessionError> {
        if observation.session_id() != self.session_id {
            return Err(SessionError::Protocol(format!(
                "the host answered for session {:?}, not {:?}",
                observation.session_id(),
                self.session_id
            )));
        }
        let mut core = self.lock();
        let newer = observation.revision() > core.binding.revision;
        if observation.revision() >= core.binding.revision {
            core.binding = observation.binding(&self.seat);
        }
        if core.state == HandleState::Active && observation.announces_terminal() {
            core.state = HandleState::Terminal;
        } else if core.state == HandleState::Terminal && newer && !observation.announces_terminal() {
            // The session went on past the end this handle saw: a run that
            // advances on reset started its next level (another seat reset).
            core.state = HandleState::Active;
        }
        Ok(())
    }

    fn next_submission(&self, command: Value, explicit: Option<String>) -> Result<CommandSubmission, SessionError> {
        let mut core = self.lock();
        match core.state {
            HandleState::Active => {}
            HandleState::Closed => return Err(self.closed()),
            state => return Err(SessionError::InvalidState { operation: "act", state }),
        }
        if let Some(id) = &explicit {
            if id.trim().is_empty() {
                return Err(SessionError::InvalidArgument("an explicit submission id must be non-blank".into()));
            }
            if let Some(sent) = &core.unanswered
                && sent.submission_id.as_deref() == Some(id.as_str())
            {
                if sent.command.as_ref() != Some(&command) {
                    return Err(SessionError::InvalidArgument(format!(
                        "submission id {id:?} was already sent with a different command"
                    )));
                }
                return Ok(sent.clone());
            }
        }
        core.initial = None;
        let tick_id = core.binding.tick_id.clone();
        let revision = core.binding.revision;
        let submission_id = match explicit {
            Some(id) => {
                if id == core.counter.peek_id(&self.seat, &tick_id) {
                    core.counter.next_id(&self.seat, &tick_id);
                }
                id
            }
            None => core.counter.next_id(&self.seat, &tick_id),
        };
        Ok(CommandSubmission {
            protocol: PROTOCOL_ID.into(),
            protocol_version: PROTOCOL_VERSION.into(),
            session_id: self.session_id.clone(),
            submission_id: Some(submission_id),
            tick_id,
            revision: revision as f64,
            participant_id: self.seat.clone(),
            command: Some(command),
            extensions: None,
            client_time: None,
            prev_chain_hash: None,
            sig: None,
        })
    }
}

impl<T: SessionTransport> SessionHandle for LifecycleHandle<T> {
    fn session_id(&self) -> &str {
        &self.session_id
    }

    fn seat(&self) -> &str {
        &self.seat
    }

    fn policy(&self) -> &SessionPolicy {
        &self.policy
    }

    fn state(&self) -> HandleState {
        self.lock().state
    }

    fn binding(&self) -> SessionBinding {
        self.lock().binding.clone()
    }

    fn receipt(&self) -> Option<AttachReceipt> {
        self.receipt.clone()
    }

    fn observe_with(&self, options: ObserveOptions) -> BoxFuture<'_, Result<Observation, SessionError>> {
        Box::pin(async move {
            {
                let mut core = self.lock();
                match core.state {
                    HandleState::Closed => return Err(self.closed()),
                    HandleState::Finalized => {
                        return Err(SessionError::InvalidState { operation: "observe", state: HandleState::Finalized });
                    }
                    HandleState::Active | HandleState::Terminal => {}
                }
                if let Some(initial) = core.initial.take() {
                    return Ok(initial);
                }
            }
            let observation = options.bounds().run("observe", self.transport.observe(&self.session_id)).await?;
            self.note(&observation)?;
            Ok(observation)
        })
    }

    fn act_with(&self, command: Value, options: ActOptions) -> BoxFuture<'_, Result<Observation, SessionError>> {
        Box::pin(async move {
            let mut submission = self.next_submission(command, options.submission_id.clone())?;
            self.sign(&mut submission).await?;
            let answer = options.bounds().run("act", self.transport.submit(&submission)).await;
            if answer.is_ok()
                && let Some(mut signer) = self.signer()
            {
                signer.accepted(submission.submission_id.as_deref());
            }
            {
                // Keep a submission that may have landed for an exact resend;
                // any answer from the host settles it.
                let mut core = self.lock();
                core.unanswered = match &answer {
                    Err(e)
                        if e.is_transient()
                            || matches!(e, SessionError::Timeout { .. } | SessionError::Cancelled { .. }) =>
                    {
                        Some(submission)
                    }
                    _ => None,
                };
            }
            let observation = answer?;
            self.note(&observation)?;
            Ok(observation)
        })
    }

    fn next_submission_id(&self) -> String {
        let core = self.lock();
        core.counter.peek_id(&self.seat, &core.binding.tick_id)
    }

    fn finalize(&self, request: FinalizeRequest) -> BoxFuture<'_, Result<SessionResult, SessionError>> {
        Box::pin(async move {
            if let Some(id) = &request.request_id
                && id.trim().is_empty()
            {
                return Err(SessionError::InvalidArgument("the finalize requestId must be non-blank".into()));
            }
            let body = request.to_value(&self.session_id);
            let canonical = canonical_json(&body);
            {
                let core = self.lock();
                if core.state == HandleState::Closed {
                    return Err(self.closed());
                }
                if let Some((cached_request, result)) = &core.finalized {
                    if *cached_request == canonical {
                        return Ok(result.clone());
                    }
                    return Err(SessionError::FinalizeConflict { session_id: self.session_id.clone() });
                }
            }
            let answer = self.transport.finalize(&self.session_id, &body).await?;
            let result = SessionResult::from_value(answer, &self.session_id)?;
            let mut core = self.lock();
            if core.finalized.is_none() {
                core.finalized = Some((canonical, result.clone()));
            }
            if core.state != HandleState::Closed {
                core.state = HandleState::Finalized;
            }
            Ok(result)
        })
    }

    fn reset(&self, seed: Option<u32>) -> BoxFuture<'_, Result<Observation, SessionError>> {
        Box::pin(async move {
            let revision = {
                let core = self.lock();
                match core.state {
                    HandleState::Active | HandleState::Terminal => {}
                    HandleState::Closed => return Err(self.closed()),
                    state => return Err(SessionError::InvalidState { operation: "reset", state }),
                }
                core.binding.revision
            };
            // The revision the seat saw the level end at: a resend after a
            // lost answer names it again and starts no second level.
            let observation = self.transport.reset(&self.session_id, seed, revision).await?;
            // The new level starts past the revision the old one ended at,
            // so taking it in turns a terminal handle active again.
            self.note(&observation)?;
            let mut core = self.lock();
            core.initial = None;
            core.unanswered = None;
            Ok(observation)
        })
    }

    fn close(&self) {
        let mut core = self.lock();
        if core.state != HandleState::Closed {
            core.state = HandleState::Closed;
            core.initial = None;
            drop(core);
            self.transport.close();
        }
    }

    fn wait_for_change(&self, after_revision: u64, attempt: u32) -> BoxFuture<'_, Result<(), SessionError>> {
        Box::pin(async move {
            if self.state() == HandleState::Closed {
                return Err(self.closed());
            }
            self.transport.wait_for_change(&self.session_id, after_revision, attempt).await
        })
    }
}

/// `createSessionHandleFromExisting(existing, policy)` over a transport:
/// [`LifecycleHandle::from_existing`].
pub fn create_session_handle_from_existing<T: SessionTransport>(
    transport: T,
    existing: &Value,
    policy: &SessionPolicy,
) -> Result<LifecycleHandle<T>, SessionError> {
    LifecycleHandle::from_existing(transport, existing, policy)
}
