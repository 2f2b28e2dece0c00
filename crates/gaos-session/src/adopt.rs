//! `createSessionHandleFromExisting` (lifecycle spec §4): adopting a durable
//! head a product route already holds, with the checks and without any
//! request ([`adopt_existing`]), and the head built from an envelope a seat
//! just observed ([`existing_head_from_observation`]).

use gaos_json::{Map, Value};
use gaos_kernel::protocol::{PROTOCOL_ID, PROTOCOL_VERSION};
use gaos_kernel::{SessionBinding, TickEnvelope};

use crate::error::SessionError;
use crate::observation::Observation;
use crate::policy::SessionPolicy;
use crate::receipts::AttachReceipt;

/// What [`adopt_existing`] accepted: a durable head to start a handle at.
#[derive(Debug, Clone, PartialEq)]
pub struct ExistingHead {
    /// The binding (its `participantId` is the handle's seat).
    pub binding: SessionBinding,
    /// The tick the handle's first `observe` returns without a request.
    pub initial: Observation,
    /// The attach receipt, checked.
    pub receipt: Option<AttachReceipt>,
}

fn own<'a>(map: &'a Map, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

/// Check a receipt against the head it was issued at: digest, non-blank
/// fields, session and revision.
pub(crate) fn check_receipt(receipt: &Value, binding: &SessionBinding) -> Result<AttachReceipt, String> {
    let receipt = AttachReceipt::from_value(receipt).map_err(|e| format!("attach receipt: {e}"))?;
    if !receipt.digest_matches() {
        return Err(format!(
            "the attach receipt's receiptDigest {} does not match its content",
            receipt.receipt_digest
        ));
    }
    for (field, text) in [
        ("requestId", &receipt.request_id),
        ("transcriptDigest", &receipt.transcript_digest),
        ("stateDigest", &receipt.state_digest),
    ] {
        if text.trim().is_empty() {
            return Err(format!("the attach receipt's {field} is blank"));
        }
    }
    if receipt.session_id != binding.session_id {
        return Err(format!("the attach receipt names session {:?}, not {:?}", receipt.session_id, binding.session_id));
    }
    if receipt.revision != binding.revision {
        return Err(format!(
            "the attach receipt was issued at revision {}, but the binding is at revision {}",
            receipt.revision, binding.revision
        ));
    }
    Ok(receipt)
}

/// `createSessionHandleFromExisting`'s checks (lifecycle spec §4),
/// synchronous and without any request:
///
/// 1. `existing` is an object with a non-blank `sessionId` and a valid `binding`;
/// 2. the initial tick is an own `initialTick` (a full envelope, pending
///    allowed; receipt from `attachReceipt`), or else an own `tick` from which
///    a resolved envelope is built at the binding's cursor with `extensions`
///    (receipt from `receipt`) — the `SessionStart`/`SessionAttach` projections;
/// 3. binding, tick and `existing` name one session, and the binding's
///    `tickId`/`revision` equal the tick's;
/// 4. a receipt's digest verifies, it names the session, and its revision
///    is the binding's.
///
/// `policy` is already validated by its type; it is taken for parity with
/// the reference signature.
pub fn adopt_existing(existing: &Value, policy: &SessionPolicy) -> Result<ExistingHead, SessionError> {
    let _ = policy;
    let invalid = SessionError::InvalidExisting;
    let map =
        existing.as_object().ok_or_else(|| invalid(format!("must be an object, not {}", existing.type_name())))?;
    let session_id = own(map, "sessionId")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| invalid("sessionId must be a non-blank string".into()))?;
    let binding_value = own(map, "binding").ok_or_else(|| invalid("binding is required".into()))?;
    let binding: SessionBinding =
        gaos_json::from_value(binding_value.clone()).map_err(|e| invalid(format!("malformed binding: {e}")))?;
    binding.validate().map_err(|e| invalid(format!("invalid binding: {e}")))?;

    let (initial, receipt) = match own(map, "initialTick") {
        Some(tick) => {
            let initial = Observation::from_value(tick, None).map_err(|e| invalid(format!("initialTick: {e}")))?;
            (initial, own(map, "attachReceipt"))
        }
        None => {
            if !map.contains_key("tick") {
                return Err(invalid("either initialTick or tick is required".into()));
            }
            let extensions = match own(map, "extensions") {
                None => None,
                Some(Value::Object(ext)) => Some(ext.clone()),
                Some(_) => return Err(invalid("extensions must be an object".into())),
            };
            let envelope = TickEnvelope {
                kind: "tick".into(),
                protocol: PROTOCOL_ID.into(),
                protocol_version: PROTOCOL_VERSION.into(),
                session_id: binding.session_id.clone(),
                tick_id: binding.tick_id.clone(),
                revision: binding.revision,
                tick: map.get("tick").cloned().unwrap_or(Value::Null),
                submitted_participants: None,
                awaiting_participants: None,
                accepted_participant_id: None,
                extensions,
            };
            let initial = Observation::from_envelope(envelope).map_err(|e| invalid(e.to_string()))?;
            (initial, own(map, "receipt"))
        }
    };
    if binding.session_id != session_id || initial.session_id() != session_id {
        return Err(invalid(format!(
            "sessionId {session_id:?}, binding session {:?} and tick session {:?} must be one session",
            binding.session_id,
            initial.session_id()
        )));
    }
    if binding.tick_id != initial.tick_id() || binding.revision != initial.revision() {
        return Err(invalid(format!(
            "the binding's cursor ({}, revision {}) is not the tick's ({}, revision {})",
            binding.tick_id,
            binding.revision,
            initial.tick_id(),
            initial.revision()
        )));
    }
    let receipt = receipt.map(|r| check_receipt(r, &binding)).transpose().map_err(invalid)?;
    Ok(ExistingHead { binding, initial, receipt })
}

/// The `existing` head for `createSessionHandleFromExisting` built from an
/// envelope the seat just observed (what [`crate::EpisodeHost::adopt`] adopts).
pub fn existing_head_from_observation(session_id: &str, seat: &str, envelope: Value) -> Result<Value, SessionError> {
    let binding = Observation::from_value(&envelope, Some(session_id))?.binding(seat);
    let binding = gaos_json::to_value(&binding).map_err(|e| SessionError::Protocol(e.to_string()))?;
    let mut existing = Map::new();
    existing.insert("sessionId".into(), session_id.into());
    existing.insert("binding".into(), binding);
    existing.insert("initialTick".into(), envelope);
    Ok(Value::Object(existing))
}
