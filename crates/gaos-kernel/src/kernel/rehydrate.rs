//! `rehydrateKernel`: rebuild a kernel from its persisted transcript.
//!
//! Persisted events are authoritative, including events of a transition
//! whose commit was never observed (a crash between persist and commit).
//! Every recorded fact that can be recomputed is recomputed and compared:
//! frozen actions, reveal checks, resolution results and checkpoint digests.

use std::sync::Arc;

use gaos_json::canonical_json;

use super::SessionKernel;
use super::derive::Derived;
use super::ingest::{IngestReceipt, ReceiptStatus, StoredReceipt, identity_key};
use super::resolve::RejectionRecord;
use crate::action::SubmittedAction;
use crate::audit::validate_timeout_audit;
use crate::commitment::{RevealCheck, SaltOwner};
use crate::error::KernelError;
use crate::event::{
    CanonicalInput, EventBody, EventLog, ResolutionResult, SessionEvent, SessionHeader, SubmissionIdentity,
};
use crate::game::CommandContext;
use crate::options::KernelOptions;
use crate::protocol::Intent;
use crate::reducer::TickReducer;

/// `eventId == sessionId:transitionRevision:index`, checked without allocating.
fn is_event_id(id: &str, session_id: &str, revision: u64, index: usize) -> bool {
    let Some(rest) = id.strip_prefix(session_id).and_then(|r| r.strip_prefix(':')) else {
        return false;
    };
    let mut parts = rest.splitn(2, ':');
    let (Some(rev), Some(idx)) = (parts.next(), parts.next()) else {
        return false;
    };
    let canonical =
        |text: &str, value: u64| text.parse::<u64>().ok() == Some(value) && (text == "0" || !text.starts_with('0'));
    canonical(rev, revision) && canonical(idx, index as u64)
}

