//! RFC-010 signed play, `gaos.submission.ed25519.v1` (kernel spec §5.9):
//! the seat roster and its hash, each seat's chain genesis, the byte-exact
//! submission and periodic preimages, chain links and strict Ed25519
//! verification ([`ed25519`]).
//!
//! The live kernel (ingest, seat signatures, rehydration) and the replay
//! verifier both use this module; neither signs. Signing belongs to the key
//! holder (a client: `gaos_session::signing`).
//!
//! ```
//! use gaos_kernel::signing::{Roster, SeatKey};
//! let key = SeatKey::from_value(&gaos_json::parse(r#"{"id":"alice",
//!     "publicKey":"tw8Nbe4mlkhRhgXn1ETY7VaJ2EQnaZJesOo+vFAxS9w=",
//!     "alg":"Ed25519","signingTier":{"N":1}}"#).unwrap(), 0).unwrap();
//! let roster = Roster::new(vec![key]).unwrap();
//! let genesis = roster.genesis("session-1", "alice").unwrap();
//! assert_eq!(genesis.len(), 32);
//! ```

use gaos_json::{Map, Value, base64_decode_len, base64_encode};
use sha2::{Digest, Sha256};

pub mod ed25519;

pub use ed25519::{VerifyingPoint, verify_ed25519};

/// `signaturePolicy.scheme` of a signed session.
pub const SIGNATURE_SCHEME: &str = "gaos.submission.ed25519.v1";
/// `seatKeys[i].alg`.
pub const SIGNATURE_ALGORITHM: &str = "Ed25519";
/// Domain tag of periodic chain-head signatures.
pub const PERIODIC_TAG: &str = "gaos.submission.ed25519.v1.periodic";
/// Longest text field (UTF-8 bytes) a preimage frames.
pub const MAX_TEXT_BYTES: usize = 65_536;

/// A SHA-256 chain link (a seat's chain head).
pub type ChainHash = [u8; 32];

/// The exact `signaturePolicy` object of a signed session.
pub fn signature_policy_value() -> Value {
    let mut map = Map::new();
    map.insert("scheme".into(), SIGNATURE_SCHEME.into());
    Value::Object(map)
}

/// Check a `signaturePolicy` object: exactly `{"scheme": SIGNATURE_SCHEME}`.
pub fn check_signature_policy(value: &Value) -> Result<(), String> {
    let ok = value.as_object().is_some_and(|m| m.len() == 1)
        && value.get("scheme").and_then(Value::as_str) == Some(SIGNATURE_SCHEME);
    if ok { Ok(()) } else { Err(format!("signaturePolicy must be {{\"scheme\":\"{SIGNATURE_SCHEME}\"}}")) }
}

/// Decode a canonical padded base64 chain hash (32 bytes).
pub fn decode_chain_hash(text: &str) -> Result<ChainHash, String> {
    let bytes =
        base64_decode_len(text, 32).map_err(|e| format!("must be canonical padded base64 of 32 bytes ({e})"))?;
    Ok(bytes.try_into().expect("32 bytes"))
}

/// Decode a canonical padded base64 Ed25519 signature (64 bytes).
pub fn decode_signature(text: &str) -> Result<[u8; 64], String> {
    let bytes =
        base64_decode_len(text, 64).map_err(|e| format!("must be canonical padded base64 of 64 bytes ({e})"))?;
    Ok(bytes.try_into().expect("64 bytes"))
}

/// Canonical padded base64 of a chain hash, signature or key.
pub fn to_base64(bytes: &[u8]) -> String {
    base64_encode(bytes)
}

/// Verify canonical base64 material under the reference's rule; malformed
/// base64 is simply not a valid signature (`verifyEd25519Base64`).
pub fn verify_ed25519_base64(public_key: &str, message: &[u8], signature: &str) -> bool {
    let Ok(key) = decode_chain_hash(public_key) else { return false };
    let Ok(sig) = decode_signature(signature) else { return false };
    verify_ed25519(&key, message, &sig)
}

/// One roster entry: `{id, publicKey, alg: "Ed25519", signingTier: {N}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatKey {
    /// The seat.
    pub id: String,
    /// The raw Ed25519 public key.
    pub public_key: [u8; 32],
    /// `signingTier.N`: a chained-but-unsigned submission must be covered by
    /// a signature of the seat at most N ticks later.
    pub signing_tier: u64,
}

impl SeatKey {
    /// `publicKey` as canonical padded base64.
    pub fn public_key_base64(&self) -> String {
        base64_encode(&self.public_key)
    }

    /// The roster object, `{alg, id, publicKey, signingTier: {N}}`.
    pub fn to_value(&self) -> Value {
        let mut tier = Map::new();
        tier.insert("N".into(), self.signing_tier.into());
        let mut map = Map::new();
        map.insert("id".into(), self.id.clone().into());
        map.insert("publicKey".into(), self.public_key_base64().into());
        map.insert("alg".into(), SIGNATURE_ALGORITHM.into());
        map.insert("signingTier".into(), Value::Object(tier));
        Value::Object(map)
    }

