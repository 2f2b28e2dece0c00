//! `gaos serve`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use gaos_games::GameRegistry;
use gaos_host::HostOptions;
use gaos_host::auth::Caller;
use gaos_host::connections::{self, ConnectionLimits};
use gaos_host::serve::{ServeOptions, serve_with_app};
use gaos_mcp::http::McpHttpOptions;
use gaos_runner::CancellationToken;

/// Logs go to stderr; `RUST_LOG` overrides the default `info` level.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// The connection bounds of `gaos serve` (see SECURITY.md, "Connection limits").
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Open client connections at most, streams included. At the cap the
    /// host stops accepting and new clients wait in the kernel backlog.
    /// Default: half of what the open-files limit leaves after 256
    /// descriptors for the database and the runtime.
    #[arg(long)]
    max_connections: Option<usize>,
    /// Open streams (SSE /v1/sessions/{id}/stream, GET /mcp) at most; more
    /// answer 503 too_many_streams. Default: half of --max-connections.
    #[arg(long)]
    max_streams: Option<usize>,
    /// A request head must arrive completely within this (ms), else the
    /// connection is closed.
    #[arg(long, default_value_t = 10_000)]
    header_timeout_ms: u64,
    /// A request body must arrive completely within this (ms) of its head.
    #[arg(long, default_value_t = 30_000)]
    body_timeout_ms: u64,
    /// A keep-alive connection with no request in flight is closed after
    /// this (ms). Streams are never idle while they stream.
    #[arg(long, default_value_t = 60_000)]
    idle_timeout_ms: u64,
    /// A submitted command's canonical JSON may be this many bytes at most;
    /// a larger one is refused with 413 command_too_large.
    #[arg(long, default_value_t = gaos_host::host::DEFAULT_MAX_COMMAND_BYTES)]
    max_command_bytes: usize,
    /// Keep a session this long after its creation (ms); older sessions
    /// answer 410 expired on every route. Default: kept for ever.
    #[arg(long)]
    retention_ms: Option<u64>,
    /// The retention policy id a create's `policy.durability.retention`
    /// must name (with --retention-ms).
    #[arg(long, default_value = gaos_host::host::retention::DEFAULT_RETENTION_POLICY_ID)]
    retention_policy_id: String,
    /// A session stores a kernel checkpoint every this many transitions and
    /// then keeps only the events after it in memory; a restart replays at
    /// most this many events per session. 0: never (the whole log stays in
    /// memory and is replayed).
    #[arg(long, default_value_t = gaos_host::host::DEFAULT_CHECKPOINT_EVERY)]
    checkpoint_every: u64,
}

impl LimitArgs {
    fn retention(&self) -> Result<Option<gaos_host::host::Retention>, String> {
        match self.retention_ms {
            None => Ok(None),
            Some(0) => Err("--retention-ms must be at least 1".into()),
            Some(max_age_ms) => {
                Ok(Some(gaos_host::host::Retention { policy_id: self.retention_policy_id.clone(), max_age_ms }))
            }
        }
    }

    fn limits(&self) -> Result<ConnectionLimits, String> {
        let max_connections = self.max_connections.unwrap_or_else(connections::default_max_connections);
        let max_streams = self.max_streams.unwrap_or_else(|| connections::default_max_streams(max_connections));
        if max_connections == 0 || max_streams == 0 {
            return Err("--max-connections and --max-streams must be at least 1".into());
        }
        if max_streams > max_connections {
            return Err(format!("--max-streams ({max_streams}) cannot exceed --max-connections ({max_connections})"));
        }
        if self.header_timeout_ms == 0 || self.body_timeout_ms == 0 || self.idle_timeout_ms == 0 {
            return Err("--header-timeout-ms, --body-timeout-ms and --idle-timeout-ms must be at least 1".into());
        }
        Ok(ConnectionLimits {
            max_connections,
            max_streams,
            header_timeout: Duration::from_millis(self.header_timeout_ms),
            body_timeout: Duration::from_millis(self.body_timeout_ms),
            idle_timeout: Duration::from_millis(self.idle_timeout_ms),
        })
    }
}

