//! The `gaos.ticks` 1.0 protocol layer: submissions, intent windows,
//! canonical lockstep ordering, tick rates, envelopes and bindings.

use std::collections::BTreeMap;

use gaos_json::{Map, Value};
use serde::{Deserialize, Serialize};

use crate::action::SubmittedAction;
use crate::error::{IntentError, IntentErrorCode};

pub const PROTOCOL_ID: &str = "gaos.ticks";
pub const PROTOCOL_VERSION: &str = "1.0";

/// True when `id` matches `^[A-Za-z0-9_.:@-]{1,128}$`.
pub fn is_valid_participant_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'@' | b'-'))
}

/// `makeTickId`: `sessionId + ":" + revision`.
pub fn make_tick_id(session_id: &str, revision: u64) -> String {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(revision);
    let mut out = String::with_capacity(session_id.len() + 1 + digits.len());
    out.push_str(session_id);
    out.push(':');
    out.push_str(digits);
    out
}

/// A command submission (`CommandSubmission`). Field types are lenient on
/// purpose: [`CommandSubmission::from_value`] maps a wrong-typed field to a
/// value that fails the same check the reference would fail, so error
/// precedence is preserved for arbitrary input.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSubmission {
    pub protocol: String,
    pub protocol_version: String,
    pub session_id: String,
    pub tick_id: String,
    /// A JS number; NaN when the field was not a number.
    pub revision: f64,
    pub participant_id: String,
    /// `None` when absent or not a string.
    pub submission_id: Option<String>,
    /// `None` when absent.
    pub command: Option<Value>,
    pub extensions: Option<Value>,
    pub client_time: Option<Value>,
    pub prev_chain_hash: Option<Value>,
    pub sig: Option<Value>,
}

impl CommandSubmission {
    /// A well-formed submission for `revision` of `session_id`.
    pub fn new(session_id: &str, revision: u64, participant_id: &str, submission_id: &str, command: Value) -> Self {
        CommandSubmission {
            protocol: PROTOCOL_ID.into(),
            protocol_version: PROTOCOL_VERSION.into(),
            session_id: session_id.into(),
            tick_id: make_tick_id(session_id, revision),
            revision: revision as f64,
            participant_id: participant_id.into(),
            submission_id: Some(submission_id.into()),
            command: Some(command),
            extensions: None,
            client_time: None,
            prev_chain_hash: None,
            sig: None,
        }
    }

    /// Read a submission object. Only a non-object is refused here
    /// (`invalid_submission`); every other defect surfaces at its check.
    pub fn from_value(value: &Value) -> Result<Self, IntentError> {
        let Some(map) = value.as_object() else {
            return Err(IntentError::new(
                IntentErrorCode::InvalidSubmission,
                "a command submission must be a JSON object",
            ));
        };
        let text = |key: &str| map.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
        Ok(CommandSubmission {
            protocol: text("protocol"),
            protocol_version: text("protocolVersion"),
            session_id: text("sessionId"),
            tick_id: text("tickId"),
            revision: map.get("revision").and_then(Value::as_f64).unwrap_or(f64::NAN),
            participant_id: text("participantId"),
            submission_id: map.get("submissionId").and_then(Value::as_str).map(str::to_owned),
            command: map.get("command").cloned(),
            extensions: map.get("extensions").cloned(),
            client_time: map.get("clientTime").cloned(),
            prev_chain_hash: map.get("prevChainHash").cloned(),
            sig: map.get("sig").cloned(),
        })
    }

    /// The submission as its JSON object.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("protocol".into(), self.protocol.clone().into());
        map.insert("protocolVersion".into(), self.protocol_version.clone().into());
        map.insert("sessionId".into(), self.session_id.clone().into());
        map.insert("tickId".into(), self.tick_id.clone().into());
        if self.revision.is_finite() {
            map.insert("revision".into(), Value::Number(self.revision));
        }
        map.insert("participantId".into(), self.participant_id.clone().into());
        if let Some(id) = &self.submission_id {
            map.insert("submissionId".into(), id.clone().into());
        }
        let optional = [
            ("command", &self.command),
            ("extensions", &self.extensions),
            ("clientTime", &self.client_time),
            ("prevChainHash", &self.prev_chain_hash),
            ("sig", &self.sig),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                map.insert(key.into(), value.clone());
            }
        }
        Value::Object(map)
    }

    /// The revision as a cursor, when it is a non-negative safe integer.
    pub fn revision_u64(&self) -> Option<u64> {
        let r = self.revision;
        (r.is_finite() && r >= 0.0 && r.fract() == 0.0 && r <= gaos_json::MAX_SAFE_INTEGER).then_some(r as u64)
    }
}