    /// Read `seatKeys[index]`: exactly the four keys, a non-empty id of at most
    /// 65536 bytes, canonical base64 of 32 bytes, `alg` `Ed25519` and a positive
    /// safe-integer tier.
    pub fn from_value(value: &Value, index: usize) -> Result<Self, String> {
        let at = format!("seatKeys[{index}]");
        let map = value.as_object().ok_or_else(|| format!("{at} must be an object"))?;
        let exact = map.len() == 4 && ["id", "publicKey", "alg", "signingTier"].iter().all(|k| map.contains_key(*k));
        if !exact {
            return Err(format!("{at} must be exactly {{id, publicKey, alg, signingTier}}"));
        }
        let id = map.get("id").and_then(Value::as_str).ok_or_else(|| format!("{at}.id must be a string"))?;
        check_text(id, &format!("{at}.id"))?;
        let key = map.get("publicKey").and_then(Value::as_str).unwrap_or("");
        let public_key = decode_chain_hash(key).map_err(|e| format!("{at}.publicKey {e}"))?;
        if map.get("alg").and_then(Value::as_str) != Some(SIGNATURE_ALGORITHM) {
            return Err(format!("{at}.alg must be {SIGNATURE_ALGORITHM}"));
        }
        let tier = map.get("signingTier").and_then(Value::as_object);
        let n = tier.filter(|t| t.len() == 1).and_then(|t| t.get("N")).and_then(Value::as_u64).filter(|n| *n >= 1);
        let signing_tier = n.ok_or_else(|| format!("{at}.signingTier must be {{\"N\": a positive safe integer}}"))?;
        Ok(SeatKey { id: id.to_owned(), public_key, signing_tier })
    }
}

/// Roster hash: b64(SHA-256(canonical JSON of the keys sorted by id)). The
/// hash is independent of the declared order.
pub fn roster_hash(keys: &[SeatKey]) -> ChainHash {
    let mut sorted: Vec<&SeatKey> = keys.iter().collect();
    // UTF-8 byte order is code-point order.
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let list = Value::Array(sorted.into_iter().map(SeatKey::to_value).collect());
    Sha256::digest(gaos_json::canonical_json(&list).as_bytes()).into()
}

/// A session's signing roster (`header.seatKeys`), its hash and each key
/// decoded once.
#[derive(Debug, Clone)]
pub struct Roster {
    keys: Vec<SeatKey>,
    points: Vec<Option<VerifyingPoint>>,
    hash: ChainHash,
}

impl PartialEq for Roster {
    fn eq(&self, other: &Self) -> bool {
        self.keys == other.keys
    }
}

impl Roster {
    /// A roster of one or more keys with unique ids.
    pub fn new(keys: Vec<SeatKey>) -> Result<Self, String> {
        if keys.is_empty() {
            return Err("seatKeys must be a non-empty array".into());
        }
        for (i, key) in keys.iter().enumerate() {
            if keys[..i].iter().any(|k| k.id == key.id) {
                return Err(format!("seatKeys contains duplicate id {}", key.id));
            }
        }
        let hash = roster_hash(&keys);
        let points = keys.iter().map(|k| VerifyingPoint::decode(&k.public_key)).collect();
        Ok(Roster { keys, points, hash })
    }

    /// Read `header.seatKeys`.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let list = value.as_array().ok_or("seatKeys must be a non-empty array")?;
        Roster::new(list.iter().enumerate().map(|(i, v)| SeatKey::from_value(v, i)).collect::<Result<_, _>>()?)
    }

    /// `seatKeys` in declared order.
    pub fn to_value(&self) -> Value {
        Value::Array(self.keys.iter().map(SeatKey::to_value).collect())
    }

    /// The keys in declared order.
    pub fn keys(&self) -> &[SeatKey] {
        &self.keys
    }

    /// The key of `seat`.
    pub fn key(&self, seat: &str) -> Option<&SeatKey> {
        self.keys.iter().find(|k| k.id == seat)
    }

    /// The roster hash.
    pub fn hash(&self) -> &ChainHash {
        &self.hash
    }

    /// Verify `signature` over `message` under `seat`'s key (false for a seat
    /// outside the roster, or a key the reference refuses).
    pub fn verify(&self, seat: &str, message: &[u8], signature: &[u8; 64]) -> bool {
        let index = self.keys.iter().position(|k| k.id == seat);
        index.and_then(|i| self.points[i].as_ref()).is_some_and(|point| point.verify(message, signature))
    }

    /// `seat`'s first expected `prevChainHash`: SHA-256 of
    /// `frame(tag) ‖ frame(sessionId) ‖ frame(seat) ‖ frame(rosterHash)`.
    pub fn genesis(&self, session_id: &str, seat: &str) -> Result<ChainHash, String> {
        genesis(session_id, seat, &self.hash)
    }
}

