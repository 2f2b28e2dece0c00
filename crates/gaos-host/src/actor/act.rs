//! Acts: the host's checks of a submission (seat, session, exact retry,
//! lease), then the kernel and the store. One path serves one act and the
//! acts that arrived together (`SessionActor::act`): one kernel batch, one
//! durable write, each caller its own answer.

use gaos_session::ErrorCode;
use std::sync::Arc;

use gaos_json::Value;
use gaos_kernel::{AnyState, Cadence, CommandSubmission, DeltaBody, EventBody, IngestOutcome, KernelError, Prepared};

use super::SessionActor;
use super::act_words::SentAt;
use super::mailbox::{ActCall, Reply};
use crate::answers::{Answer, seat_key};
use crate::envelope::{self, EXT_REJECTIONS, Finalization, Pending};
use crate::error::{HostError, from_kernel};
use crate::lease::{LeaseOp, Presented};
use crate::requests::ActRequest;
use crate::storage::{AnswerKind, StoredAnswer};

/// An act that passed the host's checks, ready for the kernel (its
/// submission travels beside it, so a batch hands the kernel a slice).
struct CheckedAct {
    seat: String,
    /// Where the seat said it acts, for the words of a refusal.
    sent: SentAt,
    key: Option<String>,
    request: String,
    stored: Option<StoredAnswer>,
    /// The command's canonical JSON, written when the request was read.
    canonical_command: Option<String>,
}

type PendingAct = (CheckedAct, Reply<Answer>);

enum ActStep {
    Answered(Answer),
    Submit(Box<(CheckedAct, CommandSubmission)>),
}

impl SessionActor {
    /// Every act goes through here, one or several: acts that arrived
    /// together are checked one by one (seat, session, exact retry, lease),
    /// then prepared as consecutive transitions of one kernel batch and made
    /// durable in one write (the ingests of a window and its resolution),
    /// exactly as if they had been handled one after the other; each caller
    /// gets its own answer.
    pub(super) async fn act(&mut self, calls: Vec<ActCall>) {
        let mut pending = Vec::with_capacity(calls.len());
        let mut submissions = Vec::with_capacity(calls.len());
        for call in calls {
            match self.act_precheck(&call.seat, &call.presented, call.request).await {
                Ok(ActStep::Submit(checked)) => {
                    let (act, submission) = *checked;
                    pending.push((act, call.reply));
                    submissions.push(submission);
                }
                Ok(ActStep::Answered(answer)) => {
                    let _ = call.reply.send(Ok(answer));
                }
                Err(e) => {
                    let _ = call.reply.send(Err(e));
                }
            }
        }
        let later = self.submit(pending, submissions).await;
        // Exact retries in a batch of several, and submissions after the
        // resolution it completed: one at a time, once the batch is committed.
        for (act, submission) in later {
            let rest = self.submit(vec![act], vec![submission]).await;
            debug_assert!(rest.is_empty(), "a lone submission is always answered");
        }
    }

    /// Checked acts through the kernel and the store. Returns the acts to
    /// submit again once this batch is committed (only from a batch of
    /// several: a lone exact retry is answered here).
    async fn submit(
        &mut self,
        pending: Vec<PendingAct>,
        submissions: Vec<CommandSubmission>,
    ) -> Vec<(PendingAct, CommandSubmission)> {
        if pending.is_empty() {
            return Vec::new();
        }
        let alone = pending.len() == 1;
        let canonical: Vec<Option<&str>> = pending.iter().map(|(act, _)| act.canonical_command.as_deref()).collect();
        let batch = match self.kernel.prepare_ingest_batch_canonical(&submissions, &canonical) {
            Ok(batch) => batch,
            Err(e @ KernelError::Reducer { .. }) => {
                let error = self.game_failed(e).await;
                for (_, reply) in pending {
                    let _ = reply.send(Err(error.clone()));
                }
                return Vec::new();
            }
            Err(e) => {
                for ((act, reply), submission) in pending.into_iter().zip(&submissions) {
                    let _ = reply.send(Err(self.refused_act(e.clone(), &act.sent, submission)));
                }
                return Vec::new();
            }
        };
        let resolving = batch.prepared.as_ref().is_some_and(|p| p.summary().is_some());
        let last_accepted = batch.outcomes.iter().rposition(|o| matches!(o, Ok(IngestOutcome::Accepted(_))));
        let mut ready: Vec<(Answer, Reply<Answer>)> = Vec::new();
        let mut later = Vec::new();
        let mut ops = Vec::new();
        for (i, (((act, reply), submission), outcome)) in
            pending.into_iter().zip(submissions).zip(batch.outcomes).enumerate()
        {
            match outcome {
                Err(e @ KernelError::Reducer { .. }) => {
                    let error = self.game_failed(e).await;
                    let _ = reply.send(Err(error));
                }
                Err(e) => {
                    let _ = reply.send(Err(self.refused_act(e, &act.sent, &submission)));
                }
                Ok(IngestOutcome::Accepted(receipt)) => {
                    let answer = match (&batch.prepared, resolving && Some(i) == last_accepted) {
                        (Some(prepared), true) => self.resolved_answer_after(&act.seat, prepared),
                        _ => match self.pending_answer(&act.seat, &receipt) {
                            Ok(answer) => answer,
                            Err(e) => {
                                let _ = reply.send(Err(e));
                                continue;
                            }
                        },
                    };
                    let key = act.key.as_deref().expect("an accepted submission has an id");
                    ops.push(self.answer_op(AnswerKind::Act, key, &act.request, &answer));
                    ready.push((answer, reply));
                }
                Ok(IngestOutcome::Duplicate(_)) if alone => {
                    let answer = self.answer_exact_retry(&act).await;
                    let _ = reply.send(answer);
                }
                // Exact retries and submissions after the resolution, once
                // the batch is committed.
                Ok(_) => later.push(((act, reply), submission)),
            }
        }
        if let Some(prepared) = batch.prepared {
            let mut writes = ops.clone();
            writes.extend(self.lease_op_if_due());
            match self.run_transition(prepared, writes).await {
                Ok(_) => {
                    self.remember(ops);
                    for (answer, reply) in ready {
                        let _ = reply.send(Ok(answer));
                    }
                }
                Err(e) => {
                    for (_, reply) in ready {
                        let _ = reply.send(Err(e.clone()));
                    }
                }
            }
        }
        later
    }

