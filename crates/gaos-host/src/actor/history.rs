//! The session's history as the store holds it. Finalize, the replay and the
//! transcript read the durable log from SQLite rather than from the kernel:
//! the live kernel need not keep every event in memory (issue 19), and the
//! store is what a restart rehydrates from anyway. (The methods take `&mut
//! self` only so their futures are `Send`: the kernel is not `Sync`.)

use std::sync::Arc;

use gaos_json::canonical_json;
use gaos_kernel::{SessionEvent, SessionTranscript};

use super::SessionActor;
use crate::error::HostError;

impl SessionActor {
    /// `GET /transcript`: the header and the stored events' canonical JSON,
    /// one a line (the store keeps each event's canonical bytes).
    pub(super) async fn transcript_text(&mut self) -> Result<String, HostError> {
        let reader = Arc::clone(&self.reader);
        let id = self.id.clone();
        let stored = tokio::task::spawn_blocking(move || reader.load_events(&id))
            .await
            .map_err(|e| HostError::internal(format!("reading the stored events failed: {e}")))?
            .map_err(|e| HostError::unavailable(format!("reading the events of {}: {e}", self.id)))?;
        let mut out = canonical_json(&self.kernel.session_header().to_value());
        out.push('\n');
        for event in &stored {
            out.push_str(&event.body);
            out.push('\n');
        }
        Ok(out)
    }

    /// Every stored event of this session, parsed, in order.
    pub(super) async fn durable_events(&mut self) -> Result<Vec<SessionEvent>, HostError> {
        let reader = Arc::clone(&self.reader);
        let id = self.id.clone();
        tokio::task::spawn_blocking(move || {
            let stored = reader
                .load_events(&id)
                .map_err(|e| HostError::unavailable(format!("reading the events of {id}: {e}")))?;
            let mut events = Vec::with_capacity(stored.len());
            for event in &stored {
                let value = gaos_json::parse(&event.body)
                    .map_err(|e| HostError::internal(format!("event {} of {id} is not JSON: {e}", event.seq)))?;
                events.push(SessionEvent::from_value(&value).map_err(HostError::internal)?);
            }
            Ok(events)
        })
        .await
        .map_err(|e| HostError::internal(format!("reading the stored events failed: {e}")))?
    }

    /// The session's transcript (header and every event) from the store.
    pub(super) async fn stored_transcript(&mut self) -> Result<SessionTranscript, HostError> {
        Ok(SessionTranscript { header: self.kernel.session_header(), events: self.durable_events().await? })
    }
}
