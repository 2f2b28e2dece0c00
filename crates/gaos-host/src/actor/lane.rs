//! The host lane: a prepared transition is persisted (one write batch, group
//! committed with other sessions'), then committed to the kernel, then
//! published; a persistence failure aborts it. Stored answers ride in the
//! same batch as the transition they answer.

use gaos_kernel::event::{EventBody, SessionTranscript};
use gaos_kernel::{AnyState, Cadence, DynReducer, ObservationDelta, Prepared, SessionKernel};
use gaos_session::ErrorCode;
use sha2::{Digest, Sha256};

use super::SessionActor;
use crate::answers::Answer;
use crate::digest_key::DigestKey;
use crate::error::HostError;
use crate::storage::{AnswerKind, SessionStatus, StoredAnswer, StoredEvent, WriteOp};

/// A hash chain over the persisted events' canonical JSON, and how many
/// events are persisted: `d₀ = 32 zero bytes`, `dₙ = SHA-256(dₙ₋₁ ‖ eventₙ)`.
/// A chain (rather than one SHA-256 over the whole log) can continue from
/// any point, so a session restored from a checkpoint (actor/checkpoints.rs)
/// has the same digest as one replayed from its whole log. The attach
/// receipt's `transcriptDigest` is this digest keyed with the session's
/// digest key ([`TranscriptHash::keyed_digest`]): the events hold other
/// seats' pending intents, so the bare hash would let a seat test guesses
/// of them.
#[derive(Clone)]
pub(super) struct TranscriptHash {
    digest: [u8; 32],
    persisted: usize,
}

impl TranscriptHash {
    /// The hash of a session restored from a checkpoint: it continues from
    /// the digest stored with the checkpoint (`persisted` events by then),
    /// then chains the tail the kernel replayed.
    pub(super) fn resume(digest: [u8; 32], persisted: usize, kernel: &SessionKernel<DynReducer>) -> Self {
        TranscriptHash { digest, persisted }.resume_level(kernel)
    }

    /// The hash of the events a session starts from (all persisted): a
    /// run's finished levels' events in order, then the live level's (a
    /// session that is not a run has no finished level). A receipt's
    /// transcript digest thus covers the whole run, as the run replay does.
    pub(super) fn of_levels(finished: &[SessionTranscript], kernel: &SessionKernel<DynReducer>) -> Self {
        let mut transcript = TranscriptHash { digest: [0; 32], persisted: 0 };
        for event in finished.iter().flat_map(|level| level.events.iter()) {
            transcript.append(event.canonical().as_bytes());
        }
        transcript.persisted = 0;
        transcript.resume_level(kernel)
    }

    /// The hash going on into the next level of a run (`kernel`, freshly
    /// started or rehydrated): the chain continues, the count of persisted
    /// events is the level's own.
    pub(super) fn next_level(&self, kernel: &SessionKernel<DynReducer>) -> Self {
        TranscriptHash { digest: self.digest, persisted: 0 }.resume_level(kernel)
    }

    fn resume_level(mut self, kernel: &SessionKernel<DynReducer>) -> Self {
        for event in kernel.events().iter() {
            self.append(event.canonical().as_bytes());
        }
        self
    }

    /// How many events are persisted.
    pub(super) fn persisted(&self) -> usize {
        self.persisted
    }

    /// The digest so far, as hex (stored with a checkpoint).
    pub(super) fn prefix_hex(&self) -> String {
        gaos_json::hex_encode(&self.digest)
    }

    fn append(&mut self, canonical_event: &[u8]) {
        let mut hash = Sha256::new();
        hash.update(self.digest);
        hash.update(canonical_event);
        self.digest = hash.finalize().into();
        self.persisted += 1;
    }

    /// `hex(HMAC-SHA256(key, dₙ))`.
    pub(super) fn keyed_digest(&self, key: &DigestKey) -> String {
        key.mac_hex(&self.digest)
    }
}

impl SessionActor {
    /// Refuse writes to a finalized or revoked session.
    pub(super) fn ensure_writable(&self) -> Result<(), HostError> {
        match self.status {
            SessionStatus::Finalized => Err(HostError::new(
                ErrorCode::SessionFinalized,
                "the session was finalized; no further actions are accepted",
            )),
            SessionStatus::Revoked => {
                Err(HostError::revoked(self.leases.revoked.as_deref().unwrap_or("the session was revoked")))
            }
            _ => Ok(()),
        }
    }

