//! The portable `gaos.replay` format (kernel spec §5): finalization of live
//! transcripts into replay artifacts, their canonical JSONL, reading and
//! structural validation, and verification by re-simulation.
//!
//! - [`finalize`]: terminal transcripts → 1.3 artifacts (byte-exact with the
//!   reference).
//! - [`read`] and [`validate`]: JSONL → [`ReplayArtifact`] (every line kept
//!   as JSON) or, streaming, straight to the typed [`ReplayView`]; every
//!   problem names its line and field. The typed view lives in `model`.
//! - [`verify`]: [`verify_replay`] re-runs the game through a
//!   [`GameResolver`] and classifies the file (`malformed`, `rejected`,
//!   `unverifiable`, `accepted-signed`, `accepted-unsigned`).
//!
//! Artifacts are kept as JSON objects (one per line) so they round-trip byte
//! for byte.
//!
//! ```
//! use gaos_kernel::replay::{Verdict, VerifyOptions, verify_replay};
//!
//! // No game is registered here: structurally fine, but nothing can re-run it.
//! let text = concat!(
//!     r#"{"format":"gaos.replay","formatVersion":"1.3","game":{"adapter":{"id":"g/reducer","version":"1"},"id":"g","version":"1"},"#,
//!     r#""kind":"header","levels":[{"id":"l","index":0,"level":{},"result":{"actionsUsed":0,"stars":null,"status":"ended"},"seed":1}],"#,
//!     r#""perm":[0],"seed":1,"seedPolicy":"explicit","sessionId":"s","totals":{"totalActionsUsed":0,"totalStars":0}}"#,
//!     "\n"
//! );
//! let no_games = |_: &gaos_kernel::GameRef| -> Option<std::sync::Arc<dyn gaos_kernel::Game>> { None };
//! let report = verify_replay(text, &no_games, &VerifyOptions::default());
//! assert_eq!(report.verdict, Verdict::Unverifiable);
//! ```

pub mod finalize;
pub mod format;
mod identities;
mod model;
pub mod problem;
pub mod read;
pub mod validate;
pub mod verify;

pub use finalize::{
    AdvancePolicy, FinalizeOptions, RunFinalizeOptions, finalize_replay, finalize_replay_value, finalize_run_replay,
    finalize_run_replay_value,
};
pub use format::{FILE_EXTENSION, FORMAT_ID, FormatVersion, MEDIA_TYPE, ReplayArtifact, ReplayBody};
pub use problem::{MAX_PROBLEMS, ProblemList, ReplayFormatError, ReplayProblem};
pub use read::{parse_replay_jsonl, read_jsonl, read_replay, read_replay_bytes};
pub use validate::{
    ChainFields, CommitMismatchView, InputView, InteractionView, LevelResultView, LevelStatus, LevelView, RecordBody,
    RecordView, ReplayView, ResolutionView, TimeoutView, TotalsView, validate_replay,
};
pub use verify::{
    GameResolver, LevelContext, ReplaySource, ReplayedLevel, SeatSignatureReport, SignatureReport, SignatureState,
    Stage, Verdict, VerifyOptions, VerifyReport, check_signatures, kernel_digest, verify_replay,
};
