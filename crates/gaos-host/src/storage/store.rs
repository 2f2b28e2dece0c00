//! Durable storage behind one interface.
//!
//! Writes are [`WriteBatch`]es: each batch is atomic, and batches from many
//! sessions are group-committed by the writer thread (`writer.rs`; one fsync
//! per group, not per request). Events are idempotent by event id: writing the
//! same id with the same bytes again is a no-op, with different bytes a
//! [`StoreError::Conflict`].
//!
//! Every session row carries an `owner` and an `epoch`, and a session's
//! batches carry a [`Fence`] naming the owner and epoch they were prepared
//! under. A single-node SQLite host owns everything and ignores the fence; a
//! multi-node backend (PostgreSQL) applies a fenced batch only while the
//! session row still names that owner at that epoch, checked under a lock in
//! the batch's own transaction, and refuses it otherwise with
//! [`StoreError::Fenced`]: a deposed host can never commit.

use thiserror::Error;

/// Storage failures.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum StoreError {
    /// The write contradicts what is stored (same event id, other bytes).
    #[error("storage conflict: {0}")]
    Conflict(String),
    /// The backend failed (disk, database); nothing of the batch was written.
    #[error("storage failure: {0}")]
    Backend(String),
    /// The batch's fence no longer holds: another host owns the session now
    /// (or the session is gone). Nothing of the batch was written.
    #[error("session {session_id} is no longer owned by {owner} at epoch {epoch} (now: {now})")]
    Fenced {
        session_id: String,
        owner: String,
        epoch: i64,
        /// Who owns it now, as the store saw it (`owner@epoch`, or `nobody`).
        now: String,
    },
}

/// Lifecycle status of a stored session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionStatus {
    Active,
    Terminal,
    Finalized,
    Revoked,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Active => "active",
            SessionStatus::Terminal => "terminal",
            SessionStatus::Finalized => "finalized",
            SessionStatus::Revoked => "revoked",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "active" => SessionStatus::Active,
            "terminal" => SessionStatus::Terminal,
            "finalized" => SessionStatus::Finalized,
            "revoked" => SessionStatus::Revoked,
            _ => return None,
        })
    }
}

/// A session row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub id: String,
    pub game_id: String,
    pub created_at_ms: i64,
    pub status: SessionStatus,
    /// Canonical JSON of the session's host configuration.
    pub config: String,
    pub owner: String,
    pub epoch: i64,
}

/// One persisted event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Position in the transcript, from 0.
    pub seq: u64,
    pub event_id: String,
    pub transition_revision: u64,
    /// Canonical JSON of the event.
    pub body: String,
}

/// What a stored credential lets its bearer do; its `as_str` is the `role`
/// column. (The operator token is not a stored credential: only its hash
/// lives in memory, from `GAOS_OPERATOR_TOKEN` or the token file.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CredentialRole {
    /// Acts for one seat of one session.
    Seat,
    /// Reads one session's public view.
    Spectator,
}

impl CredentialRole {
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialRole::Seat => "seat",
            CredentialRole::Spectator => "spectator",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "seat" => CredentialRole::Seat,
            "spectator" => CredentialRole::Spectator,
            _ => return None,
        })
    }
}

/// Keys of the per-session key/value state; its `as_str` is the `key` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionStateKey {
    /// The lease book (canonical JSON of `LeaseBook`).
    Leases,
    /// The controller identity the first attach pinned (canonical JSON).
    Controller,
    /// How the session's digest key (`crate::digest_key`) is had: the marker
    /// `derived:v1` (derived from the host key, `crate::host_key`), or, for a
    /// session stored before the host key, the key itself (hex). A host
    /// secret: never sent to anyone.
    DigestKey,
    /// The turn clock of a turns session with a deadline (`TurnClock`):
    /// its window and wall-clock deadline (or time left while stopped).
    TurnClock,
    /// The last level of an `advanceOn: reset` run a seat started, and the
    /// revision the reset was asked at (`actor/reset.rs`): a level of such a
    /// run is live only once its reset is durable.
    RunReset,
    /// The seat keys of a signed session registered at attach so far
    /// (`actor/seat_keys.rs`): a JSON array of roster entries, written with
    /// the attach answer that registered the last one.
    SeatKeys,
}