    fn stored_events(&self, prepared: &Prepared<AnyState>) -> Vec<StoredEvent> {
        prepared
            .events()
            .iter()
            .enumerate()
            .map(|(i, e)| StoredEvent {
                seq: (self.transcript.persisted + i) as u64,
                event_id: e.event_id.clone(),
                transition_revision: e.transition_revision,
                body: e.canonical(),
            })
            .collect()
    }

    /// Persist a prepared transition's events (plus `extra` writes) and
    /// commit it; abort on persistence failure. Returns its deltas.
    pub(super) async fn run_transition(
        &mut self,
        mut prepared: Prepared<AnyState>,
        extra: Vec<WriteOp>,
    ) -> Result<Vec<ObservationDelta>, HostError> {
        let events = self.stored_events(&prepared);
        let stores_events = !events.is_empty();
        // The transcript hash once these events are stored: computed now, so
        // the events move into the write instead of being copied for later.
        let mut transcript_after = self.transcript.clone();
        for event in &events {
            transcript_after.append(event.body.as_bytes());
        }
        let mut ops = Vec::with_capacity(extra.len() + 2);
        if stores_events {
            ops.push(WriteOp::Events { session_id: self.events_key(), events });
        }
        ops.extend(extra);
        // The session's terminal status is part of the transition that ends
        // it: one batch, so the stored status never lags the transcript.
        let ends_session = self.status == SessionStatus::Active && self.ends_session(&prepared);
        if ends_session {
            ops.push(WriteOp::SetStatus { session_id: self.id.clone(), status: SessionStatus::Terminal });
        }
        if let Err(error) = self.persist(ops).await {
            self.kernel
                .abort(&mut prepared)
                .map_err(|e| HostError::internal(format!("aborting a transition that was not stored failed: {e}")))?;
            return Err(error);
        }
        let deltas = prepared.deltas().to_vec();
        self.kernel
            .commit(&mut prepared)
            .map_err(|e| HostError::internal(format!("commit after persist failed: {e}")))?;
        self.transcript = transcript_after;
        if stores_events {
            self.metrics.add_transitions(1);
        }
        self.publish(&deltas);
        self.advance_episode_if_due();
        debug_assert_eq!(
            ends_session,
            self.kernel.is_terminal() && self.status == SessionStatus::Active,
            "the stored status predicted the transition's end"
        );
        if ends_session {
            self.status = SessionStatus::Terminal;
        }
        self.checkpoint_if_due().await;
        self.arm_timers();
        Ok(deltas)
    }

    /// Whether committing `prepared` ends the session: its resolution ends
    /// the level, and no next level of a run starts from it.
    fn ends_session(&self, prepared: &Prepared<AnyState>) -> bool {
        let ended = prepared.events().iter().rev().find_map(|e| match &e.body {
            EventBody::Resolution { result, .. } => Some(result.status),
            _ => None,
        });
        match ended {
            Some(status) if status.is_terminal() => !self.level_end_continues(status),
            _ => false,
        }
    }

    /// Turns cadence: resolve the open window once every participant submitted.
    pub(super) async fn resolve_ready_window(&mut self) {
        if self.config.cadence != Cadence::Turns
            || self.kernel.is_terminal()
            || !self.kernel.window().is_complete()
            || self.status != SessionStatus::Active
        {
            return;
        }
        match self.kernel.prepare_advance(None) {
            Ok(prepared) => {
                if let Err(e) = self.run_transition(prepared, Vec::new()).await {
                    tracing::warn!(session = %self.id, error = %e, "resolving a ready window failed");
                }
            }
            Err(e @ gaos_kernel::KernelError::Reducer { .. }) => {
                let revoked = self.game_failed(e).await;
                tracing::warn!(session = %self.id, error = %revoked, "resolving a ready window met failing game code");
            }
            Err(e) => tracing::error!(session = %self.id, error = %e, "a ready window could not be resolved"),
        }
    }

    /// The write that stores `answer` to the request fingerprinted `request`.
    pub(super) fn answer_op(&self, kind: AnswerKind, key: &str, request: &str, answer: &Answer) -> WriteOp {
        WriteOp::Answer(StoredAnswer {
            session_id: self.id.clone(),
            kind,
            key: key.into(),
            status: answer.status,
            request: request.into(),
            body: answer.body.clone(),
        })
    }

    /// Keep the answers among `ops` (now durable) for exact retries.
    pub(super) fn remember(&mut self, ops: impl IntoIterator<Item = WriteOp>) {
        for op in ops {
            if let WriteOp::Answer(answer) = op {
                self.answers.remember(answer);
            }
        }
    }
}
