//! The HTTP API: the five `gaos.ticks` v1 routes plus host routes. Every
//! answer is JSON (errors `{"error","code"}`), bodies are capped at 1 MiB, and
//! nothing redirects.
//!
//! Handlers take typed extractors (`extract`: the caller, the presented
//! lease, JSON bodies) and return `Result<Response, HostError>`; `response`
//! turns answers and errors into responses, once.

mod bodies;
mod extract;
mod host_layer;
mod json_errors;
mod response;
mod route_sessions;
mod stream_auth;

pub use extract::BODY_LIMIT;
pub(crate) use json_errors::{JsonErrors, code_for as error_code_for};
pub(crate) use route_sessions::FencedHere;
pub use route_sessions::NODE_HEADER;

use gaos_session::ErrorCode;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use tokio::sync::broadcast;

use crate::actor::StreamItem;
use crate::auth::Caller;
use crate::error::HostError;
use crate::host::Host;
use crate::lease::Presented;
use crate::metrics::Metrics;
use crate::storage::SessionStatus;

use crate::requests::{
    ActRequest, AttachRequest, ClockRequest, CreateRequest, EmergencyStopRequest, FinalizeRequest, ReissueRequest,
    ResetRequest, SeatSignatureRequest,
};
use extract::{Heartbeat, LeaseCall, Pause, Release, Renew, Resume, Stop};
use response::{json_response, json_text, text};

type Answered = Result<Response, HostError>;

async fn create(State(host): State<Host>, caller: Caller, request: CreateRequest) -> Answered {
    Ok(host.create(&caller, request).await?.into_response())
}

async fn list(State(host): State<Host>, RawQuery(q): RawQuery, caller: Caller) -> Answered {
    let q = bodies::query(q.as_deref(), &["status"])?;
    let status = match q.get("status").map(String::as_str) {
        None => None,
        Some(s) => Some(
            SessionStatus::parse(s)
                .ok_or_else(|| HostError::invalid_request("status must be active, terminal, finalized or revoked"))?,
        ),
    };
    Ok(json_response(StatusCode::OK, &host.list(&caller, status).await?))
}

async fn observe(State(host): State<Host>, Path(id): Path<String>, caller: Caller) -> Answered {
    Ok(host.observe(&caller, &id).await?.into_response())
}

async fn act(
    State(host): State<Host>,
    Path(id): Path<String>,
    caller: Caller,
    presented: Presented,
    request: ActRequest,
) -> Answered {
    Ok(host.act(&caller, &id, presented, request).await?.into_response())
}

async fn attach(
    State(host): State<Host>,
    Path(id): Path<String>,
    caller: Caller,
    presented: Presented,
    request: AttachRequest,
) -> Answered {
    Ok(host.attach(&caller, &id, presented, request).await?.into_response())
}

async fn reset(
    State(host): State<Host>,
    Path(id): Path<String>,
    caller: Caller,
    presented: Presented,
    request: ResetRequest,
) -> Answered {
    Ok(host.reset(&caller, &id, presented, request).await?.into_response())
}

async fn seat_signature(
    State(host): State<Host>,
    Path(id): Path<String>,
    caller: Caller,
    request: SeatSignatureRequest,
) -> Answered {
    Ok(host.seat_signature(&caller, &id, request).await?.into_response())
}

async fn finalize(
    State(host): State<Host>,
    Path(id): Path<String>,
    caller: Caller,
    request: FinalizeRequest,
) -> Answered {
    Ok(host.finalize(&caller, &id, request).await?.into_response())
}

async fn reissue(
    State(host): State<Host>,
    Path((id, seat)): Path<(String, String)>,
    caller: Caller,
    _no_fields: ReissueRequest,
) -> Answered {
    Ok(json_response(StatusCode::OK, &host.reissue_seat_token(&caller, &id, &seat).await?))
}

/// The `?after=N` of snapshot and stream, the one parameter they take.
fn parse_after(raw: Option<&str>) -> Result<Option<u64>, HostError> {
    match bodies::query(raw, &["after"])?.get("after") {
        None => Ok(None),
        Some(text) => text
            .parse::<u64>()
            .map(Some)
            .map_err(|_| HostError::invalid_request("after must be a non-negative integer transition revision")),
    }
}

