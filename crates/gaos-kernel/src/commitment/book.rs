//! `CommitmentBook`: the commit–reveal bookkeeping of a session (RFC-008,
//! kernel spec §4.12), declared once and used by live resolution,
//! rehydration and replay verification.
//!
//! It records commits (per-seat ids from 0, no gaps), decides reveals
//! against their commitment (`windowRef` = the tick that recorded the
//! commit), marks them revealed, and keeps the salt book (salt → first
//! identity that used it). What a caller does with an outcome (an error, a
//! rejection event, a verifier problem) stays with the caller.
//!
//! A prepared transition must not touch live state, so the live kernel
//! records a resolution's changes in a second, empty book layered over the
//! live one (`base`), and [`CommitmentBook::absorb`]s it on commit.

use std::hash::Hash;

use gaos_json::Value;

use super::{CommitmentBinding, commitment_hash};
use crate::hash::{StableHashMap, new_map};

/// A seat as the book keys it.
pub(crate) trait SeatKey: Clone + Eq + Hash {
    /// The seat id the commitment binds to.
    fn seat(&self) -> &str;
}

impl SeatKey for String {
    fn seat(&self) -> &str {
        self
    }
}

/// Replay verification keeps one book for the whole run: commitments are
/// per level (the key carries the level index), the salt book per replay.
impl SeatKey for (usize, &str) {
    fn seat(&self) -> &str {
        self.1
    }
}

/// One recorded commitment. `origin` is where it was recorded (the replay
/// line for the verifier, nothing live).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Commitment<W> {
    pub(crate) hash: String,
    /// The tick of the resolution that recorded the commit.
    pub(crate) window_ref: u64,
    pub(crate) revealed: bool,
    pub(crate) origin: W,
}

/// The first identity seen with a salt. `origin` is where it was seen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SaltOwner<K, W> {
    pub(crate) seat: K,
    pub(crate) commitment_id: u32,
    pub(crate) origin: W,
}

