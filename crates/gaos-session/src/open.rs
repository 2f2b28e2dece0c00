//! Opening a handle, written once over the transport calls:
//! `createSessionHandle` ([`LifecycleHandle::create`]), `attachSessionHandle`
//! ([`LifecycleHandle::attach`]) and adopting a seat's durable head
//! ([`LifecycleHandle::adopt_head`]). The in-process handle (gaos-host) and
//! the HTTP handle (gaos-client) only supply the calls ([`SessionOpener`],
//! [`SessionTransport::attach`], [`SessionTransport::observe`]), so which
//! seat a create opens, how an answer is checked and which lease a handle
//! presents cannot differ between them.
//!
//! With no seat named (neither `participantId` nor `seats`), a create opens
//! seat `"player"`: lifecycle spec §1 and §4 (`createSessionHandle(request,
//! policy, participantId = "player")`; "single-seat hosts should use it").
//! The request then names it (`participantId`), so the host's creator and
//! the handle's seat are one seat, and a game without that seat is refused
//! before any session exists.

use gaos_json::{Map, Value};

use crate::adopt::existing_head_from_observation;
use crate::answers::{LeaseGrant, SessionCredentials, credentials_in, parse_session_attach};
use crate::error::SessionError;
use crate::error_code::ErrorCode;
use crate::handle::{BoxFuture, LifecycleHandle, SessionTransport};
use crate::observation::{Observation, announces_terminal};
use crate::policy::SessionPolicy;
use crate::requests::AttachRequest;

/// The seat a create opens when its request names none (lifecycle spec §1, §4).
pub const DEFAULT_CREATOR_SEAT: &str = "player";

/// The operator's side of a host: the calls a create needs before any
/// seat's handle exists.
pub trait SessionOpener: Send + Sync {
    /// The transport of one seat's handle.
    type Transport: SessionTransport;

    /// `POST /v1/sessions` as the operator with exactly this body: the
    /// host's answer, read as an envelope.
    fn create_session<'a>(&'a self, body: &'a Value) -> BoxFuture<'a, Result<Observation, SessionError>>;

    /// The transport of `seat` of `session_id`, acting with the seat's
    /// bearer `token`.
    fn seat_transport(&self, session_id: &str, seat: &str, token: &str) -> Result<Self::Transport, SessionError>;
}

/// What [`LifecycleHandle::create`] returns: the creator seat's handle at
/// the durable head, and the credentials for the other seats.
#[derive(Debug)]
pub struct CreatedHandle<T> {
    /// The new session.
    pub session_id: String,
    /// The creator seat: the request's `participantId`, else its first
    /// `seats` entry, else [`DEFAULT_CREATOR_SEAT`].
    pub creator: String,
    /// The creator seat's handle (holding the creator's controller lease,
    /// when the create asked for one).
    pub handle: LifecycleHandle<T>,
    /// Every seat's token and the spectator's.
    pub credentials: SessionCredentials,
}

/// The seat a create request opens, and the request as sent (naming
/// [`DEFAULT_CREATOR_SEAT`] when it named no seat; `true` then).
fn creator_of(mut body: Map) -> (String, Map, bool) {
    // A seat named in a shape the host refuses opens no seat: the host's
    // refusal is the answer.
    if let Some(named) = body.get("participantId") {
        return (named.as_str().unwrap_or_default().to_owned(), body, false);
    }
    if let Some(seats) = body.get("seats") {
        let first = seats.as_array().and_then(|s| s.first()).and_then(Value::as_str).unwrap_or_default();
        return (first.to_owned(), body, false);
    }
    body.insert("participantId".into(), DEFAULT_CREATOR_SEAT.into());
    (DEFAULT_CREATOR_SEAT.to_owned(), body, true)
}

