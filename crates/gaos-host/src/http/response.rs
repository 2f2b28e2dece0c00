//! How host results become HTTP responses: JSON with exact body bytes,
//! `Cache-Control: no-store`, and errors as `{"error", "code", ...}` with
//! their status ([`HostError`]'s one `IntoResponse`).

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use gaos_json::Value;

use crate::answers::Answer;
use crate::error::HostError;

/// A JSON response with exact body bytes.
pub(crate) fn json_text(status: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A JSON response of a value (canonical JSON).
pub(crate) fn json_response(status: StatusCode, value: &Value) -> Response {
    json_text(status, gaos_json::canonical_json(value))
}

/// A text response of `media_type` (replays, transcripts).
pub(crate) fn text(media_type: &'static str, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    response
}

impl IntoResponse for HostError {
    fn into_response(self) -> Response {
        let mut response = json_response(self.status, &self.body());
        if self.code == gaos_session::ErrorCode::Fenced {
            // The routing layer of a cluster routes the request again.
            response.extensions_mut().insert(super::FencedHere);
        }
        response
    }
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        json_text(StatusCode::from_u16(self.status).unwrap_or(StatusCode::OK), self.body)
    }
}
