//! Credentials: the operator token, per-seat tokens and spectator tokens.
//! Tokens are random 256-bit secrets shown once; only their SHA-256 is kept.
//! Comparisons are constant-time, and no token or hash is ever logged.

use std::collections::HashMap;
use std::path::Path;
use std::sync::RwLock;

use axum::http::HeaderMap;
use gaos_json::{hex_encode, sha256_hex};

use crate::error::HostError;
use crate::storage::{CredentialRecord, CredentialRole};

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    Operator,
    Seat { session_id: String, seat: String },
    Spectator { session_id: String },
}

impl Caller {
    /// The seat this caller acts for in `session_id`, if any.
    pub fn seat_in(&self, session_id: &str) -> Option<&str> {
        match self {
            Caller::Seat { session_id: s, seat } if s == session_id => Some(seat),
            _ => None,
        }
    }

    /// Whether the caller may read `session_id` at all.
    pub fn may_read(&self, session_id: &str) -> bool {
        match self {
            Caller::Operator => true,
            Caller::Seat { session_id: s, .. } | Caller::Spectator { session_id: s } => s == session_id,
        }
    }
}

/// A new random token with a recognizable prefix (`gaos_op_`, `gaos_seat_`,
/// `gaos_spec_`).
pub(crate) fn new_token(prefix: &str) -> String {
    let bytes: [u8; 32] = rand::random();
    format!("{prefix}{}", hex_encode(&bytes))
}

/// SHA-256 hex of a token (what is stored).
pub(crate) fn token_hash(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// The bearer token of a request, if any.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// The credential table of the host, by token hash.
pub(crate) struct Credentials {
    operator_hash: String,
    by_hash: RwLock<HashMap<String, CredentialRecord>>,
    /// Counts revocations, so what a token opened earlier (a stream) can
    /// look again whether the token still holds (`http/stream_auth.rs`).
    revocations: tokio::sync::watch::Sender<u64>,
}

impl Credentials {
    pub(crate) fn new(operator_token: &str, records: Vec<CredentialRecord>) -> Self {
        Credentials {
            operator_hash: token_hash(operator_token),
            by_hash: RwLock::new(records.into_iter().map(|r| (r.token_hash.clone(), r)).collect()),
            revocations: tokio::sync::watch::channel(0).0,
        }
    }

    /// Changes whenever a token is revoked.
    pub(crate) fn revocations(&self) -> tokio::sync::watch::Receiver<u64> {
        self.revocations.subscribe()
    }

    pub(crate) fn insert(&self, record: CredentialRecord) {
        if let Ok(mut map) = self.by_hash.write() {
            map.insert(record.token_hash.clone(), record);
        }
    }

    /// Forget every credential of `session_id` (its session moved to
    /// another host of the cluster; they are read again if it comes back).
    pub(crate) fn forget_session(&self, session_id: &str) {
        if let Ok(mut map) = self.by_hash.write() {
            map.retain(|_, r| r.session_id != session_id);
        }
    }

    /// Replace the credentials of `session_id` with `records` (as stored).
    pub(crate) fn replace_session(&self, session_id: &str, records: Vec<CredentialRecord>) {
        if let Ok(mut map) = self.by_hash.write() {
            map.retain(|_, r| r.session_id != session_id);
            map.extend(records.into_iter().map(|r| (r.token_hash.clone(), r)));
        }
    }

    /// Drop every seat token of `seat` in `session_id` (reissue).
    pub(crate) fn revoke_seat(&self, session_id: &str, seat: &str) {
        if let Ok(mut map) = self.by_hash.write() {
            map.retain(|_, r| {
                !(r.session_id == session_id && r.role == CredentialRole::Seat && r.seat.as_deref() == Some(seat))
            });
        }
        self.revocations.send_modify(|n| *n += 1);
    }

    /// Resolve a bearer token; `None` when absent or unknown.
    pub(crate) fn resolve(&self, token: Option<&str>) -> Result<Caller, HostError> {
        let token =
            token.ok_or_else(|| HostError::unauthorized("missing bearer token (Authorization: Bearer <token>)"))?;
        let hash = token_hash(token);
        if constant_time_eq::constant_time_eq(hash.as_bytes(), self.operator_hash.as_bytes()) {
            return Ok(Caller::Operator);
        }
        let map = self.by_hash.read().map_err(|_| HostError::internal("credential table poisoned"))?;
        let record = map.get(&hash).ok_or_else(|| HostError::unauthorized("unknown or revoked token"))?;
        // The lookup was by hash; compare again in constant time before use.
        if !constant_time_eq::constant_time_eq(record.token_hash.as_bytes(), hash.as_bytes()) {
            return Err(HostError::unauthorized("unknown or revoked token"));
        }
        Ok(match (record.role, &record.seat) {
            (CredentialRole::Seat, Some(seat)) => {
                Caller::Seat { session_id: record.session_id.clone(), seat: seat.clone() }
            }
            _ => Caller::Spectator { session_id: record.session_id.clone() },
        })
    }
}

/// Where the operator token comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OperatorTokenSource {
    /// `GAOS_OPERATOR_TOKEN` was set.
    Environment,
    /// Read from the token file in the data directory.
    File(std::path::PathBuf),
    /// Created now, on first start.
    Created(std::path::PathBuf),
}

/// The operator token: `GAOS_OPERATOR_TOKEN` if set, else the `operator-token`
/// file of the data directory, created (mode 0600) on first start.
pub(crate) fn operator_token(data_dir: &Path) -> std::io::Result<(String, OperatorTokenSource)> {
    if let Ok(token) = std::env::var("GAOS_OPERATOR_TOKEN")
        && !token.trim().is_empty()
    {
        return Ok((token.trim().to_owned(), OperatorTokenSource::Environment));
    }
    let path = data_dir.join("operator-token");
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => Ok((text.trim().to_owned(), OperatorTokenSource::File(path))),
        _ => {
            let token = new_token("gaos_op_");
            write_secret(&path, &format!("{token}\n"))?;
            Ok((token, OperatorTokenSource::Created(path)))
        }
    }
}

#[cfg(unix)]
fn write_secret(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

#[cfg(not(unix))]
fn write_secret(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}
