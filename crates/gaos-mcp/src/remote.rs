//! [`RemoteSeat`]: a [`SeatSession`] over a host's HTTP API (`gaos-client`),
//! used by both transports: `gaos mcp` (stdio, any host URL) and the host's
//! own `/mcp` mount (over loopback).
//!
//! The attach is lease-aware (`"lease": {"durationMs": N}`), so this server
//! holds the seat's lease token and presents it as `Gaos-Lease` on every
//! call: it gets the exact lease rules, not the lease-unaware compatibility
//! path. A claim another controller already holds (a creator's claim the
//! create asked for) can be adopted by handing over its token
//! ([`LeaseMode::Adopt`]). `gaos mcp` heartbeats its claim while it runs
//! ([`SeatOptions::keep_alive`]) and releases it when its client leaves.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gaos_client::handle::{RemoteTransport, session_error};
use gaos_client::reqwest::{self, Method, StatusCode};
use gaos_client::{SessionClient, http_client_builder, wire};
use gaos_json::{Map, Value};
use gaos_session::{
    AttachRequest, BoxFuture, HandleState, LeaseGrant, LeaseRequest, LifecycleHandle, Observation, SessionError,
    SessionHandle, SessionPolicy, SessionTransport,
};

use crate::seat::SeatSession;

/// The lease an attach asks for when none is configured: the spec's
/// default and maximum (5 minutes).
pub const DEFAULT_LEASE_MS: u64 = 300_000;
/// The lease `gaos mcp` asks for: short, because it heartbeats its claim
/// while it runs ([`SeatOptions::keep_alive`]), so only a dead server's
/// claim lapses, and then within seconds.
pub const KEEP_ALIVE_LEASE_MS: u64 = 6_000;
/// Largest replay this server downloads.
pub const MAX_REPLAY_BYTES: usize = 16 * 1024 * 1024;
/// Timeout of a replay download.
pub const REPLAY_TIMEOUT: Duration = Duration::from_secs(30);

/// How the seat's controller claim is obtained at attach.
#[derive(Clone, PartialEq, Eq)]
pub enum LeaseMode {
    /// Take a new claim for this long (refused with `writer_conflict` while
    /// another controller's claim on the seat is live; a lapsed one is taken
    /// over).
    Claim {
        /// The lease duration in milliseconds (within the host's bounds).
        duration_ms: u64,
    },
    /// Drive under an existing claim whose lease token was handed over
    /// (e.g. the creator's claim from the create answer). Checked with a
    /// heartbeat at attach.
    Adopt {
        /// The claim's lease token.
        lease_token: String,
    },
}

impl std::fmt::Debug for LeaseMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeaseMode::Claim { duration_ms } => f.debug_struct("Claim").field("duration_ms", duration_ms).finish(),
            LeaseMode::Adopt { .. } => f.debug_struct("Adopt").finish_non_exhaustive(),
        }
    }
}

/// Where and as whom to attach.
#[derive(Clone)]
pub struct SeatOptions {
    /// Heartbeat the claim while attached (every third of its duration), so
    /// a running server keeps its seat however long its agent is idle, and
    /// a killed one loses it within one lease: a restarted `gaos mcp` with
    /// a short lease gets its seat back in seconds (issue 18, item 6).
    pub keep_alive: bool,
    /// The host's base URL (`http://127.0.0.1:8899`).
    pub host_url: String,
    /// The session.
    pub session_id: String,
    /// The seat to drive.
    pub seat: String,
    /// The seat's bearer token.
    pub seat_token: String,
    /// How the controller claim is obtained.
    pub lease: LeaseMode,
    /// RFC-010: sign every submission with this seat key (the session must
    /// have been created with its public key in `seatKeys`).
    pub signing_key: Option<gaos_session::signing::SeatSigningKey>,
}

impl std::fmt::Debug for SeatOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeatOptions")
            .field("host_url", &self.host_url)
            .field("session_id", &self.session_id)
            .field("seat", &self.seat)
            .field("lease", &self.lease)
            .field("keep_alive", &self.keep_alive)
            .finish_non_exhaustive()
    }
}

/// A seat attached over HTTP: a [`LifecycleHandle`] over `gaos-client`'s
/// [`RemoteTransport`] (which renews and resends once on `lease_expired`),
/// plus the lease routes on the same client.
pub struct RemoteSeat {
    handle: LifecycleHandle<RemoteTransport>,
    replay_http: reqwest::Client,
    seat_token: String,
    /// The heartbeat task ([`SeatOptions::keep_alive`]), stopped on drop and
    /// on release.
    heartbeat: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    log: crate::seat_log::SeatLog,
}

impl Drop for RemoteSeat {
    fn drop(&mut self) {
        self.stop_heartbeat();
    }
}