async fn snapshot(State(host): State<Host>, Path(id): Path<String>, RawQuery(q): RawQuery, caller: Caller) -> Answered {
    let after = parse_after(q.as_deref())?;
    Ok(host.snapshot(&caller, &id, after).await?.into_response())
}

async fn result(State(host): State<Host>, Path(id): Path<String>, caller: Caller) -> Answered {
    Ok(host.result(&caller, &id).await?.into_response())
}

async fn receipts(State(host): State<Host>, Path(id): Path<String>, caller: Caller) -> Answered {
    Ok(json_response(StatusCode::OK, &host.receipt_chain(&caller, &id).await?))
}

async fn seats(State(host): State<Host>, Path(id): Path<String>, caller: Caller) -> Answered {
    Ok(json_response(StatusCode::OK, &host.seat_status(&caller, &id).await?))
}

async fn replay(State(host): State<Host>, Path(id): Path<String>, caller: Caller) -> Answered {
    Ok(text(gaos_kernel::replay::MEDIA_TYPE, host.replay(&caller, &id).await?))
}

async fn transcript(State(host): State<Host>, Path(id): Path<String>, caller: Caller) -> Answered {
    Ok(text("application/jsonl", host.transcript(&caller, &id).await?))
}

/// Decrements the open-stream gauge when a stream ends.
struct StreamGuard(Arc<Metrics>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::Relaxed);
    }
}

struct StreamState {
    initial: std::vec::IntoIter<Arc<StreamItem>>,
    live: broadcast::Receiver<Arc<StreamItem>>,
    /// Ends the stream when its token is revoked or rotated.
    watch: stream_auth::CredentialWatch,
    _guard: StreamGuard,
    done: bool,
}

/// The last event of a stream whose token was revoked or rotated.
const REVOKED_EVENT: &str =
    "{\"code\":\"unauthorized\",\"error\":\"the token this stream was opened with was revoked or rotated\"}";

async fn stream(
    State(host): State<Host>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
    stream_caller: stream_auth::StreamCaller,
) -> Answered {
    let stream_auth::StreamCaller { caller, watch } = stream_caller;
    let after = parse_after(q.as_deref())?;
    let subscription = host.subscribe(&caller, &id, after).await?;
    host.metrics().open_streams.fetch_add(1, Ordering::Relaxed);
    let state = StreamState {
        initial: subscription.initial.into_iter(),
        live: subscription.live,
        watch,
        _guard: StreamGuard(Arc::clone(host.metrics())),
        done: false,
    };
    let events = futures_util::stream::unfold(state, |mut state| async move {
        if state.done {
            return None;
        }
        if let Some(item) = state.initial.next() {
            return Some((Ok::<Event, Infallible>(Event::default().event(item.event).data(item.data.as_str())), state));
        }
        let received = tokio::select! {
            biased;
            () = state.watch.revoked() => {
                state.done = true;
                return Some((Ok(Event::default().event("revoked").data(REVOKED_EVENT)), state));
            }
            received = state.live.recv() => received,
        };
        match received {
            Ok(item) => Some((Ok(Event::default().event(item.event).data(item.data.as_str())), state)),
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                // The client fell behind: tell it to resume from its last
                // transition revision (the reconnect answers with a snapshot).
                state.done = true;
                Some((Ok(Event::default().event("resync").data(format!("{{\"missed\":{missed}}}"))), state))
            }
            Err(broadcast::error::RecvError::Closed) => None,
        }
    });
    Ok(sse(events))
}