/// `gaos serve`'s flags.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Data directory for the embedded database and operator token.
    #[arg(long, default_value = "./gaos-data")]
    pub data: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8899")]
    pub listen: String,
    /// Shortest controller lease a create or attach may ask for (ms).
    #[arg(long, default_value_t = 1_000)]
    pub lease_min_ms: u64,
    /// Longest controller lease (ms); also the default, clamped to the bounds.
    #[arg(long, default_value_t = 300_000)]
    pub lease_max_ms: u64,
    /// Testing only: let the operator move the host clock forward
    /// (POST /v1/admin/clock). Never use in production.
    #[arg(long, hide = true)]
    pub test_clock: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// Also serve the game module FILE.mjs (repeatable); a module with
    /// the id of a built-in game replaces it.
    #[arg(long = "game", value_name = "FILE")]
    pub game_modules: Vec<PathBuf>,
    /// Also serve every game module (*.mjs, *.js) directly in DIR (repeatable).
    #[arg(long = "games", value_name = "DIR")]
    pub game_dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub module_limits: crate::modules::ModuleLimitArgs,
    /// Serve the benchmark runs in DIR (output directories of `gaos
    /// bench run`) at /bench/: each run's report, its episodes opening
    /// in the replay viewer. Read-only, and open to anyone who reaches
    /// the host (page links carry no token).
    #[arg(long, value_name = "DIR")]
    pub bench_reports: Option<PathBuf>,
    /// Serve the tournaments in DIR (output directories of `gaos arena
    /// run`) at /arena/: each one's standings and report, its matches
    /// opening in the replay viewer. Read-only, only regular files under
    /// DIR, and open to anyone who reaches the host.
    #[arg(long, value_name = "DIR")]
    pub arena_reports: Option<PathBuf>,
    /// Hold the benchmark manifest FILE (repeatable): an official
    /// evaluation whose policy names its digest is bound to it, also
    /// when the create request does not carry the manifest.
    #[arg(long = "manifest", value_name = "FILE")]
    pub manifests: Vec<PathBuf>,
    /// Also answer requests for the host name NAME (repeatable; a port is
    /// ignored). A host listening on a loopback address answers only
    /// loopback names (localhost, 127.0.0.1, [::1]) by default, so a web page
    /// that points its own name at this machine (DNS rebinding) reads nothing;
    /// one listening elsewhere answers any name unless this names some.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// MCP sessions kept at most on /mcp (the oldest is closed first; a
    /// token holds at most 4, and a session idle for 2 minutes is closed).
    #[arg(long, default_value_t = gaos_mcp::http::SessionLimits::default().per_host)]
    pub mcp_max_sessions: usize,
}

/// `--manifest FILE`s, read and validated, by digest.
fn read_manifests(files: &[PathBuf]) -> Result<gaos_host::manifests::ManifestRegistry, String> {
    let mut registry = gaos_host::manifests::ManifestRegistry::new();
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("--manifest {}: {e}", file.display()))?;
        let manifest = gaos_runner::benchmark::BenchmarkManifest::parse(&text)
            .map_err(|e| format!("--manifest {}: {e}", file.display()))?;
        let (id, version) = (manifest.benchmark.id.clone(), manifest.benchmark.version.clone());
        let digest = registry.register(manifest).map_err(|e| format!("--manifest {}: {e}", file.display()))?;
        eprintln!("gaos serve: official evaluations of {id} {version} bind to manifest {digest}");
    }
    Ok(registry)
}

