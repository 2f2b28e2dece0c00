//! `gaos serve`: open the data directory, serve HTTP, rehydrate the active
//! sessions in the background.

use std::path::PathBuf;
use std::sync::Arc;

use crate::auth::{OperatorTokenSource, operator_token};
use crate::cluster::{Cluster, ClusterOptions};
use crate::connections::{ConnectionLimits, serve_bounded};
use crate::host::{Host, HostOptions};
use crate::storage::sqlite::{SqliteReader, SqliteWriter};
use crate::storage::{StoreReader, StoreWriter};

/// Settings of `gaos serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub data_dir: PathBuf,
    pub listen: String,
    pub host: HostOptions,
    /// The bounds on client connections (caps and timeouts).
    pub limits: ConnectionLimits,
    /// Where sessions are stored.
    pub store: StoreChoice,
}

/// Where a host keeps its sessions (`gaos serve --store`).
#[derive(Debug, Clone, Default)]
pub enum StoreChoice {
    /// The embedded SQLite database in the data directory (the default).
    #[default]
    Sqlite,
    /// PostgreSQL, shared by the hosts of a cluster (`crate::cluster`).
    Postgres(ClusterOptions),
}

/// Run the host until `shutdown` resolves.
pub async fn serve(
    options: ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    serve_with_routes(options, |_, _| axum::Router::new(), shutdown).await
}

/// [`serve`], with more routes merged into the host's router: `extra` gets
/// the opened host and the bound address (to reach the host's own API over
/// loopback) and returns a router without a fallback. This is how the
/// binary mounts layers above the host (the MCP endpoint) without the host
/// depending on them.
pub async fn serve_with_routes(
    options: ServeOptions,
    extra: impl FnOnce(&Host, std::net::SocketAddr) -> axum::Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    serve_with_app(options, |host, address, routes| routes.merge(extra(host, address)), shutdown).await
}

