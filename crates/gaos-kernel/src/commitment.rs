//! Commit–reveal `gaos.commit.sha256.v1` (RFC-008).

use gaos_json::{Value, canonical_json, hex_decode, hex_encode};
use sha2::{Digest, Sha256};

use crate::action::{COMMIT_SCHEME, CommitEnvelope, RevealEnvelope};

mod book;

pub(crate) use book::{Commitment, CommitmentBook, RevealCheck, SaltOwner};

/// Largest canonical payload a reveal may carry, in UTF-8 bytes.
pub const MAX_PAYLOAD_BYTES: usize = 65_536;

/// What a commitment binds to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitmentBinding<'a> {
    pub session_id: &'a str,
    pub seat: &'a str,
    pub commitment_id: u32,
    /// The tick of the resolution that recorded the commit.
    pub window_ref: u64,
}

fn frame(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// The framed preimage, or why the inputs are out of bounds.
pub fn commitment_preimage(
    binding: &CommitmentBinding<'_>,
    salt_hex: &str,
    payload: &Value,
) -> Result<Vec<u8>, String> {
    if binding.session_id.is_empty() || binding.session_id.len() > 128 {
        return Err("sessionId must be 1..128 UTF-8 bytes".into());
    }
    if binding.seat.is_empty() || binding.seat.len() > 64 {
        return Err("seat must be 1..64 UTF-8 bytes".into());
    }
    if binding.window_ref as f64 > gaos_json::MAX_SAFE_INTEGER {
        return Err("windowRef must be a safe integer".into());
    }
    let salt = hex_decode(salt_hex).map_err(|e| format!("salt: {e}"))?;
    if !(16..=64).contains(&salt.len()) {
        return Err(format!("salt must be 16..64 bytes, found {}", salt.len()));
    }
    let payload_text = canonical_json(payload);
    if payload_text.len() > MAX_PAYLOAD_BYTES {
        return Err(format!("payload exceeds {MAX_PAYLOAD_BYTES} bytes"));
    }
    let mut out = Vec::with_capacity(64 + payload_text.len() + salt.len());
    frame(&mut out, COMMIT_SCHEME.as_bytes());
    frame(&mut out, binding.session_id.as_bytes());
    frame(&mut out, binding.seat.as_bytes());
    out.extend_from_slice(&u64::from(binding.commitment_id).to_be_bytes());
    out.extend_from_slice(&binding.window_ref.to_be_bytes());
    frame(&mut out, &salt);
    frame(&mut out, payload_text.as_bytes());
    Ok(out)
}

/// Lowercase hex SHA-256 of the framed preimage.
pub fn commitment_hash(binding: &CommitmentBinding<'_>, salt_hex: &str, payload: &Value) -> Result<String, String> {
    Ok(hex_encode(&Sha256::digest(commitment_preimage(binding, salt_hex, payload)?)))
}

/// True when `hash` is 64 lowercase hex digits.
pub fn is_commitment_hash(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Check a commit envelope's own shape.
pub fn validate_commit_envelope(commit: &CommitEnvelope) -> Result<(), String> {
    if commit.scheme != COMMIT_SCHEME {
        return Err(format!("unknown commitment scheme {:?}", commit.scheme));
    }
    if !is_commitment_hash(&commit.hash) {
        return Err("commitment hash must be 64 lowercase hex digits".into());
    }
    Ok(())
}

/// Whether a reveal matches its commitment. `Err` when the reveal cannot be
/// hashed at all (malformed salt or payload).
pub fn verify_reveal(
    binding: &CommitmentBinding<'_>,
    commit: &CommitEnvelope,
    reveal: &RevealEnvelope,
) -> Result<bool, String> {
    Ok(commitment_hash(binding, &reveal.salt, &reveal.payload)? == commit.hash)
}