impl SessionStateKey {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStateKey::Leases => "leases",
            SessionStateKey::Controller => "controller",
            SessionStateKey::DigestKey => "digestKey",
            SessionStateKey::TurnClock => "turnClock",
            SessionStateKey::RunReset => "runReset",
            SessionStateKey::SeatKeys => "seatKeys",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "leases" => SessionStateKey::Leases,
            "controller" => SessionStateKey::Controller,
            "digestKey" => SessionStateKey::DigestKey,
            "turnClock" => SessionStateKey::TurnClock,
            "runReset" => SessionStateKey::RunReset,
            "seatKeys" => SessionStateKey::SeatKeys,
            _ => return None,
        })
    }
}

/// A credential row (only the token's SHA-256 is stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialRecord {
    pub token_hash: String,
    pub session_id: String,
    pub role: CredentialRole,
    pub seat: Option<String>,
    pub issued_at_ms: i64,
}

/// What a stored answer answered; its `as_str` is the `kind` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnswerKind {
    /// `POST .../actions`, keyed by seat and submission id.
    Act,
    /// `POST .../attach`, keyed by seat and request id.
    Attach,
    /// `POST .../finalize`, one per session.
    Finalize,
    /// `POST /v1/sessions` with a `requestId`, keyed by it: the request row
    /// (host level, empty session id) and the answer row (the session's).
    Create,
}

impl AnswerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerKind::Act => "act",
            AnswerKind::Attach => "attach",
            AnswerKind::Finalize => "finalize",
            AnswerKind::Create => "create",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "act" => AnswerKind::Act,
            "attach" => AnswerKind::Attach,
            "finalize" => AnswerKind::Finalize,
            "create" => AnswerKind::Create,
            _ => return None,
        })
    }
}

/// A stored answer to replay byte for byte (acts, attaches, finalize).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    pub session_id: String,
    pub kind: AnswerKind,
    /// Identity of the request within its kind (seat + submission id,
    /// request id, ...).
    pub key: String,
    pub status: u16,
    /// Canonical JSON of the request (to detect changed retries).
    pub request: String,
    /// Canonical JSON of the answer.
    pub body: String,
}

/// One write of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    CreateSession(SessionRecord),
    SetStatus {
        session_id: String,
        status: SessionStatus,
    },
    Events {
        session_id: String,
        events: Vec<StoredEvent>,
    },
    Answer(StoredAnswer),
    Credential(CredentialRecord),
    /// Revoke every credential of a session's seat (token reissue).
    RevokeSeatCredentials {
        session_id: String,
        seat: String,
    },
    /// Per-session key/value state (leases, pinned controller).
    SessionState {
        session_id: String,
        key: SessionStateKey,
        value: String,
    },
    /// The identities a kernel accepted since its previous retention floor,
    /// written with the checkpoint it compacts onto (same batch), sorted so
    /// a session's rows land together in the index.
    Accepted {
        session_id: String,
        identities: Vec<AcceptedIdentity>,
    },
    /// Replace the session's checkpoint with a newer one.
    Checkpoint(StoredCheckpoint),
}

/// A session's newest kernel checkpoint (`gaos.kernel-checkpoint`), stored
/// once every event up to its watermark is durable; a restart restores it
/// and replays only the events after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCheckpoint {
    pub session_id: String,
    /// The checkpoint's watermark (its last transition).
    pub transition_revision: u64,
    /// How many events the session had stored at the watermark: the tail
    /// starts at this `seq`.
    pub events: u64,
    /// The transcript hash chain at the watermark (hex), which the
    /// transcript digest of later attach receipts continues from.
    pub transcript_prefix: String,
    /// The checkpoint's canonical JSON.
    pub body: String,
}

