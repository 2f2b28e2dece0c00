//! The per-session digest key: a 32-byte secret derived from the host key
//! and the session id (`host_key.rs`; sessions from before that keep the
//! random key stored in their state), never stored by new sessions and never
//! sent in any answer, transcript, replay or metric.
//!
//! Why keyed: an attach receipt's `stateDigest` used to be SHA-256 over every
//! seat's full view and `transcriptDigest` SHA-256 over the durable events,
//! which include the other seats' pending intents. A seat knows everything in
//! those preimages except the hidden part, so it could hash guesses (729 for
//! a hilo hand, a handful for a simultaneous move) and compare them with its
//! own receipt. Keyed with a secret only the host holds, the digests still
//! commit the host to one state and one transcript (the same preimage gives
//! the same digest; the receipt chain is unchanged) but nobody without the
//! key can test a guess against them. See SECURITY.md, "Hidden information in
//! what a seat receives".

use gaos_json::hex_encode;
use sha2::{Digest, Sha256};

const BLOCK: usize = 64;

/// A session's digest key.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct DigestKey([u8; 32]);

impl std::fmt::Debug for DigestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DigestKey(..)")
    }
}

impl DigestKey {
    /// A fresh random key (tests; the host derives keys from its host key).
    #[cfg(test)]
    pub(crate) fn generate() -> Self {
        DigestKey(rand::random())
    }

    /// The key as lowercase hex (tests; sessions stored before the host key
    /// hold theirs so, and [`DigestKey::from_hex`] still reads them).
    #[cfg(test)]
    pub(crate) fn to_hex(&self) -> String {
        hex_encode(&self.0)
    }

    /// Read a stored key; `None` unless it is 64 hex digits.
    pub(crate) fn from_hex(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.len() != 64 {
            return None;
        }
        let mut key = [0u8; 32];
        for (i, byte) in key.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(DigestKey(key))
    }

    /// A key derived elsewhere (the host key, `host_key.rs`).
    pub(crate) fn from_bytes(bytes: [u8; 32]) -> Self {
        DigestKey(bytes)
    }

    /// The raw bytes (to read a hex file with [`DigestKey::from_hex`]).
    pub(crate) fn bytes(&self) -> [u8; 32] {
        self.0
    }

    /// Lowercase hex HMAC-SHA256 of `message` under this key.
    pub(crate) fn mac_hex(&self, message: &[u8]) -> String {
        hex_encode(&hmac_sha256(&self.0, message))
    }
}

/// HMAC-SHA256 (RFC 2104) written over sha2, so the host needs no other crate.
pub(crate) fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(message).finalize();
    Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_test_cases_1_2_and_6() {
        let case1 = hmac_sha256(&[0x0b; 20], b"Hi There");
        assert_eq!(hex_encode(&case1), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
        let case2 = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(hex_encode(&case2), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
        // A key longer than the block is hashed first.
        let case6 = hmac_sha256(&[0xaa; 131], b"Test Using Larger Than Block-Size Key - Hash Key First");
        assert_eq!(hex_encode(&case6), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    }

    #[test]
    fn a_key_round_trips_through_hex_and_keys_differ() {
        let key = DigestKey::generate();
        assert_eq!(DigestKey::from_hex(&key.to_hex()), Some(key.clone()));
        assert_ne!(DigestKey::generate(), key);
        assert_eq!(DigestKey::from_hex("abc"), None);
        assert_eq!(DigestKey::from_hex(&"zz".repeat(32)), None);
        assert_eq!(format!("{key:?}"), "DigestKey(..)", "Debug never prints the key");
    }

    #[test]
    fn the_mac_depends_on_the_key() {
        let (a, b) = (DigestKey::generate(), DigestKey::generate());
        assert_eq!(a.mac_hex(b"state"), a.mac_hex(b"state"));
        assert_ne!(a.mac_hex(b"state"), b.mac_hex(b"state"));
        assert_ne!(a.mac_hex(b"state"), a.mac_hex(b"other"));
    }
}
