//! Pure wire logic of the `gaos.ticks` v1 client, without any IO: URL and
//! path encoding, submission ids, and the checks every answer must pass
//! (lifecycle spec §1–§3). [`crate::SessionClient`] wraps each `Err(reason)`
//! of this module in [`crate::ClientError::ProtocolMismatch`].

use std::collections::BTreeMap;

use gaos_json::{Map, Value, canonical_json};
use gaos_kernel::{SessionBinding, TickEnvelope};
use gaos_runner::receipts::AttachReceipt;
use serde::{Deserialize, Serialize};

/// Extension key under which the host hands out seat and spectator tokens
/// on create.
pub const EXT_CREDENTIALS: &str = "gaos.host.credentials";

/// `encodeURIComponent` (one definition, shared with benchmark bundle
/// file names).
pub use gaos_runner::benchmark::encode_uri_component;

/// Check a base URL and strip its trailing `/`s, so `/v1/...` can be
/// appended (a path prefix such as `http://host/gaos/` works).
pub fn normalize_base_url(base: &str) -> Result<String, String> {
    let trimmed = base.trim().trim_end_matches('/');
    let url = reqwest::Url::parse(trimmed).map_err(|e| format!("base URL {base:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("base URL {base:?} must use http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("base URL {base:?} has no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("base URL {base:?} must not carry a query or fragment"));
    }
    Ok(trimmed.to_owned())
}

/// Check a same-origin product path for [`crate::SessionClient::request_json`]:
/// it starts with one `/`, has no `..` segment, no backslash, fragment or
/// control character, and cannot be read as another origin.
pub fn check_product_path(path: &str) -> Result<(), String> {
    if !path.starts_with('/') || path.starts_with("//") {
        return Err(format!("path {path:?} must start with a single '/'"));
    }
    if path.chars().any(|c| c.is_control() || c.is_whitespace() || c == '\\' || c == '#') {
        return Err(format!("path {path:?} must not contain whitespace, control characters, '\\' or '#'"));
    }
    let route = path.split('?').next().unwrap_or(path);
    if route.split('/').any(|segment| segment == ".." || segment == "." || segment.eq_ignore_ascii_case("%2e%2e")) {
        return Err(format!("path {path:?} must not contain '.' or '..' segments"));
    }
    Ok(())
}

/// The default submission id of `submitCommand`: `"<seat>:<tickId>:<n>"`,
/// where `n` counts the seat's submissions at that tick id from 0.
pub fn default_submission_id(seat: &str, tick_id: &str, n: u64) -> String {
    format!("{seat}:{tick_id}:{n}")
}

/// Decode an error body `{"error": string, "code"?: string}` into
/// `(message, code)`, falling back to the raw body, then the status text.
pub fn parse_error_body(status_text: &str, body: &[u8]) -> (String, Option<String>) {
    if let Ok(value) = gaos_json::parse_bytes(body) {
        let message = value.get("error").and_then(Value::as_str).filter(|m| !m.trim().is_empty());
        let code = value.get("code").and_then(Value::as_str).filter(|c| !c.is_empty()).map(str::to_owned);
        if let Some(message) = message {
            return (message.to_owned(), code);
        }
        if code.is_some() {
            return (status_text.to_owned(), code);
        }
    }
    let raw = String::from_utf8_lossy(body);
    let raw = raw.trim();
    if raw.is_empty() { (status_text.to_owned(), None) } else { (raw.chars().take(2048).collect(), None) }
}

/// Read and check a tick envelope (`TickResult`) against lifecycle spec §2:
/// protocol constants, non-blank ids, `tick` present (may be null), a known
/// `kind`, unique and disjoint pending lists with at least one awaited seat,
/// `acceptedParticipantId` among the submitted seats, and `sessionId` equal
/// to the session asked about (when `expected_session` is given).
pub fn parse_tick_envelope(body: Value, expected_session: Option<&str>) -> Result<TickEnvelope, String> {
    let map =
        body.as_object().ok_or_else(|| format!("a tick envelope must be a JSON object, got {}", body.type_name()))?;
    if !map.contains_key("tick") {
        return Err("the tick envelope has no \"tick\" member (it is required, and may be null)".into());
    }
    let envelope: TickEnvelope = gaos_json::from_value(body).map_err(|e| format!("malformed tick envelope: {e}"))?;
    envelope.validate().map_err(|e| format!("invalid tick envelope: {e}"))?;
    if let Some(expected) = expected_session
        && envelope.session_id != expected
    {
        return Err(format!("the envelope is for session {:?}, not the requested {expected:?}", envelope.session_id));
    }
    Ok(envelope)
}

/// Read and check a `SessionBinding`: the exact shape, protocol constants,
/// non-blank ids, a safe revision and a valid seat id.
pub fn parse_binding(value: &Value) -> Result<SessionBinding, String> {
    let binding: SessionBinding =
        gaos_json::from_value(value.clone()).map_err(|e| format!("malformed session binding: {e}"))?;
    binding.validate().map_err(|e| format!("invalid session binding: {e}"))?;
    Ok(binding)
}

/// The seat and spectator tokens a host hands to the creator of a session
/// (`extensions["gaos.host.credentials"]`). `Debug` never prints a token.
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
    let Some(value) = envelope.extensions.as_ref().and_then(|ext| ext.get(EXT_CREDENTIALS)) else {
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

/// `SessionAttachRequest`: `{requestId, participantId?, controller?, extensions?}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AttachRequest {
    /// Idempotency key: the same id at the same revision returns the same receipt.
    pub request_id: String,
    /// The seat to attach; the host checks it against the token.
    pub participant_id: Option<String>,
    /// A `SessionControllerIdentity`; must match the session's pinned one.
    pub controller: Option<Value>,
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
            map.insert("controller".into(), controller.clone());
        }
        if let Some(extensions) = &self.extensions {
            map.insert("extensions".into(), Value::Object(extensions.clone()));
        }
        Value::Object(map)
    }
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
                && canonical_json(asked) != canonical_json(&Value::Object(got.clone()))
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

/// The finalize request and result artifacts are the runner's types (one
/// definition of each wire shape).
pub use gaos_runner::{FinalizeRequest, SessionArtifact};

/// `SessionResult`: the fixed outcome of a finalized session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionResult {
    /// The session.
    pub session_id: String,
    /// Always `finalized`.
    pub status: String,
    /// The game's outcome (required, any JSON).
    pub outcome: Value,
    /// The replay (JSON or `gaos.replay` JSONL text), when the policy asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Value>,
    /// Evaluation facts, when the policy evaluates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation: Option<Map>,
    /// Artifacts (replay download, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<SessionArtifact>>,
    /// Product extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Map>,
}

/// Read and check a finalize answer: `sessionId` equals the session asked
/// about, `status` is `finalized`, `outcome` is present.
pub fn parse_session_result(body: &Value, session_id: &str) -> Result<SessionResult, String> {
    let map =
        body.as_object().ok_or_else(|| format!("a session result must be a JSON object, got {}", body.type_name()))?;
    if !map.contains_key("outcome") {
        return Err("the session result has no outcome".into());
    }
    let result: SessionResult =
        gaos_json::from_value(body.clone()).map_err(|e| format!("malformed session result: {e}"))?;
    if result.session_id != session_id {
        return Err(format!("the session result is for {:?}, not the requested {session_id:?}", result.session_id));
    }
    if result.status != "finalized" {
        return Err(format!("the session result status is {:?}, not \"finalized\"", result.status));
    }
    Ok(result)
}
