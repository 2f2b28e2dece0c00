//! What the commands that run sessions share (`play`, `bench run`, `arena
//! run`): the operator token for `--host`, the async runtime, Ctrl-C, the
//! default output directory, the progress bar, and replacing a bundle
//! directory in one move.

use std::future::Future;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use gaos_runner::CancellationToken;
use indicatif::{ProgressBar, ProgressStyle};

/// The operator token for `--host`: `--token`, else `$GAOS_OPERATOR_TOKEN`.
pub(crate) fn operator_token(token: Option<&String>) -> Result<String, String> {
    token
        .cloned()
        .or_else(|| std::env::var("GAOS_OPERATOR_TOKEN").ok())
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| "--host needs the operator token: pass --token or set GAOS_OPERATOR_TOKEN".to_owned())
}

/// Run `future` on a multi-threaded runtime (`usage` reports a runtime
/// that cannot start). A person's prompt may still block a thread on stdin
/// when it ends, so shutdown does not wait for it.
pub(crate) fn block_on(future: impl Future<Output = ExitCode>, usage: impl FnOnce(String) -> ExitCode) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return usage(format!("cannot start the async runtime: {e}")),
    };
    let code = runtime.block_on(future);
    runtime.shutdown_timeout(Duration::from_millis(100));
    code
}

/// A token Ctrl-C cancels (call inside the runtime).
pub(crate) fn cancel_on_ctrl_c() -> CancellationToken {
    let cancel = CancellationToken::new();
    let interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    cancel
}

/// `runs/<id>-<unix ms>`: where a run goes without `--out`.
pub(crate) fn default_run_dir(id: &str) -> PathBuf {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    PathBuf::from("runs").join(format!("{id}-{ms}"))
}

/// A progress bar counting `unit`s on stderr, when stderr is a terminal.
pub(crate) fn progress_bar(unit: &str) -> Option<ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(0);
        let template = format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:40.cyan/blue}} {{pos}}/{{len}} {unit} ({{msg}}) ETA {{eta}}"
        );
        let style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar
    })
}

/// Write a directory with `write` beside `target` (`OUT/.NAME-<pid>`),
/// then move it over `target`, replacing an older one.
pub(crate) fn replace_dir(target: &Path, write: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let staging = target.with_file_name(format!(".{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    write(&staging)?;
    if target.exists() {
        std::fs::remove_dir_all(target).map_err(|e| format!("cannot replace {}: {e}", target.display()))?;
    }
    std::fs::rename(&staging, target).map_err(|e| format!("cannot move the bundle to {}: {e}", target.display()))
}
