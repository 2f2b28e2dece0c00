//! The HTTP API: the five `gaos.ticks` v1 routes plus host routes. Every
//! answer is JSON (errors `{"error","code"}`), bodies are capped at 1 MiB, and
//! nothing redirects.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use gaos_json::Value;
use http_body_util::BodyExt;
use tokio::sync::broadcast;

use crate::actor::StreamItem;
use crate::answers::Answer;
use crate::auth::{Caller, bearer};
use crate::error::HostError;
use crate::host::Host;
use crate::lease::{LeaseOp, Presented};
use crate::store::SessionStatus;

/// Largest request body accepted.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// A JSON response with exact body bytes.
pub fn json_text(status: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A JSON response of a value (canonical JSON).
pub fn json_response(status: StatusCode, value: &Value) -> Response {
    json_text(status, gaos_json::canonical_json(value))
}

fn answer(answer: Answer) -> Response {
    json_text(StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK), answer.body)
}

fn respond(result: Result<Answer, HostError>) -> Response {
    match result {
        Ok(a) => answer(a),
        Err(e) => e.into_response(),
    }
}

/// Read a JSON body (at most [`BODY_LIMIT`] bytes).
async fn read_json(body: Body, malformed_code: &str) -> Result<Value, HostError> {
    let mut body = body;
    let mut bytes: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| HostError::bad_request(malformed_code, format!("could not read the body: {e}")))?;
        if let Some(data) = frame.data_ref() {
            if bytes.len() + data.len() > BODY_LIMIT {
                return Err(HostError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload_too_large",
                    format!("request bodies are limited to {BODY_LIMIT} bytes"),
                ));
            }
            bytes.extend_from_slice(data);
        }
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(HostError::bad_request(malformed_code, "the request body must be a JSON value"));
    }
    gaos_json::parse_bytes(&bytes)
        .map_err(|e| HostError::bad_request(malformed_code, format!("the request body is not valid JSON: {e}")))
}

fn caller(host: &Host, headers: &HeaderMap) -> Result<Caller, HostError> {
    host.caller(bearer(headers))
}

/// `Gaos-Lease` / `Gaos-Lease-Epoch` of a lease-aware caller.
fn presented(headers: &HeaderMap) -> Result<Presented, HostError> {
    let token_hash = match headers.get("gaos-lease") {
        None => None,
        Some(v) => {
            let token =
                v.to_str().map_err(|_| HostError::invalid_request("Gaos-Lease must be a visible ASCII token"))?;
            Some(crate::auth::token_hash(token.trim()))
        }
    };
    let epoch = match headers.get("gaos-lease-epoch") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
                .ok_or_else(|| HostError::invalid_request("Gaos-Lease-Epoch must be a non-negative integer"))?,
        ),
    };
    Ok(Presented { token_hash, epoch })
}

macro_rules! try_or_respond {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return HostError::into_response(e),
        }
    };
}

async fn create(State(host): State<Host>, headers: HeaderMap, body: Body) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let body = try_or_respond!(read_json(body, "invalid_request").await);
    respond(host.create(&caller, body).await)
}

#[derive(serde::Deserialize)]
struct ListQuery {
    status: Option<String>,
}

async fn list(State(host): State<Host>, headers: HeaderMap, Query(q): Query<ListQuery>) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let status = match q.status.as_deref() {
        None => None,
        Some(s) => Some(try_or_respond!(
            SessionStatus::parse(s)
                .ok_or_else(|| HostError::invalid_request("status must be active, terminal, finalized or revoked"))
        )),
    };
    match host.list(&caller, status).await {
        Ok(v) => json_response(StatusCode::OK, &v),
        Err(e) => e.into_response(),
    }
}

async fn observe(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    respond(host.observe(&caller, &id).await)
}

async fn act(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let presented = try_or_respond!(presented(&headers));
    let body = try_or_respond!(read_json(body, "invalid_submission").await);
    respond(host.act(&caller, &id, presented, body).await)
}

