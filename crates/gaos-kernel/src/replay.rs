//! The portable `gaos.replay` format (kernel spec §5): finalization of live
//! transcripts into replay artifacts and their canonical JSONL.
//!
//! Artifacts are kept as JSON objects (one per line) so they round-trip byte
//! for byte; typed access and structural validation live in [`format`].

pub mod finalize;
pub mod format;

pub use finalize::{AdvancePolicy, FinalizeOptions, RunFinalizeOptions, finalize_replay, finalize_run_replay};
pub use format::{FILE_EXTENSION, MEDIA_TYPE, ReplayArtifact};
