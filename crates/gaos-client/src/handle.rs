//! [`RemoteSessionHandle`]: the RFC-018 [`SessionHandle`](gaos_session::SessionHandle) over HTTP, with
//! the same envelopes, results, states and errors as the in-process handle
//! of `gaos-host` (both are [`LifecycleHandle`]s; only the transport
//! differs).
//!
//! The transport holds a seat's [`SessionClient`] (built with the seat's
//! bearer token) and, when the create or attach answer granted one, the
//! seat's controller lease token, sent as `Gaos-Lease`. On `lease_expired`
//! (HTTP 409) it renews (`POST /v1/sessions/{id}/lease/renew`) and resends
//! the identical submission once (lease spec rule 8), so a driver that
//! thought for longer than its lease loses nothing. On `401` with a
//! [`CredentialSource`] set ([`RemoteTransport::set_credential_source`]) it
//! asks the source for a new token once and resends; a second `401` fails
//! with a message that says the refreshed credential was refused too.
//!
//! ```no_run
//! # async fn run() -> Result<(), gaos_runner::RunError> {
//! use gaos_client::SessionClient;
//! use gaos_client::handle::RemoteSessionHandle;
//! use gaos_runner::drivers::RandomDriver;
//! use gaos_runner::{AttachRequest, RunOptions, SessionPolicy, run_session};
//!
//! let operator = SessionClient::new("http://127.0.0.1:8899", "gaos_op_...").expect("client");
//! let policy = SessionPolicy::host_default();
//! let request = gaos_json::parse(r#"{"game":"conformance/hilo","participantId":"alice"}"#).expect("JSON");
//! let created = RemoteSessionHandle::create(&operator, &request, &policy).await?;
//! let bob = RemoteSessionHandle::attach(
//!     created.seat_client("bob")?, &created.session_id, &AttachRequest::new("bob-1"), &policy,
//! ).await?;
//! let (mut alice_driver, mut bob_driver) = (RandomDriver::new(1), RandomDriver::new(2));
//! let (a, b) = tokio::join!(
//!     run_session(&created.handle, &mut alice_driver, RunOptions::default()),
//!     run_session(&bob, &mut bob_driver, RunOptions::default()),
//! );
//! # let _ = (a?, b?); Ok(())
//! # }
//! ```

use gaos_session::ErrorCode;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use gaos_json::Value;
use gaos_kernel::CommandSubmission;
use gaos_session::{
    AttachRequest, BoxFuture, LifecycleHandle, Observation, SessionError, SessionOpener, SessionPolicy,
    SessionTransport,
};
use reqwest::Method;

use crate::client::SessionClient;
use crate::credentials::CredentialSource;
use crate::error::ClientError;
use crate::wire::{self, SessionCredentials, encode_uri_component};

/// Extension key of the controller lease a create or attach answer grants.
pub use gaos_session::EXT_LEASE;
/// Header that presents a controller lease token.
pub const LEASE_HEADER: &str = "Gaos-Lease";

/// A client error as the runner's error (same status and code as the
/// in-process handle reports).
pub fn session_error(error: ClientError) -> SessionError {
    match error {
        ClientError::IllegalActionRejected { message, code } => {
            SessionError::Host { status: 422, code: Some(code.unwrap_or(ErrorCode::IllegalCommand)), message }
        }
        ClientError::Api { status, code, message } => SessionError::Host { status, code, message },
        e @ (ClientError::Transport { .. } | ClientError::Timeout { .. }) => SessionError::Transport(e.to_string()),
        e @ (ClientError::ProtocolMismatch { .. } | ClientError::ResponseTooLarge { .. }) => {
            SessionError::Protocol(e.to_string())
        }
        ClientError::InvalidArgument(message) => SessionError::InvalidArgument(message),
    }
}

/// The HTTP [`SessionTransport`]: one seat's client and its lease token.
///
/// The lease token travels as a client header, and a client's headers are
/// shared by its clones: give each handle a client of its own.
pub struct RemoteTransport {
    client: SessionClient,
    lease_token: Mutex<Option<String>>,
    credentials: RwLock<Option<Arc<dyn CredentialSource>>>,
}

impl std::fmt::Debug for RemoteTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTransport")
            .field("client", &self.client)
            .field("holds_lease", &self.holds_lease())
            .field("refreshes_credentials", &self.credential_source().is_some())
            .finish()
    }
}

impl RemoteTransport {
    /// A transport over `client` (built with the seat's bearer token).
    pub fn new(client: SessionClient) -> Self {
        RemoteTransport { client, lease_token: Mutex::new(None), credentials: RwLock::new(None) }
    }

    /// The client.
    pub fn client(&self) -> &SessionClient {
        &self.client
    }

