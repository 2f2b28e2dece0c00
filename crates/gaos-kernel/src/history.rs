//! The permanent identity index below the retention floor.
//!
//! Every submission identity ever accepted can never be applied again
//! (kernel spec §4.8). Before compaction the kernel keeps those identities
//! in memory; compaction drops them and from then on the kernel asks the
//! embedder's [`HistoryLookup`] about any identity it does not hold itself.
//! The embedder answers from its durable events (a host backs it by its
//! event store), so the kernel's index holds only the identities accepted
//! since the last compaction: its size is bounded by the compaction
//! interval, not by the session's length.

use std::sync::{Arc, RwLock};

use crate::event::{EventBody, SessionEvent};
use crate::hash::{StableHashMap, new_map};

/// Answers whether a submission identity was accepted at or below a
/// transition revision, from durable history.
///
/// Only `intent-accepted` events count. The kernel asks with `floor` = its
/// retention floor; identities accepted after the floor are the kernel's own
/// business. An error makes the submission fail with
/// [`KernelError::History`](crate::KernelError::History) and no side effect.
pub trait HistoryLookup: Send + Sync {
    fn was_accepted(&self, participant_id: &str, submission_id: &str, floor: u64) -> Result<bool, String>;
}

impl<T: HistoryLookup + ?Sized> HistoryLookup for Arc<T> {
    fn was_accepted(&self, participant_id: &str, submission_id: &str, floor: u64) -> Result<bool, String> {
        (**self).was_accepted(participant_id, submission_id, floor)
    }
}

/// A [`HistoryLookup`] kept in memory, for tests and embedders without a
/// store: feed it every persisted event with [`MemoryHistory::record`].
///
/// It keeps each accepted identity with its transition revision, so its
/// own memory grows with history; a durable store is the bounded form.
#[derive(Debug)]
pub struct MemoryHistory {
    /// `(participantId, submissionId)` → the revision that accepted it.
    accepted: RwLock<StableHashMap<(String, String), u64>>,
}

impl Default for MemoryHistory {
    fn default() -> Self {
        MemoryHistory { accepted: RwLock::new(new_map()) }
    }
}

impl MemoryHistory {
    pub fn new() -> Self {
        Self::default()
    }

    /// A history holding `events`.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a SessionEvent>) -> Self {
        let history = Self::new();
        history.record(events);
        history
    }

    /// Remember the accepted identities among `events` (persisted events).
    pub fn record<'a>(&self, events: impl IntoIterator<Item = &'a SessionEvent>) {
        let mut accepted = self.accepted.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        for event in events {
            if let EventBody::IntentAccepted { participant_id, submission_id, .. } = &event.body {
                accepted.insert((participant_id.clone(), submission_id.clone()), event.transition_revision);
            }
        }
    }

    /// Identities recorded.
    pub fn len(&self) -> usize {
        self.accepted.read().unwrap_or_else(|poisoned| poisoned.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl HistoryLookup for MemoryHistory {
    fn was_accepted(&self, participant_id: &str, submission_id: &str, floor: u64) -> Result<bool, String> {
        let accepted = self.accepted.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        let key = (participant_id.to_owned(), submission_id.to_owned());
        Ok(accepted.get(&key).is_some_and(|revision| *revision <= floor))
    }
}