/// How a reveal compares with the book.
#[derive(Debug)]
pub(crate) enum RevealCheck<'b, W> {
    /// The seat has no commitment with this id.
    Unknown,
    /// The commitment was revealed before.
    AlreadyRevealed(&'b Commitment<W>),
    /// Salt or payload out of bounds: the reveal cannot be hashed.
    Unhashable(String),
    /// Hashes, but not to the committed hash.
    Mismatch(&'b Commitment<W>),
    /// Matches its open commitment.
    Match(&'b Commitment<W>),
}

/// Commitments, next commitment ids and the salt book.
#[derive(Debug, Clone)]
pub(crate) struct CommitmentBook<K, W = ()> {
    commitments: StableHashMap<(K, u32), Commitment<W>>,
    next_ids: StableHashMap<K, u32>,
    salts: StableHashMap<String, SaltOwner<K, W>>,
}

impl<K: SeatKey, W> Default for CommitmentBook<K, W> {
    fn default() -> Self {
        CommitmentBook { commitments: new_map(), next_ids: new_map(), salts: new_map() }
    }
}

impl<K: SeatKey, W: Clone> CommitmentBook<K, W> {
    /// An empty book.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A read view of this book alone.
    pub(crate) fn view(&self) -> Layered<'_, K, W> {
        Layered { top: self, base: None }
    }

    /// A read view of this book (a draft's changes) over `base`.
    pub(crate) fn over<'a>(&'a self, base: &'a Self) -> Layered<'a, K, W> {
        Layered { top: self, base: Some(base) }
    }

    /// How many of `seat`'s commitments are still unrevealed (this book only).
    pub(crate) fn open_count(&self, seat: &K) -> u64 {
        self.commitments.iter().filter(|((s, _), c)| s == seat && !c.revealed).count() as u64
    }

    /// Record a commit made by a resolution at `window_ref`; the seat's next
    /// id becomes `commitment_id + 1`.
    pub(crate) fn record_commit(&mut self, seat: K, commitment_id: u32, hash: String, window_ref: u64, origin: W) {
        self.commitments
            .insert((seat.clone(), commitment_id), Commitment { hash, window_ref, revealed: false, origin });
        self.next_ids.insert(seat, commitment_id + 1);
    }

    /// Mark a commitment revealed (copying it from `base` into this book
    /// when only `base` holds it). False when neither book has it.
    pub(crate) fn mark_revealed(&mut self, base: Option<&Self>, seat: &K, commitment_id: u32) -> bool {
        let key = (seat.clone(), commitment_id);
        if let Some(c) = self.commitments.get_mut(&key) {
            c.revealed = true;
            return true;
        }
        let Some(mut c) = base.and_then(|b| b.commitments.get(&key)).cloned() else {
            return false;
        };
        c.revealed = true;
        self.commitments.insert(key, c);
        true
    }

    /// The salt book: record `salt` under `owner` unless it is known (here
    /// or in `base`); when it is known under another identity (seat and
    /// commitment id), that first owner is returned (a salt reuse).
    pub(crate) fn note_salt(
        &mut self,
        base: Option<&Self>,
        salt: &str,
        owner: SaltOwner<K, W>,
    ) -> Option<SaltOwner<K, W>> {
        let known = self.salts.get(salt).or_else(|| base.and_then(|b| b.salts.get(salt)));
        match known {
            Some(first) if (&first.seat, first.commitment_id) != (&owner.seat, owner.commitment_id) => {
                Some(first.clone())
            }
            Some(_) => None,
            None => {
                self.salts.insert(salt.to_owned(), owner);
                None
            }
        }
    }

    /// Apply a draft's book: its commitments and next ids replace ours, its
    /// salts are added where we have none (the first owner stays).
    pub(crate) fn absorb(&mut self, draft: Self) {
        self.commitments.extend(draft.commitments);
        self.next_ids.extend(draft.next_ids);
        for (salt, owner) in draft.salts {
            self.salts.entry(salt).or_insert(owner);
        }
    }
}

/// What a kernel checkpoint records and restores, and what compaction drops.
impl<K: SeatKey + Ord, W: Clone> CommitmentBook<K, W> {
    /// Every commitment, ordered by seat and id.
    pub(crate) fn commitments_sorted(&self) -> Vec<(&K, u32, &Commitment<W>)> {
        let mut all: Vec<_> = self.commitments.iter().map(|((seat, id), c)| (seat, *id, c)).collect();
        all.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        all
    }

    /// Every seat's next commitment id, ordered by seat.
    pub(crate) fn next_ids_sorted(&self) -> Vec<(&K, u32)> {
        let mut all: Vec<_> = self.next_ids.iter().map(|(seat, id)| (seat, *id)).collect();
        all.sort();
        all
    }

    /// The salt book, ordered by salt.
    pub(crate) fn salts_sorted(&self) -> Vec<(&str, &SaltOwner<K, W>)> {
        let mut all: Vec<_> = self.salts.iter().map(|(salt, owner)| (salt.as_str(), owner)).collect();
        all.sort_by(|a, b| a.0.cmp(b.0));
        all
    }

    pub(crate) fn restore_commitment(&mut self, seat: K, commitment_id: u32, commitment: Commitment<W>) {
        self.commitments.insert((seat, commitment_id), commitment);
    }

    pub(crate) fn restore_next_id(&mut self, seat: K, next: u32) {
        self.next_ids.insert(seat, next);
    }

    pub(crate) fn restore_salt(&mut self, salt: String, owner: SaltOwner<K, W>) {
        self.salts.insert(salt, owner);
    }

    /// Compaction: revealed commitments and the salt book go (kernel spec
    /// §4.16); open commitments and next ids stay, they decide future reveals
    /// and commits.
    pub(crate) fn compact(&mut self) {
        self.commitments.retain(|_, c| !c.revealed);
        self.salts = new_map();
    }
}

/// Reads through a draft book over its base (or one book alone).
#[derive(Clone, Copy)]
pub(crate) struct Layered<'a, K, W> {
    top: &'a CommitmentBook<K, W>,
    base: Option<&'a CommitmentBook<K, W>>,
}

impl<'a, K: SeatKey, W: Clone> Layered<'a, K, W> {
    /// The commitment `(seat, commitment_id)`, revealed or not.
    pub(crate) fn commitment(&self, seat: &K, commitment_id: u32) -> Option<&'a Commitment<W>> {
        let key = (seat.clone(), commitment_id);
        self.top.commitments.get(&key).or_else(|| self.base.and_then(|b| b.commitments.get(&key)))
    }

    /// The id `seat`'s next commit must carry.
    pub(crate) fn next_id(&self, seat: &K) -> u32 {
        self.top.next_ids.get(seat).or_else(|| self.base.and_then(|b| b.next_ids.get(seat))).copied().unwrap_or(0)
    }

    /// Decide a reveal (`salt`, `payload`) of `seat`'s `commitment_id`.
    pub(crate) fn check_reveal(
        &self,
        session_id: &str,
        seat: &K,
        commitment_id: u32,
        salt: &str,
        payload: &Value,
    ) -> RevealCheck<'a, W> {
        let Some(commitment) = self.commitment(seat, commitment_id) else {
            return RevealCheck::Unknown;
        };
        if commitment.revealed {
            return RevealCheck::AlreadyRevealed(commitment);
        }
        let binding =
            CommitmentBinding { session_id, seat: seat.seat(), commitment_id, window_ref: commitment.window_ref };
        match commitment_hash(&binding, salt, payload) {
            Err(e) => RevealCheck::Unhashable(e),
            Ok(hash) if hash == commitment.hash => RevealCheck::Match(commitment),
            Ok(_) => RevealCheck::Mismatch(commitment),
        }
    }
}

