//! The session's history. Finalize, the replay and the transcript of a
//! session read the durable log from SQLite rather than from the kernel: the
//! live kernel need not keep every event in memory (issue 19), and the store
//! is what a restart rehydrates from anyway. A multi-level run is never
//! compacted, so its levels' kernels hold every event and are read instead
//! (`episodes.rs`). (The methods take `&mut self` only so their futures are
//! `Send`: the kernel is not `Sync`.)

use std::sync::Arc;

use gaos_json::{Map, canonical_json};
use gaos_kernel::replay::{FinalizeOptions, finalize_replay};
use gaos_kernel::{SessionEvent, SessionTranscript};

use super::SessionActor;
use super::finalize::identity_perm;
use crate::error::HostError;

/// What finalize works from: every durable event of the session (a run:
/// every level's, in order) and its replay.
pub(super) struct SessionRecord {
    pub events: Vec<SessionEvent>,
    pub replay: String,
}

impl SessionActor {
    /// The session's events and replay (call once the game ended).
    pub(super) async fn session_record(&mut self) -> Result<SessionRecord, HostError> {
        if let Some(levels) = self.run_transcripts() {
            let replay = self.run_replay_text().expect("a run has a run replay")?;
            let events = levels.into_iter().flat_map(|level| level.events).collect();
            return Ok(SessionRecord { events, replay });
        }
        let transcript = self.stored_transcript().await?;
        let replay = replay_of(&transcript, self.replay_extensions()?)?;
        Ok(SessionRecord { events: transcript.events, replay })
    }

    /// `GET /transcript`: the header and the events' canonical JSON, one a
    /// line (the store keeps each event's canonical bytes); a run prints
    /// each level's header and events in turn.
    pub(super) async fn transcript_text(&mut self) -> Result<String, HostError> {
        if let Some(levels) = self.run_transcripts() {
            let mut out = String::new();
            for level in &levels {
                out.push_str(&canonical_json(&level.header.to_value()));
                out.push('\n');
                for event in &level.events {
                    out.push_str(&event.canonical());
                    out.push('\n');
                }
            }
            return Ok(out);
        }
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

/// The RFC-006 replay of one level's transcript, with the header `extensions`.
fn replay_of(transcript: &SessionTranscript, extensions: Option<Map>) -> Result<String, HostError> {
    let options = FinalizeOptions { perm: identity_perm(&transcript.events), extensions, ..FinalizeOptions::default() };
    let artifact = finalize_replay(transcript, &options)
        .map_err(|e| HostError::internal(format!("finalizing the replay failed: {e}")))?;
    Ok(artifact.to_jsonl())
}