    /// Present `token` as the seat's controller lease (`Gaos-Lease`) from
    /// now on, or stop presenting one.
    pub fn set_lease_token(&self, token: Option<String>) -> Result<(), SessionError> {
        match &token {
            Some(token) => self.client.set_header(LEASE_HEADER, token).map_err(session_error)?,
            None => self.client.remove_header(LEASE_HEADER),
        }
        *self.lease_token.lock().unwrap_or_else(PoisonError::into_inner) = token;
        Ok(())
    }

    /// True when the transport presents a controller lease.
    pub fn holds_lease(&self) -> bool {
        self.lease_token.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    /// Ask `source` for a new bearer token when the host refuses the
    /// current one (HTTP 401), once per refused call; `None` stops refreshing.
    pub fn set_credential_source(&self, source: Option<Arc<dyn CredentialSource>>) {
        *self.credentials.write().unwrap_or_else(PoisonError::into_inner) = source;
    }

    fn credential_source(&self) -> Option<Arc<dyn CredentialSource>> {
        self.credentials.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Run `call`; on 401 with a credential source, refresh the token once
    /// and run it again.
    async fn authorized<T, F, Fut>(&self, call: F) -> Result<T, SessionError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, SessionError>>,
    {
        let first = call().await;
        let source = match &first {
            Err(e) if e.is_unauthorized() => match self.credential_source() {
                Some(source) => source,
                None => return first,
            },
            _ => return first,
        };
        let token = source.refresh().await.map_err(|why| {
            SessionError::host(
                401,
                "credential_refresh_failed",
                format!("the host refused the credential and refreshing it failed: {why}"),
            )
        })?;
        self.client.set_token(&token).map_err(session_error)?;
        call().await.map_err(|e| match e {
            SessionError::Host { status: 401, code, message } => SessionError::Host {
                status: 401,
                code,
                message: format!("{message} (the refreshed credential was refused too)"),
            },
            other => other,
        })
    }

    async fn renew(&self, session_id: &str) -> Result<(), SessionError> {
        let path = format!("/v1/sessions/{}/lease/renew", encode_uri_component(session_id));
        self.client.request_json(Method::POST, &path, None).await.map_err(session_error)?;
        Ok(())
    }
}

fn is_lease_expired(error: &ClientError) -> bool {
    matches!(error, ClientError::Api { status: 409, code: Some(ErrorCode::LeaseExpired), .. })
}

impl SessionTransport for RemoteTransport {
    fn observe<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let answer =
                self.authorized(|| async { self.client.observe(session_id).await.map_err(session_error) }).await?;
            Observation::from_envelope(answer.envelope)
        })
    }

    fn submit<'a>(&'a self, submission: &'a CommandSubmission) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let answer = self
                .authorized(|| async {
                    match self.client.send_submission(submission).await {
                        Err(e) if is_lease_expired(&e) && self.holds_lease() => {
                            // Lease spec rule 8: renew, then resend the identical submission once.
                            self.renew(&submission.session_id).await?;
                            self.client.send_submission(submission).await
                        }
                        other => other,
                    }
                    .map_err(session_error)
                })
                .await?;
            Observation::from_envelope(answer.envelope)
        })
    }

    fn finalize<'a>(&'a self, session_id: &'a str, request: &'a Value) -> BoxFuture<'a, Result<Value, SessionError>> {
        Box::pin(async move {
            let object = |key: &str| request.get(key).and_then(Value::as_object).cloned();
            let request = wire::FinalizeRequest {
                request_id: request.get("requestId").and_then(Value::as_str).map(str::to_owned),
                metadata: object("metadata"),
                extensions: object("extensions"),
            };
            let result = self
                .authorized(|| async { self.client.finalize(session_id, &request).await.map_err(session_error) })
                .await?;
            Ok(result.to_value())
        })
    }

    fn attach<'a>(
        &'a self,
        session_id: &'a str,
        request: &'a AttachRequest,
    ) -> BoxFuture<'a, Result<Value, SessionError>> {
        Box::pin(async move {
            let (_, answer) = self
                .authorized(|| async { self.client.attach_answer(session_id, request).await.map_err(session_error) })
                .await?;
            Ok(answer)
        })
    }

    fn present_lease(&self, token: Option<String>) -> Result<(), SessionError> {
        self.set_lease_token(token)
    }

    fn reset<'a>(
        &'a self,
        session_id: &'a str,
        seed: Option<u32>,
        revision: u64,
    ) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let answer = self
                .authorized(|| async {
                    self.client.reset(session_id, seed, Some(revision)).await.map_err(session_error)
                })
                .await?;
            Observation::from_envelope(answer.envelope)
        })
    }
}

/// The remote [`SessionHandle`](gaos_session::SessionHandle) (a [`LifecycleHandle`] over [`RemoteTransport`]).
#[derive(Debug)]
pub struct RemoteSessionHandle {
    inner: LifecycleHandle<RemoteTransport>,
}

