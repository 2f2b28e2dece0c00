//! The requests of the session contract: `SessionFinalizeRequest`,
//! `SessionAttachRequest`, and the default submission id rule of
//! `submitCommand` (lifecycle spec §2, §4).

use gaos_json::{Map, Value, canonical_json};

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
        let mut map = Map::new();
        let request_id = self.request_id.clone().unwrap_or_else(|| format!("finalize:{session_id}"));
        map.insert("requestId".into(), request_id.into());
        if let Some(metadata) = &self.metadata {
            map.insert("metadata".into(), Value::Object(metadata.clone()));
        }
        if let Some(extensions) = &self.extensions {
            map.insert("extensions".into(), Value::Object(extensions.clone()));
        }
        Value::Object(map)
    }
}

/// `SessionAttachRequest`: `{requestId, participantId?, controller?, extensions?}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AttachRequest {
    /// Idempotency key: the same id at the same revision returns the same receipt.
    pub request_id: String,
    /// The seat to attach (the host checks it against the credentials).
    pub participant_id: Option<String>,
    /// The controller; must equal the session's pinned controller, if any.
    pub controller: Option<SessionControllerIdentity>,
    /// Product extensions.
    pub extensions: Option<Map>,
}

impl AttachRequest {
    /// A request with only its id.
    pub fn new(request_id: impl Into<String>) -> Self {
        AttachRequest { request_id: request_id.into(), ..AttachRequest::default() }
    }

    /// The request body.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("requestId".into(), self.request_id.clone().into());
        if let Some(seat) = &self.participant_id {
            map.insert("participantId".into(), seat.clone().into());
        }
        if let Some(controller) = &self.controller {
            map.insert("controller".into(), controller.to_value());
        }
        if let Some(extensions) = &self.extensions {
            map.insert("extensions".into(), Value::Object(extensions.clone()));
        }
        Value::Object(map)
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submission_counters_restart_at_each_tick_id() {
        let mut counter = SubmissionCounter::default();
        assert_eq!(counter.next_id("a", "s:0"), "a:s:0:0");
        assert_eq!(counter.next_id("a", "s:0"), "a:s:0:1");
        assert_eq!(counter.next_id("a", "s:1"), "a:s:1:0");
    }
}
