//! The answers of the session contract, read and checked once for every
//! client: the create answer's credentials, the attach answer
//! ([`SessionAttach`]), the finalize answer ([`SessionResult`]) and the
//! controller lease a create or attach grants ([`LeaseGrant`]).

use std::collections::BTreeMap;

use gaos_json::{Map, Value, canonical_json};
use gaos_kernel::{SessionBinding, TickEnvelope};
use serde::{Deserialize, Serialize};

use crate::error::SessionError;
use crate::extensions::{EXT_CREDENTIALS, EXT_LEASE};
use crate::receipts::AttachReceipt;
use crate::requests::AttachRequest;

/// An artifact of a finalized session (`{kind, digest?, uri?, mediaType?, extensions?}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionArtifact {
    /// What it is (e.g. `replay`).
    pub kind: String,
    /// Content digest, when stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Where to fetch it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Product extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map>,
}

/// `SessionResult`: the immutable outcome of a finalized session. The
/// typed fields are read from the host's answer, which is kept as is:
/// [`SessionResult::to_value`] returns exactly what the host sent.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionResult {
    /// The session.
    pub session_id: String,
    /// Always `finalized` (checked).
    pub status: String,
    /// The game's outcome (gaos-host: `{status, stars, actionsUsed, outcome?}`).
    pub outcome: Value,
    /// The replay (`gaos.replay` JSONL text, or JSON), when the policy asks for it.
    pub replay: Option<Value>,
    /// Evaluation facts, when the policy evaluates.
    pub evaluation: Option<Map>,
    /// Artifacts (replay download, ...), when the host lists any.
    pub artifacts: Option<Vec<SessionArtifact>>,
    /// Extensions.
    pub extensions: Option<Map>,
    value: Value,
}

impl SessionResult {
    /// Read and check a finalize answer: an object for `session_id` with
    /// `status: "finalized"` and an `outcome`; `evaluation` and
    /// `extensions` objects, `artifacts` a list of artifacts.
    pub fn parse(value: Value, session_id: &str) -> Result<Self, String> {
        let bad = |why: String| format!("session result: {why}");
        let map = value.as_object().ok_or_else(|| bad(format!("must be an object, not {}", value.type_name())))?;
        match map.get("sessionId").and_then(Value::as_str) {
            Some(id) if id == session_id => {}
            other => return Err(bad(format!("is for session {}, not {session_id:?}", crate::words::quoted(other)))),
        }
        if map.get("status").and_then(Value::as_str) != Some("finalized") {
            return Err(bad("status must be \"finalized\"".into()));
        }
        let outcome = map.get("outcome").cloned().ok_or_else(|| bad("has no outcome".into()))?;
        let evaluation = match map.get("evaluation") {
            None => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(_) => return Err(bad("evaluation must be an object".into())),
        };
        let artifacts = match map.get("artifacts") {
            None => None,
            Some(v) => Some(gaos_json::from_value(v.clone()).map_err(|e| bad(format!("malformed artifacts: {e}")))?),
        };
        let extensions = match map.get("extensions") {
            None => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(_) => return Err(bad("extensions must be an object".into())),
        };
        Ok(SessionResult {
            session_id: session_id.to_owned(),
            status: "finalized".to_owned(),
            outcome,
            replay: map.get("replay").cloned(),
            evaluation,
            artifacts,
            extensions,
            value,
        })
    }

    /// [`SessionResult::parse`], failing with [`SessionError::Protocol`].
    pub fn from_value(value: Value, session_id: &str) -> Result<Self, SessionError> {
        Self::parse(value, session_id).map_err(SessionError::Protocol)
    }

    /// The result exactly as the host answered it.
    pub fn to_value(&self) -> Value {
        self.value.clone()
    }

    /// Canonical JSON of the host's answer (what exact retries must repeat).
    pub fn canonical(&self) -> String {
        canonical_json(&self.value)
    }

    /// The replay as `gaos.replay` JSONL text, when it is a string.
    pub fn replay_text(&self) -> Option<&str> {
        self.replay.as_ref().and_then(Value::as_str)
    }
}

/// Read and check a `SessionBinding`: the exact shape, protocol constants,
/// non-blank ids, a safe revision and a valid seat id.
pub fn parse_binding(value: &Value) -> Result<SessionBinding, String> {
    let binding: SessionBinding =
        gaos_json::from_value(value.clone()).map_err(|e| format!("malformed session binding: {e}"))?;
    binding.validate().map_err(|e| format!("invalid session binding: {e}"))?;
    Ok(binding)
}

/// `SessionAttach`: the durable head a seat attached at.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionAttach {
    /// The session attached to.
    pub session_id: String,
    /// The seat's current observation.
    pub tick: Value,
    /// The cursor and seat to submit with next.
    pub binding: SessionBinding,
    /// The attach receipt, when the session's policy asks for receipts.
    pub receipt: Option<AttachReceipt>,
    /// Envelope extensions (episode, finalization, `gaos.session.attach`, ...).
    pub extensions: Option<Map>,
}

