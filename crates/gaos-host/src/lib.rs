//! The durable authoritative GAOS host.
//!
//! One single-writer actor per live session owns its kernel and runs the host
//! lane: prepare → persist (group-committed SQLite with `synchronous=FULL`,
//! or PostgreSQL fenced per batch) →
//! commit → publish. Sessions are rehydrated from their persisted events
//! after a restart. The HTTP API serves the five `gaos.ticks` v1 routes
//! (create, observe, act, attach, finalize) and host routes (credentials,
//! streams, snapshots, replays, transcripts, health, metrics, OpenAPI).
//!
//! ```no_run
//! # async fn run() -> Result<(), String> {
//! let options = gaos_host::serve::ServeOptions {
//!     data_dir: "./gaos-data".into(),
//!     listen: "127.0.0.1:8899".into(),
//!     host: gaos_host::host::HostOptions::new(gaos_games::GameRegistry::builtin()),
//!     limits: gaos_host::connections::ConnectionLimits::default(),
//!     // Or `StoreChoice::Postgres(..)`: one of a cluster (docs/cluster.md).
//!     store: gaos_host::serve::StoreChoice::Sqlite,
//! };
//! gaos_host::serve::serve(options, async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

// The public surface is what other crates and tests use: the host and its
// options, the in-process handles, `gaos serve`, the router, callers, lease
// types and the storage interface. Everything else is internal.
pub(crate) mod actor;
pub(crate) mod answers;
pub mod auth;
pub mod bench;
pub(crate) mod clock;
pub mod cluster;
pub mod config;
pub mod connections;
pub mod data_dir;
pub(crate) mod digest_key;
pub(crate) mod envelope;
pub(crate) mod error;
pub(crate) mod games;
pub mod handle;
pub mod host;
pub mod host_key;
pub mod http;
pub mod lease;
pub mod manifests;
pub(crate) mod metrics;
pub(crate) mod openapi;
pub(crate) mod receipts;
pub(crate) mod run_spec;
pub(crate) mod schedule;
pub(crate) mod seat_status;
pub mod serve;
pub(crate) mod signing;
pub mod storage;
pub(crate) mod wire;

pub use actor::{StreamItem, Subscription};
pub use answers::Answer;
pub use clock::HostClock;
pub use error::HostError;
pub use games::listing as game_listing;
pub use host::{Host, HostOptions, StartReport};
pub use metrics::Metrics;