fn bad(index: usize, message: impl std::fmt::Display) -> KernelError {
    KernelError::type_error(format!("transcript event {index}: {message}"))
}

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    /// `rehydrateKernel(options, transcript)`: a fresh kernel from `options`
    /// with every event re-applied. `header`, when given, must equal the
    /// options' header canonically.
    pub fn rehydrate(
        options: Arc<KernelOptions<R>>,
        header: Option<&SessionHeader>,
        events: Vec<SessionEvent>,
    ) -> Result<Self, KernelError> {
        let mut kernel = SessionKernel::from_shared(options)?;
        if let Some(header) = header {
            let ours = canonical_json(&kernel.session_header().to_value());
            if canonical_json(&header.to_value()) != ours {
                return Err(KernelError::type_error("the transcript header does not match the kernel options"));
            }
        }
        validate_timeout_audit(&events, &kernel.options.seats).map_err(KernelError::type_error)?;
        let final_cursor = events.iter().filter(|e| matches!(e.body, EventBody::Resolution { .. })).count() as u64;
        let mut last_revision = 0u64;
        let mut index_in_revision = 0usize;
        for (i, event) in events.iter().enumerate() {
            if event.transition_revision < last_revision || event.transition_revision == 0 {
                return Err(bad(i, "transition revisions must be positive and non-decreasing"));
            }
            if event.transition_revision != last_revision {
                index_in_revision = 0;
            }
            if !is_event_id(&event.event_id, &kernel.options.session_id, event.transition_revision, index_in_revision) {
                return Err(bad(i, format!("unexpected eventId {:?}", event.event_id)));
            }
            index_in_revision += 1;
            last_revision = event.transition_revision;
            kernel.replay_event(i, event, final_cursor)?;
        }
        kernel.live.transition_revision = last_revision;
        kernel.live.events = EventLog::from(events);
        Ok(kernel)
    }

    /// Re-apply one event. `final_cursor` is the cursor after the whole
    /// transcript: a receipt that will have been evicted by then is not built.
    fn replay_event(&mut self, i: usize, event: &SessionEvent, final_cursor: u64) -> Result<(), KernelError> {
        match &event.body {
            EventBody::IntentAccepted {
                tick,
                revision,
                participant_id,
                submission_id,
                command,
                canonical_command,
                action,
                client_time,
                prev_chain_hash,
                sig,
            } => {
                let accepted = AcceptedIntentEvent {
                    tick: *tick,
                    revision: *revision,
                    intent: Intent {
                        participant_id: participant_id.clone(),
                        submission_id: submission_id.clone(),
                        command: command.clone(),
                        client_time: client_time.clone(),
                        prev_chain_hash: prev_chain_hash.clone(),
                        sig: sig.clone(),
                    },
                    canonical_command,
                    action: action.as_deref(),
                };
                self.replay_intent_accepted(i, accepted, final_cursor)
            }
            EventBody::Resolution { tick, cursor, consumed, inputs, result, .. } => {
                self.replay_resolution(i, *tick, *cursor, consumed, inputs, result)
            }
            EventBody::Rejection { tick, participant_id, submission_id, commitment_id, attempted_reveal, .. } => {
                let rejected = RejectedReveal {
                    tick: *tick,
                    participant_id,
                    submission_id,
                    commitment_id: *commitment_id,
                    salt: &attempted_reveal.salt,
                };
                self.replay_rejection(i, event.transition_revision, rejected)
            }
            EventBody::Checkpoint { tick, digest } => self.replay_checkpoint(i, *tick, *digest),
            EventBody::Extension { lane, .. } => {
                if lane.is_empty() {
                    return Err(bad(i, "an extension needs a lane"));
                }
                Ok(())
            }
            // Audited as a whole before replay (`validate_timeout_audit`).
            EventBody::Timeout { .. } => Ok(()),
        }
    }

    /// An accepted intent joins the open window (its action re-mapped and
    /// compared with the frozen one) and, unless evicted by the end of the
    /// transcript, leaves a receipt.
    fn replay_intent_accepted(
        &mut self,
        i: usize,
        accepted: AcceptedIntentEvent<'_>,
        final_cursor: u64,
    ) -> Result<(), KernelError> {
        let AcceptedIntentEvent { tick, revision, intent, canonical_command, action } = accepted;
        let seat = intent.participant_id.clone();
        if revision != self.live.cursor || tick != self.live.tick {
            return Err(bad(i, "an accepted intent must address the open window"));
        }
        if !self.live.window.has_participant(&seat) {
            return Err(bad(i, format!("{seat} is not a participant of the open window")));
        }
        if intent.submission_id.trim().is_empty() {
            return Err(bad(i, "submissionId must be a non-blank string"));
        }
        if self.live.window.intents.contains_key(&seat) {
            return Err(bad(i, format!("{seat} already holds an intent in this window")));
        }
        let canonical = canonical_json(&intent.command);
        if canonical != canonical_command {
            return Err(bad(i, "canonicalCommand does not match command"));
        }
        let key = identity_key(&seat, &intent.submission_id);
        if self.live.accepted.contains(&key) {
            return Err(bad(i, "a submission identity was accepted twice"));
        }
        let ctx = CommandContext {
            session_id: &self.options.session_id,
            participant_id: &seat,
            submission_id: &intent.submission_id,
            cursor: revision,
            tick,
        };
        let recomputed: SubmittedAction =
            (self.options.command_to_action)(&intent.command, &ctx).map_err(|e| bad(i, e))?;
        let frozen = match action {
            Some(recorded) => {
                // Typed equality is canonical equality here (no NaN, and
                // -0 == 0 in both).
                if *recorded != recomputed {
                    return Err(bad(i, "the recorded action differs from the game's mapping"));
                }
                recorded.clone()
            }
            None => recomputed,
        };
        self.live.accepted.insert(key.clone());
        if revision + self.limits.receipt_retention < final_cursor {
            // Evicted before the end of the transcript: only the permanent
            // identity index remembers it.
            self.live.window_actions.insert(seat.clone(), frozen);
            self.live.window.intents.insert(seat, intent);
            return Ok(());
        }
        let (submitted, awaiting) = self.lists_with(&seat, &super::IngestOverlay::default());
        let receipt = IngestReceipt {
            status: ReceiptStatus::Accepted,
            participant_id: seat.clone(),
            submission_id: intent.submission_id.clone(),
            cursor: revision,
            tick,
            submitted_participants: submitted,
            awaiting_participants: awaiting,
            resolved: false,
        };
        let live = &mut self.live;
        live.window_actions.insert(seat.clone(), frozen);
        live.window.intents.insert(seat, intent);
        live.receipt_order.push_back((revision, key.clone()));
        live.receipts.insert(
            key,
            StoredReceipt { canonical_command: canonical, tick_id: live.window.tick_id.clone(), revision, receipt },
        );
        Ok(())
    }

    /// A resolution consumes exactly the window's intents, re-runs the
    /// commit–reveal bookkeeping and the reducer, and must reproduce the
    /// recorded result.
    fn replay_resolution(
        &mut self,
        i: usize,
        tick: u64,
        cursor: u64,
        consumed: &[SubmissionIdentity],
        inputs: &[CanonicalInput],
        result: &ResolutionResult,
    ) -> Result<(), KernelError> {
        if cursor != self.live.cursor || tick != self.live.tick {
            return Err(bad(i, "a resolution must resolve the open window"));
        }
        if self.is_terminal() {
            return Err(bad(i, "a resolution after the session ended"));
        }
        let window = &self.live.window;
        let mut expected =
            window.participants.iter().filter_map(|p| window.intents.get(p).map(|intent| (p, &intent.submission_id)));
        let matches = consumed.len() == window.intents.len()
            && consumed.iter().all(|c| expected.next() == Some((&c.participant_id, &c.submission_id)));
        if !matches {
            return Err(bad(i, "the consumed intents differ from the window's accepted intents"));
        }
        // Commitment bookkeeping and reveal re-checks on the recorded actions.
        for input in inputs {
            let Some(seat) = &input.participant_id else {
                continue;
            };
            let book = &mut self.live.commitments;
            if let Some(commit) = &input.action.commit {
                book.record_commit(seat.clone(), commit.commitment_id, commit.hash.clone(), tick, ());
            }
            if let Some(reveal) = &input.action.reveal {
                let check = book.view().check_reveal(
                    &self.options.session_id,
                    seat,
                    reveal.commitment_id,
                    &reveal.salt,
                    &reveal.payload,
                );
                match check {
                    RevealCheck::Match(_) => {}
                    RevealCheck::Unknown | RevealCheck::AlreadyRevealed(_) => {
                        return Err(bad(i, format!("{seat} reveals an unknown commitment")));
                    }
                    RevealCheck::Mismatch(_) | RevealCheck::Unhashable(_) => {
                        return Err(bad(i, format!("{seat}'s recorded reveal does not match its commitment")));
                    }
                }
                book.mark_revealed(None, seat, reveal.commitment_id);
                let owner = SaltOwner { seat: seat.clone(), commitment_id: reveal.commitment_id, origin: () };
                book.note_salt(None, &reveal.salt, owner);
            }
        }
        let actions: Vec<SubmittedAction> = inputs.iter().map(|input| input.action.clone()).collect();
        let forked = self.isolation.fork(&self.live.state);
        let next_state = self.options.reducer.advance(forked, &actions)?;
        let derived = self.derive(&next_state, &self.live.seat_views, self.live.cursor + 1, |facts| {
            if facts.status.as_str() != result.status
                || facts.stars != result.stars
                || facts.actions_used != result.actions_used
            {
                return Err(bad(i, "the recorded result differs from the re-simulated one"));
            }
            Ok(())
        });
        let Derived { full_view, seat_views, window, .. } = match derived {
            Ok(derived) => derived,
            Err(e) => {
                self.isolation.discard(next_state);
                return Err(e);
            }
        };
        let live = &mut self.live;
        let previous = std::mem::replace(&mut live.state, next_state);
        self.isolation.retire(previous);
        let live = &mut self.live;
        live.cursor += 1;
        live.tick += 1;
        live.full_view = full_view;
        live.seat_views = seat_views;
        live.window = window;
        live.window_actions.clear();
        Self::evict_receipts(live, self.limits.receipt_retention);
        Ok(())
    }

    /// A rejection drops the rejected intent and its receipt and keeps the
    /// durable notice; its attempted reveal's salt enters the salt book
    /// (first seen wins, kernel spec §4.12).
    fn replay_rejection(
        &mut self,
        i: usize,
        transition_revision: u64,
        rejected: RejectedReveal<'_>,
    ) -> Result<(), KernelError> {
        let RejectedReveal { tick, participant_id, submission_id, commitment_id, salt } = rejected;
        if tick != self.live.tick {
            return Err(bad(i, "a rejection must concern the open window"));
        }
        let held = self.live.window.intents.get(participant_id).map(|intent| intent.submission_id.as_str());
        if held != Some(submission_id) {
            return Err(bad(i, "a rejection must concern an accepted intent of the open window"));
        }
        let live = &mut self.live;
        live.window.intents.remove(participant_id);
        live.window_actions.remove(participant_id);
        live.receipts.remove(&identity_key(participant_id, submission_id));
        let owner = SaltOwner { seat: participant_id.to_owned(), commitment_id, origin: () };
        live.commitments.note_salt(None, salt, owner);
        live.rejections.push(RejectionRecord {
            transition_revision,
            tick,
            participant_id: participant_id.to_owned(),
            submission_id: submission_id.to_owned(),
        });
        Ok(())
    }

    /// A checkpoint must equal the rebuilt kernel's tick and digest.
    fn replay_checkpoint(&mut self, i: usize, tick: u64, digest: u32) -> Result<(), KernelError> {
        if tick != self.live.tick || digest != self.digest() {
            return Err(bad(
                i,
                format!(
                    "checkpoint (tick {tick}, digest {digest}) differs from the rebuilt kernel (tick {}, digest {})",
                    self.live.tick,
                    self.digest()
                ),
            ));
        }
        self.live.last_checkpoint_tick = tick;
        Ok(())
    }
}

/// The fields of an `intent-accepted` event, as replayed.
struct AcceptedIntentEvent<'e> {
    tick: u64,
    revision: u64,
    intent: Intent,
    canonical_command: &'e str,
    action: Option<&'e SubmittedAction>,
}

/// The fields of a `rejection` event, as replayed.
struct RejectedReveal<'e> {
    tick: u64,
    participant_id: &'e str,
    submission_id: &'e str,
    commitment_id: u32,
    salt: &'e str,
}
