//! `gaos mcp`: serve one seat's tools (observe, act, pause, resume, status,
//! finalize, replay) to an MCP client over stdio. stdout carries only MCP
//! messages; logs go to stderr.

use std::process::ExitCode;

use clap::Args;
use gaos_mcp::remote::{KEEP_ALIVE_LEASE_MS, LeaseMode, SeatOptions};

/// `gaos mcp` arguments.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Base URL of the GAOS host [default: $GAOS_HOST, else http://127.0.0.1:8899].
    #[arg(long)]
    host: Option<String>,
    /// The session to play in.
    #[arg(long)]
    session: String,
    /// The seat to drive.
    #[arg(long)]
    seat: String,
    /// The seat's bearer token. Default: $GAOS_SEAT_TOKEN (prefer the
    /// environment: other users can read a process's arguments).
    #[arg(long)]
    token: Option<String>,
    /// Lease duration of the seat's controller claim in ms (within the
    /// host's --lease-min-ms/--lease-max-ms). The server heartbeats the
    /// claim every third of it while it runs, so the lease only bounds how
    /// long a killed server keeps the seat, and releases it on a clean exit.
    #[arg(long, default_value_t = KEEP_ALIVE_LEASE_MS)]
    lease_ms: u64,
    /// Drive under an existing claim instead of taking one: its lease token
    /// (e.g. the creator's, from the create answer). Default: $GAOS_LEASE_TOKEN.
    #[arg(long)]
    lease_token: Option<String>,
    /// Sign every move with this seat key file (`gaos keygen`): RFC-010
    /// signed play. The session lists its public key in seatKeys, or awaits
    /// it (seatKeysAtAttach): then the attach registers it.
    #[arg(long, value_name = "FILE")]
    seat_key: Option<std::path::PathBuf>,
}

fn from_env(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

/// Logs go to stderr (stdout is the MCP channel); `RUST_LOG` overrides the
/// default: warnings, and this server's own notes.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,gaos_mcp=info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// Run the stdio MCP server until the client disconnects.
pub fn run(args: McpArgs) -> ExitCode {
    init_logging();
    let Some(token) = args.token.or_else(|| from_env("GAOS_SEAT_TOKEN")) else {
        eprintln!("gaos mcp: no seat token: set GAOS_SEAT_TOKEN (or pass --token)");
        return ExitCode::from(2);
    };
    let lease = match args.lease_token.or_else(|| from_env("GAOS_LEASE_TOKEN")) {
        Some(lease_token) => LeaseMode::Adopt { lease_token },
        None => LeaseMode::Claim { duration_ms: args.lease_ms },
    };
    let signing_key = match args.seat_key.as_deref().map(gaos_runner::signing::SeatSigningKey::read_file) {
        None => None,
        Some(Ok(key)) => Some(key),
        Some(Err(e)) => {
            eprintln!("gaos mcp: --seat-key: {e}");
            return ExitCode::from(2);
        }
    };
    let options = SeatOptions {
        host_url: args.host.or_else(|| from_env("GAOS_HOST")).unwrap_or_else(|| "http://127.0.0.1:8899".to_owned()),
        session_id: args.session,
        seat: args.seat,
        seat_token: token,
        lease,
        keep_alive: true,
        signing_key,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("gaos mcp: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(gaos_mcp::stdio::serve_stdio(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gaos mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
