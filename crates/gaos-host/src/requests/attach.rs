//! `POST /v1/sessions/{id}/attach`: `SessionAttachRequest` plus the
//! host's `lease`.

use gaos_json::Value;
use gaos_session::policy::SessionControllerIdentity;

use super::{FromBody, LeaseAsk, extensions, request_id};
use crate::answers::fingerprint;
use crate::error::HostError;

/// `{requestId, participantId?, controller?, extensions?, lease?}`, checked.
#[derive(Debug, Clone)]
pub struct AttachRequest {
    /// Idempotency key (non-blank).
    pub(crate) request_id: String,
    /// The seat the body names; the actor checks it is the token's.
    pub(crate) participant_id: Option<String>,
    /// The controller identity, valid (lifecycle spec §2).
    pub(crate) controller: Option<SessionControllerIdentity>,
    /// A lease-aware attach: the claim it asks for (bounds checked by the actor).
    pub(crate) lease: Option<LeaseAsk>,
    /// RFC-010: the seat's key entry to register (checked by the actor,
    /// which knows whether the session waits for it; `actor/seat_keys.rs`).
    pub(crate) seat_key: Option<Value>,
    /// SHA-256 of the body's canonical JSON.
    pub(crate) fingerprint: String,
}

impl AttachRequest {
    /// Read and check an attach body.
    pub fn from_value(body: Value) -> Result<Self, HostError> {
        const FIELDS: [&str; 6] = ["requestId", "participantId", "controller", "extensions", "lease", "seatKey"];
        let map =
            body.as_object().ok_or_else(|| HostError::invalid_request("the attach body must be a JSON object"))?;
        if let Some(key) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(HostError::invalid_request(format!("unknown attach field {key:?}")));
        }
        let request_id = request_id(map)?;
        let participant_id = match map.get("participantId") {
            None => None,
            Some(Value::String(seat)) => Some(seat.clone()),
            Some(_) => return Err(HostError::invalid_request("participantId must be a seat id (a string)")),
        };
        let controller = map
            .get("controller")
            .map(SessionControllerIdentity::from_value)
            .transpose()
            .map_err(HostError::invalid_request)?;
        // Product extensions: an object, not read by the host.
        extensions(map)?;
        let lease = map.get("lease").map(LeaseAsk::from_value).transpose()?;
        let seat_key = map.get("seatKey").cloned();
        Ok(AttachRequest { request_id, participant_id, controller, lease, seat_key, fingerprint: fingerprint(&body) })
    }

    /// The request an HTTP client sending `request` makes.
    pub fn from_session(request: &gaos_session::AttachRequest) -> Result<Self, HostError> {
        Self::from_value(request.to_value())
    }

    /// The controller as JSON (pinned, compared and put in receipts as such).
    pub(crate) fn controller_value(&self) -> Option<Value> {
        self.controller.as_ref().map(SessionControllerIdentity::to_value)
    }
}

impl FromBody for AttachRequest {
    fn from_body(body: Value) -> Result<Self, HostError> {
        Self::from_value(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<AttachRequest, HostError> {
        AttachRequest::from_value(gaos_json::parse(text).expect("JSON"))
    }

    #[test]
    fn an_attach_body_is_read_whole() {
        let request = read(r#"{"requestId":"r","participantId":"a","controller":{"kind":"cli","id":"c"},"lease":{}}"#)
            .expect("valid");
        assert_eq!((request.request_id.as_str(), request.participant_id.as_deref()), ("r", Some("a")));
        assert_eq!(
            request.controller_value().map(|c| gaos_json::canonical_json(&c)).as_deref(),
            Some(r#"{"id":"c","kind":"cli"}"#)
        );
        assert_eq!(request.lease, Some(LeaseAsk { duration_ms: None }));
        for bad in [
            "[]",
            "{}",
            r#"{"requestId":7}"#,
            r#"{"requestId":"r","revision":0}"#,
            r#"{"requestId":"r","controller":{"kind":"robot"}}"#,
            r#"{"requestId":"r","extensions":[1]}"#,
            r#"{"requestId":"r","lease":5}"#,
            r#"{"requestId":"r","participantId":5}"#,
        ] {
            assert_eq!(read(bad).expect_err(bad).code, "invalid_request", "{bad}");
        }
    }
}