#[cfg(test)]
mod tests {
    use gaos_json::obj;

    use super::*;

    const SALT: &str = "000102030405060708090a0b0c0d0e0f";

    fn hash_for(seat: &str, id: u32, window_ref: u64, payload: &Value) -> String {
        let binding = CommitmentBinding { session_id: "s", seat, commitment_id: id, window_ref };
        commitment_hash(&binding, SALT, payload).expect("hashable")
    }

    #[test]
    fn a_reveal_matches_only_its_open_commitment() {
        let payload = Value::Object(obj! { "card" => 3 });
        let mut book: CommitmentBook<String> = CommitmentBook::new();
        let a = "a".to_owned();
        assert_eq!(book.view().next_id(&a), 0);
        book.record_commit(a.clone(), 0, hash_for("a", 0, 4, &payload), 4, ());
        assert_eq!(book.view().next_id(&a), 1);
        assert_eq!(book.open_count(&a), 1);
        assert!(matches!(book.view().check_reveal("s", &a, 0, SALT, &payload), RevealCheck::Match(_)));
        assert!(matches!(
            book.view().check_reveal("s", &a, 0, SALT, &Value::Object(obj! {})),
            RevealCheck::Mismatch(_)
        ));
        assert!(matches!(book.view().check_reveal("s", &a, 0, "00", &payload), RevealCheck::Unhashable(_)));
        assert!(matches!(book.view().check_reveal("s", &a, 1, SALT, &payload), RevealCheck::Unknown));
        assert!(book.mark_revealed(None, &a, 0));
        assert_eq!(book.open_count(&a), 0);
        assert!(matches!(book.view().check_reveal("s", &a, 0, SALT, &payload), RevealCheck::AlreadyRevealed(_)));
    }

    #[test]
    fn a_draft_book_layers_over_its_base_and_is_absorbed_on_commit() {
        let payload = Value::Object(obj! {});
        let a = "a".to_owned();
        let mut live: CommitmentBook<String> = CommitmentBook::new();
        live.record_commit(a.clone(), 0, hash_for("a", 0, 0, &payload), 0, ());
        let mut draft = CommitmentBook::new();
        assert!(draft.mark_revealed(Some(&live), &a, 0));
        draft.record_commit(a.clone(), 1, hash_for("a", 1, 2, &payload), 2, ());
        assert!(!live.view().commitment(&a, 0).expect("recorded").revealed);
        assert!(draft.over(&live).commitment(&a, 0).expect("copied").revealed);
        assert_eq!(draft.over(&live).next_id(&a), 2);
        assert_eq!(live.view().next_id(&a), 1);
        live.absorb(draft);
        assert!(live.view().commitment(&a, 0).expect("absorbed").revealed);
        assert_eq!(live.view().next_id(&a), 2);
    }

    #[test]
    fn the_salt_book_keeps_the_first_owner_and_reports_other_identities() {
        let owner = |seat: &str, id| SaltOwner { seat: seat.to_owned(), commitment_id: id, origin: () };
        let mut live: CommitmentBook<String> = CommitmentBook::new();
        assert_eq!(live.note_salt(None, SALT, owner("a", 0)), None);
        assert_eq!(live.note_salt(None, SALT, owner("a", 0)), None, "the same identity is no reuse");
        let mut draft = CommitmentBook::new();
        assert_eq!(draft.note_salt(Some(&live), SALT, owner("b", 0)), Some(owner("a", 0)));
        assert_eq!(draft.note_salt(Some(&live), "ff", owner("b", 1)), None);
        live.absorb(draft);
        assert_eq!(live.note_salt(None, "ff", owner("a", 3)), Some(owner("b", 1)));
    }
}
