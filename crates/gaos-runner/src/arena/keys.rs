//! Signed matches: the keys of entrants with a `seatKey`, and the roster of
//! a match one of them plays.
//!
//! A match is signed (RFC-010) when any of its entrants has a key: the
//! session's roster must name every seat, so the other seats sign too, with
//! a key derived from the match and seat ([`unkeyed_seat_key`]). That key
//! is public by construction (anyone can derive it), so its signatures
//! prove nothing; it exists so a resumed match attaches with the roster it
//! was created with, without keeping secrets in the journal. Only a keyed
//! entrant's signatures say something: that the holder of its key file
//! made its moves.

use std::collections::BTreeMap;
use std::path::Path;

use gaos_json::{Value, hex_decode, sha256_hex};
use gaos_session::signing::SeatSigningKey;

use crate::arena::error::ArenaError;
use crate::arena::manifest::ArenaManifest;
use crate::arena::plan::MatchPlan;

/// The signing keys of the entrants that have a `seatKey`.
#[derive(Debug, Clone, Default)]
pub struct EntrantKeys {
    keys: BTreeMap<String, SeatSigningKey>,
}

impl EntrantKeys {
    /// Read every entrant's `seatKey` file (relative to `manifest_dir`).
    pub fn load(manifest: &ArenaManifest, manifest_dir: &Path) -> Result<Self, ArenaError> {
        let mut keys = BTreeMap::new();
        for (i, entrant) in manifest.entrants.iter().enumerate() {
            let Some(file) = &entrant.seat_key else { continue };
            let key = SeatSigningKey::read_file(&manifest_dir.join(file))
                .map_err(|e| ArenaError::Manifest(format!("entrants[{i}].seatKey: {e}")))?;
            keys.insert(entrant.id.clone(), key);
        }
        Ok(EntrantKeys { keys })
    }

    /// Whether no entrant has a key (no match is signed).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key each seat of `plan` signs with, in `seats` order, or `None`
    /// when none of its entrants has a key (the match is unsigned).
    pub fn for_match(&self, arena_id: &str, plan: &MatchPlan, seats: &[String]) -> Option<Vec<SeatSigningKey>> {
        let keyed = seats.iter().any(|seat| plan.entrant(seat).is_some_and(|e| self.keys.contains_key(e)));
        keyed.then(|| {
            seats
                .iter()
                .map(|seat| match plan.entrant(seat).and_then(|e| self.keys.get(e)) {
                    Some(key) => key.clone(),
                    None => unkeyed_seat_key(arena_id, &plan.id, seat),
                })
                .collect()
        })
    }
}

/// The public key a seat without a key file signs with in a signed match:
/// the seed is `SHA-256("gaos-arena unkeyed seat\0" arena \0 match \0 seat)`.
pub fn unkeyed_seat_key(arena_id: &str, match_id: &str, seat: &str) -> SeatSigningKey {
    let preimage = format!("gaos-arena unkeyed seat\0{arena_id}\0{match_id}\0{seat}");
    let digest = hex_decode(&sha256_hex(preimage.as_bytes())).expect("a SHA-256 hex digest decodes");
    let seed: [u8; 32] = digest.try_into().expect("a SHA-256 digest is 32 bytes");
    SeatSigningKey::from_seed(seed)
}

/// The create-request fields of a signed match: `seatKeys` (every seat's
/// roster entry, signing tier 1) and `signaturePolicy`.
pub fn signed_request_fields(seats: &[String], keys: &[SeatSigningKey]) -> [(String, Value); 2] {
    let roster = seats.iter().zip(keys).map(|(seat, key)| key.seat_key(seat, 1)).collect();
    [
        ("seatKeys".to_owned(), Value::Array(roster)),
        ("signaturePolicy".to_owned(), gaos_kernel::signing::signature_policy_value()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unkeyed_seat_key_depends_on_the_match_and_seat_only() {
        let a = unkeyed_seat_key("ladder", "001-default-1-a-vs-b", "alice");
        assert_eq!(a.public_key(), unkeyed_seat_key("ladder", "001-default-1-a-vs-b", "alice").public_key());
        assert_ne!(a.public_key(), unkeyed_seat_key("ladder", "001-default-1-a-vs-b", "bob").public_key());
        assert_ne!(a.public_key(), unkeyed_seat_key("ladder", "002-default-1-b-vs-a", "alice").public_key());
        assert_ne!(a.public_key(), unkeyed_seat_key("other", "001-default-1-a-vs-b", "alice").public_key());
    }
}
