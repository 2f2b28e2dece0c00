//! [`BenchmarkError`]: everything benchmark planning, scoring and
//! orchestration can fail with (gaos-runner re-exports it).

use thiserror::Error;

/// Why a benchmark could not be planned, run, resumed, scored or packed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BenchmarkError {
    /// The manifest breaks `gaos.benchmark-manifest.v1`; the message names
    /// the field (e.g. `tasks[1].seeds[2]`).
    #[error("invalid benchmark manifest: {0}")]
    Manifest(String),
    /// The checkpoint file is unreadable or breaks
    /// `gaos.benchmark-run-checkpoint.v1`.
    #[error("invalid checkpoint: {0}")]
    Checkpoint(String),
    /// The checkpoint belongs to another manifest, plan or agent.
    #[error("cannot resume: {0}")]
    Resume(String),
    /// The scoring plugin is unknown or could not score an episode.
    #[error("scoring: {0}")]
    Scoring(String),
    /// One episode failed; the run stopped (completed episodes stay in the
    /// checkpoint, so `--resume` continues after fixing the cause).
    #[error("episode {episode} failed: {message}")]
    Episode {
        /// The episode id (`<taskId>-seed-<seed>-episode-<n>`).
        episode: String,
        /// What failed.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
    /// A bundle could not be packed, or the files of one are not a bundle.
    #[error("bundle: {0}")]
    Bundle(String),
    /// The options are invalid (e.g. zero jobs).
    #[error("invalid benchmark options: {0}")]
    Options(String),
}
