//! Attach: a seat (re)joins at the durable head, takes or keeps its
//! controller lease, and gets an attach receipt when the session issues them;
//! and the receipt chain (`GET /receipts`).

use gaos_json::{Map, Value, canonical_json};
use gaos_session::ErrorCode;

use super::SessionActor;
use crate::answers::{Answer, seat_key};
use crate::auth::token_hash;
use crate::envelope::{self, EXT_ATTACH, EXT_LEASE};
use crate::error::{HostError, from_kernel};
use crate::host_key::{seal, unseal_attach};
use crate::lease::{LeaseError, Presented};
use crate::receipts::{ReceiptFacts, ReceiptIssuer};
use crate::requests::AttachRequest;
use crate::storage::{AnswerKind, SessionStateKey, SessionStatus, WriteOp};
use crate::wire;

impl SessionActor {
    /// `GET /receipts`: `{"sessionId", "receipts"}`, every receipt issued so
    /// far, oldest first, so a seat can check the chain before finalize (the
    /// finalized replay carries the same chain).
    pub(super) fn receipt_chain(&self) -> Result<Value, HostError> {
        let receipts = self.receipts.chain().iter().map(|r| r.to_value()).collect::<Result<Vec<_>, _>>();
        let receipts = receipts.map_err(|e| HostError::internal(format!("a stored receipt is not JSON: {e}")))?;
        let mut answer = Map::new();
        answer.insert("sessionId".into(), self.id.clone().into());
        answer.insert("receipts".into(), Value::Array(receipts));
        Ok(Value::Object(answer))
    }

