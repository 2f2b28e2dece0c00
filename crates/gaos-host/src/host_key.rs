//! The host key: the one secret at rest from which every secret a stored
//! answer would otherwise hold is derived, so the database never holds a
//! token, a lease token or a digest key in plaintext.
//!
//! It is 32 random bytes in `DIR/host-key` (mode 0600, beside the database,
//! never inside it), created on the first start. From it, with HMAC-SHA256:
//! - the tokens of a create answer (seat tokens, the spectator token, the
//!   creator's lease token), from the session id;
//! - the lease token of an attach answer, from the session, seat and
//!   request id;
//! - the session's receipt digest key, from the session id.
//!
//! Stored answers keep [`SEALED`] where the token was (at fixed places only:
//! see [`seal`]); an exact retry re-derives the token and gets the
//! byte-identical answer, across restarts. A copy of the database (a backup,
//! a bug report) therefore holds only token hashes; the host key is what the
//! operator protects, like the operator token file.

use std::path::Path;

use gaos_json::{Value, canonical_json, hex_encode};

use crate::digest_key::{DigestKey, hmac_sha256};
use crate::envelope::{EXT_CREDENTIALS, EXT_LEASE};

/// The name of the host key file in the data directory.
pub const HOST_KEY_FILE: &str = "host-key";

/// What a stored answer holds where a secret was.
pub(crate) const SEALED: &str = "sealed";

/// The host key.
#[derive(Clone, PartialEq, Eq)]
pub struct HostKey([u8; 32]);

impl std::fmt::Debug for HostKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostKey(..)")
    }
}

impl Default for HostKey {
    /// A fresh random key: for a host whose store does not outlive it
    /// (in-memory tests). A persistent host loads [`HostKey::load_or_create`].
    fn default() -> Self {
        HostKey(rand::random())
    }
}

