//! One resolution of the open window: reveals are decided through the
//! commitment book first (a mismatch becomes a rejection), then the reducer
//! advances a fork of the state and every seat gets its delta.

use std::sync::Arc;

use gaos_json::canonical_json;

use super::SessionKernel;
use super::advance::{Draft, SessionWarning};
use super::derive::Derived;
use super::ingest::identity_key;
use crate::action::{COMMIT_SCHEME, SubmittedAction};
use crate::commitment::{RevealCheck, SaltOwner};
use crate::error::KernelError;
use crate::event::{AttemptedReveal, CanonicalInput, EventBody, ResolutionCause, ResolutionResult, SubmissionIdentity};
use crate::observation::{DeltaBody, DeltaOrigin, ObservationDelta, RejectionNotice};
use crate::reducer::TickReducer;

/// `SessionWarning.code` of a reused salt.
const SALT_REUSE: &str = "salt_reuse";
/// Its message (fixed by kernel spec §4.12).
const SALT_REUSE_MESSAGE: &str = "commitment salt was reused within this session";

/// A notice of `record` routed to `seat`.
pub(super) fn notice(seat: &str, record: &RejectionRecord) -> RejectionNotice {
    RejectionNotice {
        seat: seat.into(),
        transition_revision: record.transition_revision,
        tick: record.tick,
        participant_id: record.participant_id.clone(),
        submission_id: record.submission_id.clone(),
        code: "commit_mismatch".into(),
    }
}

