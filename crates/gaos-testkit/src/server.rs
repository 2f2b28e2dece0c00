//! A real `gaos serve` process for end-to-end tests.
//!
//! [`TestServer::start`] runs the binary on a fresh data directory with
//! `--listen 127.0.0.1:0`, waits for its `gaos serve: listening on
//! http://ADDR` line, and reads the operator token the server wrote to
//! `DIR/operator-token`. Dropping the server kills the process and removes
//! the directory (set `GAOS_KEEP_TEST_DATA=1` to keep it). Synchronous and
//! std-only, so any test (async or not) can use it. [`TempDir`] is the same
//! self-removing directory for a test's own files.
//!
//! `GAOS_TEST_STORE=postgres` runs every such server on PostgreSQL instead
//! of the embedded SQLite store: each data directory gets its own fresh
//! database and node id (kept in `DIR/test-store`, so a restart on the same
//! directory finds the same sessions), from the server of
//! [`crate::postgres`]. `scripts/test` runs the host suite once each way.
//!
//! ```no_run
//! // In a test of gaos-cli, pass env!("CARGO_BIN_EXE_gaos") as the binary.
//! let server = gaos_testkit::server::TestServer::start("target/debug/gaos");
//! println!("{} {}", server.base_url(), server.operator_token());
//! ```

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long the server may take to print its listening line.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Lines of server stderr kept for failure messages.
const STDERR_LINES: usize = 200;
const LISTENING_PREFIX: &str = "gaos serve: listening on ";
/// `--listen` for a fresh port.
const ANY_PORT: &str = "127.0.0.1:0";

/// A running `gaos serve` child process, killed on drop.
pub struct TestServer {
    /// `http://127.0.0.1:PORT` (no trailing `/`).
    pub base_url: String,
    /// The operator token the server wrote to `DIR/operator-token`.
    pub operator_token: String,
    binary: PathBuf,
    child: Option<Child>,
    data_dir: PathBuf,
    /// The fresh data directory of [`TestServer::start`], removed on drop.
    owned_dir: Option<TempDir>,
    /// Arguments appended to `serve` (kept across [`TestServer::restart`]).
    extra_args: Vec<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

/// A fresh directory under the system temp dir, unique per process and
/// call, removed with its contents on drop (kept when `GAOS_KEEP_TEST_DATA`
/// is set, for post-mortems).
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Create `<tmp>/<prefix>-<pid>-<nanos>-<n>`. Panics if it cannot.
    pub fn new(prefix: &str) -> TempDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("{prefix}-{}-{nanos}-{n}", std::process::id()));
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("cannot create the test directory {}: {e}", path.display()));
        TempDir { path }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("GAOS_KEEP_TEST_DATA").is_none() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

impl TestServer {
    /// Start `binary serve` on a fresh data directory (removed on drop).
    /// Panics with the server's output if it does not come up.
    pub fn start(binary: impl AsRef<Path>) -> TestServer {
        let dir = TempDir::new("gaos-test-server");
        let mut server = Self::spawn(binary.as_ref(), dir.path(), ANY_PORT, &[]);
        server.owned_dir = Some(dir);
        server
    }

    /// Start `binary serve` on a fresh data directory (removed on drop), with
    /// `extra_args` appended to `serve --data DIR --listen 127.0.0.1:0` (e.g.
    /// `["--test-clock", "--lease-min-ms", "100"]`); a restart keeps them.
    pub fn start_with(binary: impl AsRef<Path>, extra_args: &[&str]) -> TestServer {
        let dir = TempDir::new("gaos-test-server");
        let mut server = Self::spawn(binary.as_ref(), dir.path(), ANY_PORT, extra_args);
        server.owned_dir = Some(dir);
        server
    }

    /// Start `binary serve` on `data_dir` (kept on drop), with `extra_args`
    /// appended to `serve --data DIR --listen 127.0.0.1:0`.
    pub fn start_in(binary: impl AsRef<Path>, data_dir: &Path, extra_args: &[&str]) -> TestServer {
        Self::spawn(binary.as_ref(), data_dir, ANY_PORT, extra_args)
    }

