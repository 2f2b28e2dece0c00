//! Acts: the host's checks of a submission (seat, session, exact retry,
//! lease), then the kernel and the store, one act at a time or a batch of
//! acts that arrived together in one durable write.

use gaos_session::ErrorCode;
use std::sync::Arc;

use gaos_json::Value;
use gaos_kernel::{AnyState, Cadence, DeltaBody, EventBody, Prepared};

use super::SessionActor;
use super::act_words::SentAt;
use super::mailbox::{ActRequest, Reply};
use crate::answers::{Answer, fingerprint, seat_key};
use crate::envelope::{self, EXT_REJECTIONS, Finalization, Pending};
use crate::error::{HostError, from_kernel};
use crate::lease::{LeaseOp, Presented};
use crate::storage::{AnswerKind, StoredAnswer};

/// An act that passed the host's checks, ready for the kernel.
struct PendingAct {
    seat: String,
    submission: gaos_kernel::CommandSubmission,
    /// Where the seat said it acts, for the words of a refusal.
    sent: SentAt,
    key: Option<String>,
    request: String,
    stored: Option<StoredAnswer>,
}

enum ActStep {
    Answered(Answer),
    Submit(Box<PendingAct>),
}

impl SessionActor {
    pub(super) async fn act(&mut self, seat: &str, presented: &Presented, body: Value) -> Result<Answer, HostError> {
        match self.act_precheck(seat, presented, body).await? {
            ActStep::Answered(answer) => Ok(answer),
            ActStep::Submit(pending) => self.submit_one(*pending).await,
        }
    }

