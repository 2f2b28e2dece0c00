//! [`ArenaError`]: why a tournament could not be planned, run, packed or read.

use thiserror::Error;

/// Why an arena operation failed. Every message names what to fix: the
/// manifest field, the match, the file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ArenaError {
    /// The manifest is invalid (the message starts with the field's path).
    #[error("the arena manifest: {0}")]
    Manifest(String),
    /// The manifest cannot be played with this game (seats, levels).
    #[error("{0}")]
    Plan(String),
    /// A match could not be played; completed matches are kept.
    #[error("match {id}: {message}")]
    Match {
        /// The match id.
        id: String,
        /// What failed.
        message: String,
    },
    /// The run's journal cannot continue this tournament.
    #[error("cannot resume: {0}")]
    Resume(String),
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
    /// A bundle is not an arena bundle gaos can read.
    #[error("{0}")]
    Bundle(String),
    /// Invalid options (e.g. no worker).
    #[error("{0}")]
    Options(String),
}
