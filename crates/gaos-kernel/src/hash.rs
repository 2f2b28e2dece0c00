//! A deterministic hasher for the crate's hash maps and sets.
//!
//! The kernel is deterministic and takes no OS randomness, so the std
//! default (`RandomState`, seeded per process) is not used anywhere in the
//! crate. A fixed-seed multiply–rotate hash with a final avalanche step is
//! fast on the short keys used here (seat ids, submission ids, salts). It is
//! not collision
//! resistant: every map that decides a verdict compares full keys on a hit,
//! and the inputs are bounded by `SessionLimits` and the replay size.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};

/// A `HashMap` with the crate's deterministic hasher.
pub(crate) type StableHashMap<K, V> = HashMap<K, V, BuildStableHasher>;

/// A `HashSet` with the crate's deterministic hasher.
pub(crate) type StableHashSet<K> = HashSet<K, BuildStableHasher>;

/// Builds [`StableHasher`]s (every hasher starts from the same state).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BuildStableHasher;

impl BuildHasher for BuildStableHasher {
    type Hasher = StableHasher;
    fn build_hasher(&self) -> StableHasher {
        StableHasher(SEED)
    }
}

const SEED: u64 = 0xcbf2_9ce4_8422_2325;
const K: u64 = 0x517c_c1b7_2722_0a95;

/// Word-at-a-time multiply–rotate mixing (as in rustc's FxHasher), finished
/// with the MurmurHash3 `fmix64` avalanche so the high bits (which hashbrown
/// uses for its control bytes) depend on every input byte.
pub(crate) struct StableHasher(u64);

impl StableHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for StableHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8-byte chunk")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            // The length keeps "a" and "a\0" apart.
            self.add(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 56));
        }
    }
    #[inline]
    fn write_u8(&mut self, value: u8) {
        self.add(u64::from(value));
    }
    #[inline]
    fn write_u32(&mut self, value: u32) {
        self.add(u64::from(value));
    }
    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.add(value);
    }
    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// `StableHashMap::new()` (the std constructor needs `RandomState`).
pub(crate) fn new_map<K, V>() -> StableHashMap<K, V> {
    HashMap::with_hasher(BuildStableHasher)
}

/// `StableHashSet::new()`.
pub(crate) fn new_set<K>() -> StableHashSet<K> {
    HashSet::with_hasher(BuildStableHasher)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PINNED: u64 = 16_320_766_246_291_730_697;

    fn hash(bytes: &[u8]) -> u64 {
        let mut h = BuildStableHasher.build_hasher();
        h.write(bytes);
        h.finish()
    }

    #[test]
    fn the_same_key_hashes_the_same_in_every_process() {
        // No per-process seed: the value is a constant.
        assert_eq!(hash(b"a\0s1"), PINNED);
        assert_eq!(BuildStableHasher.hash_one("a\u{0}s1"), BuildStableHasher.hash_one("a\u{0}s1"));
    }

    #[test]
    fn trailing_bytes_and_lengths_are_told_apart() {
        let keys: [&[u8]; 6] = [b"", b"a", b"a\0", b"\0a", b"abcdefgh", b"abcdefgh\0"];
        for (i, x) in keys.iter().enumerate() {
            for y in &keys[i + 1..] {
                assert_ne!(hash(x), hash(y), "{x:?} vs {y:?}");
            }
        }
    }
}
