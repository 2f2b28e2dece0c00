//! Ingest: the reference check order of `prepareIngest` (kernel spec
//! §4.8), batches of ingests and receipts.

use crate::receipt::{IngestReceipt, ReceiptStatus};
use gaos_json::{Value, canonical_json};

use super::SessionKernel;
use super::commit::{IngestPatch, Patch};
use super::prepared::{Prepared, PreparedResult};
use crate::action::SubmittedAction;
use crate::commitment::{CommitmentBinding, validate_commit_envelope};
use crate::error::{IntentError, IntentErrorCode, KernelError, LifecycleCode};
use crate::event::{EventBody, ResolutionCause, SessionEvent};
use crate::game::CommandContext;
use crate::options::Cadence;
use crate::protocol::{CommandSubmission, Intent, PROTOCOL_ID, PROTOCOL_VERSION, validate_intent_submission};
use crate::reducer::TickReducer;

#[derive(Debug, Clone)]
pub(super) struct StoredReceipt {
    pub(super) canonical_command: String,
    pub(super) tick_id: String,
    pub(super) revision: u64,
    pub(super) receipt: IngestReceipt,
}

pub(super) fn identity_key(participant: &str, submission: &str) -> String {
    let mut key = String::with_capacity(participant.len() + submission.len() + 1);
    key.push_str(participant);
    key.push('\u{0}');
    key.push_str(submission);
    key
}

/// Ingests prepared earlier in the same batch, not committed yet.
#[derive(Default)]
pub(super) struct IngestOverlay {
    pub(super) patches: Vec<IngestPatch>,
}

impl IngestOverlay {
    pub(super) fn receipt(&self, key: &str) -> Option<&StoredReceipt> {
        self.patches.iter().rev().find(|p| p.receipt_key == key).map(|p| &p.receipt)
    }
    pub(super) fn holds(&self, seat: &str) -> bool {
        self.patches.iter().any(|p| p.seat == seat)
    }
    pub(super) fn accepted(&self, key: &str) -> bool {
        self.patches.iter().any(|p| p.receipt_key == key)
    }
}

pub(super) enum IngestStep {
    Duplicate(IngestReceipt),
    Accepted { events: Vec<SessionEvent>, patch: Box<IngestPatch>, receipt: IngestReceipt },
}

/// What became of one submission of [`SessionKernel::prepare_ingest_batch`].
#[derive(Debug, Clone, PartialEq)]
pub enum IngestOutcome {
    /// Accepted: its `intent-accepted` event is in the batch's transition.
    Accepted(IngestReceipt),
    /// An exact retry of an accepted submission (nothing to persist).
    Duplicate(IngestReceipt),
    /// Not tried: an earlier submission completed the window; submit it
    /// again once the batch is committed.
    Deferred,
}

/// The result of [`SessionKernel::prepare_ingest_batch`].
pub struct IngestBatch<S> {
    /// The accepted ingests (and the resolution they completed), if any.
    pub prepared: Option<Prepared<S>>,
    /// One outcome per submission, in order.
    pub outcomes: Vec<Result<IngestOutcome, KernelError>>,
}