/// `seat`'s genesis link under a roster hash.
pub fn genesis(session_id: &str, seat: &str, roster_hash: &ChainHash) -> Result<ChainHash, String> {
    let mut out = Vec::with_capacity(64 + session_id.len() + seat.len());
    frame(&mut out, SIGNATURE_SCHEME.as_bytes());
    frame(&mut out, text(session_id, "sessionId")?);
    frame(&mut out, text(seat, "seat")?);
    frame(&mut out, roster_hash);
    Ok(Sha256::digest(&out).into())
}

/// What one chain link signs (`SubmissionSigningEnvelope`), with the command
/// already in canonical JSON.
#[derive(Debug, Clone, Copy)]
pub struct SubmissionLink<'a> {
    pub session_id: &'a str,
    pub seat: &'a str,
    pub submission_id: &'a str,
    pub cursor: u64,
    pub tick: u64,
    pub client_time: u64,
    pub canonical_command: &'a str,
    pub prev_chain_hash: &'a ChainHash,
}

impl SubmissionLink<'_> {
    /// `frame(tag) ‖ frame(sessionId) ‖ frame(seat) ‖ frame(submissionId) ‖
    /// u64(cursor) ‖ u64(tick) ‖ u64(clientTime) ‖ frame(command) ‖
    /// frame(prevChainHash)`.
    pub fn preimage(&self) -> Result<Vec<u8>, String> {
        for (value, name) in [(self.cursor, "cursor"), (self.tick, "tick"), (self.client_time, "clientTime")] {
            check_u64(value, name)?;
        }
        let command = self.canonical_command.as_bytes();
        if command.len() > MAX_TEXT_BYTES {
            return Err(format!("command exceeds {MAX_TEXT_BYTES} canonical UTF-8 bytes"));
        }
        let mut out =
            Vec::with_capacity(96 + self.session_id.len() + self.seat.len() + self.submission_id.len() + command.len());
        frame(&mut out, SIGNATURE_SCHEME.as_bytes());
        frame(&mut out, text(self.session_id, "sessionId")?);
        frame(&mut out, text(self.seat, "seat")?);
        frame(&mut out, text(self.submission_id, "submissionId")?);
        out.extend_from_slice(&self.cursor.to_be_bytes());
        out.extend_from_slice(&self.tick.to_be_bytes());
        out.extend_from_slice(&self.client_time.to_be_bytes());
        frame(&mut out, command);
        frame(&mut out, self.prev_chain_hash);
        Ok(out)
    }
}

/// The chain head after a link: SHA-256 of its preimage.
pub fn chain_link(preimage: &[u8]) -> ChainHash {
    Sha256::digest(preimage).into()
}

/// What a periodic `seat-signature` signs: the seat's current chain head at
/// `tick` (it does not extend the chain).
#[derive(Debug, Clone, Copy)]
pub struct PeriodicAttestation<'a> {
    pub session_id: &'a str,
    pub seat: &'a str,
    pub tick: u64,
    pub client_time: u64,
    pub chain_head: &'a ChainHash,
}

impl PeriodicAttestation<'_> {
    /// `frame(periodic tag) ‖ frame(sessionId) ‖ frame(seat) ‖ u64(tick) ‖
    /// u64(clientTime) ‖ frame(chainHead)`.
    pub fn preimage(&self) -> Result<Vec<u8>, String> {
        check_u64(self.tick, "tick")?;
        check_u64(self.client_time, "clientTime")?;
        let mut out = Vec::with_capacity(96 + self.session_id.len() + self.seat.len());
        frame(&mut out, PERIODIC_TAG.as_bytes());
        frame(&mut out, text(self.session_id, "sessionId")?);
        frame(&mut out, text(self.seat, "seat")?);
        out.extend_from_slice(&self.tick.to_be_bytes());
        out.extend_from_slice(&self.client_time.to_be_bytes());
        frame(&mut out, self.chain_head);
        Ok(out)
    }
}

fn frame(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn check_text(value: &str, name: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("{name} must be non-empty"));
    }
    if value.len() > MAX_TEXT_BYTES {
        return Err(format!("{name} exceeds {MAX_TEXT_BYTES} UTF-8 bytes"));
    }
    Ok(())
}

fn text<'a>(value: &'a str, name: &str) -> Result<&'a [u8], String> {
    check_text(value, name).map(|()| value.as_bytes())
}

fn check_u64(value: u64, name: &str) -> Result<(), String> {
    if value as f64 > gaos_json::MAX_SAFE_INTEGER {
        return Err(format!("{name} must be a non-negative safe integer"));
    }
    Ok(())
}
