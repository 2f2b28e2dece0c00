//! The persist funnel: every durable write of a session goes through
//! [`SessionActor::persist`], with one error policy and the session's fence.
//!
//! - The batch carries the actor's [`Fence`] (owner and epoch): a store that
//!   serves many hosts refuses it once another host took the session over.
//! - A refused or failed write is a [`HostError`] the caller answers
//!   (`unavailable` for a storage failure, `fenced` when the session moved,
//!   `internal` for a conflict with what is stored).
//! - After a failed write the actor no longer knows what is stored: a
//!   failure may have been written with only its answer lost (a crash
//!   between commit and reply, a dropped database connection). So the actor
//!   stops, and its host forgets it: the next request loads the session
//!   from the store (its truth) or, when the write was fenced, goes to the
//!   host that owns the session now. Memory never runs ahead of the store
//!   or behind it.
//! - Before a batch leaves, the invariants whose breach would corrupt the
//!   store are asserted: only this session's rows, events numbered on from
//!   the persisted transcript with transition revisions that never go back.

use gaos_session::ErrorCode;

use super::SessionActor;
use crate::error::HostError;
use crate::storage::{Fence, StoreError, WriteBatch, WriteOp};

impl SessionActor {
    /// Make `ops` durable (one atomic, fenced batch), or say why not.
    pub(super) async fn persist(&mut self, ops: Vec<WriteOp>) -> Result<(), HostError> {
        if let Some(error) = self.stopped_error() {
            return Err(error);
        }
        if ops.is_empty() {
            return Ok(());
        }
        self.assert_batch_invariants(&ops);
        let batch = WriteBatch::fenced(ops, self.fence.clone());
        match self.writer.write(batch).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.write_failed(e)),
        }
    }

    /// The error a request gets from an actor that stopped after a failed
    /// write (its host loads the session again for the next request).
    pub(super) fn stopped_error(&self) -> Option<HostError> {
        self.stopped.as_ref().map(|why| match why {
            Stopped::Fenced { now } => HostError::new(
                ErrorCode::Fenced,
                format!(
                    "session {} is now served by another host ({now}); nothing of this request was stored here",
                    self.id
                ),
            ),
            Stopped::Unsure => HostError::unavailable(format!(
                "session {} is reloading from the store after a failed write; retry the request",
                self.id
            )),
        })
    }

    fn write_failed(&mut self, error: StoreError) -> HostError {
        self.stop_timers();
        // Before the failed request is answered, so its caller's next
        // request already finds the actor stopped and loads the session anew.
        self.stopped_flag.store(true, std::sync::atomic::Ordering::Release);
        match error {
            StoreError::Fenced { now, .. } => {
                tracing::warn!(session = %self.id, fence = ?self.fence, %now, "a write was fenced: the session moved");
                self.metrics.add_fenced_write();
                self.stopped = Some(Stopped::Fenced { now });
                self.stopped_error().expect("just stopped")
            }
            StoreError::Backend(message) => {
                tracing::error!(session = %self.id, error = %message, "a durable write failed; the session reloads");
                self.stopped = Some(Stopped::Unsure);
                HostError::unavailable(format!("the change could not be made durable: {message}"))
            }
            StoreError::Conflict(message) => {
                tracing::error!(session = %self.id, error = %message, "a durable write contradicts the store; the session reloads");
                self.stopped = Some(Stopped::Unsure);
                HostError::internal(format!("the change contradicts what is stored: {message}"))
            }
        }
    }

    /// TigerStyle: a broken invariant here would write rows another
    /// session, a restart or a verifier reads back wrong, so it stops the
    /// actor (a panic in its task) rather than let the write through.
    fn assert_batch_invariants(&self, ops: &[WriteOp]) {
        let mut next_seq = self.transcript.persisted() as u64;
        let mut last_revision = self.kernel.transition_revision();
        for op in ops {
            let session = match op {
                WriteOp::Events { session_id, events } => {
                    for event in events {
                        assert_eq!(event.seq, next_seq, "session {}: events must continue the transcript", self.id);
                        assert!(
                            event.transition_revision >= last_revision,
                            "session {}: transition revisions never go back ({} after {last_revision})",
                            self.id,
                            event.transition_revision
                        );
                        next_seq += 1;
                        last_revision = event.transition_revision;
                    }
                    session_id
                }
                WriteOp::CreateSession(record) => &record.id,
                WriteOp::SetStatus { session_id, .. }
                | WriteOp::RevokeSeatCredentials { session_id, .. }
                | WriteOp::SessionState { session_id, .. }
                | WriteOp::Accepted { session_id, .. } => session_id,
                WriteOp::Answer(answer) => &answer.session_id,
                WriteOp::Credential(credential) => &credential.session_id,
                WriteOp::Checkpoint(checkpoint) => &checkpoint.session_id,
            };
            // A run's later levels store their events under `id/level/N`.
            let own = session == &self.id
                || session.strip_prefix(self.id.as_str()).is_some_and(|rest| rest.starts_with("/level/"));
            assert!(own, "session {} must not write rows of {session}", self.id);
        }
    }
}

/// Why an actor stopped serving its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// A write was fenced: another host owns the session (`now`: the
    /// store's view of the owner).
    Fenced { now: String },
    /// A write failed: it may or may not be stored, so the session reloads.
    Unsure,
}

/// The fence of a session this host loaded or created as `owner` at `epoch`.
pub(crate) fn fence_of(session_id: &str, owner: &str, epoch: i64) -> Fence {
    Fence { session_id: session_id.to_owned(), owner: owner.to_owned(), epoch }
}