    /// An exact retry the kernel answered from its receipt whose answer
    /// was not stored: the completing ingest was persisted but its
    /// resolution (which carries the answer) was not, after a crash or a
    /// storage failure. Resolve the window now if that is still owed, and
    /// store the answer given now, so every later retry gets these bytes.
    async fn answer_exact_retry(&mut self, act: &CheckedAct) -> Result<Answer, HostError> {
        self.resolve_ready_window().await;
        let turns = self.config.cadence == Cadence::Turns;
        if turns && self.kernel.window().is_complete() && !self.kernel.is_terminal() {
            return Err(HostError::unavailable("the complete window could not be resolved yet; retry"));
        }
        // Answered before (to the first copy, or to a retry that differed
        // only in fields the kernel ignores): keep the first answer.
        let stored = match (&act.stored, &act.key) {
            (Some(stored), _) => Some(stored.clone()),
            (None, Some(key)) => self.stored_act_answer(key).await,
            (None, None) => None,
        };
        if let Some(stored) = stored {
            return Ok(Answer { status: stored.status, body: stored.body });
        }
        let answer = self
            .observe(Some(&act.seat))
            .map(|a| if a.status == 202 { a } else { Answer { status: 200, body: a.body } })?;
        if let Some(key) = &act.key {
            let op = self.answer_op(AnswerKind::Act, key, &act.request, &answer);
            self.persist(vec![op.clone()]).await?;
            self.remember([op]);
        }
        Ok(answer)
    }

    /// Checks of an act before the kernel sees it: seat and session of the
    /// submission, a stored answer for an exact retry, the lease.
    async fn act_precheck(&mut self, seat: &str, presented: &Presented, act: ActRequest) -> Result<ActStep, HostError> {
        self.ensure_writable()?;
        self.require_seat_keys()?;
        let ActRequest { submission, names_participant, fingerprint: request, canonical_command } = act;
        let Some(submission) = submission else {
            return Err(HostError::new(ErrorCode::InvalidSubmission, "a command submission must be a JSON object"));
        };
        match submission.participant_id.as_str() {
            p if names_participant && p == seat => {}
            p if names_participant => {
                return Err(HostError::forbidden(format!("this token acts for seat {seat:?}, not {p:?}")));
            }
            _ => {
                return Err(HostError::new(
                    ErrorCode::InvalidSubmission,
                    format!("participantId must be the token's seat {seat:?}"),
                ));
            }
        }
        // The lenient submission reads a missing or mistyped sessionId as
        // "", which names no session.
        if submission.session_id != self.id {
            return Err(HostError::new(
                ErrorCode::WrongSession,
                format!("the submission's sessionId must be {:?} (the session in the URL)", self.id),
            ));
        }
        let key = submission.submission_id.as_deref().map(|id| seat_key(seat, id));
        // Only identities the kernel accepted before can have a stored answer.
        // (An earlier level of a run had its own kernel: ask the store.)
        let accepted_before = submission
            .submission_id
            .as_deref()
            .is_some_and(|id| self.kernel.was_accepted(seat, id) || self.has_earlier_levels());
        let stored = match &key {
            Some(key) if accepted_before => self.stored_act_answer(key).await,
            _ => None,
        };
        if let Some(stored) = &stored
            && stored.request == request
        {
            return Ok(ActStep::Answered(Answer::replayed(stored)));
        }
        // The lease decides first: a refused dispatch is never registered.
        self.dispatch_lease(seat, presented, LeaseOp::Act).await?;
        let sent = SentAt::of(&submission);
        let submission = self.level_submission(submission)?;
        let act = CheckedAct { seat: seat.to_owned(), sent, key, request, stored, canonical_command };
        Ok(ActStep::Submit(Box::new((act, submission))))
    }

