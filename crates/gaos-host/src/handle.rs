//! [`InProcessSessionHandle`]: the RFC-018 [`SessionHandle`] over a [`Host`]
//! in the same process, with the same envelopes, results, states and errors
//! as the remote handle of `gaos-client` (both are
//! [`LifecycleHandle`]s; only the transport differs).
//!
//! It creates sessions as the operator and acts as the seat, with the seat
//! credentials the create answer hands out, exactly as an HTTP caller would;
//! no authorization check is skipped. Host refusals become
//! [`SessionError::Host`] with the HTTP status and code the HTTP API would
//! answer.
//!
//! ```no_run
//! # async fn run(host: gaos_host::Host) -> Result<(), gaos_runner::RunError> {
//! use gaos_host::handle::InProcessSessionHandle;
//! use gaos_runner::drivers::RandomDriver;
//! use gaos_runner::{AttachRequest, RunOptions, SessionPolicy, run_session};
//!
//! let policy = SessionPolicy::host_default();
//! let request = gaos_json::parse(r#"{"game":"conformance/counter","participantId":"a"}"#).expect("JSON");
//! let created = InProcessSessionHandle::create(&host, &request, &policy).await?;
//! let other = InProcessSessionHandle::attach(
//!     &host, created.seat_token("b").expect("seat b"), &created.session_id, &AttachRequest::new("b-1"), &policy,
//! ).await?;
//! let (mut driver_a, mut driver_b) = (RandomDriver::new(1), RandomDriver::new(2));
//! let (a, b) = tokio::join!(
//!     run_session(&created.handle, &mut driver_a, RunOptions::default()),
//!     run_session(&other, &mut driver_b, RunOptions::default()),
//! );
//! println!("{:?}", a?.result.map(|r| r.outcome));
//! # let _ = b?; Ok(())
//! # }
//! ```

use gaos_session::ErrorCode;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use gaos_json::Value;
use gaos_kernel::CommandSubmission;
use gaos_session::{AttachRequest, BoxFuture, LifecycleHandle, SessionOpener, SessionTransport};
use gaos_session::{Observation, SessionError, SessionPolicy};
use tokio::sync::broadcast;

use crate::answers::Answer;
use crate::auth::{Caller, token_hash};
use crate::error::HostError;
use crate::host::{Host, HostOptions};
use crate::lease::{LeaseOp, Presented};
use crate::requests::{ActRequest, CreateRequest, FinalizeRequest, LeaseRequest, ResetRequest};

/// Longest a change wait blocks on the host's stream before the caller
/// looks again (a safety net; changes normally wake it at once).
pub const CHANGE_WAIT_CAP: Duration = Duration::from_secs(1);

/// A host error as the runner's error (same status and code as over HTTP).
pub(crate) fn session_error(error: HostError) -> SessionError {
    SessionError::Host { status: error.status.as_u16(), code: Some(error.code), message: error.message }
}

fn parse_answer(answer: &Answer) -> Result<Value, SessionError> {
    gaos_json::parse(&answer.body).map_err(|e| SessionError::Protocol(format!("the host answered non-JSON: {e}")))
}

/// Open a host over an SQLite store in `dir` (created if needed) with a
/// fresh random operator token: for one-process play and tests. In-process
/// handles act as the operator and seats directly, so the token is never
/// needed.
pub async fn open_local_host(dir: &Path, options: HostOptions) -> Result<Host, HostError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| HostError::unavailable(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join("gaos.sqlite3");
    let (writer, reader) = crate::storage::sqlite::open(&path)
        .map_err(|e| HostError::unavailable(format!("cannot open {}: {e}", path.display())))?;
    let token = crate::auth::new_token("gaos_op_");
    // The directory's host key, so stored answers unseal after a reopen.
    let host_key = crate::host_key::HostKey::load_or_create(dir).map_err(HostError::unavailable)?;
    let options = HostOptions { host_key, ..options };
    let (host, _report) = Host::open(Box::new(writer), Arc::new(reader), &token, options).await?;
    Ok(host)
}

/// The in-process [`SessionTransport`]: a host, a seat caller and the
/// seat's controller lease token, when it holds one.
pub struct InProcessTransport {
    host: Host,
    caller: Caller,
    lease_token: Mutex<Option<String>>,
}

impl std::fmt::Debug for InProcessTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessTransport").field("caller", &self.caller).finish_non_exhaustive()
    }
}

impl InProcessTransport {
    /// A transport for the seat whose bearer token is `seat_token`.
    pub fn new(host: &Host, seat_token: &str) -> Result<Self, SessionError> {
        let caller = host.caller(Some(seat_token)).map_err(session_error)?;
        if !matches!(caller, Caller::Seat { .. }) {
            return Err(SessionError::InvalidArgument("an in-process handle needs a seat token".into()));
        }
        Ok(InProcessTransport { host: host.clone(), caller, lease_token: Mutex::new(None) })
    }