/// What [`RemoteSessionHandle::create`] returns: the creator seat's handle
/// at the durable head, and the credentials for the other seats.
#[derive(Debug)]
pub struct RemoteCreated {
    /// The new session.
    pub session_id: String,
    /// The creator seat.
    pub creator: String,
    /// The creator seat's handle.
    pub handle: RemoteSessionHandle,
    /// Seat and spectator tokens.
    pub credentials: SessionCredentials,
    base_url: String,
}

impl RemoteCreated {
    /// A new client for `seat` with its token (to attach it).
    pub fn seat_client(&self, seat: &str) -> Result<SessionClient, SessionError> {
        let token = self.credentials.seat(seat).ok_or_else(|| {
            SessionError::InvalidArgument(format!("session {} has no seat {seat:?}", self.session_id))
        })?;
        SessionClient::builder(&self.base_url).token(token).participant_id(seat).build().map_err(session_error)
    }
}

/// The operator's side of a host over HTTP: creates with the operator's
/// client ([`SessionOpener`]); each seat gets a client of its own (its
/// lease header must not be shared).
struct RemoteOpener<'a> {
    operator: &'a SessionClient,
}

impl SessionOpener for RemoteOpener<'_> {
    type Transport = RemoteTransport;

    fn create_session<'a>(&'a self, body: &'a Value) -> BoxFuture<'a, Result<Observation, SessionError>> {
        Box::pin(async move {
            let created = self.operator.create_session(body).await.map_err(session_error)?;
            Observation::from_envelope(created.envelope)
        })
    }

    fn seat_transport(&self, _session_id: &str, seat: &str, token: &str) -> Result<RemoteTransport, SessionError> {
        let client = SessionClient::builder(self.operator.base_url())
            .token(token)
            .participant_id(seat)
            .build()
            .map_err(session_error)?;
        Ok(RemoteTransport::new(client))
    }
}

impl RemoteSessionHandle {
    /// Sign every submission with `key` (RFC-010; see
    /// [`LifecycleHandle::with_signing_key`]).
    pub fn with_signing_key(self, key: impl Into<Option<gaos_session::signing::SeatSigningKey>>) -> Self {
        RemoteSessionHandle { inner: self.inner.with_signing_key(key) }
    }

    /// `createSessionHandle(request, policy)`: create a session with the
    /// operator's client (`{...request, policy}`) and return the creator
    /// seat's handle (holding the creator's controller lease) plus the seat
    /// tokens. The contract's [`LifecycleHandle::create`] over HTTP: the
    /// creator seat is the request's `participantId`, else its first
    /// `seats` entry, else `"player"` (lifecycle spec §4).
    pub async fn create(
        operator: &SessionClient,
        request: &Value,
        policy: &SessionPolicy,
    ) -> Result<RemoteCreated, SessionError> {
        let created = LifecycleHandle::create(&RemoteOpener { operator }, request, policy).await?;
        Ok(RemoteCreated {
            session_id: created.session_id,
            creator: created.creator,
            handle: RemoteSessionHandle { inner: created.handle },
            credentials: created.credentials,
            base_url: operator.base_url().to_owned(),
        })
    }

    /// `attachSessionHandle`: attach the seat of `seat_client` at the
    /// session's durable head (the contract's [`LifecycleHandle::attach`]).
    /// Refuses a controller that differs from the policy's before sending.
    /// The handle keeps the (checked) attach receipt and any lease the
    /// attach granted.
    pub async fn attach(
        seat_client: SessionClient,
        session_id: &str,
        request: &AttachRequest,
        policy: &SessionPolicy,
    ) -> Result<Self, SessionError> {
        let transport = RemoteTransport::new(seat_client);
        Ok(RemoteSessionHandle { inner: LifecycleHandle::attach(transport, session_id, request, policy).await? })
    }

    /// `createSessionHandleFromExisting(existing, policy)`: adopt a durable
    /// head a product route already holds (synchronous, no request; see
    /// [`gaos_session::adopt_existing`]), acting with `seat_client`.
    pub fn from_existing(
        seat_client: SessionClient,
        existing: &Value,
        policy: &SessionPolicy,
    ) -> Result<Self, SessionError> {
        let inner = LifecycleHandle::from_existing(RemoteTransport::new(seat_client), existing, policy)?;
        Ok(RemoteSessionHandle { inner })
    }

    /// Adopt `seat`'s current head (observe, then adopt the answer; see
    /// [`LifecycleHandle::adopt_head`]), acting with `seat_client`.
    pub async fn adopt(
        seat_client: SessionClient,
        session_id: &str,
        seat: &str,
        policy: &SessionPolicy,
    ) -> Result<Self, SessionError> {
        let transport = RemoteTransport::new(seat_client);
        Ok(RemoteSessionHandle { inner: LifecycleHandle::adopt_head(transport, session_id, seat, policy).await? })
    }

    /// The transport (its client, the lease token).
    pub fn transport(&self) -> &RemoteTransport {
        self.inner.transport()
    }
}

gaos_session::forward_session_handle!(RemoteSessionHandle);