    pub(super) async fn attach(
        &mut self,
        seat: &str,
        presented: &Presented,
        attach: AttachRequest,
    ) -> Result<Answer, HostError> {
        if attach.participant_id.as_ref().is_some_and(|named| named != seat) {
            return Err(HostError::forbidden(format!("this token attaches seat {seat:?} only")));
        }
        if self.status == SessionStatus::Finalized {
            return Err(HostError::new(ErrorCode::SessionFinalized, "a finalized session cannot be attached"));
        }
        self.ensure_writable()?;
        if !self.config.policy.attachable() {
            return Err(HostError::new(ErrorCode::NotAttachable, "this session's policy says it is not attachable"));
        }
        let request_id = attach.request_id.as_str();
        let request = attach.fingerprint.as_str();
        let key = seat_key(seat, request_id);
        let controller = attach.controller_value();
        if let Some(stored) = self.answers.get(AnswerKind::Attach, &key) {
            let stored_revision = gaos_json::parse(&stored.body)
                .ok()
                .and_then(|b| b.get("binding").and_then(|x| x.get("revision")).and_then(Value::as_u64));
            if stored.request == request && stored_revision == Some(self.revision()) {
                let body = unseal_attach(&stored.body, &self.host_key, &self.id, seat, request_id)
                    .map_err(HostError::internal)?;
                return Ok(Answer { status: stored.status, body });
            }
            return Err(HostError::new(
                ErrorCode::AttachRequestReused,
                format!("attach request {request_id:?} was already used at another revision or with another body"),
            ));
        }
        if let (Some(pinned), Some(controller)) = (&self.pinned_controller, &controller)
            && canonical_json(pinned) != canonical_json(controller)
        {
            return Err(HostError::new(
                ErrorCode::ControllerMismatch,
                "the attach controller differs from the session's pinned controller identity",
            ));
        }
        // A seat key to register is checked before anything changes.
        let registration = self.seat_key_to_register(seat, attach.seat_key.as_ref())?;
        // Claims: a lease-aware attach (with `lease`) takes the seat, refused
        // while another claim is live; a lease-unaware attach takes a claim
        // only when the seat has none, and otherwise acts under the current one.
        let lease_request = attach.lease.as_ref();
        let duration_ms = self.lease_duration(lease_request)?;
        self.expire_leases().await;
        let now = self.clock.now_ms();
        let mut lease_token = None;
        let current = self.leases.seats.get(seat).and_then(|l| l.current.as_ref());
        // Fencing: an attach that carries an older epoch than the seat's is refused.
        if let (Some(sent), Some(claim)) = (presented.epoch, current)
            && sent < claim.epoch
        {
            return Err(HostError::from(LeaseError::WriterConflict {
                seat: seat.to_owned(),
                holder_id: Some(claim.holder_id.clone()),
                epoch: claim.epoch,
            }));
        }
        let has_claim = current.is_some();
        if lease_request.is_some() || !has_claim {
            let holder = match &attach.controller {
                Some(controller) => controller.id.clone(),
                None => format!("attach:{request_id}"),
            };
            let token = self.host_key.attach_lease_token(&self.id, seat, request_id);
            let granted = self.leases.claim(seat, &holder, &token_hash(&token), duration_ms, now)?;
            self.record_lease_events(granted.events).await?;
            self.arm_timers();
            lease_token = Some(token);
        }
        // A claim was just taken when a token was issued, so the token is
        // never left without its claim.
        let lease_ext =
            self.leases.seats.get(seat).and_then(|l| l.current.as_ref()).map(|claim| wire::LeaseExtension {
                token: lease_token,
                epoch: claim.epoch,
                expires_at: claim.expires_at,
                duration_ms: claim.duration_ms,
            });
        let receipt_mode = ReceiptIssuer::mode(self.config.receipts, self.config.policy.wants_attach_receipts());
        let revision = self.revision();
        let mut ext = envelope::base_extensions(&self.episode_mark(), &self.finalization());
        let mut result = Map::new();
        result.insert("sessionId".into(), self.id.clone().into());
        let done = self.kernel.is_terminal();
        let view = self.kernel.observe(seat).map_err(from_kernel)?;
        let submitted = self.kernel.window().intents.contains_key(seat);
        result.insert("tick".into(), self.seat_observation(seat, &view, !submitted, done));
        result.insert("binding".into(), envelope::binding(&self.id, revision, seat));
        let mut issued = None;
        if let Some(mode) = receipt_mode {
            let facts = ReceiptFacts {
                session_id: &self.id,
                request_id,
                revision,
                // Keyed: both preimages hold what this seat may not see
                // (other seats' views, their pending intents).
                transcript_digest: self.transcript.keyed_digest(&self.digest_key),
                state_digest: self.digest_key.mac_hex(self.kernel.attach_state_preimage().as_bytes()),
                controller: controller.as_ref().and_then(|c| c.as_object().cloned()),
                attached_at_ms: now,
            };
            let receipt = self.receipts.issue(mode, facts).map_err(HostError::internal)?;
            let mut att = Map::new();
            att.insert("receiptDigest".into(), receipt.receipt_digest.clone().into());
            att.insert("sequence".into(), self.receipts.next_sequence().into());
            ext.insert(EXT_ATTACH.into(), Value::Object(att));
            result.insert("receipt".into(), receipt.to_value().map_err(|e| HostError::internal(e.to_string()))?);
            issued = Some(receipt);
        }
        if let Some(lease_ext) = lease_ext {
            ext.insert(EXT_LEASE.into(), wire::value(&lease_ext));
        }
        result.insert("extensions".into(), Value::Object(ext));
        let answer = Answer::json(200, &Value::Object(result.clone()));
        // Stored without the lease token; an exact retry re-derives it.
        let stored = Answer { status: answer.status, body: seal(&Value::Object(result.clone())) };
        let mut ops = vec![self.answer_op(AnswerKind::Attach, &key, request, &stored), self.lease_op()];
        if let Some(seat_key) = registration {
            ops.push(self.register_seat_key(seat_key)?);
        }
        if self.pinned_controller.is_none()
            && let Some(controller) = &controller
        {
            ops.push(WriteOp::SessionState {
                session_id: self.id.clone(),
                key: SessionStateKey::Controller,
                value: canonical_json(controller),
            });
        }
        self.persist(ops.clone()).await?;
        self.remember(ops);
        if self.pinned_controller.is_none() {
            self.pinned_controller = controller;
        }
        if let Some(receipt) = issued {
            self.receipts.record(receipt);
        }
        Ok(answer)
    }
}
