//! The lease routes (`/lease/renew`, `/lease/heartbeat`, `/lease/release`,
//! `/pause`, `/resume`, `/stop`), the operator's emergency stop, token
//! reissue and the test clock: small bodies, all fields optional but the
//! clock's.

use gaos_json::{Map, Value};

use super::{FromBody, object_with};
use crate::error::HostError;
use crate::lease::LeaseOp;

/// Which lease route a body was sent to: it decides the fields the body
/// may have and the operation it asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseRoute {
    Renew,
    Heartbeat,
    Release,
    Pause,
    Resume,
    Stop,
}

/// A lease route's request: its operation, and the seat an operator names
/// (`{"seat"}`; only a pause is the operator's to make, the others then
/// answer 403).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRequest {
    pub(crate) op: LeaseOp,
    pub(crate) seat: Option<String>,
}

impl LeaseRequest {
    /// A seat's own `op` (no seat named).
    pub fn new(op: LeaseOp) -> Self {
        LeaseRequest { op, seat: None }
    }

    /// The operator's `op` on `seat`.
    pub fn for_seat(op: LeaseOp, seat: impl Into<String>) -> Self {
        LeaseRequest { op, seat: Some(seat.into()) }
    }

    /// Read the body of `route` (no body is `{}`).
    pub fn from_value(route: LeaseRoute, body: Value) -> Result<Self, HostError> {
        let fields: &[&str] = match route {
            LeaseRoute::Pause | LeaseRoute::Stop => &["reason", "seat"],
            _ => &["seat"],
        };
        let map = object_with(&body, "lease route", fields)?;
        let op = match route {
            LeaseRoute::Renew => LeaseOp::Renew,
            LeaseRoute::Heartbeat => LeaseOp::Heartbeat,
            LeaseRoute::Release => LeaseOp::Release,
            LeaseRoute::Resume => LeaseOp::Resume,
            LeaseRoute::Pause => LeaseOp::Pause(reason(map, "paused")?),
            LeaseRoute::Stop => LeaseOp::Stop(reason(map, "stopped")?),
        };
        let seat = match map.get("seat") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(HostError::invalid_request("seat must be a seat id (a string)")),
        };
        Ok(LeaseRequest { op, seat })
    }
}

/// `POST /v1/sessions/{id}/emergency-stop` (operator): `{"reason"?}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmergencyStopRequest {
    pub(crate) reason: String,
}

impl EmergencyStopRequest {
    /// A stop for `reason`.
    pub fn new(reason: impl Into<String>) -> Self {
        EmergencyStopRequest { reason: reason.into() }
    }

    /// Read the body (no body is `{}`: the reason `emergency_stop`).
    pub fn from_value(body: Value) -> Result<Self, HostError> {
        let map = object_with(&body, "emergency-stop", &["reason"])?;
        Ok(EmergencyStopRequest { reason: reason(map, "emergency_stop")? })
    }
}

impl FromBody for EmergencyStopRequest {
    const OPTIONAL: bool = true;

    fn from_body(body: Value) -> Result<Self, HostError> {
        Self::from_value(body)
    }
}

/// `POST /v1/sessions/{id}/seats/{seat}/token` (operator): no body, or `{}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReissueRequest;

impl FromBody for ReissueRequest {
    const OPTIONAL: bool = true;

    fn from_body(body: Value) -> Result<Self, HostError> {
        object_with(&body, "seat token", &[]).map(|_| ReissueRequest)
    }
}

/// `POST /v1/admin/clock` (operator, `--test-clock`): `{"advanceMs": N}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockRequest {
    pub(crate) advance_ms: i64,
}

impl FromBody for ClockRequest {
    fn from_body(body: Value) -> Result<Self, HostError> {
        let advance_ms = object_with(&body, "admin/clock", &["advanceMs"])?
            .get("advanceMs")
            .and_then(Value::as_i64)
            .filter(|ms| *ms >= 0)
            .ok_or_else(|| HostError::invalid_request("body must be {\"advanceMs\": N} with N >= 0"))?;
        Ok(ClockRequest { advance_ms })
    }
}

/// The optional `reason` of a pause, stop or emergency stop.
fn reason(map: &Map, default: &str) -> Result<String, HostError> {
    match map.get("reason") {
        None => Ok(default.to_owned()),
        Some(Value::String(r)) if !r.trim().is_empty() && r.len() <= 1024 => Ok(r.clone()),
        Some(_) => Err(HostError::invalid_request("reason must be a non-empty string of at most 1024 bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value {
        gaos_json::parse(text).expect("JSON")
    }

    #[test]
    fn reasons_and_seats_are_typed() {
        let map = |t: &str| json(t).as_object().cloned().expect("object");
        assert_eq!(reason(&map("{}"), "stopped").expect("default"), "stopped");
        assert!(reason(&map("{\"reason\":5}"), "x").is_err());
        assert!(reason(&map("{\"reason\":\" \"}"), "x").is_err());
        let pause = LeaseRequest::from_value(LeaseRoute::Pause, json(r#"{"seat":"a"}"#)).expect("pause");
        assert_eq!(pause, LeaseRequest::for_seat(LeaseOp::Pause("paused".into()), "a"));
        assert!(LeaseRequest::from_value(LeaseRoute::Pause, json(r#"{"seat":1}"#)).is_err());
        assert!(
            LeaseRequest::from_value(LeaseRoute::Renew, json(r#"{"reason":"r"}"#)).is_err(),
            "renew takes no reason"
        );
    }

    #[test]
    fn the_small_bodies_are_objects_with_their_fields() {
        assert_eq!(EmergencyStopRequest::from_value(json("{}")).expect("default").reason, "emergency_stop");
        assert!(EmergencyStopRequest::from_value(json(r#"{"reason":{}}"#)).is_err());
        assert!(ReissueRequest::from_body(json("{}")).is_ok());
        assert!(ReissueRequest::from_body(json(r#"{"seat":5}"#)).is_err());
        assert_eq!(ClockRequest::from_body(json(r#"{"advanceMs":5}"#)).expect("clock").advance_ms, 5);
        for bad in [r#"{"advanceMs":"x"}"#, r#"{"advanceMs":-1}"#, r#"{"advanceMs":1.5}"#, "{}"] {
            assert!(ClockRequest::from_body(json(bad)).is_err(), "{bad}");
        }
    }
}