/// One seat's collected intent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    pub participant_id: String,
    pub submission_id: String,
    pub command: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_time: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prev_chain_hash: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sig: Option<Value>,
}

/// An open collection window (`IntentWindow`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntentWindow {
    pub session_id: String,
    pub tick_id: String,
    pub revision: u64,
    /// Sorted (code-point order equals JS sort for participant ids).
    pub participants: Vec<String>,
    pub intents: BTreeMap<String, Intent>,
}

/// `createIntentWindow(sessionId, revision, participants)`.
pub fn create_intent_window(session_id: &str, revision: u64, participants: &[String]) -> Result<IntentWindow, String> {
    if session_id.trim().is_empty() {
        return Err("sessionId must be a non-empty string".into());
    }
    if participants.is_empty() {
        return Err("an intent window needs at least one participant".into());
    }
    let mut sorted: Vec<String> = participants.to_vec();
    for id in &sorted {
        if !is_valid_participant_id(id) {
            return Err(format!("invalid participant id {id:?}"));
        }
    }
    sorted.sort();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err("participant ids must be unique".into());
    }
    Ok(IntentWindow {
        session_id: session_id.into(),
        tick_id: make_tick_id(session_id, revision),
        revision,
        participants: sorted,
        intents: BTreeMap::new(),
    })
}

impl IntentWindow {
    /// Participants that submitted, in window order.
    pub fn submitted(&self) -> Vec<String> {
        self.participants.iter().filter(|p| self.intents.contains_key(*p)).cloned().collect()
    }

    /// Participants still awaited, in window order.
    pub fn awaiting(&self) -> Vec<String> {
        self.participants.iter().filter(|p| !self.intents.contains_key(*p)).cloned().collect()
    }

    pub fn is_complete(&self) -> bool {
        self.intents.len() == self.participants.len()
    }

    pub fn has_participant(&self, seat: &str) -> bool {
        self.participants.binary_search_by(|p| p.as_str().cmp(seat)).is_ok()
    }
}

/// `validateIntentSubmission`: the reference check order, first failure wins.
pub fn validate_intent_submission(window: &IntentWindow, submission: &CommandSubmission) -> Result<(), IntentError> {
    use IntentErrorCode::*;
    if submission.protocol != PROTOCOL_ID || submission.protocol_version != PROTOCOL_VERSION {
        return Err(IntentError::new(InvalidProtocol, format!("expected protocol {PROTOCOL_ID} {PROTOCOL_VERSION}")));
    }
    if submission.session_id != window.session_id {
        return Err(IntentError::new(WrongSession, "submission is for another session"));
    }
    if submission.tick_id != window.tick_id || submission.revision != window.revision as f64 {
        return Err(IntentError::new(
            StaleTick,
            format!("submission does not address the open window {}", window.tick_id),
        ));
    }
    if !window.has_participant(&submission.participant_id) {
        return Err(IntentError::new(
            UnknownParticipant,
            format!("{:?} is not a participant of window {}", submission.participant_id, window.tick_id),
        ));
    }
    match &submission.submission_id {
        Some(id) if !id.trim().is_empty() => {}
        _ => {
            return Err(IntentError::new(InvalidSubmission, "submissionId must be a non-blank string"));
        }
    }
    if submission.command.is_none() {
        return Err(IntentError::new(InvalidSubmission, "command must be a JSON value"));
    }
    if let Some(ext) = &submission.extensions
        && !ext.is_object()
    {
        return Err(IntentError::new(InvalidSubmission, "extensions must be a JSON object"));
    }
    Ok(())
}