impl std::fmt::Debug for RemoteSeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSeat").field("handle", &self.handle).finish_non_exhaustive()
    }
}

/// A fresh attach request id: unique per process and call.
fn attach_request_id(seat: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("mcp:{seat}:{nanos:x}:{}:{n}", std::process::id())
}

/// Whether `seat`'s envelope says the session awaits that seat's key.
async fn awaits_key_of(client: &SessionClient, session_id: &str, seat: &str) -> Result<bool, SessionError> {
    let observed = client.observe(session_id).await.map_err(session_error)?;
    let awaiting = observed
        .envelope
        .extensions
        .as_ref()
        .and_then(|ext| ext.get(gaos_session::signing::EXT_SIGNING))
        .and_then(|signing| signing.get("awaitingSeatKeys"))
        .and_then(gaos_json::Value::as_array)
        .is_some_and(|seats| seats.iter().any(|s| s.as_str() == Some(seat)));
    Ok(awaiting)
}

impl RemoteSeat {
    /// Attach `options.seat` of `options.session_id` at its durable head
    /// and take (or adopt) its controller claim.
    pub async fn attach(options: SeatOptions) -> Result<RemoteSeat, SessionError> {
        let SeatOptions { host_url, session_id, seat, seat_token, lease, keep_alive, signing_key } = options;
        let client = SessionClient::builder(&host_url)
            .token(&seat_token)
            .participant_id(&seat)
            .build()
            .map_err(session_error)?;
        let transport = RemoteTransport::new(client);
        let claim = match &lease {
            LeaseMode::Claim { duration_ms } => Some(LeaseRequest { duration_ms: *duration_ms }),
            // Presenting the handed-over token: the attach takes no new claim.
            LeaseMode::Adopt { lease_token } => {
                transport.set_lease_token(Some(lease_token.clone()))?;
                None
            }
        };
        // A signed session that waits for this seat's key (it was named in
        // the create's `seatKeysAtAttach`) gets it with this attach.
        let seat_key = match &signing_key {
            Some(key) if awaits_key_of(transport.client(), &session_id, &seat).await? => Some(key.seat_key(&seat, 1)),
            _ => None,
        };
        let request = AttachRequest {
            participant_id: Some(seat.clone()),
            lease: claim,
            seat_key,
            ..AttachRequest::new(attach_request_id(&seat))
        };
        let path = format!("/v1/sessions/{}/attach", wire::encode_uri_component(&session_id));
        let answer = transport
            .client()
            .request_json(Method::POST, &path, Some(&request.to_value()))
            .await
            .map_err(session_error)?;
        let attached = wire::parse_session_attach(&answer.body, &session_id, &request)
            .map_err(|e| SessionError::Protocol(format!("attach answer: {e}")))?;
        match (LeaseGrant::token_in(attached.extensions.as_ref()), &lease) {
            (Some(token), _) => transport.set_lease_token(Some(token))?,
            (None, LeaseMode::Adopt { .. }) => {}
            (None, LeaseMode::Claim { .. }) => {
                return Err(SessionError::Protocol(
                    "the host granted no controller lease to a lease-aware attach".into(),
                ));
            }
        }
        let terminal = gaos_session::announces_terminal(attached.extensions.as_ref());
        let handle = LifecycleHandle::new(
            transport,
            attached.binding,
            SessionPolicy::host_default(),
            attached.receipt,
            terminal,
        )?;
        let handle = handle.with_signing_key(signing_key);
        let replay_http = http_client_builder()
            .timeout(REPLAY_TIMEOUT)
            .build()
            .map_err(|e| SessionError::InvalidArgument(format!("cannot build the HTTP client: {e}")))?;
        let seat = RemoteSeat {
            handle,
            replay_http,
            seat_token,
            heartbeat: std::sync::Mutex::new(None),
            log: crate::seat_log::SeatLog::default(),
        };
        let mut duration_ms = attached
            .extensions
            .as_ref()
            .and_then(|ext| ext.get(gaos_session::EXT_LEASE))
            .and_then(|lease| lease.get("durationMs"))
            .and_then(Value::as_u64);
        if matches!(lease, LeaseMode::Adopt { .. }) {
            // Prove the handed-over token drives this seat (and renew it).
            let described = seat.lease_dispatch("lease/heartbeat", None, true).await?;
            duration_ms = described.get("durationMs").and_then(Value::as_u64).or(duration_ms);
        }
        if keep_alive && let Some(duration_ms) = duration_ms {
            seat.start_heartbeat(Duration::from_millis((duration_ms / 3).max(100)));
        }
        Ok(seat)
    }

