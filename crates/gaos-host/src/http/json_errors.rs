//! Every error is JSON, also those produced before a handler runs: axum's
//! own rejections (a path segment that is not UTF-8, a malformed path) and
//! errors of routes mounted beside the host's (the `/mcp` transport). (What
//! hyper refuses before the router, 414, 431 and malformed heads, gets its
//! JSON body in `connections.rs`.) A
//! response of status 400 or more whose body is not JSON is rewritten to
//! `{"error": <its text>, "code": <by status>}` with the same status.

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::task::{Context, Poll};

use axum::body::to_bytes;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Either, Then};
use tower::{Layer, Service};

use gaos_session::ErrorCode;

use crate::error::HostError;

/// The most of a non-JSON error body kept as the message.
const MESSAGE_LIMIT: usize = 4 * 1024;

/// The `code` of an error that had none.
pub(crate) fn code_for(status: StatusCode) -> ErrorCode {
    match status {
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => ErrorCode::InvalidRequest,
        StatusCode::UNAUTHORIZED => ErrorCode::Unauthorized,
        StatusCode::FORBIDDEN => ErrorCode::Forbidden,
        StatusCode::NOT_FOUND => ErrorCode::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
        StatusCode::NOT_ACCEPTABLE => ErrorCode::NotAcceptable,
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
        StatusCode::URI_TOO_LONG => ErrorCode::UriTooLong,
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => ErrorCode::HeadersTooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ErrorCode::UnsupportedMediaType,
        StatusCode::SERVICE_UNAVAILABLE => ErrorCode::Unavailable,
        s if s.is_server_error() => ErrorCode::Internal,
        s => ErrorCode::Unknown(format!("http_{}", s.as_u16())),
    }
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// Whether `response` goes out as it is: no error, or an error in JSON.
fn answers_as_is(response: &Response) -> bool {
    response.status().as_u16() < 400 || is_json(response)
}

/// The layer that makes every error JSON, for routes mounted beside the
/// host's (the host's own get the same from `host_layer.rs`). A plain
/// service rather than `from_fn`, which boxes a clone of the route and a
/// future on every request: this one allocates only to rewrite an error.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonErrors;

impl<S> Layer<S> for JsonErrors {
    type Service = JsonErrorsService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        JsonErrorsService { inner }
    }
}

/// [`JsonErrors`] around one route.
#[derive(Debug, Clone)]
pub(crate) struct JsonErrorsService<S> {
    inner: S,
}

pub(super) type Answered = Result<Response, Infallible>;
/// An answer as it is, or the (rare) rewrite of a non-JSON error.
pub(super) type Rewritten = Either<Ready<Answered>, BoxFuture<'static, Answered>>;

pub(super) fn rewrite(answered: Answered) -> Rewritten {
    let Ok(response) = answered;
    if answers_as_is(&response) {
        return Either::Left(ready(Ok(response)));
    }
    Either::Right(Box::pin(async move { Ok(as_json(response).await) }))
}

impl<S> Service<Request> for JsonErrorsService<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Then<S::Future, Rewritten, fn(Answered) -> Rewritten>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        self.inner.call(request).then(rewrite as fn(Answered) -> Rewritten)
    }
}

/// `response` as it is when it is no error or already JSON, else its JSON
/// error with the same status.
pub(super) async fn as_json(response: Response) -> Response {
    if answers_as_is(&response) {
        return response;
    }
    let status = response.status();
    let (parts, body) = response.into_parts();
    let text = match to_bytes(body, MESSAGE_LIMIT).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_owned(),
        Err(_) => String::new(),
    };
    let message = if text.is_empty() { status.canonical_reason().unwrap_or("error").to_owned() } else { text };
    let mut json = HostError::new(code_for(status), message).with_status(status).into_response();
    // Keep the headers that matter to the caller (e.g. Allow, WWW-Authenticate).
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            json.headers_mut().insert(name.clone(), value.clone());
        }
    }
    json
}
