//! Idempotent create (issue 15, item 6): an operator's create may carry a
//! `requestId`; an exact retry (same id, same canonical body) gets the
//! byte-identical answer, also after a restart, and another body under the
//! same id is `409 create_request_reused`.
//!
//! Two stored rows, both without a secret (their tokens are sealed and
//! re-derived from the host key, `host_key.rs`):
//! - the *request* row, written in the create's own batch (atomic with the
//!   session): under the empty session id (a host-level answer), kind
//!   `create`, key the request id; it holds the body's fingerprint, the
//!   session id and the answer's extensions;
//! - the *answer* row, written once the creator's envelope is built: under
//!   the session, kind `create`, key the request id.
//!
//! A crash between the two leaves the request row only: the retry then
//! builds the creator's envelope again from the session (same tokens, same
//! claim) and stores it, so the one who asked still gets the tokens.

use gaos_session::ErrorCode;
use std::sync::Arc;

use gaos_json::{Map, Value};

use super::{Host, blocking, store_error};
use crate::actor::Command;
use crate::answers::Answer;
use crate::error::HostError;
use crate::host_key::{seal, unseal_create};
use crate::requests::CreateRequest;
use crate::storage::{AnswerKind, StoredAnswer, WriteBatch, WriteOp};

/// Host-level answers (not of one session) are stored under this session id.
const HOST_LEVEL: &str = "";

/// The `requestId` of a create, with its body's fingerprint.
pub(crate) struct CreateRequestId {
    id: String,
    fingerprint: String,
}

impl CreateRequestId {
    /// The create's `requestId`, if it has one.
    pub(crate) fn of(request: &CreateRequest) -> Option<CreateRequestId> {
        let id = request.request_id.clone()?;
        Some(CreateRequestId { id, fingerprint: request.fingerprint.clone() })
    }

    /// The request row, for the create's batch.
    pub(crate) fn request_row(&self, session_id: &str, extensions: &Map) -> WriteOp {
        let mut row = Map::new();
        row.insert("sessionId".into(), session_id.into());
        row.insert("extensions".into(), Value::Object(extensions.clone()));
        WriteOp::Answer(StoredAnswer {
            session_id: HOST_LEVEL.into(),
            kind: AnswerKind::Create,
            key: self.id.clone(),
            status: 201,
            request: self.fingerprint.clone(),
            body: seal(&Value::Object(row)),
        })
    }

    fn answer_row(&self, session_id: &str, answer: &Answer) -> Result<WriteOp, HostError> {
        let value = gaos_json::parse(&answer.body).map_err(|e| HostError::internal(e.to_string()))?;
        Ok(WriteOp::Answer(StoredAnswer {
            session_id: session_id.into(),
            kind: AnswerKind::Create,
            key: self.id.clone(),
            status: answer.status,
            request: self.fingerprint.clone(),
            body: seal(&value),
        }))
    }
}

impl Host {
    async fn stored(&self, session_id: &str, key: &str) -> Result<Option<StoredAnswer>, HostError> {
        let reader = Arc::clone(&self.inner.reader);
        let (session_id, key) = (session_id.to_owned(), key.to_owned());
        blocking(move || reader.load_answer(&session_id, AnswerKind::Create, &key)).await
    }

    /// The answer an earlier create with this request id gave (or, after a
    /// crash before it was stored, gives now); `None` for a new request id.
    pub(crate) async fn replay_create(&self, request: &CreateRequestId) -> Result<Option<Answer>, HostError> {
        let Some(row) = self.stored(HOST_LEVEL, &request.id).await? else { return Ok(None) };
        if row.request != request.fingerprint {
            return Err(HostError::new(
                ErrorCode::CreateRequestReused,
                format!("create request {:?} was already used with another body", request.id),
            ));
        }
        let key = &self.inner.options.host_key;
        let unsealed = gaos_json::parse(&unseal_create(&row.body, key).map_err(HostError::internal)?)
            .map_err(|e| HostError::internal(e.to_string()))?;
        let session_id = unsealed.get("sessionId").and_then(Value::as_str).unwrap_or_default().to_owned();
        if let Some(answer) = self.stored(&session_id, &request.id).await? {
            let body = unseal_create(&answer.body, key).map_err(HostError::internal)?;
            return Ok(Some(Answer { status: answer.status, body }));
        }
        // The session was made durable, its answer was not: build it again.
        let extensions = match unsealed.get("extensions") {
            Some(Value::Object(ext)) => ext.clone(),
            _ => return Err(HostError::internal("a stored create request has no extensions")),
        };
        let handle = self.session(&session_id).await?;
        let answer = handle.ask(|reply| Command::CreatorEnvelope { extensions, reply }).await?;
        self.store_create_answer(request, &session_id, &answer).await?;
        Ok(Some(answer))
    }

    /// Keep the answer of a create with a request id (sealed).
    pub(crate) async fn store_create_answer(
        &self,
        request: &CreateRequestId,
        session_id: &str,
        answer: &Answer,
    ) -> Result<(), HostError> {
        let ops = vec![request.answer_row(session_id, answer)?];
        self.inner.writer.write(WriteBatch::of(ops)).await.map_err(store_error)
    }
}