async fn attach(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let presented = try_or_respond!(presented(&headers));
    let body = try_or_respond!(read_json(body, "invalid_request").await);
    respond(host.attach(&caller, &id, presented, body).await)
}

async fn finalize(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let body = try_or_respond!(read_json(body, "invalid_request").await);
    respond(host.finalize(&caller, &id, body).await)
}

async fn reissue(State(host): State<Host>, headers: HeaderMap, Path((id, seat)): Path<(String, String)>) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    match host.reissue_seat_token(&caller, &id, &seat).await {
        Ok(v) => json_response(StatusCode::OK, &v),
        Err(e) => e.into_response(),
    }
}

#[derive(serde::Deserialize)]
struct AfterQuery {
    after: Option<String>,
}

fn parse_after(q: &AfterQuery) -> Result<Option<u64>, HostError> {
    match &q.after {
        None => Ok(None),
        Some(text) => text
            .parse::<u64>()
            .map(Some)
            .map_err(|_| HostError::invalid_request("after must be a non-negative integer transition revision")),
    }
}

async fn snapshot(
    State(host): State<Host>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<AfterQuery>,
) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let after = try_or_respond!(parse_after(&q));
    respond(host.snapshot(&caller, &id, after).await)
}

async fn replay(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    match host.replay(&caller, &id).await {
        Ok(text) => {
            let mut response = Response::new(Body::from(text));
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(gaos_kernel::replay::MEDIA_TYPE));
            response
        }
        Err(e) => e.into_response(),
    }
}

async fn transcript(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    match host.transcript(&caller, &id).await {
        Ok(text) => {
            let mut response = Response::new(Body::from(text));
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/jsonl"));
            response
        }
        Err(e) => e.into_response(),
    }
}

/// Decrements the open-stream gauge when a stream ends.
struct StreamGuard(Arc<crate::metrics::Metrics>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::Relaxed);
    }
}

struct StreamState {
    initial: std::vec::IntoIter<Arc<StreamItem>>,
    live: broadcast::Receiver<Arc<StreamItem>>,
    _guard: StreamGuard,
    done: bool,
}

async fn stream(
    State(host): State<Host>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<AfterQuery>,
) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let after = try_or_respond!(parse_after(&q));
    let subscription = try_or_respond!(host.subscribe(&caller, &id, after).await);
    host.metrics().open_streams.fetch_add(1, Ordering::Relaxed);
    let state = StreamState {
        initial: subscription.initial.into_iter(),
        live: subscription.live,
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
        match state.live.recv().await {
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
    sse(events)
}

fn sse(events: impl Stream<Item = Result<Event, Infallible>> + Send + 'static) -> Response {
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

/// Optional JSON body of lease routes (`{"reason"}`; operator pause: `{"seat"}`).
async fn read_optional_json(body: Body) -> Result<Value, HostError> {
    match read_json(body, "invalid_request").await {
        Ok(v) => Ok(v),
        Err(e) if e.code == "invalid_request" && e.message.contains("must be a JSON value") => {
            Ok(Value::Object(Default::default()))
        }
        Err(e) => Err(e),
    }
}

fn reason_of(body: &Value, default: &str) -> Result<String, HostError> {
    match body.get("reason") {
        None => Ok(default.to_owned()),
        Some(Value::String(r)) if !r.trim().is_empty() && r.len() <= 1024 => Ok(r.clone()),
        Some(_) => Err(HostError::invalid_request("reason must be a non-empty string of at most 1024 bytes")),
    }
}

/// A lease route: `op` makes the route's [`LeaseOp`] from the body.
async fn lease_route(
    host: Host,
    headers: HeaderMap,
    id: String,
    body: Body,
    op: impl FnOnce(&Value) -> Result<LeaseOp, HostError>,
) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let presented = try_or_respond!(presented(&headers));
    let body = try_or_respond!(read_optional_json(body).await);
    let op = try_or_respond!(op(&body));
    let seat = body.get("seat").and_then(Value::as_str).map(str::to_owned);
    respond(host.lease(&caller, &id, presented, op, seat).await)
}

async fn renew(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    lease_route(host, headers, id, body, |_| Ok(LeaseOp::Renew)).await
}
async fn heartbeat(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    lease_route(host, headers, id, body, |_| Ok(LeaseOp::Heartbeat)).await
}
async fn pause(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    lease_route(host, headers, id, body, |body| reason_of(body, "paused").map(LeaseOp::Pause)).await
}
async fn resume(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    lease_route(host, headers, id, body, |_| Ok(LeaseOp::Resume)).await
}
async fn stop(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    lease_route(host, headers, id, body, |body| reason_of(body, "stopped").map(LeaseOp::Stop)).await
}

async fn lease_info(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let presented = try_or_respond!(presented(&headers));
    respond(host.lease_info(&caller, &id, presented).await)
}

async fn emergency_stop(State(host): State<Host>, headers: HeaderMap, Path(id): Path<String>, body: Body) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let body = try_or_respond!(read_optional_json(body).await);
    let reason = try_or_respond!(reason_of(&body, "emergency_stop"));
    respond(host.emergency_stop(&caller, &id, reason).await)
}

