//! Rebuilding a session's kernel from the store: from its newest checkpoint
//! plus the events after it when it has one (so a restart's cost per
//! session is bounded by the checkpoint interval), else from its whole log.

use std::sync::Arc;

use gaos_kernel::{DynReducer, HistoryLookup, KernelCheckpoint, KernelOptions, SessionEvent, SessionKernel};

use crate::actor::{BelowFloor, RestoredFrom, StoreHistory};
use gaos_session::ErrorCode;

use crate::error::HostError;
use crate::storage::{StoreReader, StoredCheckpoint, StoredEvent};

/// The code of a session whose game no longer reproduces its stored
/// transcript (another result, view or digest on re-simulation): a
/// non-deterministic game module, or changed rules under the same digest.
/// The session is revoked, as the restart pass does (`revocation.rs`).
fn rehydrate_failed(message: String) -> HostError {
    HostError::new(ErrorCode::RehydrateFailed, message)
}

/// What a load read from the store (blocking).
pub(super) struct StoredLog {
    pub checkpoint: Option<StoredCheckpoint>,
    /// Every event, or with a checkpoint only those after it.
    pub events: Vec<StoredEvent>,
}

/// Read the newest checkpoint and the events a restore needs.
pub(super) fn read_log(reader: &dyn StoreReader, id: &str) -> Result<StoredLog, crate::storage::StoreError> {
    let checkpoint = reader.load_checkpoint(id)?;
    let events = match &checkpoint {
        Some(checkpoint) => reader.load_events_from(id, checkpoint.events)?,
        None => reader.load_events(id)?,
    };
    Ok(StoredLog { checkpoint, events })
}

/// The kernel `log` rebuilds, and (restored from a checkpoint) the
/// transcript prefix and event count the actor continues from. CPU work:
/// run it off the async workers.
pub(super) fn rebuild(
    id: &str,
    options: Arc<KernelOptions<DynReducer>>,
    log: StoredLog,
    reader: Arc<dyn StoreReader>,
) -> Result<(SessionKernel<DynReducer>, Option<RestoredFrom>), HostError> {
    let mut parsed = Vec::with_capacity(log.events.len());
    for event in &log.events {
        let value = gaos_json::parse(&event.body)
            .map_err(|e| HostError::internal(format!("event {} of {id} is not JSON: {e}", event.seq)))?;
        parsed.push(SessionEvent::from_value(&value).map_err(HostError::internal)?);
    }
    let tail = parsed.len();
    let Some(stored) = log.checkpoint else {
        let kernel = SessionKernel::rehydrate(options, None, parsed)
            .map_err(|e| rehydrate_failed(format!("session {id} failed to rehydrate: {e}")))?;
        tracing::info!(session = %id, events = tail, cursor = kernel.cursor(), "session rehydrated");
        return Ok((kernel, None));
    };
    let digest = gaos_json::hex_decode(&stored.transcript_prefix)
        .ok()
        .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
        .ok_or_else(|| {
            HostError::internal(format!(
                "the transcript digest stored with the checkpoint of {id} is not 32 bytes of hex"
            ))
        })?;
    let checkpoint = KernelCheckpoint::from_json(&stored.body)
        .map_err(|e| HostError::internal(format!("the stored checkpoint of {id} is unreadable: {e}")))?;
    // Identities below a stored checkpoint's floor were never seen here: every
    // question about them goes to the store (`actor/below_floor.rs`).
    let history: Arc<dyn HistoryLookup> =
        Arc::new(StoreHistory { reader, session_id: id.to_owned(), below_floor: Arc::new(BelowFloor::unknown()) });
    let kernel = SessionKernel::restore(options, &checkpoint, parsed, Some(history)).map_err(|e| {
        rehydrate_failed(format!(
            "session {id} failed to restore from its checkpoint at transition {}: {e}",
            stored.transition_revision
        ))
    })?;
    tracing::info!(
        session = %id,
        checkpoint = stored.transition_revision,
        tail,
        cursor = kernel.cursor(),
        "session restored from its checkpoint"
    );
    Ok((kernel, Some(RestoredFrom { transcript_digest: digest, events: stored.events })))
}