/// Read and check an attach answer (lifecycle spec §2): the session id, a
/// present `tick`, a valid binding for the same session (and the requested
/// seat, if any), and a receipt that answers this request, names this
/// session, carries the requested controller (canonically equal, when both
/// exist) and whose `receiptDigest` matches its content.
pub fn parse_session_attach(body: &Value, session_id: &str, request: &AttachRequest) -> Result<SessionAttach, String> {
    let map =
        body.as_object().ok_or_else(|| format!("an attach answer must be a JSON object, got {}", body.type_name()))?;
    let answered = map.get("sessionId").and_then(Value::as_str).ok_or("the attach answer has no sessionId")?;
    if answered != session_id {
        return Err(format!("the attach answer is for session {answered:?}, not the requested {session_id:?}"));
    }
    let tick = map.get("tick").cloned().ok_or("the attach answer has no \"tick\" member")?;
    let binding = parse_binding(map.get("binding").ok_or("the attach answer has no binding")?)?;
    if binding.session_id != session_id {
        return Err(format!("the attach binding is for session {:?}, not {session_id:?}", binding.session_id));
    }
    if let Some(seat) = &request.participant_id
        && &binding.participant_id != seat
    {
        return Err(format!("the attach binding is for seat {:?}, not the requested {seat:?}", binding.participant_id));
    }
    let receipt = match map.get("receipt") {
        None => None,
        Some(value) => {
            let receipt = AttachReceipt::from_value(value).map_err(|e| format!("attach receipt: {e}"))?;
            if receipt.request_id != request.request_id {
                return Err(format!(
                    "the attach receipt answers request {:?}, not {:?}",
                    receipt.request_id, request.request_id
                ));
            }
            if receipt.session_id != session_id {
                return Err(format!("the attach receipt names session {:?}, not {session_id:?}", receipt.session_id));
            }
            if let (Some(asked), Some(got)) = (&request.controller, &receipt.controller)
                && canonical_json(&asked.to_value()) != canonical_json(&Value::Object(got.clone()))
            {
                return Err("the attach receipt's controller differs from the requested controller".into());
            }
            if !receipt.digest_matches() {
                return Err(format!(
                    "the attach receipt's receiptDigest {} does not match its content",
                    receipt.receipt_digest
                ));
            }
            Some(receipt)
        }
    };
    let extensions = match map.get("extensions") {
        None => None,
        Some(Value::Object(ext)) => Some(ext.clone()),
        Some(_) => return Err("the attach answer's extensions must be an object".into()),
    };
    Ok(SessionAttach { session_id: session_id.to_owned(), tick, binding, receipt, extensions })
}

/// The seat and spectator tokens a host hands to the creator of a session
/// (`extensions["gaos.host.credentials"]` of the create answer). `Debug`
/// never prints a token.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct SessionCredentials {
    /// Bearer token of each seat, by seat id.
    pub seats: BTreeMap<String, String>,
    /// The read-only spectator token, when the host issued one.
    pub spectator: Option<String>,
}

impl std::fmt::Debug for SessionCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCredentials")
            .field("seats", &self.seats.keys().collect::<Vec<_>>())
            .field("spectator", &self.spectator.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl SessionCredentials {
    /// The token of `seat`.
    pub fn seat(&self, seat: &str) -> Option<&str> {
        self.seats.get(seat).map(String::as_str)
    }
}

/// Read `extensions["gaos.host.credentials"]` of a create answer: `None`
/// when absent, an error when present but not `{seats: {seat: token},
/// spectator?: token}`.
pub fn parse_credentials(envelope: &TickEnvelope) -> Result<Option<SessionCredentials>, String> {
    credentials_in(envelope.extensions.as_ref())
}

/// [`parse_credentials`] of an answer's `extensions`.
pub fn credentials_in(extensions: Option<&Map>) -> Result<Option<SessionCredentials>, String> {
    let Some(value) = extensions.and_then(|ext| ext.get(EXT_CREDENTIALS)) else {
        return Ok(None);
    };
    let bad =
        || format!("extensions[{EXT_CREDENTIALS:?}] must be {{\"seats\": {{seat: token}}, \"spectator\"?: token}}");
    let map = value.as_object().ok_or_else(bad)?;
    let mut credentials = SessionCredentials::default();
    if let Some(seats) = map.get("seats") {
        for (seat, token) in seats.as_object().ok_or_else(bad)? {
            let token = token.as_str().filter(|t| !t.is_empty()).ok_or_else(bad)?;
            credentials.seats.insert(seat.clone(), token.to_owned());
        }
    }
    match map.get("spectator") {
        None | Some(Value::Null) => {}
        Some(Value::String(token)) if !token.is_empty() => credentials.spectator = Some(token.clone()),
        Some(_) => return Err(bad()),
    }
    Ok(Some(credentials))
}

/// `extensions["gaos.host.lease"]` of a create or attach answer: the
/// controller lease the host granted the seat (lease spec). Every field is
/// optional on the wire; a lease-unaware attach carries none.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseGrant {
    /// The lease token to present as `Gaos-Lease`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The claim's epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u64>,
    /// When the lease lapses (host clock, ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<f64>,
    /// The lease duration (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

impl LeaseGrant {
    /// The grant in answer `extensions`, when there is one with the expected shape.
    pub fn from_extensions(extensions: Option<&Map>) -> Option<Self> {
        gaos_json::from_value(extensions?.get(EXT_LEASE)?.clone()).ok()
    }

    /// The granted lease token in answer `extensions`, if any.
    pub fn token_in(extensions: Option<&Map>) -> Option<String> {
        extensions?.get(EXT_LEASE)?.get("token")?.as_str().map(str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_grants_are_read_from_answer_extensions() {
        let ext = gaos_json::parse(
            r#"{"gaos.host.lease":{"token":"gaos_lease_x","epoch":2,"expiresAt":1000,"durationMs":500}}"#,
        )
        .expect("JSON");
        let ext = ext.as_object();
        let grant = LeaseGrant::from_extensions(ext).expect("a grant");
        assert_eq!(
            (grant.token.as_deref(), grant.epoch, grant.duration_ms),
            (Some("gaos_lease_x"), Some(2), Some(500))
        );
        assert_eq!(LeaseGrant::token_in(ext).as_deref(), Some("gaos_lease_x"));
        assert_eq!(LeaseGrant::token_in(None), None);
    }
}