    /// The pending (or, with nobody awaited, resolved) answer to an accepted
    /// ingest that did not resolve its window.
    fn pending_answer(&self, seat: &str, receipt: &gaos_kernel::IngestReceipt) -> Result<Answer, HostError> {
        let view = self.kernel.observe(seat).map_err(from_kernel)?;
        let done = self.kernel.is_terminal();
        let tick = self.seat_observation(seat, &view, false, done);
        let ext = envelope::base_extensions(&self.episode_mark(), &self.finalization());
        Ok(if receipt.awaiting_participants.is_empty() {
            Answer::of(200, &envelope::envelope(&self.id, self.revision(), tick, None, ext))
        } else {
            let pending = Pending {
                submitted: receipt.submitted_participants.clone(),
                awaiting: receipt.awaiting_participants.clone(),
                accepted: Some(seat.to_owned()),
            };
            Answer::of(202, &envelope::envelope(&self.id, self.revision(), tick, Some(pending), ext))
        })
    }

    /// The resolved envelope `seat` will see once `advance` commits.
    fn resolved_answer_after(&self, seat: &str, advance: &Prepared<AnyState>) -> Answer {
        let summary = advance.summary().expect("advance yields a summary");
        // The seat's view after the advance: its snapshot delta, or the
        // current view when the advance left it unchanged (borrowed, not
        // copied: the envelope's observation copies it once).
        let snapshot = advance.deltas().iter().rev().find(|d| d.seat == seat).and_then(|d| match &d.body {
            DeltaBody::Snapshot { view } => Some(Arc::clone(view)),
            DeltaBody::Unchanged => None,
        });
        let view = snapshot.or_else(|| self.kernel.observe(seat).ok()).unwrap_or_default();
        let status = advance.events().iter().rev().find_map(|e| match &e.body {
            EventBody::Resolution { result, .. } => Some(result.status),
            _ => None,
        });
        let done = match &status {
            Some(s) => s.is_terminal(),
            None => self.kernel.is_terminal(),
        };
        let mut notices_ext = gaos_json::Map::new();
        let notices: Vec<Value> = summary
            .rejections
            .iter()
            .filter(|n| n.seat == seat)
            .map(|n| gaos_json::to_value(n).expect("notice is JSON"))
            .collect();
        if !notices.is_empty() {
            notices_ext.insert(EXT_REJECTIONS.into(), Value::Array(notices));
        }
        // A level of a run that ends into the next one is answered with the
        // next level's first envelope: the run goes on (episodes.rs).
        if done
            && let Some(status) = &status
            && let Some(next) = self.next_level_envelope(seat, *status, summary.cursor, notices_ext.clone())
        {
            return Answer::of(200, &next);
        }
        let finalization = if done { Finalization::Terminal } else { Finalization::Live };
        // The level's end as this resolution makes it (the kernel has not
        // committed it yet): an answer that ends a level of a run that
        // advances on reset says a reset is awaited, as the next tick will.
        let ended = if done { status.or_else(|| self.live_level_ended()) } else { None };
        let mut ext = envelope::base_extensions(&self.episode_mark_ended(ended), &finalization);
        ext.extend(notices_ext);
        let tick = self.seat_observation(seat, &view, true, done);
        Answer::of(200, &envelope::envelope(&self.id, self.revision_at(summary.cursor), tick, None, ext))
    }

    /// A stored act answer: from memory, or from the store when older
    /// answers were evicted (or the session was rehydrated).
    async fn stored_act_answer(&mut self, key: &str) -> Option<StoredAnswer> {
        if let Some(answer) = self.answers.get(AnswerKind::Act, key) {
            return Some(answer.clone());
        }
        if !self.answers.acts_in_store() {
            return None;
        }
        let reader = Arc::clone(&self.reader);
        let (id, key) = (self.id.clone(), key.to_owned());
        tokio::task::spawn_blocking(move || reader.load_answer(&id, AnswerKind::Act, &key)).await.ok()?.ok()?
    }
}