/// Run the host until SIGINT or SIGTERM, with the game modules the flags
/// name added to `registry`.
pub fn run(registry: &GameRegistry, args: ServeArgs) -> ExitCode {
    let ServeArgs {
        data,
        listen,
        lease_min_ms,
        lease_max_ms,
        test_clock,
        limits,
        store,
        game_modules,
        game_dirs,
        module_limits,
        bench_reports,
        arena_reports,
        manifests,
        allowed_hosts,
        mcp_max_sessions,
    } = args;
    if mcp_max_sessions == 0 {
        eprintln!("gaos serve: --mcp-max-sessions must be at least 1");
        return ExitCode::from(2);
    }
    if let Some(dir) = arena_reports.as_ref().filter(|d| !d.is_dir()) {
        eprintln!("gaos serve: --arena-reports {}: not a directory", dir.display());
        return ExitCode::from(2);
    }
    let registry = match crate::modules::with_modules(registry, &game_modules, &game_dirs, &module_limits) {
        Ok(registry) => registry,
        Err(e) => {
            eprintln!("gaos serve: {e}");
            return ExitCode::from(2);
        }
    };
    let registry = &registry;
    init_logging();
    let manifests = match read_manifests(&manifests) {
        Ok(manifests) => manifests,
        Err(e) => {
            eprintln!("gaos serve: {e}");
            return ExitCode::from(2);
        }
    };
    let max_command_bytes = limits.max_command_bytes;
    let retention = match limits.retention() {
        Ok(retention) => retention,
        Err(e) => {
            eprintln!("gaos serve: {e}");
            return ExitCode::from(2);
        }
    };
    let checkpoint_every = limits.checkpoint_every;
    let limits = match limits.limits() {
        Ok(limits) => limits,
        Err(e) => {
            eprintln!("gaos serve: {e}");
            return ExitCode::from(2);
        }
    };
    let lease_bounds = match gaos_host::config::LeaseBounds::new(lease_min_ms, lease_max_ms) {
        Ok(bounds) => bounds,
        Err(e) => {
            eprintln!("gaos serve: {e}");
            return ExitCode::from(2);
        }
    };
    if test_clock {
        eprintln!("gaos serve: --test-clock is on: the operator can move this host's clock (testing only)");
    }
    let store = match store.choice(&listen) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("gaos serve: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("gaos serve: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let options = ServeOptions {
        data_dir: data,
        listen,
        host: HostOptions {
            lease_bounds,
            test_clock,
            max_command_bytes,
            retention,
            manifests,
            checkpoint_every,
            ..HostOptions::new(registry.clone())
        },
        limits,
        store,
    };
    // Shutting down also ends open MCP streams (else graceful shutdown waits on them).
    let mcp_cancel = CancellationToken::new();
    let cancel_on_shutdown = mcp_cancel.clone();
    let shutdown = async move {
        shutdown_signal().await;
        cancel_on_shutdown.cancel();
    };
    let app = move |host: &gaos_host::Host, address: SocketAddr, routes| {
        // The web pages (static shells calling the API with the person's token)
        // and their replay-frames route, open to any token of this host.
        let web_host = host.clone();
        let authorize: gaos_web::Authorize = Arc::new(move |token: &str| match web_host.caller_blocking(Some(token)) {
            Ok(Caller::Operator) => Some(gaos_web::TokenRole::Operator),
            Ok(_) => Some(gaos_web::TokenRole::Participant),
            Err(_) => None,
        });
        if let Some(dir) = &bench_reports {
            println!("gaos serve: benchmark reports of {} at http://{address}/bench/", dir.display());
        }
        if let Some(dir) = &arena_reports {
            println!("gaos serve: tournaments of {} at http://{address}/arena/", dir.display());
        }
        let web =
            gaos_web::WebOptions { registry: host.registry().clone(), authorize, bench_reports: bench_reports.clone() };
        let arena = arena_reports.clone().map(gaos_web::arena_reports_router);
        let host = host.clone();
        let resolve_seat: gaos_mcp::http::ResolveSeat =
            Arc::new(move |token: &str| match host.caller_blocking(Some(token)) {
                Ok(Caller::Seat { session_id, seat }) => Some((session_id, seat)),
                _ => None,
            });
        let mut mcp = McpHttpOptions::new(format!("http://{}", loopback(address)), resolve_seat);
        mcp.default_lease_ms = lease_bounds.default_ms;
        mcp.sessions.per_host = mcp_max_sessions;
        mcp.cancel = mcp_cancel;
        println!("gaos serve: MCP (streamable HTTP) at http://{address}/mcp, a seat token as the bearer");
        println!("gaos serve: web pages at http://{address}/ (watch, play, replay)");
        let check = gaos_web::HostCheck::for_bind(address, &allowed_hosts);
        if address.ip().is_loopback() {
            println!("gaos serve: answering loopback host names only (--allowed-host NAME to widen)");
        }
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let mounts = gaos_mcp::http::router(mcp);
        let mounts = match arena {
            Some(arena) => mounts.merge(arena),
            None => mounts,
        };
        // Every response, the host's own routes too: the Host check and
        // the security headers.
        gaos_web::application(routes, mounts, web, check)
    };
    match runtime.block_on(serve_with_app(options, app, shutdown)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gaos serve: {e}");
            ExitCode::from(2)
        }
    }
}

/// Where the host's own API answers on this machine: the bound address,
/// with a wildcard address replaced by the loopback of its family. The
/// `/mcp` mount drives seats through it, so every MCP call passes the
/// host's real HTTP authorization and limits.
fn loopback(address: SocketAddr) -> SocketAddr {
    match address.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), address.port()),
        IpAddr::V6(ip) if ip.is_unspecified() => SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), address.port()),
        _ => address,
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down");
}
