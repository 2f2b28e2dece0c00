//! The requests of the session contract: `SessionFinalizeRequest`,
//! `SessionAttachRequest`, and the default submission id rule of
//! `submitCommand` (lifecycle spec §2, §4).

use gaos_json::{Map, Value, canonical_json};
use serde::Serialize;

use crate::error::SessionError;
use crate::policy::{SessionControllerIdentity, SessionPolicy};

/// `SessionFinalizeRequest`: `{requestId, metadata?, extensions?}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FinalizeRequest {
    /// Idempotency key; `None` means the default `"finalize:<sessionId>"`.
    pub request_id: Option<String>,
    /// Product metadata, fixed by the first accepted finalize.
    pub metadata: Option<Map>,
    /// Product extensions.
    pub extensions: Option<Map>,
}

impl FinalizeRequest {
    /// A request with this id.
    pub fn with_id(request_id: impl Into<String>) -> Self {
        FinalizeRequest { request_id: Some(request_id.into()), ..FinalizeRequest::default() }
    }

    /// The request body for `session_id` (the default id filled in).
    pub fn to_value(&self, session_id: &str) -> Value {
        let request_id = self.request_id.clone().unwrap_or_else(|| format!("finalize:{session_id}"));
        let body = FinalizeBody { request_id, metadata: self.metadata.as_ref(), extensions: self.extensions.as_ref() };
        gaos_json::to_value(&body).expect("strings and JSON objects are always JSON values")
    }
}

/// The wire shape of a [`FinalizeRequest`] (its id filled in).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FinalizeBody<'a> {
    request_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<&'a Map>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extensions: Option<&'a Map>,
}

/// `SessionAttachRequest`: `{requestId, participantId?, controller?, extensions?, lease?, seatKey?}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachRequest {
    /// Idempotency key: the same id at the same revision returns the same receipt.
    pub request_id: String,
    /// The seat to attach (the host checks it against the credentials).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub participant_id: Option<String>,
    /// The controller; must equal the session's pinned controller, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<SessionControllerIdentity>,
    /// Product extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map>,
    /// A controller lease to claim with the attach (lease spec: a
    /// lease-aware attach); `None` attaches lease-unaware.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeaseRequest>,
    /// RFC-010: the seat's roster entry (`{id, publicKey, alg,
    /// signingTier}`, a `seatKeys` entry) registered with this attach, for a
    /// signed session created with the seat in `seatKeysAtAttach`; see
    /// [`AttachRequest::registering_key`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat_key: Option<Value>,
}

/// `lease` of an attach request: claim the seat's controller lease for
/// `durationMs` (within the host's bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseRequest {
    /// The lease duration in milliseconds.
    pub duration_ms: u64,
}

impl AttachRequest {
    /// A request with only its id.
    pub fn new(request_id: impl Into<String>) -> Self {
        AttachRequest { request_id: request_id.into(), ..AttachRequest::default() }
    }

    /// Register `key` as `seat`'s signing key with this attach (signing
    /// tier 1: every move signed). The host takes it only while the seat's
    /// key is not fixed; the handle then signs with
    /// [`with_signing_key`](crate::LifecycleHandle::with_signing_key).
    pub fn registering_key(mut self, seat: &str, key: &crate::signing::SeatSigningKey) -> Self {
        self.seat_key = Some(key.seat_key(seat, 1));
        self
    }

    /// The request body.
    pub fn to_value(&self) -> Value {
        gaos_json::to_value(self).expect("strings and JSON objects are always JSON values")
    }

    /// Refuse a controller that differs from the policy's (the host would
    /// refuse it too; the reference handle checks before sending).
    pub fn check_against(&self, policy: &SessionPolicy) -> Result<(), SessionError> {
        if self.request_id.trim().is_empty() {
            return Err(SessionError::InvalidArgument("the attach requestId must be non-blank".into()));
        }
        if let (Some(asked), Some(pinned)) = (&self.controller, policy.controller())
            && canonical_json(&asked.to_value()) != canonical_json(pinned)
        {
            return Err(SessionError::InvalidArgument(
                "the attach controller differs from the policy's controller identity".into(),
            ));
        }
        Ok(())
    }
}

/// The default submission id of `submitCommand`: `"<seat>:<tickId>:<n>"`,
/// where `n` counts the seat's submissions at that tick id from 0.
pub fn default_submission_id(seat: &str, tick_id: &str, n: u64) -> String {
    format!("{seat}:{tick_id}:{n}")
}

/// The counter behind one seat's default submission ids: `n` restarts at 0
/// whenever the tick id changes. Only the latest tick id matters (cursors
/// only move forward), so older counts are dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubmissionCounter {
    tick_id: String,
    next: u64,
}

impl SubmissionCounter {
    /// The next default submission id of `seat` at `tick_id`.
    pub fn next_id(&mut self, seat: &str, tick_id: &str) -> String {
        if self.tick_id != tick_id {
            self.tick_id = tick_id.to_owned();
            self.next = 0;
        }
        let n = self.next;
        self.next += 1;
        default_submission_id(seat, tick_id, n)
    }

    /// The id [`SubmissionCounter::next_id`] would return now, without using it.
    pub fn peek_id(&self, seat: &str, tick_id: &str) -> String {
        let n = if self.tick_id == tick_id { self.next } else { 0 };
        default_submission_id(seat, tick_id, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submission_counters_restart_at_each_tick_id() {
        let mut counter = SubmissionCounter::default();
        assert_eq!(counter.peek_id("a", "s:0"), "a:s:0:0");
        assert_eq!(counter.next_id("a", "s:0"), "a:s:0:0");
        assert_eq!(counter.peek_id("a", "s:0"), "a:s:0:1");
        assert_eq!(counter.next_id("a", "s:0"), "a:s:0:1");
        assert_eq!(counter.next_id("a", "s:1"), "a:s:1:0");
    }

    #[test]
    fn request_bodies_omit_absent_fields() {
        let controller = SessionControllerIdentity::new(crate::ControllerKind::LocalAgent, "bot").with_model("m");
        let attach =
            AttachRequest { participant_id: Some("a".into()), controller: Some(controller), ..AttachRequest::new("r") };
        assert_eq!(
            canonical_json(&attach.to_value()),
            r#"{"controller":{"id":"bot","kind":"local-agent","model":"m"},"participantId":"a","requestId":"r"}"#
        );
        assert_eq!(canonical_json(&FinalizeRequest::with_id("f").to_value("s")), r#"{"requestId":"f"}"#);
        let leased = AttachRequest { lease: Some(LeaseRequest { duration_ms: 500 }), ..AttachRequest::new("r") };
        assert_eq!(canonical_json(&leased.to_value()), r#"{"lease":{"durationMs":500},"requestId":"r"}"#);
    }
}
