//! Revocations the host learns of outside a session's actor.
//!
//! A session that no longer loads (`rehydrate_failed`: a game module whose
//! views differ on re-simulation, a stored configuration that does not read
//! back)
//! is revoked when a request loads it, as the restart pass revokes one it
//! cannot load: every later call answers `410 revoked` from memory instead
//! of re-running the game (and a `500 internal`) each time.
//!
//! A revoked token (a rotated seat token) is announced to whatever it
//! opened earlier: open streams watch [`Host::credential_revocations`]
//! (`http/stream_auth.rs`).

use super::{ActorHandle, Host};
use crate::error::HostError;
use crate::lease::LeaseBook;
use crate::storage::{Fence, SessionStateKey, WriteBatch, WriteOp};

/// The reason callers are told: what went wrong in detail names recorded
/// digests and views of every seat, so it goes to the host's log only.
const REASON: &str =
    "rehydrate_failed: this session no longer loads (its game or its stored record disagrees with its transcript)";

impl Host {
    /// Changes whenever a token is revoked (a seat token rotated).
    pub(crate) fn credential_revocations(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.credentials.revocations()
    }

    /// A load's outcome, a session that does not rehydrate revoked.
    pub(super) async fn revoke_if_unloadable(
        &self,
        id: &str,
        loaded: Result<ActorHandle, HostError>,
    ) -> Result<ActorHandle, HostError> {
        match loaded {
            Err(e) if e.code == gaos_session::ErrorCode::RehydrateFailed => Err(self.revoke_unloadable(id, &e).await),
            loaded => loaded,
        }
    }

    /// Revoke session `id`, which failed to load with `error` (a
    /// `rehydrate_failed`), durably and in memory; the answer for the caller.
    async fn revoke_unloadable(&self, id: &str, error: &HostError) -> HostError {
        tracing::error!(session = %id, error = %error.message, "session revoked: it does not rehydrate");
        let reader = std::sync::Arc::clone(&self.inner.reader);
        let owned = id.to_owned();
        let stored = super::blocking(move || reader.load_session_state(&owned)).await.unwrap_or_default();
        let mut book = stored
            .into_iter()
            .find(|(key, _)| *key == SessionStateKey::Leases)
            .and_then(|(_, text)| LeaseBook::from_json(&text).ok())
            .unwrap_or_default();
        book.revoke(REASON, "host");
        let ops = vec![
            WriteOp::SessionState { session_id: id.to_owned(), key: SessionStateKey::Leases, value: book.to_json() },
            WriteOp::SetStatus { session_id: id.to_owned(), status: crate::storage::SessionStatus::Revoked },
        ];
        // Fenced by the session's owner and epoch as stored: in a cluster
        // only the owner revokes (a load elsewhere is refused before this).
        let reader = std::sync::Arc::clone(&self.inner.reader);
        let owned = id.to_owned();
        let fence = match super::blocking(move || reader.load_session(&owned)).await {
            Ok(Some(record)) => Some(Fence { session_id: id.to_owned(), owner: record.owner, epoch: record.epoch }),
            _ => None,
        };
        if let Err(e) = self.inner.writer.write(WriteBatch { ops, fence }).await {
            tracing::error!(session = %id, error = %e, "the revocation could not be stored; it holds until a restart");
        }
        self.inner
            .revoked
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id.to_owned(), REASON.into());
        HostError::revoked(REASON)
    }
}