/// [`serve`], with the whole application made by `app` from the opened
/// host, the bound address and the host's own router: routes merged beside
/// the host's and layers around all of them (the binary's `Host` and
/// `Origin` checks and security headers), without the host depending on
/// them. Every error stays JSON.
pub async fn serve_with_app(
    options: ServeOptions,
    app: impl FnOnce(&Host, std::net::SocketAddr, axum::Router) -> axum::Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    // The lock comes first: nothing in the directory is read while another
    // host may own it. It is held until serving ends.
    let lock = crate::data_dir::open_and_lock(&options.data_dir)?;
    let (token, source) = operator_token(&options.data_dir)
        .map_err(|e| format!("cannot read or create the operator token in {}: {e}", options.data_dir.display()))?;
    let listener = tokio::net::TcpListener::bind(&options.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", options.listen))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    let host_key = crate::host_key::HostKey::load_or_create(&options.data_dir)?;
    let mut host_options = HostOptions { host_key, ..options.host.clone() };
    let (writer, reader, store_line): (Box<dyn StoreWriter>, Arc<dyn StoreReader>, String) = match &options.store {
        StoreChoice::Sqlite => {
            let (writer, reader) = open_sqlite(&options.data_dir)?;
            let line = format!(
                "data in {} (SQLite, WAL, synchronous=FULL; locked by {})",
                options.data_dir.join("gaos.sqlite3").display(),
                lock.path().display()
            );
            (Box::new(writer), Arc::new(reader), line)
        }
        StoreChoice::Postgres(cluster_options) => {
            let (writer, reader) = crate::storage::postgres::open(&cluster_options.store_url)
                .await
                .map_err(|e| format!("cannot open the PostgreSQL store: {e}"))?;
            let (cluster, db_now_ms) = Cluster::join(cluster_options, address).await?;
            cluster.agree_on_secrets(&crate::auth::token_hash(&token), &host_options.host_key.fingerprint()).await?;
            host_options.node_id = cluster.node_id().to_owned();
            host_options.cluster = Some(cluster);
            host_options.clock_anchor_ms = Some(db_now_ms);
            let line = format!(
                "cluster node {} advertised at {} on {} (PostgreSQL, schema version {}; node lease {} ms)",
                host_options.node_id,
                cluster_options.identity(address).1,
                crate::storage::postgres::redact(&cluster_options.store_url),
                crate::storage::postgres::schema_version(),
                cluster_options.node_lease.as_millis()
            );
            (Box::new(writer), Arc::new(reader), line)
        }
    };
    // Only credentials are read before the port opens: sessions load on
    // first use, and the restart pass runs once the port answers, so
    // `/healthz` does not wait on the data size.
    let host = Host::open_lazy(writer, reader, &token, host_options)
        .await
        .map_err(|e| format!("cannot start the host: {e}"))?;
    println!("gaos serve: listening on http://{address}");
    println!("gaos serve: {store_line}");
    let limits = &options.limits;
    println!(
        "gaos serve: at most {} connections ({} streams); header timeout {} ms, body timeout {} ms, idle timeout {} ms",
        limits.max_connections,
        limits.max_streams,
        limits.header_timeout.as_millis(),
        limits.body_timeout.as_millis(),
        limits.idle_timeout.as_millis()
    );
    match source {
        OperatorTokenSource::Environment => println!("gaos serve: operator token from GAOS_OPERATOR_TOKEN"),
        OperatorTokenSource::File(path) => println!("gaos serve: operator token in {} (mode 0600)", path.display()),
        OperatorTokenSource::Created(path) => {
            println!("gaos serve: created an operator token in {} (mode 0600)", path.display());
            println!(
                "gaos serve: create a session with:\n  curl -s -X POST http://{address}/v1/sessions \\\n    -H \"Authorization: Bearer $(cat {})\" -H 'content-type: application/json' \\\n    -d '{{\"game\":\"conformance/hilo\"}}'",
                path.display()
            );
        }
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    // Errors of the mounted routes (the /mcp transport) are JSON too. The
    // host's own layer (http/host_layer.rs) forwards a cluster's sessions to
    // their owner and names the serving node; it sits inside the
    // application's layers (the binary's Host check), so a request is
    // checked before it is forwarded.
    let own = crate::http::router(host.clone());
    let routes = app(&host, address, own).layer(crate::http::JsonErrors);
    let pass = tokio::spawn(rehydrate_in_background(host.clone()));
    if let Some(cluster) = host.cluster() {
        cluster.spawn_background(Arc::new(host.clone()));
    }
    let served = serve_bounded(listener, routes, options.limits, shutdown).await;
    pass.abort();
    if let Some(cluster) = host.cluster() {
        cluster.leave().await;
    }
    drop(lock);
    served
}

/// The data directory's SQLite database, opened owner-only.
fn open_sqlite(data_dir: &std::path::Path) -> Result<(SqliteWriter, SqliteReader), String> {
    let db_path = data_dir.join("gaos.sqlite3");
    // Owner-only before SQLite opens it (its -wal and -shm take the same
    // mode); files from before this rule are tightened.
    crate::data_dir::prepare_private_file(&db_path)
        .map_err(|e| format!("cannot create {} (mode 0600): {e}", db_path.display()))?;
    for suffix in ["-wal", "-shm"] {
        let side = data_dir.join(format!("gaos.sqlite3{suffix}"));
        crate::data_dir::tighten_if_present(&side).map_err(|e| format!("cannot make {} 0600: {e}", side.display()))?;
    }
    crate::storage::sqlite::open(&db_path).map_err(|e| format!("cannot open {}: {e}", db_path.display()))
}

/// The restart pass of `gaos serve`, after the port is open. A host of a
/// cluster takes back only the sessions it owned (the others are their
/// owners' or, once those lapse, the sweep's).
async fn rehydrate_in_background(host: Host) {
    let started = std::time::Instant::now();
    let report = match host.cluster() {
        Some(cluster) => match cluster.reclaim_own(&host).await {
            Ok(reclaimed) => host.rehydrate_claimed(reclaimed).await,
            Err(e) => {
                host.finish_startup_pass();
                Err(e)
            }
        },
        None => host.rehydrate_active().await,
    };
    match report {
        Ok(report) => {
            for (id, why) in &report.failed {
                tracing::error!(session = %id, reason = %why, "session could not be rehydrated");
            }
            println!(
                "gaos serve: rehydrated {} active session(s), {} failed, in {} ms",
                report.loaded.len(),
                report.failed.len(),
                started.elapsed().as_millis()
            );
        }
        Err(e) => tracing::error!(error = %e, "the restart pass could not list the stored sessions"),
    }
}