/// Result of [`collect_intent`].
#[derive(Debug, Clone, PartialEq)]
pub enum CollectOutcome {
    Pending { window: IntentWindow, submitted: Vec<String>, awaiting: Vec<String> },
    Ready { window: IntentWindow },
}

/// `collectIntent`: validate, detect idempotent retries and conflicts, and
/// return the window with the intent added (the input is not changed).
pub fn collect_intent(window: &IntentWindow, submission: &CommandSubmission) -> Result<CollectOutcome, IntentError> {
    validate_intent_submission(window, submission)?;
    let submission_id = submission.submission_id.clone().expect("validated");
    let command = submission.command.clone().expect("validated");
    let mut next = window.clone();
    if let Some(existing) = window.intents.get(&submission.participant_id) {
        let same = existing.submission_id == submission_id
            && gaos_json::canonical_json(&existing.command) == gaos_json::canonical_json(&command);
        if !same {
            return Err(IntentError::new(
                IntentErrorCode::ConflictingIntent,
                format!("{} already submitted an intent for this window", submission.participant_id),
            ));
        }
    } else {
        next.intents.insert(
            submission.participant_id.clone(),
            Intent {
                participant_id: submission.participant_id.clone(),
                submission_id,
                command,
                client_time: submission.client_time.clone(),
                prev_chain_hash: submission.prev_chain_hash.clone(),
                sig: submission.sig.clone(),
            },
        );
    }
    if next.is_complete() {
        Ok(CollectOutcome::Ready { window: next })
    } else {
        let submitted = next.submitted();
        let awaiting = next.awaiting();
        Ok(CollectOutcome::Pending { window: next, submitted, awaiting })
    }
}

/// One lockstep input group `{tick, seat, actions}`.
#[derive(Debug, Clone, PartialEq)]
pub struct LockstepInput {
    pub tick: u64,
    pub seat: String,
    pub actions: Vec<SubmittedAction>,
}

/// `canonicalizeLockstepInputs`: stable sort by (tick, seat by UTF-16 code
/// unit, original index).
pub fn canonicalize_lockstep_inputs(inputs: &[LockstepInput]) -> Vec<LockstepInput> {
    let mut out: Vec<LockstepInput> = inputs.to_vec();
    out.sort_by(|a, b| a.tick.cmp(&b.tick).then_with(|| a.seat.encode_utf16().cmp(b.seat.encode_utf16())));
    out
}

/// `createTickRate(tps)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TickRate {
    pub ticks_per_second: f64,
    pub seconds_per_tick: f64,
    pub milliseconds_per_tick: f64,
}

impl TickRate {
    pub fn new(ticks_per_second: f64) -> Result<Self, String> {
        if !(ticks_per_second.is_finite() && ticks_per_second > 0.0) {
            return Err("ticksPerSecond must be a finite number greater than 0".into());
        }
        Ok(TickRate {
            ticks_per_second,
            seconds_per_tick: 1.0 / ticks_per_second,
            milliseconds_per_tick: 1000.0 / ticks_per_second,
        })
    }
}

/// A resolved tick envelope (`kind: "tick"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TickEnvelope {
    pub kind: String,
    pub protocol: String,
    pub protocol_version: String,
    pub session_id: String,
    pub tick_id: String,
    pub revision: u64,
    pub tick: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submitted_participants: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awaiting_participants: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_participant_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map>,
}

impl TickEnvelope {
    /// A resolved envelope at `revision`.
    pub fn resolved(session_id: &str, revision: u64, tick: Value) -> Self {
        TickEnvelope {
            kind: "tick".into(),
            protocol: PROTOCOL_ID.into(),
            protocol_version: PROTOCOL_VERSION.into(),
            session_id: session_id.into(),
            tick_id: make_tick_id(session_id, revision),
            revision,
            tick,
            submitted_participants: None,
            awaiting_participants: None,
            accepted_participant_id: None,
            extensions: None,
        }
    }

    /// A pending envelope: the window at `revision` awaits more seats; `tick`
    /// is the last resolved observation.
    pub fn pending(
        session_id: &str,
        revision: u64,
        tick: Value,
        submitted: Vec<String>,
        awaiting: Vec<String>,
        accepted: Option<String>,
    ) -> Self {
        TickEnvelope {
            kind: "pending".into(),
            submitted_participants: Some(submitted),
            awaiting_participants: Some(awaiting),
            accepted_participant_id: accepted,
            ..TickEnvelope::resolved(session_id, revision, tick)
        }
    }

