//! Session events: the append-only live transcript (`SessionEvent`).

use crate::view::GameStatus;
use gaos_json::{Map, Value};
use serde::{Deserialize, Serialize};

use crate::action::SubmittedAction;
use crate::game_ref::GameRef;

/// `{participantId, submissionId}`: the identity of one accepted submission.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmissionIdentity {
    pub participant_id: String,
    pub submission_id: String,
}

/// Why a window resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResolutionCause {
    /// Every participant submitted.
    Complete,
    /// A timeout resolved the window with a system input.
    Timeout,
    /// The tick clock resolved the window as it was (ticks cadence).
    Tick,
}

/// One reducer input of a resolution (`CanonicalInput`). User inputs carry
/// their submission identity, canonical command and cursor; the timeout
/// system input has `submissionId: null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CanonicalInput {
    pub participant_id: Option<String>,
    pub submission_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical_command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<u64>,
    pub action: SubmittedAction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_time: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prev_chain_hash: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sig: Option<Value>,
}

/// `{status, stars, actionsUsed}` after a resolution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolutionResult {
    pub status: GameStatus,
    pub stars: Option<f64>,
    pub actions_used: u64,
}

/// `{salt, payload}` of a reveal that did not match its commitment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttemptedReveal {
    pub salt: String,
    pub payload: Value,
}

/// The kind-specific part of a session event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", rename_all_fields = "camelCase")]
pub enum EventBody {
    IntentAccepted {
        tick: u64,
        revision: u64,
        participant_id: String,
        submission_id: String,
        command: Value,
        canonical_command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<Box<SubmittedAction>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_time: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prev_chain_hash: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sig: Option<Value>,
    },
    Resolution {
        tick: u64,
        cursor: u64,
        cause: ResolutionCause,
        consumed: Vec<SubmissionIdentity>,
        inputs: Vec<CanonicalInput>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        system_input: Option<Box<CanonicalInput>>,
        result: ResolutionResult,
    },
    Timeout {
        tick: u64,
        timeout_id: String,
        window_ref: u64,
        participant_id: Option<String>,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_policy_ref: Option<String>,
    },
    Extension {
        tick: u64,
        lane: String,
        record: Map,
    },
    Checkpoint {
        tick: u64,
        digest: u32,
    },
    Rejection {
        code: String,
        tick: u64,
        participant_id: String,
        submission_id: String,
        commitment_id: u32,
        scheme: String,
        attempted_reveal: AttemptedReveal,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        canonical_command: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_time: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prev_chain_hash: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sig: Option<Value>,
    },
    /// RFC-010: a seat's periodic signature over its current chain head
    /// (covers its chained-but-unsigned submissions; not a chain link).
    SeatSignature {
        tick: u64,
        participant_id: String,
        client_time: u64,
        prev_chain_hash: String,
        sig: String,
    },
}

impl EventBody {
    /// The `kind` string of the event.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::IntentAccepted { .. } => "intent-accepted",
            EventBody::Resolution { .. } => "resolution",
            EventBody::Timeout { .. } => "timeout",
            EventBody::Extension { .. } => "extension",
            EventBody::Checkpoint { .. } => "checkpoint",
            EventBody::Rejection { .. } => "rejection",
            EventBody::SeatSignature { .. } => "seat-signature",
        }
    }
}

/// A persisted event: the body plus `eventId`, `transitionRevision` and the
/// optional advisory `hostTime`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEvent {
    #[serde(flatten)]
    pub body: EventBody,
    pub event_id: String,
    pub transition_revision: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_time: Option<u64>,
}

impl SessionEvent {
    /// The event as a JSON value.
    pub fn to_value(&self) -> Value {
        gaos_json::to_value(self).expect("a session event is always a JSON value")
    }

    /// The event's canonical JSON text (what hosts persist and hash).
    pub fn canonical(&self) -> String {
        gaos_json::to_canonical_string(self).expect("a session event is always a JSON value")
    }

    /// Read an event from its JSON value.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        gaos_json::from_value(value.clone()).map_err(|e| format!("malformed session event: {e}"))
    }
}

/// `eventId = sessionId + ":" + transitionRevision + ":" + index`.
pub fn event_id(session_id: &str, transition_revision: u64, index: usize) -> String {
    format!("{session_id}:{transition_revision}:{index}")
}

/// The cadence of a session header.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase", rename_all_fields = "camelCase")]
pub enum HeaderCadence {
    Turns,
    Ticks { ticks_per_second: f64 },
}

/// How the level seed is derived from the session seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SeedPolicy {
    #[serde(rename = "explicit")]
    Explicit,
    #[serde(rename = "gaos.run-level-seed.v1")]
    RunLevelSeedV1,
}

impl SeedPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            SeedPolicy::Explicit => "explicit",
            SeedPolicy::RunLevelSeedV1 => "gaos.run-level-seed.v1",
        }
    }
}

