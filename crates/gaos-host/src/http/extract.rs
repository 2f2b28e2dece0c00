//! Axum extractors with the host's own error mapping: the caller (bearer
//! token), the presented controller lease (`Gaos-Lease`, `Gaos-Lease-Epoch`)
//! and JSON bodies of at most [`BODY_LIMIT`] bytes. A refusal is a
//! [`HostError`], answered like every other one.

use axum::body::Body;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use gaos_json::Value;
use gaos_session::ErrorCode;
use http_body_util::BodyExt;

use crate::auth::{Caller, bearer, token_hash};
use crate::error::HostError;
use crate::host::Host;
use crate::lease::Presented;

/// Largest request body accepted.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// The caller, from `Authorization: Bearer <token>`.
impl FromRequestParts<Host> for Caller {
    type Rejection = HostError;

    async fn from_request_parts(parts: &mut Parts, host: &Host) -> Result<Self, HostError> {
        host.resolve_caller(bearer(&parts.headers)).await
    }
}

/// `Gaos-Lease` / `Gaos-Lease-Epoch` of a lease-aware caller.
impl<S: Send + Sync> FromRequestParts<S> for Presented {
    type Rejection = HostError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, HostError> {
        let headers = &parts.headers;
        let token_hash = match headers.get("gaos-lease") {
            None => None,
            Some(v) => {
                let token =
                    v.to_str().map_err(|_| HostError::invalid_request("Gaos-Lease must be a visible ASCII token"))?;
                Some(token_hash(token.trim()))
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
}

/// A required JSON body; a malformed one is 400 `invalid_request`.
pub(crate) struct JsonBody(pub Value);

/// A command submission body; a malformed one is 400 `invalid_submission`
/// (lifecycle.md §1: what the reference answers for an unreadable act).
pub(crate) struct SubmissionBody(pub Value);

/// An optional JSON body (lease routes, emergency stop): none is `{}`.
pub(crate) struct OptionalJsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = HostError;

    async fn from_request(request: Request, _: &S) -> Result<Self, HostError> {
        required(request.into_body(), ErrorCode::InvalidRequest).await.map(JsonBody)
    }
}

impl<S: Send + Sync> FromRequest<S> for SubmissionBody {
    type Rejection = HostError;

    async fn from_request(request: Request, _: &S) -> Result<Self, HostError> {
        required(request.into_body(), ErrorCode::InvalidSubmission).await.map(SubmissionBody)
    }
}

impl<S: Send + Sync> FromRequest<S> for OptionalJsonBody {
    type Rejection = HostError;

    async fn from_request(request: Request, _: &S) -> Result<Self, HostError> {
        let value = read_json(request.into_body(), ErrorCode::InvalidRequest).await?;
        Ok(OptionalJsonBody(value.unwrap_or_else(|| Value::Object(Default::default()))))
    }
}

async fn required(body: Body, malformed_code: ErrorCode) -> Result<Value, HostError> {
    read_json(body, malformed_code.clone())
        .await?
        .ok_or_else(|| HostError::new(malformed_code.clone(), "the request body must be a JSON value"))
}

/// Read a JSON body (at most [`BODY_LIMIT`] bytes); `None` when it is
/// empty or only whitespace.
async fn read_json(body: Body, malformed_code: ErrorCode) -> Result<Option<Value>, HostError> {
    let mut body = body;
    let mut bytes: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| HostError::new(malformed_code.clone(), format!("could not read the body: {e}")))?;
        if let Some(data) = frame.data_ref() {
            if bytes.len() + data.len() > BODY_LIMIT {
                return Err(HostError::new(
                    ErrorCode::PayloadTooLarge,
                    format!("request bodies are limited to {BODY_LIMIT} bytes"),
                ));
            }
            bytes.extend_from_slice(data);
        }
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    gaos_json::parse_bytes(&bytes)
        .map(Some)
        .map_err(|e| HostError::new(malformed_code.clone(), format!("the request body is not valid JSON: {e}")))
}

/// What every lease route reads, in the order the routes always read it:
/// the session id, the caller, the presented lease, then the optional body
/// (`{"reason"}`; the operator's pause also `{"seat"}`).
pub(crate) struct LeaseCall {
    pub id: String,
    pub caller: Caller,
    pub presented: Presented,
    pub body: Value,
}

impl FromRequest<Host> for LeaseCall {
    type Rejection = HostError;

    async fn from_request(request: Request, host: &Host) -> Result<Self, HostError> {
        let (mut parts, body) = request.into_parts();
        let Path(id) = Path::<String>::from_request_parts(&mut parts, host)
            .await
            .map_err(|e| HostError::invalid_request(format!("bad session path: {e}")))?;
        let caller = Caller::from_request_parts(&mut parts, host).await?;
        let presented = Presented::from_request_parts(&mut parts, host).await?;
        let OptionalJsonBody(body) = OptionalJsonBody::from_request(Request::from_parts(parts, body), host).await?;
        Ok(Self { id, caller, presented, body })
    }
}
