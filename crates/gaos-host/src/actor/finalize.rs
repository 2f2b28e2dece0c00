//! Finalize: once the game reached a terminal result, the session's result
//! (outcome, replay artifact, evaluation: `evaluation.rs`) is stored once and answered
//! byte for byte to every exact retry. The replay carries the session's
//! attach receipts in its header.

use gaos_json::{Map, Value, sha256_hex};
use gaos_kernel::{EventBody, SessionEvent};
use gaos_session::EXT_ATTACH;
use gaos_session::ErrorCode;
use gaos_session::receipts::ReceiptLinks;
use gaos_session::replay_receipts::replay_attach_extension;

use super::SessionActor;
use super::history::SessionRecord;
use crate::answers::{Answer, FINALIZE_KEY};
use crate::config::ReceiptMode;
use crate::error::HostError;
use crate::receipts::ReceiptIssuer;
use crate::requests::FinalizeRequest;
use crate::storage::{AnswerKind, SessionStatus, WriteOp};

/// Identity permutation covering every `Action N` id of `events`.
pub(super) fn identity_perm<'a>(events: impl IntoIterator<Item = &'a SessionEvent>) -> Vec<u64> {
    let mut max = 1u64;
    for event in events {
        if let EventBody::Resolution { inputs, .. } = &event.body {
            for input in inputs {
                if let Some(n) = input.action.id.strip_prefix("Action ").and_then(|n| n.parse::<u64>().ok()) {
                    max = max.max(n);
                }
            }
        }
    }
    (0..max).collect()
}

impl SessionActor {
    /// `GET /replay`: the replay artifact of a game that ended (history.rs).
    pub(super) async fn replay_text(&mut self) -> Result<String, HostError> {
        self.ensure_terminal_for_replay()?;
        Ok(self.session_record().await?.replay)
    }

    /// The replay header's `extensions`: the session's attach receipt chain
    /// under `gaos.session.attach` (`gaos_session::replay_receipts`), or
    /// nothing when it issued none, so such a replay's bytes are as before.
    /// Attach is refused once finalized, so the chain, and with it the
    /// finalized replay, cannot change afterwards.
    pub(super) fn replay_extensions(&self) -> Result<Option<Map>, HostError> {
        let links = match ReceiptIssuer::mode(self.config.receipts, self.config.policy.wants_attach_receipts()) {
            Some(ReceiptMode::Unlinked) => ReceiptLinks::Unlinked,
            Some(ReceiptMode::Chained) | None => ReceiptLinks::Chained,
        };
        let carried = replay_attach_extension(self.receipts.chain(), links)
            .map_err(|e| HostError::internal(format!("the receipt chain cannot be written into the replay: {e}")))?;
        Ok(carried.map(|ext| {
            let mut extensions = Map::new();
            extensions.insert(EXT_ATTACH.into(), ext);
            extensions
        }))
    }

    fn ensure_terminal_for_replay(&self) -> Result<(), HostError> {
        if !self.kernel.is_terminal() {
            return Err(HostError::new(
                ErrorCode::NotTerminal,
                "the replay exists once the game reached a terminal result",
            ));
        }
        Ok(())
    }

    /// `GET /result`: the result the first accepted finalize fixed, byte for
    /// byte, so a seat that did not finalize (or finalized with another
    /// request id, which `finalize` refuses) still reads it.
    pub(super) fn stored_result(&self) -> Result<Answer, HostError> {
        match self.answers.get(AnswerKind::Finalize, FINALIZE_KEY) {
            Some(stored) => Ok(Answer::replayed(stored)),
            None => Err(HostError::new(
                ErrorCode::NotFinalized,
                "the session has no result yet: once the game is over, any seat fixes it with POST /finalize",
            )),
        }
    }

    pub(super) async fn finalize(&mut self, finalize: FinalizeRequest) -> Result<Answer, HostError> {
        let request = finalize.fingerprint.as_str();
        if let Some(stored) = self.answers.get(AnswerKind::Finalize, FINALIZE_KEY) {
            if stored.request == request {
                return Ok(Answer::replayed(stored));
            }
            return Err(HostError::new(
                ErrorCode::FinalizeConflict,
                "the session was already finalized by a different request; retry with the original requestId and body",
            ));
        }
        if self.status == SessionStatus::Revoked {
            self.ensure_writable()?;
        }
        if !self.kernel.is_terminal() {
            return Err(HostError::new(ErrorCode::NotTerminal, "the game has not reached a terminal result yet"));
        }
        let SessionRecord { events, replay } = self.session_record().await?;
        let evaluation = self.evaluation(finalize.extensions.as_ref(), &replay, &events)?;
        let terminal = events.iter().rev().find_map(|e| match &e.body {
            EventBody::Resolution { result, .. } => Some(result.clone()),
            _ => None,
        });
        let mut outcome = Map::new();
        if let Some(result) = terminal {
            outcome.insert("status".into(), result.status.as_str().into());
            outcome.insert("stars".into(), result.stars.map_or(Value::Null, Value::Number));
            outcome.insert("actionsUsed".into(), result.actions_used.into());
        }
        if let Some(o) = self.kernel.full_view().get("outcome") {
            outcome.insert("outcome".into(), o.clone());
        }
        let mut result = Map::new();
        result.insert("sessionId".into(), self.id.clone().into());
        result.insert("status".into(), SessionStatus::Finalized.as_str().into());
        result.insert("outcome".into(), Value::Object(outcome));
        let replay_digest = sha256_hex(replay.as_bytes());
        let signatures = crate::signing::signature_report(&replay, &self.config.seats)?;
        if self.config.policy.includes_replay() {
            result.insert("replay".into(), replay.into());
        }
        let mut artifact = Map::new();
        artifact.insert("kind".into(), "replay".into());
        artifact.insert("digest".into(), replay_digest.into());
        artifact.insert("mediaType".into(), gaos_kernel::replay::MEDIA_TYPE.into());
        artifact.insert("uri".into(), format!("/v1/sessions/{}/replay", self.id).into());
        result.insert("artifacts".into(), Value::Array(vec![Value::Object(artifact)]));
        if let Some(evaluation) = evaluation {
            result.insert("evaluation".into(), evaluation);
        }
        let mut ext = Map::new();
        ext.insert("gaos.session.request".into(), Value::String(finalize.request_id.clone()));
        ext.insert(gaos_session::EXT_POLICY.into(), gaos_session::PolicyExtension::of(&self.config.policy).to_value());
        if let Some(metadata) = &finalize.metadata {
            ext.insert("gaos.session.metadata".into(), metadata.clone());
        }
        ext.insert(crate::signing::SIGNATURES_EXTENSION.into(), signatures);
        result.insert("extensions".into(), Value::Object(ext));
        let answer = Answer::json(200, &Value::Object(result));
        let op = self.answer_op(AnswerKind::Finalize, FINALIZE_KEY, request, &answer);
        let finalized = WriteOp::SetStatus { session_id: self.id.clone(), status: SessionStatus::Finalized };
        self.persist(vec![op.clone(), finalized]).await?;
        self.remember([op]);
        self.status = SessionStatus::Finalized;
        self.arm_timers();
        Ok(answer)
    }
}
