//! Many hosts on one PostgreSQL (`gaos serve --store postgres://…`): each
//! session owned by one host at a time, every write fenced in the database,
//! any host answering any session. Membership and its heartbeat
//! (`membership.rs`), ownership and claims (`ownership.rs`), the routing
//! layer that forwards requests to the owner (`proxy.rs`).
//!
//! What moves a session is the restart path run by another process: the
//! new owner claims the row (a new epoch), then loads the session from its
//! checkpoint and tail as a restarted host does, and re-arms its timers
//! from the durable deadlines. Membership and timeouts only decide *when*
//! a session moves; the fence in the store decides whether a write counts.

mod claims;
mod membership;
mod ownership;

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Request};
use axum::response::Response;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use gaos_session::ErrorCode;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

pub use ownership::Route;

use crate::error::HostError;
use crate::metrics::Metrics;
use claims::Claims;
use membership::Membership;
use ownership::OwnerRow;

/// What the cluster asks of the host whose sessions it routes (the host
/// implements it; the cluster never reaches into the host otherwise).
pub trait SessionHome: Send + Sync {
    /// Whether a live actor of the session runs on this host.
    fn serves_locally(&self, session_id: &str) -> bool;
    /// Drop this host's actor of the session (it may have moved).
    fn forget_session(&self, session_id: &str);
    /// Drop every session in memory; returns how many there were.
    fn forget_all_sessions(&self) -> usize;
    /// Refuse to claim a session whose game or module this host does not serve.
    fn check_module_of(&self, session_id: &str, stored_config: &str) -> Result<(), HostError>;
    /// The host's counters (claims).
    fn metrics(&self) -> &Metrics;
    /// Load a session this host just claimed (so its timers run).
    fn load_owned<'a>(
        &'a self,
        session_id: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), HostError>> + Send + 'a>>;
}

/// The header counting the hosts a request was forwarded through.
pub const HOPS_HEADER: &str = "gaos-hops";

/// Headers that belong to one connection, not to the request.
fn is_hop_by_hop(name: &axum::http::HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "te" | "trailer" | "upgrade" | "host"
    )
}

/// The URI of `uri`'s path and query at `base` (`http://host:port`).
fn target(base: &str, uri: &axum::http::Uri) -> Result<axum::http::Uri, String> {
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    format!("{}{path}", base.trim_end_matches('/')).parse().map_err(|e| format!("bad owner URL {base:?}: {e}"))
}

/// A response naming a forward failure (the owner did not answer).
fn unreachable(node: &str, error: impl std::fmt::Display) -> Response {
    let body = HostError::unavailable(format!(
        "the host that owns this session ({node}) did not answer: {error}; retry (the session moves if it is gone)"
    ))
    .body();
    let mut response = Response::new(Body::from(gaos_json::canonical_json(&body)));
    *response.status_mut() = axum::http::StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(axum::http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(axum::http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// Failures of the cluster's own queries.
#[derive(Debug)]
pub struct ClusterError(String);

impl std::fmt::Display for ClusterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<tokio_postgres::Error> for ClusterError {
    fn from(e: tokio_postgres::Error) -> Self {
        ClusterError(crate::storage::postgres::describe(&e))
    }
}

impl From<deadpool_postgres::PoolError> for ClusterError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        ClusterError(format!("no PostgreSQL connection: {e}"))
    }
}

impl From<ClusterError> for HostError {
    fn from(e: ClusterError) -> Self {
        HostError::unavailable(format!("the cluster's database did not answer: {e}"))
    }
}

/// `gaos serve --store postgres://…` settings of this host.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// The PostgreSQL URL (`--store`, `GAOS_STORE`).
    pub store_url: String,
    /// This host's id (`--node-id`; default: the machine's host name and
    /// the bound port).
    pub node_id: Option<String>,
    /// The URL other hosts reach this one at (`--advertise`; default:
    /// `http://` and the bound address).
    pub advertise: Option<String>,
    /// How long a membership lives without a heartbeat (`--node-lease-ms`).
    pub node_lease: Duration,
}

