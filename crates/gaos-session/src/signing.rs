//! RFC-010 signed play, the key holder's side: a seat's Ed25519 key (and its
//! key file), and the chain signer a [`LifecycleHandle`](crate::LifecycleHandle)
//! uses to stamp `clientTime`, `prevChainHash` and `sig` on every
//! submission it sends (kernel spec §4.8, §5.9).
//!
//! Signing is `ed25519-dalek` (deterministic, no randomness); verification
//! is the kernel's ([`gaos_kernel::signing`]), the reference's strict rule.
//!
//! The chain is the client's own: it starts from the position the host's
//! envelope names (`extensions["gaos.session.signing"]`; at the genesis it
//! is checked against the roster hash) and then moves only with this
//! client's accepted submissions. A host that dropped or altered an accepted
//! move of the seat makes the seat's next submission fail (`invalid_signature`,
//! chain head), rather than the seat unknowingly signing over the gap.

use std::path::Path;

use ed25519_dalek::{Signer, SigningKey};
use gaos_json::{Map, Value};
use gaos_kernel::CommandSubmission;
use gaos_kernel::signing::{
    ChainHash, SIGNATURE_ALGORITHM, SIGNATURE_SCHEME, SubmissionLink, chain_link, decode_chain_hash, genesis, to_base64,
};

use crate::error::SessionError;

/// The envelope extension naming a seat's chain position.
pub const EXT_SIGNING: &str = "gaos.session.signing";
/// `format` of a seat key file.
pub const KEY_FILE_FORMAT: &str = "gaos.seat-key.v1";

/// A seat's Ed25519 signing key.
#[derive(Clone)]
pub struct SeatSigningKey {
    key: SigningKey,
}

impl std::fmt::Debug for SeatSigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeatSigningKey").field("public_key", &self.public_key_base64()).finish_non_exhaustive()
    }
}

impl SeatSigningKey {
    /// The key of a 32-byte seed (RFC 8032 private key).
    pub fn from_seed(seed: [u8; 32]) -> Self {
        SeatSigningKey { key: SigningKey::from_bytes(&seed) }
    }

    /// The raw public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The public key as canonical padded base64 (the roster's `publicKey`).
    pub fn public_key_base64(&self) -> String {
        to_base64(&self.public_key())
    }

    /// Ed25519 over `message`.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }

    /// This key's roster entry for `seat`: `{id, publicKey, alg, signingTier: {N}}`.
    pub fn seat_key(&self, seat: &str, signing_tier: u64) -> Value {
        gaos_kernel::signing::SeatKey { id: seat.into(), public_key: self.public_key(), signing_tier }.to_value()
    }