async fn reconcile(State(host): State<Host>, headers: HeaderMap) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    match host.reconcile_report(&caller) {
        Ok(v) => json_response(StatusCode::OK, &v),
        Err(e) => e.into_response(),
    }
}

async fn advance_clock(State(host): State<Host>, headers: HeaderMap, body: Body) -> Response {
    let caller = try_or_respond!(caller(&host, &headers));
    let body = try_or_respond!(read_json(body, "invalid_request").await);
    let ms = try_or_respond!(
        body.get("advanceMs")
            .and_then(Value::as_i64)
            .ok_or_else(|| HostError::invalid_request("body must be {\"advanceMs\": N}"))
    );
    match host.advance_clock(&caller, ms).await {
        Ok(v) => json_response(StatusCode::OK, &v),
        Err(e) => e.into_response(),
    }
}

async fn healthz() -> Response {
    json_text(StatusCode::OK, "{\"status\":\"ok\"}".into())
}

async fn metrics(State(host): State<Host>) -> Response {
    let mut response = Response::new(Body::from(host.metrics().render()));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4"));
    response
}

async fn openapi() -> Response {
    json_text(StatusCode::OK, crate::openapi::document())
}

async fn not_found() -> Response {
    HostError::not_found("not_found", "no such route; see /openapi.json").into_response()
}

async fn method_not_allowed() -> Response {
    HostError::new(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "this route does not take that method")
        .into_response()
}

/// Count requests (for `/metrics`).
async fn count_requests(
    State(host): State<Host>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    host.metrics().http_requests.fetch_add(1, Ordering::Relaxed);
    next.run(request).await
}

/// The router of a host.
pub fn router(host: Host) -> Router {
    Router::new()
        .route("/v1/sessions", post(create).get(list))
        .route("/v1/sessions/{id}/tick", get(observe))
        .route("/v1/sessions/{id}/actions", post(act))
        .route("/v1/sessions/{id}/attach", post(attach))
        .route("/v1/sessions/{id}/finalize", post(finalize))
        .route("/v1/sessions/{id}/seats/{seat}/token", post(reissue))
        .route("/v1/sessions/{id}/snapshot", get(snapshot))
        .route("/v1/sessions/{id}/stream", get(stream))
        .route("/v1/sessions/{id}/replay", get(replay))
        .route("/v1/sessions/{id}/transcript", get(transcript))
        .route("/v1/sessions/{id}/lease", get(lease_info))
        .route("/v1/sessions/{id}/lease/renew", post(renew))
        .route("/v1/sessions/{id}/lease/heartbeat", post(heartbeat))
        .route("/v1/sessions/{id}/pause", post(pause))
        .route("/v1/sessions/{id}/resume", post(resume))
        .route("/v1/sessions/{id}/stop", post(stop))
        .route("/v1/sessions/{id}/emergency-stop", post(emergency_stop))
        .route("/v1/admin/reconcile", get(reconcile))
        .route("/v1/admin/clock", post(advance_clock))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(host.clone(), count_requests))
        .with_state(host)
}