/// `SessionHeader`: the transcript header, compared canonically on rehydrate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionHeader {
    pub session_id: String,
    pub game: GameRef,
    pub level_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level_version: Option<Value>,
    pub level: Value,
    pub seed: u32,
    pub seed_policy: SeedPolicy,
    pub seats: Vec<String>,
    pub cadence: HeaderCadence,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_policy: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat_keys: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_policy: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dmath: Option<Value>,
}

impl SessionHeader {
    pub fn to_value(&self) -> Value {
        gaos_json::to_value(self).expect("a session header is always a JSON value")
    }

    pub fn from_value(value: &Value) -> Result<Self, String> {
        gaos_json::from_value(value.clone()).map_err(|e| format!("malformed session header: {e}"))
    }
}

/// `SessionTranscript`: header plus events.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionTranscript {
    pub header: SessionHeader,
    pub events: Vec<SessionEvent>,
}

/// The append-only event log of a live kernel. Events are stored in chunks
/// so appending never moves earlier events: per-transition cost stays flat
/// however long the transcript grows (a plain `Vec` would periodically copy
/// the whole log when it reallocates). A log built from a `Vec` adopts it as
/// its first chunk without copying.
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    chunks: Vec<Vec<SessionEvent>>,
    /// Index of the first event of each chunk (for `get`).
    starts: Vec<usize>,
    len: usize,
}

/// Largest chunk (events): 256 events ≈ 100 KiB.
///
/// Kept small on purpose. A host runs many sessions that often advance in
/// step (the same game at the same pace), so they reach chunk boundaries
/// together; with 4096-event chunks (≈1.6 MiB each) every session's first
/// write into its new chunk faulted in a freshly zeroed 2 MiB huge page at
/// the same moment, a 100–170 ms stall of the whole host with 200 sessions
/// (measured). Small chunks share huge pages, so that cost is spread out.
const EVENT_CHUNK: usize = 256;

/// The first chunk's capacity; each later chunk doubles, up to
/// [`EVENT_CHUNK`]. A short session (a benchmark episode) then holds a few
/// KiB of log.
const FIRST_CHUNK: usize = 64;

impl EventLog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, event: SessionEvent) {
        if self.chunks.last().is_none_or(|c| c.len() == c.capacity()) {
            let capacity = self
                .chunks
                .last()
                .map_or(FIRST_CHUNK, |c| c.capacity().saturating_mul(2).clamp(FIRST_CHUNK, EVENT_CHUNK));
            self.chunks.push(Vec::with_capacity(capacity));
            self.starts.push(self.len);
        }
        self.chunks.last_mut().expect("a chunk with room exists").push(event);
        self.len += 1;
    }

    pub fn get(&self, index: usize) -> Option<&SessionEvent> {
        if index >= self.len {
            return None;
        }
        let chunk = self.starts.partition_point(|&start| start <= index) - 1;
        self.chunks[chunk].get(index - self.starts[chunk])
    }

    pub fn last(&self) -> Option<&SessionEvent> {
        self.chunks.last().and_then(|c| c.last())
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &SessionEvent> + '_ {
        self.chunks.iter().flatten()
    }

    /// Events from `start` on (for incremental persistence and streams).
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = &SessionEvent> + '_ {
        self.iter().skip(start)
    }

    pub fn to_vec(&self) -> Vec<SessionEvent> {
        self.iter().cloned().collect()
    }
}

impl Extend<SessionEvent> for EventLog {
    fn extend<T: IntoIterator<Item = SessionEvent>>(&mut self, events: T) {
        for event in events {
            self.push(event);
        }
    }
}

impl From<Vec<SessionEvent>> for EventLog {
    fn from(events: Vec<SessionEvent>) -> Self {
        let len = events.len();
        if len == 0 {
            return EventLog::default();
        }
        EventLog { chunks: vec![events], starts: vec![0], len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint(i: usize) -> SessionEvent {
        SessionEvent {
            body: EventBody::Checkpoint { tick: i as u64, digest: i as u32 },
            event_id: event_id("s", i as u64, 0),
            transition_revision: i as u64,
            host_time: None,
        }
    }

    #[test]
    fn the_log_indexes_and_iterates_across_chunks() {
        for adopted in [0usize, 1, 100] {
            let mut log = EventLog::from((0..adopted).map(checkpoint).collect::<Vec<_>>());
            for i in adopted..2_000 {
                log.push(checkpoint(i));
            }
            assert_eq!(log.len(), 2_000);
            for i in [0usize, 1, 63, 64, 65, 191, 192, 447, 448, 703, 704, 1999] {
                assert_eq!(log.get(i).map(|e| e.transition_revision), Some(i as u64), "event {i}");
            }
            assert!(log.get(2_000).is_none());
            assert!(log.iter().enumerate().all(|(i, e)| e.transition_revision == i as u64));
            assert_eq!(log.iter_from(1_500).next().map(|e| e.transition_revision), Some(1_500));
            assert_eq!(log.last().map(|e| e.transition_revision), Some(1_999));
            assert!(log.chunks.iter().all(|c| c.capacity() <= EVENT_CHUNK.max(adopted)), "chunks stay small");
        }
    }
}
