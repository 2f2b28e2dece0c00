//! The web pages of `gaos serve`: `/` (games, sessions, create), `/sessions/{id}`
//! (watch as the spectator), `/sessions/{id}/play` (play a seat) and `/replay`
//! (step through a replay), their assets under `/assets/`, and the one host
//! routes the pages need that the API lacks: `POST /v1/replays/frames` and
//! `POST /v1/games/{id}/render` (a game's own picture of a view).
//!
//! The pages are static shells: every page is the same small HTML document
//! naming one ES module, and the module talks to the host's JSON API with the
//! token the person gave it (URL fragment or form, kept in `sessionStorage`,
//! sent only in the `Authorization` header). So the pages need no host
//! state, serve nothing secret, and work offline: the assets are embedded
//! with `include_str!`, nothing is fetched from elsewhere.

pub mod arena_report;
mod arena_route;
mod assets;
pub mod bench_report;
mod bench_route;
mod frames;
mod frames_route;
mod guard;
mod pages;
mod render_route;

use std::path::PathBuf;
use std::sync::Arc;

use gaos_games::GameRegistry;

pub use arena_route::arena_reports_router;
pub use assets::{ASSETS, Asset};
pub use guard::{HostCheck, guarded};

/// What a bearer token is on this host: `None` when it is not one of its
/// tokens.
pub type Authorize = Arc<dyn Fn(&str) -> Option<TokenRole> + Send + Sync>;

/// The role of a host token, as the web routes need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRole {
    /// The operator (may re-simulate a replay at any level).
    Operator,
    /// A seat or spectator token of some session.
    Participant,
}

/// What the web routes need from the host.
#[derive(Clone)]
pub struct WebOptions {
    /// The games the host runs (replays are re-simulated with them).
    pub registry: GameRegistry,
    /// Token check for `POST /v1/replays/frames` and the render route
    /// (re-simulation costs CPU, so only the host's callers may ask for it;
    /// levels other than the game's own are the operator's).
    pub authorize: Authorize,
    /// `--bench-reports DIR`: serve the benchmark runs in `DIR` under
    /// `/bench/` (read-only, to anyone who reaches the host).
    pub bench_reports: Option<PathBuf>,
}

/// The application `gaos serve` runs: the host's own routes, other mounts
/// (the `/mcp` endpoint) and the pages, all behind the [`guarded`] `Host`
/// check with the security headers on every response.
pub fn application(
    host_routes: axum::Router,
    mounts: axum::Router,
    options: WebOptions,
    check: HostCheck,
) -> axum::Router {
    guarded(host_routes.merge(mounts).merge(router(options)), check)
}

/// The router of the pages, assets and the frames route. It has no fallback
/// of its own, so it can be merged into the host's router (which answers
/// unknown paths).
pub fn router(options: WebOptions) -> axum::Router {
    let bench = options.bench_reports.clone().map(bench_route::router);
    let router = pages::router().merge(frames_route::router(options.clone())).merge(render_route::router(options));
    match bench {
        Some(bench) => router.merge(bench),
        None => router,
    }
}
