//! The duplicate-identity check of replay validation: every submission
//! identity `(levelIndex, seat, submissionId)` is used once.
//!
//! Identities are hashed with the crate's deterministic hasher (no OS
//! randomness) and their bytes kept back to back in one buffer, so a
//! 100,000-resolution replay allocates no string per input. The hash is not
//! collision resistant, so a hit is confirmed by comparing the bytes: a
//! crafted collision costs a comparison, never a false duplicate.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hasher};

use crate::hash::BuildStableHasher;

/// Identities seen so far, each with the line that first used it.
pub(crate) struct IdentityIndex {
    /// Every distinct identity's key bytes, back to back.
    arena: Vec<u8>,
    /// Hash → the first identity with that hash.
    by_hash: HashMap<u64, Slot, BuildPassThrough>,
    /// Identities whose hash equals a different identity's (rare).
    collided: BTreeMap<Vec<u8>, usize>,
    key: Vec<u8>,
}

#[derive(Clone, Copy)]
struct Slot {
    start: usize,
    end: usize,
    line: usize,
}

impl IdentityIndex {
    /// An index expecting about `capacity` identities.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        IdentityIndex {
            arena: Vec::with_capacity(capacity * 24),
            by_hash: HashMap::with_capacity_and_hasher(capacity, BuildPassThrough),
            collided: BTreeMap::new(),
            key: Vec::new(),
        }
    }

    /// Register an identity used on `line`; `Some(first line)` when it was
    /// used before.
    pub(crate) fn insert(&mut self, level: usize, seat: &str, id: &str, line: usize) -> Option<usize> {
        // 0xFF never occurs in UTF-8, so the key is injective.
        self.key.clear();
        self.key.extend_from_slice(&(level as u64).to_le_bytes());
        self.key.extend_from_slice(seat.as_bytes());
        self.key.push(0xFF);
        self.key.extend_from_slice(id.as_bytes());
        let mut hasher = BuildStableHasher.build_hasher();
        hasher.write(&self.key);
        self.insert_key(hasher.finish(), line)
    }

    /// Register `self.key`, whose hash is `hash`.
    fn insert_key(&mut self, hash: u64, line: usize) -> Option<usize> {
        match self.by_hash.get(&hash) {
            None => {
                let start = self.arena.len();
                self.arena.extend_from_slice(&self.key);
                self.by_hash.insert(hash, Slot { start, end: self.arena.len(), line });
                None
            }
            Some(slot) if self.arena[slot.start..slot.end] == self.key[..] => Some(slot.line),
            Some(_) => match self.collided.get(&self.key) {
                Some(&first) => Some(first),
                None => {
                    self.collided.insert(self.key.clone(), line);
                    None
                }
            },
        }
    }
}

/// Keys that are already hashes need no second hash.
#[derive(Clone, Copy, Default)]
struct BuildPassThrough;

impl BuildHasher for BuildPassThrough {
    type Hasher = PassThrough;
    fn build_hasher(&self) -> PassThrough {
        PassThrough(0)
    }
}

struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_is_a_duplicate_only_of_itself() {
        let mut index = IdentityIndex::with_capacity(4);
        assert_eq!(index.insert(0, "a", "s1", 2), None);
        assert_eq!(index.insert(0, "b", "s1", 3), None);
        assert_eq!(index.insert(1, "a", "s1", 4), None);
        assert_eq!(index.insert(0, "a", "s1", 5), Some(2));
        // Seat and id are separated: "ab"/"c" is not "a"/"bc".
        assert_eq!(index.insert(0, "ab", "c", 6), None);
        assert_eq!(index.insert(0, "a", "bc", 7), None);
    }

    #[test]
    fn a_hash_collision_is_confirmed_by_the_bytes() {
        let mut index = IdentityIndex::with_capacity(4);
        let mut insert = |key: &[u8], line| {
            index.key.clear();
            index.key.extend_from_slice(key);
            index.insert_key(7, line)
        };
        assert_eq!(insert(b"first", 2), None);
        assert_eq!(insert(b"other", 3), None, "same hash, other bytes: not a duplicate");
        assert_eq!(insert(b"first", 4), Some(2));
        assert_eq!(insert(b"other", 5), Some(3));
    }
}
