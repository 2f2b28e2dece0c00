//! Durable storage: the interface every backend implements (`store`: write
//! batches, the `StoreWriter` / `StoreReader` traits and the row types),
//! the group-commit writer thread in front of it (`writer`), and the
//! embedded SQLite backend (`sqlite`).

pub mod sqlite;
mod sqlite_history;
mod store;
pub(crate) mod writer;

pub use store::{
    AcceptedIdentity, AnswerKind, CredentialRecord, CredentialRole, SessionRecord, SessionStateKey, SessionStatus,
    StoreError, StoreReader, StoreWriter, StoredAnswer, StoredCheckpoint, StoredEvent, WriteBatch, WriteOp,
};
