//! Benchmark episodes on an in-process host: [`InProcessEpisodeHost`]
//! implements gaos-runner's [`EpisodeHost`] with [`InProcessSessionHandle`]s,
//! so `HostedEpisodeFactory<InProcessEpisodeHost>` runs every episode as an
//! ordinary durable session of this host.
//!
//! ```no_run
//! # async fn run(manifest: gaos_runner::benchmark::BenchmarkManifest) -> Result<(), String> {
//! use gaos_runner::benchmark::{DriverAssignment, GameInfo, HostedEpisodeFactory};
//! use gaos_runner::drivers::DriverSettings;
//!
//! let host = gaos_host::bench::open_bench_host(std::path::Path::new("./run/host"), gaos_games::GameRegistry::builtin()).await.map_err(|e| e.to_string())?;
//! let game = host.registry().get(&manifest.benchmark.adapter).ok_or("unknown game")?;
//! let factory = HostedEpisodeFactory::new(
//!     gaos_host::bench::InProcessEpisodeHost::new(&host),
//!     &manifest,
//!     GameInfo::from_game(game.as_ref()),
//!     DriverAssignment::parse(&["random".into()])?,
//!     DriverSettings::new(0, "player"),
//! )
//! .map_err(|e| e.to_string())?;
//! # let _ = factory; Ok(())
//! # }
//! ```

use std::path::Path;

use gaos_games::GameRegistry;
use gaos_json::Value;
use gaos_session::signing::SeatSigningKey;
use gaos_session::{AttachRequest, BoxFuture, SessionHandle};
use gaos_session::{CreatedSession, EpisodeHost, reissued_token};
use gaos_session::{SessionError, SessionPolicy};

use crate::auth::Caller;
use crate::config::LeaseBounds;
use crate::error::HostError;
use crate::handle::{InProcessSessionHandle, open_local_host, session_error};
use crate::host::{Host, HostOptions};

/// Controller leases of a benchmark's private host last a week: a run
/// stopped and resumed within that time records no lapse, so its replays
/// equal an uninterrupted run's.
pub const BENCH_LEASE_MS: u64 = 7 * 24 * 3_600_000;

/// Open the private host of one benchmark run over SQLite in `dir`
/// (created if needed; reopened on resume), serving the games of
/// `registry`, with [`BENCH_LEASE_MS`] leases.
pub async fn open_bench_host(dir: &Path, registry: GameRegistry) -> Result<Host, HostError> {
    let options = HostOptions {
        lease_bounds: LeaseBounds { min_ms: 1_000, max_ms: BENCH_LEASE_MS, default_ms: BENCH_LEASE_MS },
        ..HostOptions::new(registry)
    };
    open_local_host(dir, options).await
}

/// [`EpisodeHost`] over a [`Host`] in this process: creates as the
/// operator, acts with the seat tokens (no authorization is skipped), and
/// names each episode's session (the host is private to the run).
#[derive(Clone)]
pub struct InProcessEpisodeHost {
    host: Host,
}

impl InProcessEpisodeHost {
    /// Episodes on `host`.
    pub fn new(host: &Host) -> Self {
        InProcessEpisodeHost { host: host.clone() }
    }
}

impl EpisodeHost for InProcessEpisodeHost {
    fn create<'a>(
        &'a self,
        request: &'a Value,
        policy: &'a SessionPolicy,
        signing: Option<SeatSigningKey>,
    ) -> BoxFuture<'a, Result<CreatedSession, SessionError>> {
        Box::pin(async move {
            let created = InProcessSessionHandle::create(&self.host, request, policy).await?;
            let handle = created.handle.with_signing_key(signing);
            Ok(CreatedSession {
                session_id: created.session_id,
                handle: Box::new(handle),
                seat_tokens: created.seat_tokens,
            })
        })
    }

    fn attach<'a>(
        &'a self,
        session_id: &'a str,
        seat_token: &'a str,
        request: &'a AttachRequest,
        policy: &'a SessionPolicy,
        signing: Option<SeatSigningKey>,
    ) -> BoxFuture<'a, Result<Box<dyn SessionHandle>, SessionError>> {
        Box::pin(async move {
            let handle = InProcessSessionHandle::attach(&self.host, seat_token, session_id, request, policy).await?;
            let handle = handle.with_signing_key(signing);
            Ok(Box::new(handle) as Box<dyn SessionHandle>)
        })
    }

    fn adopt<'a>(
        &'a self,
        session_id: &'a str,
        seat: &'a str,
        seat_token: &'a str,
        policy: &'a SessionPolicy,
    ) -> BoxFuture<'a, Result<Box<dyn SessionHandle>, SessionError>> {
        Box::pin(async move {
            let handle = InProcessSessionHandle::adopt(&self.host, seat_token, session_id, seat, policy).await?;
            Ok(Box::new(handle) as Box<dyn SessionHandle>)
        })
    }

    fn transcript<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Result<String, SessionError>> {
        Box::pin(async move { self.host.transcript(&Caller::Operator, session_id).await.map_err(session_error) })
    }

    fn reissue_seat_token<'a>(
        &'a self,
        session_id: &'a str,
        seat: &'a str,
    ) -> BoxFuture<'a, Result<String, SessionError>> {
        Box::pin(async move {
            let answer =
                self.host.reissue_seat_token(&Caller::Operator, session_id, seat).await.map_err(session_error)?;
            reissued_token(&answer)
        })
    }

    fn names_sessions(&self) -> bool {
        true
    }
}
