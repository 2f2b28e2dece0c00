//! Pure wire logic of the `gaos.ticks` v1 client, without any IO: URL and
//! path encoding, submission ids, and the checks every answer must pass
//! (lifecycle spec §1–§3). [`crate::SessionClient`] wraps each `Err(reason)`
//! of this module in [`crate::ClientError::ProtocolMismatch`].
//!
//! The request and answer shapes, and their checks, are the session
//! contract's (`gaos-session`, one definition for every client and host);
//! they are re-exported here.

use gaos_json::Value;
use gaos_session::ErrorCode;
pub use gaos_session::{
    AttachRequest, EXT_CREDENTIALS, FinalizeRequest, SessionArtifact, SessionAttach, SessionCredentials, SessionResult,
    default_submission_id, encode_uri_component, parse_binding, parse_credentials, parse_session_attach,
    parse_tick_envelope,
};

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

/// Decode an error body `{"error": string, "code"?: string}` into
/// `(message, code)`, falling back to the raw body, then the status text.
pub fn parse_error_body(status_text: &str, body: &[u8]) -> (String, Option<ErrorCode>) {
    if let Ok(value) = gaos_json::parse_bytes(body) {
        let message = value.get("error").and_then(Value::as_str).filter(|m| !m.trim().is_empty());
        let code = value.get("code").and_then(Value::as_str).filter(|c| !c.is_empty()).map(ErrorCode::parse);
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

/// Read and check a finalize answer: `sessionId` equals the session asked
/// about, `status` is `finalized`, `outcome` is present (see
/// [`SessionResult::parse`]).
pub fn parse_session_result(body: &Value, session_id: &str) -> Result<SessionResult, String> {
    SessionResult::parse(body.clone(), session_id)
}