impl<T: SessionTransport> LifecycleHandle<T> {
    /// `createSessionHandle(request, policy)`: create a session as the
    /// operator with `{...request, policy}` and open the creator seat's
    /// handle (see the module doc for which seat that is) with the seat
    /// token of the answer, presenting the creator's lease if the create
    /// asked for one.
    pub async fn create<O: SessionOpener<Transport = T>>(
        opener: &O,
        request: &Value,
        policy: &SessionPolicy,
    ) -> Result<CreatedHandle<T>, SessionError> {
        let mut body = request
            .as_object()
            .cloned()
            .ok_or_else(|| SessionError::InvalidArgument("the create request must be a JSON object".into()))?;
        body.insert("policy".into(), policy.value().clone());
        let (creator, body, defaulted) = creator_of(body);
        let observation = opener.create_session(&Value::Object(body)).await.map_err(|e| match e {
            SessionError::Host { status, code: Some(ErrorCode::InvalidRequest), message }
                if defaulted && message.contains("participantId") =>
            {
                SessionError::Host {
                    status,
                    code: Some(ErrorCode::InvalidRequest),
                    message: format!(
                        "{message}: the create request named no seat, so the handle opens seat \
                         {DEFAULT_CREATOR_SEAT:?} (lifecycle spec §4); name the creator seat with participantId"
                    ),
                }
            }
            other => other,
        })?;
        if observation.is_pending() {
            return Err(SessionError::Protocol(
                "a create answer must be a resolved envelope (kind \"tick\"), not pending".into(),
            ));
        }
        let credentials = credentials_in(observation.extensions())
            .map_err(SessionError::Protocol)?
            .ok_or_else(|| SessionError::Protocol("the create answer carries no seat credentials".into()))?;
        let session_id = observation.session_id().to_owned();
        let token = credentials.seat(&creator).ok_or_else(|| {
            SessionError::Protocol(format!("the create answer has no token for the creator seat {creator:?}"))
        })?;
        let transport = opener.seat_transport(&session_id, &creator, token)?;
        transport.present_lease(LeaseGrant::token_in(observation.extensions()))?;
        let binding = observation.binding(&creator);
        let handle = LifecycleHandle::new(transport, binding, policy.clone(), None, observation.announces_terminal())?;
        Ok(CreatedHandle { session_id, creator, handle, credentials })
    }

    /// `attachSessionHandle`: attach the seat of `transport` at the
    /// session's durable head. A controller that differs from the policy's
    /// is refused before anything is sent; the answer is checked
    /// ([`parse_session_attach`]), and the handle keeps its receipt and
    /// presents any lease the attach granted.
    pub async fn attach(
        transport: T,
        session_id: &str,
        request: &AttachRequest,
        policy: &SessionPolicy,
    ) -> Result<Self, SessionError> {
        request.check_against(policy)?;
        let answer = transport.attach(session_id, request).await?;
        let attached = parse_session_attach(&answer, session_id, request)
            .map_err(|why| SessionError::Protocol(format!("attach answer: {why}")))?;
        transport.present_lease(LeaseGrant::token_in(attached.extensions.as_ref()))?;
        let terminal = announces_terminal(attached.extensions.as_ref());
        LifecycleHandle::new(transport, attached.binding, policy.clone(), attached.receipt, terminal)
    }

    /// `createSessionHandleFromExisting` at `seat`'s current head: observe
    /// as the seat, then adopt that envelope (no attach, so it works on a
    /// finalized session too).
    pub async fn adopt_head(
        transport: T,
        session_id: &str,
        seat: &str,
        policy: &SessionPolicy,
    ) -> Result<Self, SessionError> {
        let observation = transport.observe(session_id).await?;
        let existing = existing_head_from_observation(session_id, seat, observation.to_value())?;
        LifecycleHandle::from_existing(transport, &existing, policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(text: &str) -> Map {
        gaos_json::parse(text).expect("JSON").as_object().cloned().expect("an object")
    }

    #[test]
    fn a_create_opens_the_named_seat_else_the_first_declared_else_player() {
        let (seat, body, defaulted) = creator_of(map(r#"{"game":"g","participantId":"b","seats":["a","b"]}"#));
        assert_eq!((seat.as_str(), defaulted), ("b", false));
        assert_eq!(body, map(r#"{"game":"g","participantId":"b","seats":["a","b"]}"#));
        let (seat, _, defaulted) = creator_of(map(r#"{"game":"g","seats":["x","y"]}"#));
        assert_eq!((seat.as_str(), defaulted), ("x", false));
        let (_, body, defaulted) = creator_of(map(r#"{"game":"g","participantId":5}"#));
        assert!(
            !defaulted && body.get("participantId") == Some(&Value::from(5)),
            "the host refuses it, not the handle"
        );
        let (seat, body, defaulted) = creator_of(map(r#"{"game":"g"}"#));
        assert_eq!((seat.as_str(), defaulted), ("player", true));
        assert_eq!(body, map(r#"{"game":"g","participantId":"player"}"#), "the request names the seat it opens");
    }
}
