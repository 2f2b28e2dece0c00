//! The HTTP side of [`crate::frames`]: bearer check, body limit, and the
//! re-simulation off the async threads.

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::WebOptions;
use crate::frames::{FramesError, frames};

/// Replays up to this size (a long maze episode is well under 1 MiB).
const MAX_REPLAY_BYTES: usize = 8 * 1024 * 1024;

pub(crate) fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = gaos_json::canonical_json(&gaos_json::obj! { "code" => code, "error" => message }.into());
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")).map(str::trim)
}

/// The 401 answer for a request without a token of this host, if it has none.
pub(crate) fn bearer_error(options: &WebOptions, headers: &HeaderMap) -> Option<Response> {
    match bearer(headers) {
        Some(token) if (options.authorize)(token) => None,
        Some(_) => Some(error(StatusCode::UNAUTHORIZED, "unauthorized", "the bearer token is not valid on this host")),
        None => {
            Some(error(StatusCode::UNAUTHORIZED, "unauthorized", "send a token of this host as Authorization: Bearer"))
        }
    }
}

async fn replay_frames(State(options): State<WebOptions>, headers: HeaderMap, body: String) -> Response {
    if let Some(refused) = bearer_error(&options, &headers) {
        return refused;
    }
    let registry = options.registry.clone();
    match tokio::task::spawn_blocking(move || frames(&registry, &body)).await {
        Ok(Ok(json)) => (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Ok(Err(e @ FramesError::Malformed(_))) | Ok(Err(e @ FramesError::UnknownGame(..))) => {
            error(StatusCode::UNPROCESSABLE_ENTITY, e.code(), &e.to_string())
        }
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal", "re-simulating the replay failed"),
    }
}

pub(crate) fn router(options: WebOptions) -> Router {
    Router::new()
        .route("/v1/replays/frames", post(replay_frames))
        .layer(DefaultBodyLimit::max(MAX_REPLAY_BYTES))
        .with_state(options)
}
