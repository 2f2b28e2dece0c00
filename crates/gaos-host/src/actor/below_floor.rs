//! Which submission identities a session's kernel has compacted away, as a
//! Bloom filter, so the common question "was this brand-new submission id
//! accepted before the floor?" is answered "no" without a store read.
//!
//! Once a session compacts (every `checkpoint_every` transitions), a new
//! submission id is not in the kernel's own identity index, so the kernel
//! asks its history lookup, and before this filter every act cost one or
//! two synchronous store reads on the session's actor (BENCHMARKS.md,
//! "Where a durable ack's CPU goes"). The filter holds every identity the
//! actor moved below the floor; "maybe" still asks the store, so a false
//! positive costs one read and never a wrong answer.
//!
//! It knows only what this actor compacted: a session restored from a stored
//! checkpoint has identities below its floor that the filter never saw, so
//! its filter is *unknown* and every question goes to the store, as before.
//! Memory is bounded: slices double from 4,096 identities at ~10 bits each
//! up to about 1 M identities (~1.3 MiB); past that the filter says "maybe"
//! to everything.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::RwLock;

/// Bits per identity (about 1 % false positives with [`PROBES`] probes).
const BITS_PER_IDENTITY: usize = 10;
const PROBES: u64 = 5;
const FIRST_SLICE: usize = 4_096;
/// Identities tracked at most; past this the filter answers "maybe".
const MOST_IDENTITIES: usize = 1 << 20;

/// One fixed-size Bloom filter with room for `capacity` identities.
struct Slice {
    bits: Vec<u64>,
    capacity: usize,
    len: usize,
}

impl Slice {
    fn new(capacity: usize) -> Slice {
        let words = (capacity * BITS_PER_IDENTITY).div_ceil(64);
        Slice { bits: vec![0; words], capacity, len: 0 }
    }

    fn positions(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        // Double hashing: probe i at h1 + i * h2 (h2 odd, so probes differ).
        let (h1, h2) = (hash & 0xffff_ffff, (hash >> 32) | 1);
        let m = (self.bits.len() * 64) as u64;
        (0..PROBES).map(move |i| (h1.wrapping_add(i.wrapping_mul(h2)) % m) as usize)
    }

    fn insert(&mut self, hash: u64) {
        let positions: Vec<usize> = self.positions(hash).collect();
        for bit in positions {
            self.bits[bit / 64] |= 1 << (bit % 64);
        }
        self.len += 1;
    }

    fn may_contain(&self, hash: u64) -> bool {
        self.positions(hash).all(|bit| self.bits[bit / 64] & (1 << (bit % 64)) != 0)
    }
}

/// The identities below a session's floor (see the module documentation).
pub(crate) struct BelowFloor {
    state: RwLock<State>,
}

enum State {
    /// Every identity below the floor went through [`BelowFloor::insert`].
    Known(Vec<Slice>),
    /// Some did not (a restored session), or there were too many to track.
    Unknown,
}

fn identity_hash(participant_id: &str, submission_id: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    participant_id.hash(&mut hasher);
    submission_id.hash(&mut hasher);
    hasher.finish()
}

impl BelowFloor {
    /// A session with nothing below its floor yet (new, or restored from its
    /// whole log).
    pub(crate) fn empty() -> BelowFloor {
        BelowFloor { state: RwLock::new(State::Known(Vec::new())) }
    }

    /// A session whose floor hides identities this filter never saw.
    pub(crate) fn unknown() -> BelowFloor {
        BelowFloor { state: RwLock::new(State::Unknown) }
    }

    /// Record identities the kernel is about to forget (durable already).
    pub(crate) fn insert<'a>(&self, identities: impl IntoIterator<Item = (&'a str, &'a str)>) {
        let mut state = self.state.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let State::Known(slices) = &mut *state else { return };
        for (participant_id, submission_id) in identities {
            let tracked: usize = slices.iter().map(|s| s.len).sum();
            if tracked >= MOST_IDENTITIES {
                *state = State::Unknown;
                return;
            }
            if slices.last().is_none_or(|s| s.len >= s.capacity) {
                let capacity = slices.last().map_or(FIRST_SLICE, |s| s.capacity * 2);
                slices.push(Slice::new(capacity));
            }
            let slice = slices.last_mut().expect("a slice with room");
            slice.insert(identity_hash(participant_id, submission_id));
        }
    }

    /// `false` only when the identity is certainly not below the floor.
    pub(crate) fn may_contain(&self, participant_id: &str, submission_id: &str) -> bool {
        let state = self.state.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*state {
            State::Unknown => true,
            State::Known(slices) => {
                let hash = identity_hash(participant_id, submission_id);
                slices.iter().any(|s| s.may_contain(hash))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inserted_identity_is_always_maybe_and_most_new_ones_are_no() {
        let filter = BelowFloor::empty();
        assert!(!filter.may_contain("a", "a-0"), "nothing below an empty floor");
        let ids: Vec<String> = (0..20_000).map(|i| format!("a-{i}")).collect();
        filter.insert(ids.iter().map(|id| ("a", id.as_str())));
        assert!(ids.iter().all(|id| filter.may_contain("a", id)), "no false negative");
        let new: Vec<String> = (20_000..40_000).map(|i| format!("a-{i}")).collect();
        let maybe = new.iter().filter(|id| filter.may_contain("a", id)).count();
        assert!(maybe < new.len() / 20, "{maybe} of {} new ids were 'maybe'", new.len());
    }

    #[test]
    fn an_unknown_floor_always_asks_the_store() {
        let filter = BelowFloor::unknown();
        filter.insert([("a", "a-0")]);
        assert!(filter.may_contain("z", "never-seen"));
    }

    #[test]
    fn too_many_identities_make_the_filter_unknown() {
        let filter = BelowFloor::empty();
        let ids: Vec<String> = (0..MOST_IDENTITIES + 1).map(|i| i.to_string()).collect();
        filter.insert(ids.iter().map(|id| ("a", id.as_str())));
        assert!(filter.may_contain("a", "never-seen"), "saturated: every question goes to the store");
    }
}
