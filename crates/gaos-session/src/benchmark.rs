//! Benchmark manifests, plans, scoring and the episode replay check
//! (lifecycle spec §5): the parts of RFC-013/RFC-015 benchmarks that both
//! the orchestrator (gaos-runner) and a host binding official scores
//! (gaos-host) need. They live in the contract so a host binds a score to
//! a manifest without depending on the runner.

pub mod error;
pub mod manifest;
pub mod plan;
pub mod replay_check;
pub mod scoring;

pub use error::BenchmarkError;
pub use manifest::{Aggregation, BenchmarkManifest, BenchmarkTask, MANIFEST_SCHEMA, SubmissionPolicy};
pub use plan::{EpisodePlan, plan_episodes};
pub use replay_check::{ReplayCheck, VerificationState, check_episode_replay, terminal_outcome};
pub use scoring::{Aggregate, BUILTIN_SCORERS, ScoringPlugin, aggregate_scores, scoring_plugin};
