//! Checkpoints and compaction (kernel spec §4.16): `checkpoint` writes the
//! live state as a [`KernelCheckpoint`]; `restore` rebuilds a kernel from a
//! checkpoint plus the events after it, checking every recorded fact it
//! can recompute; `compact` drops the history a live kernel no longer needs
//! once the embedder holds a durable checkpoint and durable events.

use std::sync::Arc;

use gaos_json::canonical_json;

use super::ingest::{StoredReceipt, identity_key};
use super::rehydrate::TailRule;
use super::resolve::RejectionRecord;
use super::{SeatView, SessionKernel};
use crate::action::{COMMIT_SCHEME, CommitEnvelope};
use crate::audit::validate_timeout_audit;
use crate::checkpoint::{
    CHECKPOINT_FORMAT, CHECKPOINT_FORMAT_VERSION, Codec, CommitmentEntry, CommitmentValue, Document, KernelCheckpoint,
    Protocol, ReceiptEntry, RejectionEntry, STATE_CODEC_ID, STATE_CODEC_VERSION, ViewEntry, Watermark,
};
use crate::commitment::{Commitment, SaltOwner};
use crate::error::{CheckpointCode, KernelError};
use crate::event::{EventLog, SessionEvent};
use crate::hash::new_set;
use crate::history::HistoryLookup;
use crate::options::KernelOptions;
use crate::reducer::TickReducer;

/// What the embedder vouches for when it asks for compaction
/// (`compact(checkpoint, {checkpointDigest, checkpointDurablyCommitted,
/// historyDurablyCommitted})`). Compaction forgets history the kernel can
/// only get back from the embedder, so both flags must be true.
#[derive(Debug, Clone, Copy)]
pub struct CompactRequest<'a> {
    /// The `integrityDigest` of the checkpoint the embedder stored.
    pub checkpoint_digest: &'a str,
    /// The checkpoint is durably stored.
    pub checkpoint_durably_committed: bool,
    /// Every event up to the checkpoint's watermark is durably stored (and
    /// the history lookup answers from it).
    pub history_durably_committed: bool,
}

/// What a compaction dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactSummary {
    /// The new retention floor (= the live transition revision).
    pub retention_floor: u64,
    /// Events dropped from the in-memory log.
    pub dropped_events: usize,
    /// Accepted identities handed over to the history lookup.
    pub dropped_identities: usize,
}

fn refuse(code: CheckpointCode, message: impl Into<String>) -> KernelError {
    KernelError::checkpoint(code, message)
}