    /// Heartbeat the claim every `every` until the seat is dropped or
    /// released. A lapsed claim is left lapsed (the next driving call renews
    /// it, so the lapse stays on the record); a claim the host no longer
    /// lets this server hold (superseded, revoked, finalized) ends the task.
    fn start_heartbeat(&self, every: Duration) {
        let client = self.client().clone();
        let path = self.session_path("lease/heartbeat");
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                match client.request_json(Method::POST, &path, None).await.map_err(session_error) {
                    Ok(_) => {}
                    Err(e) if e.is_lease_expired() || e.status().is_none_or(|s| s == 429 || s >= 500) => {
                        tracing::debug!(error = %e, "heartbeat not taken; trying again");
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "the seat's claim can no longer be kept alive");
                        return;
                    }
                }
            }
        });
        *self.heartbeat.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(task);
    }

    fn stop_heartbeat(&self) {
        if let Some(task) = self.heartbeat.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            task.abort();
        }
    }

    fn client(&self) -> &SessionClient {
        self.handle.transport().client()
    }

    fn session_path(&self, route: &str) -> String {
        format!("/v1/sessions/{}/{route}", wire::encode_uri_component(self.handle.session_id()))
    }

    async fn post(&self, route: &str, body: Option<&Value>) -> Result<Value, SessionError> {
        let answer =
            self.client().request_json(Method::POST, &self.session_path(route), body).await.map_err(session_error)?;
        Ok(answer.body)
    }

    /// A driving lease dispatch; with `recover`, a `lease_expired` answer
    /// renews the claim and the dispatch is retried once (rule 8).
    async fn lease_dispatch(&self, route: &str, body: Option<&Value>, recover: bool) -> Result<Value, SessionError> {
        match self.post(route, body).await {
            Err(e) if recover && e.is_lease_expired() => {
                self.post("lease/renew", None).await?;
                self.post(route, body).await
            }
            other => other,
        }
    }
}

impl SeatSession for RemoteSeat {
    fn handle(&self) -> &dyn SessionHandle {
        &self.handle
    }

    fn observe(&self) -> BoxFuture<'_, Result<Observation, SessionError>> {
        Box::pin(async move {
            if self.handle.state() == HandleState::Finalized {
                return self.handle.transport().observe(self.handle.session_id()).await;
            }
            self.handle.observe().await
        })
    }

    fn lease_info(&self) -> BoxFuture<'_, Result<Value, SessionError>> {
        Box::pin(async move {
            let answer = self
                .client()
                .request_json(Method::GET, &self.session_path("lease"), None)
                .await
                .map_err(session_error)?;
            Ok(answer.body)
        })
    }

    fn pause(&self, reason: String) -> BoxFuture<'_, Result<Value, SessionError>> {
        Box::pin(async move {
            let mut body = Map::new();
            body.insert("reason".into(), reason.into());
            self.lease_dispatch("pause", Some(&Value::Object(body)), false).await
        })
    }

    fn resume(&self) -> BoxFuture<'_, Result<Value, SessionError>> {
        Box::pin(self.lease_dispatch("resume", None, true))
    }

    fn result(&self) -> BoxFuture<'_, Result<gaos_session::SessionResult, SessionError>> {
        Box::pin(async move { self.client().result(self.handle.session_id()).await.map_err(session_error) })
    }

    fn log(&self) -> &crate::seat_log::SeatLog {
        &self.log
    }

    fn release(&self) -> BoxFuture<'_, Result<Value, SessionError>> {
        Box::pin(async move {
            self.stop_heartbeat();
            self.post("lease/release", None).await
        })
    }

    fn replay(&self) -> BoxFuture<'_, Result<String, SessionError>> {
        Box::pin(async move {
            let url = format!("{}{}", self.client().base_url(), self.session_path("replay"));
            let transport = |e: reqwest::Error| SessionError::Transport(format!("GET {url}: {e}"));
            let mut response = self
                .replay_http
                .get(&url)
                .bearer_auth(&self.seat_token)
                .header("accept", "application/json")
                .send()
                .await
                .map_err(transport)?;
            let status = response.status();
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(transport)? {
                if bytes.len() + chunk.len() > MAX_REPLAY_BYTES {
                    return Err(SessionError::Protocol(format!(
                        "the replay is larger than this server's {MAX_REPLAY_BYTES}-byte limit"
                    )));
                }
                bytes.extend_from_slice(&chunk);
            }
            if status != StatusCode::OK {
                let reason = status.canonical_reason().unwrap_or("error");
                let (message, code) = wire::parse_error_body(reason, &bytes);
                return Err(SessionError::Host { status: status.as_u16(), code, message });
            }
            String::from_utf8(bytes).map_err(|_| SessionError::Protocol("the replay is not UTF-8 text".into()))
        })
    }
}