    /// Present `token` as the seat's controller lease (`Gaos-Lease`) from now on.
    pub fn set_lease_token(&self, token: Option<String>) {
        *self.lease_token.lock().unwrap_or_else(PoisonError::into_inner) = token;
    }

    /// True when the transport presents a controller lease.
    pub fn holds_lease(&self) -> bool {
        self.lease_token.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    fn presented(&self) -> Presented {
        let token = self.lease_token.lock().unwrap_or_else(PoisonError::into_inner);
        Presented { token_hash: token.as_deref().map(token_hash), epoch: None }
    }

    async fn observe_value(&self, session_id: &str) -> Result<Observation, SessionError> {
        let answer = self.host.observe(&self.caller, session_id).await.map_err(session_error)?;
        Observation::from_value(&parse_answer(&answer)?, Some(session_id))
    }
}

impl SessionTransport for InProcessTransport {
    fn observe<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(self.observe_value(session_id))
    }

    fn submit<'a>(&'a self, submission: &'a CommandSubmission) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let id = submission.session_id.as_str();
            let request = ActRequest::from_submission(submission);
            let answer = match self.host.act(&self.caller, id, self.presented(), request.clone()).await {
                Err(e) if e.code == ErrorCode::LeaseExpired && self.holds_lease() => {
                    // Lease spec rule 8: renew, then resend the identical submission once.
                    self.host
                        .lease(&self.caller, id, self.presented(), LeaseRequest::new(LeaseOp::Renew))
                        .await
                        .map_err(session_error)?;
                    self.host.act(&self.caller, id, self.presented(), request).await
                }
                other => other,
            }
            .map_err(session_error)?;
            Observation::from_value(&parse_answer(&answer)?, Some(id))
        })
    }

    fn finalize<'a>(&'a self, session_id: &'a str, request: &'a Value) -> BoxFuture<'a, Result<Value, SessionError>> {
        Box::pin(async move {
            let request = FinalizeRequest::from_value(request.clone()).map_err(session_error)?;
            let answer = self.host.finalize(&self.caller, session_id, request).await.map_err(session_error)?;
            parse_answer(&answer)
        })
    }

    fn attach<'a>(
        &'a self,
        session_id: &'a str,
        request: &'a AttachRequest,
    ) -> BoxFuture<'a, Result<Value, SessionError>> {
        Box::pin(async move {
            let request = crate::requests::AttachRequest::from_session(request).map_err(session_error)?;
            let answer = self.host.attach(&self.caller, session_id, self.presented(), request).await;
            parse_answer(&answer.map_err(session_error)?)
        })
    }

    fn present_lease(&self, token: Option<String>) -> Result<(), SessionError> {
        self.set_lease_token(token);
        Ok(())
    }

    fn reset<'a>(
        &'a self,
        session_id: &'a str,
        seed: Option<u32>,
        revision: u64,
    ) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let request = ResetRequest::new(seed, Some(revision));
            let answer =
                self.host.reset(&self.caller, session_id, self.presented(), request).await.map_err(session_error)?;
            Observation::from_value(&parse_answer(&answer)?, Some(session_id))
        })
    }

    /// Subscribe to the seat's observation stream, then look: if the
    /// session already moved past `after_revision` return at once, else
    /// wait for the next published item (or [`CHANGE_WAIT_CAP`]).
    fn wait_for_change<'a>(
        &'a self,
        session_id: &'a str,
        after_revision: u64,
        _attempt: u32,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        Box::pin(async move {
            let mut subscription = self.host.subscribe(&self.caller, session_id, None).await.map_err(session_error)?;
            // Subscribed before looking, so a change right after the look
            // still wakes the wait.
            if self.observe_value(session_id).await?.revision() != after_revision {
                return Ok(());
            }
            match tokio::time::timeout(CHANGE_WAIT_CAP, subscription.live.recv()).await {
                Ok(Ok(_)) | Ok(Err(broadcast::error::RecvError::Lagged(_))) | Err(_) => Ok(()),
                Ok(Err(broadcast::error::RecvError::Closed)) => {
                    Err(SessionError::Transport("the session's observation stream closed".into()))
                }
            }
        })
    }
}

/// The in-process [`SessionHandle`] (a [`LifecycleHandle`] over
/// [`InProcessTransport`]).
#[derive(Debug)]
pub struct InProcessSessionHandle {
    inner: LifecycleHandle<InProcessTransport>,
}

/// The operator's side of a host in this process: creates as the operator
/// ([`SessionOpener`]), seats act with the tokens the create answer hands out.
struct InProcessOpener<'a> {
    host: &'a Host,
}

