//! Requests are types. Every body a route takes is read once, at the HTTP
//! edge (`http/extract.rs`: one extractor per request), into one of these,
//! and [`Host`](crate::Host) and the session actors take them; no JSON body
//! travels below the extractors (a piece the contract leaves opaque, such as
//! a command, a game's level or product `extensions`, stays JSON inside its
//! typed request). In-process callers build the same types with
//! `from_value`, so they pass the same checks an HTTP caller does.
//!
//! A body is decoded whole before anything but the caller's token is looked
//! at: a body of the wrong shape is `400 invalid_request` whoever sends it
//! and whatever state the session is in, and changes nothing (issue 15). The
//! act is the exception: [`ActRequest`] keeps the kernel's lenient
//! submission, so its refusals keep the documented order (the session's
//! state, not an object, `participantId`, `sessionId`, the exact retry, the
//! lease, then the kernel's own checks).
//!
//! Requests whose answer is stored for exact retries (create, act, attach,
//! finalize) keep their body's fingerprint: the SHA-256 of its canonical
//! JSON ([`crate::answers::fingerprint`]), written in the same pass that
//! reads the act's command size.

mod act;
mod attach;
mod create;
mod finalize;
mod lease;
mod reset;
mod seat_signature;

pub use act::ActRequest;
pub use attach::AttachRequest;
pub use create::CreateRequest;
pub use finalize::FinalizeRequest;
pub use lease::{ClockRequest, EmergencyStopRequest, LeaseRequest, LeaseRoute, ReissueRequest};
pub use reset::ResetRequest;
pub use seat_signature::SeatSignatureRequest;

pub(crate) use create::{LeaseAsk, check_seats};

use gaos_json::{Map, Value};
use gaos_session::ErrorCode;

use crate::error::HostError;

/// A request read from a JSON body: what the extractor of its route builds.
pub(crate) trait FromBody: Sized {
    /// What a body that is not JSON is refused with.
    const MALFORMED: ErrorCode = ErrorCode::InvalidRequest;
    /// Whether no body at all reads as `{}` (routes whose fields are all
    /// optional).
    const OPTIONAL: bool = false;
    /// Decode the body.
    fn from_body(body: Value) -> Result<Self, HostError>;
}

/// `body` as an object whose keys are all in `allowed` (`route` names the
/// route in the refusal). `[]`, `42`, `null` or `"x"` are never read as `{}`.
pub(crate) fn object_with<'a>(body: &'a Value, route: &str, allowed: &[&str]) -> Result<&'a Map, HostError> {
    let map = body.as_object().ok_or_else(|| {
        let shape = if allowed.is_empty() {
            "no body or {}".to_owned()
        } else {
            format!("a JSON object (fields: {})", allowed.join(", "))
        };
        HostError::invalid_request(format!("the {route} body must be {shape}"))
    })?;
    if let Some(key) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        let known =
            if allowed.is_empty() { "it takes none".to_owned() } else { format!("known: {}", allowed.join(", ")) };
        return Err(HostError::invalid_request(format!("unknown {route} field {key:?} ({known})")));
    }
    Ok(map)
}

/// A non-blank `requestId` (attach, finalize).
fn request_id(map: &Map) -> Result<String, HostError> {
    map.get("requestId")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
        .ok_or_else(|| HostError::invalid_request("requestId must be a non-blank string"))
}

/// An optional `extensions` object (attach, finalize).
fn extensions(map: &Map) -> Result<Option<Map>, HostError> {
    match map.get("extensions") {
        None => Ok(None),
        Some(Value::Object(ext)) => Ok(Some(ext.clone())),
        Some(_) => Err(HostError::invalid_request("extensions must be a JSON object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value {
        gaos_json::parse(text).expect("JSON")
    }

    #[test]
    fn only_objects_with_known_fields_pass() {
        for bad in ["[]", "42", "null", "\"x\"", "true", "{\"bogus\":1}"] {
            let refused = object_with(&json(bad), "stop", &["reason"]).expect_err(bad);
            assert_eq!(refused.code, "invalid_request", "{bad}");
        }
        assert!(object_with(&json("{}"), "renew", &[]).is_ok());
        assert!(object_with(&json("{\"reason\":\"r\"}"), "stop", &["reason"]).is_ok());
        assert!(object_with(&json("{\"reason\":\"r\"}"), "renew", &[]).is_err());
    }

    #[test]
    fn request_ids_are_non_blank_strings_and_extensions_objects() {
        let map = |t: &str| json(t).as_object().cloned().expect("object");
        assert_eq!(request_id(&map(r#"{"requestId":"r"}"#)).expect("id"), "r");
        for bad in [r#"{}"#, r#"{"requestId":" "}"#, r#"{"requestId":5}"#] {
            assert!(request_id(&map(bad)).is_err(), "{bad}");
        }
        assert_eq!(extensions(&map("{}")).expect("none"), None);
        assert!(extensions(&map(r#"{"extensions":{"a":1}}"#)).expect("object").is_some());
        assert!(extensions(&map(r#"{"extensions":[1]}"#)).is_err());
    }
}