impl<R> SessionKernel<R>
where
    R: TickReducer,
    R::State: Clone + 'static,
{
    /// `prepareIngest(submission)` for a JSON submission object.
    pub fn prepare_ingest_value(&self, submission: &Value) -> Result<Prepared<R::State>, KernelError> {
        let submission = CommandSubmission::from_value(submission)?;
        self.prepare_ingest(&submission)
    }

    /// `prepareIngest(submission)`: the reference check order, first failure
    /// wins (kernel spec §4.8).
    pub fn prepare_ingest(&self, sub: &CommandSubmission) -> Result<Prepared<R::State>, KernelError> {
        let next = self.live.transition_revision + 1;
        Ok(match self.ingest_step(sub, &IngestOverlay::default(), next)? {
            IngestStep::Duplicate(receipt) => self.prepared(
                self.live.transition_revision,
                Vec::new(),
                Vec::new(),
                PreparedResult::Ingest(receipt),
                Patch::Noop,
            ),
            IngestStep::Accepted { events, patch, receipt } => {
                self.prepared(next, events, Vec::new(), PreparedResult::Ingest(receipt), Patch::Ingest(patch))
            }
        })
    }

    /// One ingest against live state plus the ingests already prepared in
    /// the same batch (`overlay`), its events carrying `next`.
    pub(super) fn ingest_step(
        &self,
        sub: &CommandSubmission,
        overlay: &IngestOverlay,
        next: u64,
    ) -> Result<IngestStep, KernelError> {
        // 1. envelope
        if sub.protocol != PROTOCOL_ID || sub.protocol_version != PROTOCOL_VERSION {
            return Err(KernelError::intent(
                IntentErrorCode::InvalidProtocol,
                format!("expected protocol {PROTOCOL_ID} {PROTOCOL_VERSION}"),
            ));
        }
        if sub.session_id != self.options.session_id {
            return Err(KernelError::intent(IntentErrorCode::WrongSession, "submission is for another session"));
        }
        let Some(command) = &sub.command else {
            return Err(KernelError::intent(IntentErrorCode::InvalidSubmission, "command must be a JSON value"));
        };
        if let Err(e) = gaos_json::check_value(command) {
            return Err(KernelError::intent(
                IntentErrorCode::InvalidSubmission,
                format!("command must be a JSON value: {e}"),
            ));
        }
        let canonical_command = canonical_json(command);
        // 2. signed sessions: the chain fields' shapes
        self.check_chain_shape(sub.client_time.as_ref(), sub.prev_chain_hash.as_ref(), sub.sig.as_ref())?;
        // 3. retained receipt
        if let Some(submission_id) = &sub.submission_id {
            let key = identity_key(&sub.participant_id, submission_id);
            if let Some(stored) = overlay.receipt(&key).or_else(|| self.live.receipts.get(&key)) {
                if stored.canonical_command != canonical_command
                    || stored.tick_id != sub.tick_id
                    || stored.revision as f64 != sub.revision
                {
                    return Err(KernelError::conflict(format!(
                        "submission {submission_id} of {} was already accepted with other content",
                        sub.participant_id
                    )));
                }
                let mut receipt = stored.receipt.clone();
                receipt.status = ReceiptStatus::Duplicate;
                receipt.resolved = stored.receipt.cursor < self.live.cursor;
                return Ok(IngestStep::Duplicate(receipt));
            }
        }
        // 4. window
        validate_intent_submission(&self.live.window, sub)?;
        let submission_id = sub.submission_id.clone().expect("validated above");
        // 5. terminal
        if self.is_terminal() {
            return Err(Self::terminal_error());
        }
        // 6. permanently single-use identities
        let key = identity_key(&sub.participant_id, &submission_id);
        if self.live.accepted.contains(&key)
            || overlay.accepted(&key)
            || self.accepted_before_floor(&sub.participant_id, &submission_id)?
        {
            return Err(KernelError::unknown_submission(format!(
                "submission {submission_id} of {} was accepted before and cannot be applied again",
                sub.participant_id
            )));
        }
        // 6b. signed sessions: the seat's chain and the signature
        let signed = self.check_chain_link(
            &sub.participant_id,
            &submission_id,
            &canonical_command,
            sub.client_time.as_ref(),
            sub.prev_chain_hash.as_ref(),
            sub.sig.as_ref(),
        )?;
        // 7. action
        let ctx = CommandContext {
            session_id: &self.options.session_id,
            participant_id: &sub.participant_id,
            submission_id: &submission_id,
            cursor: self.live.cursor,
            tick: self.live.tick,
        };
        let action = (self.options.command_to_action)(command, &ctx).map_err(|e| {
            KernelError::Intent(IntentError {
                code: IntentErrorCode::IllegalCommand,
                message: format!("the game cannot map this command: {}", e.message),
                cause: Some(e.message),
            })
        })?;
        self.check_action_commitments(&sub.participant_id, &action)?;
        self.check_signing_tier(&sub.participant_id, signed, &action)?;
        // 8. game validation
        self.options.reducer.validate_command(&self.live.state, &sub.participant_id, &action).map_err(|e| {
            KernelError::Intent(IntentError {
                code: IntentErrorCode::IllegalCommand,
                message: format!("illegal command: {}", e.message),
                cause: Some(e.message),
            })
        })?;
        // 9. collection
        if self.live.window.intents.contains_key(&sub.participant_id) || overlay.holds(&sub.participant_id) {
            // A different intent already holds the seat (an exact retry was
            // answered from its receipt above).
            return Err(KernelError::intent(
                IntentErrorCode::ConflictingIntent,
                format!("{} already submitted an intent for this window", sub.participant_id),
            ));
        }
        let intent = Intent {
            participant_id: sub.participant_id.clone(),
            submission_id: submission_id.clone(),
            command: command.clone(),
            client_time: sub.client_time.clone(),
            prev_chain_hash: sub.prev_chain_hash.clone(),
            sig: sub.sig.clone(),
        };
        let (submitted, awaiting) = self.lists_with(&sub.participant_id, overlay);
        let receipt = IngestReceipt {
            status: ReceiptStatus::Accepted,
            participant_id: sub.participant_id.clone(),
            submission_id: submission_id.clone(),
            cursor: self.live.cursor,
            tick: self.live.tick,
            submitted_participants: submitted,
            awaiting_participants: awaiting,
            resolved: false,
        };
        let body = EventBody::IntentAccepted {
            tick: self.live.tick,
            revision: self.live.cursor,
            participant_id: sub.participant_id.clone(),
            submission_id: submission_id.clone(),
            command: command.clone(),
            canonical_command: canonical_command.clone(),
            action: Some(Box::new(action.clone())),
            client_time: sub.client_time.clone(),
            prev_chain_hash: sub.prev_chain_hash.clone(),
            sig: sub.sig.clone(),
        };
        let events = self.finish_events(next, vec![body])?;
        let patch = IngestPatch {
            seat: sub.participant_id.clone(),
            intent,
            action,
            receipt_key: key,
            receipt: StoredReceipt {
                canonical_command,
                tick_id: self.live.window.tick_id.clone(),
                revision: self.live.cursor,
                receipt: receipt.clone(),
            },
        };
        Ok(IngestStep::Accepted { events, patch: Box::new(patch), receipt })
    }

    /// Ingest a submission and, in turns cadence, resolve the window it
    /// completes in the same prepared value: two consecutive transitions
    /// (the `intent-accepted` event at revision n+1, the resolution at n+2)
    /// that a host persists in one write. Identical in events, deltas and
    /// state to `prepare_ingest` + commit + `prepare_advance` + commit.
    /// Anything else (pending windows, duplicates, ticks cadence) is a plain
    /// ingest.
    pub fn prepare_ingest_and_resolve(&self, sub: &CommandSubmission) -> Result<Prepared<R::State>, KernelError> {
        let mut batch = self.prepare_ingest_batch(std::slice::from_ref(sub))?;
        match batch.outcomes.pop() {
            Some(Err(e)) => Err(e),
            Some(Ok(IngestOutcome::Duplicate(receipt))) => Ok(self.prepared(
                self.live.transition_revision,
                Vec::new(),
                Vec::new(),
                PreparedResult::Ingest(receipt),
                Patch::Noop,
            )),
            _ => batch.prepared.ok_or_else(|| KernelError::type_error("an accepted ingest yields a transition")),
        }
    }

    /// Prepare several submissions as consecutive transitions of one
    /// prepared value (a host persists them in one write): each ingest is
    /// checked against live state plus the ingests before it in the batch,
    /// exactly as if the earlier ones had been committed; in turns cadence
    /// the ingest that completes the window is followed by its resolution,
    /// and the submissions after it are left for later (`Deferred`).
    /// Refused submissions change nothing; `Err` only when game code fails
    /// while resolving (the ingests are then not prepared either).
    pub fn prepare_ingest_batch(&self, subs: &[CommandSubmission]) -> Result<IngestBatch<R::State>, KernelError> {
        let mut overlay = IngestOverlay::default();
        let mut events = Vec::new();
        let mut outcomes = Vec::with_capacity(subs.len());
        let mut resolved = false;
        for sub in subs {
            if resolved {
                outcomes.push(Ok(IngestOutcome::Deferred));
                continue;
            }
            let next = self.live.transition_revision + 1 + overlay.patches.len() as u64;
            match self.ingest_step(sub, &overlay, next) {
                Err(e) => outcomes.push(Err(e)),
                Ok(IngestStep::Duplicate(receipt)) => outcomes.push(Ok(IngestOutcome::Duplicate(receipt))),
                Ok(IngestStep::Accepted { events: mut step_events, patch, receipt }) => {
                    resolved =
                        matches!(self.options.cadence, Cadence::Turns) && receipt.awaiting_participants.is_empty();
                    events.append(&mut step_events);
                    overlay.patches.push(*patch);
                    outcomes.push(Ok(IngestOutcome::Accepted(receipt)));
                }
            }
        }
        if overlay.patches.is_empty() {
            return Ok(IngestBatch { prepared: None, outcomes });
        }
        let last_receipt = overlay.patches.last().map(|p| p.receipt.receipt.clone()).expect("non-empty");
        let ingests = overlay.patches.len() as u64;
        let mut chain: Vec<(u64, Patch<R::State>)> = Vec::with_capacity(overlay.patches.len() + 1);
        let mut deltas = Vec::new();
        let mut result = PreparedResult::Ingest(last_receipt.clone());
        let mut next = self.live.transition_revision + ingests;
        if resolved {
            let mut draft = self.start_draft();
            draft.next_revision += ingests;
            for patch in &overlay.patches {
                draft.window.intents.insert(patch.seat.clone(), patch.intent.clone());
                draft.window_actions.insert(patch.seat.clone(), patch.action.clone());
            }
            self.resolve_once(&mut draft, ResolutionCause::Complete, None)?;
            let mut advance = self.finish_advance(draft, false)?;
            let summary = advance.summary().cloned().expect("an advance has a summary");
            let Some(Patch::Advance(advance_patch)) = advance.patch.take() else {
                return Err(KernelError::lifecycle(LifecycleCode::AlreadyCompleted, "the advance holds no patch"));
            };
            events.append(&mut advance.events);
            deltas = std::mem::take(&mut advance.deltas);
            result = PreparedResult::IngestAndAdvance(last_receipt, summary);
            next = advance.next;
            for (i, patch) in overlay.patches.into_iter().enumerate() {
                chain.push((self.live.transition_revision + 1 + i as u64, Patch::Ingest(Box::new(patch))));
            }
            chain.push((next, Patch::Advance(advance_patch)));
        } else {
            for (i, patch) in overlay.patches.into_iter().enumerate() {
                chain.push((self.live.transition_revision + 1 + i as u64, Patch::Ingest(Box::new(patch))));
            }
        }
        let patch = if chain.len() == 1 { chain.pop().expect("one link").1 } else { Patch::Chain(chain) };
        Ok(IngestBatch { prepared: Some(self.prepared(next, events, deltas, result, patch)), outcomes })
    }

    /// Submitted/awaiting lists of the open window once `seat` submitted.
    pub(super) fn lists_with(&self, seat: &str, overlay: &IngestOverlay) -> (Vec<String>, Vec<String>) {
        let window = &self.live.window;
        let mut submitted = Vec::with_capacity(window.participants.len());
        let mut awaiting = Vec::new();
        for p in &window.participants {
            if p == seat || window.intents.contains_key(p) || overlay.holds(p) {
                submitted.push(p.clone());
            } else {
                awaiting.push(p.clone());
            }
        }
        (submitted, awaiting)
    }

    /// Ingest step 7: impersonation and commit–reveal envelope checks.
    pub(super) fn check_action_commitments(
        &self,
        participant: &str,
        action: &SubmittedAction,
    ) -> Result<(), KernelError> {
        if let Some(seat) = &action.seat
            && seat != participant
        {
            return Err(KernelError::conflict(format!("{participant} cannot submit an action for {seat}")));
        }
        // A mapper passes envelope fields through as given; one whose shape
        // does not fit the typed envelope travels under its own name in
        // `extra` and is a malformed envelope here (kernel spec §4.8 step 7).
        if let Some(key) = ["commit", "reveal", "verifiedPayload"].into_iter().find(|k| action.extra.contains_key(*k)) {
            return Err(KernelError::conflict(format!("malformed {key} envelope")));
        }
        if action.verified_payload.is_some() {
            return Err(KernelError::conflict("verifiedPayload is set by the kernel, never by a submission"));
        }
        match (&action.commit, &action.reveal) {
            (Some(_), Some(_)) => Err(KernelError::conflict("an action cannot commit and reveal at once")),
            (Some(commit), None) => {
                validate_commit_envelope(commit).map_err(KernelError::conflict)?;
                let seat = participant.to_owned();
                let expected = self.live.commitments.view().next_id(&seat);
                if commit.commitment_id != expected {
                    return Err(KernelError::conflict(format!(
                        "{participant}'s next commitment id is {expected}, not {}",
                        commit.commitment_id
                    )));
                }
                let open = self.live.commitments.open_count(&seat);
                if open >= self.limits.max_open_commitments_per_seat {
                    return Err(KernelError::conflict(format!("{participant} already holds {open} open commitments")));
                }
                Ok(())
            }
            (None, Some(reveal)) => {
                let record = self
                    .live
                    .commitments
                    .view()
                    .commitment(&participant.to_owned(), reveal.commitment_id)
                    .filter(|r| !r.revealed)
                    .ok_or_else(|| {
                        KernelError::conflict(format!("{participant} has no open commitment {}", reveal.commitment_id))
                    })?;
                let binding = CommitmentBinding {
                    session_id: &self.options.session_id,
                    seat: participant,
                    commitment_id: reveal.commitment_id,
                    window_ref: record.window_ref,
                };
                // Well-formedness only; the match is decided at resolution.
                crate::commitment::commitment_preimage(&binding, &reveal.salt, &reveal.payload)
                    .map_err(|e| KernelError::conflict(format!("malformed reveal: {e}")))?;
                Ok(())
            }
            (None, None) => Ok(()),
        }
    }
}