impl SessionOpener for InProcessOpener<'_> {
    type Transport = InProcessTransport;

    fn create_session<'a>(&'a self, body: &'a Value) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let request = CreateRequest::from_value(body.clone()).map_err(session_error)?;
            let answer = self.host.create(&Caller::Operator, request).await.map_err(session_error)?;
            Observation::from_value(&parse_answer(&answer)?, None)
        })
    }

    fn seat_transport(&self, _session_id: &str, _seat: &str, token: &str) -> Result<InProcessTransport, SessionError> {
        InProcessTransport::new(self.host, token)
    }
}

/// What [`InProcessSessionHandle::create`] returns: the creator seat's
/// handle at the durable head, and the credentials for the other seats.
#[derive(Debug)]
pub struct InProcessCreated {
    /// The new session.
    pub session_id: String,
    /// The creator seat (see [`LifecycleHandle::create`]).
    pub creator: String,
    /// The creator seat's handle.
    pub handle: InProcessSessionHandle,
    /// Bearer token of every seat (attach the other seats with them).
    pub seat_tokens: BTreeMap<String, String>,
    /// The read-only spectator token.
    pub spectator_token: Option<String>,
}

impl InProcessCreated {
    /// The token of `seat`.
    pub fn seat_token(&self, seat: &str) -> Option<&str> {
        self.seat_tokens.get(seat).map(String::as_str)
    }
}

impl InProcessSessionHandle {
    /// Sign every submission with `key` (RFC-010; see
    /// [`LifecycleHandle::with_signing_key`]).
    pub fn with_signing_key(self, key: impl Into<Option<gaos_session::signing::SeatSigningKey>>) -> Self {
        InProcessSessionHandle { inner: self.inner.with_signing_key(key) }
    }

    /// `createSessionHandle(request, policy)`: create a session as the
    /// operator with `{...request, policy}` and return the creator seat's
    /// handle (holding the creator's controller lease) plus the seat tokens.
    /// The contract's [`LifecycleHandle::create`] over this host: the
    /// creator seat is the request's `participantId`, else its first
    /// `seats` entry, else `"player"` (lifecycle spec §4).
    pub async fn create(
        host: &Host,
        request: &Value,
        policy: &SessionPolicy,
    ) -> Result<InProcessCreated, SessionError> {
        let created = LifecycleHandle::create(&InProcessOpener { host }, request, policy).await?;
        Ok(InProcessCreated {
            session_id: created.session_id,
            creator: created.creator,
            handle: InProcessSessionHandle { inner: created.handle },
            seat_tokens: created.credentials.seats,
            spectator_token: created.credentials.spectator,
        })
    }

    /// `attachSessionHandle`: attach the seat of `seat_token` at the
    /// session's durable head (the contract's [`LifecycleHandle::attach`]).
    /// Refuses a controller that differs from the policy's before asking
    /// the host. The handle keeps the attach receipt (if the policy issues
    /// receipts) and any lease the attach granted.
    pub async fn attach(
        host: &Host,
        seat_token: &str,
        session_id: &str,
        request: &AttachRequest,
        policy: &SessionPolicy,
    ) -> Result<Self, SessionError> {
        let transport = InProcessTransport::new(host, seat_token)?;
        Ok(InProcessSessionHandle { inner: LifecycleHandle::attach(transport, session_id, request, policy).await? })
    }

    /// `createSessionHandleFromExisting(existing, policy)`: adopt a durable
    /// head a product route already holds (synchronous, no request; see
    /// [`gaos_session::adopt_existing`]), acting with `seat_token`.
    pub fn from_existing(
        host: &Host,
        seat_token: &str,
        existing: &Value,
        policy: &SessionPolicy,
    ) -> Result<Self, SessionError> {
        let transport = InProcessTransport::new(host, seat_token)?;
        Ok(InProcessSessionHandle { inner: LifecycleHandle::from_existing(transport, existing, policy)? })
    }

    /// Adopt `seat`'s current head (observe, then adopt the answer; see
    /// [`LifecycleHandle::adopt_head`]), acting with `seat_token`.
    pub async fn adopt(
        host: &Host,
        seat_token: &str,
        session_id: &str,
        seat: &str,
        policy: &SessionPolicy,
    ) -> Result<Self, SessionError> {
        let transport = InProcessTransport::new(host, seat_token)?;
        Ok(InProcessSessionHandle { inner: LifecycleHandle::adopt_head(transport, session_id, seat, policy).await? })
    }

    /// The transport (to present a lease token, for instance).
    pub fn transport(&self) -> &InProcessTransport {
        self.inner.transport()
    }
}

gaos_session::forward_session_handle!(InProcessSessionHandle);