    /// Several acts that arrived together: checked one by one, then prepared
    /// as consecutive transitions of one kernel batch and made durable in one
    /// write (the ingests of a window and its resolution), exactly as if
    /// they had been handled one after the other.
    pub(super) async fn act_many(&mut self, acts: Vec<ActRequest>) {
        let mut pending: Vec<(PendingAct, Reply<Answer>)> = Vec::with_capacity(acts.len());
        for act in acts {
            match self.act_precheck(&act.seat, &act.presented, act.body).await {
                Ok(ActStep::Submit(p)) => pending.push((*p, act.reply)),
                Ok(ActStep::Answered(answer)) => {
                    let _ = act.reply.send(Ok(answer));
                }
                Err(e) => {
                    let _ = act.reply.send(Err(e));
                }
            }
        }
        if pending.len() == 1 {
            let (p, reply) = pending.pop().expect("one act");
            let answer = self.submit_one(p).await;
            let _ = reply.send(answer);
            return;
        }
        if pending.is_empty() {
            return;
        }
        let subs: Vec<gaos_kernel::CommandSubmission> = pending.iter().map(|(p, _)| p.submission.clone()).collect();
        let batch = match self.kernel.prepare_ingest_batch(&subs) {
            Ok(batch) => batch,
            Err(e) => {
                let error = match e {
                    e @ gaos_kernel::KernelError::Reducer { .. } => self.game_failed(e).await,
                    e => from_kernel(e),
                };
                for (_, reply) in pending {
                    let _ = reply.send(Err(error.clone()));
                }
                return;
            }
        };
        let resolving = batch.prepared.as_ref().is_some_and(|p| p.summary().is_some());
        let last_accepted =
            batch.outcomes.iter().rposition(|o| matches!(o, Ok(gaos_kernel::IngestOutcome::Accepted(_))));
        let mut ready: Vec<(Answer, Reply<Answer>)> = Vec::new();
        let mut later: Vec<(PendingAct, Reply<Answer>)> = Vec::new();
        let mut ops = Vec::new();
        for (i, ((p, reply), outcome)) in pending.into_iter().zip(batch.outcomes).enumerate() {
            match outcome {
                Err(e) => {
                    let _ = reply.send(Err(self.refused_act(e, &p.sent, &p.submission)));
                }
                Ok(gaos_kernel::IngestOutcome::Accepted(receipt)) => {
                    let answer = match (&batch.prepared, resolving && Some(i) == last_accepted) {
                        (Some(prepared), true) => self.resolved_answer_after(&p.seat, prepared),
                        _ => match self.pending_answer(&p.seat, &receipt) {
                            Ok(answer) => answer,
                            Err(e) => {
                                let _ = reply.send(Err(e));
                                continue;
                            }
                        },
                    };
                    let key = p.key.as_deref().expect("an accepted submission has an id");
                    ops.push(self.answer_op(AnswerKind::Act, key, &p.request, &answer));
                    ready.push((answer, reply));
                }
                // Exact retries and submissions after the resolution: the
                // one-by-one path, once the batch is committed.
                Ok(_) => later.push((p, reply)),
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
        for (p, reply) in later {
            let answer = self.submit_one(p).await;
            let _ = reply.send(answer);
        }
    }

    /// Checks of an act before the kernel sees it: seat and session of the
    /// submission, a stored answer for an exact retry, the lease.
    async fn act_precheck(&mut self, seat: &str, presented: &Presented, body: Value) -> Result<ActStep, HostError> {
        self.ensure_writable()?;
        self.require_seat_keys()?;
        let Some(map) = body.as_object() else {
            return Err(HostError::new(ErrorCode::InvalidSubmission, "a command submission must be a JSON object"));
        };
        match map.get("participantId") {
            Some(Value::String(p)) if p == seat => {}
            Some(Value::String(p)) => {
                return Err(HostError::forbidden(format!("this token acts for seat {seat:?}, not {p:?}")));
            }
            _ => {
                return Err(HostError::new(
                    ErrorCode::InvalidSubmission,
                    format!("participantId must be the token's seat {seat:?}"),
                ));
            }
        }
        if map.get("sessionId").and_then(Value::as_str) != Some(self.id.as_str()) {
            return Err(HostError::new(
                ErrorCode::WrongSession,
                format!("the submission's sessionId must be {:?} (the session in the URL)", self.id),
            ));
        }
        let submission_id = map.get("submissionId").and_then(Value::as_str).map(str::to_owned);
        let request = fingerprint(&body);
        let key = submission_id.as_deref().map(|id| seat_key(seat, id));
        // Only identities the kernel accepted before can have a stored answer.
        // (An earlier level of a run had its own kernel: ask the store.)
        let accepted_before =
            submission_id.as_deref().is_some_and(|id| self.kernel.was_accepted(seat, id) || self.has_earlier_levels());
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
        let submission = gaos_kernel::CommandSubmission::from_value(&body).map_err(|e| from_kernel(e.into()))?;
        let sent = SentAt::of(&submission);
        let submission = self.level_submission(submission)?;
        Ok(ActStep::Submit(Box::new(PendingAct { seat: seat.to_owned(), submission, sent, key, request, stored })))
    }

    /// The pending (or, with nobody awaited, resolved) answer to an accepted
    /// ingest that did not resolve its window.
    fn pending_answer(&self, seat: &str, receipt: &gaos_kernel::IngestReceipt) -> Result<Answer, HostError> {
        let view = self.kernel.observe(seat).map_err(from_kernel)?;
        let done = self.kernel.is_terminal();
        let tick = self.seat_observation(seat, &view, false, done);
        let ext = envelope::base_extensions(&self.episode_mark(), &self.finalization());
        Ok(if receipt.awaiting_participants.is_empty() {
            Answer::json(200, &envelope::envelope(&self.id, self.revision(), tick, None, ext))
        } else {
            let pending = Pending {
                submitted: receipt.submitted_participants.clone(),
                awaiting: receipt.awaiting_participants.clone(),
                accepted: Some(seat.to_owned()),
            };
            Answer::json(202, &envelope::envelope(&self.id, self.revision(), tick, Some(pending), ext))
        })
    }

    /// One checked act through the kernel and the store.
    async fn submit_one(&mut self, act: PendingAct) -> Result<Answer, HostError> {
        let PendingAct { seat, submission, sent, key, request, stored } = act;
        let seat = seat.as_str();
        let prepared = match self.kernel.prepare_ingest_and_resolve(&submission) {
            Ok(p) => p,
            Err(e @ gaos_kernel::KernelError::Reducer { .. }) => return Err(self.game_failed(e).await),
            Err(e) => return Err(self.refused_act(e, &sent, &submission)),
        };
        if prepared.is_noop() {
            // An exact retry whose answer was not stored: the completing ingest
            // was persisted but its resolution (which carries the answer) was
            // not, after a crash or a storage failure. Resolve the window now if
            // that is still owed, and store the answer given now, so every
            // later retry gets these bytes.
            let mut prepared = prepared;
            self.kernel
                .commit(&mut prepared)
                .map_err(|e| HostError::internal(format!("completing a no-op transition failed: {e}")))?;
            self.resolve_ready_window().await;
            let turns = self.config.cadence == Cadence::Turns;
            if turns && self.kernel.window().is_complete() && !self.kernel.is_terminal() {
                return Err(HostError::unavailable("the complete window could not be resolved yet; retry"));
            }
            // Answered before (to the first copy, or to a retry that differed
            // only in fields the kernel ignores): keep the first answer.
            let stored = match (stored, &key) {
                (Some(stored), _) => Some(stored),
                (None, Some(key)) => self.stored_act_answer(key).await,
                (None, None) => None,
            };
            if let Some(stored) = stored {
                return Ok(Answer { status: stored.status, body: stored.body });
            }
            let answer = self
                .observe(Some(seat))
                .map(|a| if a.status == 202 { a } else { Answer { status: 200, body: a.body } })?;
            if let Some(key) = key {
                let op = self.answer_op(AnswerKind::Act, &key, &request, &answer);
                self.persist(vec![op.clone()]).await?;
                self.remember([op]);
            }
            return Ok(answer);
        }
        let receipt = prepared.receipt().cloned().expect("ingest yields a receipt");
        let key = key.expect("an accepted submission has an id");
        // An ingest that completed a turns window carries its resolution: one
        // durable write holds both transitions and the answer.
        let answer = if prepared.summary().is_some() {
            self.resolved_answer_after(seat, &prepared)
        } else {
            self.pending_answer(seat, &receipt)?
        };
        let op = self.answer_op(AnswerKind::Act, &key, &request, &answer);
        let mut ops = vec![op.clone()];
        ops.extend(self.lease_op_if_due());
        self.run_transition(prepared, ops).await?;
        self.remember([op]);
        Ok(answer)
    }

    /// The resolved envelope `seat` will see once `advance` commits.
    fn resolved_answer_after(&self, seat: &str, advance: &Prepared<AnyState>) -> Answer {
        let summary = advance.summary().expect("advance yields a summary");
        let current = self.kernel.observe(seat).map(|v| (*v).clone()).unwrap_or_default();
        let view = advance
            .deltas()
            .iter()
            .rev()
            .find(|d| d.seat == seat)
            .and_then(|d| match &d.body {
                DeltaBody::Snapshot { view } => Some((**view).clone()),
                DeltaBody::Unchanged => None,
            })
            .unwrap_or(current);
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
            return Answer::json(200, &next);
        }
        let finalization = if done { Finalization::Terminal } else { Finalization::Live };
        let mut ext = envelope::base_extensions(&self.episode_mark(), &finalization);
        ext.extend(notices_ext);
        let tick = self.seat_observation(seat, &view, true, done);
        Answer::json(200, &envelope::envelope(&self.id, self.revision_at(summary.cursor), tick, None, ext))
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
