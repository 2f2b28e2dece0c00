//! `POST /v1/games/{id}/render`: a game's own picture of a view the caller
//! already holds (`{view, seat}` → `{html}`), from [`Game::render`] — a
//! module's `render(view, seat)` export or a Rust game's method.
//!
//! The route reads no session: it draws exactly the view it is sent, so it
//! cannot show a caller anything the caller did not have. A game id holds
//! `/` for module games (`acme/duel`); the pages send it percent-encoded as
//! one path segment.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use gaos_json::Value;
use gaos_kernel::Game;

use crate::WebOptions;
use crate::frames_route::{bearer_role, error};

/// A view to draw is one position, not a replay.
const MAX_RENDER_REQUEST_BYTES: usize = 1024 * 1024;

/// Why a picture was not drawn.
#[derive(Debug, thiserror::Error)]
enum RenderError {
    #[error("the body is not valid JSON: {0}")]
    NotJson(String),
    #[error("{0}")]
    InvalidRequest(&'static str),
    #[error("the body is larger than {MAX_RENDER_REQUEST_BYTES} bytes")]
    TooLarge,
    #[error("this host serves no game {0:?}")]
    UnknownGame(String),
    #[error("game {0:?} has no renderer; show the view with the generic layout")]
    NoRenderer(String),
    #[error("{0}")]
    Failed(String),
}

impl RenderError {
    fn status(&self) -> StatusCode {
        match self {
            RenderError::NotJson(_) | RenderError::InvalidRequest(_) => StatusCode::BAD_REQUEST,
            RenderError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            RenderError::UnknownGame(_) | RenderError::NoRenderer(_) => StatusCode::NOT_FOUND,
            RenderError::Failed(_) => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            RenderError::NotJson(_) | RenderError::InvalidRequest(_) => "invalid_request",
            RenderError::TooLarge => "payload_too_large",
            RenderError::UnknownGame(_) => "unknown_game",
            RenderError::NoRenderer(_) => "no_renderer",
            RenderError::Failed(_) => "render_failed",
        }
    }

    fn into_response(self) -> Response {
        error(self.status(), self.code(), &self.to_string())
    }
}

/// The request body: the view, and whose view it is (`null`: the public view).
struct RenderRequest {
    view: Value,
    seat: Option<String>,
}

impl RenderRequest {
    fn parse(bytes: &[u8]) -> Result<RenderRequest, RenderError> {
        let text = std::str::from_utf8(bytes).map_err(|e| RenderError::NotJson(e.to_string()))?;
        let Value::Object(mut body) = gaos_json::parse(text).map_err(|e| RenderError::NotJson(e.to_string()))? else {
            return Err(RenderError::InvalidRequest("the body must be an object {view, seat}"));
        };
        if body.keys().any(|k| k != "view" && k != "seat") {
            return Err(RenderError::InvalidRequest("the body takes only the fields view and seat"));
        }
        let view = body.remove("view").ok_or(RenderError::InvalidRequest("the body is missing the field view"))?;
        let seat = match body.remove("seat") {
            None | Some(Value::Null) => None,
            Some(Value::String(seat)) if !seat.is_empty() => Some(seat),
            Some(_) => return Err(RenderError::InvalidRequest("seat must be a seat's name or null (the public view)")),
        };
        Ok(RenderRequest { view, seat })
    }
}

fn draw(game: &Arc<dyn Game>, id: &str, request: &RenderRequest) -> Result<String, RenderError> {
    // One picture's call shares nothing with another caller's (a module's
    // render gets a module instance of its own).
    let game = gaos_kernel::isolated(game);
    match game.render(&request.view, request.seat.as_deref()) {
        None => Err(RenderError::NoRenderer(id.to_owned())),
        Some(Err(e)) => Err(RenderError::Failed(e.to_string())),
        Some(Ok(html)) => Ok(gaos_json::canonical_json(&gaos_json::obj! { "html" => html }.into())),
    }
}

async fn render(State(options): State<WebOptions>, Path(id): Path<String>, headers: HeaderMap, body: Body) -> Response {
    if let Err(refused) = bearer_role(&options, &headers) {
        return refused.into_response();
    }
    let Some(game) = options.registry.get(&id) else {
        return RenderError::UnknownGame(id).into_response();
    };
    let bytes = match axum::body::to_bytes(body, MAX_RENDER_REQUEST_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => return RenderError::TooLarge.into_response(),
    };
    let request = match RenderRequest::parse(&bytes) {
        Ok(request) => request,
        Err(e) => return e.into_response(),
    };
    // A module's render runs JavaScript for up to its call time limit.
    match tokio::task::spawn_blocking(move || draw(&game, &id, &request)).await {
        Ok(Ok(json)) => (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Ok(Err(e)) => e.into_response(),
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the renderer stopped unexpectedly"),
    }
}

pub(crate) fn router(options: WebOptions) -> Router {
    Router::new().route("/v1/games/{id}/render", post(render)).with_state(options)
}