/// A durable rejection, for snapshot notices.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RejectionRecord {
    pub(super) transition_revision: u64,
    pub(super) tick: u64,
    pub(super) participant_id: String,
    pub(super) submission_id: String,
}

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    /// One resolution (or rejection) of the draft's open window.
    pub(super) fn resolve_once(
        &self,
        draft: &mut Draft<R::State>,
        cause: ResolutionCause,
        system_input: Option<CanonicalInput>,
    ) -> Result<(), KernelError> {
        let next_revision = draft.next_revision;
        let window = &draft.window;
        let mut inputs: Vec<CanonicalInput> = Vec::with_capacity(window.intents.len() + 1);
        for participant in &window.participants {
            let Some(intent) = window.intents.get(participant) else {
                continue;
            };
            let mut action = draft.window_actions.get(participant).cloned().unwrap_or_default();
            if action.seat.is_none() {
                action.seat = Some(participant.clone());
            }
            inputs.push(CanonicalInput {
                participant_id: Some(participant.clone()),
                submission_id: Some(intent.submission_id.clone()),
                canonical_command: Some(canonical_json(&intent.command)),
                cursor: Some(window.revision),
                action,
                client_time: intent.client_time.clone(),
                prev_chain_hash: intent.prev_chain_hash.clone(),
                sig: intent.sig.clone(),
            });
        }
        // Decide every reveal, in canonical input order, before anything is
        // applied. The salt book is consulted and updated before each hash
        // check (kernel spec §4.12 "Salt book"): on a mismatch the salts
        // recorded so far stay and the warnings so far go with the rejection.
        for input in &inputs {
            let Some(reveal) = &input.action.reveal else {
                continue;
            };
            let seat = input.participant_id.clone().expect("user input");
            let check = draft.commitments.over(&self.live.commitments).check_reveal(
                &self.options.session_id,
                &seat,
                reveal.commitment_id,
                &reveal.salt,
                &reveal.payload,
            );
            let matches = match check {
                RevealCheck::Match(_) => true,
                RevealCheck::Mismatch(_) | RevealCheck::Unhashable(_) => false,
                RevealCheck::Unknown | RevealCheck::AlreadyRevealed(_) => {
                    return Err(KernelError::conflict(format!(
                        "{seat} has no open commitment {}",
                        reveal.commitment_id
                    )));
                }
            };
            self.note_salt(draft, &seat, reveal.commitment_id, &reveal.salt);
            if !matches {
                self.reject(draft, input, reveal.commitment_id, next_revision);
                return Ok(());
            }
        }
        // Commitment bookkeeping, verified payloads.
        for input in &mut inputs {
            let seat = input.participant_id.clone().expect("user input");
            if let Some(commit) = &input.action.commit {
                draft.commitments.record_commit(
                    seat.clone(),
                    commit.commitment_id,
                    commit.hash.clone(),
                    draft.tick,
                    (),
                );
            }
            if let Some(reveal) = &input.action.reveal {
                let revealed =
                    draft.commitments.mark_revealed(Some(&self.live.commitments), &seat, reveal.commitment_id);
                debug_assert!(revealed, "verified above");
                input.action.verified_payload = Some(reveal.payload.clone());
            }
        }
        let consumed: Vec<SubmissionIdentity> = inputs
            .iter()
            .map(|i| SubmissionIdentity {
                participant_id: i.participant_id.clone().expect("user input"),
                submission_id: i.submission_id.clone().expect("user input"),
            })
            .collect();
        if let Some(system) = &system_input {
            inputs.push(system.clone());
        }
        let actions: Vec<SubmittedAction> = inputs.iter().map(|i| i.action.clone()).collect();
        let forked = match draft.state.take() {
            Some(state) => state,
            None => self.isolation.fork(&self.live.state),
        };
        // `advance` takes the draft by value: a reducer that fails drops it
        // itself, so `discard` is never called for that draft.
        let next_state = self.options.reducer.advance(forked, &actions)?;
        let previous_views = draft.seat_views.as_deref().unwrap_or(&self.live.seat_views);
        let derived = self.derive(&next_state, previous_views, draft.cursor + 1, |_| Ok(()));
        let Derived { full_view, facts, seat_views, window: next_window } = match derived {
            Ok(derived) => derived,
            Err(e) => {
                // The reducer's result is a draft nobody will publish.
                self.isolation.discard(next_state);
                return Err(e);
            }
        };
        let resolved_cursor = draft.cursor;
        let resolved_tick = draft.tick;
        draft.cursor += 1;
        draft.tick += 1;
        let acks = consumed.clone();
        for (i, seat) in self.options.seats.iter().enumerate() {
            let sv = &seat_views[i];
            let unchanged = previous_views[i].canonical == sv.canonical;
            draft.deltas.push(ObservationDelta {
                seat: seat.clone(),
                scope_id: seat.clone(),
                transition_revision: next_revision,
                view_revision: sv.revision,
                tick: draft.tick,
                codec: "v2".into(),
                origin: DeltaOrigin::Resolution,
                acknowledgements: acks.clone(),
                rejections: Vec::new(),
                body: if unchanged { DeltaBody::Unchanged } else { DeltaBody::Snapshot { view: Arc::clone(&sv.view) } },
                view_digest: sv.digest,
            });
        }
        let result = ResolutionResult { status: facts.status, stars: facts.stars, actions_used: facts.actions_used };
        let system = if cause == ResolutionCause::Timeout { system_input } else { None };
        draft.bodies.push(EventBody::Resolution {
            tick: resolved_tick,
            cursor: resolved_cursor,
            cause,
            consumed,
            inputs,
            system_input: system.map(Box::new),
            result,
        });
        draft.window = next_window;
        draft.window_actions.clear();
        draft.terminal = facts.status.is_terminal();
        draft.state = Some(next_state);
        draft.full_view = Some(full_view);
        draft.seat_views = Some(seat_views);
        draft.resolutions += 1;
        Ok(())
    }

    /// The salt book for one reveal: a salt first used by another identity
    /// is a `salt_reuse` warning (the book keeps its first owner); a new
    /// salt is recorded under this reveal's identity.
    fn note_salt(&self, draft: &mut Draft<R::State>, seat: &str, commitment_id: u32, salt: &str) {
        let owner = SaltOwner { seat: seat.to_owned(), commitment_id, origin: () };
        if draft.commitments.note_salt(Some(&self.live.commitments), salt, owner).is_some() {
            draft.warnings.push(SessionWarning {
                code: SALT_REUSE.into(),
                message: SALT_REUSE_MESSAGE.into(),
                participant_id: seat.to_owned(),
                commitment_id,
            });
        }
    }

    /// A mismatching reveal: record the rejection, drop the seat's intent and
    /// receipt, notify every seat; nothing resolves.
    pub(super) fn reject(
        &self,
        draft: &mut Draft<R::State>,
        input: &CanonicalInput,
        commitment_id: u32,
        next_revision: u64,
    ) {
        let seat = input.participant_id.clone().expect("user input");
        let submission_id = input.submission_id.clone().expect("user input");
        let reveal = input.action.reveal.clone().expect("a rejection concerns a reveal");
        draft.bodies.push(EventBody::Rejection {
            code: "commit_mismatch".into(),
            tick: draft.tick,
            participant_id: seat.clone(),
            submission_id: submission_id.clone(),
            commitment_id,
            scheme: COMMIT_SCHEME.into(),
            attempted_reveal: AttemptedReveal { salt: reveal.salt, payload: reveal.payload },
            canonical_command: input.canonical_command.clone(),
            cursor: input.cursor,
            client_time: input.client_time.clone(),
            prev_chain_hash: input.prev_chain_hash.clone(),
            sig: input.sig.clone(),
        });
        draft.window.intents.remove(&seat);
        draft.window_actions.remove(&seat);
        draft.removed_receipts.push(identity_key(&seat, &submission_id));
        let record = RejectionRecord {
            transition_revision: next_revision,
            tick: draft.tick,
            participant_id: seat,
            submission_id,
        };
        let views = draft.seat_views.as_deref().unwrap_or(&self.live.seat_views);
        for (i, dest) in self.options.seats.iter().enumerate() {
            let n = notice(dest, &record);
            draft.deltas.push(ObservationDelta {
                seat: dest.clone(),
                scope_id: dest.clone(),
                transition_revision: next_revision,
                view_revision: views[i].revision,
                tick: draft.tick,
                codec: "v2".into(),
                origin: DeltaOrigin::Resolution,
                acknowledgements: Vec::new(),
                rejections: vec![n.clone()],
                body: DeltaBody::Unchanged,
                view_digest: views[i].digest,
            });
            draft.notices.push(n);
        }
        draft.rejections.push(record);
        draft.rejected = true;
    }
}
