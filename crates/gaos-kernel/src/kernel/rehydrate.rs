//! `rehydrateKernel`: rebuild a kernel from its persisted transcript.
//!
//! Persisted events are authoritative, including events of a transition
//! whose commit was never observed (a crash between persist and commit).
//! Every recorded fact that can be recomputed is recomputed and compared:
//! frozen actions, a resolution's inputs against the intents it consumes, a
//! timeout's system input against the game's mapping, reveal checks (a
//! rejection's reveal must really mismatch), resolution results, extension
//! ticks and sizes, and checkpoint digests. A disagreement is a type error
//! naming the event (`transcript event <index>`) and the field.

use std::sync::Arc;

use gaos_json::{Value, canonical_json};

use super::SessionKernel;
use super::derive::Derived;
use super::ingest::{StoredReceipt, identity_key};
use super::resolve::RejectionRecord;
use crate::action::SubmittedAction;
use crate::audit::validate_timeout_audit;
use crate::commitment::{RevealCheck, SaltOwner};
use crate::error::KernelError;
use crate::event::{
    AttemptedReveal, CanonicalInput, EventBody, EventLog, ResolutionCause, ResolutionResult, SessionEvent,
    SessionHeader, SubmissionIdentity,
};
use crate::game::{CommandContext, TimeoutInput};
use crate::options::KernelOptions;
use crate::protocol::Intent;
use crate::receipt::{IngestReceipt, ReceiptStatus};
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
        kernel.replay_events(&events, TailRule::NonDecreasing)?;
        kernel.live.events = EventLog::from(events);
        Ok(kernel)
    }

    /// Re-apply `events` after the kernel's transition revision and set it
    /// to the last one seen. Event ids and host times are checked here.
    pub(super) fn replay_events(&mut self, events: &[SessionEvent], rule: TailRule) -> Result<(), KernelError> {
        let final_cursor =
            self.live.cursor + events.iter().filter(|e| matches!(e.body, EventBody::Resolution { .. })).count() as u64;
        let mut last_revision = self.live.transition_revision;
        let mut index_in_revision = 0usize;
        for (i, event) in events.iter().enumerate() {
            if event.transition_revision < last_revision || event.transition_revision == 0 {
                return Err(bad(i, "transition revisions must be positive and non-decreasing"));
            }
            if event.transition_revision != last_revision {
                if rule == TailRule::Contiguous && event.transition_revision != last_revision + 1 {
                    return Err(KernelError::checkpoint(
                        crate::error::CheckpointCode::Tail,
                        format!(
                            "tail event {i} has transition revision {}, but {} follows {last_revision}",
                            event.transition_revision,
                            last_revision + 1
                        ),
                    ));
                }
                index_in_revision = 0;
            } else if i == 0 && rule == TailRule::Contiguous {
                return Err(KernelError::checkpoint(
                    crate::error::CheckpointCode::Tail,
                    format!("the tail starts inside transition {last_revision}, which the checkpoint already holds"),
                ));
            }
            if !is_event_id(&event.event_id, &self.options.session_id, event.transition_revision, index_in_revision) {
                return Err(bad(i, format!("unexpected eventId {:?}", event.event_id)));
            }
            if event.host_time.is_some_and(|t| t as f64 > gaos_json::MAX_SAFE_INTEGER) {
                return Err(bad(i, "hostTime must be a non-negative safe integer"));
            }
            index_in_revision += 1;
            last_revision = event.transition_revision;
            let previous = i.checked_sub(1).map(|p| &events[p]);
            self.replay_event(i, event, previous, final_cursor)?;
            if let Some(chains) = &mut self.live.chains {
                chains.absorb(&self.options.session_id, &event.body);
            }
        }
        self.live.transition_revision = last_revision;
        Ok(())
    }

    /// Re-apply one event. `final_cursor` is the cursor after the whole
    /// transcript: a receipt that will have been evicted by then is not built.
    /// `previous` is the event before it (a timeout resolution's timeout).
    fn replay_event(
        &mut self,
        i: usize,
        event: &SessionEvent,
        previous: Option<&SessionEvent>,
        final_cursor: u64,
    ) -> Result<(), KernelError> {
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
            EventBody::Resolution { tick, cursor, cause, consumed, inputs, system_input, result } => {
                let resolution = RecordedResolution {
                    tick: *tick,
                    cursor: *cursor,
                    cause: *cause,
                    consumed,
                    inputs,
                    system_input: system_input.as_deref(),
                    result,
                };
                let timeout = previous.and_then(|p| match &p.body {
                    EventBody::Timeout { tick, timeout_id, participant_id, reason, timeout_policy_ref, .. } => {
                        let mut input = TimeoutInput::new(timeout_id, *tick, participant_id.as_deref(), reason);
                        input.timeout_policy_ref = timeout_policy_ref.clone();
                        Some(input)
                    }
                    _ => None,
                });
                self.replay_resolution(i, resolution, timeout.as_ref())
            }
            EventBody::Rejection {
                tick,
                participant_id,
                submission_id,
                commitment_id,
                attempted_reveal,
                canonical_command,
                cursor,
                ..
            } => {
                let rejected = RejectedReveal {
                    tick: *tick,
                    participant_id,
                    submission_id,
                    commitment_id: *commitment_id,
                    attempted: attempted_reveal,
                    canonical_command: canonical_command.as_deref(),
                    cursor: *cursor,
                };
                self.replay_rejection(i, event.transition_revision, rejected)
            }
            EventBody::Checkpoint { tick, digest } => self.replay_checkpoint(i, *tick, *digest),
            EventBody::Extension { tick, lane, record } => {
                if lane.is_empty() {
                    return Err(bad(i, "an extension needs a lane"));
                }
                if *tick != self.live.tick {
                    return Err(bad(i, format!("an extension at tick {tick}, not the open tick {}", self.live.tick)));
                }
                let bytes = canonical_json(&gaos_json::Value::Object(record.clone())).len() as u64;
                if bytes > self.limits.max_extension_bytes {
                    return Err(bad(i, format!("an extension record of {bytes} bytes, over maxExtensionBytes")));
                }
                Ok(())
            }
            // Audited as a whole before replay (`validate_timeout_audit`).
            EventBody::Timeout { .. } => Ok(()),
            EventBody::SeatSignature { tick, participant_id, client_time, prev_chain_hash, sig } => {
                let input = super::SeatSignatureInput {
                    participant_id: participant_id.clone(),
                    tick: *tick,
                    client_time: *client_time,
                    prev_chain_hash: prev_chain_hash.clone(),
                    sig: sig.clone(),
                };
                self.prepare_seat_signature(&input).map(drop).map_err(|e| bad(i, e.to_string()))
            }
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
        // A signed session's link is checked as at ingest: fields, head, signature.
        if self.is_signed() {
            self.check_chain_shape(intent.client_time.as_ref(), intent.prev_chain_hash.as_ref(), intent.sig.as_ref())
                .and_then(|()| {
                    self.check_chain_link(
                        &seat,
                        &intent.submission_id,
                        &canonical,
                        intent.client_time.as_ref(),
                        intent.prev_chain_hash.as_ref(),
                        intent.sig.as_ref(),
                    )
                })
                .map_err(|e| bad(i, e.to_string()))?;
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

    /// A resolution consumes exactly the window's intents, records exactly
    /// their frozen inputs (and, for a timeout, one system input), re-runs
    /// the commit–reveal bookkeeping and the reducer, and must reproduce the
    /// recorded result.
    fn replay_resolution(
        &mut self,
        i: usize,
        resolution: RecordedResolution<'_>,
        timeout: Option<&TimeoutInput>,
    ) -> Result<(), KernelError> {
        let RecordedResolution { tick, cursor, cause, consumed, inputs, system_input, result } = resolution;
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
        self.check_recorded_inputs(i, cause, consumed, inputs, system_input)?;
        if let (Some(timeout), Some(system)) = (timeout, inputs.last().filter(|_| cause == ResolutionCause::Timeout)) {
            self.check_system_input(i, timeout, system)?;
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
            if facts.status != result.status || facts.stars != result.stars || facts.actions_used != result.actions_used
            {
                let stars = |x: Option<f64>| x.map_or_else(|| "none".to_owned(), |x| Value::Number(x).to_string());
                return Err(bad(
                    i,
                    format!(
                        "the recorded result (status {}, stars {}, actionsUsed {}) differs from the re-simulated one \
                         (status {}, stars {}, actionsUsed {}): the game's code changed or it is not deterministic",
                        result.status,
                        stars(result.stars),
                        result.actions_used,
                        facts.status.as_str(),
                        stars(facts.stars),
                        facts.actions_used
                    ),
                ));
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

    /// The recorded inputs are what live resolution would have built from the
    /// consumed intents (ARCHITECTURE.md invariant 5): one user input per
    /// consumed identity, in the same order, with its `submissionId`,
    /// `canonicalCommand`, `cursor`, chain fields and frozen `action` (the seat filled in
    /// and, for a reveal, `verifiedPayload` set); then a timeout's system
    /// input and nothing else. The reducer runs on the recorded actions, so a
    /// transcript whose inputs were edited would otherwise replay a game
    /// nobody played.
    fn check_recorded_inputs(
        &self,
        i: usize,
        cause: ResolutionCause,
        consumed: &[SubmissionIdentity],
        inputs: &[CanonicalInput],
        system_input: Option<&CanonicalInput>,
    ) -> Result<(), KernelError> {
        let window = &self.live.window;
        let field =
            |k: usize, name: &str| bad(i, format!("resolution input {k}: `{name}` differs from the consumed intent"));
        for (k, identity) in consumed.iter().enumerate() {
            let Some(input) = inputs.get(k) else {
                return Err(bad(i, format!("resolution input {k}: missing for a consumed intent")));
            };
            let seat = &identity.participant_id;
            let intent = window.intents.get(seat).expect("consumed intents were checked against the window");
            if input.participant_id.as_ref() != Some(seat) {
                return Err(field(k, "participantId"));
            }
            if input.submission_id.as_ref() != Some(&intent.submission_id) {
                return Err(field(k, "submissionId"));
            }
            if input.canonical_command.as_deref() != Some(canonical_json(&intent.command).as_str()) {
                return Err(field(k, "canonicalCommand"));
            }
            if input.cursor != Some(window.revision) {
                return Err(field(k, "cursor"));
            }
            let chain = [
                ("clientTime", &input.client_time, &intent.client_time),
                ("prevChainHash", &input.prev_chain_hash, &intent.prev_chain_hash),
                ("sig", &input.sig, &intent.sig),
            ];
            if let Some((name, ..)) = chain.iter().find(|(_, recorded, accepted)| recorded != accepted) {
                return Err(field(k, name));
            }
            let mut frozen = self.live.window_actions.get(seat).cloned().unwrap_or_default();
            if frozen.seat.is_none() {
                frozen.seat = Some(seat.clone());
            }
            if let Some(reveal) = &frozen.reveal {
                frozen.verified_payload = Some(reveal.payload.clone());
            }
            if input.action != frozen {
                return Err(field(k, "action"));
            }
        }
        let system = &inputs[consumed.len().min(inputs.len())..];
        match (cause, system) {
            (_, []) if cause != ResolutionCause::Timeout => Ok(()),
            (ResolutionCause::Timeout, [last]) if last.submission_id.is_none() => {
                if system_input.is_some_and(|recorded| recorded != last) {
                    return Err(bad(i, "`systemInput` differs from the resolution's last input"));
                }
                Ok(())
            }
            _ => Err(bad(
                i,
                format!(
                    "resolution input {}: a {} resolution records only its consumed intents{}",
                    consumed.len(),
                    cause_name(cause),
                    if cause == ResolutionCause::Timeout { " and one system input" } else { "" }
                ),
            )),
        }
    }

    /// A timeout's system input carries no commitment fields and, when the
    /// session has a timeout mapper, is the mapper's action for the recorded
    /// timeout (its seat filled in, as live).
    fn check_system_input(&self, i: usize, timeout: &TimeoutInput, system: &CanonicalInput) -> Result<(), KernelError> {
        let action = &system.action;
        if action.commit.is_some() || action.reveal.is_some() || action.verified_payload.is_some() {
            return Err(bad(i, "the system input carries commit, reveal or verifiedPayload"));
        }
        let Some(mapped) = self.timeout_to_action(timeout) else {
            return Ok(());
        };
        let mut mapped = mapped.map_err(|e| bad(i, e))?;
        if mapped.seat.is_none() {
            mapped.seat = timeout.participant_id.clone();
        }
        if *action != mapped {
            return Err(bad(i, "the system input's `action` differs from the game's timeout mapping"));
        }
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
        let RejectedReveal { tick, participant_id, submission_id, commitment_id, attempted, canonical_command, cursor } =
            rejected;
        if tick != self.live.tick {
            return Err(bad(i, "a rejection must concern the open window"));
        }
        let Some(intent) = self.live.window.intents.get(participant_id).filter(|i| i.submission_id == submission_id)
        else {
            return Err(bad(i, "a rejection must concern an accepted intent of the open window"));
        };
        // The rejected reveal is the frozen action's, and it really does not
        // match its commitment (recomputed, like a resolution's reveals).
        let field = |name: &str| bad(i, format!("rejection `{name}` differs from the rejected intent"));
        if canonical_command.is_some_and(|recorded| recorded != canonical_json(&intent.command)) {
            return Err(field("canonicalCommand"));
        }
        if cursor.is_some_and(|recorded| recorded != self.live.window.revision) {
            return Err(field("cursor"));
        }
        let Some(reveal) = self.live.window_actions.get(participant_id).and_then(|a| a.reveal.as_ref()) else {
            return Err(bad(i, "a rejection must concern an intent that reveals"));
        };
        if reveal.commitment_id != commitment_id {
            return Err(field("commitmentId"));
        }
        if reveal.salt != attempted.salt || reveal.payload != attempted.payload {
            return Err(field("attemptedReveal"));
        }
        let check = self.live.commitments.view().check_reveal(
            &self.options.session_id,
            &participant_id.to_owned(),
            commitment_id,
            &reveal.salt,
            &reveal.payload,
        );
        match check {
            RevealCheck::Mismatch(_) | RevealCheck::Unhashable(_) => {}
            RevealCheck::Match(_) => return Err(bad(i, "the rejected reveal matches its commitment")),
            RevealCheck::Unknown | RevealCheck::AlreadyRevealed(_) => {
                return Err(bad(i, format!("{participant_id} rejects a reveal of an unknown commitment")));
            }
        }
        let salt = attempted.salt.as_str();
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
                    "checkpoint (tick {tick}, digest {digest}) differs from the rebuilt kernel (tick {}, digest {}): \
                     the seats' views differ, so the game's code changed or it is not deterministic",
                    self.live.tick,
                    self.digest()
                ),
            ));
        }
        self.live.last_checkpoint_tick = tick;
        Ok(())
    }
}

