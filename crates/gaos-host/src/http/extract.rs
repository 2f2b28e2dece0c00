//! Axum extractors with the host's own error mapping: the caller (bearer
//! token), the presented controller lease (`Gaos-Lease`, `Gaos-Lease-Epoch`)
//! and one per request body (at most [`BODY_LIMIT`] bytes), which reads the
//! body once into its typed request (`crate::requests`). A refusal is a
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
use crate::requests::{
    ActRequest, AttachRequest, ClockRequest, CreateRequest, EmergencyStopRequest, FinalizeRequest, FromBody,
    LeaseRequest, LeaseRoute, ReissueRequest, ResetRequest, SeatSignatureRequest,
};

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

/// One extractor per request body: the body read once (at most
/// [`BODY_LIMIT`] bytes), parsed and decoded into the route's typed request
/// (`crate::requests`). A body that is not JSON is refused with the
/// request's own code (`invalid_submission` for an act, `invalid_request`
/// otherwise); no body at all is `{}` where every field is optional.
macro_rules! body_extractor {
    ($($request:ty),* $(,)?) => {$(
        impl<S: Send + Sync> FromRequest<S> for $request {
            type Rejection = HostError;

            async fn from_request(request: Request, _: &S) -> Result<Self, HostError> {
                decode(request.into_body()).await
            }
        }
    )*};
}

body_extractor!(
    CreateRequest,
    ActRequest,
    AttachRequest,
    ResetRequest,
    FinalizeRequest,
    EmergencyStopRequest,
    ReissueRequest,
    ClockRequest,
    SeatSignatureRequest
);

/// Read `body` and decode it as `T`.
async fn decode<T: FromBody>(body: Body) -> Result<T, HostError> {
    let value = match read_json(body, T::MALFORMED).await? {
        Some(value) => value,
        None if T::OPTIONAL => Value::Object(Default::default()),
        None => return Err(HostError::new(T::MALFORMED, "the request body must be a JSON value")),
    };
    T::from_body(value)
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

/// The lease route a [`LeaseCall`] was sent to (a type per route, so each
/// handler names its own).
pub(crate) trait LeaseRouteOf {
    const ROUTE: LeaseRoute;
}

macro_rules! lease_routes {
    ($($name:ident),* $(,)?) => {$(
        pub(crate) struct $name;

        impl LeaseRouteOf for $name {
            const ROUTE: LeaseRoute = LeaseRoute::$name;
        }
    )*};
}

lease_routes!(Renew, Heartbeat, Release, Pause, Resume, Stop);

/// What every lease route reads, in the order the routes always read it:
/// the session id, the caller, the presented lease, then the optional body
/// (`{"reason"}`; the operator's pause also `{"seat"}`), decoded for route `R`.
pub(crate) struct LeaseCall<R> {
    pub id: String,
    pub caller: Caller,
    pub presented: Presented,
    pub request: LeaseRequest,
    route: std::marker::PhantomData<R>,
}

impl<R: LeaseRouteOf> FromRequest<Host> for LeaseCall<R> {
    type Rejection = HostError;

    async fn from_request(request: Request, host: &Host) -> Result<Self, HostError> {
        let (mut parts, body) = request.into_parts();
        let Path(id) = Path::<String>::from_request_parts(&mut parts, host)
            .await
            .map_err(|e| HostError::invalid_request(format!("bad session path: {e}")))?;
        let caller = Caller::from_request_parts(&mut parts, host).await?;
        let presented = Presented::from_request_parts(&mut parts, host).await?;
        let value =
            read_json(body, ErrorCode::InvalidRequest).await?.unwrap_or_else(|| Value::Object(Default::default()));
        let request = LeaseRequest::from_value(R::ROUTE, value)?;
        Ok(Self { id, caller, presented, request, route: std::marker::PhantomData })
    }
}