/// `seat \u0000 n` → `(seat, n)`.
fn split_key(key: &str) -> Option<(&str, u32)> {
    let (seat, id) = key.split_once('\u{0}')?;
    let n: u32 = id.parse().ok()?;
    (n.to_string() == id).then_some((seat, n))
}

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    /// The retention floor: 0 until the first compaction, then the
    /// transition revision it compacted at. History at or below it (events,
    /// rejection notices, accepted identities) is the embedder's.
    pub fn retention_floor(&self) -> u64 {
        self.live.retention_floor
    }

    /// The history lookup consulted for identities below the floor.
    pub fn history_lookup(&self) -> Option<&Arc<dyn HistoryLookup>> {
        self.history.as_ref()
    }

    /// Replace the history lookup (an embedder reopening its store).
    pub fn set_history_lookup(&mut self, history: Arc<dyn HistoryLookup>) {
        self.history = Some(history);
    }

    /// `checkpoint()`: the live state as a `gaos.kernel-checkpoint` 1.0.
    /// Refused (`unsupported`) when the reducer cannot encode its state.
    pub fn checkpoint(&self) -> Result<KernelCheckpoint, KernelError> {
        self.checkpoint_document(false)
    }

    /// The checkpoint this kernel will have right after [`Self::compact`]:
    /// retention floor = the live transition revision, without the history
    /// compaction drops (accepted identities, rejection notices, salts,
    /// revealed commitments). Its size is bounded by the window, receipt
    /// retention and open commitments, not by the session's length: the
    /// form to store before compacting.
    pub fn compacted_checkpoint(&self) -> Result<KernelCheckpoint, KernelError> {
        self.checkpoint_document(true)
    }

    fn checkpoint_document(&self, compacted: bool) -> Result<KernelCheckpoint, KernelError> {
        self.unsealed_document(compacted).map(KernelCheckpoint::seal)
    }

    /// The checkpoint document of the live state, before its integrity
    /// digest is computed (the costly part: the whole document serialized
    /// and hashed).
    fn unsealed_document(&self, compacted: bool) -> Result<Document, KernelError> {
        let live = &self.live;
        if live.chains.is_some() {
            // Checkpoint 1.0 has no place for the seats' chain heads.
            return Err(refuse(
                CheckpointCode::Unsupported,
                "a signed session keeps its whole log (checkpoint 1.0 cannot carry the seats' chain heads)",
            ));
        }
        let Some(reducer_state) = self.options.reducer.encode_state(&live.state) else {
            return Err(refuse(
                CheckpointCode::Unsupported,
                format!("game {} cannot encode its state (TickReducer::encode_state)", self.options.game.id),
            ));
        };
        let mut receipts: Vec<ReceiptEntry> = live
            .receipts
            .iter()
            .map(|(key, stored)| ReceiptEntry {
                key: key.clone(),
                canonical_command: stored.canonical_command.clone(),
                tick_id: stored.tick_id.clone(),
                receipt: stored.receipt.clone(),
                cursor: stored.revision,
            })
            .collect();
        receipts.sort_by(|a, b| a.key.cmp(&b.key));
        let mut views: Vec<ViewEntry> = self
            .options
            .seats
            .iter()
            .zip(&live.seat_views)
            .map(|(seat, sv)| ViewEntry {
                seat: seat.clone(),
                view: (*sv.view).clone(),
                canonical: sv.canonical.to_string(),
                revision: sv.revision,
            })
            .collect();
        views.sort_by(|a, b| a.seat.cmp(&b.seat));
        let book = &live.commitments;
        let mut commitments: Vec<CommitmentEntry> = book
            .commitments_sorted()
            .into_iter()
            .filter(|(_, _, c)| !(compacted && c.revealed))
            .map(|(seat, id, c)| CommitmentEntry {
                key: format!("{seat}\u{0}{id}"),
                value: CommitmentValue {
                    envelope: CommitEnvelope { commitment_id: id, scheme: COMMIT_SCHEME.into(), hash: c.hash.clone() },
                    seat: seat.clone(),
                    window_ref: c.window_ref,
                    revealed: c.revealed,
                },
            })
            .collect();
        commitments.sort_by(|a, b| a.key.cmp(&b.key));
        let next_commitment_ids = book.next_ids_sorted().into_iter().map(|(seat, n)| (seat.clone(), n)).collect();
        let seen_salts = book
            .salts_sorted()
            .into_iter()
            .filter(|_| !compacted)
            .map(|(salt, owner)| (salt.to_owned(), format!("{}\u{0}{}", owner.seat, owner.commitment_id)))
            .collect();
        let mut intent_actions: Vec<_> = live
            .window_actions
            .iter()
            .map(|(seat, action)| {
                let submission = live.window.intents.get(seat).map_or("", |i| i.submission_id.as_str());
                (identity_key(seat, submission), action.clone())
            })
            .collect();
        intent_actions.sort_by(|a, b| a.0.cmp(&b.0));
        let mut historical_submission_keys: Vec<String> =
            if compacted { Vec::new() } else { live.accepted.iter().cloned().collect() };
        historical_submission_keys.sort();
        let rejections = live
            .rejections
            .iter()
            .filter(|_| !compacted)
            .map(|r| RejectionEntry {
                transition_revision: r.transition_revision,
                tick: r.tick,
                participant_id: r.participant_id.clone(),
                submission_id: r.submission_id.clone(),
            })
            .collect();
        let doc = Document {
            format: CHECKPOINT_FORMAT.into(),
            format_version: CHECKPOINT_FORMAT_VERSION.into(),
            header: self.session_header().to_value(),
            codec: Codec { id: STATE_CODEC_ID.into(), version: STATE_CODEC_VERSION.into() },
            watermark: Watermark {
                transition_revision: live.transition_revision,
                cursor: live.cursor,
                tick: live.tick,
                last_checkpoint_tick: live.last_checkpoint_tick,
            },
            reducer_state,
            window: live.window.clone(),
            protocol: Protocol {
                receipts,
                expired_receipt_keys: Vec::new(),
                views,
                commitments,
                next_commitment_ids,
                seen_salts,
                interests: Vec::new(),
                intent_actions,
                rejections,
                historical_submission_keys,
                historical_interest_commands: Vec::new(),
            },
            retention_floor: if compacted { live.transition_revision } else { live.retention_floor },
            state_digest: self.digest(),
            integrity_digest: String::new(),
        };
        Ok(doc)
    }

    /// Whether `checkpoint` is a checkpoint (compacted or whole) of the live
    /// state. The document built now equal to the given one, field by field,
    /// says so without hashing either; documents that differ only where
    /// canonical JSON cannot tell (key order inside a game's JSON values) are
    /// then compared by integrity digest, as the spec defines it.
    fn is_of_live_state(&self, checkpoint: &KernelCheckpoint) -> Result<bool, KernelError> {
        let digest = checkpoint.integrity_digest();
        for compacted in [true, false] {
            let mut built = self.unsealed_document(compacted)?;
            built.integrity_digest = checkpoint.doc.integrity_digest.clone();
            if built == checkpoint.doc || KernelCheckpoint::seal(built).integrity_digest() == digest {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `rehydrateKernelFromCheckpoint(options, checkpoint, tail)`: the kernel
    /// of `checkpoint` with the events after it (`tail`, contiguous after
    /// the watermark) re-applied like [`SessionKernel::rehydrate`] does.
    ///
    /// Checked: header, codec, watermark, the open window (tick id,
    /// participants, intents and their actions), every seat's canonical view
    /// against the decoded state, the state digest, then each tail event.
    /// A compacted checkpoint (retention floor > 0) needs `history`.
    pub fn restore(
        options: Arc<KernelOptions<R>>,
        checkpoint: &KernelCheckpoint,
        tail: Vec<SessionEvent>,
        history: Option<Arc<dyn HistoryLookup>>,
    ) -> Result<Self, KernelError> {
        let mut kernel = SessionKernel::from_shared(options)?;
        kernel.restore_document(&checkpoint.doc)?;
        if kernel.live.retention_floor > 0 && history.is_none() {
            return Err(refuse(
                CheckpointCode::Durability,
                format!(
                    "the checkpoint was compacted at transition {}; restoring it needs a history lookup",
                    kernel.live.retention_floor
                ),
            ));
        }
        kernel.history = history;
        validate_timeout_audit(&tail, &kernel.options.seats).map_err(KernelError::type_error)?;
        kernel.replay_events(&tail, TailRule::Contiguous)?;
        kernel.live.events = EventLog::from(tail);
        Ok(kernel)
    }

    /// Load a document into this fresh kernel.
    fn restore_document(&mut self, doc: &Document) -> Result<(), KernelError> {
        let header = self.session_header().to_value();
        if canonical_json(&doc.header) != canonical_json(&header) {
            return Err(refuse(CheckpointCode::Header, "the checkpoint header does not match the kernel options"));
        }
        if doc.codec.id != STATE_CODEC_ID || doc.codec.version != STATE_CODEC_VERSION {
            return Err(refuse(
                CheckpointCode::Codec,
                format!(
                    "reducer state codec {} {} is not {STATE_CODEC_ID} {STATE_CODEC_VERSION}",
                    doc.codec.id, doc.codec.version
                ),
            ));
        }
        let mark = doc.watermark;
        // The kernel moves cursor and tick together, one per resolution.
        if mark.cursor != mark.tick
            || mark.last_checkpoint_tick > mark.tick
            || doc.retention_floor > mark.transition_revision
            || mark.cursor > mark.transition_revision
        {
            return Err(refuse(
                CheckpointCode::Watermark,
                format!(
                    "inconsistent watermark (transition {}, cursor {}, tick {}, last checkpoint tick {}, floor {})",
                    mark.transition_revision, mark.cursor, mark.tick, mark.last_checkpoint_tick, doc.retention_floor
                ),
            ));
        }
        let options = Arc::clone(&self.options);
        let state = options
            .reducer
            .decode_state(&doc.reducer_state)
            .map_err(|e| refuse(CheckpointCode::Malformed, format!("reducerState: {e}")))?;
        let full_view = options.reducer.view(&state);
        let facts = Self::facts(&options, &state, &full_view)?;
        let seat_views = self.restore_views(&state, &doc.protocol.views)?;
        self.restore_window(doc, &facts.participants)?;
        let live = &mut self.live;
        let previous = std::mem::replace(&mut live.state, state);
        self.isolation.retire(previous);
        let live = &mut self.live;
        live.full_view = full_view;
        live.seat_views = seat_views;
        live.transition_revision = mark.transition_revision;
        live.cursor = mark.cursor;
        live.tick = mark.tick;
        live.last_checkpoint_tick = mark.last_checkpoint_tick;
        live.retention_floor = doc.retention_floor;
        self.restore_protocol(&doc.protocol)?;
        let digest = self.digest();
        if digest != doc.state_digest {
            return Err(refuse(
                CheckpointCode::StateDigest,
                format!("the restored kernel digest {digest} differs from stateDigest {}", doc.state_digest),
            ));
        }
        Ok(())
    }

    /// Every declared seat's view, recomputed from the decoded state, must
    /// equal the recorded one; its revision is the recorded one.
    fn restore_views(&self, state: &R::State, recorded: &[ViewEntry]) -> Result<Vec<SeatView>, KernelError> {
        let mut views = Self::compute_seat_views(&self.options, state, None)?;
        if recorded.len() != views.len() {
            return Err(refuse(CheckpointCode::Views, "the checkpoint must record one view per declared seat"));
        }
        for (seat, view) in self.options.seats.iter().zip(views.iter_mut()) {
            let Some(entry) = recorded.iter().find(|e| &e.seat == seat) else {
                return Err(refuse(CheckpointCode::Views, format!("the checkpoint records no view for seat {seat}")));
            };
            if entry.canonical != *view.canonical || canonical_json(&entry.view) != entry.canonical {
                return Err(refuse(
                    CheckpointCode::Views,
                    format!("the recorded view of seat {seat} differs from the view of the restored state"),
                ));
            }
            view.revision = entry.revision;
        }
        Ok(views)
    }

    /// The open window must be the one the state implies at the watermark's
    /// cursor, holding intents of its participants with their actions.
    fn restore_window(&mut self, doc: &Document, participants: &[String]) -> Result<(), KernelError> {
        let expected = Self::window_for(&self.options, doc.watermark.cursor, participants)?;
        let window = &doc.window;
        if window.session_id != expected.session_id
            || window.tick_id != expected.tick_id
            || window.revision != expected.revision
            || window.participants != expected.participants
        {
            return Err(refuse(
                CheckpointCode::Window,
                format!(
                    "the window (tickId {:?}, participants {:?}) is not the open window of cursor {} \
                     (tickId {:?}, participants {:?})",
                    window.tick_id, window.participants, doc.watermark.cursor, expected.tick_id, expected.participants
                ),
            ));
        }
        let actions = &doc.protocol.intent_actions;
        if actions.len() != window.intents.len() {
            return Err(refuse(CheckpointCode::Window, "intentActions must hold exactly the window's intents"));
        }
        let mut window_actions = std::collections::BTreeMap::new();
        for (seat, intent) in &window.intents {
            if intent.participant_id != *seat || !window.has_participant(seat) {
                return Err(refuse(
                    CheckpointCode::Window,
                    format!("the intent under {seat:?} is not a participant's"),
                ));
            }
            let key = identity_key(seat, &intent.submission_id);
            let Some((_, action)) = actions.iter().find(|(k, _)| *k == key) else {
                return Err(refuse(CheckpointCode::Window, format!("no intent action for the intent of {seat}")));
            };
            window_actions.insert(seat.clone(), action.clone());
        }
        self.live.window = window.clone();
        self.live.window_actions = window_actions;
        Ok(())
    }

    fn restore_protocol(&mut self, protocol: &Protocol) -> Result<(), KernelError> {
        if !protocol.expired_receipt_keys.is_empty()
            || !protocol.interests.is_empty()
            || !protocol.historical_interest_commands.is_empty()
        {
            return Err(refuse(
                CheckpointCode::Unsupported,
                "receipt tombstones and interests are not part of this kernel (they must be empty)",
            ));
        }
        let live = &mut self.live;
        let mut order: Vec<(u64, String)> = Vec::with_capacity(protocol.receipts.len());
        for entry in &protocol.receipts {
            let receipt = &entry.receipt;
            if identity_key(&receipt.participant_id, &receipt.submission_id) != entry.key
                || receipt.cursor != entry.cursor
            {
                return Err(refuse(
                    CheckpointCode::Malformed,
                    format!("receipt {:?} does not match its key", entry.key),
                ));
            }
            order.push((entry.cursor, entry.key.clone()));
            live.receipts.insert(
                entry.key.clone(),
                StoredReceipt {
                    canonical_command: entry.canonical_command.clone(),
                    tick_id: entry.tick_id.clone(),
                    revision: entry.cursor,
                    receipt: entry.receipt.clone(),
                },
            );
        }
        // Eviction pops receipts oldest cursor first; receipts of one cursor
        // leave together, so their order among themselves does not matter.
        order.sort();
        live.receipt_order = order.into();
        live.accepted = new_set();
        live.accepted.extend(protocol.historical_submission_keys.iter().cloned());
        for entry in &protocol.commitments {
            let value = &entry.value;
            let id = value.envelope.commitment_id;
            if split_key(&entry.key) != Some((value.seat.as_str(), id)) || value.envelope.scheme != COMMIT_SCHEME {
                return Err(refuse(
                    CheckpointCode::Malformed,
                    format!("commitment {:?} does not match its key or scheme", entry.key),
                ));
            }
            let commitment = Commitment {
                hash: value.envelope.hash.clone(),
                window_ref: value.window_ref,
                revealed: value.revealed,
                origin: (),
            };
            live.commitments.restore_commitment(value.seat.clone(), id, commitment);
        }
        for (seat, next) in &protocol.next_commitment_ids {
            live.commitments.restore_next_id(seat.clone(), *next);
        }
        for (salt, identity) in &protocol.seen_salts {
            let Some((seat, commitment_id)) = split_key(identity) else {
                return Err(refuse(CheckpointCode::Malformed, format!("salt identity {identity:?} is not seat\\0id")));
            };
            live.commitments.restore_salt(salt.clone(), SaltOwner { seat: seat.to_owned(), commitment_id, origin: () });
        }
        live.rejections = protocol
            .rejections
            .iter()
            .map(|r| RejectionRecord {
                transition_revision: r.transition_revision,
                tick: r.tick,
                participant_id: r.participant_id.clone(),
                submission_id: r.submission_id.clone(),
            })
            .collect();
        Ok(())
    }

    /// `compact(checkpoint, request)`: forget what the embedder now holds
    /// durably. `checkpoint` must be this kernel's [`Self::checkpoint`] or
    /// (better: bounded size) [`Self::compacted_checkpoint`] of its live
    /// state, stored under `request.checkpoint_digest`. Drops the event log, rejection history,
    /// the in-memory identity index (`history` answers for it from now on),
    /// the salt book and revealed commitments; the retention floor becomes
    /// the live transition revision. Window, receipts within retention,
    /// open commitments and views stay.
    pub fn compact(
        &mut self,
        checkpoint: &KernelCheckpoint,
        request: CompactRequest<'_>,
        history: Arc<dyn HistoryLookup>,
    ) -> Result<CompactSummary, KernelError> {
        if !request.checkpoint_durably_committed || !request.history_durably_committed {
            return Err(refuse(
                CheckpointCode::Durability,
                "compaction needs a durably committed checkpoint and durably committed history",
            ));
        }
        if request.checkpoint_digest != checkpoint.integrity_digest() {
            return Err(refuse(
                CheckpointCode::Integrity,
                format!(
                    "checkpointDigest {} is not the checkpoint's integrityDigest {}",
                    request.checkpoint_digest,
                    checkpoint.integrity_digest()
                ),
            ));
        }
        let revision = self.live.transition_revision;
        let of_live_state = checkpoint.session_id() == Some(self.options.session_id.as_str())
            && checkpoint.transition_revision() == revision
            && checkpoint.state_digest() == self.digest()
            && self.is_of_live_state(checkpoint)?;
        if !of_live_state {
            return Err(refuse(
                CheckpointCode::Watermark,
                format!(
                    "the checkpoint (transition {}) is not of this kernel's live state (transition {revision})",
                    checkpoint.transition_revision()
                ),
            ));
        }
        let live = &mut self.live;
        let summary = CompactSummary {
            retention_floor: revision,
            dropped_events: live.events.len(),
            dropped_identities: live.accepted.len(),
        };
        live.events = EventLog::new();
        live.rejections = Vec::new();
        live.accepted = new_set();
        live.commitments.compact();
        let receipts = &live.receipts;
        live.receipt_order.retain(|(_, key)| receipts.contains_key(key));
        live.receipt_order.shrink_to_fit();
        live.retention_floor = revision;
        self.history = Some(history);
        Ok(summary)
    }

    /// Whether an identity the kernel does not hold was accepted at or below
    /// the retention floor (asked of the history lookup).
    pub(super) fn accepted_before_floor(&self, participant: &str, submission_id: &str) -> Result<bool, KernelError> {
        if self.live.retention_floor == 0 {
            return Ok(false);
        }
        let Some(history) = &self.history else {
            return Err(KernelError::History {
                message: format!(
                    "the kernel was compacted at transition {} but has no history lookup",
                    self.live.retention_floor
                ),
            });
        };
        history
            .was_accepted(participant, submission_id, self.live.retention_floor)
            .map_err(|message| KernelError::History { message })
    }
}
