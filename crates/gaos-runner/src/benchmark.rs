//! Benchmark orchestration (RFC-018 §9, lifecycle spec §5): manifests,
//! canonical plans, bounded parallel execution with checkpoints and resume,
//! scoring and aggregation, bundles and their verification.
//!
//! A benchmark episode is an ordinary session. Orchestration asks a
//! [`SessionFactory`] for the episode's [`crate::SessionHandle`]s (created,
//! or attached when a resumed run continues it) and drives every seat with
//! [`crate::run_session`]; there is no benchmark-specific handle or runner.
//!
//! ```text
//! manifest ─► plan ─► run_benchmark (jobs workers; checkpoint on start and completion)
//!                        └─ per episode: factory.create/attach ─► run_session ─► finalize ─► score
//!          ─► aggregate ─► pack_run (bundle files, digests) ─► verify_bundle (replays re-simulated)
//! ```
//!
//! # Decisions where the reference is silent (\[P\])
//!
//! - `benchmark.adapter` is the id of the game every episode plays, and a
//!   task id names one of its levels; a level's `maxSteps` (when it has
//!   one) becomes the task's `maxSteps`. The session seed is the plan's seed.
//! - Each episode's drivers are seeded from its plan entry alone
//!   ([`EpisodePlan::driver_seed`]), so results do not depend on `jobs`.
//! - Completed entries record `steps`, model `tokens`, `cost` and
//!   `provider` when the driver reports them, and `wallClockMs`, measured on
//!   [`BenchmarkOptions::clock`] and recorded once when the episode
//!   completes (a resume never measures a completed episode again). On the
//!   default monotonic clock two runs differ only in `wallClockMs`; on a
//!   simulated clock ([`crate::SteppingClock`]) a resumed run packs the same
//!   bundle as an uninterrupted one.
//! - The checkpoint is made durable when an episode starts (its in-progress
//!   entry, before any action) and when it completes: as an fsynced line of
//!   `checkpoint.json.journal`, with `checkpoint.json` (the §5 shape)
//!   rewritten atomically whenever the journal outgrows it and at the end
//!   of every run, so a run of n episodes writes O(n) bytes, not O(n²).
//!   An in-progress entry's attachment holds seat credentials, so both
//!   files are mode 0600.
//! - Resuming an attached episode moves its drivers past the commands the
//!   session already holds ([`crate::AgentDriver::resume_after`]), so no
//!   accepted action is repeated and a seeded random driver continues with
//!   exactly the draws it would have made.

pub mod bundle;
pub mod checkpoint;
pub mod error;
pub mod factory;
pub mod hosted;
pub use gaos_session::benchmark::manifest;
pub mod orchestrate;
pub use gaos_session::benchmark::plan;
pub use gaos_session::benchmark::scoring;
pub mod verify;

pub use bundle::{
    BUNDLE_SCHEMA, Bundle, BundleEpisode, BundleReadError, PackedBundle, Submission, pack_run, pack_run_with_module,
    package_digest, read_bundle_dir, write_bundle_dir,
};
pub use checkpoint::{
    AgentIdentity, AgentKind, CHECKPOINT_SCHEMA, Checkpoint, CompletedEpisode, InProgressEpisode, ResourceObservations,
    write_atomic,
};
pub use error::{BenchmarkError, FactoryError};
pub use factory::{
    DriverAssignment, EpisodeSeat, EpisodeSession, SessionFactory, accepted_commands, episode_level, episode_policy,
    episode_request, episode_session_id,
};
pub use gaos_session::{
    CreatedSession, EpisodeHost, encode_uri_component, existing_head_from_observation, reissued_token,
};
pub use hosted::{GameInfo, HostedEpisodeFactory};
pub use manifest::{Aggregation, BenchmarkManifest, BenchmarkTask, MANIFEST_SCHEMA};
pub use orchestrate::{BenchmarkObserver, BenchmarkOptions, BenchmarkRun, BenchmarkStatus, run_benchmark};
pub use plan::{EpisodePlan, plan_episodes};
pub use scoring::{Aggregate, BUILTIN_SCORERS, ScoringPlugin, aggregate_scores, scoring_plugin};
pub use verify::{
    BundleVerification, EpisodeVerification, EpisodeVerifier, ReplayEpisodeVerifier, VerificationState, empty_facts,
    verify_bundle,
};