impl ClusterOptions {
    /// The node id and advertised URL of a host bound to `bound`.
    pub fn identity(&self, bound: std::net::SocketAddr) -> (String, String) {
        let node_id = self.node_id.clone().unwrap_or_else(|| format!("{}:{}", host_name(), bound.port()));
        let advertise = self.advertise.clone().unwrap_or_else(|| format!("http://{bound}"));
        (node_id, advertise)
    }
}

/// The machine's host name (Linux), else `HOSTNAME`, else `gaos`.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "gaos".to_owned())
}

/// The default of `--node-lease-ms`.
pub const DEFAULT_NODE_LEASE_MS: u64 = 3_000;

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").field("node_id", &self.membership.node_id).finish_non_exhaustive()
    }
}

/// What a restarted host of a cluster took back ([`Cluster::reclaim_own`]).
#[derive(Debug, Default)]
pub struct Reclaimed {
    /// Sessions claimed again (a new epoch).
    pub claimed: Vec<String>,
    /// Sessions left unclaimed, with why (their game module changed).
    pub refused: Vec<(String, String)>,
}

/// This host's membership of a cluster.
pub struct Cluster {
    pool: Pool,
    membership: Membership,
    http: HttpClient<HttpConnector, Body>,
    claims: Claims,
}

impl Cluster {
    /// Join: a connection pool, and a first heartbeat (a host that cannot
    /// reach the database does not start). Returns the database's clock.
    pub async fn join(options: &ClusterOptions, bound: std::net::SocketAddr) -> Result<(Arc<Cluster>, i64), String> {
        let config: tokio_postgres::Config = options
            .store_url
            .parse()
            .map_err(|e| format!("--store {}: {e}", crate::storage::postgres::redact(&options.store_url)))?;
        let manager = Manager::from_config(
            config,
            tokio_postgres::NoTls,
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(8)
            .wait_timeout(Some(Duration::from_secs(5)))
            .create_timeout(Some(Duration::from_secs(5)))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(|e| format!("cannot build the PostgreSQL pool: {e}"))?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(2)));
        let http = HttpClient::builder(TokioExecutor::new()).build(connector);
        let (node_id, advertise) = options.identity(bound);
        let membership = Membership::new(node_id, advertise, options.node_lease);
        let cluster = Arc::new(Cluster { pool, membership, http, claims: Claims::default() });
        let db_now =
            cluster.membership.heartbeat(&cluster.pool).await.map_err(|e| format!("cannot join the cluster: {e}"))?;
        Ok((cluster, db_now))
    }

    /// This host's node id.
    pub fn node_id(&self) -> &str {
        &self.membership.node_id
    }

    /// Whether this host may serve its sessions from memory now.
    pub fn is_live(&self) -> bool {
        self.membership.is_live()
    }

    /// Where the requests of `session_id` go now: to this host (claiming the
    /// session when its owner's membership lapsed, or after this host
    /// restarted), to the live host that owns it, or nowhere.
    pub async fn route(&self, host: &dyn SessionHome, session_id: &str) -> Result<Route, HostError> {
        if self.is_live() && host.serves_locally(session_id) {
            return Ok(Route::Local { epoch: 0 });
        }
        for _ in 0..3 {
            let Some(row) = ownership::owner_of(&self.pool, session_id).await? else {
                host.forget_session(session_id);
                return Ok(Route::Unknown);
            };
            if let Some(route) = self.settled(host, session_id, &row)? {
                return Ok(route);
            }
            // One claim per session at a time on this host: a second request
            // that raced the first finds its claim below instead of claiming
            // again (which would fence the load the first claim started).
            let _turn = self.claims.turn(session_id).await;
            let Some(row) = ownership::owner_of(&self.pool, session_id).await? else {
                host.forget_session(session_id);
                return Ok(Route::Unknown);
            };
            if let Some(route) = self.settled(host, session_id, &row)? {
                return Ok(route);
            }
            host.check_module_of(session_id, &row.config)?;
            // Whatever this host kept of the session predates the claim.
            host.forget_session(session_id);
            match ownership::claim(&self.pool, session_id, self.node_id(), &row.owner, row.epoch).await? {
                Some(epoch) => {
                    self.claims.record(session_id, epoch);
                    if row.owner != self.node_id() {
                        host.metrics().add_claim();
                        tracing::info!(session = %session_id, from = %row.owner, epoch, "claimed a session");
                    }
                    return Ok(Route::Local { epoch });
                }
                // Another host claimed it first: look again.
                None => continue,
            }
        }
        Err(HostError::unavailable(format!("session {session_id} is being claimed by several hosts; retry")))
    }

    /// Where a session whose row reads `row` goes without a claim: to its
    /// live owner elsewhere, or here when the row still names the epoch this
    /// host claimed (its actor may be loading). `None`: it needs a claim.
    fn settled(&self, host: &dyn SessionHome, session_id: &str, row: &OwnerRow) -> Result<Option<Route>, HostError> {
        if row.owner != self.node_id() && row.live {
            self.claims.forget(session_id);
            host.forget_session(session_id);
            let url = row.url.clone().unwrap_or_default();
            return Ok(Some(Route::Remote { node_id: row.owner.clone(), url }));
        }
        if !self.is_live() {
            return Err(HostError::unavailable(
                "this host's cluster membership has lapsed and is being renewed; retry shortly",
            ));
        }
        if row.owner == self.node_id() && self.claims.epoch(session_id) == Some(row.epoch) {
            return Ok(Some(Route::Local { epoch: row.epoch }));
        }
        Ok(None)
    }

    /// Forward a request to the host at `url` and stream its answer back.
    pub(crate) async fn forward(&self, url: &str, parts: &Parts, body: Bytes, hops: u32) -> Response {
        let uri = match target(url, &parts.uri) {
            Ok(uri) => uri,
            Err(e) => return unreachable(url, e),
        };
        let mut request = Request::builder().method(parts.method.clone()).uri(uri);
        if let Some(headers) = request.headers_mut() {
            for (name, value) in &parts.headers {
                if !is_hop_by_hop(name) {
                    headers.append(name.clone(), value.clone());
                }
            }
            headers.insert(HOPS_HEADER, HeaderValue::from(hops));
        }
        let request = match request.body(Body::from(body)) {
            Ok(request) => request,
            Err(e) => return unreachable(url, e),
        };
        match self.http.request(request).await {
            Ok(response) => {
                let (mut parts, body) = response.into_parts();
                let headers = std::mem::take(&mut parts.headers);
                let mut name = None;
                for (key, value) in headers {
                    // A name repeats as `None` for the further values of a header.
                    if key.is_some() {
                        name = key;
                    }
                    if let Some(name) = &name
                        && !is_hop_by_hop(name)
                    {
                        parts.headers.append(name.clone(), value);
                    }
                }
                Response::from_parts(parts, Body::new(body))
            }
            Err(e) => unreachable(url, e),
        }
    }

    /// The background work of a member: the heartbeat (a third of the lease)
    /// and the sweep that adopts sessions of lapsed hosts (once a lease).
    pub fn spawn_background(self: &Arc<Self>, host: Arc<dyn SessionHome>) {
        let cluster = Arc::clone(self);
        let beat_host = Arc::clone(&host);
        tokio::spawn(async move {
            let every = cluster.membership.lease / 3;
            loop {
                tokio::time::sleep(every).await;
                if !cluster.is_live() {
                    // Stopped or cut off for longer than the lease: other
                    // hosts may own our sessions now. Forget them all before
                    // counting as live again; each reloads (or forwards) on
                    // its next request.
                    cluster.claims.clear();
                    let dropped = beat_host.forget_all_sessions();
                    if dropped > 0 {
                        tracing::warn!(dropped, "membership lapsed; every session in memory was dropped");
                    }
                }
                if let Err(e) = cluster.membership.heartbeat(&cluster.pool).await {
                    tracing::warn!(error = %e, "a cluster heartbeat failed");
                }
            }
        });
        let cluster = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(cluster.membership.lease).await;
                if let Err(e) = cluster.sweep(host.as_ref()).await {
                    tracing::warn!(error = %e, "the sweep for sessions of lapsed hosts failed");
                }
            }
        });
    }

    /// Adopt the live sessions of lapsed hosts this host is the rendezvous
    /// choice for (or any such session orphaned for a while), so their
    /// timers run again without waiting for a request.
    async fn sweep(&self, host: &dyn SessionHome) -> Result<(), HostError> {
        if !self.is_live() {
            return Ok(());
        }
        let nodes = ownership::live_nodes(&self.pool).await?;
        for (session_id, _, _) in ownership::orphans(&self.pool, 256).await? {
            if ownership::rendezvous(&session_id, &nodes) != Some(self.node_id()) {
                continue;
            }
            match self.route(host, &session_id).await {
                Ok(Route::Local { .. }) => {
                    if let Err(e) = host.load_owned(&session_id).await {
                        tracing::warn!(session = %session_id, error = %e, "an adopted session did not load");
                    }
                }
                Ok(_) => {}
                Err(e) if e.code == ErrorCode::ModuleChanged => {}
                Err(e) => tracing::warn!(session = %session_id, error = %e, "adopting a session failed"),
            }
        }
        Ok(())
    }

    /// The sessions this host owned before it restarted, claimed again, and
    /// those it would not claim (a game module that changed), with why.
    pub async fn reclaim_own(&self, host: &dyn SessionHome) -> Result<Reclaimed, HostError> {
        let mut reclaimed = Reclaimed::default();
        for (session_id, _) in ownership::owned_by(&self.pool, self.node_id()).await? {
            match self.route(host, &session_id).await {
                Ok(Route::Local { .. }) => reclaimed.claimed.push(session_id),
                Ok(_) => {}
                Err(e) if e.code == ErrorCode::ModuleChanged => reclaimed.refused.push((session_id, e.message)),
                Err(e) => tracing::warn!(session = %session_id, error = %e, "taking back a session failed"),
            }
        }
        Ok(reclaimed)
    }

    /// Leave the cluster (graceful shutdown).
    pub async fn leave(&self) {
        if let Err(e) = self.membership.leave(&self.pool).await {
            tracing::warn!(error = %e, "leaving the cluster failed; the membership lapses on its own");
        }
    }

    /// Check that this host shares the cluster's operator token and host
    /// key (compared by one-way digests kept in the database; the first
    /// host to start records them). Hosts that disagree would hand out
    /// tokens and receipts the others cannot check.
    pub async fn agree_on_secrets(&self, operator_token_hash: &str, host_key_fingerprint: &str) -> Result<(), String> {
        let client = self.pool.get().await.map_err(|e| format!("cannot reach the cluster's database: {e}"))?;
        for (name, mine, what) in [
            (
                "operator-token-sha256",
                operator_token_hash,
                "operator token (GAOS_OPERATOR_TOKEN or DIR/operator-token)",
            ),
            ("host-key-fingerprint", host_key_fingerprint, "host key (DIR/host-key)"),
        ] {
            client
                .execute(
                    "INSERT INTO gaos_cluster_facts (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                    &[&name, &mine],
                )
                .await
                .map_err(|e| format!("cannot record the cluster's {what}: {}", ClusterError::from(e)))?;
            let row = client
                .query_one("SELECT value FROM gaos_cluster_facts WHERE name = $1", &[&name])
                .await
                .map_err(|e| format!("cannot read the cluster's {what}: {}", ClusterError::from(e)))?;
            let theirs: String = row.get(0);
            if theirs != mine {
                return Err(format!(
                    "this host's {what} differs from the one the other hosts of this cluster use; give every host \
                     the same one (see docs/cluster.md)"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_keep_path_and_query() {
        let uri: axum::http::Uri = "/v1/sessions/s/stream?after=3".parse().expect("a URI");
        assert_eq!(
            target("http://10.0.0.2:8899/", &uri).expect("a target").to_string(),
            "http://10.0.0.2:8899/v1/sessions/s/stream?after=3"
        );
    }
}
