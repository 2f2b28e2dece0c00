//! [`SessionClient`]: the five `gaos.ticks` v1 routes over HTTP, used the way
//! the reference TS and Python clients use them (lifecycle spec §1–§4).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use gaos_json::{MAX_SAFE_INTEGER, Value, canonical_json};
use gaos_kernel::protocol::{PROTOCOL_ID, PROTOCOL_VERSION, is_valid_participant_id};
use gaos_kernel::{CommandSubmission, SessionBinding, TickEnvelope};
use gaos_session::SubmissionCounter;
use gaos_session::receipts::AttachReceipt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};

use crate::error::ClientError;
mod builder;

pub use builder::SessionClientBuilder;

use crate::wire::{
    self, AttachRequest, FinalizeRequest, SessionAttach, SessionCredentials, SessionResult, encode_uri_component,
};

/// Default timeout of one request, body included (the reference default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default cap on an answer body (the reference default, 1 MiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 1024 * 1024;
/// Default number of exact resends after a transport failure.
pub const DEFAULT_RETRIES: u32 = 3;
/// Default pause before the first resend; it doubles for each later one.
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(50);
/// The seat a client assumes when none is configured (the reference
/// default; the seat a handle's create opens when the request names none).
pub const DEFAULT_PARTICIPANT_ID: &str = gaos_session::DEFAULT_CREATOR_SEAT;

const JSON: &str = "application/json";

/// A `reqwest` client builder with the settings a [`SessionClient`] needs:
/// no redirects (a redirect must never carry or drop the bearer token) and
/// `TCP_NODELAY`. Build one client from it and share it between many
/// `SessionClient`s (one per seat token) with
/// [`SessionClientBuilder::http_client`] so they share one connection pool.
pub fn http_client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).tcp_nodelay(true)
}

/// A tick envelope answer of observe, act or create.
#[derive(Debug, Clone, PartialEq)]
pub struct TickResult {
    /// The HTTP status: 200 resolved (or an exact retry), 201 created,
    /// 202 pending.
    pub status: u16,
    /// The checked envelope.
    pub envelope: TickEnvelope,
}

impl TickResult {
    /// True when the window still awaits other seats (`kind: "pending"`).
    pub fn is_pending(&self) -> bool {
        self.envelope.is_pending()
    }

    /// The envelope's cursor.
    pub fn cursor(&self) -> Cursor {
        Cursor { tick_id: self.envelope.tick_id.clone(), revision: self.envelope.revision }
    }
}

/// What `POST /v1/sessions` answered (the creator's envelope and the seat
/// tokens; the creator's *handle* with the tokens is
/// [`gaos_session::CreatedSession`] or [`crate::handle::RemoteCreated`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CreateAnswer {
    /// The new session's id.
    pub session_id: String,
    /// The HTTP status (201 from gaos-host).
    pub status: u16,
    /// The creator seat's resolved envelope.
    pub envelope: TickEnvelope,
    /// The creator seat's binding (also remembered by the client).
    pub binding: SessionBinding,
    /// Seat and spectator tokens, when the host hands them out
    /// (`extensions["gaos.host.credentials"]`).
    pub credentials: Option<SessionCredentials>,
}

/// A window address: what a submission targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// Opaque tick id (`"<sessionId>:<revision>"` on reference hosts).
    pub tick_id: String,
    /// The session revision of the window.
    pub revision: u64,
}

/// Options of [`SessionClient::submit_command`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubmitOptions {
    /// An explicit submission id (to resend one exactly). Needs a remembered
    /// binding or [`SubmitOptions::cursor`]: reading the current cursor could
    /// address a later window than the one the id was first sent to.
    pub submission_id: Option<String>,
    /// Submit at this cursor instead of the remembered binding.
    pub cursor: Option<Cursor>,
}

/// A JSON answer of [`SessionClient::request_json`].
#[derive(Debug, Clone, PartialEq)]
pub struct JsonAnswer {
    /// The HTTP status (2xx).
    pub status: u16,
    /// The parsed body.
    pub body: Value,
}