    pub fn is_pending(&self) -> bool {
        self.kind == "pending"
    }

    pub fn to_value(&self) -> Value {
        gaos_json::to_value(self).expect("an envelope is always a JSON value")
    }

    /// Check the envelope invariants of lifecycle.md §2.
    pub fn validate(&self) -> Result<(), String> {
        if self.protocol != PROTOCOL_ID || self.protocol_version != PROTOCOL_VERSION {
            return Err("envelope protocol mismatch".into());
        }
        if self.session_id.trim().is_empty() || self.tick_id.trim().is_empty() {
            return Err("envelope sessionId and tickId must be non-blank".into());
        }
        match self.kind.as_str() {
            "tick" => Ok(()),
            "pending" => {
                let submitted = self.submitted_participants.as_deref().unwrap_or_default();
                let awaiting = self.awaiting_participants.as_deref().unwrap_or_default();
                if awaiting.is_empty() {
                    return Err("a pending envelope must await at least one seat".into());
                }
                let mut all: Vec<&String> = submitted.iter().chain(awaiting).collect();
                let total = all.len();
                all.sort();
                all.dedup();
                if all.len() != total {
                    return Err("pending participant lists must be unique and disjoint".into());
                }
                if let Some(accepted) = &self.accepted_participant_id
                    && !submitted.contains(accepted)
                {
                    return Err("acceptedParticipantId must be a submitted seat".into());
                }
                Ok(())
            }
            other => Err(format!("unknown envelope kind {other:?}")),
        }
    }
}

/// `SessionBinding`: what a client remembers to address its next submission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionBinding {
    pub protocol: String,
    pub protocol_version: String,
    pub session_id: String,
    pub tick_id: String,
    pub revision: u64,
    pub participant_id: String,
}

impl SessionBinding {
    pub fn new(session_id: &str, revision: u64, participant_id: &str) -> Self {
        SessionBinding {
            protocol: PROTOCOL_ID.into(),
            protocol_version: PROTOCOL_VERSION.into(),
            session_id: session_id.into(),
            tick_id: make_tick_id(session_id, revision),
            revision,
            participant_id: participant_id.into(),
        }
    }