    /// The key file: `{"format","alg","publicKey","seed"}` (seed in base64).
    pub fn to_file_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("format".into(), KEY_FILE_FORMAT.into());
        map.insert("alg".into(), SIGNATURE_ALGORITHM.into());
        map.insert("publicKey".into(), self.public_key_base64().into());
        map.insert("seed".into(), to_base64(self.key.as_bytes()).into());
        Value::Object(map)
    }

    /// Read a key file's JSON (its `publicKey` must be the seed's).
    pub fn from_file_value(value: &Value) -> Result<Self, String> {
        if value.get("format").and_then(Value::as_str) != Some(KEY_FILE_FORMAT) {
            return Err(format!("not a {KEY_FILE_FORMAT} key file (format)"));
        }
        let seed = value.get("seed").and_then(Value::as_str).ok_or("the key file has no seed")?;
        let seed = decode_chain_hash(seed).map_err(|e| format!("seed {e}"))?;
        let key = SeatSigningKey::from_seed(seed);
        if value.get("publicKey").and_then(Value::as_str) != Some(key.public_key_base64().as_str()) {
            return Err("the key file's publicKey is not the public key of its seed".into());
        }
        Ok(key)
    }

    /// A key derived from this one for `context` (SHA-256 of a domain tag,
    /// this key's seed and `context`): deterministic, so it can be made
    /// again from the same key and context (`gaos bench run` signs the
    /// seats without a key file of an episode with keys derived from an
    /// entrant's key and the episode, so a resume signs with the same
    /// ones), and secret to whoever holds this key.
    pub fn derive(&self, context: &str) -> SeatSigningKey {
        let mut material = b"gaos.seat-key.derive.v1\0".to_vec();
        material.extend_from_slice(self.key.as_bytes());
        material.extend_from_slice(context.as_bytes());
        SeatSigningKey::from_seed(gaos_json::sha256(&material))
    }

    /// Read a key file (`gaos keygen` writes [`Self::to_file_value`]).
    pub fn read_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let value = gaos_json::parse(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        Self::from_file_value(&value).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// A seat's chain as its signing client keeps it.
#[derive(Debug)]
pub(crate) struct ChainSigner {
    key: SeatSigningKey,
    head: Option<ChainHash>,
    /// The head after a sent submission, applied once the host accepts it.
    pending: Option<(String, ChainHash)>,
}

impl ChainSigner {
    pub(crate) fn new(key: SeatSigningKey) -> Self {
        ChainSigner { key, head: None, pending: None }
    }

    /// Whether the chain position is known yet.
    pub(crate) fn has_head(&self) -> bool {
        self.head.is_some()
    }

    /// Take the position an envelope names (once; later ones are the
    /// client's own). At the genesis the head must be the one the roster
    /// hash implies.
    pub(crate) fn adopt(&mut self, session_id: &str, seat: &str, extensions: Option<&Map>) -> Result<(), SessionError> {
        if self.head.is_some() {
            return Ok(());
        }
        let protocol = |m: String| SessionError::Protocol(m);
        let Some(ext) = extensions.and_then(|e| e.get(EXT_SIGNING)) else {
            return Err(protocol(format!(
                "the host's envelope names no chain position ({EXT_SIGNING}): is session {session_id} signed \
                 (created with seatKeys)?"
            )));
        };
        if ext.get("scheme").and_then(Value::as_str) != Some(SIGNATURE_SCHEME) {
            return Err(protocol(format!("{EXT_SIGNING}.scheme is not {SIGNATURE_SCHEME}")));
        }
        if let Some(awaiting) = ext.get("awaitingSeatKeys") {
            return Err(protocol(format!(
                "session {session_id} waits for seats {awaiting} to register their keys at attach; no seat signs \
                 (or moves) before the roster is complete"
            )));
        }
        let field = |key: &str| {
            ext.get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| protocol(format!("{EXT_SIGNING}.{key} is missing")))
                .and_then(|t| decode_chain_hash(t).map_err(|e| protocol(format!("{EXT_SIGNING}.{key} {e}"))))
        };
        let head = field("chainHead")?;
        let roster = field("rosterHash")?;
        let submissions = ext.get("submissions").and_then(Value::as_u64).unwrap_or(0);
        if submissions == 0 {
            let expected = genesis(session_id, seat, &roster).map_err(protocol)?;
            if expected != head {
                return Err(protocol(format!("the host names a chain head for {seat} that is not its genesis")));
            }
        }
        self.head = Some(head);
        Ok(())
    }

    /// Stamp `clientTime`, `prevChainHash` and `sig` on `submission`, at
    /// cursor and tick = its revision (a single-level session).
    pub(crate) fn sign(&mut self, submission: &mut CommandSubmission, client_time: u64) -> Result<(), SessionError> {
        let head = self.head.ok_or_else(|| SessionError::Protocol("the seat's chain position is unknown".into()))?;
        let command = submission.command.as_ref().map(gaos_json::canonical_json).unwrap_or_default();
        let submission_id = submission.submission_id.clone().unwrap_or_default();
        let revision = submission.revision as u64;
        let link = SubmissionLink {
            session_id: &submission.session_id,
            seat: &submission.participant_id,
            submission_id: &submission_id,
            cursor: revision,
            tick: revision,
            client_time,
            canonical_command: &command,
            prev_chain_hash: &head,
        };
        let preimage = link.preimage().map_err(SessionError::InvalidArgument)?;
        submission.client_time = Some(client_time.into());
        submission.prev_chain_hash = Some(to_base64(&head).into());
        submission.sig = Some(to_base64(&self.key.sign(&preimage)).into());
        self.pending = Some((submission_id, chain_link(&preimage)));
        Ok(())
    }

    /// The host accepted `submission_id`: the chain moves to its link.
    pub(crate) fn accepted(&mut self, submission_id: Option<&str>) {
        if let Some((id, next)) = self.pending.take() {
            if Some(id.as_str()) == submission_id {
                self.head = Some(next);
            } else {
                self.pending = Some((id, next));
            }
        }
    }
}

/// Milliseconds since the Unix epoch (the `clientTime` of a signed
/// submission: the signer's own clock, never read by the kernel).
pub(crate) fn client_time_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
