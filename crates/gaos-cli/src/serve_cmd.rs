//! `gaos serve`.

use std::path::PathBuf;
use std::process::ExitCode;

use gaos_host::HostOptions;
use gaos_host::serve::{ServeOptions, serve};

/// Logs go to stderr; `RUST_LOG` overrides the default `info` level.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// Run the host until SIGINT or SIGTERM.
pub fn run(data: PathBuf, listen: String, lease_min_ms: u64, lease_max_ms: u64, test_clock: bool) -> ExitCode {
    init_logging();
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
        host: HostOptions { lease_bounds, test_clock, ..HostOptions::default() },
    };
    match runtime.block_on(serve(options, shutdown_signal())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gaos serve: {e}");
            ExitCode::from(2)
        }
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