/// A submission identity the kernel accepted (an `intent-accepted` event):
/// the index the kernel's history lookup asks once the events that held it
/// left memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedIdentity {
    pub participant_id: String,
    pub submission_id: String,
    pub transition_revision: u64,
}

/// The owner and epoch a session's batch was prepared under (see the
/// module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fence {
    pub session_id: String,
    pub owner: String,
    pub epoch: i64,
}

/// An atomic group of writes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteBatch {
    pub ops: Vec<WriteOp>,
    /// Set on every batch of a session's actor; host-level batches (a new
    /// session's create, credentials of the operator) carry none.
    pub fence: Option<Fence>,
}

impl WriteBatch {
    pub fn new() -> Self {
        Self::default()
    }
    /// A batch of `ops` fenced by `fence`.
    pub fn fenced(ops: Vec<WriteOp>, fence: Fence) -> Self {
        WriteBatch { ops, fence: Some(fence) }
    }
    /// A host-level batch of `ops` (no fence).
    pub fn of(ops: Vec<WriteOp>) -> Self {
        WriteBatch { ops, fence: None }
    }
    pub fn push(&mut self, op: WriteOp) -> &mut Self {
        self.ops.push(op);
        self
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// The write side, owned by the writer thread: what a second backend
/// implements (the SQLite store is the first; `faults.rs` wraps either to
/// inject failures in tests).
pub trait StoreWriter: Send {
    /// Apply batches in one durable transaction; one result per batch. A
    /// failing batch leaves no trace and does not fail the others. A batch
    /// whose fence does not hold fails with [`StoreError::Fenced`] (a
    /// backend that serves one node may ignore fences).
    fn apply_group(&mut self, batches: &[WriteBatch]) -> Vec<Result<(), StoreError>>;
}

/// The read side (blocking; call from `spawn_blocking`).
pub trait StoreReader: Send + Sync {
    fn list_sessions(&self, status: Option<SessionStatus>) -> Result<Vec<SessionRecord>, StoreError>;
    fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError>;
    fn load_events(&self, id: &str) -> Result<Vec<StoredEvent>, StoreError>;
    /// The stored answers of a session other than acts (attach, finalize);
    /// act answers are many and read one by one with [`StoreReader::load_answer`].
    fn load_answers(&self, id: &str) -> Result<Vec<StoredAnswer>, StoreError>;
    /// One stored answer.
    fn load_answer(&self, id: &str, kind: AnswerKind, key: &str) -> Result<Option<StoredAnswer>, StoreError>;
    fn load_credentials(&self) -> Result<Vec<CredentialRecord>, StoreError>;
    /// The live (not revoked) credential of a token hash, if any (a host of
    /// a cluster meets tokens another host issued).
    fn load_credential(&self, token_hash: &str) -> Result<Option<CredentialRecord>, StoreError>;
    /// The live credentials of one session (refreshed when a host of a
    /// cluster takes the session over).
    fn load_session_credentials(&self, id: &str) -> Result<Vec<CredentialRecord>, StoreError>;
    /// The session's state rows; keys this build does not know are skipped.
    fn load_session_state(&self, id: &str) -> Result<Vec<(SessionStateKey, String)>, StoreError>;
    /// The session's newest checkpoint, if it has one.
    fn load_checkpoint(&self, id: &str) -> Result<Option<StoredCheckpoint>, StoreError>;
    /// The session's events from position `seq` on, in order (the tail after
    /// a checkpoint).
    fn load_events_from(&self, id: &str, seq: u64) -> Result<Vec<StoredEvent>, StoreError>;
    /// Whether `(participant, submission)` was accepted at a transition at
    /// or below `floor`.
    fn was_accepted(&self, id: &str, participant: &str, submission: &str, floor: u64) -> Result<bool, StoreError>;
}