fn sse(events: impl Stream<Item = Result<Event, Infallible>> + Send + 'static) -> Response {
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

/// A lease route: its body was decoded for the route (`LeaseCall<R>`).
async fn lease_route<R>(host: &Host, call: LeaseCall<R>) -> Answered {
    Ok(host.lease(&call.caller, &call.id, call.presented, call.request).await?.into_response())
}

async fn renew(State(host): State<Host>, call: LeaseCall<Renew>) -> Answered {
    lease_route(&host, call).await
}

async fn heartbeat(State(host): State<Host>, call: LeaseCall<Heartbeat>) -> Answered {
    lease_route(&host, call).await
}

async fn release(State(host): State<Host>, call: LeaseCall<Release>) -> Answered {
    lease_route(&host, call).await
}

async fn pause(State(host): State<Host>, call: LeaseCall<Pause>) -> Answered {
    lease_route(&host, call).await
}

async fn resume(State(host): State<Host>, call: LeaseCall<Resume>) -> Answered {
    lease_route(&host, call).await
}

async fn stop(State(host): State<Host>, call: LeaseCall<Stop>) -> Answered {
    lease_route(&host, call).await
}

async fn lease_info(
    State(host): State<Host>,
    Path(id): Path<String>,
    caller: Caller,
    presented: Presented,
) -> Answered {
    Ok(host.lease_info(&caller, &id, presented).await?.into_response())
}

async fn emergency_stop(
    State(host): State<Host>,
    Path(id): Path<String>,
    caller: Caller,
    request: EmergencyStopRequest,
) -> Answered {
    Ok(host.emergency_stop(&caller, &id, request).await?.into_response())
}

/// `GET /v1/games`: any authenticated caller (operator, seat or spectator).
async fn games(State(host): State<Host>, _caller: Caller) -> Answered {
    Ok(json_response(StatusCode::OK, &crate::games::listing(host.registry())))
}

async fn reconcile(State(host): State<Host>, caller: Caller) -> Answered {
    Ok(json_response(StatusCode::OK, &host.reconcile_report(&caller).await?))
}

/// `POST /v1/admin/clock` with `{"advanceMs": N}`.
async fn advance_clock(State(host): State<Host>, caller: Caller, request: ClockRequest) -> Answered {
    Ok(json_response(StatusCode::OK, &host.advance_clock(&caller, request.advance_ms).await?))
}

async fn healthz() -> Response {
    json_text(StatusCode::OK, "{\"status\":\"ok\"}".into())
}

async fn metrics(State(host): State<Host>) -> Response {
    text("text/plain; version=0.0.4", host.metrics().render())
}

async fn openapi() -> Response {
    json_text(StatusCode::OK, crate::openapi::document())
}

async fn not_found() -> HostError {
    HostError::new(ErrorCode::NotFound, "no such route; see /openapi.json")
}

async fn method_not_allowed() -> HostError {
    HostError::new(ErrorCode::MethodNotAllowed, "this route does not take that method")
}

/// The router of a host.
pub fn router(host: Host) -> Router {
    Router::new()
        .route("/v1/games", get(games))
        .route("/v1/sessions", post(create).get(list))
        .route("/v1/sessions/{id}/tick", get(observe))
        .route("/v1/sessions/{id}/actions", post(act))
        .route("/v1/sessions/{id}/attach", post(attach))
        .route("/v1/sessions/{id}/reset", post(reset))
        .route("/v1/sessions/{id}/finalize", post(finalize))
        .route("/v1/sessions/{id}/seat-signature", post(seat_signature))
        .route("/v1/sessions/{id}/result", get(result))
        .route("/v1/sessions/{id}/receipts", get(receipts))
        .route("/v1/sessions/{id}/seats/{seat}/token", post(reissue))
        .route("/v1/sessions/{id}/snapshot", get(snapshot))
        .route("/v1/sessions/{id}/seats", get(seats))
        .route("/v1/sessions/{id}/stream", get(stream))
        .route("/v1/sessions/{id}/replay", get(replay))
        .route("/v1/sessions/{id}/transcript", get(transcript))
        .route("/v1/sessions/{id}/lease", get(lease_info))
        .route("/v1/sessions/{id}/lease/renew", post(renew))
        .route("/v1/sessions/{id}/lease/heartbeat", post(heartbeat))
        .route("/v1/sessions/{id}/lease/release", post(release))
        .route("/v1/sessions/{id}/pause", post(pause))
        .route("/v1/sessions/{id}/resume", post(resume))
        .route("/v1/sessions/{id}/stop", post(stop))
        .route("/v1/sessions/{id}/emergency-stop", post(emergency_stop))
        .route("/v1/admin/reconcile", get(reconcile))
        .route("/v1/admin/clock", post(advance_clock))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .route_layer(bodies::NoStrayQuery)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(host_layer::HostLayer::new(&host))
        .with_state(host)
}