/// Per-session memory of the client: the latest binding, and the counter
/// behind default submission ids. One entry per session touched.
#[derive(Default)]
struct State {
    bindings: HashMap<String, SessionBinding>,
    /// (session, seat) → the seat's default submission ids.
    counters: HashMap<(String, String), SubmissionCounter>,
}

struct Inner {
    http: reqwest::Client,
    base_url: String,
    /// Replaceable: a refreshed credential ([`SessionClient::set_token`]).
    authorization: RwLock<Option<HeaderValue>>,
    participant_id: String,
    timeout: Duration,
    max_response_bytes: usize,
    retries: u32,
    retry_backoff: Duration,
    extra_headers: RwLock<HeaderMap>,
    state: Mutex<State>,
}

/// An async client of a `gaos.ticks` v1 host.
///
/// Clones share the connection pool, the remembered bindings and the extra
/// headers. Every method takes `&self`, so one client can serve several
/// tasks; bindings only ever move forward (a late answer for an older
/// cursor never replaces a newer binding).
#[derive(Clone)]
pub struct SessionClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SessionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionClient")
            .field("base_url", &self.inner.base_url)
            .field("participant_id", &self.inner.participant_id)
            .field(
                "authorization",
                &self.inner.authorization.read().unwrap_or_else(PoisonError::into_inner).as_ref().map(|_| "<redacted>"),
            )
            .finish_non_exhaustive()
    }
}

/// The `Authorization` value of a bearer token (marked sensitive).
fn bearer(token: &str) -> Result<HeaderValue, ClientError> {
    let token = token.trim();
    if token.is_empty() {
        return Err(ClientError::InvalidArgument("the bearer token is empty".into()));
    }
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
        ClientError::InvalidArgument("the bearer token contains characters a header cannot carry".into())
    })?;
    value.set_sensitive(true);
    Ok(value)
}

/// `source()` chain of an error, joined with `: ` (reqwest's own message
/// alone rarely says why).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

fn check_session_id(session_id: &str) -> Result<(), ClientError> {
    if session_id.trim().is_empty() {
        return Err(ClientError::InvalidArgument("the session id must be a non-blank string".into()));
    }
    Ok(())
}

fn check_seat(seat: &str) -> Result<(), ClientError> {
    if is_valid_participant_id(seat) {
        Ok(())
    } else {
        Err(ClientError::InvalidArgument(format!("seat id {seat:?} must match ^[A-Za-z0-9_.:@-]{{1,128}}$")))
    }
}

/// Header names the client owns; an extra header may not replace them.
const RESERVED_HEADERS: [&str; 7] =
    ["authorization", "accept", "content-type", "content-length", "host", "transfer-encoding", "connection"];

impl SessionClient {
    /// A client of the host at `base_url` using the bearer `token`, with the
    /// reference defaults (30 s timeout, 1 MiB answers, seat `"player"`).
    pub fn new(base_url: impl Into<String>, token: impl Into<String>) -> Result<Self, ClientError> {
        Self::builder(base_url).token(token).build()
    }

    /// A builder for the host at `base_url` (no token yet).
    pub fn builder(base_url: impl Into<String>) -> SessionClientBuilder {
        SessionClientBuilder::new(base_url.into())
    }

    /// The base URL, without trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The seat this client observes as by default and `act`s for.
    pub fn participant_id(&self) -> &str {
        &self.inner.participant_id
    }

    /// Send `token` as the bearer token from now on (a refreshed or rotated
    /// credential). Shared by this client's clones, like its extra headers.
    pub fn set_token(&self, token: &str) -> Result<(), ClientError> {
        let value = bearer(token)?;
        *self.inner.authorization.write().unwrap_or_else(PoisonError::into_inner) = Some(value);
        Ok(())
    }

    // ----- extra headers (the seam for controller leases) -------------------