impl HostKey {
    /// `DIR/host-key`, created (0600) with a fresh key on first use.
    pub fn load_or_create(dir: &Path) -> Result<HostKey, String> {
        let path = dir.join(HOST_KEY_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => DigestKey::from_hex(&text)
                .map(|k| HostKey(k.bytes()))
                .ok_or_else(|| format!("{} is not 64 hex digits; restore it from a backup", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = HostKey::default();
                write_private(&path, &format!("{}\n", hex_encode(&key.0)))
                    .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
                Ok(key)
            }
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    fn derive(&self, label: &str, parts: &[&str]) -> [u8; 32] {
        let mut message = label.as_bytes().to_vec();
        for part in parts {
            // Lengths first, so no two part lists give the same message.
            message.push(0);
            message.extend_from_slice(&(part.len() as u64).to_be_bytes());
            message.extend_from_slice(part.as_bytes());
        }
        hmac_sha256(&self.0, &message)
    }

    /// A token of a create answer: `gaos_seat_…` for `seat`, `gaos_spec_…`
    /// (`seat` empty), the creator's `gaos_lease_…`.
    pub(crate) fn create_token(&self, prefix: &str, session_id: &str, seat: &str) -> String {
        format!("{prefix}{}", hex_encode(&self.derive("gaos.create-token.v1", &[prefix, session_id, seat])))
    }

    /// The lease token of an attach answer. One attach answer exists per
    /// seat and request id (a changed retry is refused), so these name it.
    pub(crate) fn attach_lease_token(&self, session_id: &str, seat: &str, request_id: &str) -> String {
        let mac = self.derive("gaos.attach-lease-token.v1", &[session_id, seat, request_id]);
        format!("gaos_lease_{}", hex_encode(&mac))
    }

    /// A one-way fingerprint of the key: what the hosts of a cluster
    /// compare (in the database) to find out that they share one key.
    pub fn fingerprint(&self) -> String {
        hex_encode(&self.derive("gaos.host-key-fingerprint.v1", &[]))
    }

    /// The receipt digest key of a session.
    pub(crate) fn digest_key(&self, session_id: &str) -> DigestKey {
        DigestKey::from_bytes(self.derive("gaos.digest-key.v1", &[session_id]))
    }
}

/// Where an answer holds secrets: the lease token (create and attach) and
/// the credentials (create). Only these places are sealed and unsealed, so
/// no string a caller sent (a controller id, a request id) is ever taken
/// for a sealed secret.
fn secret_places(answer: &mut Value) -> Vec<&mut Value> {
    let mut places = Vec::new();
    let Some(Value::Object(ext)) = answer.get_mut_path("extensions") else { return places };
    let (mut lease, mut credentials) = (None, None);
    for (key, value) in ext.iter_mut() {
        if key == EXT_LEASE {
            lease = Some(value);
        } else if key == EXT_CREDENTIALS {
            credentials = Some(value);
        }
    }
    if let Some(Value::Object(lease)) = lease
        && let Some(token) = lease.get_mut("token")
    {
        places.push(token);
    }
    if let Some(Value::Object(credentials)) = credentials {
        for (key, value) in credentials.iter_mut() {
            match (key.as_str(), value) {
                ("spectator", v @ Value::String(_)) => places.push(v),
                ("seats", Value::Object(seats)) => places.extend(seats.values_mut()),
                _ => {}
            }
        }
    }
    places
}

/// The answer as stored: every secret replaced by [`SEALED`].
pub(crate) fn seal(answer: &Value) -> String {
    let mut stored = answer.clone();
    for place in secret_places(&mut stored) {
        *place = Value::String(SEALED.into());
    }
    canonical_json(&stored)
}

/// Whether a value serialized as `body` still holds a secret (tests).
#[cfg(test)]
fn holds_secret(body: &str) -> bool {
    body.contains("gaos_lease_") || body.contains("gaos_seat_") || body.contains("gaos_spec_")
}

/// A stored create answer with its tokens re-derived.
pub(crate) fn unseal_create(stored: &str, key: &HostKey) -> Result<String, String> {
    let mut answer = gaos_json::parse(stored).map_err(|e| format!("a stored create answer is not JSON: {e}"))?;
    let session_id =
        answer.get("sessionId").and_then(Value::as_str).ok_or("a stored create answer has no sessionId")?;
    let session_id = session_id.to_owned();
    if let Some(Value::Object(ext)) = answer.get_mut_path("extensions") {
        if let Some(Value::Object(lease)) = ext.get_mut(EXT_LEASE)
            && lease.get("token").and_then(Value::as_str) == Some(SEALED)
        {
            lease.insert("token".into(), key.create_token("gaos_lease_", &session_id, "").into());
        }
        if let Some(Value::Object(credentials)) = ext.get_mut(EXT_CREDENTIALS) {
            if credentials.get("spectator").and_then(Value::as_str) == Some(SEALED) {
                credentials.insert("spectator".into(), key.create_token("gaos_spec_", &session_id, "").into());
            }
            if let Some(Value::Object(seats)) = credentials.get_mut("seats") {
                for (seat, token) in seats.iter_mut() {
                    if token.as_str() == Some(SEALED) {
                        *token = key.create_token("gaos_seat_", &session_id, seat).into();
                    }
                }
            }
        }
    }
    Ok(canonical_json(&answer))
}

/// A stored attach answer with its lease token re-derived.
pub(crate) fn unseal_attach(
    stored: &str,
    key: &HostKey,
    session_id: &str,
    seat: &str,
    request_id: &str,
) -> Result<String, String> {
    let mut answer = gaos_json::parse(stored).map_err(|e| format!("a stored attach answer is not JSON: {e}"))?;
    if let Some(Value::Object(ext)) = answer.get_mut_path("extensions")
        && let Some(Value::Object(lease)) = ext.get_mut(EXT_LEASE)
        && lease.get("token").and_then(Value::as_str) == Some(SEALED)
    {
        lease.insert("token".into(), key.attach_lease_token(session_id, seat, request_id).into());
    }
    Ok(canonical_json(&answer))
}

/// `get_mut` on an object's key.
trait GetMutPath {
    fn get_mut_path(&mut self, key: &str) -> Option<&mut Value>;
}

impl GetMutPath for Value {
    fn get_mut_path(&mut self, key: &str) -> Option<&mut Value> {
        match self {
            Value::Object(map) => map.get_mut(key),
            _ => None,
        }
    }
}

#[cfg(unix)]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create_answer(key: &HostKey) -> Value {
        let text = format!(
            r#"{{"sessionId":"s-1","extensions":{{"{EXT_CREDENTIALS}":{{"seats":{{"a":"{}","b":"{}"}},"spectator":"{}"}},"{EXT_LEASE}":{{"epoch":1,"token":"{}"}}}},"controller":{{"id":"sealed"}}}}"#,
            key.create_token("gaos_seat_", "s-1", "a"),
            key.create_token("gaos_seat_", "s-1", "b"),
            key.create_token("gaos_spec_", "s-1", ""),
            key.create_token("gaos_lease_", "s-1", ""),
        );
        gaos_json::parse(&text).expect("JSON")
    }

    #[test]
    fn a_sealed_create_answer_holds_no_token_and_unseals_byte_for_byte() {
        let key = HostKey::default();
        let answer = create_answer(&key);
        let stored = seal(&answer);
        assert!(!holds_secret(&stored), "{stored}");
        assert_eq!(unseal_create(&stored, &key).expect("unseals"), canonical_json(&answer));
        let other = HostKey::default();
        assert_ne!(
            unseal_create(&stored, &other).expect("unseals"),
            canonical_json(&answer),
            "another key, other tokens"
        );
    }

    #[test]
    fn only_the_secret_places_are_unsealed() {
        // A caller's string that reads "sealed" stays as it is.
        let key = HostKey::default();
        let stored = seal(&create_answer(&key));
        let unsealed = gaos_json::parse(&unseal_create(&stored, &key).expect("unseals")).expect("JSON");
        assert_eq!(unsealed.get("controller").and_then(|c| c.get("id")), Some(&Value::String("sealed".into())));
    }

    #[test]
    fn attach_lease_tokens_differ_by_every_part() {
        let key = HostKey::default();
        let base = key.attach_lease_token("s", "a", "r");
        assert_ne!(base, key.attach_lease_token("t", "a", "r"));
        assert_ne!(base, key.attach_lease_token("s", "b", "r"));
        assert_ne!(base, key.attach_lease_token("s", "a", "r2"));
        assert_ne!(key.attach_lease_token("s", "ab", ""), key.attach_lease_token("s", "a", "b"));
        let answer: Value =
            gaos_json::parse(&format!(r#"{{"extensions":{{"{EXT_LEASE}":{{"epoch":1,"token":"{base}"}}}}}}"#))
                .expect("JSON");
        let stored = seal(&answer);
        assert!(!holds_secret(&stored));
        assert_eq!(unseal_attach(&stored, &key, "s", "a", "r").expect("unseals"), canonical_json(&answer));
    }

    #[test]
    fn the_key_file_is_created_once_and_owner_only() {
        let dir = std::env::temp_dir().join(format!("gaos-host-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let first = HostKey::load_or_create(&dir).expect("created");
        assert_eq!(HostKey::load_or_create(&dir).expect("read back"), first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(HOST_KEY_FILE)).expect("file").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
