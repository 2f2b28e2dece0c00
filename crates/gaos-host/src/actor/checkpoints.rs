//! Checkpoints and compaction (issue 19 item 2). Every `checkpoint_every`
//! transitions the actor stores the kernel's compacted checkpoint, and only
//! once that write is durable compacts the live kernel, which then keeps a
//! bounded tail of events and asks the store (`StoreHistory`) about
//! identities accepted before the floor. A restart restores the newest
//! checkpoint and replays only the events after it (host/rehydrate.rs).
//!
//! The transcript digest of attach receipts is a hash chain (lane.rs): a
//! restored actor continues it from the digest stored with the checkpoint,
//! so its receipts equal those of a replay of the whole log.

use std::sync::Arc;

use gaos_kernel::{CheckpointCode, CompactRequest, HistoryLookup, KernelError};

use super::SessionActor;
use super::below_floor::BelowFloor;
use crate::storage::{AcceptedIdentity, StoreReader, StoredCheckpoint, WriteOp};

/// The default of `HostOptions::checkpoint_every`: transitions between two
/// checkpoints, which bounds both the live kernel's event tail and the
/// events a restart replays per session.
pub const DEFAULT_CHECKPOINT_EVERY: u64 = 128;

/// The kernel's history lookup, answered by the store's index of accepted
/// identities (`storage/sqlite_history.rs`).
pub(crate) struct StoreHistory {
    pub reader: Arc<dyn StoreReader>,
    pub session_id: String,
    /// Answers "certainly not" without a store read (`below_floor.rs`).
    pub below_floor: Arc<BelowFloor>,
}

impl HistoryLookup for StoreHistory {
    fn was_accepted(&self, participant_id: &str, submission_id: &str, floor: u64) -> Result<bool, String> {
        if !self.below_floor.may_contain(participant_id, submission_id) {
            return Ok(false);
        }
        self.reader.was_accepted(&self.session_id, participant_id, submission_id, floor).map_err(|e| e.to_string())
    }
}

/// How many transitions early a session's first checkpoint comes: an
/// FNV-1a hash of its id, below `every`.
fn stagger(session_id: &str, every: u64) -> u64 {
    let hash =
        session_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    hash % every
}

impl SessionActor {
    /// Store a checkpoint and compact, once `checkpoint_every` transitions
    /// passed since the last one. Called after a transition committed (all
    /// its events durable). A failure leaves the kernel as it was: the
    /// session only keeps more in memory until the next try.
    pub(super) async fn checkpoint_if_due(&mut self) {
        let every = self.checkpoint_every;
        // A multi-level run keeps its levels' whole logs in memory: its run
        // replay, transcript and restart walk them per level (episodes.rs),
        // and a level is one game, so the log stays small.
        // A signed session keeps its whole log too: a checkpoint (format 1.0)
        // has no place for the seats' chain heads, and until its roster is
        // complete its kernel is rebuilt from its events (`seat_keys.rs`).
        if every == 0 || !self.checkpoints_supported || self.config.run.is_some() || self.config.is_signed() {
            return;
        }
        let revision = self.kernel.transition_revision();
        let floor = self.kernel.retention_floor();
        // A session's first checkpoint comes up to `every - 1` transitions
        // early, by an amount fixed by its id, and the later ones every
        // `every` after it: sessions that started together and move in step
        // (a tournament, a load test) checkpoint at different times instead
        // of all in one group commit, which held every ack behind it.
        let due = if floor == 0 { every - stagger(&self.id, every) } else { every };
        if revision < floor + due {
            return;
        }
        let checkpoint = match self.kernel.compacted_checkpoint() {
            Ok(checkpoint) => checkpoint,
            Err(KernelError::Checkpoint { code: CheckpointCode::Unsupported, .. }) => {
                // A game whose state cannot be encoded keeps its whole log.
                self.checkpoints_supported = false;
                return;
            }
            Err(e) => {
                tracing::warn!(session = %self.id, error = %e, "no checkpoint could be taken");
                return;
            }
        };
        let stored = StoredCheckpoint {
            session_id: self.id.clone(),
            transition_revision: checkpoint.transition_revision(),
            events: self.transcript.persisted() as u64,
            transcript_prefix: self.transcript.prefix_hex(),
            body: checkpoint.to_json(),
        };
        // The identities the kernel forgets when it compacts go to the
        // `accepted` index in the same write as the checkpoint, sorted, so a
        // session's rows land together (one row per submission written with
        // every transition scattered pages over the index and made each group
        // commit about twice as slow). Identities after the floor are in the
        // tail events, and a restore puts them back into the kernel.
        let floor = checkpoint.transition_revision();
        let mut identities: Vec<AcceptedIdentity> = self
            .kernel
            .accepted_since_floor()
            .into_iter()
            .map(|(participant_id, submission_id)| AcceptedIdentity {
                participant_id,
                submission_id,
                transition_revision: floor,
            })
            .collect();
        identities.sort_by(|a, b| (&a.participant_id, &a.submission_id).cmp(&(&b.participant_id, &b.submission_id)));
        // Into the filter before the kernel forgets them (a write that then
        // fails leaves only a "maybe" the store answers).
        self.below_floor.insert(identities.iter().map(|i| (i.participant_id.as_str(), i.submission_id.as_str())));
        let mut ops = Vec::with_capacity(2);
        if !identities.is_empty() {
            ops.push(WriteOp::Accepted { session_id: self.id.clone(), identities });
        }
        ops.push(WriteOp::Checkpoint(stored));
        if self.persist(ops).await.is_err() {
            // Logged by the funnel; the next due checkpoint tries again, and
            // until then a restart replays a longer tail.
            return;
        }
        // Durable from here: a restart continues from this checkpoint.
        let history: Arc<dyn HistoryLookup> = Arc::new(StoreHistory {
            reader: Arc::clone(&self.reader),
            session_id: self.id.clone(),
            below_floor: Arc::clone(&self.below_floor),
        });
        let request = CompactRequest {
            checkpoint_digest: checkpoint.integrity_digest(),
            checkpoint_durably_committed: true,
            history_durably_committed: true,
        };
        match self.kernel.compact(&checkpoint, request, history) {
            Ok(summary) => {
                tracing::debug!(session = %self.id, floor = summary.retention_floor, dropped = summary.dropped_events, "compacted")
            }
            Err(e) => tracing::warn!(session = %self.id, error = %e, "compaction after a stored checkpoint failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stagger;

    #[test]
    fn first_checkpoints_spread_over_the_interval() {
        let every = 128;
        let mut seen = vec![0u32; every as usize];
        for i in 0..2_000 {
            let early = stagger(&format!("s-{i:016x}"), every);
            assert!(early < every);
            assert_eq!(early, stagger(&format!("s-{i:016x}"), every), "fixed by the id");
            seen[early as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 0 && n < 60), "spread: {seen:?}");
        assert_eq!(stagger("s-1", 1), 0, "every transition: nothing to spread");
    }
}