    /// Send `name: value` with every later request (e.g. `Gaos-Lease`,
    /// `Gaos-Lease-Epoch`), replacing an earlier value. The headers the
    /// client owns (`Authorization`, `Accept`, `Content-Type`, ...) are refused.
    pub fn set_header(&self, name: &str, value: &str) -> Result<(), ClientError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ClientError::InvalidArgument(format!("{name:?} is not a valid header name")))?;
        if RESERVED_HEADERS.contains(&name.as_str()) {
            return Err(ClientError::InvalidArgument(format!("header {name} is set by the client itself")));
        }
        let value = HeaderValue::from_str(value).map_err(|_| {
            ClientError::InvalidArgument(format!("the value of header {name} is not a valid header value"))
        })?;
        self.inner.extra_headers.write().unwrap_or_else(PoisonError::into_inner).insert(name, value);
        Ok(())
    }

    /// [`SessionClient::set_header`], for chaining.
    pub fn with_header(self, name: &str, value: &str) -> Result<Self, ClientError> {
        self.set_header(name, value)?;
        Ok(self)
    }

    /// Stop sending the extra header `name`.
    pub fn remove_header(&self, name: &str) {
        if let Ok(name) = HeaderName::from_bytes(name.as_bytes()) {
            self.inner.extra_headers.write().unwrap_or_else(PoisonError::into_inner).remove(name);
        }
    }

    // ----- bindings ---------------------------------------------------------

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The binding remembered for `session_id`: the cursor of the latest
    /// answer and the seat it was for.
    pub fn binding(&self, session_id: &str) -> Option<SessionBinding> {
        self.state().bindings.get(session_id).cloned()
    }

    /// Remember a persisted binding (e.g. after a restart), replacing the
    /// current one whatever its revision. The binding is validated first.
    pub fn restore_binding(&self, binding: SessionBinding) -> Result<(), ClientError> {
        binding.validate().map_err(|e| ClientError::InvalidArgument(format!("cannot restore the binding: {e}")))?;
        self.state().bindings.insert(binding.session_id.clone(), binding);
        Ok(())
    }

    /// Forget the binding of `session_id` (the next submission reads the
    /// cursor first).
    pub fn forget_binding(&self, session_id: &str) {
        let mut state = self.state();
        state.bindings.remove(session_id);
        state.counters.retain(|(session, _), _| session != session_id);
    }

    /// Replace the remembered binding unless it would move the cursor back.
    fn remember(&self, binding: SessionBinding) {
        let mut state = self.state();
        match state.bindings.get(&binding.session_id) {
            Some(current) if current.revision > binding.revision => {}
            _ => {
                state.bindings.insert(binding.session_id.clone(), binding);
            }
        }
    }

    fn next_submission_id(&self, session_id: &str, seat: &str, tick_id: &str) -> String {
        let mut state = self.state();
        state.counters.entry((session_id.to_owned(), seat.to_owned())).or_default().next_id(seat, tick_id)
    }

    // ----- routes -----------------------------------------------------------

    fn session_url(&self, session_id: &str, route: &str) -> String {
        format!("{}/v1/sessions/{}/{route}", self.inner.base_url, encode_uri_component(session_id))
    }

    /// `POST /v1/sessions`: create a session from an opaque product request.
    ///
    /// The answer must be a resolved envelope. The creator's binding is
    /// remembered for the seat named by the request's `participantId`, else
    /// for this client's participant id. Never resent automatically (a
    /// resend could create a second session).
    pub async fn create_session(&self, request: &Value) -> Result<CreateAnswer, ClientError> {
        let url = format!("{}/v1/sessions", self.inner.base_url);
        let body = canonical_json(request);
        let (status, value) = self.execute(Method::POST, &url, Some(body), false).await?;
        let envelope = wire::parse_tick_envelope(value, None).map_err(|reason| mismatch(&url, reason))?;
        if envelope.is_pending() {
            return Err(mismatch(
                &url,
                "a create answer must be a resolved envelope (kind \"tick\"), not pending".into(),
            ));
        }
        let credentials = wire::parse_credentials(&envelope).map_err(|reason| mismatch(&url, reason))?;
        let seat = request
            .get("participantId")
            .and_then(Value::as_str)
            .filter(|s| is_valid_participant_id(s))
            .unwrap_or(&self.inner.participant_id);
        let binding = SessionBinding::from_envelope(&envelope, seat);
        binding.validate().map_err(|reason| mismatch(&url, reason))?;
        self.remember(binding.clone());
        Ok(CreateAnswer { session_id: envelope.session_id.clone(), status, envelope, binding, credentials })
    }

    /// `GET /v1/sessions/{id}/tick`: the current envelope, remembered as the
    /// binding of this session's seat (the remembered one, else this
    /// client's participant id).
    pub async fn observe(&self, session_id: &str) -> Result<TickResult, ClientError> {
        let seat =
            self.binding(session_id).map(|b| b.participant_id).unwrap_or_else(|| self.inner.participant_id.clone());
        self.observe_as(session_id, &seat).await
    }

    async fn observe_as(&self, session_id: &str, seat: &str) -> Result<TickResult, ClientError> {
        check_session_id(session_id)?;
        let url = self.session_url(session_id, "tick");
        let (status, value) = self.execute(Method::GET, &url, None, true).await?;
        let envelope = wire::parse_tick_envelope(value, Some(session_id)).map_err(|reason| mismatch(&url, reason))?;
        self.remember(SessionBinding::from_envelope(&envelope, seat));
        Ok(TickResult { status, envelope })
    }

    /// Submit `command` for this client's participant id at the remembered
    /// cursor (see [`SessionClient::submit_command`]).
    pub async fn act(&self, session_id: &str, command: Value) -> Result<TickResult, ClientError> {
        let seat = self.inner.participant_id.clone();
        self.submit_command(session_id, &seat, command, SubmitOptions::default()).await
    }

    /// `POST /v1/sessions/{id}/actions`: build the `CommandSubmission` from
    /// the remembered binding (reading `GET /tick` first when there is
    /// none), with the default id `"<seat>:<tickId>:<n>"`, and send it.
    /// The answer's cursor becomes the binding.
    pub async fn submit_command(
        &self,
        session_id: &str,
        seat: &str,
        command: Value,
        options: SubmitOptions,
    ) -> Result<TickResult, ClientError> {
        let submission = self.prepare_submission(session_id, seat, command, options).await?;
        self.send_submission(&submission).await
    }

    /// Build the submission [`SessionClient::submit_command`] would send,
    /// without sending it (keep it to resend it exactly later with
    /// [`SessionClient::send_submission`]).
    pub async fn prepare_submission(
        &self,
        session_id: &str,
        seat: &str,
        command: Value,
        options: SubmitOptions,
    ) -> Result<CommandSubmission, ClientError> {
        check_session_id(session_id)?;
        check_seat(seat)?;
        let cursor = match options.cursor {
            Some(cursor) => {
                if cursor.tick_id.trim().is_empty() {
                    return Err(ClientError::InvalidArgument("the cursor's tick id must be non-blank".into()));
                }
                if cursor.revision as f64 > MAX_SAFE_INTEGER {
                    return Err(ClientError::InvalidArgument("the cursor's revision must be a safe integer".into()));
                }
                cursor
            }
            None => match self.binding(session_id) {
                Some(binding) => Cursor { tick_id: binding.tick_id, revision: binding.revision },
                None if options.submission_id.is_some() => {
                    return Err(ClientError::InvalidArgument(format!(
                        "an explicit submission id needs the cursor it was first sent at, and session {session_id:?} \
                         has no remembered binding: restore it with restore_binding or pass SubmitOptions::cursor"
                    )));
                }
                None => self.observe_as(session_id, seat).await?.cursor(),
            },
        };
        let submission_id = match options.submission_id {
            Some(id) if id.trim().is_empty() => {
                return Err(ClientError::InvalidArgument("the submission id must be non-blank".into()));
            }
            Some(id) => id,
            None => self.next_submission_id(session_id, seat, &cursor.tick_id),
        };
        Ok(CommandSubmission {
            protocol: PROTOCOL_ID.into(),
            protocol_version: PROTOCOL_VERSION.into(),
            session_id: session_id.into(),
            tick_id: cursor.tick_id,
            revision: cursor.revision as f64,
            participant_id: seat.into(),
            submission_id: Some(submission_id),
            command: Some(command),
            extensions: None,
            client_time: None,
            prev_chain_hash: None,
            sig: None,
        })
    }

    /// Send a prepared submission. After a transport failure or timeout the
    /// identical bytes are resent (same submission id, tick id, revision and
    /// command) up to the retry limit; the host answers an exact retry with
    /// its stored answer, so nothing is applied twice. An HTTP error answer
    /// is never resent.
    pub async fn send_submission(&self, submission: &CommandSubmission) -> Result<TickResult, ClientError> {
        check_session_id(&submission.session_id)?;
        check_seat(&submission.participant_id)?;
        if submission.submission_id.as_deref().is_none_or(|id| id.trim().is_empty()) {
            return Err(ClientError::InvalidArgument("the submission needs a non-blank submission id".into()));
        }
        let url = self.session_url(&submission.session_id, "actions");
        let body = canonical_json(&submission.to_value());
        let (status, value) = self.execute(Method::POST, &url, Some(body), true).await?;
        let envelope =
            wire::parse_tick_envelope(value, Some(&submission.session_id)).map_err(|reason| mismatch(&url, reason))?;
        self.remember(SessionBinding::from_envelope(&envelope, &submission.participant_id));
        Ok(TickResult { status, envelope })
    }

    /// `POST /v1/sessions/{id}/attach`: attach a seat at the durable head.
    /// The answer is checked (session, tick, binding, seat, receipt request
    /// id, controller, receipt digest) and its binding remembered. Resent on
    /// transport failure: the same request id at the same revision returns
    /// the identical receipt.
    pub async fn attach(&self, session_id: &str, request: &AttachRequest) -> Result<SessionAttach, ClientError> {
        self.attach_answer(session_id, request).await.map(|(attach, _)| attach)
    }

    /// [`SessionClient::attach`], with the host's answer as it came (what
    /// the contract's `LifecycleHandle::attach` reads).
    pub async fn attach_answer(
        &self,
        session_id: &str,
        request: &AttachRequest,
    ) -> Result<(SessionAttach, Value), ClientError> {
        check_session_id(session_id)?;
        if request.request_id.trim().is_empty() {
            return Err(ClientError::InvalidArgument("the attach requestId must be non-blank".into()));
        }
        if let Some(seat) = &request.participant_id {
            check_seat(seat)?;
        }
        let url = self.session_url(session_id, "attach");
        let body = canonical_json(&request.to_value());
        let (_, value) = self.execute(Method::POST, &url, Some(body), true).await?;
        let attach =
            wire::parse_session_attach(&value, session_id, request).map_err(|reason| mismatch(&url, reason))?;
        self.remember(attach.binding.clone());
        Ok((attach, value))
    }

    /// `POST /v1/sessions/{id}/finalize`: fix the session's result. The
    /// default request id is `"finalize:<sessionId>"`. Resent on transport
    /// failure: an exact retry returns the identical result.
    pub async fn finalize(&self, session_id: &str, request: &FinalizeRequest) -> Result<SessionResult, ClientError> {
        check_session_id(session_id)?;
        if request.request_id.as_deref().is_some_and(|id| id.trim().is_empty()) {
            return Err(ClientError::InvalidArgument("the finalize requestId must be non-blank".into()));
        }
        let url = self.session_url(session_id, "finalize");
        let body = canonical_json(&request.to_value(session_id));
        let (_, value) = self.execute(Method::POST, &url, Some(body), true).await?;
        wire::parse_session_result(&value, session_id).map_err(|reason| mismatch(&url, reason))
    }

    /// `POST /v1/sessions/{id}/reset`: start the next level of a run that
    /// advances on reset (`409 reset_not_allowed` elsewhere). With the
    /// `revision` the ended level was seen at, the request is resent on
    /// transport failure: the host answers an exact retry without a second
    /// reset. A `seed` is the host's to judge (a run fixes its seeds).
    pub async fn reset(
        &self,
        session_id: &str,
        seed: Option<u32>,
        revision: Option<u64>,
    ) -> Result<TickResult, ClientError> {
        check_session_id(session_id)?;
        let url = self.session_url(session_id, "reset");
        let mut body = gaos_json::Map::new();
        if let Some(seed) = seed {
            body.insert("seed".into(), seed.into());
        }
        if let Some(revision) = revision {
            body.insert("revision".into(), revision.into());
        }
        let body = canonical_json(&Value::Object(body));
        let (status, value) = self.execute(Method::POST, &url, Some(body), revision.is_some()).await?;
        let envelope = wire::parse_tick_envelope(value, Some(session_id)).map_err(|reason| mismatch(&url, reason))?;
        let seat =
            self.binding(session_id).map(|b| b.participant_id).unwrap_or_else(|| self.inner.participant_id.clone());
        self.remember(SessionBinding::from_envelope(&envelope, &seat));
        Ok(TickResult { status, envelope })
    }

    /// `POST /v1/sessions/{id}/seat-signature`: this seat's periodic RFC-010
    /// signature over its chain head at `tick` (the body's `tick`,
    /// `clientTime`, `prevChainHash`, `sig`; kernel spec §5.9), covering its
    /// chained but unsigned moves. Resent on transport failure: a signature
    /// that covers nothing new is answered without a write.
    pub async fn seat_signature(
        &self,
        session_id: &str,
        tick: u64,
        client_time: u64,
        prev_chain_hash: &str,
        sig: &str,
    ) -> Result<TickResult, ClientError> {
        check_session_id(session_id)?;
        let url = self.session_url(session_id, "seat-signature");
        let mut body = gaos_json::Map::new();
        body.insert("tick".into(), tick.into());
        body.insert("clientTime".into(), client_time.into());
        body.insert("prevChainHash".into(), prev_chain_hash.into());
        body.insert("sig".into(), sig.into());
        let body = canonical_json(&Value::Object(body));
        let (status, value) = self.execute(Method::POST, &url, Some(body), true).await?;
        let envelope = wire::parse_tick_envelope(value, Some(session_id)).map_err(|reason| mismatch(&url, reason))?;
        Ok(TickResult { status, envelope })
    }

    /// `GET /v1/sessions/{id}/result`: the result the session's first
    /// accepted finalize fixed, as the host stored it (any reader of the
    /// session may read it; `409 not_finalized` before). A read: resent on
    /// transport failures like `observe`.
    pub async fn result(&self, session_id: &str) -> Result<SessionResult, ClientError> {
        check_session_id(session_id)?;
        let url = self.session_url(session_id, "result");
        let (_, value) = self.execute(Method::GET, &url, None, true).await?;
        wire::parse_session_result(&value, session_id).map_err(|reason| mismatch(&url, reason))
    }

    /// `GET /v1/sessions/{id}/receipts`: the session's attach receipt
    /// chain, oldest first (the operator or a seat of the session), each
    /// receipt read strictly. Check the chain with
    /// `gaos_session::receipts::verify_typed_receipt_chain`. A read: resent
    /// on transport failures like `observe`.
    pub async fn receipts(&self, session_id: &str) -> Result<Vec<AttachReceipt>, ClientError> {
        check_session_id(session_id)?;
        let url = self.session_url(session_id, "receipts");
        let (_, value) = self.execute(Method::GET, &url, None, true).await?;
        if value.get("sessionId").and_then(Value::as_str) != Some(session_id) {
            return Err(mismatch(&url, format!("the answer does not name session {session_id:?}")));
        }
        let listed = value
            .get("receipts")
            .and_then(Value::as_array)
            .ok_or_else(|| mismatch(&url, "the answer has no receipts array".to_owned()))?;
        listed
            .iter()
            .enumerate()
            .map(|(i, r)| AttachReceipt::from_value(r).map_err(|e| mismatch(&url, format!("receipts[{i}]: {e}"))))
            .collect()
    }

    /// A JSON request to another route of the same host (`GET`, `POST` or
    /// `DELETE`; a body only with `POST`), with the same headers, limits and
    /// error mapping. `path` is checked by [`wire::check_product_path`].
    /// Never resent.
    pub async fn request_json(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<JsonAnswer, ClientError> {
        wire::check_product_path(path).map_err(ClientError::InvalidArgument)?;
        if method != Method::GET && method != Method::POST && method != Method::DELETE {
            return Err(ClientError::InvalidArgument(format!("method {method} is not GET, POST or DELETE")));
        }
        if body.is_some() && method != Method::POST {
            return Err(ClientError::InvalidArgument(format!("a {method} request carries no body")));
        }
        let url = format!("{}{path}", self.inner.base_url);
        let (status, body) = self.execute(method, &url, body.map(canonical_json), false).await?;
        Ok(JsonAnswer { status, body })
    }

    // ----- HTTP -------------------------------------------------------------

    /// One logical request: resent (byte-identical) after transport failures
    /// when `idempotent`, up to the retry limit with doubling backoff.
    async fn execute(
        &self,
        method: Method,
        url: &str,
        body: Option<String>,
        idempotent: bool,
    ) -> Result<(u16, Value), ClientError> {
        let mut attempt = 0u32;
        loop {
            match self.attempt(method.clone(), url, body.as_deref()).await {
                Err(error) if idempotent && error.is_transport_failure() && attempt < self.inner.retries => {
                    let factor = 1u32 << attempt.min(16);
                    tokio::time::sleep(self.inner.retry_backoff.saturating_mul(factor)).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn transport_error(&self, error: &reqwest::Error, method: &Method, url: &str) -> ClientError {
        if error.is_timeout() {
            ClientError::Timeout { method: method.to_string(), url: url.to_owned(), timeout: self.inner.timeout }
        } else {
            ClientError::Transport { method: method.to_string(), url: url.to_owned(), message: error_chain(error) }
        }
    }

    async fn attempt(&self, method: Method, url: &str, body: Option<&str>) -> Result<(u16, Value), ClientError> {
        let mut request = self.inner.http.request(method.clone(), url).timeout(self.inner.timeout).header(ACCEPT, JSON);
        let authorization = self.inner.authorization.read().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(authorization) = authorization {
            request = request.header(AUTHORIZATION, authorization);
        }
        {
            let extra = self.inner.extra_headers.read().unwrap_or_else(PoisonError::into_inner);
            if !extra.is_empty() {
                request = request.headers(extra.clone());
            }
        }
        if let Some(body) = body {
            request = request.header(CONTENT_TYPE, JSON).body(body.to_owned());
        }
        let mut response = request.send().await.map_err(|e| self.transport_error(&e, &method, url))?;
        let status = response.status();
        let limit = self.inner.max_response_bytes;
        if response.content_length().is_some_and(|length| length > limit as u64) {
            return Err(ClientError::ResponseTooLarge { url: url.to_owned(), limit });
        }
        let mut bytes: Vec<u8> = Vec::with_capacity(response.content_length().map_or(0, |l| l as usize).min(limit));
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport_error(&e, &method, url))? {
            if bytes.len() + chunk.len() > limit {
                return Err(ClientError::ResponseTooLarge { url: url.to_owned(), limit });
            }
            bytes.extend_from_slice(&chunk);
        }
        if status.is_success() {
            if status == StatusCode::NO_CONTENT || bytes.iter().all(u8::is_ascii_whitespace) {
                return Err(mismatch(
                    url,
                    format!("HTTP {} with an empty body; every answer must be JSON", status.as_u16()),
                ));
            }
            let value = gaos_json::parse_bytes(&bytes)
                .map_err(|e| mismatch(url, format!("HTTP {} answer is not JSON: {e}", status.as_u16())))?;
            return Ok((status.as_u16(), value));
        }
        let status_text = status.canonical_reason().unwrap_or("error");
        let (message, code) = wire::parse_error_body(status_text, &bytes);
        if status == StatusCode::UNPROCESSABLE_ENTITY {
            return Err(ClientError::IllegalActionRejected { message, code });
        }
        Err(ClientError::Api { status: status.as_u16(), code, message })
    }
}

fn mismatch(url: &str, reason: String) -> ClientError {
    ClientError::ProtocolMismatch { url: url.to_owned(), reason }
}
