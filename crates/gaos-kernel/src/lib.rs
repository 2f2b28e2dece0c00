//! The GAOS authoritative session kernel (RFC-006).
//!
//! Synchronous, deterministic and IO-free: inputs arrive as submissions,
//! advance targets, timeouts and extension records; every effect comes back as
//! data (events to persist, observation deltas to publish). The host persists
//! a prepared transition's events and only then commits it.

pub mod action;
mod audit;
mod cadence;
pub mod checkpoint;
pub mod commitment;
mod digest;
pub mod dmath;
pub mod error;
pub mod game;
mod game_ref;
mod hash;
pub mod history;
pub mod protocol;
mod receipt;
pub mod reducer;
pub mod replay;
pub mod seed;
pub mod signing;
mod view;

pub use action::{ActionTarget, COMMIT_SCHEME, CommitEnvelope, RevealEnvelope, SubmittedAction};
pub use checkpoint::KernelCheckpoint;
pub use dmath::{DMATH_ALGORITHM, Dmath, DmathBackend};
pub use error::{
    AdvanceCode, ArgumentCode, CheckpointCode, ConflictCode, GameError, IntentError, IntentErrorCode, KernelError,
    LifecycleCode, ResyncRequired,
};
pub use game::{AdapterRef, CommandContext, Game, GameRef, LevelSpec, TimeoutContext, TimeoutInput, isolated};
pub use protocol::{
    CommandSubmission, IntentWindow, PROTOCOL_ID, PROTOCOL_VERSION, SessionBinding, TickEnvelope, TickRate,
    make_tick_id,
};
pub use reducer::{
    ActionReducer, ActionReducerAdapter, AnyState, CloneIsolation, DynReducer, ReplayMetrics, StateIsolation,
    TickReducer, erase_reducer,
};
pub use seed::{mulberry32, roll, run_level_seed, seed_from_value, seeded_permutation};

pub mod event;
pub mod kernel;
pub mod observation;
pub mod options;

pub use event::{
    CanonicalInput, EventBody, EventLog, HeaderCadence, ResolutionCause, ResolutionResult, SeedPolicy, SessionEvent,
    SessionHeader, SessionTranscript, SubmissionIdentity,
};
pub use history::{HistoryLookup, MemoryHistory};
pub use kernel::{
    AdvanceSummary, ChainPosition, CompactRequest, CompactSummary, IngestBatch, IngestOutcome, IngestReceipt, Prepared,
    PreparedResult, ReceiptStatus, SeatSignatureInput, SessionKernel, SessionWarning,
};
pub use observation::{DeltaBody, DeltaOrigin, ObservationDelta, RejectionNotice, apply_observation_delta};
pub use options::{Cadence, CommandMapper, GameOptionsBuilder, HostTime, KernelOptions, SessionLimits, TimeoutMapper};
pub use view::GameStatus;
