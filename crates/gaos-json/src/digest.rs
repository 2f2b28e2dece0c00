use sha2::{Digest, Sha256};

use crate::canonical::{CanonicalSink, write_canonical};
use crate::codec::hex_encode;
use crate::value::Value;

const FNV_OFFSET: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

/// Streaming FNV-1a 32 over the **UTF-16 code units** of the text pushed into
/// it (the reference hashes JavaScript strings, not UTF-8 bytes).
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a32 {
    hash: u32,
}

impl Default for Fnv1a32 {
    fn default() -> Self {
        Fnv1a32 { hash: FNV_OFFSET }
    }
}

impl Fnv1a32 {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn update(&mut self, s: &str) {
        let mut h = self.hash;
        if s.is_ascii() {
            for &b in s.as_bytes() {
                h = (h ^ u32::from(b)).wrapping_mul(FNV_PRIME);
            }
        } else {
            for unit in s.encode_utf16() {
                h = (h ^ u32::from(unit)).wrapping_mul(FNV_PRIME);
            }
        }
        self.hash = h;
    }

    pub fn finish(&self) -> u32 {
        self.hash
    }
}

impl CanonicalSink for Fnv1a32 {
    #[inline]
    fn push_str(&mut self, s: &str) {
        self.update(s);
    }
}

/// `fnv1a(s)` of the reference: FNV-1a 32 over UTF-16 code units.
pub fn fnv1a32(s: &str) -> u32 {
    let mut h = Fnv1a32::new();
    h.update(s);
    h.finish()
}

/// `fnv1a(canonicalJson(value))` without building the text.
pub fn canonical_fnv1a32(value: &Value) -> u32 {
    let mut h = Fnv1a32::new();
    write_canonical(value, &mut h);
    h.finish()
}

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex_encode(&sha256(bytes))
}

struct ShaSink(Sha256);

impl CanonicalSink for ShaSink {
    fn push_str(&mut self, s: &str) {
        self.0.update(s.as_bytes());
    }
}

/// Lowercase hex SHA-256 of the UTF-8 canonical JSON of `value`.
pub fn canonical_sha256_hex(value: &Value) -> String {
    let mut sink = ShaSink(Sha256::new());
    write_canonical(value, &mut sink);
    hex_encode(&sink.0.finalize())
}
