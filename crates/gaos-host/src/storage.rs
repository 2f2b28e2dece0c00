//! Durable storage: the interface every backend implements (`store`: write
//! batches and their fences, the `StoreWriter` / `StoreReader` traits and
//! the row types), the group-commit writer thread in front of it
//! (`writer`), the embedded SQLite backend (`sqlite`, which serves one node
//! and ignores fences) and a fault-injecting wrapper for tests (`faults`).

pub mod faults;
pub mod postgres;
pub mod sqlite;
mod sqlite_history;
mod store;
pub(crate) mod writer;

pub use store::{
    AcceptedIdentity, AnswerKind, CredentialRecord, CredentialRole, Fence, SessionRecord, SessionStateKey,
    SessionStatus, StoreError, StoreReader, StoreWriter, StoredAnswer, StoredCheckpoint, StoredEvent, WriteBatch,
    WriteOp,
};
