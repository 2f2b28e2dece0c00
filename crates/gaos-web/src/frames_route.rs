//! The HTTP side of [`crate::frames`]: bearer check, a bounded number of
//! re-simulations at once, body limit, and the re-simulation off the async
//! threads.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use tokio::sync::Semaphore;

use crate::frames::{MAX_ANSWER_BYTES, frames};
use crate::{TokenRole, WebOptions};

/// Replays up to this size (a long maze episode is well under 1 MiB).
const MAX_REPLAY_BYTES: usize = 8 * 1024 * 1024;

/// How long a request waits for a re-simulation slot before `503 busy`.
/// Its body is read only once it has one, so waiting costs no memory.
const SLOT_WAIT: Duration = Duration::from_secs(10);

pub(crate) fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = gaos_json::canonical_json(&gaos_json::obj! { "code" => code, "error" => message }.into());
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")).map(str::trim)
}

/// Why a request has no token of this host (answered 401).
#[derive(Debug, Clone, Copy)]
pub(crate) enum NoToken {
    Missing,
    Invalid,
}

impl IntoResponse for NoToken {
    fn into_response(self) -> Response {
        let message = match self {
            NoToken::Missing => "send a token of this host as Authorization: Bearer",
            NoToken::Invalid => "the bearer token is not valid on this host",
        };
        error(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }
}

/// The role of the request's token.
pub(crate) fn bearer_role(options: &WebOptions, headers: &HeaderMap) -> Result<TokenRole, NoToken> {
    let token = bearer(headers).ok_or(NoToken::Missing)?;
    (options.authorize)(token).ok_or(NoToken::Invalid)
}

#[derive(Clone)]
struct FramesState {
    options: WebOptions,
    slots: Arc<Semaphore>,
}

async fn replay_frames(State(state): State<FramesState>, headers: HeaderMap, body: Body) -> Response {
    let role = match bearer_role(&state.options, &headers) {
        Ok(role) => role,
        Err(refused) => return refused.into_response(),
    };
    let Ok(Ok(slot)) = tokio::time::timeout(SLOT_WAIT, Arc::clone(&state.slots).acquire_owned()).await else {
        let mut busy = error(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            "the host is re-simulating as many replays as it runs at once; try again shortly",
        );
        busy.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return busy;
    };
    let text = match axum::body::to_bytes(body, MAX_REPLAY_BYTES).await.map(|b| String::from_utf8(b.to_vec())) {
        Ok(Ok(text)) => text,
        Ok(Err(_)) => return error(StatusCode::BAD_REQUEST, "invalid_request", "the replay is not UTF-8 text"),
        Err(_) => {
            let message = format!("a replay of at most {MAX_REPLAY_BYTES} bytes");
            return error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", &message);
        }
    };
    let registry = state.options.registry.clone();
    let any_level = role == TokenRole::Operator;
    let answer = tokio::task::spawn_blocking(move || {
        let answer = frames(&registry, &text, any_level, MAX_ANSWER_BYTES);
        drop(slot);
        answer
    })
    .await;
    match answer {
        Ok(Ok(json)) => (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Ok(Err(e)) => error(e.status(), e.code(), &e.to_string()),
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal", "re-simulating the replay failed"),
    }
}

/// Re-simulations the host runs at once: one per two cores, at least one,
/// so the replay viewer never takes the whole machine from the sessions.
fn slots() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().div_ceil(2))
}

pub(crate) fn router(options: WebOptions) -> Router {
    let state = FramesState { options, slots: Arc::new(Semaphore::new(slots())) };
    Router::new().route("/v1/replays/frames", post(replay_frames)).with_state(state)
}