    fn spawn(binary: &Path, data_dir: &Path, listen: &str, extra_args: &[&str]) -> TestServer {
        let mut command = Command::new(binary);
        command
            .arg("serve")
            .arg("--data")
            .arg(data_dir)
            .args(["--listen", listen])
            .args(extra_args)
            .args(test_store_args(data_dir, extra_args))
            // The token must come from the data directory, where tests read it.
            .env_remove("GAOS_OPERATOR_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if std::env::var_os("RUST_LOG").is_none() {
            command.env("RUST_LOG", "warn");
        }
        let mut child =
            command.spawn().unwrap_or_else(|e| panic!("cannot start {} serve: {e} (is it built?)", binary.display()));
        let stderr = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_LINES)));
        if let Some(pipe) = child.stderr.take() {
            let lines = Arc::clone(&stderr);
            // Drain stderr so the server never blocks on a full pipe; keep the tail.
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut lines = lines.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    if lines.len() == STDERR_LINES {
                        lines.pop_front();
                    }
                    lines.push_back(line);
                }
            });
        }
        let stdout = child.stdout.take().expect("stdout was piped");
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if !sent && let Some(address) = line.strip_prefix(LISTENING_PREFIX) {
                    let _ = tx.send(address.trim().to_owned());
                    sent = true;
                }
                // Keep draining after the listening line.
            }
        });
        let mut server = TestServer {
            binary: binary.to_path_buf(),
            child: Some(child),
            base_url: String::new(),
            operator_token: String::new(),
            data_dir: data_dir.to_path_buf(),
            owned_dir: None,
            extra_args: extra_args.iter().map(|a| (*a).to_owned()).collect(),
            stderr,
        };
        match rx.recv_timeout(START_TIMEOUT) {
            Ok(address) => server.base_url = address.trim_end_matches('/').to_owned(),
            Err(_) => {
                let status = server.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
                panic!(
                    "{} serve did not print {LISTENING_PREFIX:?} within {START_TIMEOUT:?} (exit status: {status:?}); stderr:\n{}",
                    binary.display(),
                    server.stderr_tail()
                );
            }
        }
        let token_path = data_dir.join("operator-token");
        let token = std::fs::read_to_string(&token_path).unwrap_or_else(|e| {
            panic!("cannot read the operator token {}: {e}; stderr:\n{}", token_path.display(), server.stderr_tail())
        });
        server.operator_token = token.trim().to_owned();
        server
    }

    /// `http://127.0.0.1:PORT` (no trailing `/`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The operator token from `DIR/operator-token`.
    pub fn operator_token(&self) -> &str {
        &self.operator_token
    }

    /// The server's process id (`None` once killed).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(std::process::Child::id)
    }

    /// The server process's peak resident memory so far, in KiB (`VmHWM`
    /// of `/proc/PID/status`; Linux only).
    pub fn peak_rss_kib(&self) -> u64 {
        let pid = self.pid().expect("the server runs");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/PID/status")
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Send `signal` (`STOP`, `CONT`, ...) to the server process.
    pub fn signal(&self, signal: &str) {
        let pid = self.pid().expect("the server runs");
        let status = std::process::Command::new("kill").args([format!("-{signal}"), pid.to_string()]).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{signal} {pid} failed");
    }

    /// The last lines the server wrote to stderr (for assertion messages).
    pub fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Kill the process (SIGKILL: no graceful shutdown, like a crash) and
    /// wait for it. The data directory stays until drop.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kill the server and start it again on the same data directory (a new
    /// port; the same operator token and extra arguments). For durability and
    /// rehydration tests.
    pub fn restart(&mut self) {
        self.kill();
        let args: Vec<&str> = self.extra_args.iter().map(String::as_str).collect();
        let mut fresh = Self::spawn(&self.binary, &self.data_dir, ANY_PORT, &args);
        fresh.owned_dir = self.owned_dir.take();
        *self = fresh;
    }

    /// Kill the server and start it again on the same data directory and
    /// the same address, after `down` (a host restart or network drop that
    /// clients see only as a lasting transport loss: their base URL stays
    /// valid). For reconnect tests.
    pub fn restart_at_same_address(&mut self, down: std::time::Duration) {
        let address = self.base_url.trim_start_matches("http://").to_owned();
        self.kill();
        std::thread::sleep(down);
        let args: Vec<&str> = self.extra_args.iter().map(String::as_str).collect();
        let mut fresh = Self::spawn(&self.binary, &self.data_dir, &address, &args);
        fresh.owned_dir = self.owned_dir.take();
        *self = fresh;
    }
}

/// The environment variable choosing the store of every [`TestServer`].
pub const TEST_STORE_VAR: &str = "GAOS_TEST_STORE";

/// `--store URL --node-id ID` when `GAOS_TEST_STORE=postgres` (and the
/// test did not name a store itself), else nothing. The database and node
/// id belong to the data directory: made on its first server, read back by
/// every later one (a restart is the same host on the same store).
fn test_store_args(data_dir: &Path, extra_args: &[&str]) -> Vec<String> {
    let choice = std::env::var(TEST_STORE_VAR).unwrap_or_default();
    match choice.trim() {
        "" | "sqlite" => return Vec::new(),
        "postgres" => {}
        other => panic!("{TEST_STORE_VAR}={other:?}: expected sqlite or postgres"),
    }
    if extra_args.iter().any(|a| *a == "--store" || a.starts_with("--store=")) {
        return Vec::new();
    }
    let file = data_dir.join("test-store");
    let (url, node_id) = match std::fs::read_to_string(&file) {
        Ok(text) => {
            let mut lines = text.lines();
            match (lines.next(), lines.next()) {
                (Some(url), Some(node_id)) => (url.to_owned(), node_id.to_owned()),
                _ => panic!("{} holds no store URL and node id", file.display()),
            }
        }
        Err(_) => {
            static SERVERS: AtomicU64 = AtomicU64::new(0);
            let url = crate::postgres::server().database("host_suite");
            let node_id = format!("test-{}-{}", std::process::id(), SERVERS.fetch_add(1, Ordering::Relaxed));
            // `gaos serve` makes its data directory; the store file comes first.
            std::fs::create_dir_all(data_dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", data_dir.display()));
            std::fs::write(&file, format!("{url}\n{node_id}\n"))
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
            (url, node_id)
        }
    };
    vec!["--store".into(), url, "--node-id".into(), node_id]
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // Kill before the owned directory (dropped after this) is removed.
        self.kill();
    }
}