/// How the events re-applied after a kernel's revision must follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TailRule {
    /// A whole transcript: revisions never decrease.
    NonDecreasing,
    /// The tail after a checkpoint: each transition's revision is the one
    /// after the previous transition's (event ids contiguous after the
    /// watermark).
    Contiguous,
}

/// The fields of an `intent-accepted` event, as replayed.
struct AcceptedIntentEvent<'e> {
    tick: u64,
    revision: u64,
    intent: Intent,
    canonical_command: &'e str,
    action: Option<&'e SubmittedAction>,
}

fn cause_name(cause: ResolutionCause) -> &'static str {
    match cause {
        ResolutionCause::Complete => "complete",
        ResolutionCause::Timeout => "timeout",
        ResolutionCause::Tick => "tick",
    }
}

/// The fields of a `resolution` event, as replayed.
struct RecordedResolution<'e> {
    tick: u64,
    cursor: u64,
    cause: ResolutionCause,
    consumed: &'e [SubmissionIdentity],
    inputs: &'e [CanonicalInput],
    system_input: Option<&'e CanonicalInput>,
    result: &'e ResolutionResult,
}

/// The fields of a `rejection` event, as replayed.
struct RejectedReveal<'e> {
    tick: u64,
    participant_id: &'e str,
    submission_id: &'e str,
    commitment_id: u32,
    attempted: &'e AttemptedReveal,
    canonical_command: Option<&'e str>,
    cursor: Option<u64>,
}