    /// The binding of `participant_id` at an envelope's cursor.
    pub fn from_envelope(envelope: &TickEnvelope, participant_id: &str) -> Self {
        SessionBinding {
            protocol: PROTOCOL_ID.into(),
            protocol_version: PROTOCOL_VERSION.into(),
            session_id: envelope.session_id.clone(),
            tick_id: envelope.tick_id.clone(),
            revision: envelope.revision,
            participant_id: participant_id.into(),
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.protocol != PROTOCOL_ID || self.protocol_version != PROTOCOL_VERSION {
            return Err("binding protocol mismatch".into());
        }
        if self.session_id.trim().is_empty() || self.tick_id.trim().is_empty() {
            return Err("binding sessionId and tickId must be non-blank".into());
        }
        if self.revision as f64 > gaos_json::MAX_SAFE_INTEGER {
            return Err("binding revision must be a safe integer".into());
        }
        if !is_valid_participant_id(&self.participant_id) {
            return Err(format!("invalid participant id {:?}", self.participant_id));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seats(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn windows_sort_participants() {
        let w = create_intent_window("s", 3, &seats(&["zulu", "Alpha", "alpha", "b-2"])).unwrap();
        assert_eq!(w.participants, seats(&["Alpha", "alpha", "b-2", "zulu"]));
        assert_eq!(w.tick_id, "s:3");
        assert!(create_intent_window("s", 0, &seats(&["a", "a"])).is_err());
        assert!(create_intent_window("s", 0, &[]).is_err());
        assert!(create_intent_window(" ", 0, &seats(&["a"])).is_err());
        assert!(create_intent_window("s", 0, &seats(&["a b"])).is_err());
    }

    #[test]
    fn collection_is_order_independent_and_idempotent() {
        let w = create_intent_window("s", 0, &seats(&["b", "a"])).unwrap();
        let sub = |seat: &str, id: &str, n: u32| CommandSubmission::new("s", 0, seat, id, Value::from(n));
        let CollectOutcome::Pending { window, submitted, awaiting } = collect_intent(&w, &sub("b", "b1", 1)).unwrap()
        else {
            panic!("expected pending")
        };
        assert_eq!((submitted, awaiting), (seats(&["b"]), seats(&["a"])));
        assert!(matches!(collect_intent(&window, &sub("b", "b1", 1)).unwrap(), CollectOutcome::Pending { .. }));
        assert_eq!(collect_intent(&window, &sub("b", "b2", 1)).unwrap_err().code, IntentErrorCode::ConflictingIntent);
        let CollectOutcome::Ready { window } = collect_intent(&window, &sub("a", "a1", 2)).unwrap() else {
            panic!("expected ready")
        };
        assert_eq!(window.intents.keys().cloned().collect::<Vec<_>>(), seats(&["a", "b"]));
    }

    #[test]
    fn validation_order_matches_the_reference() {
        let w = create_intent_window("s", 1, &seats(&["a"])).unwrap();
        let mut sub = CommandSubmission::new("x", 5, "zz", " ", Value::Null);
        sub.protocol_version = "2.0".into();
        assert_eq!(validate_intent_submission(&w, &sub).unwrap_err().code, IntentErrorCode::InvalidProtocol);
        sub.protocol_version = PROTOCOL_VERSION.into();
        assert_eq!(validate_intent_submission(&w, &sub).unwrap_err().code, IntentErrorCode::WrongSession);
        sub.session_id = "s".into();
        assert_eq!(validate_intent_submission(&w, &sub).unwrap_err().code, IntentErrorCode::StaleTick);
        sub.tick_id = "s:1".into();
        sub.revision = 1.0;
        assert_eq!(validate_intent_submission(&w, &sub).unwrap_err().code, IntentErrorCode::UnknownParticipant);
        sub.participant_id = "a".into();
        assert_eq!(validate_intent_submission(&w, &sub).unwrap_err().code, IntentErrorCode::InvalidSubmission);
        sub.submission_id = Some("ok".into());
        assert!(validate_intent_submission(&w, &sub).is_ok());
    }

    #[test]
    fn lockstep_order_is_tick_then_utf16_seat_then_arrival() {
        let input = |tick, seat: &str, id: &str| LockstepInput {
            tick,
            seat: seat.into(),
            actions: vec![SubmittedAction::new(id)],
        };
        let out = canonicalize_lockstep_inputs(&[
            input(1, "b", "b"),
            input(0, "z", "z"),
            input(1, "a", "B"),
            input(1, "a", "C"),
        ]);
        let ids: Vec<&str> = out.iter().map(|i| i.actions[0].id.as_str()).collect();
        assert_eq!(ids, ["z", "B", "C", "b"]);
    }

    #[test]
    fn envelopes_have_the_reference_shape() {
        let env = TickEnvelope::resolved("s", 3, Value::Null);
        assert_eq!(
            gaos_json::canonical_json(&env.to_value()),
            r#"{"kind":"tick","protocol":"gaos.ticks","protocolVersion":"1.0","revision":3,"sessionId":"s","tick":null,"tickId":"s:3"}"#
        );
        let pending = TickEnvelope::pending(
            "s",
            3,
            Value::Null,
            seats(&["zulu"]),
            seats(&["Alpha", "alpha", "b-2"]),
            Some("zulu".into()),
        );
        assert_eq!(
            gaos_json::canonical_json(&pending.to_value()),
            r#"{"acceptedParticipantId":"zulu","awaitingParticipants":["Alpha","alpha","b-2"],"kind":"pending","protocol":"gaos.ticks","protocolVersion":"1.0","revision":3,"sessionId":"s","submittedParticipants":["zulu"],"tick":null,"tickId":"s:3"}"#
        );
        assert!(pending.validate().is_ok());
        let bad = TickEnvelope::pending("s", 3, Value::Null, seats(&["a"]), vec![], None);
        assert!(bad.validate().is_err());
    }
}
